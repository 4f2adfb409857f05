"""A user function named as a builtin and a tensor method (`sum`), wrapped for symbolic_trace: kept
apart from tests/models.py, whose own code calls the builtin. module.py renames it `sum_1`, and a
re-trace numbers its calls after that name among the `x.sum()` calls (`sum_4`)."""

from __future__ import annotations

import torch
from torch import fx, nn


def sum(x: torch.Tensor) -> torch.Tensor:  # the name is the point
    return x * 2


fx.wrap("sum")


class Sums(nn.Module):
    def forward(self, x):
        return x + x.sum() + x.sum() * x.sum()


class SumsOfSums(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Sums()

    def forward(self, x):
        x = self.inner(x)
        return sum(x), sum(x + 1)
