"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 3,488; buffers: 0; 13,952 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 12
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SplitConvs(nn.ModuleDict):  # tests/models.py:3396 SplitConvs
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        kernel_size_2,
        padding=0,
        padding_2=0,
    ) -> None:
        super().__init__()
        self.add_module(
            "0",
            nn.Conv2d(
                in_channels, out_channels, kernel_size, padding=padding, bias=False
            ),
        )
        self.add_module(
            "1",
            nn.Conv2d(
                in_channels, out_channels, kernel_size_2, padding=padding_2, bias=False
            ),
        )
        self.in_channels = in_channels

    def forward(self, x):
        xs = torch.split(x, [self.in_channels, self.in_channels], dim=1)
        outs = []
        for i, layer in enumerate(self.values()):
            out = xs[i]
            out = layer(out)
            outs.append(out)
        return torch.cat(outs, 1)


class SplitConvBlock(nn.Module):  # tests/models.py:3410 SplitConvBlock
    def __init__(self, in_channels, out_channels) -> None:
        super().__init__()
        self.conv_dw = SplitConvs(
            in_channels, in_channels, 3, 5, padding=1, padding_2=2
        )
        self.conv_pwl = SplitConvs(in_channels, out_channels, 1, 1)

    def forward(self, x):
        return self.conv_pwl(self.conv_dw(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                SplitConvBlock(4, 4), SplitConvBlock(4, 8), SplitConvBlock(8, 8)
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
