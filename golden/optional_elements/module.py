"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,885; buffers: 48; 8,948 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 104
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ConvBNAct(nn.Sequential):  # tests/models.py:947 ConvBNAct
    pass


class SqueezeGate(nn.Module):  # tests/models.py:953 SqueezeGate
    def __init__(self, in_channels, out_channels) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(in_channels, out_channels, 1)
        self.fc2 = nn.Conv2d(out_channels, in_channels, 1)

    def forward(self, x):
        out = torch.relu(self.fc1(x.mean((2, 3), keepdim=True)))
        out = self.fc2(out)
        return x * torch.sigmoid(out)


class Expanding(nn.Module):  # tests/models.py:963 Expanding
    def __init__(
        self,
        out_channels,
        out_channels_3,
        in_channels=None,
        activation=nn.ReLU6,
        out_channels_2=None,
        residual=True,
    ) -> None:
        super().__init__()
        layers = []
        if in_channels is not None:
            layers.append(
                ConvBNAct(
                    nn.Conv2d(in_channels, out_channels, 1, bias=False),
                    nn.BatchNorm2d(out_channels),
                    activation(inplace=True),
                )
            )
        layers.append(
            ConvBNAct(
                nn.Conv2d(
                    out_channels,
                    out_channels,
                    3,
                    padding=1,
                    groups=out_channels,
                    bias=False,
                ),
                nn.BatchNorm2d(out_channels),
                activation(inplace=True),
            )
        )
        if out_channels_2 is not None:
            layers.append(SqueezeGate(out_channels, out_channels_2))
        self.conv = nn.Sequential(
            *layers,
            ConvBNAct(
                nn.Conv2d(out_channels, out_channels_3, 1, bias=False),
                nn.BatchNorm2d(out_channels_3),
            ),
        )
        self.residual = residual

    def forward(self, x):
        if self.residual:
            return x + self.conv(x)
        return self.conv(x)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                Expanding(4, 4),
                Expanding(8, 6, in_channels=4, residual=False),
                Expanding(18, 6, in_channels=6),
                Expanding(12, 8, in_channels=6, out_channels_2=4, residual=False),
                Expanding(8, 8, out_channels_2=3),
                Expanding(16, 8, in_channels=8, activation=nn.Hardswish),
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
