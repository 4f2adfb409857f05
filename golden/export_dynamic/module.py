"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 42; buffers: 0; 168 bytes of tensors in weights.safetensors.
Producer: torch.export; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .loader import check_input, load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 2
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.proj = nn.Linear(6, 6)
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
        check_input(x, "x", torch.float32, ((None, 16), (None, 32), 6))
        sym_size_int_2 = x.size(0)
        sym_size_int_3 = x.size(1)
        # tests/producers.py:108 in forward: return self.proj(x).reshape(batch * tokens, 6).softmax(-1).view(batch, tokens * 6)
        x = F.softmax(self.proj(x).reshape(sym_size_int_2 * sym_size_int_3, 6), dim=-1)
        return x.view(sym_size_int_2, sym_size_int_3 * 6)
