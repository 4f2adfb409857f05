"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 92; buffers: 0; 368 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 11
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Leaf(nn.Module):  # tests/models.py:70 Leaf
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.empty(4))

    def forward(self, x):
        return self.lin(x) * self.scale


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.cached = nn.Module()
            self.cached.lin = nn.Linear(4, 4)
            self.blocks = nn.ModuleList([Leaf(), Leaf()])
            self.twice = Leaf()
        self.training = False
        self.cached.lin.training = False
        self.blocks[0].lin.training = False
        self.blocks[1].lin.training = False
        self.twice.lin.training = False
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
        x = self.cached.lin(x)
        x = torch.relu(x) * 2 + x
        out = x * 2.0
        x = x * 3.0
        out = out + x
        for block in self.blocks:
            out = block(out)
        out = self.twice(out)
        return self.twice(out)
