"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 6,072; buffers: 33; 25,208 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 69
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ConvNormReLU(nn.Sequential):  # tests/models.py:4190 ConvNormReLU
    def __init__(self, in_channels, out_channels, stride=1) -> None:
        super().__init__(
            nn.Conv2d(
                in_channels, out_channels, 3, stride=stride, padding=1, bias=False
            ),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class ConvBNAct(nn.Sequential):  # tests/models.py:947 ConvBNAct
    def __init__(self, out_channels, activation=False) -> None:
        layers = [
            nn.Conv2d(16, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
        ]
        if activation:
            layers.append(nn.ReLU6(inplace=True))
        super().__init__(*layers)


class ScaledConvs(nn.Sequential):  # tests/models.py:4202 ScaledConvs
    def __init__(self) -> None:
        super().__init__(nn.Conv2d(8, 8, 1), nn.ReLU())
        self.gamma = nn.Parameter(torch.empty(8, 1, 1))


class PairOfConvs(nn.Sequential):  # tests/models.py:4197 PairOfConvs
    def __init__(self) -> None:
        super().__init__(ConvNormReLU(8, 8), ConvNormReLU(8, 8))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = ConvNormReLU(3, 8, stride=2)
            self.widen = ConvNormReLU(8, 16)
            self.project = ConvBNAct(16, activation=True)
            self.narrow = ConvBNAct(8)
            self.pairs = nn.Sequential(PairOfConvs(), PairOfConvs())
            self.tail = nn.Sequential(*[ConvNormReLU(8, 8) for _ in range(3)])
            self.scaled = ScaledConvs()
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
        x = self.stem(x)
        x = self.widen(x)
        x = self.project(x)
        x = self.narrow(x)
        x = self.pairs(x)
        x = self.tail(x)
        x = self.scaled(x)
        return x * self.scaled.gamma
