"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 960; buffers: 0; 3,840 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 28
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Pointwise(nn.Module):  # tests/models.py:3593 Pointwise
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.conv(x) * 2


class ProjectedBlock(nn.Module):  # tests/models.py:3627 ProjectedBlock
    def __init__(self, proj=None) -> None:
        super().__init__()
        self.proj = proj if proj is not None else nn.Identity()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        x = self.proj(x)
        return self.conv(x) + 1


class KeptShortcut(nn.Module):  # tests/models.py:3640 KeptShortcut
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.downsample = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        shortcut = x
        x = self.conv(x)
        shortcut = self.downsample(shortcut)
        return x + shortcut


class KeptShortcutOfInput(nn.Module):  # tests/models.py:3657 KeptShortcutOfInput
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.downsample = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        out = self.conv(x)
        shortcut = self.downsample(x)
        return out + shortcut


class ValueHead(nn.Module):  # tests/models.py:3604 ValueHead
    def __init__(self, stride_conv=None) -> None:
        super().__init__()
        self.stride_conv = stride_conv
        self.q = nn.Conv2d(4, 4, 1)
        self.v = Pointwise()
        self.v_local = nn.Conv2d(4, 4, 3, padding=1, groups=4)

    def forward(self, x):
        if self.stride_conv is not None:
            x = self.stride_conv(x)
        q = self.q(x)
        v = self.v(x)
        v_local = self.v_local(v)
        return q * v + v_local


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.heads = nn.Sequential(
                ValueHead(stride_conv=nn.Conv2d(4, 4, 3, stride=2, padding=1)),
                ValueHead(),
            )
            self.blocks = nn.Sequential(
                ProjectedBlock(proj=nn.Conv2d(4, 4, 1)), ProjectedBlock()
            )
            self.kept = KeptShortcut()
            self.kept_input = KeptShortcutOfInput()
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
        x = self.heads(x)
        x = self.blocks(x)
        x = self.kept(x)
        return self.kept_input(x)
