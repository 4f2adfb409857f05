"""fxexport.trace: symbolic_trace, each node recording the statement it ran in (capture.py)."""

from __future__ import annotations

import operator
import re
from pathlib import Path

import pytest
import torch
from torch import fx

import fxexport
from tests import models

MODELS = [models.HeadsStack, models.ScaledDropBlocks, models.TokenStages, models.ExpandingBlocks]
MODELS_FILE = Path(models.__file__).resolve()


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_the_graph_is_symbolic_traces(cls: type[torch.nn.Module]) -> None:
    model = cls().eval()
    traced, plain = fxexport.trace(model), fx.symbolic_trace(model)
    assert traced.code == plain.code
    assert type(traced).__name__ == type(plain).__name__ and traced.graph._tracer_cls is fx.Tracer  # the producer reads as symbolic_trace


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_each_call_records_the_models_statement_last(cls: type[torch.nn.Module]) -> None:
    gm = fxexport.trace(cls().eval())
    calls = [n for n in gm.graph.nodes if n.op.startswith("call_")]
    assert calls and all(n.stack_trace for n in calls)
    for node in calls:
        files = re.findall(r'File "([^"]+)", line \d+, in (\w+)', node.stack_trace)
        assert files[0][1] == "forward" and Path(files[-1][0]).resolve() == MODELS_FILE, node.stack_trace
        assert all(Path(file).resolve() == MODELS_FILE or name == "forward" for file, name in files), node.stack_trace
        assert "fxexport" not in node.stack_trace.replace(str(MODELS_FILE), "")  # no frame of fxexport's own


def test_concrete_args_and_a_function() -> None:
    def double(x, scale=2):
        return x * scale

    gm = fxexport.trace(double, concrete_args={"scale": 3})
    assert torch.equal(gm(torch.ones(2), 3), torch.full((2,), 3.0))
    multiply = next(n for n in gm.graph.nodes if n.op == "call_function" and n.target is operator.mul)
    assert "double" in multiply.stack_trace and "return x * scale" in multiply.stack_trace


class _Sizes(torch.nn.Module):
    def forward(self, x):
        B, N, C = x.shape
        a, b = x.shape[1], x.shape[0]  # one item of each of two values: no name from the unpacking
        return x.reshape(B * N, C) + a * b


def test_items_of_a_value_unpacked_whole_take_the_names_it_binds() -> None:
    _, sources = fxexport.generate(fxexport.trace(_Sizes()), package_name="sizes")
    code = sources["module.py"]
    assert "B, N, C = x.shape[:3]" in code
    assert "getitem = x.shape[1]" in code and "getitem_1 = x.shape[0]" in code


def _forward_elsewhere(self, x):
    return self.lin(x).relu()


class _Aliased(torch.nn.Module):
    """A forward bound under another name: no frame is called `forward`."""

    forward = _forward_elsewhere

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)


def forward(model: torch.nn.Module) -> fx.GraphModule:  # a caller named `forward`: no frame of the trace
    return fxexport.trace(model)


def test_the_stack_starts_where_the_trace_runs_the_model() -> None:
    """From a review: the stack is the frames below torch.fx's `Tracer.trace`, whatever they are called."""
    gm = forward(_Aliased())
    calls = [n for n in gm.graph.nodes if n.op.startswith("call_")]
    assert calls and all(n.stack_trace.startswith('File "') and "in _forward_elsewhere" in n.stack_trace for n in calls)
    assert all("in forward" not in n.stack_trace for n in calls)  # the caller's frame is none of them
    assert all(n.stack_trace is None for n in gm.graph.nodes if n.op in ("placeholder", "output"))
