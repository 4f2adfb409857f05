"""Tensor constants torch.export lifted, numbered within their module (lifted_names.py): only those a
forward made, never an attribute of the source that has such a name."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import torch
from torch import nn

import fxexport


class Scaled(nn.Module):
    """An attribute of its own named like a lifted constant, beside a tensor its forward makes."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lifted_tensor_0 = torch.full((4,), 7.0)

    def forward(self, x):
        offset = torch.tensor([1.0, 2.0, 3.0, 4.0])
        return self.lin(x + offset) * self.lifted_tensor_0


class ScaledBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Scaled(), Scaled()])

    def forward(self, x):
        x = x * torch.tensor([2.0, 2.0, 2.0, 2.0])  # torch.export unlifts the blocks' attributes only beside one of the root's
        for block in self.blocks:
            x = block(x)
        return x


def test_an_attribute_named_like_a_lifted_constant_keeps_its_name(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    gm = torch.export.export(ScaledBlocks().eval(), (x,)).module()
    fxexport.export(gm, tmp_path / "scaled_blocks")
    sys.path.insert(0, str(tmp_path))
    try:
        model = importlib.import_module("scaled_blocks").FxModule()
    finally:
        sys.path.remove(str(tmp_path))
    assert torch.equal(model(x), gm(x))
    for block in model.blocks:
        assert torch.equal(block.lifted_tensor_0, torch.full((4,), 7.0))  # the source's attribute, not the made offset
    text = (tmp_path / "scaled_blocks" / "module.py").read_text()
    assert len(re.findall(r"^class Scaled\w*\(", text, re.MULTILINE)) == 1
