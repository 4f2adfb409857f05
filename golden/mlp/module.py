"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 736; buffers: 0; 2,944 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 5
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.fc1 = nn.Linear(16, 32)
            self.act = nn.GELU(approximate="tanh")
            self.drop = nn.Dropout(p=0.1)
            self.norm = nn.LayerNorm(32, eps=1e-06)
            self.fc2 = nn.Linear(32, 4, bias=False)
            self.tanh = nn.Tanh()
            self.softmax = nn.Softmax(dim=-1)
        self.eval()
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
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop(x)
        x = self.norm(x)
        x = self.fc2(x)
        x = self.tanh(x)
        return self.softmax(x)
