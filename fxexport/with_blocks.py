"""`with torch.no_grad():` and `with torch.autocast(...):` regions of a torch.export graph, written as such.

torch.export records a `with` block that changes the grad or autocast mode as a higher-order op
(`wrap_with_set_grad_enabled(False, submod_3, ...)`, `wrap_with_autocast("cpu", torch.bfloat16,
False, False, submod_1, ...)`) whose body is a GraphModule of its own. Exported as recorded, that
is a `torch.ops.higher_order` call, its body a class held at the root, and every module called
inside it (timm efficientvit's attention, the rotary embedding of a Llama) handed that class
down as an input. Here each such call is replaced by its body's nodes, in its place, each marked
with the block it ran in (scopes.py: the context manager's code, and the module whose forward
the `with` statement is in); forward.py writes the nodes of one block inside one `with`
statement. The mode the body runs in is the one the op set: the values are the same.

dynamo records the same blocks as calls that change the mode and restore it
(`torch._C._set_grad_enabled(False)` ... `(True)`, `_enter_autocast` ... `_exit_autocast`): the
nodes between such calls are marked alike, and the calls dropped (`_marked_between`). Blocks of one
mode that follow each other are one (`_join_adjacent`): torch.export cuts a block where the grad
mode changes inside it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from torch import fx

from .calls import stack_frames
from .names import quote
from .scopes import SCOPES, Scope, common_prefix
from .subgraphs import copy_graph, holder_copy, with_graph


def _recorded_autocast_code(args: tuple[object, ...]) -> str | None:
    """`torch.autocast(...)` as torch.export records it: the cache flag given, and the dtype where enabled."""
    _, dtype, enabled, cache_enabled = args
    return None if not isinstance(cache_enabled, bool) or (enabled is True and dtype is None) else _autocast_code(args)


def _autocast_code(args: tuple[object, ...]) -> str | None:
    """`torch.autocast(...)` with the arguments it was entered with, None where left out (dynamo records
    them so); an enabled one writes its `dtype` and `cache_enabled` out where given: torch.export records
    the cache off where the source left it at its default, and exporting the export must record what
    this one did. A disabled one neither: they do nothing then."""
    device, dtype, enabled, cache_enabled = args
    if not isinstance(device, str) or not isinstance(enabled, bool):
        return None
    if dtype is not None and not isinstance(dtype, torch.dtype) or cache_enabled is not None and not isinstance(cache_enabled, bool):
        return None
    given = [quote(device)]
    given += [f"dtype={dtype!r}"] if dtype is not None and enabled else []
    given += [] if enabled else ["enabled=False"]
    given += [f"cache_enabled={cache_enabled!r}"] if cache_enabled is not None and enabled else []
    return f"torch.autocast({', '.join(given)})"


def _grad_code(args: tuple[object, ...]) -> str | None:
    (enabled,) = args
    if not isinstance(enabled, bool):
        return None
    return "torch.enable_grad()" if enabled else "torch.no_grad()"


@dataclass(frozen=True)
class _Op:
    """A region op: its kind (scopes.Scope), how many arguments come before its body, the code of its
    context manager from those."""

    kind: str
    count: int
    code: Callable[[tuple[object, ...]], str | None]


_AUTOCAST, _GRAD = _Op("autocast", 4, _recorded_autocast_code), _Op("grad", 1, _grad_code)
_REGIONS: dict[object, _Op] = {}
for _name, _op in (("wrap_with_autocast", _AUTOCAST), ("wrap_with_set_grad_enabled", _GRAD)):
    if hasattr(torch.ops.higher_order, _name):
        _REGIONS[getattr(torch.ops.higher_order, _name)] = _op

_KEYS = "fxexport_scope_keys"  # node.meta while inlining: the numbers of its blocks, outermost first


@dataclass
class _Blocks:
    """The blocks found so far, by number; a number merged into an earlier block's points at it."""

    scopes: dict[int, Scope] = field(default_factory=dict)
    merged: dict[int, int] = field(default_factory=dict)

    def new(self, code: str, op: _Op, args: tuple[object, ...], owner: str) -> int:
        key = len(self.scopes)
        self.scopes[key] = Scope(code, op.kind, args, owner, key)
        return key

    def merge(self, key: int, into: int) -> None:
        """The block `key` goes on where `into` ended: one block, written in the forward both were recorded in."""
        first, then = self.scopes[into], self.scopes[key]
        self.scopes[into] = Scope(first.code, first.kind, first.args, _common_path(first.owner, then.owner), first.key)
        self.merged[key] = into

    def resolved(self, key: int) -> int:
        while key in self.merged:
            key = self.merged[key]
        return key

    def same_mode(self, a: int, b: int) -> bool:
        first, second = self.scopes[a], self.scopes[b]
        return (first.code, first.kind, first.args) == (second.code, second.kind, second.args)

    def scope(self, key: int) -> Scope:
        return self.scopes[self.resolved(key)]


