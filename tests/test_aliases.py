"""aliases.py: a `to` that returns its input itself (by the recorded values, no copy asked) is known as
such, in ATen's spelling and in raise_aten.py's; any conversion, copy or memory format is not."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import fx

from fxexport.aliases import identity_source

FLOAT = torch.empty(2, 3)
CASES = [  # (name, op, target, args after the input, kwargs, the result's recorded value, returns the input)
    ("aten, same dtype", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {}, FLOAT, True),
    ("aten, another dtype", "call_function", torch.ops.aten.to.dtype, (torch.float64,), {}, FLOAT.double(), False),
    ("aten, a copy", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {"copy": True}, FLOAT, False),
    ("aten, a memory format", "call_function", torch.ops.aten.to.dtype, (torch.float32,), {"memory_format": torch.channels_last}, FLOAT, False),
    ("method, same dtype", "call_method", "to", (torch.float32,), {}, FLOAT, True),
    ("method, same device", "call_method", "to", ("cpu",), {"non_blocking": True}, FLOAT, True),
    ("method, another dtype", "call_method", "to", (torch.float16,), {}, FLOAT.half(), False),
    ("method, a copy", "call_method", "to", (torch.float32,), {"copy": True}, FLOAT, False),
    ("method, a positional copy", "call_method", "to", (torch.float32, False, True), {}, FLOAT, False),
    ("method, nothing recorded", "call_method", "to", (torch.float32,), {}, None, False),
    ("another method", "call_method", "contiguous", (), {}, FLOAT, False),
]


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
    assert (identity_source(node) is x) == returns_input
