"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 80; buffers: 0; 320 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 8
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.items = nn.ModuleList()
            self.items.add_module("1", nn.Module())
            getattr(self.items, "1").a = nn.Linear(4, 4)
            getattr(self.items, "1").b = nn.Linear(4, 4)
            self.items.add_module("0", nn.Module())
            self.items[0].a = nn.Linear(4, 4)
            self.items[0].b = nn.Linear(4, 4)
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
        items_1_a = self.items[1].a(x)
        out = self.items[0].a(x)
        out = self.items[0].b(out)
        x = self.items[1].b(x)
        out = out * x
        return items_1_a + out
