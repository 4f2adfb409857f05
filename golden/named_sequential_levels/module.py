"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,068; buffers: 0; 4,272 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

import collections
from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 10
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class LevelConv(nn.Module):  # tests/models.py:5048 LevelConv
    def __init__(self, in_channels) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class PooledLevels(nn.Module):  # tests/models.py:5057 PooledLevels
    def __init__(self, blocks) -> None:
        super().__init__()
        self.blocks = blocks

    def forward(self, x):
        return self.blocks(x)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.coarse = PooledLevels(
                blocks=nn.Sequential(
                    collections.OrderedDict(
                        conv1=LevelConv(4),
                        pool1=nn.MaxPool2d(2, stride=2),
                        conv2=LevelConv(4),
                        pool2=nn.MaxPool2d(2, stride=2),
                    )
                )
            )
            self.fine = PooledLevels(
                blocks=nn.Sequential(
                    collections.OrderedDict(
                        conv1=LevelConv(4), pool1=nn.MaxPool2d(2, stride=2)
                    )
                )
            )
            self.widen = nn.Conv2d(4, 8, 1)
            self.finer = PooledLevels(
                blocks=nn.Sequential(
                    collections.OrderedDict(
                        conv1=LevelConv(8), pool1=nn.MaxPool2d(2, stride=2)
                    )
                )
            )
        self.eval()
        # as traced: the modules fx rebuilt to hold what it traced through train
        for module in self.modules():
            if module is not self and (
                type(module).__module__ == __name__
                or type(module)
                in (nn.Module, nn.Sequential, nn.ModuleList, nn.ModuleDict)
            ):
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
        out = self.coarse(x)
        out = out.mean((2, 3))
        out_1 = self.fine(x)
        out_1 = out_1.mean((2, 3))
        out = out + out_1
        x = self.widen(x)
        x = self.finer(x)
        mean = x.mean((2, 3))
        getitem = mean[:, :4]
        return out + getitem
