"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,752; buffers: 0; 7,008 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 32
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class GlobalQueryAttention(nn.Module):  # tests/models.py:5083 GlobalQueryAttention
    def __init__(self, out_features) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, out_features)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, q_global=None):
        B, N, C = x.shape[:3]
        if q_global is not None:
            k, v = self.qkv(x).chunk(2, dim=-1)
            q = q_global.expand(B, N, C)
        else:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = q * 0.3535533905932738
        attn = attn @ k.transpose(-2, -1)
        x = attn.softmax(dim=-1)
        x = x @ v
        x = x.reshape(B, N, 2, C // 2)
        x = x.transpose(2, 3)
        return self.proj(x.reshape(B, N, C))


class GlobalQueryBlock(nn.Module):  # tests/models.py:5259 GlobalQueryBlock
    def __init__(self, out_features) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = GlobalQueryAttention(out_features)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x, q_global=None):
        x = x + self.attn(self.norm(x), q_global)
        return x + self.mlp(x)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.to_query = nn.Linear(8, 8)
            self.blocks = nn.ModuleList(
                [GlobalQueryBlock(24), GlobalQueryBlock(16), GlobalQueryBlock(24)]
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
        out = x.mean(1, keepdim=True)
        out = self.to_query(out)
        x = self.blocks[0](x)
        x = self.blocks[1](x, out)
        return self.blocks[2](x)
