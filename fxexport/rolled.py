"""Code repeated once per child of a container, written as the loop it was.

A model that loops over a ModuleList with code around each call,

    for lin in self.lins:
        y = torch.relu(lin(x))
        x = (x + y) * 0.9

is traced into the same statements once per child. Where a forward holds such a run (periods of the
same nodes, each calling the next child of one container, reading only its own values, the one value
the period before it left, and values made before the run), the run is one node of a reduced graph,
and its first period the body of a loop over the container. The loop runs the very calls the run
did, in the same order, on the same values: only names and lifetimes change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import fx

from .loops import _children

MIN_PERIODS = 3  # two periods read as well unrolled
MIN_LENGTH = 2  # one call a period is a chain (loops.py)
MAX_LENGTH = 400  # nodes in a period searched for
MAX_ROTATIONS = 8  # starts of the period tried per run
_PLAIN = (int, float, bool, str, complex, type(None))  # compared by value (their repr: -0.0 is not 0.0)
_EXACT = frozenset({int, bool, str, type(None)})  # equal values, equal reprs


def loop_of(*values: Any) -> Any:
    """The target of a rolled run's node in a reduced graph: never called, never imported."""
    raise AssertionError("a rolled run is written as a loop, not called")


@dataclass(frozen=True)
class Roll:
    """A run written as a loop: its body (a graph whose placeholders are the carried value, then the
    values made before the run it reads), the container iterated, the call of its child in the body,
    and a name for the loop variable."""

    body: fx.Graph
    children: str
    call: str
    variable: str


@dataclass(frozen=True)
class Rolled:
    """A forward's graph with each rolled run one node (target `loop_of`, args: the carried value's
    start, then the values the body reads), and the rolls by node."""

    graph: fx.Graph
    rolls: dict[fx.Node, Roll]


@dataclass(frozen=True)
class _Run:
    periods: tuple[tuple[fx.Node, ...], ...]
    start: fx.Node
    invariants: tuple[fx.Node, ...]
    call: int
    children: str


def rolled(gm: fx.GraphModule, graph: fx.Graph | None = None) -> Rolled:
    """`gm`'s forward graph (or `graph`) with its runs rolled; the graph itself where there are none."""
    graph = gm.graph if graph is None else graph
    runs = _runs(gm, graph)
    return _reduced(graph, runs) if runs else Rolled(graph, {})


def _runs(gm: fx.GraphModule, graph: fx.Graph) -> list[_Run]:
    """The runs in `graph`, in order, none overlapping another."""
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    index = {n: i for i, n in enumerate(nodes)}
    found: list[_Run] = []
    i = 0
    while i < len(nodes):
        run = _run_at(gm, nodes, index, i, found[-1].periods[-1][-1] if found else None)
        found += [run] if run else []
        i = index[run.periods[-1][-1]] + 1 if run else i + 1
    return found


def _run_at(gm: fx.GraphModule, nodes: list[fx.Node], index: dict[fx.Node, int], at: int, previous: fx.Node | None) -> _Run | None:
    """The run whose first module call is `nodes[at]`, if there is one."""
    first = nodes[at]
    if first.op != "call_module":
        return None
    parent, _, name = str(first.target).rpartition(".")
    holder = gm.get_submodule(parent) if parent else gm
    keys = list(holder._modules)
    if not parent or not keys or keys[0] != name or len(keys) < MIN_PERIODS:
        return None
    second = f"{parent}.{keys[1]}"
    length = next((k for k in range(1, MAX_LENGTH + 1) if at + k < len(nodes) and _targets(nodes[at + k], second)), None)
    if length is None or length < MIN_LENGTH or at + length * (len(keys) - 1) >= len(nodes):
        return None
    if not all(_targets(nodes[at + j * length], f"{parent}.{key}") for j, key in enumerate(keys)):
        return None
    children = _children(gm, [f"{parent}.{key}" for key in keys])
    if children is None or children.endswith(".children()"):
        return None
    floor = index[previous] + 1 if previous is not None else 0
    for rotation in _rotations(nodes, at, length, floor):
        run = _checked(nodes, index, at - rotation, length, len(keys), at)
        if run is not None:
            return _Run(run[0], run[1], run[2], rotation, children)
    return None


def _targets(node: fx.Node, target: str) -> bool:
    return node.op == "call_module" and str(node.target) == target


