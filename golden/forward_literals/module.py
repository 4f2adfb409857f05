"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 64; buffers: 0; 256 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 6
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ChannelNorm(nn.Module):  # tests/models.py:526 ChannelNorm
    def __init__(self, size) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size))
        self.bias = nn.Parameter(torch.empty(size))
        self.size = size

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, (self.size,), weight=self.weight, bias=self.bias, eps=1e-06)
        return x.permute(0, 3, 1, 2)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.norm1 = ChannelNorm(4)
            self.conv = nn.Conv2d(4, 8, 1)
            self.norm2 = ChannelNorm(8)
        self.training = False
        self.conv.training = False
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
        x = self.norm1(x)
        x = self.conv(x)
        return self.norm2(x)
