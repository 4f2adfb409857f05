"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 1,044; buffers: 0; 4,176 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 38
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class SharedPosConv(nn.Module):  # tests/models.py:6972 SharedPosConv
    def __init__(self, in_channels) -> None:
        super().__init__()
        self.proj = nn.Conv1d(
            in_channels, in_channels, 3, padding=1, groups=in_channels
        )

    def forward(self, x):
        return self.proj(x.transpose(1, 2)).transpose(1, 2) + x


class SharingAttention(nn.Module):  # tests/models.py:6997 SharingAttention
    def __init__(self, in_features, out_features) -> None:
        super().__init__()
        self.qkv = nn.Linear(in_features, out_features)
        self.proj = nn.Linear(in_features, in_features)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        matmul = attn @ v
        rel = self.rel(q, v)
        return self.proj(matmul + rel)


class SharedRelPos(nn.Module):  # tests/models.py:6983 SharedRelPos
    def __init__(self, in_channels) -> None:
        super().__init__()
        self.conv_list = nn.ModuleList(
            [
                nn.Conv1d(in_channels, in_channels, 3, padding=1),
                nn.Conv1d(in_channels, in_channels, 5, padding=2),
            ]
        )

    def forward(self, q, v):
        v = v.transpose(1, 2)
        half = v.shape[1] // 2
        out = self.conv_list[0](v[:, :half])
        conv_list_1 = self.conv_list[1](v[:, half:])
        out = torch.cat([out, conv_list_1], dim=1)
        return q * out.transpose(1, 2)


class SharingBlock(nn.Module):  # tests/models.py:7010 SharingBlock
    def __init__(self, normalized_shape, out_features) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(normalized_shape)
        self.attn = SharingAttention(normalized_shape, out_features)

    def forward(self, x):
        x = self.pos(x)
        return x + self.attn(self.norm(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.pos1 = SharedPosConv(4)
            self.blocks1 = nn.ModuleList([SharingBlock(4, 12), SharingBlock(4, 12)])
            self.rel1 = SharedRelPos(2)
            self.up = nn.Linear(4, 8)
            self.pos2 = SharedPosConv(8)
            self.blocks2 = nn.ModuleList([SharingBlock(8, 24), SharingBlock(8, 24)])
            self.rel2 = SharedRelPos(4)
        # modules held here that others run: their attributes, not children, so state_dict() lists each once;
        # a module put in place of one of them (quantization, adapters) must be set on those attributes too
        object.__setattr__(self.blocks1[0], "pos", self.pos1)
        object.__setattr__(self.blocks1[0].attn, "rel", self.rel1)
        object.__setattr__(self.blocks1[1], "pos", self.pos1)
        object.__setattr__(self.blocks1[1].attn, "rel", self.rel1)
        object.__setattr__(self.blocks2[0], "pos", self.pos2)
        object.__setattr__(self.blocks2[0].attn, "rel", self.rel2)
        object.__setattr__(self.blocks2[1], "pos", self.pos2)
        object.__setattr__(self.blocks2[1].attn, "rel", self.rel2)
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
        for layer in self.blocks1:
            x = layer(x)
        x = self.up(x)
        for layer in self.blocks2:
            x = layer(x)
        return x
