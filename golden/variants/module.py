"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 100; buffers: 0; 400 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 10
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Excite(nn.Module):  # tests/models.py:551 Excite
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return x * torch.sigmoid(self.fc(x))


class Variant(nn.Module):  # tests/models.py:560 Variant
    def __init__(self, use_excite=False, residual=False) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        if use_excite:
            self.excite = Excite()
        else:
            self.excite = None
        self.residual = residual

    def forward(self, x):
        y = torch.relu(self.lin(x))
        if self.residual:
            return x + y
        if self.excite is not None:
            y = self.excite(y)
            return y * 2
        return y


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                Variant(use_excite=True), Variant(), Variant(residual=True), Variant()
            )
        self.training = False
        self.blocks[0].lin.training = False
        self.blocks[0].excite.fc.training = False
        self.blocks[1].lin.training = False
        self.blocks[2].lin.training = False
        self.blocks[3].lin.training = False
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
        return self.blocks(x)
