"""Edit round trip: export, import the class, capture it again, export again: the same module.py.

A person edits the generated module.py and exports the edited model again; this only works if an
unedited export comes back unchanged. Traced and hand-built graphs are captured again with
`torch.fx.symbolic_trace`; graphs from torch.export, make_fx, dynamo and unflatten (ATen ops, a
pytree calling convention) with their own producer. The docstring's `Producer:` line names what
made the graph (a hand-built graph becomes a symbolic_trace graph the second time), so that one
line is compared separately.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import fx, nn
from torch.fx.experimental.proxy_tensor import make_fx

import fxexport
from tests import models
from tests.cases import CASES, OPTIONAL_CASES, Case
from tests.producers import DYNAMIC_SHAPES

RETRACED = f"Producer: torch.fx.symbolic_trace; torch {torch.__version__.split('+')[0]}.\n"

# Cases that are not a fixed point: the exception the round trip ends in, and why (strict, so a fix shows up).
NOT_FIXED_POINTS: dict[str, tuple[type[BaseException], str]] = {
    "imported_function": (AssertionError, "module.py imports the torch.fx.wrap'd function by name (it reads a user "
                          "object, so it cannot be copied), but the wrap registration belongs to the module that called "
                          "torch.fx.wrap (tests.models), so re-tracing the export traces through it"),
    "adversarial_names": (AssertionError, "modules and buffers the graph never uses (added with add_submodule after "
                          "tracing) are exported, but symbolic_trace builds a GraphModule that copies only what its "
                          "graph references"),
    "user_leaves": (fx.proxy.TraceError, "Clamp (copied) and Limiter (imported) have a data-dependent branch: the "
                    "source needed a custom tracer that kept it a leaf, and plain symbolic_trace of the export cannot "
                    "trace through it"),
    "folded_constants": (AssertionError, "its blocks read scale and bias symbolic_trace folded into the root, which "
                         "their caller passes them, so the export calls the Sequentials' children rather than "
                         "themselves, and a re-trace, which records no call of them, holds ModuleLists"),
    "leaves_in_sequential": (AssertionError, "its blocks were leaves of a tracer of its own, kept in eval mode with "
                             "their holders inside them; symbolic_trace of the export traces through them and makes "
                             "those holders anew, in training mode"),
    "twins_like_blocks": (AssertionError, "its attentions that take the size tuple whole were leaves of a tracer of its "
                          "own; symbolic_trace of the export traces through them, so no call passes the tuple whole to "
                          "a leaf and the blocks take its items apart"),
    "dynamo_mixed": (AssertionError, "dynamo names each graph input after the local it came from with an `L_` prefix, "
                     "so the forward parameters (already L_x_, ...) become L_L_x_, ... on every capture"),
    "dynamo_dynamic": (AssertionError, "dynamo names each graph input after the local it came from with an `L_` "
                       "prefix, so the forward parameters (already L_x_, ...) become L_L_x_, ... on every capture"),
    "dynamo_resnet": (AssertionError, "the export's blocks take their tensors as inputs (conv1_weight, ...), which a "
                      "second capture passes on as plain inputs, named after the root's (L_L_self_..._) rather than a "
                      "module's tensors"),
    "unflatten_mixed": (AssertionError, "unflatten names a submodule's inputs after its caller's arguments, and the "
                        "root's inputs of an unflattened module are arg0, arg1, ...: the inner Linear's `x` becomes `arg0`"),
}  # fmt: skip


def _dynamo(model: nn.Module, case: Case) -> fx.GraphModule:
    import torch._dynamo

    captured: list[fx.GraphModule] = []

    def backend(gm: fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        captured.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(model, backend=backend, dynamic=False)(*case.args(), **case.kwargs())
    return captured[0]


def _export(dynamic_shapes: Any = None) -> Callable[[nn.Module, Case], Any]:
    return lambda model, case: torch.export.export(model, case.args(), case.kwargs(), dynamic_shapes=dynamic_shapes).module()


def _make_fx(mode: str) -> Callable[[nn.Module, Case], Any]:
    return lambda model, case: make_fx(lambda *a: model(*a), tracing_mode=mode)(*case.args())


# How each case's graph is captured again. Annotations are left out of these exports: the second
# capture's stack traces point into the first export's module.py, which is what they should say.
OWN_PRODUCERS: dict[str, Callable[[nn.Module, Case], Any]] = {
    "export_mixed": _export(),
    "export_resnet": _export(),
    "export_feature_extractor": _export(),
    "export_cond": _export(),
    "export_scoped_regions": _export(),
    "export_dynamic": _export(DYNAMIC_SHAPES),
    "decomposed_resnet": lambda model, case: torch.export.export(model, case.args()).run_decompositions().module(),
    "make_fx_mlp": _make_fx("real"),
    "make_fx_symbolic": _make_fx("symbolic"),
    "dynamo_mixed": _dynamo,
    "dynamo_dynamic": _dynamo,
    "dynamo_resnet": _dynamo,
    "unflatten_mixed": lambda model, case: torch.export.unflatten(torch.export.export(model, case.args(), case.kwargs())),
    "pt2e_quantized_mlp": _export(),
}
# Graphs captured again with symbolic_trace, both exports without annotations: prepare_fx records
# stack traces, which a plain symbolic_trace of the export does not.
UNANNOTATED = {"fx_quantized_mlp"}


def _retrace(model: nn.Module, case: Case) -> Any:
    return fx.symbolic_trace(model)


def _cases() -> list[object]:
    marks = {name: pytest.mark.xfail(strict=True, raises=error, reason=why) for name, (error, why) in NOT_FIXED_POINTS.items()}
    return [pytest.param(case, id=case.name, marks=marks.get(case.name, ())) for case in CASES]


def _export_and_import(gm: fx.GraphModule, folder: Path, class_name: str, annotate: bool) -> type:
    fxexport.export(gm, folder, module_name=class_name, annotate=annotate)
    try:
        return getattr(importlib.import_module(folder.name), class_name)
    finally:
        for name in [m for m in sys.modules if m == folder.name or m.startswith(f"{folder.name}.")]:
            del sys.modules[name]


def _split_producer(source: str) -> tuple[list[str], list[str]]:
    """module.py's lines without the docstring's `Producer:` line, and that line."""
    lines = source.splitlines(keepends=True)
    producer = [line for line in lines if line.startswith("Producer: ")]
    return [line for line in lines if line not in producer], producer


def test_every_listed_case_exists() -> None:
    names = {case.name for case in CASES + OPTIONAL_CASES}
    assert set(NOT_FIXED_POINTS) <= names and set(OWN_PRODUCERS) <= names and UNANNOTATED <= names
    # every graph that symbolic_trace cannot capture again (or not with its annotations) has its own producer listed
    prefixes = ("export_", "decomposed_", "make_fx_", "dynamo_", "unflatten_", "pt2e_")
    assert {n for n in names if n.startswith(prefixes)} == set(OWN_PRODUCERS)


@pytest.mark.parametrize("case", _cases())
def test_reexport_is_a_fixed_point(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    # Re-tracing a graph that calls torch.fx._symbolic_trace._assert_is_none registers it under its dotted
    # name in torch.fx's global wrap table, which breaks every later symbolic_trace: keep that table local.
    monkeypatch.setattr(torch.fx._symbolic_trace, "_wrapped_fns_to_patch", dict(torch.fx._symbolic_trace._wrapped_fns_to_patch))
    first, second = tmp_path / f"fixed_point_{case.name}_a", tmp_path / f"fixed_point_{case.name}_b"
    capture, annotate = (OWN_PRODUCERS[case.name], False) if case.name in OWN_PRODUCERS else (_retrace, case.name not in UNANNOTATED)
    cls = _export_and_import(case.build(), first, case.class_name, annotate)
    fxexport.export(capture(cls(), case), second, module_name=case.class_name, annotate=annotate)
    code_a, producer_a = _split_producer((first / "module.py").read_text())
    code_b, producer_b = _split_producer((second / "module.py").read_text())
    assert code_b == code_a, "".join(difflib.unified_diff(code_a, code_b, "first/module.py", "second/module.py"))
    assert len(producer_a) == 1 and producer_b == (producer_a if case.name in OWN_PRODUCERS else [RETRACED])


class Wide(nn.Module):
    """Two long codes by `odd`, and widths that differ: the variant's instances are one class with a parameter."""

    def __init__(self, odd: bool, width: int) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, width), nn.Linear(width, 4)
        self.odd = odd

    def forward(self, x):
        for _ in range(5):
            x = self.b(torch.tanh(self.a(x)) if self.odd else torch.sin(self.a(x)))
        return x


