"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 738; buffers: 0; 2,952 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 20
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ChunkedConvs(nn.Module):  # tests/models.py:5508 ChunkedConvs
    def __init__(self, value, convs) -> None:
        super().__init__()
        self.convs = convs
        self.value = value

    def forward(self, x):
        spx = x.chunk(self.value, dim=1)
        outs = []
        for i, conv in enumerate(self.convs):
            if i == 0:
                out = spx[i]
            else:
                out = out + spx[i]
            out = conv(out)
            outs.append(out)
        return x + torch.cat(outs + [spx[-1]], 1)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                ChunkedConvs(
                    3,
                    convs=nn.ModuleList(
                        [nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1)]
                    ),
                ),
                ChunkedConvs(
                    4,
                    convs=nn.ModuleList(
                        [nn.Conv2d(3, 3, 3, padding=1) for _ in range(3)]
                    ),
                ),
                ChunkedConvs(
                    6,
                    convs=nn.ModuleList(
                        [nn.Conv2d(2, 2, 3, padding=1) for _ in range(5)]
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