def _rotations(nodes: list[fx.Node], at: int, length: int, floor: int) -> list[int]:
    """How many nodes before the first call its period may start, by the nodes' shapes alone."""
    low = max(floor, at - length + 1)
    same = [_shape(nodes[s]) == _shape(nodes[s + length]) if s + length < len(nodes) else False for s in range(low, at + length)]
    valid = [r for r in range(at - low + 1) if all(same[at - r - low : at - r - low + length])]
    return valid[:MAX_ROTATIONS]


def _shape(node: fx.Node) -> tuple[Any, ...]:
    """What a node runs, on how many values: equal for a node and its twin one period later."""
    target = "module" if node.op == "call_module" else node.target
    return node.op, target, len(node.args), tuple(node.kwargs)


def _checked(
    nodes: list[fx.Node], index: dict[fx.Node, int], start: int, length: int, count: int, first_call: int
) -> tuple[tuple[tuple[fx.Node, ...], ...], fx.Node, tuple[fx.Node, ...]] | None:
    """The periods, the carried value's start and the invariants of the run from `start`, if it is one."""
    if start < 0 or start + length * count > len(nodes):
        return None
    periods = [tuple(nodes[start + j * length : start + (j + 1) * length]) for j in range(count)]
    if any(n.op not in ("call_function", "call_method", "call_module") for n in periods[0]):
        return None
    call = first_call - start
    signature = _Signature(index, start, length, call)
    head = [signature.of(n, 0) for n in periods[0]]
    second = [signature.of(n, 1) for n in periods[1]]
    starts: list[fx.Node] = []
    if not _matches(head, second, starts) or not starts or len(set(starts)) != 1:
        return None
    same = _Twins(index, start, length, call)
    if not all(same.code(n, twin) for j in range(2, count) for n, twin in zip(periods[j], periods[j - 1])):
        return None
    if not _users_stay(periods, index, start + length * count):
        return None
    invariants = [v for n in periods[1] for v in n.all_input_nodes if index.get(v, -1) < start]
    return tuple(periods), starts[0], tuple(dict.fromkeys(invariants))


def _matches(head: Any, second: Any, starts: list[fx.Node]) -> bool:
    """The first period's signature is the second's, where the second reads the value the period before
    left and the first reads one value made before the run (collected in `starts`)."""
    if isinstance(second, tuple) and second[:1] == ("prev",):
        if isinstance(head, tuple) and head[:1] == ("out",):
            starts.append(head[1])
            return True
        return False
    if isinstance(second, (tuple, list)) and isinstance(head, (tuple, list)) and type(head) is type(second):
        return len(head) == len(second) and all(_matches(a, b, starts) for a, b in zip(head, second))
    return type(head) is type(second) and head == second


@dataclass(frozen=True)
class _Signature:
    """A node's code with the values it reads told apart by where they are made: in its own period at
    an offset, as the last value of the period before (the carried one), or before the run."""

    index: dict[fx.Node, int]
    start: int
    length: int
    call: int

    def of(self, node: fx.Node, period: int) -> tuple[Any, ...] | None:
        base = self.start + period * self.length
        offset = self.index[node] - base
        target = "child" if offset == self.call else str(node.target) if node.op == "call_module" else node.target
        carried = base - 1 if period else None
        return node.op, target, self._value(node.args, base, carried), self._value(node.kwargs, base, carried)

    def _value(self, value: Any, base: int, carried: int | None) -> Any:
        if isinstance(value, fx.Node):
            at = self.index.get(value, -1)
            if base <= at < base + self.length:
                return ("in", at - base)
            if carried is not None and at == carried:
                return ("prev",)
            if at >= self.start:
                return ("late", value)  # made in the run but not in reach: no match
            return ("out", value)
        if isinstance(value, (tuple, list)):
            return (type(value), tuple(self._value(v, base, carried) for v in value))
        if isinstance(value, dict):
            return (dict, tuple((k, self._value(v, base, carried)) for k, v in value.items()))
        if isinstance(value, slice):
            return (slice, self._value((value.start, value.stop, value.step), base, carried))
        if type(value) in _PLAIN:
            return (type(value), repr(value))
        return ("object", id(value))


