"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

import torch
import torch.fx
from torch import nn


def sum_1(x):
    return x * 2


torch.fx.wrap("sum_1")


class Sums(nn.Module):  # tests/shadowing.py:18 Sums
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        return x + x.sum() + x.sum() * x.sum()


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"):
            self.inner = Sums()
        self.eval()

    def forward(self, x):
        x = self.inner(x)
        sum_2 = sum_1(x)
        x = x + 1
        return (sum_2, sum_1(x))
