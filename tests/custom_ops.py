"""An operator defined with torch.library.custom_op, as transformers defines its MoE fallback: importing this
module defines torch.ops.fxexport_tests.scaled_twice."""

from __future__ import annotations

import torch
from torch import nn


@torch.library.custom_op("fxexport_tests::scaled_twice", mutates_args=())
def scaled_twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scaled_twice.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class CustomOpNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.ops.fxexport_tests.scaled_twice(self.lin(x)) + 1


# An operator namespace a torch.library.Library defines, as C++ extensions (torchvision's) do theirs: importing
# this module defines torch.ops.fxexport_tests_lib.tripled.
LIBRARY = torch.library.Library("fxexport_tests_lib", "DEF")
LIBRARY.define("tripled(Tensor x) -> Tensor")
LIBRARY.impl("tripled", lambda x: x * 3, "CompositeExplicitAutograd")
LIBRARY.define("halved(Tensor x) -> Tensor")
LIBRARY.impl("halved", lambda x: x / 2, "CompositeExplicitAutograd")


class LibraryOpNet(nn.Module):
    def forward(self, x):
        return torch.ops.fxexport_tests_lib.tripled(x) + 1
