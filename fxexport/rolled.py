"""Code repeated once per child of a container, written as the loop it was.

A model that loops over a ModuleList with code around each call,

    for lin in self.lins:
        y = torch.relu(lin(x))
        x = (x + y) * 0.9

is traced into the same statements once per child. Where a forward holds such a run (periods of the
same nodes, each calling the next child of one container, reading only its own values, the one value
the period before it left, and values made before the run), the run is one node of a reduced graph,
and its second period the body of a loop over the container. The loop runs the very calls the run
did, in the same order, on the same values: only names and lifetimes change.

A loop may also keep each period's value for later, as feature extractors do:

    outs = []
    for conv in self.convs:
        x = torch.relu(conv(x))
        outs.append(x)
    return torch.cat(outs, 1)

The trace lists the values in the one reader (`torch.cat([x, out, out_1], 1)`). Where every period's
value is read there, in order, next to each other, and the last period's nowhere else, the loop's value
is the list (its neighbours in the reader's list are added to it: `outs + [y]`). Such a run over a
ModuleList is a loop however short and however few its nodes, as a chain over one is (loops.py).

Periods may also differ where the source reads the loop's index, and only there: an int that is the
period's number (`x.select(1, i)`), an item of a value made before the run at that number (`spx[i]`,
which torch.export takes out of the tuple before the run), the child at that number of other
containers of as many children (`for i, (conv, bn) in enumerate(zip(self.convs, self.bns))`). And the
first period may lack the one node that combines the carried value with another (Res2Net's and
EdgeNeXt's blocks, whose first split goes in alone):

    for i, conv in enumerate(self.convs):
        if i == 0:
            sp = spx[i]
        else:
            sp = sp + spx[i]
        sp = conv(sp)

The first period may read a number where the later read the value the period before left: the loop
starts from it (MobileOne's branches summed from `out = 0` where it builds no scale branch). And a
container of one child is run as a loop of one period where a module of the same source class loops
over its own container of that name and this period runs the same body (MobileOne's stem, whose list
holds one branch, besides blocks of four): collect gives each module those loops (`rolled`'s `loops`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from torch import fx, nn
from torch.fx.immutable_collections import immutable_list

from .deadcode import dead_nodes
from .loops import _children
from .pytree_io import pytree_info
from .scopes import SCOPES, scopes_of

MIN_PERIODS = 3  # two periods read as well unrolled
MIN_LENGTH = 2  # one call a period is a chain (loops.py)
MIN_LISTED = 2  # periods of a run over a ModuleList whose values are kept: its source loops over it
MAX_LENGTH = 400  # nodes in a period searched for
MAX_ROTATIONS = 8  # starts of the period tried per run
_EXACT = frozenset({int, bool, str, type(None)})  # literals compared by value: equal values, equal reprs
_NUMBERS = (int, float)  # a loop's start a number: `out = 0`
_LISTS = (list, immutable_list)

# Where periods differ by the loop's index: (kind, a node's offset in the body, an argument's position
# or keyword), kind "literal" (the number), "read" (an item of a value made before the run) or "call"
# (the key is then the other container's path: its child at the number).
Position = tuple[str, int, Any]


def loop_of(*values: Any) -> Any:
    """The target of a rolled run's node in a reduced graph: never called, never imported."""
    raise AssertionError("a rolled run is written as a loop, not called")


def first_of(index: Any, first: Any, later: Any, alone: Any = None) -> Any:
    """The target of a loop body's node whose value is `first` in the first period and `later` after
    (`if i == 0: sp = spx[i]` / `else: sp = sp + spx[i]`): never called, never imported. `alone`: where
    modules of one source class run the loop so and with every period `first` (Res2Net's first block of a
    stage), whether this module's does (collect makes it an attribute: `if i == 0 or self.is_first:`)."""
    raise AssertionError("written as an if statement, not called")


@dataclass(frozen=True)
class Roll:
    """A run written as a loop: its body (a graph whose placeholders are the carried value, then the
    values made before the run it reads, then the loop's index if it reads it), the container iterated,
    the call of its child in the body, and a name for the loop variable; `zipped`: other containers
    iterated with it, as (container, call, variable)."""

    body: fx.Graph
    children: str
    call: str
    variable: str
    collected: bool = False  # the loop's value is the list of every period's value (`outs.append(x)`)
    indexed: bool = False  # the body reads the loop's index (`for i, conv in enumerate(self.convs):`)
    zipped: tuple[tuple[str, str, str], ...] = ()
    loop_calls: tuple[tuple[str, int], ...] = ()  # the body's nodes (by name) that call a loop variable: 0 the first
    single: bool = False  # one period, run as the loop of another module of the source class (`_single_at`)


@dataclass(frozen=True)
class Rolled:
    """A forward's graph with each rolled run one node (target `loop_of`, args: the carried value's
    start, then the values the body reads), and the rolls by node."""

    graph: fx.Graph
    rolls: dict[fx.Node, Roll]


@dataclass(frozen=True)
class Collector:
    """The node reading every period's value, in a list at `slot` (an argument's position or keyword)
    from item `at` on."""

    node: fx.Node
    slot: int | str
    at: int
    as_tuple: bool = False  # a tuple the forward returns: `return tuple(outs)`


@dataclass(frozen=True)
class _Run:
    """The periods (the second is the loop's body), the carried value's start (a number where the first
    period reads one in its place; None where the first period lacks `combined`, the body's node
    combining the carried value with another), the values made
    before the run the body reads, the child call's offset in the body, the container, the reader of
    the periods' values, and where the periods differ by their number."""

    periods: tuple[tuple[fx.Node, ...], ...]
    start: Any  # a node, a number (`out = 0`), or None
    invariants: tuple[fx.Node, ...]
    call_offset: int
    children: str
    collector: Collector | None = None
    positions: frozenset[Position] = frozenset()
    combined: fx.Node | None = None
    zipped: tuple[tuple[str, str], ...] = ()  # (container, its path) of other containers, one each
    roll: Roll | None = None  # the loop, where another module's body gives it (`_single_at`)


