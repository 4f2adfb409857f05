"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 5; 73 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 5
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.register_buffer("mean", torch.empty(5))
            self.register_buffer("scale", torch.empty(5))
            self.register_buffer("steps", torch.empty((), dtype=torch.int64))
            self.register_buffer("mask", torch.empty(5, dtype=torch.bool))
            self.register_buffer("_tensor_constant0", torch.empty(5))
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
        x = (x - self.mean) * self.scale * self.steps
        return torch.where(self.mask, x, self._tensor_constant0)
