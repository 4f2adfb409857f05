"""raise: ATen calls of a torch.export graph -> the public torch calls people write (aten_spellings.py).

The input GraphModule is not changed: the result holds a copy of its graph and shares its
modules and tensors. Calls without a public spelling stay `torch.ops.aten...`.
"""

from __future__ import annotations

import operator

import torch
from torch import fx

from .aten_spellings import FIRST_OUTPUT_ONLY, RENAMES, spelling
from .subgraphs import copy_graph, holder_copy, with_graph


def is_aten(node: fx.Node) -> bool:
    """A call of an ATen overload (`torch.ops.aten.add.Tensor`)."""
    return node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)


def raise_aten(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with every ATen call that has a public spelling written that way, in its graph and in the
    graphs of its higher-order ops (`cond` branches, `wrap_with_autocast` bodies); `gm` itself if none has."""
    children = {name: raise_aten(child) for name, child in gm.named_children() if isinstance(child, fx.GraphModule)}
    changed = {name: child for name, child in children.items() if child is not gm.get_submodule(name)}
    if not changed and not any(is_aten(n) for n in gm.graph.nodes):
        return gm
    graph = copy_graph(gm.graph)
    for node in list(graph.nodes):
        if is_aten(node):
            _raise(graph, node)
    graph.lint()
    holder = None
    if changed:
        holder = holder_copy(gm)
        holder._modules.update(changed)
    return with_graph(gm, graph, holder)


def _raise(graph: fx.Graph, node: fx.Node) -> None:
    try:
        found = spelling(node)
    except Exception:  # noqa: BLE001 - an argument a rule did not foresee: the call stays ATen
        found = None
    if found is None:
        return
    if found.op == "drop":
        if not node.users:
            graph.erase_node(node)
        return
    if _returns_several(node) and not all(u.target is operator.getitem for u in node.users):
        return  # the public call returns a tuple or a namedtuple: the same only where the result is indexed
    if node.target in FIRST_OUTPUT_ONLY:
        if not all(u.target is operator.getitem and u.args[1] == 0 for u in node.users):
            return
        for user in list(node.users):
            user.replace_all_uses_with(node)
            graph.erase_node(user)
        if isinstance(node.meta.get("val"), (tuple, list)):
            node.meta["val"] = node.meta["val"][0]
    if node.target in RENAMES:
        node._rename(RENAMES[node.target])
    node.op, node.target = found.op, found.target
    node.args, node.kwargs = found.args, found.kwargs


def _returns_several(node: fx.Node) -> bool:
    """A list (`split`) or several values (`max.dim`)."""
    returns = node.target._schema.returns  # type: ignore[union-attr]
    return len(returns) > 1 or (len(returns) == 1 and str(returns[0].type).startswith("List["))
