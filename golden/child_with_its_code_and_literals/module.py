"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 178; buffers: 0; 712 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 16
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ShuffledSplit(nn.Module):  # tests/models.py:1820 ShuffledSplit
    def __init__(self, in_features, out_features, width, use_branch1=False) -> None:
        super().__init__()
        if use_branch1:
            self.branch1 = nn.Linear(in_features, out_features)
        else:
            self.branch1 = None
        self.branch2 = nn.Linear(in_features, out_features)
        self.out_features = out_features
        self.width = width

    def forward(self, x):
        if self.branch1 is not None:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        else:
            x1, out = x.chunk(2, dim=1)
            out = self.branch2(out)
            out = torch.cat((x1, out), dim=1)
        out = out.view(-1, 2, self.out_features)
        return out.transpose(1, 2).reshape(-1, self.width)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stage1 = nn.Sequential(
                ShuffledSplit(4, 2, 4, use_branch1=True), ShuffledSplit(2, 2, 4)
            )
            self.widen = nn.Linear(4, 8)
            self.stage2 = nn.Sequential(
                ShuffledSplit(8, 4, 8, use_branch1=True),
                ShuffledSplit(4, 4, 8),
                ShuffledSplit(4, 4, 8),
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
        x = self.stage1(x)
        x = self.widen(x)
        return self.stage2(x)
