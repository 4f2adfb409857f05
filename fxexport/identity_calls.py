"""Identity calls some instances of a class make where the others run nothing.

timm builds `self.drop_path1 = DropPath(rate) if rate > 0 else nn.Identity()`. symbolic_trace keeps
a call of each nn.Identity (a leaf) but traces an eval-mode DropPath into nothing, and its
GraphModule holds only the modules its graph reads: the blocks with a DropPath have neither the
child nor the call, and came back as code of their own. Where an instance holds nothing of some
names another instance of its class calls an identity child by, and its body is that one's but for
those calls (the same ops on the same targets, inside the same module calls; identity children
both call, as timm's `ls1`, included), it gets the calls and an nn.Identity for each child: an
identity returns its input, so every value is the same, and both run one code.

torch.export leaves out a `.contiguous()` whose tensor is already contiguous (a window partition of
one window: timm's davit and swinv2_cr, transformers' swin): where another instance of the class
calls it at that place and is otherwise the same op for op (the calls of children only it builds
aside), the instance gets the call, on a value its recorded `meta["val"]` says is contiguous, so the
call returns that tensor itself.

torch.export records no call of an nn.Identity at all (timm's MbConvBlock: `shortcut = self.shortcut(x)`,
a Downsample2d in the first block of a stage, an identity in the others; bottleneck_attn's `self.pool`):
where the class's `forward` calls the child whatever the instance (source_names.called_always) and
another instance's call of it reads one value and gives one, the instances lacking it get an
nn.Identity and its call likewise. Where the source calls it under an `if` (torchvision's
`if self.downsample is not None:`), the child stays optional (optional_children.py).

Nested classes are done innermost first (a body matches only once the bodies inside it do). The
pass runs before split (split.py) and works on a copy of the GraphModule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import fx, nn

from .calls import graph_body_nodes, stack_frames
from .layers import first_uses, install
from .source_names import called_always, return_chains
from .subgraphs import copy_graph, holder_copy, with_graph


@dataclass(frozen=True)
class _Body:
    """The nodes of a module's one call, in order."""

    path: str
    nodes: tuple[fx.Node, ...]


@dataclass(frozen=True)
class _Run:
    """A call of a donor's that others run nothing in place of: of its child `name` (at `child`; None: a
    `.contiguous()`), its `nodes` in order, reading one value `input` and giving `output`, read by `users`.
    `always`: the class's forward calls the child whatever the instance; only then may the input be made
    before the body (`shortcut = self.shortcut(x)`) or the output read after it (`return self.pool(out)`)."""

    name: str | None
    child: str
    nodes: tuple[fx.Node, ...]
    input: fx.Node
    output: fx.Node
    users: tuple[fx.Node, ...]
    always: bool = False


@dataclass(frozen=True)
class _Added:
    """An identity call to add: the donor's `run` copied into `body` before its node `before` (None: at
    the end), reading `source`, read in place of it by `readers` (each user of the run's output inside
    the donor, and the body's node standing for it) and by `outside` (where the run ends the donor: what
    reads the body's last value after it, or the body's nodes reading `source` where it is added at the
    end). A `.contiguous()` runs inside the module calls `stack` records."""

    body: _Body
    run: _Run
    before: fx.Node | None
    source: fx.Node
    readers: tuple[tuple[fx.Node, fx.Node], ...]
    outside: tuple[fx.Node, ...] = ()
    stack: dict[str, Any] | None = None


class _Mismatch(Exception):
    pass


