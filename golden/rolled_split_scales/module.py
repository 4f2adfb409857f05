"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,784; buffers: 42; 7,616 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 84
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SplitScales(nn.Module):  # tests/models.py:5477 SplitScales
    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv2d(4, 4, 3, padding=1, bias=False) for _ in range(3)]
        )
        self.bns = nn.ModuleList([nn.BatchNorm2d(4) for _ in range(3)])
        self.pool = nn.AvgPool2d(3, stride=1, padding=1)

    def forward(self, x):
        spx = torch.split(x, 4, dim=1)
        outs = []
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            out_1 = spx[i]
            out_1 = conv(out_1)
            out_1 = bn(out_1)
            out_1 = torch.relu(out_1)
            outs.append(out_1)
        out = spx[-1]
        out = self.pool(out)
        outs = outs + [out]
        return torch.cat(outs, 1) + x


class SplitScales_1(nn.Module):  # tests/models.py:5477 SplitScales
    def __init__(self, in_channels, value) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            [
                nn.Conv2d(in_channels, in_channels, 3, padding=1, bias=False)
                for _ in range(value)
            ]
        )
        self.bns = nn.ModuleList([nn.BatchNorm2d(in_channels) for _ in range(value)])
        self.in_channels = in_channels

    def forward(self, x):
        spx = torch.split(x, self.in_channels, dim=1)
        outs = []
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            if i == 0:
                out = spx[i]
            else:
                out = out + spx[i]
            out = conv(out)
            out = bn(out)
            out = torch.relu(out)
            outs.append(out)
        return torch.cat(outs + [spx[-1]], 1) + x


class SplitScales_2(nn.Module):  # tests/models.py:5477 SplitScales
    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1, bias=False)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(8)])

    def forward(self, x):
        spx = torch.split(x, 8, dim=1)
        out = spx[0]
        for conv in self.convs:
            out = conv(out)
        for bn in self.bns:
            out = bn(out)
        out = torch.relu(out)
        return torch.cat([out, spx[-1]], 1) + x


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                SplitScales(), SplitScales_1(4, 3), SplitScales_2(), SplitScales_1(2, 7)
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