def rolled(gm: fx.GraphModule, loops: Mapping[str, tuple[Roll, ...]] | None = None, singles: bool = True, in_place: bool = False) -> Rolled:
    """`gm`'s forward graph with its runs rolled; the graph itself where there are none. `loops`: by
    container (`self.convs`), the loop a module of the same source class runs over its own, which a
    container of one child here is run as where its one period runs the same body (`_single_at`; not
    without `singles`). `in_place`: a torch.export graph, whose `v + 0`, then `out.add_(v)` per step, is
    `out = 0`, then `out += v` (`_added_in_place`)."""
    # symbolic_trace keeps dead nodes; no export writes them, so they neither join nor split a run (none without a node nothing reads)
    dead = dead_nodes(gm.graph) if any(not n.users and n.op != "output" for n in gm.graph.nodes) else frozenset()
    runs = _runs(gm, gm.graph, dead, (loops or {}) if singles else {}, in_place)
    found = _reduced(gm.graph, runs, dead) if runs else Rolled(gm.graph, {})
    return _with_alone_periods(found, loops or {})


def _runs(gm: fx.GraphModule, graph: fx.Graph, dead: frozenset[fx.Node], loops: Mapping[str, tuple[Roll, ...]], in_place: bool) -> list[_Run]:
    """The runs in `graph`, in order, none overlapping another."""
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output") and n not in dead]
    index = {n: i for i, n in enumerate(nodes)}
    found: list[_Run] = []
    search = _Search(gm, nodes, index, 0, dead, in_place)
    i = 0
    while i < len(nodes):
        run = _run_at(search, i) if nodes[i].op == "call_module" else None
        if run is None and loops and nodes[i].op == "call_module":
            run = _single_at(search, i, loops)
        if run is not None:
            found.append(run)
            i = index[run.periods[-1][-1]] + 1
            search = dataclasses.replace(search, floor=i)
        else:
            i += 1
    return found


@dataclass(frozen=True)
class _Search:
    """The nodes searched (placeholders and output aside), their positions, and the first a run may
    hold (the one after the run before)."""

    gm: fx.GraphModule
    nodes: list[fx.Node]
    index: dict[fx.Node, int]
    floor: int
    dead: frozenset[fx.Node] = frozenset()
    in_place: bool = False  # a torch.export graph: `v + 0`, then `out.add_(v)`, is a loop from 0 (`_added_in_place`)

    def users(self, node: fx.Node) -> Iterable[fx.Node]:
        """The nodes that read `node` and are written (not dead)."""
        return [u for u in node.users if u not in self.dead] if self.dead else node.users

    def keys(self, parent: str) -> list[str]:
        """The names of the children of the container at `parent`."""
        return list(self.gm.get_submodule(parent)._modules)


def _run_at(search: _Search, at: int) -> _Run | None:
    """The run whose first module call is `nodes[at]`, if there is one."""
    nodes = search.nodes
    first = nodes[at]
    if first.op != "call_module":
        return None
    parent, _, name = str(first.target).rpartition(".")
    holder = search.gm.get_submodule(parent) if parent else search.gm  # a container's own forward: its children
    held = holder._modules
    if next(iter(held), None) != name or len(held) < MIN_LISTED:
        return None  # asked of every call: no list of a container's children unless this is its first
    keys = list(held)
    second = f"{parent}.{keys[1]}" if parent else keys[1]
    length = next((k for k in range(1, MAX_LENGTH + 1) if at + k < len(nodes) and _targets(nodes[at + k], second)), None)
    if length is None or at + length * (len(keys) - 1) >= len(nodes):
        return None
    paths = [f"{parent}.{key}" if parent else key for key in keys]
    if not all(_targets(nodes[at + j * length], path) for j, path in enumerate(paths)):
        return None
    children = _children(search.gm, paths)
    if children is None or children.endswith(".children()"):
        return None
    listed = isinstance(holder, nn.ModuleList) or children in ("self", "self.values()")  # lists its source loops over
    for rotation in _rotations(nodes, at, length, search.floor):
        run = _regular(search, at - rotation, length, len(keys), rotation, children)
        if run is not None and _long_enough(run, length, listed):
            return run
    for rotation in range(1, min(length, MAX_ROTATIONS + 1)):  # the combining node comes before the call
        run = _headed(search, at + length - rotation, length, len(keys), rotation, children)
        if run is not None and _long_enough(run, length, listed):
            return run
    return None


def _single_at(search: _Search, at: int, loops: Mapping[str, tuple[Roll, ...]]) -> _Run | None:
    """The run of one period whose call is `nodes[at]`, the only child of its container, where a module
    of the same source class loops over its own container of that name (`loops`) and this period runs
    that loop's body as its first period: node for node the same code, reading a value made before it
    where the body reads the carried value, others where the body reads its invariants, and 0 where it
    reads the loop's index; a headed loop's first period runs without the nodes only its later ones run."""
    first = search.nodes[at]
    if not calls_only_child(search.gm, first):
        return None
    children = _children(search.gm, [str(first.target)])
    for loop in loops.get(children, ()) if children else ():
        for items_before in (False, True):
            run = _single_run(search, at, loop, items_before)
            if run is not None:
                return run
    return None


@dataclass(frozen=True)
class _FirstStep:
    """A loop's first period as a module of one child runs it: the body's nodes it runs (the child's call
    at `call`), what it reads in place of body nodes (0 for the index, the first value for a headed loop's
    choice), and the body's items at the index it takes made before it (`items`)."""

    nodes: list[fx.Node]
    call: int
    substitutes: dict[fx.Node, Any]
    items: frozenset[fx.Node]
    headed: bool


def _first_step(loop: Roll, items_before: bool) -> _FirstStep | None:
    """`loop`'s first period; `items_before`: its items of a value at the index (`spx[i]`) made before it
    (torch.export takes every item of a split where it splits), not nodes of it. None where the loop is
    of other containers too, or where no such items are to be had."""
    if loop.zipped or len(loop.loop_calls) != 1:
        return None
    choice, later = _later_only(loop.body) if loop_kind(loop) == "headed" else (None, set[fx.Node]())
    index = next((p for p in loop.body.find_nodes(op="placeholder") if p.target == "index"), None)
    items = {n for n in loop.body.nodes if index is not None and _item_at(n, index)} if items_before else set()
    if items_before and not items - later:
        return None
    nodes = [n for n in loop.body.nodes if n.op not in ("placeholder", "output") and n not in later and n not in items]
    call = next((k for k, n in enumerate(nodes) if n.name == loop.loop_calls[0][0]), None)
    if call is None or loop.body.output_node().args[0] is not nodes[-1]:
        return None
    substitutes: dict[fx.Node, Any] = {index: 0} if index is not None else {}
    if choice is not None:
        substitutes[choice] = choice.args[1]
    return _FirstStep(nodes, call, substitutes, frozenset(items), choice is not None)


