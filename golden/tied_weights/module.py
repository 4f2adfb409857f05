"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 160; buffers: 0; 640 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(tokens)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 3
TIED_TENSORS = {"head.weight": "embed.weight"}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.embed = nn.Embedding(11, 8, padding_idx=0)
            self.proj = nn.Linear(8, 8)
            self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.embed.weight
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

    def forward(self, tokens):
        out = self.embed(tokens)
        out = self.proj(out)
        out = torch.tanh(out)
        return self.head(out)
