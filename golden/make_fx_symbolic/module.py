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
        sym_size_int = arg0_1.size(0)
        mul = arg0_1 * sym_size_int
        sym_size_int_1 = arg0_1.size(1)
        return mul.view(sym_size_int * sym_size_int_1, -1).sum(0) / sym_size_int_1
