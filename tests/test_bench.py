"""The benchmark: its forward peak memory measurement (bench/worker.py), its `--only forward-memory` plan, and the order cells run in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from cells import Cell, plan
from worker import forward_peak


class Chained(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.exp().sin().cos()  # each temporary is freed as soon as the next op has used it


class KeepsLocals(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.exp()
        b = a.sin()
        return b.cos()  # a and b stay alive until the call returns


def test_forward_peak_counts_the_bytes_alive_at_once_above_what_existed_before() -> None:
    x = torch.ones(1000)  # 4,000 bytes, allocated before: not counted
    assert forward_peak(Chained(), (x,)) == (8000, 4000)  # two temporaries at once; the output stays
    assert forward_peak(KeepsLocals(), (x,)) == (12000, 4000)


def test_only_forward_memory_runs_the_memory_comparison_and_the_exports_it_reads() -> None:
    exports, loads, forward, memory, whole = plan(["forward-memory"])
    assert exports == [Cell("export", "cnn", "fxexport"), Cell("export", "transformer", "fxexport")]
    assert memory == [Cell("memory", "cnn", "fxexport"), Cell("memory", "transformer", "fxexport")]
    assert loads == forward == whole == []
    assert [c.model for c in plan(["forward-memory", "cnn"])[3]] == ["cnn"]
    assert plan(["forward-memory", "process"])[4]


def test_a_full_run_of_a_model_includes_its_memory_comparison() -> None:
    assert plan(["cnn"])[3] == [Cell("memory", "cnn", "fxexport")]
    assert plan(["node_heavy"])[3] == []


@pytest.mark.parametrize(("only", "message"), [(["forward-memory", "to_folder"], "not to_folder"),
                                               (["forward-memory", "node_heavy"], "not node_heavy")])  # fmt: skip
def test_forward_memory_refuses_what_it_does_not_measure(only: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan(only)


def test_one_models_cells_are_timed_in_rounds_each_tool_once_a_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools a ratio compares run in alternation (order reversed every other round), not each tool's
    processes one after another: load from other work that comes and goes falls on each alike."""
    import run
    from cells import Outcome

    order: list[tuple[str, str, str]] = []

    def fake_run(cell: Cell, config: object) -> Outcome:
        order.append((cell.phase, cell.model, cell.tool))
        return Outcome(cell, {"time_s": float(len(order))}, None, 0.0)

    monkeypatch.setattr(run, "run_cell", fake_run)
    monkeypatch.setattr(run, "_progress", lambda outcome, done, total: None)
    exports = [Cell("export", m, t) for m in ("cnn", "transformer") for t in ("fxexport", "to_folder")]
    config = run.Config(quick=False, timeout=1, jobs=1, cache="warm", workdir=Path("."), profile=None, repeat=3)
    outcomes = run.run_stages([exports], config)
    assert order == [
        *[("export", "cnn", t) for t in ("fxexport", "to_folder", "to_folder", "fxexport", "fxexport", "to_folder")],
        *[("export", "transformer", t) for t in ("fxexport", "to_folder", "to_folder", "fxexport", "fxexport", "to_folder")],
    ]
    assert [o.cell for o in outcomes] == exports
    assert [o.result["samples"] for o in outcomes][:2] == [[1.0, 4.0, 5.0], [2.0, 3.0, 6.0]]
