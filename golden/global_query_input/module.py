"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 2,896; buffers: 0; 11,584 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 22
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class GlobalQueryAttention(nn.Module):  # tests/models.py:5083 GlobalQueryAttention
    def __init__(self, in_features, out_features, value) -> None:
        super().__init__()
        self.qkv = nn.Linear(in_features, out_features)
        self.proj = nn.Linear(in_features, in_features)
        self.value = value

    def forward(self, x, q_global=None):
        B, N, C = x.shape[:3]
        if q_global is not None:
            k, v = self.qkv(x).chunk(2, dim=-1)
            q = q_global.expand(B, N, C)
        else:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = q * self.value
        attn = attn @ k.transpose(-2, -1)
        x = attn.softmax(dim=-1)
        x = x @ v
        x = x.reshape(B, N, 2, C // 2)
        x = x.transpose(2, 3)
        return self.proj(x.reshape(B, N, C))


class GlobalQueryStage(nn.Module):  # tests/models.py:5104 GlobalQueryStage
    def __init__(self, in_features, out_features, value, out_features_2) -> None:
        super().__init__()
        self.to_query = nn.Linear(in_features, in_features)
        self.blocks = nn.ModuleList(
            [
                GlobalQueryAttention(in_features, out_features, value),
                GlobalQueryAttention(in_features, out_features_2, value),
            ]
        )

    def forward(self, x):
        q_global = self.to_query(x.mean(1, keepdim=True))
        blocks_0 = self.blocks[0](x)
        x = x + blocks_0
        blocks_1 = self.blocks[1](x, q_global)
        return x + blocks_1


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stages = nn.ModuleList(
                [
                    GlobalQueryStage(8, 24, 0.3535533905932738, 16),
                    GlobalQueryStage(16, 48, 0.25, 32),
                ]
            )
            self.widen = nn.Linear(8, 16)
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
        x = self.stages[0](x)
        x = self.widen(x)
        return self.stages[1](x)
