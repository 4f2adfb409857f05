"""The fast formatting path (large graphs) writes exactly what black writes."""

from __future__ import annotations

import pytest
import torch
from torch import fx, nn

import fxexport
import fxexport.formatting as formatting
from tests.cases import CASES
from tests.producers import PRODUCERS
from tests.test_hostile_names import HOSTILE

ALL = [(c.name, c.build) for c in CASES] + [(p.name, p.build) for p in PRODUCERS if p.name not in {c.name for c in CASES}]


def _hostile_graph() -> fx.GraphModule:
    root = nn.Module()
    graph = fx.Graph()
    x = graph.placeholder("x")
    for index, name in enumerate(HOSTILE):
        if name.isidentifier() or '"' in name or "\\" in name or not name.isprintable():
            continue
        root.register_buffer(name, torch.full((3,), float(index)))
        x = graph.call_function(torch.add, (x, graph.get_attr(name)))
    graph.output(graph.call_method("sum", (x,), {"dim": -1, "keepdim": True}))
    return fx.GraphModule(root, graph)


def _wide_names() -> fx.GraphModule:
    """Names of double-width characters: a line of 84 characters is 88 columns wide for black."""
    graph = fx.Graph()
    graph.output(graph.placeholder("x"))
    gm = fx.GraphModule(nn.Module(), graph)
    gm.add_module("日本", nn.Module())
    gm.get_submodule("日本").register_parameter("日本", nn.Parameter(torch.arange(3.0)))
    return gm


OTHERS = [("hostile", _hostile_graph), ("wide_names", _wide_names)]


@pytest.mark.parametrize("name,build", ALL + OTHERS, ids=[n for n, _ in ALL + OTHERS])
def test_fast_path_equals_black(name: str, build, monkeypatch: pytest.MonkeyPatch) -> None:
    gm = build()
    _, expected = fxexport.generate(gm, package_name="pkg")
    monkeypatch.setattr(formatting, "FAST_PATH_LINES", 0)
    _, fast = fxexport.generate(gm, package_name="pkg")
    assert fast["module.py"] == expected["module.py"]
