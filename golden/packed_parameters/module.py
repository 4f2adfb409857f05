"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 176; buffers: 0; 704 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x, mask)

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


class PairSource(nn.Module):  # tests/models.py:2546 PairSource
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        emb = x * 2.0
        return (emb.cos(), emb.sin())


class LateRotaryAttention(nn.Module):  # tests/models.py:2510 LateRotaryAttention
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)

    def forward(self, hidden_states, attention_mask, position_embeddings):
        cos, sin = position_embeddings
        hidden_states = self.q(hidden_states)
        q = hidden_states * cos
        hidden_states = hidden_states.flip(-1)
        hidden_states = hidden_states * sin
        q = q + hidden_states
        scores = q + attention_mask
        return scores.relu()


class LateRotaryLayer(nn.Module):  # tests/models.py:2522 LateRotaryLayer
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = LateRotaryAttention()

    def forward(self, hidden_states, attention_mask, position_embeddings):
        normed = self.norm(hidden_states)
        return hidden_states + self.attn(normed, attention_mask, position_embeddings)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.rotary = PairSource()
            self.layers = nn.ModuleList([LateRotaryLayer(), LateRotaryLayer()])
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

    def forward(self, x, mask):
        position_embeddings = self.rotary(x)
        attention_mask = mask.tril()
        for layer in self.layers:
            x = layer(x, attention_mask, position_embeddings)
        return x
