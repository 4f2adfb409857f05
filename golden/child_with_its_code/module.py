"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 32; buffers: 0; 128 bytes of tensors in weights.safetensors.
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


class Split(nn.Module):  # tests/models.py:771 Split
    def __init__(self, in_features, branch1=None) -> None:
        super().__init__()
        self.branch1 = branch1
        self.branch2 = nn.Linear(in_features, 2)

    def forward(self, x):
        if self.branch1 is not None:
            return torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        x1, x2 = x.chunk(2, dim=1)
        return torch.cat((x1, self.branch2(x2)), dim=1)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                Split(4, branch1=nn.Linear(4, 2)), Split(2), Split(2)
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