def shared_identity_calls(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` where each module lacking just the identity calls another instance of its class makes has
    them (and the nn.Identity children); `gm` itself where none does."""
    modules = dict(gm.named_modules(remove_duplicate=False))
    elides = _elides_identities(gm.graph)
    if not elides and not any(type(modules.get(str(n.target))) is nn.Identity for n in gm.graph.find_nodes(op="call_module")) and not any(
        map(_is_contiguous_call, gm.graph.find_nodes(op="call_method", target="contiguous"))
    ):
        return gm  # no identity and no `.contiguous()` called: most traced graphs
    first = _all_additions(gm.graph, modules, elides)
    if not first:
        return gm
    copies: dict[fx.Node, fx.Node] = {}
    graph, root = copy_graph(gm.graph, copies), holder_copy(gm)
    private: set[int] = {id(root)}  # the holders of the copy that are its own (install copies the others it changes)
    added = [_in_copy(item, copies) for item in first]
    try:
        while added:
            _apply(graph, root, private, added)
            added = _all_additions(graph, dict(root.named_modules(remove_duplicate=False)), elides)
    except _Mismatch:
        return gm  # an addition another one changed the reads of (none known): the graph as it was
    graph.lint()
    return with_graph(gm, graph, root)


def _elides_identities(graph: fx.Graph) -> bool:
    """True for a graph that records no call of an nn.Identity: one with the values its ops made
    (torch.export's `val`, dynamo's `example_value`); symbolic_trace calls every identity as a leaf."""
    first = next((n for n in graph.nodes if n.op == "call_function"), None)
    return first is not None and ("val" in first.meta or "example_value" in first.meta)


def _in_copy(item: _Added, copies: dict[fx.Node, fx.Node]) -> _Added:
    """`item` adding to the copy of its graph: the body's nodes are the copies' (the donor's call and
    its users, only read, stay the original's)."""
    body = _Body(item.body.path, tuple(copies[n] for n in item.body.nodes))
    before = None if item.before is None else copies[item.before]
    readers = tuple((user, copies[reader]) for user, reader in item.readers)
    return replace(item, body=body, before=before, source=copies[item.source], readers=readers, outside=tuple(copies[n] for n in item.outside))


def _all_additions(graph: fx.Graph, modules: dict[str, nn.Module], elides: bool) -> list[_Added]:
    """The additions to the innermost bodies that gain any: one inside another reads values the outer
    one's may change (a stage's downsample read by its first block); the outer ones are found anew after."""
    found = [
        a for (cls, bodies) in _instances(graph, modules).items()
        for a in _additions(bodies, modules, called_always(cls) if elides else frozenset(), return_chains(cls) if elides else ())
    ]  # fmt: skip
    paths = {item.body.path for item in found}
    return _apart([item for item in found if not any(path.startswith(f"{item.body.path}.") for path in paths)])


def _apart(added: list[_Added]) -> list[_Added]:
    """The additions, but one whose rewired nodes another's rewires too, left for the next round: a block
    ending in an identity read by the next one starting with another rewires the same node, each expecting
    the value the other replaces (the next round finds the second anew)."""
    taken: set[fx.Node] = set()
    out = []
    for item in added:
        touched = {reader for _, reader in item.readers} | set(item.outside)
        if touched & taken:
            continue
        taken |= touched
        out.append(item)
    return out


def _instances(graph: fx.Graph, modules: dict[str, nn.Module]) -> dict[object, list[_Body]]:
    """The bodies of the modules called once, by class (classes with two or more such modules)."""
    nodes: dict[str, list[fx.Node]] = {}
    keys: dict[str, set[str]] = {}
    classes: dict[str, object] = {}
    for node in graph_body_nodes(graph, modules):
        for frame in stack_frames(node):
            nodes.setdefault(frame.path, []).append(node)
            keys.setdefault(frame.path, set()).add(frame.key)
            classes[frame.path] = frame.cls
    by_class: dict[object, list[_Body]] = {}
    for path, found in nodes.items():
        if path and len(keys[path]) == 1:
            by_class.setdefault(classes[path], []).append(_Body(path, tuple(found)))
    return {cls: bodies for cls, bodies in by_class.items() if len(bodies) > 1}


def _identity_calls(body: _Body, modules: dict[str, nn.Module], always: frozenset[str], children: dict[str, list[fx.Node]]) -> list[_Run]:
    """The body's calls of an nn.Identity child of its own on one value, and of its children `always`
    called (the class's forward calls them whatever the instance; `children`: their calls' nodes) that
    read one value and give one."""
    found = [
        _leaf_run(n, body.path, always) for n in body.nodes
        if n.op == "call_module" and _is_child(str(n.target), body.path) and type(modules.get(str(n.target))) is nn.Identity
        and len(n.args) == 1 and not n.kwargs and isinstance(n.args[0], fx.Node)
    ]  # fmt: skip
    taken = {run.name for run in found}
    for name, nodes in children.items():
        run = _one_value_run(name, f"{body.path}.{name}", nodes) if name in always and name not in taken else None
        if run is not None and _adjacent_in(nodes, body):
            found.append(run)
    return found


def _child_calls(body: _Body) -> dict[str, list[fx.Node]]:
    """The nodes of each direct child's call, by the child's name (not of a child called twice)."""
    nodes: dict[str, list[fx.Node]] = {}
    keys: dict[str, set[str]] = {}
    for node in body.nodes:
        frame = next((f for f in stack_frames(node) if _relative(f.path, body.path)), None)
        if frame is not None and _is_child(frame.path, body.path):
            name = _relative(frame.path, body.path)
            nodes.setdefault(name, []).append(node)
            keys.setdefault(name, set()).add(frame.key)
    return {name: found for name, found in nodes.items() if len(keys[name]) == 1}


def _one_value_run(name: str, child: str, nodes: list[fx.Node]) -> _Run | None:
    """The call of `child` made of `nodes` where it reads one value (its weights aside) and gives one; else None."""
    inside = set(nodes)
    inputs = {i for n in nodes for i in n.all_input_nodes if i not in inside and i.op != "get_attr"}
    outputs = [n for n in nodes if any(u not in inside for u in n.users)]
    if len(inputs) != 1 or len(outputs) != 1:
        return None
    output = outputs[0]
    return _Run(name, child, tuple(nodes), inputs.pop(), output, tuple(u for u in output.users if u not in inside), always=True)


def _leaf_run(node: fx.Node, path: str, always: frozenset[str]) -> _Run:
    """The call of an nn.Identity child (a leaf the graph calls) as a run of its own."""
    name = _relative(str(node.target), path)
    source = node.args[0]
    assert isinstance(source, fx.Node)
    return _Run(name, str(node.target), (node,), source, node, tuple(node.users), name in always)


def _adjacent_in(nodes: list[fx.Node], body: _Body) -> bool:
    """True where `nodes` stand one after another in the body."""
    start = body.nodes.index(nodes[0])
    return body.nodes[start : start + len(nodes)] == tuple(nodes)


def _contiguous_run(node: fx.Node) -> _Run:
    source = node.args[0]
    assert isinstance(source, fx.Node)
    return _Run(None, "", (node,), source, node, tuple(node.users))


def _is_contiguous_call(node: fx.Node) -> bool:
    """`x.contiguous()`: returns `x` itself where `x` is contiguous."""
    return node.op == "call_method" and node.target == "contiguous" and len(node.args) == 1 and not node.kwargs and isinstance(node.args[0], fx.Node)


def _is_contiguous(node: fx.Node) -> bool:
    """True where the value `node` made, as recorded (torch.export's `meta["val"]`), is contiguous."""
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and value.is_contiguous()


def _is_child(path: str, owner: str) -> bool:
    name = _relative(path, owner)
    return bool(name) and "." not in name


def _relative(path: str, owner: str) -> str:
    """`path` inside the module at `owner` (`conv` for `blocks.0.conv` in `blocks.0`), else ""."""
    return path[len(owner) + 1 :] if path.startswith(f"{owner}.") else ""


def _additions(
    bodies: list[_Body], modules: dict[str, nn.Module], always: frozenset[str], returns: tuple[tuple[str, ...], ...] = ()
) -> Iterator[_Added]:
    """The calls to add to each body, from the first body that it matches and that calls identity
    children of names it calls none of (all of the body's identity children among its), or all the body
    calls and `.contiguous()` more often.
    `always`: the children the class's forward calls whatever the instance, in a graph that records no
    identity call (see _identity_calls); `returns`: the children each of its returns calls on its value
    (source_names.return_chains), where a body may get those the others end in (_at_the_end)."""
    children = {body.path: _child_calls(body) if always else {} for body in bodies}
    calls = {body.path: _identity_calls(body, modules, always, children[body.path]) for body in bodies}
    names = {path: {run.name for run in found} for path, found in calls.items()}
    called: dict[str, set[str | None]] = {path: {*children[path], *names[path]} for path in names}
    copies = {body.path: sum(map(_is_contiguous_call, body.nodes)) for body in bodies}
    donors = [b for b in bodies if names[b.path] or copies[b.path]]  # few or none: 2,000 Linear layers make 2,000 bodies
    every, most = set().union(*names.values()), max(copies.values())
    for body in bodies if donors else ():
        if names[body.path] == every and copies[body.path] == most:
            continue  # no donor has more
        found = []
        missing_of = {donor.path: {run for run in calls[donor.path] if run.name not in called[body.path]} for donor in donors}
        for donor in donors:
            missing = missing_of[donor.path]
            if not (names[body.path] <= names[donor.path] if missing else copies[body.path] < copies[donor.path]):
                continue
            try:
                found = _matched(donor, missing, body, modules)
            except _Mismatch:
                continue
            break
        holder = modules.get(body.path)
        for donor in donors if not found and returns else ():
            missing = missing_of[donor.path]
            if not missing or not names[body.path] <= names[donor.path]:
                continue
            if holder is not None and any(hasattr(holder, str(run.name)) for run in missing):
                continue  # it holds something of that name: not a child the graph left out (as _matched)
            found = _at_the_end(donor, missing, body, calls, returns)
            if found:
                break
        yield from found


def _at_the_end(donor: _Body, missing: set[_Run], body: _Body, calls: dict[str, list[_Run]], returns: tuple[tuple[str, ...], ...]) -> list[_Added]:
    """The first of the calls `body` lacks where the donor ends in calls of children the class's forward
    always makes, one reading the last's value, every return of the forward calls them so on its value
    (`returns`; timm's MobileOneBlock: `return self.act(self.se(out))`, also before), and the body ends in
    those of them it makes, in that order: the call, where the donor makes it (at the end: before what
    reads the body's value after it). Whatever else the two run, an identity returns its input: every
    value is the same. [] where they do not end so."""
    ending, body_ending = _ending(donor, calls[donor.path]), _ending(body, calls[body.path])
    if ending is None or body_ending is None or not missing <= set(ending) or not all(run.always for run in ending):
        return []
    names = [run.name for run in ending]
    if not returns or any(chain[: len(names)] != tuple(reversed(names)) for chain in returns):
        return []
    if [run.name for run in body_ending] != [name for name in names if name not in {run.name for run in missing}]:
        return []
    first = next(i for i, run in enumerate(ending) if run in missing)
    made = {run.name: run for run in body_ending}
    if first and names[first - 1] not in made:
        return []  # the call before it is missing too: added first
    source = made[names[first - 1]].output if first else body_ending[0].input if body_ending else body.nodes[-1]
    after = next((made[name] for name in names[first + 1 :] if name in made), None)
    inside = set(body.nodes)
    readers = tuple(u for u in source.users if u in inside)
    if after is not None:  # what the next call reads, it reads of the new one: all the body reads of it
        if after.input is not source or not readers or any(u not in after.nodes for u in readers):
            return []
        return [_Added(body, ending[first], after.nodes[0], source, (), readers)]
    outside = tuple(u for u in source.users if u not in inside)
    return [_Added(body, ending[first], None, source, (), outside)] if outside and not readers and source is body.nodes[-1] else []


def _ending(body: _Body, runs: list[_Run]) -> list[_Run] | None:
    """The runs the body ends in, each reading the one before's value, in order; None where its last
    value is read inside it too, or by more than the nodes after it."""
    inside = set(body.nodes)
    last = body.nodes[-1]
    if any(u in inside for u in last.users) or sum(any(u not in inside for u in n.users) for n in body.nodes) != 1:
        return None
    by_output = {run.output: run for run in runs}
    out: list[_Run] = []
    end = len(body.nodes)
    value = last
    while value in by_output:
        run = by_output[value]
        if body.nodes[end - len(run.nodes) : end] != run.nodes:
            break
        out.insert(0, run)
        end -= len(run.nodes)
        value = run.input
    return out


def _left_out(donor: _Body, missing: set[_Run], body: _Body) -> list[_Run]:
    """The donor's calls `body` lacks, in order: the `missing` identity calls and each `.contiguous()` of
    the donor's own where the body runs the donor's next op instead; _Mismatch where the ops differ otherwise."""
    out = []
    twins: dict[fx.Node, fx.Node] = {}
    runs = {node: run for run in missing for node in run.nodes}
    j = 0
    for node in donor.nodes:
        if node in runs:
            if node is runs[node].nodes[0]:
                out.append(runs[node])
        elif j < len(body.nodes) and _same_op(node, body.nodes[j], donor.path, body.path) and _same_source(node, body.nodes[j], twins):
            twins[node] = body.nodes[j]
            j += 1
        elif _is_contiguous_call(node) and not _inner_calls(node, donor.path):  # a nested module's: added to it first
            out.append(_contiguous_run(node))
        else:
            raise _Mismatch
    if j != len(body.nodes) or not out:
        raise _Mismatch
    return out


def _same_source(node: fx.Node, twin: fx.Node, twins: dict[fx.Node, fx.Node]) -> bool:
    """For two `.contiguous()` calls: True when the body's reads the value standing for the donor's (two
    calls in a row, `a.contiguous()` and `b.contiguous()`, pair by what they read, not by their order)."""
    if not _is_contiguous_call(node):
        return True
    source = node.args[0]
    return not isinstance(source, fx.Node) or source not in twins or twins[source] is twin.args[0]


def _matched(donor: _Body, missing: set[_Run], body: _Body, modules: dict[str, nn.Module]) -> list[_Added]:
    """The additions that make `body` run `donor`'s code, or _Mismatch."""
    holder = modules.get(body.path)
    if holder is not None and any(hasattr(holder, str(run.name)) for run in missing):
        raise _Mismatch  # it holds something of that name: not a child the graph left out
    body = body if missing else _shared_part(body, donor, modules)
    runs = _left_out(donor, missing, body)
    left_out = {node for run in runs for node in run.nodes}
    index = {node: i for i, node in enumerate(n for n in donor.nodes if n not in left_out)}
    position = {node: i for i, node in enumerate(donor.nodes)}
    out = []
    for run in runs:
        users = [user for user in run.users if user in index]
        if any(user in left_out for user in run.users) or (not run.always and (len(users) != len(run.users) or run.input not in index)):
            raise _Mismatch  # read by another call left out; or, of a call the source may skip, a value outside the body
        twin = _twin(run, users, donor, body, index)
        readers = tuple((user, body.nodes[index[user]]) for user in users)
        for user, reader in readers:
            _swapped(user.args, reader.args, run.output, twin, None)
            _swapped(user.kwargs, reader.kwargs, run.output, twin, None)
        after = next((index[n] for n in donor.nodes[position[run.nodes[-1]] + 1 :] if n in index), None)
        before = None if after is None else body.nodes[after]
        outside = _read_after(run, users, twin, donor, body, position)
        stack = None if run.name is not None else _contiguous_stack(run.output, twin, index, body)
        out.append(_Added(body, run, before, twin, readers, outside, stack))
    return out


def _twin(run: _Run, users: list[fx.Node], donor: _Body, body: _Body, index: dict[fx.Node, int]) -> fx.Node:
    """The body's value standing for the one the run reads: its node's where the donor's run reads a value of
    the donor's; else (the donor's input, as `shortcut = self.shortcut(x)`) the one value the body reads
    where the donor reads that input or the run's output, made before the body; _Mismatch where none is."""
    if run.input in index:
        return body.nodes[index[run.input]]
    if run.input in donor.nodes:
        raise _Mismatch  # made inside the donor by another call left out
    readers = [u for u in run.input.users if u in index]
    found = {t for u in readers for t in _read_at((u.args, u.kwargs), _args_of(body.nodes[index[u]]), run.input)}
    found |= {t for u in users for t in _read_at((u.args, u.kwargs), _args_of(body.nodes[index[u]]), run.output)}
    if len(found) != 1:
        raise _Mismatch
    twin = found.pop()
    if not isinstance(twin, fx.Node) or twin in body.nodes:
        raise _Mismatch
    return twin


def _args_of(node: fx.Node) -> tuple[Any, Any]:
    return node.args, node.kwargs


def _read_at(value: Any, twin: Any, target: fx.Node) -> Iterator[Any]:
    """What `twin` holds where `value` holds `target` (their args alike)."""
    if value is target:
        yield twin
    elif isinstance(value, (tuple, list)) and isinstance(twin, (tuple, list)) and len(twin) == len(value):
        for v, t in zip(value, twin):
            yield from _read_at(v, t, target)
    elif isinstance(value, dict) and isinstance(twin, dict) and twin.keys() == value.keys():
        for key in value:
            yield from _read_at(value[key], twin[key], target)


def _read_after(run: _Run, users: list[fx.Node], twin: fx.Node, donor: _Body, body: _Body, position: dict[fx.Node, int]) -> tuple[fx.Node, ...]:
    """Where the run's output is read after the donor (it ends the donor, as `return self.pool(out)`): the
    nodes reading the body's value `twin` after the body, which read the new call instead; () where it is not."""
    if len(users) == len(run.users):
        return ()
    if twin not in body.nodes or any(u not in position for u in run.input.users):
        raise _Mismatch  # the run's input is read after the donor too: no telling which reads the call
    inside = set(body.nodes)
    outside = tuple(u for u in twin.users if u not in inside)
    if not outside:
        raise _Mismatch
    return outside


def _shared_part(body: _Body, donor: _Body, modules: dict[str, nn.Module]) -> _Body:
    """The body without the nodes that run in calls of children the donor has none of (timm swinv2_cr's
    last block's `norm3`, an nn.Identity the graph does not hold in the others): a `.contiguous()` the
    body lacks is added to the code both run."""
    holder = modules.get(donor.path)
    if holder is None:
        return body

    def own_child(node: fx.Node) -> bool:
        inner = _inner_calls(node, body.path)
        return bool(inner) and not hasattr(holder, inner[0][0].split(".")[0])

    return _Body(body.path, tuple(n for n in body.nodes if not own_child(n)))


def _contiguous_stack(call: fx.Node, twin: fx.Node, index: dict[fx.Node, int], body: _Body) -> dict[str, Any]:
    """The module calls a `.contiguous()` added to `body` runs inside: those of the body's node that stands
    where a node of the donor running inside the call's module calls does (its value, else a reader); _Mismatch
    where the body's value is not contiguous (the call would copy it) or no such node is."""
    if not _is_contiguous(twin):
        raise _Mismatch
    frames = stack_frames(call)
    for node in (call.args[0], *call.users):
        if isinstance(node, fx.Node) and stack_frames(node) == frames:
            return dict(body.nodes[index[node]].meta.get("nn_module_stack") or {})
    raise _Mismatch


def _same_op(a: fx.Node, b: fx.Node, a_path: str, b_path: str) -> bool:
    """The same op on the same target (a module by its path inside each instance), inside the same module calls."""
    if a.op != b.op or _inner_calls(a, a_path) != _inner_calls(b, b_path):
        return False
    if a.op == "call_module":
        return _relative(str(a.target), a_path) == _relative(str(b.target), b_path) != ""
    return a.target == b.target


def _inner_calls(node: fx.Node, path: str) -> list[tuple[str, object]]:
    """The module calls `node` runs inside, below the module at `path`: their paths inside it and classes."""
    return [(_relative(f.path, path), f.cls) for f in stack_frames(node) if _relative(f.path, path)]


def _swapped(value: Any, twin: Any, call: fx.Node, source: fx.Node, new: fx.Node | None) -> Any:
    """`twin` with `new` where `value` reads `call` (each such place of `twin` reads `source`, else _Mismatch)."""
    if value is call:
        if twin is not source:
            raise _Mismatch
        return new
    if isinstance(value, (tuple, list)):
        if type(twin) is not type(value) or len(twin) != len(value):
            raise _Mismatch
        return type(value)(_swapped(v, t, call, source, new) for v, t in zip(value, twin))
    if isinstance(value, dict):
        if not isinstance(twin, dict) or twin.keys() != value.keys():
            raise _Mismatch
        return {k: _swapped(value[k], twin[k], call, source, new) for k in value}
    return twin


def _apply(graph: fx.Graph, root: nn.Module, private: set[int], added: list[_Added]) -> None:
    """Add the calls to `graph` (the bodies' nodes are its own) and their children under `root`."""
    children: dict[str, str] = {}  # the path of each new identity: the donor's child's
    calls: dict[str, int] = {}
    for item in added:
        if item.run.name is None:
            new = _inserted_contiguous(graph, item)
        else:
            path = f"{item.body.path}.{item.run.name}"
            children[path] = item.run.child
            new = _inserted(graph, item, path, calls.get(path, 0))
            calls[path] = calls.get(path, 0) + 1
        for user, reader in item.readers:
            reader.args = _swapped(user.args, reader.args, item.run.output, item.source, new)
            reader.kwargs = _swapped(user.kwargs, reader.kwargs, item.run.output, item.source, new)
        for reader in item.outside:
            reader.replace_input_with(item.source, new)
    uses = first_uses(graph)
    for path, donor in children.items():
        identity = nn.Identity()
        identity.training = _training(root, (donor, path.rpartition(".")[0]))
        install(root, path.split("."), identity, private, {**uses, **_sibling_order(root, path, donor)})


def _sibling_order(root: nn.Module, path: str, donor: str) -> dict[str, dict[str, int]]:
    """Where the new identity at `path` stands among its siblings: where the donor's child stands among
    its own (timm's `res_scale1` between `norm1` and `norm2`, as its class builds them), by the holder's
    path as first_uses gives it; {} where the root holds no donor's child (it holds no tensor)."""
    holder, _, name = donor.rpartition(".")
    try:
        order = list(root.get_submodule(holder)._modules)
    except AttributeError:
        return {}
    if name not in order:
        return {}
    return {path.rpartition(".")[0]: {child: i for i, child in enumerate(order)}}


def _training(root: nn.Module, paths: tuple[str, ...]) -> bool:
    """The training flag of the first module of `paths` the root holds (the donor's child, else the
    body's module; torch.export's GraphModule holds neither where they hold no tensors), else the root's."""
    for path in paths:
        try:
            return root.get_submodule(path).training
        except AttributeError:
            continue
    return root.training


def _inserted_contiguous(graph: fx.Graph, item: _Added) -> fx.Node:
    """The `.contiguous()` the body lacks, placed where the donor's is, inside the module calls `item.stack`."""
    with _place(graph, item):
        new = graph.call_method("contiguous", (item.source,))
    _set_meta(new, item, item.stack or {})
    return new


def _place(graph: fx.Graph, item: _Added) -> Any:
    return graph.inserting_before(item.before) if item.before is not None else graph.inserting_after(item.body.nodes[-1])


def _inserted(graph: fx.Graph, item: _Added, path: str, earlier: int) -> fx.Node:
    """The call of the new child at `path`, placed where the donor's is, with the body's module stack
    and the child's frame (keyed `path@1` for its second call, as symbolic_trace keys it)."""
    with _place(graph, item):
        new = graph.call_module(path, (item.source,))
    stack: dict[str, tuple[str, object]] = {}
    for frame in stack_frames(item.body.nodes[0]):
        stack[frame.key] = (frame.path, frame.cls)
        if frame.path == item.body.path:
            break
    stack[f"{path}@{earlier}" if earlier else path] = (path, nn.Identity)
    _set_meta(new, item, stack)
    return new


def _set_meta(new: fx.Node, item: _Added, stack: dict[str, Any]) -> None:
    """The donor's call's meta (its source line) but the module calls, and the value it returns: its input's."""
    new.meta = {k: v for k, v in item.run.output.meta.items() if k not in ("nn_module_stack", "val", "tensor_meta")}
    new.meta["nn_module_stack"] = stack
    for key in ("val", "tensor_meta"):
        if key in item.source.meta:
            new.meta[key] = item.source.meta[key]
