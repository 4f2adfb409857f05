"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 78; buffers: 0; 312 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 4
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class CheckedPatches(nn.Module):  # tests/models.py:2914 CheckedPatches
    def __init__(self, value) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, 3, 2, stride=2)
        self.value = value

    def forward(self, x):
        _, _, out, w = x.shape[:4]
        eq = out == self.value
        out = "Input height ({}) doesn't match model ({}).".format(out, self.value)
        torch._assert(eq, out)
        eq_1 = x.ndim == 4
        message = "expected 4D input (got {}D input) {{}}".format(x.ndim)
        torch._assert(eq_1, message)
        return self.proj(x).flatten(2).sum(-1) * w


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.first = CheckedPatches(8)
            self.second = CheckedPatches(4)
        self.eval()
        self.first.training = True
        self.second.training = True
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
        first = self.first(x)
        out = x[:, :, :4, :4]
        out = self.second(out)
        return out + first
