"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 984; buffers: 0; 3,936 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 16
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class ReducingAttention(nn.Module):  # tests/models.py:7180 ReducingAttention
    def __init__(self, sr=None) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.sr = sr

    def forward(self, x, feat_size=None):
        if self.sr is not None:
            B, _, C = x.shape[:3]
            q = self.q(x)
            H, W = feat_size
            x = x.permute(0, 2, 1).reshape(B, C, H, W)
            x = self.sr(x)
            x = x.reshape(B, C, -1).permute(0, 2, 1)
        else:
            q = self.q(x)
        return q + x.mean(1, keepdim=True)


class IndexedSizeConv(nn.Module):  # tests/models.py:7167 IndexedSizeConv
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x, feat_size):
        B, _, C = x.shape[:3]
        x = x.transpose(1, 2).view(B, C, feat_size[0], feat_size[1])
        x = self.conv(x)
        return x.flatten(2).transpose(1, 2)


class PvtLikeBlock(nn.Module):  # tests/models.py:7198 PvtLikeBlock
    def __init__(self, attn) -> None:
        super().__init__()
        self.attn = attn
        self.mlp = IndexedSizeConv()

    def forward(self, x, feat_size):
        x = x + self.attn(x, feat_size)
        return x + self.mlp(x, feat_size)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.ModuleList(
                [
                    PvtLikeBlock(
                        attn=ReducingAttention(sr=nn.Conv2d(8, 8, 2, stride=2))
                    ),
                    PvtLikeBlock(
                        attn=ReducingAttention(sr=nn.Conv2d(8, 8, 2, stride=2))
                    ),
                    PvtLikeBlock(attn=ReducingAttention()),
                ]
            )
        self.training = False
        self.blocks[0].attn.q.training = False
        self.blocks[0].attn.sr.training = False
        self.blocks[0].mlp.conv.training = False
        self.blocks[1].attn.q.training = False
        self.blocks[1].attn.sr.training = False
        self.blocks[1].mlp.conv.training = False
        self.blocks[2].attn.q.training = False
        self.blocks[2].mlp.conv.training = False
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
        _, _, shape3, shape4 = x.shape[:4]
        x = x.flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x, (shape3, shape4))
        return x
