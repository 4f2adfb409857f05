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
        getattr_1 = x.shape
        getitem = getattr_1[0]
        size = x.size(1)
        x = x.view(getitem, size, -1)
        x = x.permute(0, 2, 1)
        contiguous = x.contiguous()
        del x
        out = contiguous[:, 1:, ...]
        out = out * 2
        out = out + 1
        getitem_2 = contiguous[:, :-1]
        del contiguous
        getitem_2 = getitem_2 / 3
        out = out - getitem_2
        del getitem_2
        out = out**2
        out = -out
        out = out // 1
        out = out % 5
        out = out.transpose(1, 2)
        out_1 = out > 0
        lt = out < 3
        out_1 = out_1 & lt
        del lt
        eq = out == 1
        eq = ~eq
        out_1 = out_1 | eq
        out = out.masked_fill(out_1, -math.inf)
        out = out.nan_to_num(neginf=-1.0)
        out = out.sum(dim=(1, 2), keepdim=True)
        getitem = getitem * size
        return (out, getitem)
