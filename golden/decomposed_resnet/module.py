"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 11,037; buffers: 30; 45,188 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 62
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ConvNormAct(nn.Sequential):  # tests/models.py:471 ConvNormAct
    def __init__(self) -> None:
        super().__init__(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()
        )


class BasicBlock(nn.Module):  # tests/models.py:448 BasicBlock
    def __init__(self, in_channels, out_channels, stride=1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(
            in_channels, out_channels, 3, stride=stride, padding=1, bias=False
        )
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        if stride != 1:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.downsample = None

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        # tests/models.py:465 in forward: out = self.bn2(self.conv2(out))
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = ConvNormAct()
            self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
            self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2), BasicBlock(16, 16))
            self.head = nn.Module()
            self.head.pool = nn.AdaptiveAvgPool2d(1)
            self.head.fc = nn.Linear(16, 5)
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
        x = self.layer2(self.layer1(self.stem(x)))
        return self.head.fc(self.head.pool(x).view(2, 16))