@dataclass(frozen=True)
class _Twins:
    """A node and its twin one period earlier run the same code: what `_Signature` compares, node by node
    (the values each reads one period apart inside the run, the same value before it)."""

    index: dict[fx.Node, int]
    start: int
    length: int
    call: int

    def code(self, node: fx.Node, twin: fx.Node) -> bool:
        child = (self.index[node] - self.start) % self.length == self.call  # its target is checked already
        if node.op != twin.op or (node.target != twin.target and not child):
            return False
        return self._same(node.args, twin.args) and self._same(node.kwargs, twin.kwargs)

    def _same(self, value: Any, twin: Any) -> bool:
        kind = type(value)
        if kind is not type(twin):
            return False
        if kind is fx.Node:
            at, twin_at = self.index.get(value, -1), self.index.get(twin, -1)
            return at - twin_at == self.length and twin_at >= self.start if at >= self.start else value is twin
        if kind in _EXACT:
            return bool(value == twin)
        if kind in (float, complex):
            return repr(value) == repr(twin)  # -0.0 is not 0.0
        if isinstance(value, (tuple, list)):
            return len(value) == len(twin) and all(self._same(a, b) for a, b in zip(value, twin))
        if isinstance(value, dict):
            return value.keys() == twin.keys() and all(self._same(value[k], twin[k]) for k in value)
        if kind is slice:
            return self._same((value.start, value.stop, value.step), (twin.start, twin.stop, twin.step))
        return value is twin


def _users_stay(periods: list[tuple[fx.Node, ...]], index: dict[fx.Node, int], end: int) -> bool:
    """Each period's values are read in it only, but its last, read by the next period alone (the
    last period's, after the run too, where something must read it)."""
    for j, period in enumerate(periods):
        low, high = index[period[0]], index[period[-1]]
        for node in period[:-1]:
            if any(not low <= index.get(u, end) <= high for u in node.users):
                return False
        nxt = periods[j + 1] if j + 1 < len(periods) else None
        users = [index.get(u, end) for u in period[-1].users]
        if nxt is not None and any(not (low <= at <= high or index[nxt[0]] <= at <= index[nxt[-1]]) for at in users):
            return False
        if nxt is None and not any(at >= end for at in users):
            return False
    return True


def _reduced(graph: fx.Graph, runs: list[_Run]) -> Rolled:
    """A copy of `graph` with each run one node."""
    new = fx.Graph()
    new.set_codegen(graph._codegen)
    env: dict[fx.Node, fx.Node] = {}
    firsts = {run.periods[0][0]: run for run in runs}
    skipped = {n for run in runs for period in run.periods for n in period}
    rolls: dict[fx.Node, Roll] = {}
    for node in graph.nodes:
        run = firsts.get(node)
        if run is not None:
            args = (env[run.start], *(env[v] for v in run.invariants))
            loop = new.create_node("call_function", loop_of, args, {}, name="out")
            rolls[loop] = _roll(run)
            env[run.periods[-1][-1]] = loop
        elif node not in skipped:
            env[node] = new.node_copy(node, env.__getitem__)
    return Rolled(new, rolls)


def _roll(run: _Run) -> Roll:
    """The loop: its body is the second period (which reads the value the first left, where the first
    may read the same value made before the run both as that and as itself)."""
    body = fx.Graph()
    env: dict[fx.Node, fx.Node] = {run.periods[0][-1]: body.placeholder("carried")}
    for i, value in enumerate(run.invariants):
        env[value] = body.placeholder(f"invariant_{i}")
    for offset, node in enumerate(run.periods[1]):
        if offset == run.call:  # named for what it is in the loop, not after the child it called once
            env[node] = body.create_node(node.op, node.target, *fx.map_arg((node.args, node.kwargs), env.__getitem__), name="out")
            env[node].meta = dict(node.meta)
        else:
            env[node] = body.node_copy(node, env.__getitem__)
    body.output(env[run.periods[1][-1]])
    call = str(run.periods[1][run.call].target)
    container = call.rpartition(".")[0].rpartition(".")[2]
    return Roll(body, run.children, call, _variable(container))


def _variable(container: str) -> str:
    """The loop variable: a container's name in the singular (`lins` -> `lin`), else `layer`."""
    if container.endswith("s") and len(container) > 2 and container[:-1].isidentifier():
        return container[:-1]
    return "layer"
