"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 110; buffers: 0; 440 bytes of tensors in weights.safetensors.
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
            self.outer = nn.Module()
            self.outer.middle = nn.Module()
            self.outer.middle.leaf = nn.Module()
            self.outer.middle.leaf.lin = nn.Linear(6, 6)
            self.outer.middle.leaf.scale = nn.Parameter(torch.empty(6))
            self.outer.middle.other = nn.Module()
            self.outer.middle.other.lin = nn.Linear(6, 6)
            self.outer.middle.other.scale = nn.Parameter(torch.empty(6))
            self.head = nn.Linear(6, 2)
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
        outer_middle_leaf_lin = self.outer.middle.leaf.lin(x)
        del x
        outer_middle_leaf_scale = self.outer.middle.leaf.scale
        mul = outer_middle_leaf_lin * outer_middle_leaf_scale
        del outer_middle_leaf_lin, outer_middle_leaf_scale
        outer_middle_other_lin = self.outer.middle.other.lin(mul)
        del mul
        outer_middle_other_scale = self.outer.middle.other.scale
        mul_1 = outer_middle_other_lin * outer_middle_other_scale
        del outer_middle_other_lin
        outer_middle_leaf_lin_weight = self.outer.middle.leaf.lin.weight
        t = outer_middle_leaf_lin_weight.t()
        del outer_middle_leaf_lin_weight
        matmul = mul_1 @ t
        del mul_1, t
        head = self.head(matmul)
        del matmul
        sum_1 = outer_middle_other_scale.sum()
        del outer_middle_other_scale
        add = head + sum_1
        del head, sum_1
        return add
