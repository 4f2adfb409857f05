"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 68; buffers: 0; 272 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x, bias)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 8
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.norm = nn.LayerNorm(4)
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.eval()
        self.blocks.training = True
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

    def forward(self, x, bias):
        out = x
        for block in self.blocks:
            out_1 = self.norm(out)
            out_1 = out_1 * 2.0
            out_1 = block(out_1)
            out = out + out_1
            out = out + bias
        return out - x