def _single_run(search: _Search, at: int, loop: Roll, items_before: bool) -> _Run | None:
    """The one period from `nodes[at]` (the call) as `loop`'s first, if it runs that (`_single_at`)."""
    step = _first_step(loop, items_before)
    if step is None or not search.floor <= at - step.call <= len(search.nodes) - len(step.nodes):
        return None
    start, end = at - step.call, at - step.call + len(step.nodes)
    period = tuple(search.nodes[start:end])
    match = _BodyMatch(step.nodes, period, step.call, start, search.index, step.substitutes, step.items, recorded=search.in_place)
    collector = _collector([period[-1]], search, end) if loop.collected else None
    if not match.check() or (loop.collected and collector is None) or not _one_scope([period]):
        return None
    if not _users_stay([period], search, end, collector.node if collector is not None else None):
        return None
    placeholders = [str(p.target) for p in loop.body.find_nodes(op="placeholder") if p.target != "index"]
    if any(name not in match.bound for name in placeholders[1:]):
        return None  # a value only the later periods read: this module has none to give the loop
    carried, invariants = match.bound.get("carried", match.from_number), tuple(match.bound[name] for name in placeholders[1:])
    if carried in invariants or (carried is None and not step.headed and not loop.collected) or (carried is not None and step.headed):
        return None  # the carried value read as itself too, a loop that neither carries nor keeps, or a head reading it
    return _Run((period,), carried, invariants, step.call, loop.children, collector, roll=match.roll(loop))


def _added_in_place(node: fx.Node, first: fx.Node) -> tuple[fx.Node, fx.Node, Any] | None:
    """(the value added, the first's own value, the number) where `node` adds a value in place to the
    one before (`out.add_(v)`) and `first` adds a number to its own value (`v + 0`): torch.export's record
    of `out = 0`, then `out += v` per step."""
    if node.op != "call_method" or node.target != "add_" or node.kwargs or len(node.args) != 2:
        return None
    if first.op != "call_function" or first.target is not operator.add or first.kwargs or len(first.args) != 2:
        return None
    value, own, number = node.args[1], first.args[0], first.args[1]
    if not isinstance(value, fx.Node) or not isinstance(own, fx.Node) or type(number) not in _NUMBERS:
        return None
    return value, own, number


def _item_at(node: fx.Node, index: fx.Node) -> bool:
    """`node` takes an item at the loop's index of a value made before the loop: `spx[i]`."""
    if node.op != "call_function" or node.target is not operator.getitem or node.kwargs or len(node.args) != 2:
        return False
    value = node.args[0]
    return node.args[1] is index and isinstance(value, fx.Node) and value.op == "placeholder" and value.target != "carried"


def calls_only_child(gm: fx.GraphModule, node: fx.Node) -> bool:
    """`node` calls the one child of a container (a loop of one period may run it: `_single_at`)."""
    parent = str(node.target).rpartition(".")[0]
    return bool(parent) and len(gm.get_submodule(parent)._modules) == 1


@dataclass
class _BodyMatch:
    """A period against another module's loop body (`body`, its nodes the period runs): the same op,
    target (the child call's aside), arguments by position and keyword, literals, and values read (of the
    period where the body reads its own, and one value made before the period per placeholder: `bound`).
    `substitutes`: what the body reads in place of some of its nodes in this period (0 for the index, the
    first value for a headed loop's choice)."""

    body: list[fx.Node]
    period: tuple[fx.Node, ...]
    call: int
    start: int
    index: dict[fx.Node, int]
    substitutes: dict[fx.Node, Any] = field(default_factory=dict)
    items: frozenset[fx.Node] = frozenset()  # the body's items at the index that are items at 0 made before the period
    bound: dict[str, fx.Node] = field(default_factory=dict)
    from_number: Any = None  # a number the period adds its value to where the body adds it to the carried value in place
    in_place: set[fx.Node] = field(default_factory=set)  # the body's nodes that do so
    recorded: bool = False  # a torch.export graph (`_added_in_place`)

    def check(self) -> bool:
        twins = dict(zip(self.body, self.period))
        for offset, (node, own) in enumerate(zip(self.body, self.period)):
            if self._from_number(node, own, twins):
                continue
            if not _same_form(node, own) or (offset != self.call and node.target != own.target):
                return False
            for _, value, other in _slots(node, own):
                value = fx.map_arg(value, lambda n: self.substitutes.get(n, n))
                if not self._carried_number(value, other) and not _same(value, other, lambda a, b: self._same_value(a, b, twins)):
                    return False
        return "carried" not in self.bound or self.from_number is None

    def _carried_number(self, value: Any, other: Any) -> bool:
        """The body reads the carried value where the period reads a number: the loop starts from it (`out = 0`)."""
        if not (isinstance(value, fx.Node) and value.op == "placeholder" and value.target == "carried" and type(other) in _NUMBERS):
            return False
        if self.from_number is None:
            self.from_number = other
        return type(self.from_number) is type(other) and repr(self.from_number) == repr(other)

    def _from_number(self, node: fx.Node, own: fx.Node, twins: dict[fx.Node, fx.Node]) -> bool:
        """`node` adds to the carried value in place (`out.add_(v)`) and `own` adds a number to the same
        value (`v + 0`): the loop starts from that number."""
        parts = _added_in_place(node, own) if self.recorded and node is self.body[-1] else None  # the step's value: `out += v` alone
        carried = node.args[0] if parts is not None else None
        if parts is None or not isinstance(carried, fx.Node) or carried.op != "placeholder" or carried.target != "carried":
            return False
        if list(carried.users) != [node]:
            return False
        value, own_value, number = parts
        if self.from_number is not None or not self._same_value(value, own_value, twins):
            return False
        self.from_number = number
        self.in_place.add(node)
        return True

    def _same_value(self, value: fx.Node, own: fx.Node, twins: dict[fx.Node, fx.Node]) -> bool:
        if value in self.items:
            before = self.index.get(own, -1) < self.start and own.op == "call_function" and own.target is operator.getitem
            at_zero = before and len(own.args) == 2 and not own.kwargs and type(own.args[1]) is int and own.args[1] == 0
            return at_zero and isinstance(own.args[0], fx.Node) and self._same_value(cast(fx.Node, value.args[0]), own.args[0], twins)
        if value.op != "placeholder":
            return twins.get(value) is own
        if self.index.get(own, -1) >= self.start:
            return False
        return self.bound.setdefault(str(value.target), own) is own

    def roll(self, loop: Roll) -> Roll:
        """The loop over this module's container: `loop`'s body, with this period's nodes' targets, names
        and records where it runs them."""
        body = fx.Graph()
        twins = dict(zip(self.body, self.period))
        env: dict[fx.Node, fx.Node] = {}
        for node in loop.body.nodes:
            if node.op == "placeholder":
                env[node] = body.placeholder(str(node.target))
                continue
            if node.op == "output":
                body.output(env[cast(fx.Node, node.args[0])])
                continue
            args, kwargs = fx.map_arg((node.args, node.kwargs), env.__getitem__)
            own = twins.get(node, node) if node not in self.in_place else node  # `out += v`: from a number too
            call = own is self.period[self.call]
            env[node] = body.create_node(own.op, own.target, args, kwargs, name="out" if call else own.name)
            env[node].meta = {k: v for k, v in own.meta.items() if k != SCOPES}
        call_name = env[self.body[self.call]].name
        return dataclasses.replace(loop, body=body, call=str(self.period[self.call].target), loop_calls=((call_name, 0),), single=True)


