"""What to measure: one Cell per (phase, model, tool), in stages: exports, loads, forward speed,
forward peak memory, whole processes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from models import MODELS
from processes import GROUP, PROCESSES
from tools import REFERENCE, TOOLS, tool

MEMORY = "forward-memory"  # `--only forward-memory`: the forward peak memory comparison alone
COMPARISONS = ("forward", "memory")  # phases that compare fxexport's exported module with the source GraphModule


@dataclass(frozen=True)
class Cell:
    """One measurement: a tool saving or loading a model, the forward speed or peak memory
    comparison of a model, or a whole process (phase and model "process", tool the process's name)."""

    phase: str  # "export", "load", "forward", "memory" or "process"
    model: str
    tool: str

    def needs(self) -> Cell | None:
        """The export whose artifact this cell reads."""
        if self.phase in ("export", "process"):
            return None
        return Cell("export", self.model, REFERENCE if self.phase in COMPARISONS else tool(self.tool).source or self.tool)

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


@dataclass(frozen=True)
class Selection:
    """What `--only` picks: model and tool names, whether to time the whole processes, and
    whether to run the forward peak memory comparison alone (with the exports it reads)."""

    models: list[str]
    tools: list[str]
    processes: bool
    memory_only: bool = False


def select(only: list[str]) -> Selection:
    """The selection for `--only` NAMEs (each a model, a tool, "process" or "forward-memory"). No
    NAME of a kind means all of it; "process" alone means only the whole processes;
    "forward-memory" means only the memory comparison, of the models named beside it or of every
    model that has one (and the whole processes too when "process" is named)."""
    model_names, tool_names = [m.name for m in MODELS], [t.name for t in TOOLS]
    unknown = [name for name in only if name not in [*model_names, *tool_names, GROUP, MEMORY]]
    if unknown:
        choices = ", ".join([*model_names, *tool_names, GROUP, MEMORY])
        raise ValueError(f"unknown --only {', '.join(unknown)}; choose from {choices}")
    if MEMORY in only:
        return _memory_selection(only, tool_names)
    if only and set(only) == {GROUP}:
        return Selection([], [], True)
    models = [m for m in model_names if m in only] or model_names
    tools = [t for t in tool_names if t in only] or tool_names
    return Selection(models, tools, not only or GROUP in only)


def _memory_selection(only: list[str], tool_names: list[str]) -> Selection:
    if tools := [name for name in only if name in tool_names]:
        raise ValueError(f"{MEMORY} compares {REFERENCE} with the source GraphModule: name models beside it, not {', '.join(tools)}")
    measured = [m.name for m in MODELS if m.memory_bench]
    if others := [name for name in only if name not in [*measured, GROUP, MEMORY]]:
        raise ValueError(f"{MEMORY} is measured on {', '.join(measured)}, not {', '.join(others)}")
    return Selection([m for m in measured if m in only] or measured, [REFERENCE], GROUP in only, memory_only=True)


def plan(only: list[str]) -> list[list[Cell]]:
    """Five stages of cells: every export needed, every load, the forward speed comparisons, the
    forward peak memory comparisons, the whole processes."""
    chosen = select(only)
    exporters = {tool(t).source or t for t in chosen.tools}
    compare = REFERENCE in chosen.tools
    forward = [
        Cell("forward", m.name, REFERENCE)
        for m in MODELS
        if m.name in chosen.models and m.forward_bench and compare and not chosen.memory_only
    ]
    memory = [Cell("memory", m.name, REFERENCE) for m in MODELS if m.name in chosen.models and m.memory_bench and compare]
    if chosen.memory_only:
        exporters = {REFERENCE}
        models = [cell.model for cell in memory]
    else:
        models = chosen.models
    exports = [Cell("export", m, t.name) for m in models for t in TOOLS if t.name in exporters and t.save]
    loads = [] if chosen.memory_only else [Cell("load", m, t) for m in models for t in chosen.tools if tool(t).load]
    whole = [Cell("process", GROUP, p.name) for p in PROCESSES] if chosen.processes else []
    return [exports, loads, forward, memory, whole]
