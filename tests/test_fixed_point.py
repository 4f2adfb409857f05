"""Edit round trip: export, import the class, re-trace it with symbolic_trace, export again: same module.py.

A person edits the generated module.py and exports the edited model again; this only works if an
unedited export comes back unchanged. The docstring's `Producer:` line names what made the graph
(a hand-built graph becomes a symbolic_trace graph the second time), so that one line is compared
separately.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from pathlib import Path

import pytest
import torch
from torch import fx

import fxexport
from tests.cases import CASES, Case

RETRACED = f"Producer: torch.fx.symbolic_trace; torch {torch.__version__.split('+')[0]}.\n"

# Cases that are not a fixed point, and why (each is expected to fail; strict, so a fix shows up).
NOT_FIXED_POINTS = {
    "imported_function": "module.py imports the torch.fx.wrap'd function by name (it reads a user object, so it "
    "cannot be copied), but the wrap registration belongs to the module that called torch.fx.wrap (tests.models), "
    "so re-tracing the export traces through it",
    "adversarial_names": "modules and buffers the graph never uses (added with add_submodule after tracing) are "
    "exported, but symbolic_trace builds a GraphModule that copies only what its graph references",
    "nested_graph_module": "the nested GraphModule becomes a plain nn.Module class (Inner), which symbolic_trace "
    "traces through instead of calling as a leaf, so the second export inlines it",
    "user_leaves": "Clamp (copied) and Limiter (imported) have a data-dependent branch: the source needed a "
    "custom tracer that kept it a leaf, and plain symbolic_trace of the export cannot trace through it",
}
# Graphs from torch.export, make_fx, dynamo and unflatten hold aten ops and a pytree calling convention:
# their round trip goes through their own producer, not through symbolic_trace.
OTHER_PRODUCERS = ("export_", "make_fx_", "dynamo_", "unflatten_")
RETRACEABLE = [case for case in CASES if not case.name.startswith(OTHER_PRODUCERS)]


def _cases() -> list[object]:
    marks = {name: pytest.mark.xfail(strict=True, reason=reason) for name, reason in NOT_FIXED_POINTS.items()}
    return [pytest.param(case, id=case.name, marks=marks.get(case.name, ())) for case in RETRACEABLE]


def _export_and_import(gm: fx.GraphModule, folder: Path, class_name: str) -> type:
    fxexport.export(gm, folder, module_name=class_name)
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
    assert set(NOT_FIXED_POINTS) <= {case.name for case in CASES}


@pytest.mark.parametrize("case", _cases())
def test_reexport_is_a_fixed_point(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    # Re-tracing a graph that calls torch.fx._symbolic_trace._assert_is_none registers it under its dotted
    # name in torch.fx's global wrap table, which breaks every later symbolic_trace: keep that table local.
    monkeypatch.setattr(torch.fx._symbolic_trace, "_wrapped_fns_to_patch", dict(torch.fx._symbolic_trace._wrapped_fns_to_patch))
    first, second = tmp_path / f"fixed_point_{case.name}_a", tmp_path / f"fixed_point_{case.name}_b"
    cls = _export_and_import(case.build(), first, case.class_name)
    fxexport.export(fx.symbolic_trace(cls()), second, module_name=case.class_name)
    code_a, producer_a = _split_producer((first / "module.py").read_text())
    code_b, producer_b = _split_producer((second / "module.py").read_text())
    assert code_b == code_a, "".join(difflib.unified_diff(code_a, code_b, "first/module.py", "second/module.py"))
    assert len(producer_a) == 1 and producer_b == [RETRACED]
