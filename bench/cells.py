"""What to measure: one Cell per (phase, model, tool), in stages: exports, loads, forward, whole processes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from models import MODELS
from processes import GROUP, PROCESSES
from tools import REFERENCE, TOOLS, tool


@dataclass(frozen=True)
class Cell:
    """One measurement: a tool saving or loading a model, the forward comparison of a model, or
    a whole process (phase and model "process", tool the process's name)."""

    phase: str  # "export", "load", "forward" or "process"
    model: str
    tool: str

    def needs(self) -> Cell | None:
        """The export whose artifact this cell reads."""
        if self.phase in ("export", "process"):
            return None
        return Cell("export", self.model, REFERENCE if self.phase == "forward" else tool(self.tool).source or self.tool)

    def blocked_by(self, outcomes: Iterable[Outcome]) -> bool:
        """True when the export this cell reads did not succeed."""
        needed = self.needs()
        return needed is not None and not any(o.cell == needed and o.error is None for o in outcomes)


@dataclass(frozen=True)
class Outcome:
    """What a cell's worker process reported."""

    cell: Cell
    result: dict[str, Any] | None  # the worker's measurements, None when it failed
    error: str | None
    wall_s: float  # the worker process's whole life, imports included
    stderr: str = ""


def select(only: list[str]) -> tuple[list[str], list[str], bool]:
    """Model and tool names for `--only` NAMEs (each a model, a tool or "process"), and whether to
    time the whole processes. No NAME of a kind means all of it; "process" alone means only those."""
    model_names, tool_names = [m.name for m in MODELS], [t.name for t in TOOLS]
    unknown = [name for name in only if name not in [*model_names, *tool_names, GROUP]]
    if unknown:
        choices = ", ".join([*model_names, *tool_names, GROUP])
        raise ValueError(f"unknown --only {', '.join(unknown)}; choose from {choices}")
    if only and set(only) == {GROUP}:
        return [], [], True
    models = [m for m in model_names if m in only] or model_names
    tools = [t for t in tool_names if t in only] or tool_names
    return models, tools, not only or GROUP in only


def plan(only: list[str]) -> list[list[Cell]]:
    """Four stages of cells: every export needed, every load, the forward comparisons, the processes."""
    models, tools, processes = select(only)
    exporters = {tool(t).source or t for t in tools}
    forward = [
        Cell("forward", m.name, REFERENCE)
        for m in MODELS
        if m.name in models and m.forward_bench and REFERENCE in tools
    ]
    if forward:
        exporters.add(REFERENCE)
    exports = [Cell("export", m, t.name) for m in models for t in TOOLS if t.name in exporters and t.save]
    loads = [Cell("load", m, t) for m in models for t in tools if tool(t).load]
    whole = [Cell("process", GROUP, p.name) for p in PROCESSES] if processes else []
    return [exports, loads, forward, whole]
