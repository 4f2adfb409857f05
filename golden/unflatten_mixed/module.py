"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 20; buffers: 2; 128 bytes of tensors in weights.safetensors.
Producer: torch.fx GraphModule; torch 2.13.0.

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


class Lin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(4, 4))
        self.bias = nn.Parameter(torch.empty(4))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.lin = Lin()
            self.register_buffer("offset", torch.empty(4), persistent=False)
            self.register_buffer("running", torch.empty(4))
            self.lifted_tensor_0 = torch.empty(4)
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

    def forward(self, arg0, arg1, scale=2.0):
        extra_a = arg1["a"]
        lin = self.lin(arg0)
        # tests/producers.py:27 in forward: y = self.lin(x) * scale + self.offset + torch.tensor([1.0, 2.0, 3.0, 4.0])
        y = lin * 2.0
        y = y + self.offset
        y = y + self.lifted_tensor_0.clone().detach_()
        # tests/producers.py:28 in forward: return {"y": y, "rest": (extra["a"].sum(), [x.relu(), self.running + 1])}
        sum_1 = extra_a.sum()
        return {"y": y, "rest": (sum_1, [F.relu(arg0), self.running + 1])}
