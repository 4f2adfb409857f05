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


class SplitConvs(nn.ModuleDict):  # tests/models.py:3387 SplitConvs
    def forward(self, x):
        xs = torch.split(x, [4, 4], dim=1)
        out = xs[0]
        out = self["0"](out)
        out_1 = xs[1]
        out_1 = self["1"](out_1)
        return torch.cat([out, out_1], 1)


class SplitConvs_1(nn.ModuleDict):  # tests/models.py:3387 SplitConvs
    def forward(self, x):
        xs = torch.split(x, [8, 8], dim=1)
        out = xs[0]
        out = self["0"](out)
        out_1 = xs[1]
        out_1 = self["1"](out_1)
        return torch.cat([out, out_1], 1)


class SplitConvBlock(nn.Module):  # tests/models.py:3401 SplitConvBlock
    def __init__(self, conv_dw, conv_pwl) -> None:
        super().__init__()
        self.conv_dw = conv_dw
        self.conv_pwl = conv_pwl

    def forward(self, x):
        return self.conv_pwl(self.conv_dw(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                SplitConvBlock(
                    conv_dw=SplitConvs(
                        {
                            "0": nn.Conv2d(4, 4, 3, padding=1, bias=False),
                            "1": nn.Conv2d(4, 4, 5, padding=2, bias=False),
                        }
                    ),
                    conv_pwl=SplitConvs(
                        {
                            "0": nn.Conv2d(4, 4, 1, bias=False),
                            "1": nn.Conv2d(4, 4, 1, bias=False),
                        }
                    ),
                ),
                SplitConvBlock(
                    conv_dw=SplitConvs(
                        {
                            "0": nn.Conv2d(4, 4, 3, padding=1, bias=False),
                            "1": nn.Conv2d(4, 4, 5, padding=2, bias=False),
                        }
                    ),
                    conv_pwl=SplitConvs(
                        {
                            "0": nn.Conv2d(4, 8, 1, bias=False),
                            "1": nn.Conv2d(4, 8, 1, bias=False),
                        }
                    ),
                ),
                SplitConvBlock(
                    conv_dw=SplitConvs_1(
                        {
                            "0": nn.Conv2d(8, 8, 3, padding=1, bias=False),
                            "1": nn.Conv2d(8, 8, 5, padding=2, bias=False),
                        }
                    ),
                    conv_pwl=SplitConvs_1(
                        {
                            "0": nn.Conv2d(8, 8, 1, bias=False),
                            "1": nn.Conv2d(8, 8, 1, bias=False),
                        }
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
