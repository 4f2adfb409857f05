"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 968; buffers: 0; 3,872 bytes of tensors in weights.safetensors.
Producer: tests.models.SizedLeaves (a torch.fx.Tracer); torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 34
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SizedLeafAttention(nn.Module):  # tests/models.py:7092 SizedLeafAttention
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, size):
        getitem = size[0]
        getitem_1 = size[1]
        shape1, shape2, shape3 = x.shape[:3]
        x = x.view(shape1, getitem, getitem_1, shape3)
        x = x.flip(1)
        x = x.reshape(shape1, shape2, shape3)
        return self.proj(x)


class SpreadAttention(nn.Module):  # tests/models.py:7105 SpreadAttention
    def __init__(self, sr=None) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.sr = sr

    def forward(self, x, size=None):
        if self.sr is not None:
            B, _, C = x.shape[:3]
            q = self.q(x)
            x = x.permute(0, 2, 1).reshape(B, C, *size)
            x = self.sr(x)
            x = x.reshape(B, C, -1).permute(0, 2, 1)
        else:
            q = self.q(x)
        return q + x.mean(1, keepdim=True)


class TwinsLikeBlock(nn.Module):  # tests/models.py:7122 TwinsLikeBlock
    def __init__(self, attn) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(8)
        self.attn = attn
        self.norm2 = nn.LayerNorm(8)
        self.mlp = nn.Linear(8, 8)

    def forward(self, x, size=None):
        x = x + self.attn(self.norm1(x), size)
        return x + self.mlp(self.norm2(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.ModuleList(
                [
                    TwinsLikeBlock(attn=SizedLeafAttention()),
                    TwinsLikeBlock(
                        attn=SpreadAttention(sr=nn.Conv2d(8, 8, 2, stride=2))
                    ),
                    TwinsLikeBlock(attn=SizedLeafAttention()),
                    TwinsLikeBlock(attn=SpreadAttention()),
                ]
            )
        self.eval()
        self.blocks.training = True
        self.blocks[0].training = True
        self.blocks[1].training = True
        self.blocks[1].attn.training = True
        self.blocks[2].training = True
        self.blocks[3].training = True
        self.blocks[3].attn.training = True
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
        x = self.blocks[0](x, (shape3, shape4))
        x = self.blocks[1](x, (shape3, shape4))
        x = self.blocks[2](x, (shape3, shape4))
        return self.blocks[3](x)
