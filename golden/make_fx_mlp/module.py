"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 20; buffers: 3; 128 bytes of tensors in weights.safetensors.
Producer: torch.fx.experimental.proxy_tensor.PythonKeyTracer (a torch.fx.Tracer); torch 2.13.0.

    model = FxModule()
    output = model(arg0, arg1)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 5
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self._param_constant0 = nn.Parameter(torch.empty(4, 4))
            self._param_constant1 = nn.Parameter(torch.empty(4))
            self.register_buffer("_tensor_constant0", torch.empty(4))
            self.register_buffer("_tensor_constant1", torch.empty(4))
            self.register_buffer("_tensor_constant2", torch.empty(4))
        if load_weights:
            load_tensors(
                self,
                weights,
                device=device,
                dtype=dtype,
                folder=Path(__file__).resolve().parent,
                weight_files=WEIGHT_FILES,
                tensor_count=TENSOR_COUNT,
                tied_tensors=TIED_TENSORS,
                tensor_views=TENSOR_VIEWS,
            )

    def forward(self, arg0, arg1):
        arg1_1 = arg1["a"]
        out = torch.addmm(self._param_constant1, arg0, self._param_constant0.t())
        out = out * 2.0
        out = out + self._tensor_constant0
        out = out + self._tensor_constant1.clone()
        sum_1 = arg1_1.sum()
        relu = F.relu(arg0)
        add = self._tensor_constant2 + 1
        return {"y": out, "rest": (sum_1, [relu, add])}
