"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

import math
import operator

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
        del getattr_1
        size = x.size(1)
        view = x.view(getitem, size, -1)
        del x
        permute = view.permute(0, 2, 1)
        del view
        contiguous = permute.contiguous()
        del permute
        getitem_1 = contiguous[:, 1:, ...]
        mul = getitem_1 * 2
        del getitem_1
        add = mul + 1
        del mul
        getitem_2 = contiguous[:, :-1]
        del contiguous
        truediv = getitem_2 / 3
        del getitem_2
        sub = add - truediv
        del add, truediv
        pow_1 = sub**2
        del sub
        neg = -pow_1
        del pow_1
        floordiv = neg // 1
        del neg
        mod = floordiv % 5
        del floordiv
        transpose = mod.transpose(1, 2)
        del mod
        gt = transpose > 0
        lt = transpose < 3
        and_ = gt & lt
        del gt, lt
        eq = transpose == 1
        invert = ~eq
        del eq
        or_ = and_ | invert
        del and_, invert
        masked_fill = transpose.masked_fill(or_, -math.inf)
        del transpose, or_
        nan_to_num = masked_fill.nan_to_num(neginf=-1.0)
        del masked_fill
        sum_1 = nan_to_num.sum(dim=(1, 2), keepdim=True)
        del nan_to_num
        mul_1 = getitem * size
        del getitem, size
        return (sum_1, mul_1)
