"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 126; buffers: 0; 504 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 18
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Se(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(2, 4)

    def forward(self, x):
        out = x.mean(0, keepdim=True)
        out = self.a(out)
        out = self.b(out)
        out = out.sigmoid()
        return x * out


class Stage(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.se = Se()

    def forward(self, x):
        out = self.fc(x)
        out = self.se(out)
        return x + out


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stages = nn.Sequential(
                nn.Sequential(Stage(), Stage()), nn.Sequential(Stage())
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
        return self.stages(x)
