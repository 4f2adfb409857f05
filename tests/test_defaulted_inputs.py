"""defaulted_inputs.py: a last forward input some callers leave out defaults to the input it stands for,
only where the longer forward computes exactly what the shorter one does."""

from __future__ import annotations

import pytest

from fxexport.defaulted_inputs import defaulted_inputs
from fxexport.ir import ClassIR

INIT = ("self.conv = nn.Conv2d(4, 4, 1)",)
LONGER = (("x", "x_1"), ("x = self.conv(x)", "x = x + x_1", "return torch.relu(x)"))
CASES = [  # (name, shorter forward (params, lines), the merged forward's first lines or None: kept apart)
    ("residual", (("x",), ("out = self.conv(x)", "out = out + x", "return torch.relu(out)")), ("if x_1 is None:", "    x_1 = x")),
    ("comments aside", (("y",), ("# source line", "out = self.conv(y)", "out = out + y", "return torch.relu(out)")), ("if x_1 is None:", "    x_1 = x")),
    ("the local, not the input", (("x",), ("out = self.conv(x)", "out = out + out", "return torch.relu(out)")), None),
    ("another call", (("x",), ("out = self.conv(x)", "out = out + x", "return torch.sigmoid(out)")), None),
    ("a statement more", (("x",), ("out = self.conv(x)", "out = out + x", "out = out * 2", "return torch.relu(out)")), None),
    ("a block", (("x",), ("out = self.conv(x)", "if out is None:", "    out = x", "return torch.relu(out)")), None),
]


def _class(name: str, params: tuple[str, ...], lines: tuple[str, ...]) -> ClassIR:
    return ClassIR(name, False, INIT, (), params, lines, "# m.py:1 Block")


@pytest.mark.parametrize("name,shorter,prologue", CASES, ids=[c[0] for c in CASES])
def test_a_left_out_input_defaults_only_where_the_code_agrees(name: str, shorter: tuple, prologue: tuple[str, ...] | None) -> None:
    level = [_class("Block", *LONGER), _class("Block_1", *shorter)]
    longer, short = defaulted_inputs(level, {})
    if prologue is None:
        assert (longer, short) == tuple(level)
        return
    assert longer.forward_params == short.forward_params == ("x", "x_1=None")
    assert longer.forward_lines[:2] == short.forward_lines[:2] == prologue
    assert short.forward_lines[2:] == LONGER[1]


def test_the_shorter_forward_keeps_its_numbers() -> None:
    longer = _class("Block", ("x", "x_1"), ("x = self.conv(x)", "x = x + x_1 * 0.5", "return x[:, :2]"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x)", "out = out + x * 0.25", "return out[:, :3]"))
    _, short = defaulted_inputs([longer, shorter], {})
    assert short.forward_lines == ("if x_1 is None:", "    x_1 = x", "x = self.conv(x)", "x = x + x_1 * 0.25", "return x[:, :3]")


def test_imaginary_literals_must_be_equal() -> None:
    longer = _class("Block", ("x", "x_1"), ("x = self.conv(x) * 1j", "return x + x_1"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x) * 2j", "return out + x"))
    assert defaulted_inputs([longer, shorter], {}) == [longer, shorter]  # 2j is no parameter generalize.py makes


def test_each_longer_class_defaults_to_its_own_input() -> None:
    first = _class("Block", ("x", "x_1"), LONGER[1])
    other = _class("Block_2", ("inp", "x"), ("inp = self.conv(inp)", "inp = inp + x", "return torch.relu(inp)"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x)", "out = out + x", "return torch.relu(out)"))
    _, merged_other, _ = defaulted_inputs([first, other, shorter], {})
    assert merged_other.forward_lines[:2] == ("if x is None:", "    x = inp")
