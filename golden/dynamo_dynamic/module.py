"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = FxModule()
    output = model(L_x_, L_self_modules_proj_parameters_weight_, L_self_modules_proj_parameters_bias_)

Inputs, outputs and files: see README.md.
"""

import torch
import torch.nn.functional as F
from torch import nn


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()

    def forward(
        self,
        L_x_,
        L_self_modules_proj_parameters_weight_,
        L_self_modules_proj_parameters_bias_,
    ):
        # tests/producers.py:108 in forward: return self.proj(x).reshape(batch * tokens, 6).softmax(-1).view(batch, tokens * 6)
        out = F.linear(
            L_x_,
            L_self_modules_proj_parameters_weight_,
            L_self_modules_proj_parameters_bias_,
        )
        out = out.reshape(6, 6)
        return (out.softmax(-1).view(2, 18),)
