"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = FxModule()
    output = model(L_self_modules_lin_parameters_weight_, L_self_modules_lin_parameters_bias_, L_x_, L_self_buffers_offset_, L_extra_a_, L_self_buffers_running_)

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
        L_self_modules_lin_parameters_weight_,
        L_self_modules_lin_parameters_bias_,
        L_x_,
        L_self_buffers_offset_,
        L_extra_a_,
        L_self_buffers_running_,
    ):
        # tests/producers.py:27 in forward: y = self.lin(x) * scale + self.offset + torch.tensor([1.0, 2.0, 3.0, 4.0])
        y = F.linear(
            L_x_,
            L_self_modules_lin_parameters_weight_,
            L_self_modules_lin_parameters_bias_,
        )
        y = y * 2.0
        y = y + L_self_buffers_offset_
        y = y + torch.tensor([1.0, 2.0, 3.0, 4.0])
        # tests/producers.py:28 in forward: return {"y": y, "rest": (extra["a"].sum(), [x.relu(), self.running + 1])}
        sum_1 = L_extra_a_.sum()
        return (y, sum_1, L_x_.relu(), L_self_buffers_running_ + 1)
