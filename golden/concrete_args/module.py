"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 12; buffers: 0; 48 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.fx._symbolic_trace
from torch import nn

from .loader import load_tensors, skip_init

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
            self.lin = nn.Linear(3, 3)
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

    def forward(self, x, use_relu_1=True, bias_1=None):
        eq = use_relu_1 == False
        torch._assert(
            eq,
            "use_relu has been specialized to have value False but got another value",
        )
        torch.fx._symbolic_trace._assert_is_none(
            bias_1, "bias has been specialized to have value None but got another value"
        )
        return self.lin(x)
