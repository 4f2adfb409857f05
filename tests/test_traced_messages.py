"""Messages symbolic_trace formatted a traced size into, built from the size again (traced_messages.py):
where that is sure, and left as traced where it is not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch import fx, nn

from fxexport.traced_messages import formatted_messages
from tests import models


class ZeroPadded(nn.Module):
    def __init__(self, size: int = 8) -> None:
        super().__init__()
        self.size = size

    def forward(self, x):
        h = x.shape[2]
        torch._assert(h == self.size, f"height {h}, want {self.size}, at most 08")
        return x + 1


class ZeroPaddedPair(nn.Module):
    """Numbers of a message two instances check other sizes with are fields, but not where written otherwise (`08`)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = ZeroPadded(8)
        self.second = ZeroPadded(4)

    def forward(self, x):
        return self.second(self.first(x)[:, :, :4])


class TwoSizes(nn.Module):
    """A message of two values: a new trace would make them in another order than the export reads them."""

    def forward(self, x):
        torch._assert(x.shape[0] == 2, f"{x.ndim} {x.size(1)}")
        return x + 1


class TensorMessage(nn.Module):
    def forward(self, x):
        torch._assert(x.shape[0] == 2, f"sum {x.sum()}")
        return x + 1


class Retraced(nn.Module):
    """A GraphModule traced before, inside a model: its message names a node of that first trace."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = fx.symbolic_trace(ZeroPadded())

    def forward(self, x):
        n = x.shape[0]  # `getitem` in this trace; the inner message's `getitem` is its height
        return self.inner(x) * n


@dataclass(frozen=True)
class Message:
    name: str
    model: Callable[[], nn.Module]
    messages: tuple[str, ...]  # each checked message after the stage: a template and its values, or the traced text


CASES = [
    Message("size", lambda: models.CheckedPatches(8, 3), ("Input height ({}) doesn't match model (8). <- getitem_2",
                                                          "expected 4D input (got {}D input) {{}} <- getattr_3")),
    # the numbers of one message in instances of other sizes are fields too
    Message("sizes_of_instances", models.CheckedPyramid, ("Input height ({}) doesn't match model ({}). <- getitem_2, 8",
                                                          "expected 4D input (got {}D input) {{}} <- getattr_3",
                                                          "Input height ({}) doesn't match model ({}). <- getitem_7, 4",
                                                          "expected 4D input (got {}D input) {{}} <- getattr_6")),
    Message("zero_padded_number_is_text", ZeroPaddedPair, ("height {}, want {}, at most 08 <- getitem, 8", "height {}, want {}, at most 08 <- getitem_2, 4")),
    Message("two_values_left_as_traced", TwoSizes, ("Proxy(getattr_2) Proxy(size)",)),
    Message("tensor_left_as_traced", TensorMessage, ("sum Proxy(sum_1)",)),
    Message("name_of_another_trace_left_as_traced", Retraced, ("height Proxy(getitem), want 8, at most 08",)),
]  # fmt: skip


def _messages(gm: fx.GraphModule) -> tuple[str, ...]:
    out = []
    for node in gm.graph.find_nodes(op="call_function", target=torch._assert):
        message = node.args[1]
        if isinstance(message, fx.Node):
            template, *values = message.args
            message = f"{template} <- {', '.join(str(v) for v in values)}"
        out.append(str(message))
    return tuple(out)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_messages_are_built_from_sizes_where_sure(case: Message) -> None:
    gm = fx.symbolic_trace(case.model())
    assert _messages(formatted_messages(gm)) == case.messages


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_traced_graph_is_left_as_it_was(case: Message) -> None:
    gm = fx.symbolic_trace(case.model())
    before = gm.code
    formatted_messages(gm)
    assert gm.code == before