def loop_kind(roll: Roll) -> str:
    """"headed" (its first period lacks the combining node), "alone" (no period reads the one before), else
    "carried"."""
    if any(n.target is first_of for n in roll.body.nodes):
        return "headed"
    carried = next(iter(roll.body.find_nodes(op="placeholder")))
    return "carried" if carried.users else "alone"


def _with_alone_periods(found: Rolled, loops: Mapping[str, tuple[Roll, ...]]) -> Rolled:
    """`found` with its loops written as the headed loop of another module of the source class where they
    run its body with every period `first` (`first_of`'s `alone` True), and its headed loops so where another
    runs theirs alone (`alone` False)."""
    rolls = dict(found.rolls)
    for node, roll in found.rolls.items():
        kind = loop_kind(roll)
        others = [other for other in loops.get(roll.children, ()) if {kind, loop_kind(other)} == {"headed", "alone"}]
        headed, alone = (roll, others[0]) if kind == "headed" and others else (others[0], roll) if others else (None, None)
        twins = _alone_twins(headed, alone) if headed is not None and alone is not None else None
        if twins is None:
            continue
        rolls[node] = _flagged(roll) if kind == "headed" else _as_headed(cast(Roll, headed), roll, twins)
    return Rolled(found.graph, rolls) if rolls != found.rolls else found


def _later_only(body: fx.Graph) -> tuple[fx.Node, set[fx.Node]]:
    """A headed body's `first_of` node, and the nodes only its later value reads (the combining node first)."""
    choice = next(n for n in body.nodes if n.target is first_of)
    later = cast(fx.Node, choice.args[2])
    only = {choice, later}
    for node in reversed(list(body.nodes)):
        if node.op not in ("placeholder", "output") and node.users and set(node.users) <= only and node is not choice.args[1]:
            only.add(node)
    return choice, only


def _alone_twins(headed: Roll, alone: Roll) -> dict[fx.Node, fx.Node] | None:
    """The nodes of `alone`'s body by those of `headed`'s they run as, where `alone`'s body is `headed`'s
    with every period `first`: node for node the same op, target (the loops' calls aside), literals, and
    values (the placeholders of one name in both)."""
    choice, only = _later_only(headed.body)
    kept = [n for n in headed.body.nodes if n.op not in ("placeholder", "output") and n not in only]
    own = [n for n in alone.body.nodes if n.op not in ("placeholder", "output")]
    if len(kept) != len(own) or alone.zipped != headed.zipped or alone.collected != headed.collected:
        return None
    own_inputs = {str(p.target) for p in alone.body.find_nodes(op="placeholder")} | {"index"}
    if any(p.users and str(p.target) not in own_inputs for p in headed.body.find_nodes(op="placeholder")):
        return None  # the later periods read a value this module's loop is not given
    twins: dict[fx.Node, fx.Node] = {}
    calls = {name: k for name, k in headed.loop_calls}, {name: k for name, k in alone.loop_calls}

    def same_value(value: fx.Node, twin: fx.Node) -> bool:
        if value is choice:
            value = cast(fx.Node, choice.args[1])
        if value.op == "placeholder":
            return twin.op == "placeholder" and value.target == twin.target
        return twins.get(value) is twin

    for node, twin in zip(kept, own):
        called = calls[0].get(node.name), calls[1].get(twin.name)
        if not _same_form(node, twin) or called[0] != called[1] or (called[0] is None and node.target != twin.target):
            return None
        if not all(_same(value, other, same_value) for _, value, other in _slots(node, twin)):
            return None
        twins[node] = twin
    output = headed.body.output_node().args[0]
    return twins if same_value(cast(fx.Node, output), cast(fx.Node, alone.body.output_node().args[0])) else None


def _flagged(roll: Roll) -> Roll:
    """A headed loop whose periods after the first combine the value the one before left: `alone` False."""
    body = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in roll.body.nodes:
        env[node] = body.node_copy(node, env.__getitem__)
        if node.target is first_of:
            env[node].args = (*env[node].args[:3], False)
    return dataclasses.replace(roll, body=body)


def _as_headed(headed: Roll, alone: Roll, twins: dict[fx.Node, fx.Node]) -> Roll:
    """`alone`'s loop written as `headed`'s, with every period `first` (`alone` True): `headed`'s body with
    `alone`'s nodes (`twins`: their targets, names and records) where they run the same."""
    body = fx.Graph()
    placeholders = {str(p.target): p for p in alone.body.find_nodes(op="placeholder")}
    env = {p: body.placeholder(str(p.target)) for p in placeholders.values()}
    for node in headed.body.nodes:
        if node.op == "placeholder":
            env[node] = env[placeholders[str(node.target)]] if str(node.target) in placeholders else body.placeholder(str(node.target))
            continue
        if node.op == "output":
            body.output(env[cast(fx.Node, node.args[0])])
            continue
        args, kwargs = fx.map_arg((node.args, node.kwargs), env.__getitem__)
        own = twins.get(node)
        if own is None:  # the combining node and what only it reads, and the choice
            env[node] = body.create_node(node.op, node.target, (*args[:3], True) if node.target is first_of else args, kwargs)
            continue
        env[node] = body.create_node(own.op, own.target, args, kwargs, name=own.name)
        env[node].meta = dict(own.meta)
    by_name = {twin.name: env[node].name for node, twin in twins.items()}
    calls = tuple((by_name[name], k) for name, k in alone.loop_calls)
    return dataclasses.replace(alone, body=body, indexed=True, loop_calls=calls)


def _long_enough(run: _Run, length: int, listed: bool) -> bool:
    """Worth a loop: MIN_PERIODS periods of MIN_LENGTH nodes, but any run over a ModuleList (or a
    container's own children), which its source loops over: one whose values are kept (a chain could
    not keep them), or of MIN_LENGTH nodes a period (blocks of 2 and of 3 such children are then one code)."""
    if listed and (run.collector is not None or length >= MIN_LENGTH):
        return True
    return len(run.periods) >= MIN_PERIODS and length >= MIN_LENGTH


