"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 740; buffers: 0; 2,960 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 10
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FusedBranches(nn.Module):  # tests/models.py:3556 FusedBranches
    def __init__(self) -> None:
        super().__init__()
        self.branches = nn.ModuleList(
            [nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1)]
        )
        self.fuse_act = nn.ReLU()

    def forward(self, x, x_1):
        x = self.branches[0](x)
        branches_1 = self.branches[1](x_1)
        out = x + branches_1
        x = out + x
        x = self.fuse_act(x)
        out = out + branches_1
        return (x, self.fuse_act(out))


class FusedBranches_1(nn.Module):  # tests/models.py:3556 FusedBranches
    def __init__(self) -> None:
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1) for _ in range(3)])
        self.fuse_act = nn.ReLU()

    def forward(self, x, x_1, x_2):
        x = self.branches[0](x)
        out = self.branches[1](x_1)
        branches_2 = self.branches[2](x_2)
        out_1 = x + out + branches_2
        x = out_1 + x
        x = self.fuse_act(x)
        out = out_1 + out
        out = self.fuse_act(out)
        out_1 = out_1 + branches_2
        return (x, out, self.fuse_act(out_1))


class ListSequential(nn.Sequential):  # tests/models.py:3547 ListSequential
    def __init__(self) -> None:
        super().__init__()
        self.add_module("0", FusedBranches())

    def forward(self, x, x_1):
        x, x_1 = self[0](x, x_1)
        return (x, x_1)


class ListSequential_1(nn.Sequential):  # tests/models.py:3547 ListSequential
    def __init__(self) -> None:
        super().__init__()
        self.add_module("0", FusedBranches_1())

    def forward(self, x, x_1, x_2):
        x, x_1, x_2 = self[0](x, x_1, x_2)
        return (x, x_1, x_2)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stage2 = ListSequential()
            self.stage3 = ListSequential_1()
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
        out = x.flip(3)
        x, out = self.stage2(x, out)
        out_1 = out.flip(2)
        x, out, out_1 = self.stage3(x, out, out_1)
        x = x + out
        return x + out_1
