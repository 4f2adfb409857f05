"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 140; buffers: 0; 560 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 14
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Layer(nn.Module):  # tests/models.py:839 Layer
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, scale):
        return x + self.lin(x) * scale


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.embed = nn.Linear(4, 4)
            self.layers = nn.ModuleList([Layer() for _ in range(4)])
            self.pair = nn.ModuleList([Layer(), Layer()])
        self.training = False
        self.embed.training = False
        self.layers[0].lin.training = False
        self.layers[1].lin.training = False
        self.layers[2].lin.training = False
        self.layers[3].lin.training = False
        self.pair[0].lin.training = False
        self.pair[1].lin.training = False
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
        scale = torch.sigmoid(x.mean())
        out = self.embed(x)
        for layer in self.layers:
            out = layer(out, scale)
        for layer in self.pair:
            out = layer(out, scale)
        return out + x
