"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 326; buffers: 2; 1,560 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 16
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class GatedMixer(nn.Module):  # tests/models.py:6351 GatedMixer
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        h = self.proj(x)
        return (h, h.tanh())


class HybridBlock(nn.Module):  # tests/models.py:6363 HybridBlock
    def __init__(self) -> None:
        super().__init__()
        self.mixer = GatedMixer()
        self.rel_pos = nn.Module()
        self.rel_pos.mlp = nn.Linear(2, 1)
        self.rel_pos.register_buffer("coords", torch.empty(4, 4, 2))
        self.proj = nn.Linear(8, 8)
        self.alpha = nn.Parameter(torch.empty(2, 8))

    def forward(self, x):
        B, N, C = x.shape[:3]
        alpha = torch.sigmoid(self.alpha).view(2, 1, 1, -1)
        mixer1, out = self.mixer(x)
        out_1 = alpha[0]
        out = out - x
        out_1 = out_1 * out
        del out
        out_1 = x + out_1
        q = out_1.unsqueeze(1)
        out_2 = self.rel_pos.mlp(self.rel_pos.coords)
        out_2 = out_2.squeeze(-1).unsqueeze(0)
        out_2 = F.scaled_dot_product_attention(q, q, q, attn_mask=out_2)
        out_2 = out_2.reshape(B, N, C)
        out_2 = self.proj(out_2)
        out_2 = out_2 * alpha[1]
        return x + out_2 + mixer1


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(HybridBlock(), HybridBlock())
        self.training = False
        self.blocks[0].mixer.proj.training = False
        self.blocks[0].rel_pos.mlp.training = False
        self.blocks[0].proj.training = False
        self.blocks[1].mixer.proj.training = False
        self.blocks[1].rel_pos.mlp.training = False
        self.blocks[1].proj.training = False
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
        return self.blocks(x)
