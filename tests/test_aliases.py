"""aliases.py: a `to` that returns its input itself (by the recorded values, no copy asked) is known as
such, in ATen's spelling and in raise_aten.py's, as is a dropout that does not train (a layer in eval
mode, a function or ATen op told so); any conversion, copy, memory format or training dropout is not."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import fx, nn

from fxexport.aliases import identity_source, reads_outside

FLOAT = torch.empty(2, 3)
CASES = [  # (name, op, target, args after the input, kwargs, the result's recorded value, returns the input)
    ("aten, same dtype", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {}, FLOAT, True),
    ("aten, another dtype", "call_function", torch.ops.aten.to.dtype, (torch.float64,), {}, FLOAT.double(), False),
    ("aten, a copy", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {"copy": True}, FLOAT, False),
    ("aten, a memory format", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {"memory_format": torch.channels_last}, FLOAT, False),
    ("aten, same device", "call_function", torch.ops.aten.to.device, (torch.device("cpu"), torch.float32), {}, FLOAT, True),
    ("aten, the dtype and layout", "call_function", torch.ops.aten.to.dtype_layout, (), {"dtype": torch.float32, "layout": torch.strided}, FLOAT, True),
    ("aten, another tensor's dtype", "call_function", torch.ops.aten.to.other, (FLOAT,), {}, FLOAT, True),
    ("aten, another tensor's, copied", "call_function", torch.ops.aten.to.other, (FLOAT, False, True), {}, FLOAT, False),
    ("method, same dtype", "call_method", "to", (torch.float32,), {}, FLOAT, True),
    ("method, same device", "call_method", "to", ("cpu",), {"non_blocking": True}, FLOAT, True),
    ("method, another dtype", "call_method", "to", (torch.float16,), {}, FLOAT.half(), False),
    ("method, a copy", "call_method", "to", (torch.float32,), {"copy": True}, FLOAT, False),
    ("method, a positional copy", "call_method", "to", (torch.float32, False, True), {}, FLOAT, False),
    ("method, nothing recorded", "call_method", "to", (torch.float32,), {}, None, False),
    ("another method", "call_method", "contiguous", (), {}, FLOAT, False),
    ("F.dropout, not training", "call_function", F.dropout, (0.1,), {"training": False}, FLOAT, True),
    ("F.dropout, training", "call_function", F.dropout, (0.1, True), {}, FLOAT, False),
    ("F.dropout, training by default", "call_function", F.dropout, (0.1,), {}, FLOAT, False),
    ("F.alpha_dropout, not training by default", "call_function", F.alpha_dropout, (0.1,), {}, FLOAT, True),
    ("aten dropout, not training", "call_function", torch.ops.aten.dropout.default, (0.1, False), {}, FLOAT, True),
    ("aten dropout, training", "call_function", torch.ops.aten.dropout.default, (0.1, True), {}, FLOAT, False),
    ("a dropout layer in eval mode", "call_module", "eval_drop", (), {}, None, True),
    ("a dropout layer training", "call_module", "train_drop", (), {}, None, False),
    ("another layer in eval mode", "call_module", "eval_relu", (), {}, None, False),
]


def _root() -> nn.Module:
    root = nn.Module()
    root.eval_drop, root.train_drop, root.eval_relu = nn.Dropout(0.1).eval(), nn.Dropout(0.1).train(), nn.ReLU().eval()
    return root


@pytest.mark.parametrize("name,op,target,args,kwargs,value,returns_input", CASES, ids=[c[0] for c in CASES])
def test_only_a_to_that_changes_nothing_returns_its_input(
    name: str, op: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], value: torch.Tensor | None, returns_input: bool
) -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = FLOAT
    node = graph.create_node(op, target, (x, *args), kwargs)
    if value is not None:
        node.meta["val"] = value
    assert (identity_source(node, fx.GraphModule(_root(), graph)) is x) == returns_input



def _call(frames_of: dict[str, str]) -> tuple[dict[str, fx.Node], dict[fx.Node, tuple[str, ...]]]:
    """x -> to -> (inside, outside) with each node's innermost call from `frames_of` (absent: the root)."""
    graph = fx.Graph()
    nodes = {"x": graph.placeholder("x")}
    nodes["to"] = graph.call_method("to", (nodes["x"], torch.float32))
    nodes["inside"] = graph.call_method("relu", (nodes["to"],))
    nodes["outside"] = graph.call_method("sigmoid", (nodes["to"],))
    return nodes, {node: (frames_of[name],) for name, node in nodes.items() if name in frames_of}


READERS = [  # (name, each node's call, the users read as the input)
    ("the call's input, read after it", {"to": "norm", "inside": "norm"}, ["outside"]),
    ("a value the call made", {"x": "norm", "to": "norm", "inside": "norm"}, []),
    ("the call's result (nothing in it reads the `to`)", {"to": "norm"}, []),
    ("all in one call", {"to": "norm", "inside": "norm", "outside": "norm"}, []),
]


@pytest.mark.parametrize("name,frames_of,expected", READERS, ids=[c[0] for c in READERS])
def test_only_an_input_the_call_reads_is_read_again_outside_it(name: str, frames_of: dict[str, str], expected: list[str]) -> None:
    nodes, frames = _call(frames_of)
    assert reads_outside(nodes["to"], nodes["x"], frames) == [nodes[n] for n in expected]
