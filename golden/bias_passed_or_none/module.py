"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 116; buffers: 0; 464 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

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


class BiasPassingLinear(nn.Module):  # tests/models.py:6431 BiasPassingLinear
    def __init__(self, size, use_bias=False) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size, 8))
        if use_bias:
            self.bias = nn.Parameter(torch.empty(size))
        else:
            self.bias = None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.pre = BiasPassingLinear(8)
            self.norm = nn.LayerNorm(8)
            self.fc = BiasPassingLinear(4, use_bias=True)
        self.training = False
        self.norm.training = False
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
        x = self.pre(x)
        x = self.norm(x)
        return self.fc(x)
