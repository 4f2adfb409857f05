"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 2,010; buffers: 0; 8,040 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 14
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Shortcutted(nn.Module):  # tests/models.py:1345 Shortcutted
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(6, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 6, 3, padding=1)

    def forward(self, x, shortcut=None):
        if shortcut is None:
            shortcut = x
        out = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(out + shortcut * 0.5)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = nn.Conv2d(4, 6, 1)
            self.first = Shortcutted()
            self.second = Shortcutted()
            self.third = Shortcutted()
        self.eval()
        for module in self.modules():  # as traced: the modules holding children train
            if module is not self and next(module.children(), None) is not None:
                module.training = True
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
        stem = self.stem(x)
        x = x.mean(1, keepdim=True)
        x = self.first(stem, x)
        x = self.second(x)
        return self.third(x, stem)
