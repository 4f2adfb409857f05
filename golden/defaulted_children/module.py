"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 252; buffers: 6; 1,088 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 33
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class BranchSum(nn.Module):  # tests/models.py:5736 BranchSum
    def __init__(self, identity=None) -> None:
        super().__init__()
        self.identity = identity
        self.scale = nn.Linear(4, 4)
        self.conv = nn.Linear(4, 4)

    def forward(self, x):
        identity_out = 0
        if self.identity is not None:
            identity_out = self.identity(x)
        out = self.scale(x) + self.conv(x)
        out = out + identity_out
        return out.relu()


class DualPath(nn.Module):  # tests/models.py:5754 DualPath
    def __init__(self, proj_s1=None, proj_s2=None) -> None:
        super().__init__()
        self.proj_s1 = proj_s1
        self.proj_s2 = proj_s2
        self.body = nn.Linear(4, 4)

    def forward(self, x):
        s = x
        if self.proj_s1 is not None:
            s = self.proj_s1(x)
        if self.proj_s2 is not None:
            s = self.proj_s2(x)
        out = s[:, :2]
        getitem = s[:, 2:]
        y = self.body(x)
        getitem_1 = y[:, :2]
        out = out + getitem_1
        return torch.cat([out, getitem], 1) * 0.5


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.sums = nn.Sequential(
                BranchSum(),
                BranchSum(identity=nn.BatchNorm1d(4)),
                BranchSum(identity=nn.BatchNorm1d(4)),
            )
            self.paths = nn.Sequential(
                DualPath(proj_s1=nn.Linear(4, 4)),
                DualPath(),
                DualPath(proj_s2=nn.Linear(4, 4, bias=False)),
                DualPath(),
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
        x = self.sums(x)
        return self.paths(x)
