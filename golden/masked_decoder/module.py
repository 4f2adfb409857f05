"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 4,416; buffers: 0; 17,664 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(tgt, memory, tgt_mask, memory_mask)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 36
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SeqAttention(nn.Module):  # tests/models.py:5313 SeqAttention
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(16, 16)
        self.k_proj = nn.Linear(16, 16, bias=False)
        self.v_proj = nn.Linear(16, 16)
        self.out_proj = nn.Linear(16, 16)

    def forward(self, hidden_states, attention_mask, key_value_states=None):
        if key_value_states is None:
            key_value_states = hidden_states
        b, n, d = hidden_states.shape[:3]
        q = self.q_proj(hidden_states).view(b, n, 2, -1)
        q = q.transpose(1, 2)
        k = self.k_proj(key_value_states).view(b, -1, 2, d // 2)
        k = k.transpose(1, 2)
        v = self.v_proj(key_value_states).view(b, -1, 2, d // 2)
        v = v.transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        out = out.transpose(1, 2).reshape(b, n, d)
        return self.out_proj(out)


class MaskedDecoderLayer(nn.Module):  # tests/models.py:6581 MaskedDecoderLayer
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(16)
        self.self_attn = SeqAttention()
        self.norm2 = nn.LayerNorm(16)
        self.encoder_attn = SeqAttention()

    def forward(
        self,
        hidden_states,
        attention_mask,
        encoder_hidden_states,
        encoder_attention_mask,
    ):
        hidden_states = hidden_states + self.self_attn(
            self.norm1(hidden_states), attention_mask
        )
        encoder_attn = self.encoder_attn(
            self.norm2(hidden_states), encoder_attention_mask, encoder_hidden_states
        )
        return hidden_states + encoder_attn


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.layers = nn.ModuleList([MaskedDecoderLayer(), MaskedDecoderLayer()])
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

    def forward(self, tgt, memory, tgt_mask, memory_mask):
        attention_mask = tgt_mask.tril()
        encoder_hidden_states = memory * 2
        encoder_attention_mask = memory_mask * 2
        for layer in self.layers:
            tgt = layer(
                tgt, attention_mask, encoder_hidden_states, encoder_attention_mask
            )
        return tgt
