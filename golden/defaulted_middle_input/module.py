"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 864; buffers: 0; 3,456 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x, memory, mask)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 24
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Attending(nn.Module):  # tests/models.py:1573 Attending
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, x, mask, context=None):
        if context is None:
            context = x
        scores = self.q(x) @ self.k(context).transpose(-2, -1) + mask
        return scores.softmax(-1) @ self.v(context)


class DecoderLayer(nn.Module):  # tests/models.py:1589 DecoderLayer
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = Attending()
        self.cross_attn = Attending()

    def forward(self, x, memory, mask):
        x = x + self.self_attn(x, mask)
        return x + self.cross_attn(x, mask, memory)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.layers = nn.ModuleList([DecoderLayer(), DecoderLayer()])
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

    def forward(self, x, memory, mask):
        for layer in self.layers:
            x = layer(x, memory, mask)
        return x
