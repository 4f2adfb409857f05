"""Statements of the functions a forward calls, where the graph recorded the forwards' alone.

torch.export's default (non-strict) records each node's stack trace through the module forwards only:
a value made inside transformers' `apply_rotary_pos_emb` has the forward's `query_states, key_states =
apply_rotary_pos_emb(query_states, key_states, cos, sin)` for its statement, and took no name (`out`,
`out_1`). Where a statement's value is a call of a module-level Python function with plain arguments
(names, attributes, numbers), the nodes that ran in it are matched, in order, with that function's
statements as recovered_statements.py matches a forward's (and a function it calls with that one's,
alike), and each matched node gets the function's frame below the forward's: its names then come from
the function's statements (source_names.py), as for a graph dynamo recorded (`cos = cos.unsqueeze(1)`,
`q_embed = query_states * cos`). Sizes are numbers in such a graph, so what a statement computes of
them is no part of what it does. The pass runs after raise_aten (the nodes spell their operators as the
source does), on a copy of the graph; a graph none of whose statements calls such a function is returned
as it is.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from torch import fx, nn

from .annotations import frame_matches, in_torch, passes_on
from .calls import stack_frames
from .recovered_statements import Key, Matcher, Unit, frame, function_units, node_key
from .source_names import statement_syntax
from .subgraphs import copy_graph, with_graph

_CALLS = ("call_function", "call_method")


def called_frames(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` whose nodes made inside the functions its forwards call carry those functions' frames."""
    traces: dict[fx.Node, str] = {}
    modules: dict[str, ModuleType] = {}
    for nodes in _statement_runs(gm.graph):
        found = _call_site(nodes[0], modules)
        if found is not None:
            _Called(found[0], frozenset({found[0]})).frame_all(nodes, found[1], traces)
    if not traces:
        return gm
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    for node, trace in traces.items():
        copies[node].meta["stack_trace"] = trace  # the copy's meta is its own dict
    return with_graph(gm, graph, None)


def _statement_runs(graph: fx.Graph) -> Iterator[list[fx.Node]]:
    """The nodes of each run of one statement of one module call, in order (one trace and module path);
    the nodes of a module called inside it (a longer trace) neither end it nor join it."""
    run: list[fx.Node] = []
    key: tuple[str, object] | None = None
    for node in graph.nodes:
        if node.op not in _CALLS or not node.stack_trace:
            continue
        stack = stack_frames(node)
        here = (node.stack_trace, stack[-1].path if stack else None)
        if key is not None and here != key and node.stack_trace.startswith(key[0] + "\n"):
            continue
        if here != key and run:
            yield run
            run = []
        key = here
        run.append(node)
    if run:
        yield run


def _call_site(node: fx.Node, modules: dict[str, ModuleType]) -> tuple[Callable[..., Any], str] | None:
    """The module-level function that the value of the statement `node` ran in calls with plain arguments,
    and the node's stack trace down to that statement (a wrapper's frame below it that passes its arguments
    on, `return func(*args, **kwargs)`, left out: transformers 5 calls `apply_rotary_pos_emb` through a
    module so that a kernel may replace it)."""
    frames = list(frame_matches(node))
    while frames and passes_on(frames[-1]["code"]):
        frames.pop()
    statement = _syntax(frames[-1]) if frames else None
    value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)) else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    if not all(_plain(a) for a in value.args) or not all(k.arg is not None and _plain(k.value) for k in value.keywords):
        return None
    module = _module_of(frames[-1]["file"], modules)
    function = _function(vars(module).get(value.func.id), value.func.id) if module is not None else None
    return None if function is None else (function, str(node.stack_trace)[: frames[-1].end()])


def _syntax(frame: re.Match[str]) -> ast.stmt | None:
    """The statement a frame ran, where its first line may call a function by name (most do not: not parsed)."""
    if not _NAME_CALL.match(frame["code"]) or in_torch(frame["file"]):
        return None
    return statement_syntax(frame["file"], int(frame["line"]), frame["code"].strip())


