"""Identity calls some instances of a class make where the others run nothing.

timm builds `self.drop_path1 = DropPath(rate) if rate > 0 else nn.Identity()`. symbolic_trace keeps
a call of each nn.Identity (a leaf) but traces an eval-mode DropPath into nothing, and its
GraphModule holds only the modules its graph reads: the blocks with a DropPath have neither the
child nor the call, and came back as code of their own. Where an instance's body is another's but
for the other's identity calls, and it holds no child of those names, it gets the calls and an
nn.Identity for each child: an identity returns its input, so every value is the same, and both
run one code. The pass runs before split (split.py) and returns a copy of the GraphModule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from torch import fx, nn

from .calls import body_nodes, stack_frames
from .layers import first_uses, install
from .subgraphs import copy_graph, holder_copy, with_graph


@dataclass(frozen=True)
class _Body:
    """The nodes of a module's one call, in order, and its class."""

    path: str
    cls: object
    nodes: tuple[fx.Node, ...]


@dataclass(frozen=True)
class _Added:
    """An identity call to add: `call` (the donor's) copied into `body` before its node at `before`
    (None: at the end), reading `source`, read in place of it by `readers`."""

    body: _Body
    call: fx.Node
    name: str  # the child's name
    before: fx.Node | None
    source: fx.Node
    readers: tuple[fx.Node, ...]


class _Mismatch(Exception):
    pass


def shared_identity_calls(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` where each module lacking just the identity calls another instance of its class makes has
    them (and the nn.Identity children); `gm` itself where none does."""
    modules = dict(gm.named_modules(remove_duplicate=False))
    added = [a for bodies in _instances(gm).values() for a in _additions(bodies, modules)]
    return _with_calls(gm, added, modules) if added else gm


def _instances(gm: fx.GraphModule) -> dict[object, list[_Body]]:
    """The bodies of the modules called once, by class (classes with two or more such modules)."""
    nodes: dict[str, list[fx.Node]] = {}
    keys: dict[str, set[str]] = {}
    classes: dict[str, object] = {}
    for node in body_nodes(gm):
        for frame in stack_frames(node):
            nodes.setdefault(frame.path, []).append(node)
            keys.setdefault(frame.path, set()).add(frame.key)
            classes[frame.path] = frame.cls
    by_class: dict[object, list[_Body]] = {}
    for path, found in nodes.items():
        if path and len(keys[path]) == 1:
            by_class.setdefault(classes[path], []).append(_Body(path, classes[path], tuple(found)))
    return {cls: bodies for cls, bodies in by_class.items() if len(bodies) > 1}


def _identity_calls(body: _Body, modules: dict[str, nn.Module]) -> list[fx.Node]:
    """The body's calls of an nn.Identity child of its own, on one value."""
    return [
        n for n in body.nodes
        if n.op == "call_module" and _child_name(str(n.target), body.path) is not None and type(modules.get(str(n.target))) is nn.Identity
        and len(n.args) == 1 and not n.kwargs and isinstance(n.args[0], fx.Node)
    ]  # fmt: skip


def _child_name(target: str, path: str) -> str | None:
    name = target.removeprefix(f"{path}.")
    return name if name != target and "." not in name else None


def _additions(bodies: list[_Body], modules: dict[str, nn.Module]) -> Iterator[_Added]:
    """The calls to add to each body that has no identity call, from the first body that has and that it matches."""
    donors = [(b, calls) for b in bodies if (calls := _identity_calls(b, modules))]
    for body in bodies:
        if _identity_calls(body, modules):
            continue
        for donor, calls in donors:
            try:
                found = _matched(donor, calls, body, modules)
            except _Mismatch:
                continue
            yield from found
            break


def _matched(donor: _Body, calls: list[fx.Node], body: _Body, modules: dict[str, nn.Module]) -> list[_Added]:
    """The additions that make `body` run `donor`'s code, or _Mismatch."""
    if any(f"{body.path}.{_child_name(str(c.target), donor.path)}" in modules for c in calls):
        raise _Mismatch  # it holds a child of that name: it is not the one the graph left out
    rest = [n for n in donor.nodes if n not in set(calls)]
    if len(rest) != len(body.nodes) or not all(_same_op(a, b, donor.path, body.path) for a, b in zip(rest, body.nodes)):
        raise _Mismatch
    index = {node: i for i, node in enumerate(rest)}
    out = []
    for call in calls:
        source, after = call.args[0], _next_kept(donor.nodes, call, index)
        if not isinstance(source, fx.Node) or source not in index or any(user not in index for user in call.users):
            raise _Mismatch  # it reads or feeds a value outside the call: no place to map it to
        twin = body.nodes[index[source]]
        readers = tuple(body.nodes[index[user]] for user in call.users)
        for user, reader in zip(call.users, readers):
            _swapped(user.args, reader.args, call, twin, None)
            _swapped(user.kwargs, reader.kwargs, call, twin, None)
        name = str(call.target).removeprefix(f"{donor.path}.")
        out.append(_Added(body, call, name, None if after is None else body.nodes[after], twin, readers))
    return out


def _next_kept(nodes: tuple[fx.Node, ...], call: fx.Node, index: dict[fx.Node, int]) -> int | None:
    """The position, among the kept nodes, of the first one after `call`; None when none follows."""
    for node in nodes[nodes.index(call) + 1 :]:
        if node in index:
            return index[node]
    return None


def _same_op(a: fx.Node, b: fx.Node, a_path: str, b_path: str) -> bool:
    """The same op on the same target: a module or attribute by its path inside each instance."""
    if a.op != b.op:
        return False
    if a.op in ("call_module", "get_attr"):
        return str(a.target).removeprefix(a_path) == str(b.target).removeprefix(b_path) != str(a.target)
    return a.target == b.target


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


def _with_calls(gm: fx.GraphModule, added: list[_Added], modules: dict[str, nn.Module]) -> fx.GraphModule:
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    children: dict[str, nn.Module] = {}
    for item in added:
        path = f"{item.body.path}.{item.name}"
        children[path] = modules[str(item.call.target)]
        new = _inserted(graph, item, copies, path)
        for user, reader in zip(item.call.users, item.readers):
            copied = copies[reader]
            copied.args = _swapped(user.args, copied.args, item.call, copies[item.source], new)
            copied.kwargs = _swapped(user.kwargs, copied.kwargs, item.call, copies[item.source], new)
    graph.lint()
    root = holder_copy(gm)
    private, uses = {id(root)}, first_uses(graph)
    for path, donor in children.items():
        identity = nn.Identity()
        identity.training = donor.training
        install(root, path.split("."), identity, private, uses)
    return with_graph(gm, graph, root)


def _inserted(graph: fx.Graph, item: _Added, copies: dict[fx.Node, fx.Node], path: str) -> fx.Node:
    """The call of the new child at `path`, placed where the donor's is, with the body's module stack and the child's frame."""
    place = graph.inserting_before(copies[item.before]) if item.before is not None else graph.inserting_after(copies[item.body.nodes[-1]])
    with place:
        new = graph.call_module(path, (copies[item.source],))
    stack: dict[str, tuple[str, object]] = {}
    for frame in stack_frames(item.body.nodes[0]):
        stack[frame.key] = (frame.path, frame.cls)
        if frame.path == item.body.path:
            break
    stack[path] = (path, nn.Identity)
    new.meta = {k: v for k, v in item.call.meta.items() if k not in ("nn_module_stack", "val", "tensor_meta")}
    new.meta["nn_module_stack"] = stack
    for key in ("val", "tensor_meta"):
        if key in copies[item.source].meta:
            new.meta[key] = copies[item.source].meta[key]
    return new
