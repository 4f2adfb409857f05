"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 33; buffers: 2; 148 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 9
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.add_module("my layer", nn.Linear(3, 3))
            self.layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
            self.add_module("class", nn.Linear(2, 2))
            self.holder = nn.ModuleList()
            self.holder.add_module("0", nn.Module())
            self.holder[0].add_module("import", nn.Module())
            self.holder[0].register_buffer('q"uote\\', torch.empty(1))
            self.register_parameter("é", nn.Parameter(torch.empty(3)))
            self.register_buffer("a'b", torch.empty(3))
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
        x = getattr(self, "my layer")(x)
        x = x + getattr(self, "a'b")
        x = self.layers(x)
        return x * getattr(self, "é")
