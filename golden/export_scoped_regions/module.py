"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 40; buffers: 0; 160 bytes of tensors in weights.safetensors.
Producer: torch.export; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .loader import check_input, load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 4
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)
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

    def forward(self, x):
        check_input(x, "x", torch.float32, (2, 4))
        # tests/producers.py:63 in forward: y = checkpoint(lambda t: self.a(t).relu(), x, use_reentrant=False)
        y = F.relu(self.a(x))
        with torch.no_grad():
            z = self.b(y)
        with torch.autocast("cpu", enabled=False):
            w = z * 2
        return w + y
