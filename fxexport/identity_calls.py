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
from .subgraphs import copy_graph, holder_copy, with_graph


@dataclass(frozen=True)
class _Body:
    """The nodes of a module's one call, in order."""

    path: str
    nodes: tuple[fx.Node, ...]


@dataclass(frozen=True)
class _Added:
    """An identity call to add: `call` (the donor's, of its child `name`; None: a `.contiguous()`)
    copied into `body` before its node `before` (None: at the end), reading `source`, read in place of
    it by `readers`. A `.contiguous()` runs inside the module calls `stack` records."""

    body: _Body
    call: fx.Node
    name: str | None
    before: fx.Node | None
    source: fx.Node
    readers: tuple[fx.Node, ...]
    stack: dict[str, Any] | None = None


class _Mismatch(Exception):
    pass


def shared_identity_calls(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` where each module lacking just the identity calls another instance of its class makes has
    them (and the nn.Identity children); `gm` itself where none does."""
    modules = dict(gm.named_modules(remove_duplicate=False))
    if not any(type(modules.get(str(n.target))) is nn.Identity for n in gm.graph.find_nodes(op="call_module")) and not any(
        map(_is_contiguous_call, gm.graph.find_nodes(op="call_method", target="contiguous"))
    ):
        return gm  # no identity and no `.contiguous()` called: most graphs
    first = _all_additions(gm.graph, modules)
    if not first:
        return gm
    copies: dict[fx.Node, fx.Node] = {}
    graph, root = copy_graph(gm.graph, copies), holder_copy(gm)
    private: set[int] = {id(root)}  # the holders of the copy that are its own (install copies the others it changes)
    added = [_in_copy(item, copies) for item in first]
    while added:
        _apply(graph, root, private, added)
        added = _all_additions(graph, dict(root.named_modules(remove_duplicate=False)))
    graph.lint()
    return with_graph(gm, graph, root)


def _in_copy(item: _Added, copies: dict[fx.Node, fx.Node]) -> _Added:
    """`item` adding to the copy of its graph: the body's nodes are the copies' (the donor's call and
    its users, only read, stay the original's)."""
    body = _Body(item.body.path, tuple(copies[n] for n in item.body.nodes))
    before = None if item.before is None else copies[item.before]
    return replace(item, body=body, before=before, source=copies[item.source], readers=tuple(copies[n] for n in item.readers))


def _all_additions(graph: fx.Graph, modules: dict[str, nn.Module]) -> list[_Added]:
    return [a for bodies in _instances(graph, modules).values() for a in _additions(bodies, modules)]


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


def _identity_calls(body: _Body, modules: dict[str, nn.Module]) -> list[fx.Node]:
    """The body's calls of an nn.Identity child of its own, on one value."""
    return [
        n for n in body.nodes
        if n.op == "call_module" and _is_child(str(n.target), body.path) and type(modules.get(str(n.target))) is nn.Identity
        and len(n.args) == 1 and not n.kwargs and isinstance(n.args[0], fx.Node)
    ]  # fmt: skip


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


def _additions(bodies: list[_Body], modules: dict[str, nn.Module]) -> Iterator[_Added]:
    """The calls to add to each body, from the first body that it matches and that calls identity
    children of more names (all of the body's among them), or of as many and `.contiguous()` more often."""
    calls = {body.path: _identity_calls(body, modules) for body in bodies}
    names = {path: {_relative(str(c.target), path) for c in found} for path, found in calls.items()}
    copies = {body.path: sum(map(_is_contiguous_call, body.nodes)) for body in bodies}
    donors = [b for b in bodies if names[b.path] or copies[b.path]]  # few or none: 2,000 Linear layers make 2,000 bodies
    for body in bodies if donors else ():
        for donor in donors:
            if not (names[body.path] < names[donor.path] or (names[body.path] == names[donor.path] and copies[body.path] < copies[donor.path])):
                continue
            missing = {c for c in calls[donor.path] if _relative(str(c.target), donor.path) not in names[body.path]}
            try:
                found = _matched(donor, missing, body, modules)
            except _Mismatch:
                continue
            yield from found
            break


def _left_out(donor: _Body, missing: set[fx.Node], body: _Body) -> list[fx.Node]:
    """The donor's calls `body` lacks, in order: the `missing` identity calls and each `.contiguous()` of
    the donor's own where the body runs the donor's next op instead; _Mismatch where the ops differ otherwise."""
    out = []
    twins: dict[fx.Node, fx.Node] = {}
    j = 0
    for node in donor.nodes:
        if node in missing:
            out.append(node)
        elif j < len(body.nodes) and _same_op(node, body.nodes[j], donor.path, body.path) and _same_source(node, body.nodes[j], twins):
            twins[node] = body.nodes[j]
            j += 1
        elif _is_contiguous_call(node) and not _inner_calls(node, donor.path):  # a nested module's: added to it first
            out.append(node)
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


def _matched(donor: _Body, missing: set[fx.Node], body: _Body, modules: dict[str, nn.Module]) -> list[_Added]:
    """The additions that make `body` run `donor`'s code, or _Mismatch."""
    names = [_relative(str(c.target), donor.path) for c in missing]
    holder = modules.get(body.path)
    if holder is not None and any(hasattr(holder, name) for name in names):
        raise _Mismatch  # it holds something of that name: not a child the graph left out
    body = body if missing else _shared_part(body, donor, modules)
    calls = _left_out(donor, missing, body)
    left_out = set(calls)
    index = {node: i for i, node in enumerate(n for n in donor.nodes if n not in left_out)}
    position = {node: i for i, node in enumerate(donor.nodes)}
    out = []
    for call in calls:
        source = call.args[0]
        if not isinstance(source, fx.Node) or source not in index or any(user not in index for user in call.users):
            raise _Mismatch  # it reads or feeds a value outside the call: no place to map it to
        twin = body.nodes[index[source]]
        readers = tuple(body.nodes[index[user]] for user in call.users)
        for user, reader in zip(call.users, readers):
            _swapped(user.args, reader.args, call, twin, None)
            _swapped(user.kwargs, reader.kwargs, call, twin, None)
        after = next((index[n] for n in donor.nodes[position[call] + 1 :] if n in index), None)
        before = None if after is None else body.nodes[after]
        if call in missing:
            out.append(_Added(body, call, _relative(str(call.target), donor.path), before, twin, readers))
        else:
            out.append(_Added(body, call, None, before, twin, readers, _contiguous_stack(call, twin, index, body)))
    return out


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
    children: dict[str, nn.Module] = {}
    calls: dict[str, int] = {}
    for item in added:
        if item.name is None:
            new = _inserted_contiguous(graph, item)
        else:
            path = f"{item.body.path}.{item.name}"
            children[path] = root.get_submodule(str(item.call.target))
            new = _inserted(graph, item, path, calls.get(path, 0))
            calls[path] = calls.get(path, 0) + 1
        for user, reader in zip(item.call.users, item.readers):
            reader.args = _swapped(user.args, reader.args, item.call, item.source, new)
            reader.kwargs = _swapped(user.kwargs, reader.kwargs, item.call, item.source, new)
    uses = first_uses(graph)
    for path, donor in children.items():
        identity = nn.Identity()
        identity.training = donor.training
        install(root, path.split("."), identity, private, uses)


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
    new.meta = {k: v for k, v in item.call.meta.items() if k not in ("nn_module_stack", "val", "tensor_meta")}
    new.meta["nn_module_stack"] = stack
    for key in ("val", "tensor_meta"):
        if key in item.source.meta:
            new.meta[key] = item.source.meta[key]