def _common_path(a: str, b: str) -> str:
    return ".".join(common_prefix(a.split("."), b.split(".")))


def _owner(node: fx.Node) -> str:
    """The path of the module whose forward recorded the node."""
    frames = stack_frames(node)
    return frames[-1].path if frames else ""


def inline_with_blocks(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with every grad or autocast region it can read marked with its block: a higher-order op's
    body in its place, or the nodes between a mode's change and its restoring (`_marked_between`);
    `gm` itself if it has none. The input GraphModule is not changed."""
    regions = any(_region(n) for n in gm.graph.nodes)
    markers = any(_marker(n) is not None for n in gm.graph.nodes)
    if not regions and not markers:
        return gm
    holder = holder_copy(gm)
    blocks = _Blocks()
    graph = _inlined(gm, holder, blocks) if regions else None
    inlined = graph is not None
    graph = graph if graph is not None else copy_graph(gm.graph)
    if not (_marked_between(graph, blocks) if markers else False) and not inlined:
        return gm
    _join_adjacent(graph, blocks)
    for node in graph.nodes:
        keys = node.meta.pop(_KEYS, ())
        if keys:
            node.meta[SCOPES] = tuple(blocks.scope(k) for k in keys)
    graph.lint()
    return with_graph(gm, graph, holder)


_ENTER_AUTOCAST = getattr(torch.amp.autocast_mode, "_enter_autocast", None)
_EXIT_AUTOCAST = getattr(torch.amp.autocast_mode, "_exit_autocast", None)


def _marker(node: fx.Node) -> str | None:
    """What a node dynamo records for a `with` does: "grad" (`torch._C._set_grad_enabled(False)`),
    "enter" or "exit" (`torch.amp.autocast_mode._enter_autocast("cpu", None, False, None)`)."""
    if node.op != "call_function" or node.kwargs:
        return None
    if node.target is torch._C._set_grad_enabled and len(node.args) == 1 and isinstance(node.args[0], bool):
        return "grad"
    if node.target is _ENTER_AUTOCAST and _ENTER_AUTOCAST is not None and len(node.args) == 4:
        return "enter"
    if node.target is _EXIT_AUTOCAST and _EXIT_AUTOCAST is not None and len(node.args) == 1:
        return "exit"
    return None


def _marked_between(graph: fx.Graph, blocks: _Blocks) -> bool:
    """The nodes between a grad mode's change and its restoring (`_set_grad_enabled(False)` ...
    `_set_grad_enabled(True)`, as dynamo records `with torch.no_grad():`), or between entering an
    autocast and exiting it, marked with that block, the markers dropped; only where every marker
    pairs up, nested. Dynamo runs its graph only in the grad mode it traced in (a guard), which the
    last marker restores: a `with` block restores the same."""
    pairs = _pairs(list(graph.nodes))
    if not pairs:
        return False
    keys: dict[fx.Node, int] = {}
    for enter, _ in pairs:
        args = tuple(enter.args)
        op, code = (_GRAD, _grad_code(args)) if _marker(enter) == "grad" else (_AUTOCAST, _autocast_code(args))
        if code is None:
            return False
        keys[enter] = blocks.new(code, op, args, _owner(enter))
    closing = {exit_: enter for enter, exit_ in pairs}
    open_keys: list[int] = []
    for node in list(graph.nodes):
        if node in keys:
            open_keys.append(keys[node])
        elif node in closing:
            open_keys.pop()
        elif open_keys and node.op not in ("placeholder", "get_attr", "output"):
            node.meta[_KEYS] = (*open_keys, *node.meta.get(_KEYS, ()))
    for exit_, enter in closing.items():
        graph.erase_node(exit_)
        if not enter.users:
            graph.erase_node(enter)
    return True


def _pairs(nodes: list[fx.Node]) -> list[tuple[fx.Node, fx.Node]]:
    """(enter, exit) of every block the markers make, outermost first; none unless all pair up, nested."""
    stack: list[tuple[fx.Node, bool | None]] = []  # an open block's marker, and the grad mode before it
    mode: bool | None = None  # the grad mode, once a marker said
    pairs: list[tuple[fx.Node, fx.Node]] = []
    for node in nodes:
        kind = _marker(node)
        if kind == "grad":
            value = cast(bool, node.args[0])
            top = stack[-1] if stack else None
            if top is not None and _marker(top[0]) == "grad" and top[1] == value:
                pairs.append((stack.pop()[0], node))
            elif mode is None or value != mode:
                stack.append((node, not value if mode is None else mode))
            else:
                return []  # setting the mode it has: not a block
            mode = value
        elif kind == "enter":
            stack.append((node, None))
        elif kind == "exit":
            if not stack or stack[-1][0] is not node.args[0]:
                return []
            pairs.append((stack.pop()[0], node))
    return [] if stack else sorted(pairs, key=lambda pair: nodes.index(pair[0]))


def _join_adjacent(graph: fx.Graph, blocks: _Blocks) -> None:
    """A block that goes on where one of the same mode ended is one block with it: torch.export cuts a
    `with` block where the grad mode changes inside it (in a child's forward, or where a
    `no_grad` inside it was left out), and the pieces of a block's body are nested in the pieces of
    the block around it."""
    previous: tuple[int, ...] = ()
    for node in graph.nodes:
        if node.op == "get_attr":
            continue
        keys = tuple(blocks.resolved(k) for k in node.meta.get(_KEYS, ()))
        for depth in range(min(len(previous), len(keys))):
            if previous[depth] != keys[depth]:
                if not blocks.same_mode(previous[depth], keys[depth]):
                    break
                blocks.merge(keys[depth], previous[depth])
                keys = tuple(blocks.resolved(k) for k in keys)
        previous = keys


def _inlined(gm: fx.GraphModule, holder: torch.nn.Module, blocks: _Blocks) -> fx.Graph | None:
    """A copy of `gm`'s graph with its regions inlined (nested ones too), their bodies dropped from
    `holder`; None where none could be."""
    graph = copy_graph(gm.graph)
    bodies: set[str] = set()
    for node in list(graph.nodes):
        body = _body(gm, node)
        if body is None:
            continue
        op = _REGIONS[node.target]
        args = tuple(node.args[: op.count])
        code = op.code(args)
        inner = _inlined(body, holder_copy(body), blocks) if any(_region(n) for n in body.graph.nodes) else body.graph
        if code is None or inner is None or any(n.op == "get_attr" for n in inner.nodes):
            continue  # constants or modules of its own: the op stays
        bodies.add(str(node.args[op.count].target))
        _replace(graph, node, inner, blocks.new(code, op, args, _owner(node)), node.args[op.count + 1 :])
    if not bodies:
        return None
    for target in bodies - {str(n.target) for n in graph.find_nodes(op="get_attr")}:
        holder._modules.pop(target, None)
    return graph


def _region(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target in _REGIONS


def _body(gm: fx.GraphModule, node: fx.Node) -> fx.GraphModule | None:
    """The body a region op runs, where it is held at the top of `gm` and its value is only taken apart."""
    if not _region(node) or node.kwargs:
        return None
    count = _REGIONS[node.target].count
    if len(node.args) <= count:
        return None
    held = node.args[count]
    if not isinstance(held, fx.Node) or held.op != "get_attr" or "." in str(held.target):
        return None
    body = getattr(gm, str(held.target), None)
    if not isinstance(body, fx.GraphModule) or len(body.graph.find_nodes(op="placeholder")) != len(node.args) - count - 1:
        return None
    if not all(u.op == "call_function" and u.target is operator.getitem and isinstance(u.args[1], int) for u in node.users):
        return None
    return body


def _replace(graph: fx.Graph, node: fx.Node, body: fx.Graph, key: int, args: tuple[object, ...]) -> None:
    """The body's nodes in place of `node`, its placeholders read as `args`, each taking of an output the
    output; a value nothing reads that computing does nothing else is dropped (torch.export leaves them
    in bodies, not in the graph)."""
    env: dict[fx.Node, Any] = dict(zip(body.find_nodes(op="placeholder"), args))
    copied: list[fx.Node] = []
    outputs: tuple[Any, ...] = ()
    with graph.inserting_before(node):
        for inner in body.nodes:
            if inner.op == "placeholder":
                continue
            if inner.op == "output":
                result = inner.args[0]
                outputs = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                continue
            new = graph.node_copy(inner, env.__getitem__)
            new.meta = dict(inner.meta)
            new.meta[_KEYS] = (key, *inner.meta.get(_KEYS, ()))
            env[inner] = new
            copied.append(new)
    values = [fx.map_arg(out, env.__getitem__) for out in outputs]
    for user in list(node.users):
        user.replace_all_uses_with(values[cast(int, user.args[1])])
        graph.erase_node(user)
    held = node.args[len(node.args) - len(args) - 1]
    graph.erase_node(node)
    if isinstance(held, fx.Node) and not held.users:
        graph.erase_node(held)
    for new in reversed(copied):
        if not new.users and not new.is_impure():
            graph.erase_node(new)