class Wides(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Wide(False, 4), Wide(True, 6), Wide(True, 8))

    def forward(self, x):
        return self.blocks(x)


@pytest.mark.parametrize("model", [models.Modes, models.Chains, Wides], ids=["three_codes", "two_long_codes", "variant_of_two_widths"])
def test_variant_classes_keep_their_names_when_exported_again(model: type[nn.Module], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch.export of an export without annotations records the variants' own classes (`Mode_1`), with
    no comment naming their source class: they keep those names (not `Mode1`), and the export is a fixed point."""
    monkeypatch.syspath_prepend(str(tmp_path))
    args = (torch.randn(2, 4),)
    first, second = tmp_path / f"variants_{model.__name__}_a", tmp_path / f"variants_{model.__name__}_b"
    cls = _export_and_import(torch.export.export(model().eval(), args).module(), first, "FxModule", annotate=False)
    fxexport.export(torch.export.export(cls(), args).module(), second, annotate=False)
    code_a, _ = _split_producer((first / "module.py").read_text())
    code_b, _ = _split_producer((second / "module.py").read_text())
    assert any(line.startswith(f"class {model.__name__.removesuffix('s')}_1(") for line in code_a), "".join(code_a)
    assert code_b == code_a, "".join(difflib.unified_diff(code_a, code_b, "first/module.py", "second/module.py"))