# `name(` first on the line, after `return` or an assignment's targets (`a, b = f(`, `x: T = f(`)
_NAME_CALL = re.compile(r"\s*(?:return\s+|[\w\s,.\[\]():]*?(?<![=!<>])=(?!=)\s*)?[A-Za-z_]\w*\s*\(")


def _plain(node: ast.expr) -> bool:
    """A name, an attribute of one, or a constant: passing it computes nothing the graph records."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _function(found: object, name: str) -> Callable[..., Any] | None:
    """The plain Python function of the model's code (not torch's) `found` is or wraps: transformers 5 holds
    `apply_rotary_pos_emb` as a module whose forward calls it (so a kernel may replace it)."""
    if isinstance(found, nn.Module):
        cells = getattr(type(found).forward, "__closure__", None) or ()
        found = next((c.cell_contents for c in cells if inspect.isfunction(c.cell_contents) and c.cell_contents.__name__ == name), None)
    found = inspect.unwrap(found) if inspect.isfunction(found) else None
    if not inspect.isfunction(found) or str(found.__module__).split(".")[0] == "torch":
        return None
    return found


def _module_of(file: str, modules: dict[str, ModuleType]) -> ModuleType | None:
    """The imported module whose source is `file` (found once per file and export: a process imports thousands)."""
    if file not in modules:
        wanted, name = os.path.realpath(file), os.path.basename(file)
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and path.endswith(name) and os.path.realpath(path) == wanted:
                modules[file] = module
                break
    return modules.get(file)


@dataclass
class _Called:
    """One call of a function: its units matched with the nodes it made, in order. `active`: the functions
    whose calls this one is inside (a function calling one that calls it is not matched again)."""

    function: Callable[..., Any]
    active: frozenset[Callable[..., Any]]
    inner: dict[tuple[int, int], _Called | None] = field(default_factory=dict)  # (unit, key place) -> the call made there
    started: bool = False  # some node matched

    def __post_init__(self) -> None:
        found = function_units(self.function)
        self.file = found.file if found is not None else ""
        self.matcher = Matcher(found.units) if found is not None else None

    def frame_all(self, nodes: list[fx.Node], trace: str, traces: dict[fx.Node, str]) -> None:
        for node in nodes:
            key = node_key(node)
            frames = self.frames(key) if key is not None else None
            if frames:
                traces[node] = "\n".join((trace, *frames))

    def frames(self, key: Key) -> list[str] | None:
        """The frames of the statement (and those of the functions it calls) the next node, doing `key`, ran
        in, None where it matches none: a call the current statement makes next takes it first, until it
        takes no more (then the next call, `f(q) * f(k)`). A statement under an `if` or in a loop gives no
        frame, though matched (which arm ran, which iteration, is not known)."""
        if self.matcher is None:
            return None
        pending = self._pending()
        while pending is not None:
            unit, place, call = pending
            found = call.frames(key)
            if found is not None:
                self.started = True
                return self._frames(unit, found)
            if not call.started:
                break
            self.matcher.read[self.matcher.position] = place + 1  # that call is done
            pending = self._pending()
        matched = self.matcher.match(key)
        if matched is None:
            return None
        self.started = True
        return self._frames(matched, [])

    def _pending(self) -> tuple[Unit, int, _Called] | None:
        """The call of a function of the model's the current statement makes next, where there is one."""
        assert self.matcher is not None
        position = self.matcher.position
        unit = self.matcher.units[position] if self.matcher.units else None
        place = self.matcher.read[position] if unit is not None else 0
        if unit is None or place >= len(unit.keys) or unit.keys[place][0][0] != "call":
            return None
        if (position, place) not in self.inner:
            name = unit.keys[place][0][1]
            found = _function(getattr(self.function, "__globals__", {}).get(name), name)
            self.inner[position, place] = _Called(found, self.active | {found}) if found is not None and found not in self.active else None
        call = self.inner[position, place]
        return None if call is None else (unit, place, call)

    def _frames(self, unit: Unit, inner: list[str]) -> list[str]:
        """`unit`'s frame and those below it, none for a statement under an `if` or in a loop."""
        return [] if unit.conditional or unit.loop is not None else [frame(self.file, unit, self.function.__name__), *inner]
