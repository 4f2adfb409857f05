"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,148; buffers: 15; 4,936 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 71
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SqueezeGate(nn.Module):  # tests/models.py:953 SqueezeGate
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(8, 2, 1)
        self.fc2 = nn.Conv2d(2, 8, 1)

    def forward(self, x):
        out = torch.relu(self.fc1(x.mean((2, 3), keepdim=True)))
        out = self.fc2(out)
        return x * torch.sigmoid(out)


class Ghosted(nn.Module):  # tests/models.py:1891 Ghosted
    def __init__(
        self, in_channels, out_channels, use_conv_dw=False, use_se=False, shortcut=None
    ) -> None:
        super().__init__()
        self.expand = nn.Conv2d(in_channels, 8, 1)
        if use_conv_dw:
            self.conv_dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
            self.bn_dw = nn.BatchNorm2d(8)
        else:
            self.conv_dw = None
            self.bn_dw = None
        if use_se:
            self.se = SqueezeGate()
        else:
            self.se = None
        self.project = nn.Conv2d(8, out_channels, 1)
        self.shortcut = shortcut

    def forward(self, x):
        shortcut = x
        x = self.expand(x)
        if self.conv_dw is not None:
            x = self.conv_dw(x)
            x = self.bn_dw(x)
        if self.se is not None:
            x = self.se(x)
        x = self.project(x)
        if self.shortcut is not None:
            shortcut = self.shortcut(shortcut)
        return x + shortcut


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                Ghosted(4, 4),
                Ghosted(4, 4, use_se=True),
                Ghosted(
                    4,
                    6,
                    use_conv_dw=True,
                    shortcut=nn.Sequential(
                        nn.Conv2d(4, 6, 1, stride=2), nn.BatchNorm2d(6)
                    ),
                ),
                Ghosted(6, 6),
                Ghosted(
                    6,
                    8,
                    use_se=True,
                    shortcut=nn.Sequential(nn.Conv2d(6, 8, 1), nn.BatchNorm2d(8)),
                ),
                Ghosted(
                    8,
                    8,
                    use_conv_dw=True,
                    use_se=True,
                    shortcut=nn.Sequential(
                        nn.Conv2d(8, 8, 1, stride=2), nn.BatchNorm2d(8)
                    ),
                ),
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
