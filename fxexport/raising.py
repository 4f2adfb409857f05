"""raise: ATen calls of a torch.export graph -> the public torch calls people write (aten_spellings.py).

The input GraphModule is not changed: the result holds a copy of its graph and shares its
modules and tensors. Calls without a public spelling stay `torch.ops.aten...`.
"""

from __future__ import annotations

import operator

import torch
from torch import fx, nn

from .aten_spellings import FIRST_OUTPUT_ONLY, RENAMES, spelling
from .indexing import drop_aliases, merge_indexing
from .subgraphs import copy_graph, holder_copy, private_holder, with_graph


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
    merge_indexing(graph)
    drop_aliases(graph)
    dropped = _fill_values_inline(graph, gm)
    graph.lint()
    holder = None
    if changed or dropped:
        holder = holder_copy(gm)
        holder._modules.update(changed)
        _drop_constants(holder, dropped)
    return with_graph(gm, graph, holder)


def _fill_values_inline(graph: fx.Graph, gm: fx.GraphModule) -> list[str]:
    """`x.fill_(self.lifted_tensor_0.clone())` -> `x.fill_(3)`: torch.export lifts the number a
    Python int or float filled in (`mask[:4] = count`) into a 0-d tensor constant; filling with the
    tensor or with its value is the same fill. Returns the constants nothing reads any more."""
    detached: list[fx.Node] = []
    for node in graph.find_nodes(op="call_method", target="fill_"):
        value = _constant_scalar(node.args[1], gm) if len(node.args) == 2 and not node.kwargs else None
        if value is not None:
            detached.append(node.args[1])
            node.args = (node.args[0], value)
    dropped: list[str] = []
    for node in detached:
        for unused in (node, *node.all_input_nodes):
            if unused.users or unused._erased:
                continue
            if unused.op == "get_attr":
                dropped.append(str(unused.target))
            graph.erase_node(unused)
    return [name for name in dropped if not graph.find_nodes(op="get_attr", target=name)]


def _constant_scalar(value: object, gm: fx.GraphModule) -> bool | int | float | None:
    """The number a 0-d real tensor constant (or a clone of one) holds."""
    if isinstance(value, fx.Node) and value.op == "call_method" and value.target == "clone" and len(value.args) == 1 and not value.kwargs:
        value = value.args[0]
    tensor = _constant(gm, str(value.target)) if isinstance(value, fx.Node) and value.op == "get_attr" else None
    if tensor is None or tensor.dim() != 0 or tensor.is_complex() or tensor.is_quantized or type(tensor) is not torch.Tensor:
        return None
    return tensor.item()


def _constant(gm: fx.GraphModule, target: str) -> torch.Tensor | None:
    """A tensor constant (not a parameter or buffer: in no state_dict) held by a plain holder module."""
    path, _, name = target.rpartition(".")
    try:
        owner = gm.get_submodule(path)
    except AttributeError:
        return None
    value = owner.__dict__.get(name)
    plain = owner is gm or all(type(gm.get_submodule(".".join(path.split(".")[: i + 1]))) is nn.Module for i in range(path.count(".") + 1))
    return value if isinstance(value, torch.Tensor) and plain else None


def _drop_constants(root: nn.Module, targets: list[str]) -> None:
    """Delete the tensor constants `targets` from `root`, a holder copy, copying the holders on their paths."""
    copied = {id(root)}
    for target in targets:
        path, _, name = target.rpartition(".")
        del private_holder(root, path.split(".") if path else [], copied).__dict__[name]


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
