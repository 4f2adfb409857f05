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
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch
from torch import fx

from .calls import stack_frames
from .names import quote
from .scopes import SCOPES, Scope, scopes_of
from .subgraphs import copy_graph, holder_copy, with_graph


def _autocast_code(args: tuple[object, ...]) -> str | None:
    device, dtype, enabled, cache_enabled = args
    if not isinstance(device, str) or not isinstance(enabled, bool) or not isinstance(cache_enabled, bool):
        return None
    if not enabled:  # neither the dtype nor the cache does anything then
        return f"torch.autocast({quote(device)}, enabled=False)"
    if not isinstance(dtype, torch.dtype):
        return None
    cache = "" if cache_enabled else ", cache_enabled=False"
    return f"torch.autocast({quote(device)}, dtype={dtype!r}{cache})"


def _grad_code(args: tuple[object, ...]) -> str | None:
    (enabled,) = args
    if not isinstance(enabled, bool):
        return None
    return "torch.enable_grad()" if enabled else "torch.no_grad()"


# op -> (how many of its arguments come before the body, the code of the context manager they give)
_REGIONS: dict[object, tuple[int, Callable[[tuple[object, ...]], str | None]]] = {}
for _name, _entry in (("wrap_with_autocast", (4, _autocast_code)), ("wrap_with_set_grad_enabled", (1, _grad_code))):
    _op = getattr(torch.ops.higher_order, _name, None)
    if _op is not None:
        _REGIONS[_op] = _entry


def inline_with_blocks(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with every grad or autocast region it can read as its body's nodes marked with their scope;
    `gm` itself if it has none. The input GraphModule is not changed."""
    if not any(_region(n) for n in gm.graph.nodes):
        return gm
    holder = holder_copy(gm)
    graph = _inlined(gm, holder, itertools.count())
    if graph is None:
        return gm
    graph.lint()
    return with_graph(gm, graph, holder)


def _inlined(gm: fx.GraphModule, holder: torch.nn.Module, keys: Iterator[int]) -> fx.Graph | None:
    """A copy of `gm`'s graph with its regions inlined (nested ones too), their bodies dropped from
    `holder`; None where none could be."""
    graph = copy_graph(gm.graph)
    bodies: set[str] = set()
    for node in list(graph.nodes):
        body = _body(gm, node)
        if body is None:
            continue
        count, code_of = _REGIONS[node.target]
        code = code_of(tuple(node.args[:count]))
        inner = _inlined(body, holder_copy(body), keys) if any(_region(n) for n in body.graph.nodes) else body.graph
        if code is None or inner is None or any(n.op == "get_attr" for n in inner.nodes):
            continue  # constants or modules of its own: the op stays
        frames = stack_frames(node)
        scope = Scope(code, frames[-1].path if frames else "", next(keys))
        bodies.add(str(node.args[count].target))
        _replace(graph, node, inner, (*scopes_of(node), scope), node.args[count + 1 :])
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
    count = _REGIONS[node.target][0]
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


def _replace(graph: fx.Graph, node: fx.Node, body: fx.Graph, scopes: tuple[Scope, ...], args: tuple[object, ...]) -> None:
    """The body's nodes in place of `node`, its placeholders read as `args`, each taking of an output the output."""
    env: dict[fx.Node, Any] = dict(zip(body.find_nodes(op="placeholder"), args))
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
            new.meta[SCOPES] = (*scopes, *inner.meta.get(SCOPES, ()))
            env[inner] = new
    values = [fx.map_arg(out, env.__getitem__) for out in outputs]
    for user in list(node.users):
        user.replace_all_uses_with(values[cast(int, user.args[1])])
        graph.erase_node(user)
    held = node.args[len(node.args) - len(args) - 1]
    graph.erase_node(node)
    if isinstance(held, fx.Node) and not held.users:
        graph.erase_node(held)
