"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 20; buffers: 2; 128 bytes of tensors in weights.safetensors.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = FxModule()
    output = model(arg0, arg1)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 5
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class Lin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(4, 4))
        self.bias = nn.Parameter(torch.empty(4))

    def forward(self, x):
        weight = self.weight
        bias = self.bias
        # tests/producers.py:26 in forward: y = self.lin(x) * scale + self.offset + torch.tensor([1.0, 2.0, 3.0, 4.0])
        linear = torch.ops.aten.linear.default(x, weight, bias)
        del x, weight, bias
        return linear


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.lin = Lin()
            self.register_buffer("offset", torch.empty(4), persistent=False)
            self.register_buffer("running", torch.empty(4))
            self.lifted_tensor_0 = torch.empty(4)
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

    def forward(self, arg0, arg1, scale=2.0):
        extra_a = arg1["a"]
        lifted_tensor_0 = self.lifted_tensor_0
        running = self.running
        offset = self.offset
        lin = self.lin(arg0)
        # tests/producers.py:26 in forward: y = self.lin(x) * scale + self.offset + torch.tensor([1.0, 2.0, 3.0, 4.0])
        mul = torch.ops.aten.mul.Tensor(lin, 2.0)
        del lin
        add = torch.ops.aten.add.Tensor(mul, offset)
        del mul, offset
        lift_fresh_copy = torch.ops.aten.lift_fresh_copy.default(lifted_tensor_0)
        del lifted_tensor_0
        detach_ = torch.ops.aten.detach_.default(lift_fresh_copy)
        del lift_fresh_copy
        add_1 = torch.ops.aten.add.Tensor(add, detach_)
        del add, detach_
        # tests/producers.py:27 in forward: return {"y": y, "rest": (extra["a"].sum(), [x.relu(), self.running + 1])}
        sum_1 = torch.ops.aten.sum.default(extra_a)
        del extra_a
        relu = torch.ops.aten.relu.default(arg0)
        del arg0
        add_2 = torch.ops.aten.add.Tensor(running, 1)
        del running
        return {"y": add_1, "rest": (sum_1, [relu, add_2])}