def _targets(node: fx.Node, target: str) -> bool:
    return node.op == "call_module" and str(node.target) == target


def _rotations(nodes: list[fx.Node], at: int, length: int, floor: int) -> list[int]:
    """How many nodes before the first call its period may start, by the nodes' shapes alone."""
    low = max(floor, at - length + 1)
    same = [_shape(nodes[s]) == _shape(nodes[s + length]) if s + length < len(nodes) else False for s in range(low, at + length)]
    valid = [r for r in range(at - low + 1) if all(same[at - r - low : at - r - low + length])]
    return valid[:MAX_ROTATIONS]


def _shape(node: fx.Node) -> tuple[Any, ...]:
    """What a node runs, on how many values: equal for a node and its twin one period later (an add in
    place and an add too: `_added_in_place`)."""
    if node.op == "call_method" and node.target == "add_":
        return "call_function", operator.add, len(node.args), tuple(node.kwargs)
    target = "module" if node.op == "call_module" else node.target
    return node.op, target, len(node.args), tuple(node.kwargs)


def _periods(search: _Search, start: int, length: int, count: int) -> list[tuple[fx.Node, ...]] | None:
    """`count` periods of `length` nodes from `start`, if they are all in the search and run code."""
    if start < search.floor or start + length * count > len(search.nodes):
        return None
    periods = [tuple(search.nodes[start + j * length : start + (j + 1) * length]) for j in range(count)]
    if any(n.op not in ("call_function", "call_method", "call_module") for n in periods[0]):
        return None
    return periods


def _regular(search: _Search, start: int, length: int, count: int, call: int, children: str) -> _Run | None:
    """The run of `count` periods from `start` whose every period runs the same code, if it is one."""
    periods = _periods(search, start, length, count)
    if periods is None or not _one_scope(periods):
        return None
    twins = _Twins(search, start, length, call)
    if not twins.check(periods, 0) or len(twins.starts) > 1:
        return None
    return _finished(search, periods, twins.starts[0] if twins.starts else None, call, children, twins.positions())


def _headed(search: _Search, start: int, length: int, count: int, call: int, children: str) -> _Run | None:
    """The run whose periods after the first, from `start`, run the same code, and whose first runs it
    without the one node that combines the carried value with another (reading that other value in its
    place), if it is one."""
    periods = _periods(search, start, length, count - 1)
    head_start = start - (length - 1)
    if periods is None or head_start < search.floor:
        return None
    head = tuple(search.nodes[head_start:start])
    carried = head[-1]
    readers = [n for n in periods[0] if carried in n.all_input_nodes]
    if len(readers) != 1 or periods[0].index(readers[0]) >= call or not _one_scope([head, *periods]):
        return None
    combined = readers[0]
    reads: list[fx.Node] = []
    fx.map_arg((combined.args, combined.kwargs), reads.append)
    other = [v for v in reads if v is not carried]
    if reads.count(carried) != 1 or len(other) != 1:
        return None
    twins = _Twins(search, start, length, call)
    if not twins.check(periods, 1) or twins.starts not in ([], [carried]):
        return None
    first = _HeadTwins(search, head_start, periods[0], combined, other[0], call)
    positions = first.check(head)
    if positions is None or (len(periods) > 1 and positions != twins.positions()):
        return None
    return _finished(search, [head, *periods], None, call, children, positions, combined)


def _one_scope(periods: list[tuple[fx.Node, ...]]) -> bool:
    """The whole run in the same `with` blocks: the loop is all inside one or none."""
    return len({scopes_of(n) for period in periods for n in period}) == 1


def _finished(
    search: _Search, periods: list[tuple[fx.Node, ...]], start: fx.Node | None, call: int, children: str,
    positions: frozenset[Position], combined: fx.Node | None = None,
) -> _Run | None:  # fmt: skip
    """The run of these periods, if its values stay in it (but for its reader) and the other
    containers its periods call are iterated whole."""
    low = search.index[periods[0][0]]
    end = low + sum(map(len, periods))
    collector = _collector([p[-1] for p in periods], search, end)
    if start is None and combined is None and collector is None:
        return None  # periods that carry nothing and keep nothing
    if not _users_stay(periods, search, end, collector.node if collector is not None else None):
        return None
    zipped = _zipped(search, positions, periods[1], len(periods), children)
    if zipped is None:
        return None
    reads = {(offset, key) for kind, offset, key in positions if kind == "read"}
    invariants: list[fx.Node] = []
    for offset, node in enumerate(periods[1]):
        slots: list[tuple[Any, Any]] = [*enumerate(node.args), *node.kwargs.items()]
        for key, value in slots:
            inputs: list[fx.Node] = []
            fx.map_arg(value.args[0] if (offset, key) in reads else value, inputs.append)
            invariants += [v for v in inputs if search.index.get(v, -1) < low]
    return _Run(tuple(periods), start, tuple(dict.fromkeys(invariants)), call, children, collector, positions, combined, zipped)


def _zipped(search: _Search, positions: frozenset[Position], body: tuple[fx.Node, ...], count: int, children: str) -> tuple[tuple[str, str], ...] | None:
    """The other containers the periods call a child of, with the body's call of each, if each has a
    child per period and the loop can iterate it (not its main container again)."""
    found: dict[str, str] = {}
    for kind, _, parent in sorted(positions, key=lambda p: p[1]):
        if kind != "call" or parent in found:
            continue
        keys = search.keys(parent)
        iterated = _children(search.gm, [f"{parent}.{key}" for key in keys])
        if len(keys) != count or iterated is None or iterated.endswith(".children()") or iterated == children:
            return None
        found[parent] = iterated
    return tuple((iterated, parent) for parent, iterated in found.items())


