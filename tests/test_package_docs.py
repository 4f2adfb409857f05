"""What an export tells its reader: the package README, the module docstring, and where the graph came from."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest
import torch
from torch import fx, nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp
from torch.fx.passes.shape_prop import ShapeProp

import fxexport
from fxexport.describe import example_call, producer
from fxexport.render import docstring_code
from tests import models
from tests.cases import CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_readme_says_how_to_use_the_export(case) -> None:
    source = case.build()
    package, sources = fxexport.generate(source, package_name=f"pkg_{case.name}", module_name=case.class_name)
    readme = sources["README.md"]
    params = next(c.forward_params for c in package.classes if c.is_root)
    parameters = list(source.parameters())  # each tied parameter once
    count, size = sum(p.numel() for p in parameters), sum(p.numel() * p.element_size() for p in parameters)
    expected = [
        f"from pkg_{case.name} import {case.class_name}\n",
        f"model = {case.class_name}()\n",
        f"`forward(self{''.join(', ' + p for p in params)})`",
        f"{count:,} parameters ({size:,} bytes), {len(list(source.buffers()))} buffers;",
        "- `module.py`: ",
        "- `fxexport.json`: ",
        *(f"- {warning}\n" for warning in package.warnings),
    ]
    assert [text for text in expected if text not in readme] == []
    assert ("None.\n" in readme) == (not package.warnings)
    assert ("Shapes and dtypes are not recorded" in readme) == (not package.signature.recorded)


def _shape_prop(gm: fx.GraphModule, *args: object) -> fx.GraphModule:
    ShapeProp(gm).propagate(*args)
    return gm


def _fake_prop(gm: fx.GraphModule, *args: object) -> fx.GraphModule:
    FakeTensorProp(gm, FakeTensorMode(allow_non_fake_inputs=True)).propagate(*args)
    return gm


RECORDED: list[tuple[str, Callable[[], fx.GraphModule], list[str]]] = [
    ("shape_prop", lambda: _shape_prop(fx.symbolic_trace(models.Kwargs()), torch.randn(2, 3), torch.ones(3), 0.5),
     ["| `x` | float32 tensor, shape (2, 3) |", "| `bias` | float32 tensor, shape (3,) |", "| `scale` | float |",
      "| `power` | int |", "| `output` | float32 tensor, shape (2, 3) |"]),
    ("fake_tensor_prop", lambda: _fake_prop(fx.symbolic_trace(models.Outputs()), torch.randn(2, 4)),
     ["| `x` | float32 tensor, shape (2, 4) |", "| `output['a']` | float32 tensor, shape (2, 3) |",
      "| `output['pair'][1][0]` | float32 tensor, shape (2, 2) |", "| `output['shape']` | int |"]),
    ("int_input", lambda: _shape_prop(fx.symbolic_trace(models.Tied()), torch.tensor([[1, 2]])),
     ["| `tokens` | int64 tensor, shape (1, 2) |", "| `output` | float32 tensor, shape (1, 2, 11) |"]),
]  # fmt: skip


@pytest.mark.parametrize("name,build,rows", RECORDED, ids=[r[0] for r in RECORDED])
def test_readme_lists_recorded_inputs_and_outputs(
    name: str, build: Callable[[], fx.GraphModule], rows: list[str]
) -> None:
    package, sources = fxexport.generate(build(), package_name=name)
    assert package.signature.recorded
    assert [row for row in rows if row not in sources["README.md"]] == []


class _CustomTracer(fx.Tracer):
    pass


def _export_graph() -> fx.GraphModule:
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    return torch.export.export(model, (torch.randn(2, 4),)).module()


def _hand_built() -> fx.GraphModule:
    graph = fx.Graph()
    graph.output(graph.call_function(torch.relu, (graph.placeholder("x"),)))
    return fx.GraphModule(nn.Module(), graph)


PRODUCERS: list[tuple[str, Callable[[], fx.GraphModule], str]] = [
    ("symbolic_trace", lambda: fx.symbolic_trace(nn.ReLU()), "torch.fx.symbolic_trace"),
    ("hand_built", _hand_built, "torch.fx GraphModule"),
    ("custom_tracer", lambda: fx.GraphModule(nn.ReLU(), _CustomTracer().trace(nn.ReLU())), f"{__name__}._CustomTracer (a torch.fx.Tracer)"),
    ("torch_export", _export_graph, "torch.export"),
]  # fmt: skip


@pytest.mark.parametrize("name,build,expected", PRODUCERS, ids=[p[0] for p in PRODUCERS])
def test_producer(name: str, build: Callable[[], fx.GraphModule], expected: str) -> None:
    assert producer(build()) == expected


CALLS = [
    (("x",), "model(x)"),
    (("x", "scale=2.0", "*args", "**kwargs"), "model(x)"),
    (("x", "*args", "shift"), "model(x, shift=shift)"),
    ((), "model()"),
]


@pytest.mark.parametrize("params,expected", CALLS)
def test_example_call(params: tuple[str, ...], expected: str) -> None:
    assert example_call(params) == expected


def test_module_docstring_says_what_was_exported() -> None:
    _, sources = fxexport.generate(fx.symbolic_trace(models.MLP()), package_name="mlp_pkg", module_name="Net")
    doc = ast.get_docstring(ast.parse(sources["module.py"]), clean=False)
    assert doc is not None and doc.startswith("Net: a torch.fx GraphModule exported by fxexport.\n")
    assert (
        "Parameters: 736;" in doc
        and f"Producer: torch.fx.symbolic_trace; torch {torch.__version__.split('+')[0]}." in doc
    )
    assert "    model = Net()\n    output = model(x)\n" in doc


DOCSTRINGS = ["plain text\n\n    indented", 'has """ quotes', "back\\slash", "tab\there", 'ends with "']


@pytest.mark.parametrize("text", DOCSTRINGS)
def test_docstring_code_is_always_the_same_string(text: str) -> None:
    code = docstring_code(text)
    assert ast.literal_eval(code).rstrip("\n") == text
