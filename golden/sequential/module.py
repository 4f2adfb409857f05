"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 130; buffers: 0; 520 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 6
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.add_module("0", nn.Linear(4, 8))
            self.add_module("1", nn.ReLU())
            self.add_module("2", nn.Linear(8, 8))
            self.add_module("3", nn.Module())
            getattr(self, "3").add_module("0", nn.Tanh())
            getattr(self, "3").add_module("1", nn.Linear(8, 2))
        self.eval()
        getattr(self, "3").training = True
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
        _0 = getattr(self, "0")(input)
        del input
        _1 = getattr(self, "1")(_0)
        del _0
        _2 = getattr(self, "2")(_1)
        del _1
        _3_0 = getattr(getattr(self, "3"), "0")(_2)
        del _2
        _3_1 = getattr(getattr(self, "3"), "1")(_3_0)
        del _3_0
        return _3_1
