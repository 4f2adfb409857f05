"""Statements of the functions a forward calls, for graphs that recorded the forwards' alone (called_functions.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from torch import fx, nn

import fxexport
from tests import models


def _export(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return torch.export.export(model, args).module()  # non-strict: frames of module forwards alone


@dataclass(frozen=True)
class Case:
    name: str
    model: Callable[[], nn.Module]
    args: Callable[[], tuple[Any, ...]]
    present: tuple[str, ...]  # lines (or their starts) module.py has
    absent: tuple[str, ...]  # text module.py must not have


def _rotary() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(*shape, generator=generator) for shape in ((2, 3, 8), (2, 3, 4), (2, 3, 4)))


CASES = [
    # transformers' apply_rotary_pos_emb and the rotate_half it calls, from a statement unpacking its result
    Case("rotary", models.RotaryStack, _rotary,
         ("cos = cos.unsqueeze(1)", "sin = sin.unsqueeze(1)", "q_embed = query_states * cos", "k_embed = key_states * cos", "x1 = query_states["),
         ("unsqueeze =", "getitem")),
    # a plain argument: the function's `t = a * 2` names its value; `x * 3` computed in the forward's statement
    # keeps the second call from being matched (its nodes would be taken for the function's); torch's own
    # `normalize` is not read
    Case("plain_arguments_only", models.CalledFunctionsStack, lambda: (torch.randn(2, 4),),
         ("t = x * 2",), ("t_1", "denom")),
    # from a review: functions calling each other (a RecursionError ended the export), an `if` arm that did not
    # run (`skipped` took the value `ran` is), two calls in one statement, a module called inside a function
    Case("edges", models.CalledFunctionEdgesStack, lambda: (torch.randn(2, 3, 4),),
         ("m = x.sin().cos()", "before = b * 2"), ("skipped",)),
]  # fmt: skip


@pytest.fixture(scope="module")
def generated() -> dict[str, tuple[fx.GraphModule, str, str]]:
    """Each case's GraphModule, its stack traces before the export, and its module.py."""
    out = {}
    for case in CASES:
        torch.manual_seed(0)
        gm = _export(case.model().eval(), case.args())
        before = "\n".join(str(n.stack_trace) for n in gm.graph.nodes)
        out[case.name] = (gm, before, fxexport.generate(gm, package_name="p")[1]["module.py"])
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_values_made_in_called_functions_take_their_names(case: Case, generated: dict[str, tuple[fx.GraphModule, str, str]]) -> None:
    text = generated[case.name][2]
    lines = [line.strip() for line in text.splitlines()]
    assert [p for p in case.present if not any(line.startswith(p) for line in lines)] == []
    assert [a for a in case.absent if a in text] == []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_source_graphs_stack_traces_are_left_as_they_were(case: Case, generated: dict[str, tuple[fx.GraphModule, str, str]]) -> None:
    gm, before, _ = generated[case.name]
    assert "\n".join(str(n.stack_trace) for n in gm.graph.nodes) == before
