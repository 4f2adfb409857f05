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

from dataclasses import dataclass, field
from typing import Any

from torch import fx

from .loops import _children
from .scopes import SCOPES, scopes_of

MIN_PERIODS = 3  # two periods read as well unrolled
MIN_LENGTH = 2  # one call a period is a chain (loops.py)
MAX_LENGTH = 400  # nodes in a period searched for
MAX_ROTATIONS = 8  # starts of the period tried per run
_EXACT = frozenset({int, bool, str, type(None)})  # literals compared by value: equal values, equal reprs


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
    call_offset: int
    children: str


def rolled(gm: fx.GraphModule) -> Rolled:
    """`gm`'s forward graph with its runs rolled; the graph itself where there are none."""
    runs = _runs(gm, gm.graph)
    return _reduced(gm.graph, runs) if runs else Rolled(gm.graph, {})


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
    if not parent:
        return None
    held = gm.get_submodule(parent)._modules
    if next(iter(held), None) != name or len(held) < MIN_PERIODS:
        return None  # asked of every call: no list of a container's children unless this is its first
    keys = list(held)
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
    if len({scopes_of(n) for period in periods for n in period}) != 1:
        return None  # part of the run in a `with` block: the loop is all inside one or none
    same = _Twins(index, start, length, first_call - start)
    if not all(same.code(n, twin) for j in range(1, count) for n, twin in zip(periods[j], periods[j - 1])):
        return None
    if len(same.starts) != 1 or not _users_stay(periods, index, start + length * count):
        return None
    invariants = [v for n in periods[1] for v in n.all_input_nodes if index.get(v, -1) < start]
    return tuple(periods), same.starts[0], tuple(dict.fromkeys(invariants))


@dataclass(frozen=True)
class _Twins:
    """A node and its twin one period earlier run the same code: the same op and target (the child
    call's aside), equal literals (by type and repr: -0.0 is not 0.0), and values read one period
    apart inside the run or the same value made before it; where the second period reads the value
    the first left, the first reads one value made before the run, its start (`starts`)."""

    index: dict[fx.Node, int]
    start: int
    length: int
    call: int  # the child call's offset in a period
    starts: list[fx.Node] = field(default_factory=list)

    def code(self, node: fx.Node, twin: fx.Node) -> bool:
        args, twin_args = node.args, twin.args
        if node.op != twin.op or len(args) != len(twin_args):
            return False
        if node.target != twin.target and (self.index[node] - self.start) % self.length != self.call:
            return False  # the child call's target is checked already
        for value, other in zip(args, twin_args):  # most arguments are values and numbers: no recursion
            if not (self._same_value(value, other) if type(value) is fx.Node is type(other) else self._same(value, other)):
                return False
        kwargs, twin_kwargs = node.kwargs, twin.kwargs
        return (not kwargs and not twin_kwargs) or self._same(kwargs, twin_kwargs)

    def _same(self, value: Any, twin: Any) -> bool:
        kind = type(value)
        if kind is not type(twin):
            return False
        if kind is fx.Node:
            return self._same_value(value, twin)
        if kind in _EXACT:
            return bool(value == twin)
        if kind in (float, complex):
            return repr(value) == repr(twin)
        if isinstance(value, (tuple, list)):
            return len(value) == len(twin) and all(self._same(a, b) for a, b in zip(value, twin))
        if isinstance(value, dict):
            return value.keys() == twin.keys() and all(self._same(value[k], twin[k]) for k in value)
        if kind is slice:
            return self._same((value.start, value.stop, value.step), (twin.start, twin.stop, twin.step))
        return value is twin

    def _same_value(self, value: fx.Node, twin: fx.Node) -> bool:
        index, start = self.index, self.start
        at = index.get(value, -1)
        if at < start:
            return value is twin  # made before the run: read by every period
        twin_at = index.get(twin, -1)
        if twin_at >= start:
            return at - twin_at == self.length
        if at != start + self.length - 1:
            return False  # the second period reads a value of the first but its last
        if not self.starts:
            self.starts.append(twin)
        return twin is self.starts[0]  # the first period reads the run's start in its place


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
            if scopes_of(node):
                loop.meta[SCOPES] = scopes_of(node)
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
        if offset == run.call_offset:  # named for what it is in the loop, not after the child it called once
            env[node] = body.create_node(node.op, node.target, *fx.map_arg((node.args, node.kwargs), env.__getitem__), name="out")
            env[node].meta = dict(node.meta)
        else:
            env[node] = body.node_copy(node, env.__getitem__)
        env[node].meta.pop(SCOPES, None)  # the loop statement is in the block
    body.output(env[run.periods[1][-1]])
    call = str(run.periods[1][run.call_offset].target)
    container = call.rpartition(".")[0].rpartition(".")[2]
    return Roll(body, run.children, call, loop_variable(container))


def loop_variable(container: str) -> str:
    """The loop variable: a container's name in the singular (`lins` -> `lin`, `branches` -> `branch`),
    else `layer`."""
    if container.endswith(("ches", "shes", "xes", "sses")):
        singular = container[:-2]
    elif container.endswith("s") and not container.endswith(("ss", "us", "is", "as")):
        singular = container[:-1]
    else:
        return "layer"
    return singular if len(singular) > 2 and singular.isidentifier() else "layer"
