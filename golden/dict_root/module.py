"""DictRoot: a torch.fx GraphModule exported by fxexport.

Parameters: 15; buffers: 0; 60 bytes of tensors in weights.safetensors.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = DictRoot()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 3
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class DictRoot(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Module()
            self.blocks.lin = nn.Linear(3, 3)
            self.scale = nn.Parameter(torch.empty(3))
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
        x = self.blocks.lin(x)
        return torch.mul(x, self.scale)
