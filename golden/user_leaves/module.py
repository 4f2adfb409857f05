"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 54; buffers: 2; 248 bytes of tensors in weights.safetensors.
Producer: tests.models.UserLeafTracer (a torch.fx.Tracer); torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from tests.models import Limiter

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 10
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Clamp(nn.Module):
    """Copied from tests.models.Clamp: its methods; the layers, tensors and settings of each instance are given to it, or set up, by the code that creates it."""

    def __init__(self, /, **members):
        nn.Module.__init__(self)
        for name, value in members.items():
            setattr(self, name, value)

    def forward(self, x):
        if x.abs().max() > self.limit:
            return x.clamp(-self.limit, self.limit)
        return x


class Gate(nn.Module):  # tests/models.py:384 Gate
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.unused = nn.Parameter(torch.empty(2))
        self.register_buffer("bias", torch.empty(4), persistent=False)

    def forward(self, x):
        out = self.proj(x)
        out = torch.sigmoid(out)
        out = out * x
        return out + self.bias


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.first = Gate()
            self.second = Gate()
            self.clamp = Clamp(limit=0.5)
            self.limiter = Limiter(limit=2.0)
            self.head = nn.Linear(4, 2)
        self.eval()
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
        x = self.first(x)
        x = self.second(x)
        x = self.clamp(x)
        x = self.limiter(x)
        return self.head(x)
