"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 76; buffers: 0; 304 bytes of tensors in weights.safetensors.
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


class SharedPosConv(nn.Module):  # tests/models.py:6972 SharedPosConv
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Conv1d(4, 4, 3, padding=1, groups=4)

    def forward(self, x):
        return self.proj(x.transpose(1, 2)).transpose(1, 2) + x


class PosBlock(nn.Module):  # tests/models.py:7044 PosBlock
    def __init__(self) -> None:
        super().__init__()
        self.pos = SharedPosConv()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.pos(x)) + x


class PosBlock_1(nn.Module):  # tests/models.py:7044 PosBlock
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.pos(x)) + x


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.ModuleList([PosBlock(), PosBlock_1(), PosBlock_1()])
        # modules held here that others run: their attributes, not children, so state_dict() lists each once;
        # a module put in place of one of them (quantization, adapters) must be set on those attributes too
        object.__setattr__(self.blocks[1], "pos", self.blocks[0].pos)
        object.__setattr__(self.blocks[2], "pos", self.blocks[0].pos)
        self.training = False
        self.blocks[0].pos.proj.training = False
        self.blocks[0].fc.training = False
        self.blocks[1].fc.training = False
        self.blocks[2].fc.training = False
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
        for block in self.blocks:
            x = block(x)
        return x
