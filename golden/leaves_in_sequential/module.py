"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,362; buffers: 15; 5,744 bytes of tensors in weights.safetensors.
Producer: tests.models.SEBlockLeaves (a torch.fx.Tracer); torch 2.13.0.

    model = FxModule()
    output = model(input)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 40
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SqueezeExcite(nn.Module):  # tests/models.py:3957 SqueezeExcite
    def __init__(self, in_channels, out_channels) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(in_channels, out_channels, 1)
        self.act = nn.ReLU()
        self.expand = nn.Conv2d(out_channels, in_channels, 1)

    def forward(self, x):
        out = x.mean((2, 3), keepdim=True)
        out = self.reduce(out)
        out = self.act(out)
        out = self.expand(out)
        out = out.sigmoid()
        return x * out


class SEBlock(nn.Module):  # tests/models.py:3970 SEBlock
    def __init__(self, out_channels, out_channels_2, stride=1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.se = SqueezeExcite(out_channels, out_channels_2)
        if stride != 1:
            self.down = nn.Sequential(
                nn.Conv2d(out_channels_2, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.down = None

    def forward(self, x):
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.se(out)
        if self.down is not None:
            x = self.down(x)
        out = out + x
        return self.relu(out)


class FxModule(nn.Sequential):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.add_module("0", nn.Conv2d(3, 4, 1))
            self.add_module("1", nn.Sequential(SEBlock(4, 2), SEBlock(8, 4, stride=2)))
        self.eval()
        self[1].training = True
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

    def forward(self, input):
        input = self[0](input)
        return self[1](input)
