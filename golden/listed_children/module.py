"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,002; buffers: 0; 4,008 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 24
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class EvenMixedConvs(nn.ModuleDict):  # tests/models.py:5607 EvenMixedConvs
    def __init__(self, in_channels_list, kernel_sizes, paddings, stride=1) -> None:
        super().__init__()
        for i, (in_channels, kernel_size, padding) in enumerate(
            zip(in_channels_list, kernel_sizes, paddings)
        ):
            self.add_module(
                str(i),
                nn.Conv2d(
                    in_channels,
                    in_channels,
                    kernel_size,
                    stride=stride,
                    padding=padding,
                    groups=in_channels,
                    bias=False,
                ),
            )
        self.splits = in_channels_list

    def forward(self, x):
        x_split = torch.split(x, self.splits, dim=1)
        outs = []
        for i, layer in enumerate(self.values()):
            out = x_split[i]
            out = layer(out)
            outs.append(out)
        return torch.cat(outs, 1)


class SummedHeads(nn.ModuleList):  # tests/models.py:5623 SummedHeads
    def __init__(self, count) -> None:
        super().__init__()
        for i in range(count):
            self.add_module(str(i), nn.Linear(6, 6))

    def forward(self, x):
        outs = []
        for layer in self:
            out = layer(x)
            outs.append(out)
        return torch.stack(outs, 0).sum(0) * 0.5


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                EvenMixedConvs([4, 4], [3, 5], [1, 2]),
                EvenMixedConvs([4, 2, 2], [3, 5, 7], [1, 2, 3], stride=2),
                EvenMixedConvs([4, 2, 2], [1, 1, 1], [0, 0, 0]),
                EvenMixedConvs([2, 2, 2, 2], [3, 5, 7, 9], [1, 2, 3, 4]),
                EvenMixedConvs([4, 4], [3, 5], [1, 2]),
            )
            self.heads = nn.ModuleList([SummedHeads(2), SummedHeads(3)])
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
        x = self.blocks(x)
        flatten = x.flatten(2)
        out = flatten[..., :6]
        for head in self.heads:
            out = head(out)
        return out
