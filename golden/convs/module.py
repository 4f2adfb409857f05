"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 91; buffers: 3; 396 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x, v)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 11
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.c1 = nn.Conv1d(2, 4, 3, dilation=2)
            self.t1 = nn.ConvTranspose1d(4, 3, 3, stride=2, output_padding=1)
            self.bn1 = nn.BatchNorm1d(3, affine=False, bias=False)
            self.c3 = nn.Conv3d(1, 2, (1, 3, 3))
            self.bn3 = nn.BatchNorm3d(2, track_running_stats=False)
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

    def forward(self, x, v):
        x = self.c1(x)
        x = self.t1(x)
        x = self.bn1(x)
        x = x.mean()
        out = self.c3(v)
        out = self.bn3(out)
        return (x, out.sum())