@dataclass
class _Twins:
    """A node and its twin one period earlier run the same code: the same op and target (the child
    call's aside), equal literals (by type and repr: -0.0 is not 0.0), and values read one period
    apart inside the run or the same value made before it; where the second period reads the value
    the first left, the first reads one value made before the run, its start (`starts`). They may also
    differ by the period's number, at the same positions in every period (`found`)."""

    search: _Search
    start: int
    length: int
    call: int  # the child call's offset in a period
    starts: list[Any] = field(default_factory=list)  # a node, or a number (`_literal_start`)
    number: int = 0  # the later period's
    found: list[set[Position]] = field(default_factory=list)  # per pair of periods

    def check(self, periods: list[tuple[fx.Node, ...]], first: int) -> bool:
        """Each period the same code as the one before, `first` the first's number."""
        for j in range(1, len(periods)):
            self.number = first + j
            self.found.append(set())
            if not all(self.code(n, twin) for n, twin in zip(periods[j], periods[j - 1])):
                return False
        return all(f == self.found[0] for f in self.found)

    def positions(self) -> frozenset[Position]:
        return frozenset(self.found[0]) if self.found else frozenset()

    def code(self, node: fx.Node, twin: fx.Node) -> bool:
        if self.number == 1 and self.search.in_place and (parts := _added_in_place(node, twin)) is not None:
            added, own, number = parts
            carried = cast(fx.Node, node.args[0])
            last = (self.search.index[node] - self.start) % self.length == self.length - 1  # the step's value: `out += v` alone
            return last and list(self.search.users(carried)) == [node] and self._same_value(added, own) and self._literal_start(carried, number)
        if not _same_form(node, twin):
            return False
        offset = (self.search.index[node] - self.start) % self.length
        if node.target != twin.target and offset != self.call and not self._zipped(node, twin, offset):
            return False  # the child call's target is checked already
        for key, value in enumerate(node.args):  # most arguments are values and numbers: no recursion
            if not self._argument(value, twin.args[key], offset, key):
                return False
        return all(self._argument(value, twin.kwargs[key], offset, key) for key, value in node.kwargs.items()) if node.kwargs else True

    def _argument(self, value: Any, other: Any, offset: int, key: Any) -> bool:
        if type(value) is fx.Node is type(other):
            return self._same_value(value, other) or self._indexed_read(value, other, offset, key)
        if type(value) is fx.Node:
            return self._literal_start(value, other)
        return self._same(value, other) or self._indexed_literal(value, other, offset, key)

    def _literal_start(self, value: fx.Node, literal: Any) -> bool:
        """The second period reads the value the first left where the first reads a number: the loop
        starts from that number (`out = 0`, then `out += conv(x)` per child)."""
        if type(literal) not in _NUMBERS or self.number != 1 or self.search.index.get(value, -1) != self.start + self.length - 1:
            return False
        if not self.starts:
            self.starts.append(literal)
        return type(self.starts[0]) is type(literal) and repr(self.starts[0]) == repr(literal)

    def _zipped(self, node: fx.Node, twin: fx.Node, offset: int) -> bool:
        parent = _zipped_parent(self.search, node, twin, self.number)
        if parent is None:
            return False
        self.found[-1].add(("call", offset, parent))
        return True

    def _indexed_literal(self, value: Any, other: Any, offset: int, key: Any) -> bool:
        items = _numbered_items(value, other, self.number, self._same)
        self.found[-1].update(_literals(offset, key, items or []))
        return items is not None

    def _indexed_read(self, value: fx.Node, other: fx.Node, offset: int, key: Any) -> bool:
        if not _numbered_item(value, other, self.number) or self.search.index.get(value, -1) >= self.start:
            return False
        self.found[-1].add(("read", offset, key))
        return True

    def _same(self, value: Any, twin: Any) -> bool:
        return _same(value, twin, self._same_value)

    def _same_value(self, value: fx.Node, twin: fx.Node) -> bool:
        index, start = self.search.index, self.start
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


@dataclass
class _HeadTwins:
    """The first period of a headed run against the body (the period after it): node for node but the
    body's `combined`, whose readers in the body read `other` (or its twin in the first period) there;
    they differ by the period's number where the regular periods do (`found`)."""

    search: _Search
    start: int  # the first period's
    body: tuple[fx.Node, ...]
    combined: fx.Node
    other: fx.Node
    call: int
    twin_of: dict[fx.Node, fx.Node] = field(default_factory=dict)
    found: set[Position] = field(default_factory=set)

    def check(self, head: tuple[fx.Node, ...]) -> frozenset[Position] | None:
        aligned = [n for n in self.body if n is not self.combined]
        if len(aligned) != len(head):
            return None
        self.twin_of = dict(zip(aligned, head))
        for node, twin in zip(aligned, head):
            if not self.code(node, twin, self.body.index(node)):
                return None
        return frozenset(self.found)

    def code(self, node: fx.Node, twin: fx.Node, offset: int) -> bool:
        if not _same_form(node, twin):
            return False
        if node.target != twin.target and offset != self.call:
            parent = _zipped_parent(self.search, node, twin, 1)
            if parent is None:
                return False
            self.found.add(("call", offset, parent))
        for key, value, other in _slots(node, twin):
            if type(value) is fx.Node is type(other):
                if not self._same_value(value, other, ("read", offset, key)):
                    return False
            else:
                items = _numbered_items(value, other, 1, lambda a, b: _same(a, b, self._same_value))
                if items is None:
                    return False
                self.found.update(_literals(offset, key, items))
        return True

    def _same_value(self, value: fx.Node, twin: fx.Node, read: Position | None = None) -> bool:
        """The body's value and the first period's are twins: the same node's, or the same value made
        before the run, or items at the periods' numbers of one (`read`: where, if they may be)."""
        if value is self.combined:
            key = _key_of(self.combined, self.other)  # an item read inside a list (`torch.cat([h, spx[i]])`) is no index read
            value, read = self.other, (("read", self.body.index(self.combined), key) if key is not None else None)
        if value in self.twin_of:
            return twin is self.twin_of[value]
        if value in self.body or self.search.index.get(value, -1) >= self.start:
            return False  # the carried value, read by the combining node alone
        if twin is value:
            return True
        if read is not None and _numbered_item(value, twin, 1) and self.search.index.get(twin, -1) < self.start:
            self.found.add(read)
            return True
        return False


def _slots(node: fx.Node, twin: fx.Node) -> Iterator[tuple[Any, Any, Any]]:
    """Each argument of `node` (by position or keyword) and its twin's."""
    for key, value in enumerate(node.args):
        yield key, value, twin.args[key]
    for name, value in node.kwargs.items():
        yield name, value, twin.kwargs[name]


def _numbered_items(value: Any, other: Any, number: int, same: Callable[[Any, Any], bool]) -> list[int | None] | None:
    """Where two arguments of twins differ by their periods' numbers: [None] for ints that are, the items
    that are of tuples or lists whose other items are the `same`, [] for arguments the `same`; else None."""
    if type(value) is int is type(other) and (value, other) == (number, number - 1):
        return [None]
    if same(value, other):
        return []
    if type(value) not in (tuple, *_LISTS) or type(value) is not type(other) or len(value) != len(other):
        return None
    found: list[int | None] = []
    for item, (a, b) in enumerate(zip(value, other)):
        if type(a) is int is type(b) and (a, b) == (number, number - 1):
            found.append(item)
        elif not same(a, b):
            return None
    return found


