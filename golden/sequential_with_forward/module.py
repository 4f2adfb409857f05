"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 20; buffers: 0; 80 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 2
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class PooledHead(nn.Sequential):  # tests/models.py:610 PooledHead
    def __init__(self) -> None:
        super().__init__()
        self.add_module("0", nn.AdaptiveAvgPool2d(1))
        self.add_module("1", nn.Conv2d(4, 4, 1))
        self.add_module("2", nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for layer in self:
            x = layer(x)
        return F.interpolate(x, size=size)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.head = PooledHead()
        self.eval()
        self.head.training = True
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
        head = self.head(x)
        return head + x
