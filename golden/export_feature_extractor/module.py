"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 3,389; buffers: 30; 14,116 bytes of tensors in weights.safetensors.
Producer: torch.export; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import check_input, load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 89
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Se(nn.Module):
    def __init__(self, in_channels, out_channels) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(in_channels, out_channels, 1)
        self.act = nn.ReLU()
        self.expand = nn.Conv2d(out_channels, in_channels, 1)

    def forward(self, x):
        out = x.mean([2, 3], keepdim=True)
        out = self.reduce(out)
        out = self.act(out)
        out = self.expand(out)
        out = torch.sigmoid(out)
        return x * out


class Mixer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        out = self.fc1(x)
        out = self.act(out)
        out = self.fc2(out)
        return x + out


class Stage(nn.Module):
    def __init__(self, in_channels, out_channels, out_channels_2, stride=1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(
            in_channels, out_channels, 3, stride=stride, padding=1, bias=False
        )
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.se = Se(out_channels, out_channels_2)
        if stride != 1:
            self.down = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
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


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = nn.Sequential(
                nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU()
            )
            self.stages = nn.ModuleList(
                [
                    nn.Sequential(Stage(4, 4, 2), Stage(4, 4, 2)),
                    nn.Sequential(Stage(4, 8, 4, stride=2), Stage(8, 8, 4)),
                ]
            )
            self.mixers = nn.ModuleList([Mixer(), Mixer()])
            self.heads = nn.ModuleList([nn.Conv2d(8, 2, 1), nn.Conv2d(8, 3, 1)])
            self.pos = nn.Parameter(torch.empty(8))
        self.eval()
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
        check_input(x, "x", torch.float32, (2, 3, 8, 8))
        x = self.stem(x)
        x = self.stages[0](x)
        stages_1 = self.stages[1](x)
        out = stages_1.flatten(2).transpose(1, 2)
        out = self.mixers[0](out)
        out = out + self.pos
        out = self.mixers[1](out)
        out = out + self.pos
        conv2d_18 = self.heads[0](stages_1)
        conv2d_19 = self.heads[1](stages_1)
        return {
            "c2": x,
            "c3": stages_1,
            "h0": conv2d_18,
            "h1": conv2d_19,
            "tokens": out,
        }
