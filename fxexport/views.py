"""Which values of a graph are views of another's memory: freeing a view frees nothing while
another value of its memory lives, so a `del` pays only where the last of them dies."""

from __future__ import annotations

import builtins
import operator
from typing import Any

import torch
from torch import fx

from .indexing import basic_item

# Tensor methods and torch functions whose result is always a view of their first argument (or,
# for split and the like, a tuple of views). reshape, flatten and contiguous may copy: not listed.
_VIEW_METHODS = frozenset({
    "view", "view_as", "permute", "transpose", "t", "unsqueeze", "squeeze", "expand", "expand_as",
    "select", "narrow", "unflatten", "diagonal", "movedim", "swapaxes", "swapdims", "as_strided",
    "unfold", "split", "chunk", "unbind", "tensor_split", "detach",
})  # fmt: skip
_VIEW_FUNCTIONS = frozenset(
    getattr(torch, name) for name in _VIEW_METHODS if name not in ("view", "view_as", "expand", "expand_as", "unfold") and hasattr(torch, name)
)
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})


def storage_roots(graph: fx.Graph) -> dict[fx.Node, fx.Node]:
    """Each value -> the value whose memory it uses: itself unless it is surely a view of another."""
    roots: dict[fx.Node, fx.Node] = {}
    for node in graph.nodes:
        base = _viewed(node, roots)
        roots[node] = roots[base] if base is not None else node
    return roots


def _viewed(node: fx.Node, roots: dict[fx.Node, fx.Node]) -> fx.Node | None:
    """The value `node` is surely a view of, or None."""
    if node.op not in ("call_method", "call_function") or not node.args or not isinstance(node.args[0], fx.Node):
        return None
    base, target = node.args[0], node.target
    if _converts_nothing(node, base):
        return base
    if node.op == "call_method":
        return base if target in _VIEW_METHODS else None
    if target in _VIEW_FUNCTIONS:
        return base
    if target is builtins.getattr:
        return base if len(node.args) == 2 and node.args[1] in _VIEW_ATTRIBUTES else None
    if target is operator.getitem and len(node.args) == 2:
        if _makes_views(base):
            return base  # an item of split(...)
        return base if _is_tensor(base) and _basic(node.args[1]) else None
    return None


# Tensor methods that return the tensor itself where it already has the dtype and device asked for
_CONVERSIONS = frozenset({"to", "float", "double", "half", "bfloat16", "int", "long", "bool", "type_as"})


def _converts_nothing(node: fx.Node, base: fx.Node) -> bool:
    """`x.to(torch.float32)` of a float32 `x` (as recorded): `x` itself, no memory of its own."""
    if node.op != "call_method" or node.target not in _CONVERSIONS or node.kwargs:
        return False
    value, source = node.meta.get("val"), base.meta.get("val")
    if not isinstance(value, torch.Tensor) or not isinstance(source, torch.Tensor):
        return False
    return value.dtype == source.dtype and value.device == source.device and value.layout == source.layout


def _is_tensor(node: fx.Node) -> bool:
    """Surely a tensor: recorded as one, or made by a tensor method that gives one view."""
    if isinstance(node.meta.get("val"), torch.Tensor):
        return True
    return node.op == "call_method" and node.target in _VIEW_METHODS and not _makes_views(node)


def _makes_views(node: fx.Node) -> bool:
    return (node.op == "call_method" and node.target in ("split", "chunk", "unbind", "tensor_split")) or (
        node.op == "call_function" and node.target in (torch.split, torch.chunk, torch.unbind, torch.tensor_split)
    )


def _basic(index: Any) -> bool:
    """An index of ints, slices, `...` and None only: indexing with it gives a view."""
    items = index if isinstance(index, tuple) else (index,)
    return all(item is None or item is Ellipsis or basic_item(item) for item in items)