def _same(value: Any, twin: Any, same_value: Callable[[fx.Node, fx.Node], bool]) -> bool:
    """Equal arguments: literals by type and value (floats by repr: -0.0 is not 0.0), containers item by
    item, values by `same_value`."""
    kind = type(value)
    if kind is not type(twin):
        return False
    if kind is fx.Node:
        return same_value(value, twin)
    if kind in _EXACT:
        return bool(value == twin)
    if kind in (float, complex):
        return repr(value) == repr(twin)
    if isinstance(value, (tuple, list)):
        return len(value) == len(twin) and all(_same(a, b, same_value) for a, b in zip(value, twin))
    if isinstance(value, dict):
        return value.keys() == twin.keys() and all(_same(value[k], twin[k], same_value) for k in value)
    if kind is slice:
        return _same((value.start, value.stop, value.step), (twin.start, twin.stop, twin.step), same_value)
    return value is twin


def _key_of(node: fx.Node, value: fx.Node) -> Any:
    """Where `node` reads `value` as an argument of its own (not inside a list)."""
    return next((key for key, item, _ in _slots(node, node) if item is value), None)


def _numbered_item(value: fx.Node, twin: fx.Node, number: int) -> bool:
    """`s[number]` and `s[number - 1]` of one value `s`."""
    if not all(n.op == "call_function" and n.target is operator.getitem and len(n.args) == 2 and not n.kwargs for n in (value, twin)):
        return False
    return value.args[0] is twin.args[0] and isinstance(value.args[0], fx.Node) and (value.args[1], twin.args[1]) == (number, number - 1) and type(value.args[1]) is int is type(twin.args[1])


def _same_form(node: fx.Node, twin: fx.Node) -> bool:
    """The same op on as many arguments, by the same keywords (what they are compared apart)."""
    return node.op == twin.op and len(node.args) == len(twin.args) and node.kwargs.keys() == twin.kwargs.keys()


def _literals(offset: int, key: Any, items: list[int | None]) -> Iterator[Position]:
    """The positions of ints that are the periods' numbers (_numbered_items): the argument's, or items of it."""
    return (("literal", offset, key if item is None else (key, item)) for item in items)


def _zipped_parent(search: _Search, node: fx.Node, twin: fx.Node, number: int) -> str | None:
    """The other container whose children at this period's number and the one before the two nodes call."""
    parent = _numbered_child(search, node, number)
    return parent if parent is not None and parent == _numbered_child(search, twin, number - 1) else None


def _numbered_child(search: _Search, node: fx.Node, number: int) -> str | None:
    """The container whose child at `number` the node calls, if it does."""
    if node.op != "call_module":
        return None
    parent, _, name = str(node.target).rpartition(".")
    if not parent:
        return None
    keys = search.keys(parent)
    return parent if number < len(keys) and keys[number] == name else None


def _collector(values: list[fx.Node], search: _Search, end: int) -> Collector | None:
    """The one node after the run that reads every period's value, once each, in one list of its
    arguments, next to each other and in order, and the only one to read the last period's."""
    after = [u for u in search.users(values[0]) if search.index.get(u, end) >= end]
    if len(after) != 1 or set(search.users(values[-1])) != {after[0]}:
        return None
    node = after[0]
    info = pytree_info(node.graph)
    spec = info.out_spec if info is not None else None
    if node.op == "output" and spec is not None and not (spec.type in (list, tuple) and all(c.is_leaf() for c in spec.children())):
        return None  # a pytree's output: its leaves are written one by one, into their structure
    reads: list[fx.Node] = []
    fx.map_arg((node.args, node.kwargs), reads.append)
    if any(reads.count(v) != 1 for v in values):
        return None
    slots: list[tuple[Any, Any]] = [*enumerate(node.args), *node.kwargs.items()]
    for slot, value in slots:
        if type(value) in _LISTS or (node.op == "output" and type(value) is tuple):  # a pytree's leaves are a tuple
            at = next((i for i, item in enumerate(value) if item is values[0]), None)
            if at is not None and list(value[at : at + len(values)]) == values:
                returned = spec.type if spec is not None else type(value)
                return Collector(node, slot, at, node.op == "output" and returned is tuple)
    return None


def _users_stay(periods: list[tuple[fx.Node, ...]], search: _Search, end: int, collector: fx.Node | None) -> bool:
    """Each period's values are read in it only, but its last, read by the next period alone (the
    last period's, after the run too, where something must read it), and by the collector if any."""
    index = search.index
    for j, period in enumerate(periods):
        low, high = index[period[0]], index[period[-1]]
        for node in period[:-1]:
            if any(not low <= index.get(u, end) <= high for u in search.users(node)):
                return False
        nxt = periods[j + 1] if j + 1 < len(periods) else None
        users = [index.get(u, end) for u in search.users(period[-1]) if u is not collector]
        if nxt is not None and any(not (low <= at <= high or index[nxt[0]] <= at <= index[nxt[-1]]) for at in users):
            return False
        if nxt is None and collector is None and not any(at >= end for at in users):
            return False
    return True


def _reduced(graph: fx.Graph, runs: list[_Run], dead: frozenset[fx.Node]) -> Rolled:
    """A copy of `graph` with each run one node, without the dead nodes that read a run's values."""
    new = fx.Graph()
    new.set_codegen(graph._codegen)
    env: dict[fx.Node, fx.Node] = {}
    firsts = {run.periods[0][0]: run for run in runs}
    collecting: dict[fx.Node, list[tuple[Collector, int]]] = {}  # a reader may keep the values of several loops
    for each in runs:
        if each.collector is not None:
            collecting.setdefault(each.collector.node, []).append((each.collector, len(each.periods)))
    skipped = {n for run in runs for period in run.periods for n in period}
    rolls: dict[fx.Node, Roll] = {}
    for node in graph.nodes:
        run = firsts.get(node)
        if run is not None:
            start = env[run.start] if isinstance(run.start, fx.Node) else run.start
            args = (start, *(env[v] for v in run.invariants))
            loop = new.create_node("call_function", loop_of, args, {}, name="outs" if run.collector else "out")
            if scopes_of(node):
                loop.meta[SCOPES] = scopes_of(node)
            rolls[loop] = run.roll or _roll(run)
            env[run.periods[-1][-1]] = loop
        elif node in collecting:
            env[node] = _collecting(new, node, collecting[node], env)
        elif node in dead and any(v in skipped or v not in env for v in node.all_input_nodes):
            continue
        elif node not in skipped:
            env[node] = new.node_copy(node, env.__getitem__)
    return Rolled(new, rolls)


