"""The benchmark networks, built from torch.nn alone (torchvision is not assumed).

No `from __future__ import annotations` here: with string annotations, symbolic_trace records
the placeholder type as the string "torch.Tensor", and torch.save(gm) then fails in
GraphModule.__reduce__ and a to_folder package fails to import (NameError `_torch_Tensor_`).
"""

import torch
from torch import nn


class WideStack(nn.Module):
    """Weight-heavy: `depth` blocks of Linear(width, width) + LayerNorm + GELU."""

    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            *(nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()) for _ in range(depth))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class ManyNodes(nn.Module):
    """Node-heavy: `blocks` blocks of one tiny Linear and nine elementwise ops (10 graph nodes each)."""

    def __init__(self, blocks: int, width: int) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(width, width) for _ in range(blocks))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins:
            y = torch.relu(lin(x))
            y = (y * 0.5 + 1.0).sigmoid()
            y = torch.clamp(torch.tanh(y) - x, -3.0, 3.0)
            x = (x + y) * 0.9
        return x


class BasicBlock(nn.Module):
    """The ResNet basic block: two 3x3 convolutions with batch norm and a (projected) shortcut."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet(nn.Module):
    """ResNet-18-style CNN: a 7x7 stem, four stages of basic blocks, global pooling, a classifier."""

    def __init__(self, widths: tuple[int, ...], depths: tuple[int, ...], classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(widths[0]),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        stages, cin = [], widths[0]
        for i, (width, depth) in enumerate(zip(widths, depths)):
            blocks = [BasicBlock(cin if j == 0 else width, width, 2 if i > 0 and j == 0 else 1) for j in range(depth)]
            stages.append(nn.Sequential(*blocks))
            cin = width
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.stages(self.stem(x))), 1))


class SelfAttention(nn.Module):
    """Multi-head self-attention written out: one qkv projection, softmax(q k^T / sqrt(d)) v, an output projection."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        qkv = self.qkv(x).reshape(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attention = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.proj((attention @ v).transpose(1, 2).reshape(b, t, d))


class EncoderBlock(nn.Module):
    """Pre-norm transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    """ViT-style encoder over token embeddings (batch, tokens, dim): a learned position embedding,
    `depth` blocks, a final norm, mean pooling and a classifier."""

    def __init__(self, dim: int, heads: int, hidden: int, depth: int, tokens: int, classes: int) -> None:
        super().__init__()
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(*(EncoderBlock(dim, heads, hidden) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.blocks(x + self.position)).mean(dim=1))
