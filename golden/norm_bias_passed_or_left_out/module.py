"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 12; buffers: 0; 48 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 3
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class OptionalBiasNorm(nn.Module):  # tests/models.py:6480 OptionalBiasNorm
    def __init__(self, bias=None) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(4))
        self.bias = bias

    def forward(self, x):
        return F.layer_norm(x, (4,), weight=self.weight, bias=self.bias)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.a = OptionalBiasNorm(bias=nn.Parameter(torch.empty(4)))
            self.b = OptionalBiasNorm()
        self.training = False
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
        x = self.a(x)
        return self.b(x)
