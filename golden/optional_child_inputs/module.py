"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 2,192; buffers: 0; 8,768 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 26
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ReducedAttention(nn.Module):  # tests/models.py:5127 ReducedAttention
    def __init__(self, sr=None, norm=None) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.sr = sr
        self.norm = norm
        self.kv = nn.Linear(8, 16)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, H=None, W=None):
        B, _, C = x.shape[:3]
        q = self.q(x)
        if self.sr is not None:
            x = x.permute(0, 2, 1).reshape(B, C, H, W)
            x = self.sr(x)
            x = x.reshape(B, C, -1).permute(0, 2, 1)
            x = self.norm(x)
        kv = self.kv(x)
        del x
        kv = kv.reshape(B, -1, 2, C)
        kv = kv.permute(2, 0, 1, 3)
        k, v = kv.unbind(0)
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        return self.proj(attn @ v)


class ReducedStage(nn.Module):  # tests/models.py:5155 ReducedStage
    def __init__(self, attn) -> None:
        super().__init__()
        self.attn = attn

    def forward(self, x):
        B, C, H, W = x.shape[:4]
        tokens = x.flatten(2).transpose(1, 2)
        tokens = tokens + self.attn(tokens, H, W)
        transpose = tokens.transpose(1, 2)
        return transpose.reshape(B, C, H, W)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stages = nn.Sequential(
                ReducedStage(
                    attn=ReducedAttention(
                        sr=nn.Conv2d(8, 8, 2, stride=2), norm=nn.LayerNorm(8)
                    )
                ),
                ReducedStage(
                    attn=ReducedAttention(
                        sr=nn.Conv2d(8, 8, 4, stride=4), norm=nn.LayerNorm(8)
                    )
                ),
                ReducedStage(attn=ReducedAttention()),
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
