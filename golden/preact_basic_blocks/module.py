"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 2,408; buffers: 18; 9,968 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 37
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class PreActBasic(nn.Module):  # tests/models.py:6304 PreActBasic
    def __init__(self, num_features, out_channels, stride=1) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_features)
        if stride != 1:
            self.downsample = nn.Conv2d(
                num_features, out_channels, 1, stride=stride, bias=False
            )
        else:
            self.downsample = None
        self.conv1 = nn.Conv2d(
            num_features, out_channels, 3, stride=stride, padding=1, bias=False
        )
        self.norm2 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)

    def forward(self, x):
        shortcut = x
        x_preact = self.norm1(x)
        if self.downsample is not None:
            shortcut = self.downsample(x_preact)
        x = self.conv1(x_preact)
        x = self.norm2(x)
        x = self.conv2(x)
        return x + shortcut


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                PreActBasic(4, 4), PreActBasic(4, 8, stride=2), PreActBasic(8, 8)
            )
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
        return self.blocks(x)
