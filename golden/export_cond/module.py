"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 40; buffers: 0; 160 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 4
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class TrueGraph0(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x, p_up_bias, p_up_weight, p_down_bias, p_down_weight):
        return (F.relu(F.linear(x, p_up_weight, p_up_bias)),)


class FalseGraph0(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x, p_up_bias, p_up_weight, p_down_bias, p_down_weight):
        return (F.linear(x, p_down_weight, p_down_bias) - 1,)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.up = nn.Module()
            self.up.weight = nn.Parameter(torch.empty(4, 4))
            self.up.bias = nn.Parameter(torch.empty(4))
            self.down = nn.Module()
            self.down.weight = nn.Parameter(torch.empty(4, 4))
            self.down.bias = nn.Parameter(torch.empty(4))
            self.true_graph_0 = TrueGraph0()
            self.false_graph_0 = FalseGraph0()
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
        check_input(x, "x", torch.float32, (3, 4))
        # tests/producers.py:38 in forward: return torch.cond(x.sum() > 0, lambda t: self.up(t).relu(), lambda t: self.down(t) - 1, (x,))
        gt = x.sum() > 0
        cond = torch.ops.higher_order.cond(
            gt,
            self.true_graph_0,
            self.false_graph_0,
            (x, self.up.bias, self.up.weight, self.down.bias, self.down.weight),
        )
        return cond[0]
