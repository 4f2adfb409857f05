"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 110; buffers: 0; 440 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 8
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Leaf(nn.Module):  # tests/models.py:70 Leaf
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.scale = nn.Parameter(torch.empty(6))

    def forward(self, x):
        return self.lin(x) * self.scale


class Middle(nn.Module):  # tests/models.py:80 Middle
    def __init__(self) -> None:
        super().__init__()
        self.leaf = Leaf()
        self.other = Leaf()

    def forward(self, x):
        return self.other(self.leaf(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.outer = nn.Module()
            self.outer.middle = Middle()
            self.head = nn.Linear(6, 2)
        self.training = False
        self.outer.middle.leaf.lin.training = False
        self.outer.middle.other.lin.training = False
        self.head.training = False
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
        x = self.outer.middle(x)
        x = x @ self.outer.middle.leaf.lin.weight.t()
        x = self.head(x)
        return x + self.outer.middle.other.scale.sum()
