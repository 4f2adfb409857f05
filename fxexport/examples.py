"""Small example models, so a new user can run an export with nothing of their own.

    python -m fxexport export fxexport.examples:resnet -o my_resnet
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class _Block(nn.Module):
    def __init__(self, channels: int, stride: int = 1) -> None:
        super().__init__()
        out = channels * stride
        self.conv1 = nn.Conv2d(channels, out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class TinyResNet(nn.Module):
    """A ResNet-style CNN for 3x32x32 images."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(_Block(16), _Block(16, stride=2), _Block(32, stride=2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class logits for an image batch (N, 3, 32, 32)."""
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


class MLP(nn.Module):
    """Linear layers of the given sizes with GELU between them."""

    def __init__(self, sizes: tuple[int, ...] = (32, 64, 64, 10)) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs (N, sizes[-1]) for inputs (N, sizes[0])."""
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return self.layers[-1](x)


class TransformerBlock(nn.Module):
    """Pre-norm self-attention and MLP, batch first: (batch, tokens, dim)."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block applied to x (batch, tokens, dim)."""
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))



def resnet() -> nn.Module:
    """A small ResNet-style CNN (input: a (N, 3, 32, 32) image batch)."""
    torch.manual_seed(0)
    return TinyResNet().eval()


def mlp() -> nn.Module:
    """A 3-layer MLP (input: (N, 32))."""
    torch.manual_seed(0)
    return MLP().eval()


def transformer_block() -> nn.Module:
    """One transformer encoder block (input: (N, tokens, 32))."""
    torch.manual_seed(0)
    return TransformerBlock().eval()


def resnet_inputs() -> tuple[torch.Tensor]:
    """Example inputs for `resnet`: `--example-inputs fxexport.examples:resnet_inputs`."""
    return (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)


def mlp_inputs() -> tuple[torch.Tensor]:
    """Example inputs for `mlp`: `--example-inputs fxexport.examples:mlp_inputs`."""
    return (torch.randn(4, 32, generator=torch.Generator().manual_seed(0)),)


def transformer_block_inputs() -> tuple[torch.Tensor]:
    """Example inputs for `transformer_block`: `--example-inputs fxexport.examples:transformer_block_inputs`."""
    return (torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(0)),)
