"""`x[a][b]` -> `x[a, b]`: two basic indexings in a row as one, as people write them.

Basic indexing (ints and slices) applied at once gives the same view as applied one after the
other: the same storage, offset, sizes and strides. An index is composed only where that is
plain: each dimension is sliced by at most one of the two (`x[1:][:, 2:]` is `x[1:, 2:]`,
`x[1:][2:]` stays as it is).
"""

from __future__ import annotations

import operator
from typing import Any, cast

import torch
from torch import fx

_FULL = slice(None)


def merge_indexing(graph: fx.Graph) -> None:
    """Each tensor indexing whose input is another, used by it alone, becomes one indexing of that input."""
    for node in list(graph.nodes):
        inner = node.args[0] if _is_tensor_indexing(node) else None
        if not isinstance(inner, fx.Node) or not _is_tensor_indexing(inner) or len(inner.users) != 1:
            continue
        ndim = _ndim(cast(fx.Node, inner.args[0]))  # an indexing of a tensor value
        merged = compose(inner.args[1], node.args[1], ndim) if ndim is not None else None
        if merged is not None:
            node.args = (inner.args[0], merged)
            graph.erase_node(inner)


def drop_aliases(graph: fx.Graph) -> None:
    """`y = x[...]` (aten.alias) of a computed value nothing else reads is that value: the same memory
    and strides, one view object fewer."""
    for node in list(graph.nodes):
        base = node.args[0] if _is_tensor_indexing(node) and node.args[1] is Ellipsis else None
        if isinstance(base, fx.Node) and base.op not in ("placeholder", "get_attr") and len(base.users) == 1:
            node.replace_all_uses_with(base)
            graph.erase_node(node)


def compose(first: Any, second: Any, ndim: int) -> Any:
    """The one index equal to indexing an `ndim`-dimensional tensor with `first`, then the result with
    `second`; None where no plain one is."""
    outer = _per_dimension(first, ndim)
    if outer is None:
        return None
    kept = [d for d, item in enumerate(outer) if isinstance(item, slice)]
    inner = _per_dimension(second, len(kept))
    if inner is None:
        return None
    for d, item in zip(kept, inner):
        if item == _FULL:
            continue
        if outer[d] != _FULL:
            return None  # sliced twice: a slice of a slice
        outer[d] = item
    return _compact(outer)


def _per_dimension(index: Any, ndim: int) -> list[Any] | None:
    """One item (an int or a slice) per dimension, or None for anything else (tensors, None, bools)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if items.count(Ellipsis) > 1 or not all(item is Ellipsis or basic_item(item) for item in items):
        return None
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [_FULL] * (ndim - len(items) + 1)
    if len(items) > ndim:
        return None
    return items + [_FULL] * (ndim - len(items))


def basic_item(item: Any) -> bool:
    """An int (or a value recorded as one) or a slice: one dimension of a basic index."""
    if isinstance(item, slice):
        return True
    if isinstance(item, fx.Node):
        return isinstance(item.meta.get("val"), (int, torch.SymInt))
    return isinstance(item, int) and not isinstance(item, bool)


def _compact(items: list[Any]) -> Any:
    """`[a, :, :]` as `a`, `[:, :, a]` as `..., a` where that is shorter; one item alone, not a tuple."""
    used = [d for d, item in enumerate(items) if item != _FULL]
    if not used:
        return Ellipsis
    forward = items[: used[-1] + 1]
    backward = [Ellipsis, *items[used[0] :]] if used[0] > 0 else forward
    shortest = backward if len(backward) < len(forward) else forward
    return shortest[0] if len(shortest) == 1 else tuple(shortest)


def _is_tensor_indexing(node: fx.Node) -> bool:
    return (
        node.op == "call_function"
        and node.target is operator.getitem
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[0], fx.Node)
        and isinstance(node.args[0].meta.get("val"), torch.Tensor)
    )


def _ndim(node: fx.Node) -> int | None:
    value = node.meta.get("val")
    return value.dim() if isinstance(value, torch.Tensor) else None
