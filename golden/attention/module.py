"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,472; buffers: 0; 5,888 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 9
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.embed = nn.Embedding(20, 16)
            self.norm = nn.LayerNorm(16)
            self.attn = nn.MultiheadAttention(16, 4, add_bias_kv=True, batch_first=True)
            self.glu = nn.GLU()
            self.out = nn.Identity()
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
        out = self.norm(out)
        attn = self.attn(out, out, out, need_weights=True)
        out_1 = attn[0]
        getitem = attn[1]
        out_1 = self.glu(out_1)
        return (self.out(out_1), getitem)
