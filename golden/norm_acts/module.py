"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 72; buffers: 9; 440 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 17
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class NormAct(nn.Module):  # tests/models.py:586 NormAct
    def __init__(self, num_features, use_act=True) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        if use_act:
            self.act = nn.SiLU(inplace=True)
        else:
            self.act = nn.Identity()

    def forward(self, x):
        return self.act(self.bn(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.first = NormAct(4)
            self.second = NormAct(4, use_act=False)
            self.conv = nn.Conv2d(4, 8, 1)
            self.third = NormAct(8)
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
        x = self.first(x)
        x = self.second(x)
        x = self.conv(x)
        return self.third(x)