def _collecting(new: fx.Graph, node: fx.Node, collected: list[tuple[Collector, int]], env: dict[fx.Node, fx.Node]) -> fx.Node:
    """A copy of the collector reading, in place of each list of the periods' values of a loop (and
    `count` of them), the loop's list, with the items around them added to it: `[x] + outs + [y]`."""
    args, kwargs = list(node.args), dict(node.kwargs)
    for slot in dict.fromkeys(collector.slot for collector, _ in collected):
        holder: Any = args if isinstance(slot, int) else kwargs
        items, parts, done = holder[slot], list[Any](), 0
        for collector, count in sorted((c for c in collected if c[0].slot == slot), key=lambda c: c[0].at):
            parts += [fx.map_arg(list(items[done : collector.at]), env.__getitem__)] if collector.at > done else []
            parts.append(env[items[collector.at + count - 1]])  # the loop
            done = collector.at + count
        parts += [fx.map_arg(list(items[done:]), env.__getitem__)] if done < len(items) else []
        value: Any = parts[0]
        for part in parts[1:]:
            value = new.call_function(operator.add, (value, part))
            value.meta[SCOPES] = scopes_of(node)  # written in the reader's `with` blocks
        if any(c.as_tuple for c, _ in collected if c.slot == slot):
            value = new.call_function(tuple, (value,))
            value.meta[SCOPES] = scopes_of(node)
        holder[slot] = value
    mapped_args, mapped_kwargs = fx.map_arg((tuple(args), kwargs), lambda n: n if n.graph is new else env[n])  # the lists put in place
    copy = new.create_node(node.op, node.target, mapped_args, mapped_kwargs, name=node.name, type_expr=node.type)
    copy.meta = dict(node.meta)
    return copy


def _roll(run: _Run) -> Roll:
    """The loop: its body is the second period (which reads the value the first left, where the first
    may read the same value made before the run both as that and as itself); where the first period
    lacks the combining node, the body's value after it is `first_of(index, other, combined)`."""
    body = fx.Graph()
    env: dict[fx.Node, fx.Node] = {run.periods[0][-1]: body.placeholder("carried")}
    for i, value in enumerate(run.invariants):
        env[value] = body.placeholder(f"invariant_{i}")
    indexed = bool(run.positions) and any(kind != "call" for kind, _, _ in run.positions) or run.combined is not None
    index = body.placeholder("index") if indexed else None
    copier = _BodyCopier(body, env, run, index)
    containers = [parent for _, parent in run.zipped]
    called = {offset: containers.index(parent) + 1 for kind, offset, parent in run.positions if kind == "call"}
    loop_calls: list[tuple[str, int]] = []
    for offset, node in enumerate(run.periods[1]):
        copy = copier.copy(node, offset, name="out" if offset == run.call_offset else None)  # named for what it is in the loop
        if offset == run.call_offset or offset in called:
            loop_calls.append((copy.name, called.get(offset, 0)))
        if node is run.combined:
            other = run.combined.all_input_nodes
            first = copier.other(next(v for v in other if v is not run.periods[0][-1]))
            env[node] = body.call_function(first_of, (index, first, env[node]))
    body.output(env[run.periods[1][-1]])
    call = str(run.periods[1][run.call_offset].target)
    container = call.rpartition(".")[0].rpartition(".")[2]
    zipped = tuple((children, parent, loop_variable(parent.rpartition(".")[2])) for children, parent in run.zipped)
    return Roll(body, run.children, call, loop_variable(container), run.collector is not None, indexed, zipped, tuple(loop_calls))


@dataclass(frozen=True)
class _BodyCopier:
    """Copies the body's nodes into the loop's graph, reading the loop's index where periods differ by it."""

    body: fx.Graph
    env: dict[fx.Node, fx.Node]
    run: _Run
    index: fx.Node | None

    def copy(self, node: fx.Node, offset: int, name: str | None = None, again: bool = False) -> fx.Node:
        positions = {key: kind for kind, at, key in self.run.positions if at == offset and kind != "call"}
        args = tuple(self.argument(value, key, positions) for key, value in enumerate(node.args))
        kwargs = {key: self.argument(value, key, positions) for key, value in node.kwargs.items()}
        copy = self.body.create_node(node.op, node.target, args, kwargs, name=name or node.name)
        copy.meta = {k: v for k, v in node.meta.items() if k != SCOPES}  # the loop statement is in the block
        if not again:
            self.env[node] = copy
        return copy

    def argument(self, value: Any, key: Any, positions: dict[Any, str]) -> Any:
        """An argument of a body node: the index where it is the period's number (or items of it are), an
        item at the index where it is an item at the period's number, else as the period reads it."""
        kind = positions.get(key)
        if kind == "literal":
            return self.index
        if kind == "read":
            return self.body.call_function(operator.getitem, (self.env[value.args[0]], self.index))
        mapped = fx.map_arg(value, self.env.__getitem__)
        items = {k[1] for k in positions if type(k) is tuple and k[0] == key}
        if not items:
            return mapped
        return type(value)(self.index if i in items else item for i, item in enumerate(mapped))

    def other(self, value: fx.Node) -> fx.Node:
        """The combining node's other input as the first period reads it: an item taken again (each
        branch of the `if` reads its own), else the same value."""
        combined = self.run.combined
        assert combined is not None
        key = _key_of(combined, value)
        if any(kind == "read" and at == self.run.periods[1].index(combined) and k == key for kind, at, k in self.run.positions):
            return self.body.call_function(operator.getitem, (self.env[cast(fx.Node, value.args[0])], self.index))
        if value in self.run.periods[1] and value.target is operator.getitem and set(value.users) == {combined}:
            return self.copy(value, self.run.periods[1].index(value), again=True)
        return self.env[value]


def loop_variable(container: str) -> str:
    """The loop variable: a container's name in the singular (`lins` -> `lin`, `branches` -> `branch`),
    else `layer`."""
    if container.endswith(("ches", "shes", "xes", "sses")):
        singular = container[:-2]
    elif container.endswith("s") and not container.endswith(("ss", "us", "is", "as")):
        singular = container[:-1]
    else:
        return "layer"
    short = len(singular) == 2 and not set(singular) & set("aeiouy")  # an abbreviation: `bns` -> `bn`, `fcs` -> `fc`
    return singular if (len(singular) > 2 or short) and singular.isidentifier() else "layer"
