"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

import math

import torch
from torch import nn


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.eval()

    def forward(self, x):
        getitem = x.shape[0]
        size = x.size(1)
        x = x.view(getitem, size, -1).permute(0, 2, 1)
        contiguous = x.contiguous()
        out = contiguous[:, 1:, ...] * 2 + 1
        out_1 = contiguous[:, :-1]
        del contiguous
        out_1 = out_1 / 3
        out = out - out_1
        del out_1
        out = out**2
        out = -out
        out = out // 1
        out = (out % 5).transpose(1, 2)
        or_ = (out > 0) & (out < 3) | ~(out == 1)
        out = out.masked_fill(or_, -math.inf)
        out = out.nan_to_num(neginf=-1.0)
        return (out.sum(dim=(1, 2), keepdim=True), getitem * size)
