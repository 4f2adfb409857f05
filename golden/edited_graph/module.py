"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 30; buffers: 0; 120 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(input)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 4
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Sequential):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.add_module("0", nn.Linear(4, 4))
            self.add_module("1", nn.Linear(4, 2))
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

    def forward(self, input):
        input = self[0](input)
        input = torch.relu(input)
        return self[1](input)
