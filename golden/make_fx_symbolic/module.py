"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx.experimental.proxy_tensor.PythonKeyTracer (a torch.fx.Tracer); torch 2.13.0.

    model = FxModule()
    output = model(arg0_1)

Inputs, outputs and files: see README.md.
"""

import torch
from torch import nn


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()

    def forward(self, arg0_1):
        sym_size_int = torch.ops.aten.sym_size.int(arg0_1, 0)
        mul = torch.ops.aten.mul.Tensor(arg0_1, sym_size_int)
        sym_size_int_1 = torch.ops.aten.sym_size.int(arg0_1, 1)
        del arg0_1
        mul_1 = sym_size_int * sym_size_int_1
        del sym_size_int
        view = torch.ops.aten.view.default(mul, [mul_1, -1])
        del mul, mul_1
        sum_1 = torch.ops.aten.sum.dim_IntList(view, [0])
        del view
        div = torch.ops.aten.div.Tensor(sum_1, sym_size_int_1)
        del sym_size_int_1, sum_1
        return div
