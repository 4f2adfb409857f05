"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 3,558; buffers: 0; 14,232 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 30
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Shortcut(nn.Module):  # tests/models.py:1233 Shortcut
    def __init__(self, in_channels, out_channels, stride=1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 1)
        if stride != 1:
            self.downsample = nn.Conv2d(in_channels, out_channels, 1, stride=stride)
        else:
            self.downsample = nn.Identity()

    def forward(self, x):
        out = self.conv2(torch.relu(self.conv1(x)))
        out = out + self.downsample(x)
        return torch.relu(out)


class BlockStage(nn.Module):  # tests/models.py:1375 BlockStage
    def __init__(self, *blocks) -> None:
        super().__init__()
        for i, block in enumerate(blocks, 1):
            self.add_module(f"b{i}", block)

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.s1 = BlockStage(Shortcut(4, 6, stride=2))
            self.s2 = BlockStage(
                Shortcut(6, 8, stride=2), Shortcut(8, 8), Shortcut(8, 8)
            )
            self.s3 = BlockStage(Shortcut(8, 8, stride=2), Shortcut(8, 8))
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
        x = self.s1(x)
        x = self.s2(x)
        return self.s3(x)
