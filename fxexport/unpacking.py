"""Results taken apart where they are made: `x1, x2 = x.chunk(2, dim=1)`, `out, size = self.pool(x)`.

A graph reads each item of a tuple result by its own `getitem` node, which the forward would write
as a local holding the tuple and one statement per item (`chunk = x.chunk(2, dim=1)`,
`out = chunk[0]`, `out_1 = chunk[1]`). Where every user of a result is such an item, at least two
of them used, and the result's length is known to be exactly the count its items cover, the
statement unpacks it instead, as the source did, `_` standing for an item nothing reads. The length
is known from the value torch.export recorded (`meta["val"]`: its inputs' shapes are checked), from
the tuple a generated class returns, from `chunk(n)` reading all n chunks, or from `unbind(d)` of a
tensor whose size at `d` a `reshape`/`view` fixed to a number, followed through `permute`,
`transpose` and `contiguous` (timm's `qkv.reshape(B, N, 3, h, d).permute(2, 0, 3, 1, 4).unbind(0)`:
3 items, whatever the input's shape). A result that is itself
an item of an unpacked result stays indexed (`out, state = self.lstm(x)`, `h = state[0]`).

A shape whose rank is not known (`x.shape`, `x.size()` of a traced graph's input), its items read right
after it, unpacks its first items, as far as the last one read (`B, N, C = x.shape[:3]`): the graph
reads those items of a shape of any longer rank too, so the plain `B, N, C = x.shape` would refuse
inputs it accepts. A slice `[:k]` of anything whose item k - 1 is read has k items: so the export of
the export unpacks it again.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import cast

import torch
from torch import fx

UNUSED = "_"
PACKED_ITEMS = "fxexport_packed_items"  # in a placeholder's meta: the names of the items of the tuple it is (packed_inputs.py)
PACKED_SPELLING = "fxexport_packed_spelling"  # how its source reads the items: SPREAD (`*size`) or INDEXED (`size[0]`), else unpacked
SPREAD, INDEXED = "spread", "indexed"
_CHUNK = ("chunk", torch.chunk, torch.Tensor.chunk)
_UNBIND = ("unbind", torch.unbind, torch.Tensor.unbind)
_SHAPED = ("reshape", "view", torch.reshape, torch.Tensor.reshape, torch.Tensor.view)
_PERMUTE = ("permute", torch.permute, torch.Tensor.permute)
_TRANSPOSE = ("transpose", torch.transpose, torch.Tensor.transpose)
_SAME_SHAPE = ("contiguous", torch.Tensor.contiguous)


def unpackable(
    gm: fx.GraphModule, dead: frozenset[fx.Node] = frozenset(), recorded: bool = False, graph: fx.Graph | None = None
) -> dict[fx.Node, list[fx.Node | None]]:
    """Each result that can be unpacked, and its item nodes by position (None: an item nothing alive reads).
    `recorded`: the graph's `meta["val"]` lengths hold for every input it accepts (torch.export checks its
    inputs' shapes; a traced graph with values FakeTensorProp recorded may be called with others).
    `graph`: a graph of `gm`'s own (a rolled one) instead of `gm.graph`."""
    out: dict[fx.Node, list[fx.Node | None]] = {}
    for node in (gm.graph if graph is None else graph).nodes:
        users = list(node.users)
        if not users or node.op in ("get_attr", "output") or not all(is_item_of(u, node) for u in users):
            continue
        if node.op == "placeholder" and PACKED_ITEMS not in node.meta:
            continue
        positions = [u.args[1] for u in users]
        length = _length(gm, node, recorded) or (max(positions) + 1 if _unpacked_shape(node, users) else None)
        if length is None or len(set(positions)) != len(positions) or not all(0 <= p < length for p in positions):
            continue
        items: list[fx.Node | None] = [None] * length
        for user in users:
            items[cast(int, user.args[1])] = None if user in dead else user
        if sum(item is not None for item in items) >= (1 if node.op == "placeholder" else 2):  # a parameter the source unpacks: as it does
            out[node] = items
    inner = {item for items in out.values() for item in items if item is not None}
    return {result: items for result, items in out.items() if result not in inner}  # `out, (h, c) = ...`: the outer only


def is_shape(node: fx.Node) -> bool:
    """True for `x.shape` or `x.size()`: a tuple of sizes whose rank a traced graph does not know."""
    if node.op == "call_function" and node.target is getattr and len(node.args) == 2 and not node.kwargs:
        return node.args[1] == "shape"
    return node.op == "call_method" and node.target == "size" and len(node.args) == 1 and not node.kwargs


def sliced_shapes(gm: fx.GraphModule, results: Iterable[fx.Node], recorded: bool = False) -> frozenset[fx.Node]:
    """The shapes among the unpacked `results` whose rank is not known: unpacked by their first items,
    `x.shape[:3]` (module docstring)."""
    return frozenset(r for r in results if is_shape(r) and _length(gm, r, recorded) is None)


def _unpacked_shape(node: fx.Node, items: list[fx.Node]) -> bool:
    """True for a shape whose items the graph reads right after it, as unpacking it reads them (`B, N, C =
    x.shape`): unpacked where read later, the export of the export would read them there."""
    if not is_shape(node):
        return False
    after, following = node.next, 0
    while after in items:
        after, following = after.next, following + 1
    return following == len(items)


def is_sliced_shape(node: fx.Node) -> bool:
    """True for the first items of a shape, `x.shape[:3]`."""
    return _first_items(node) is not None and isinstance(node.args[0], fx.Node) and is_shape(node.args[0])


def _first_items(node: fx.Node) -> int | None:
    """k of `result[:k]`, k > 0, else None."""
    if node.op != "call_function" or node.target is not operator.getitem or len(node.args) != 2 or node.kwargs:
        return None
    cut = node.args[1]
    if not isinstance(cut, slice) or cut.start is not None or cut.step is not None:
        return None
    return cut.stop if type(cut.stop) is int and cut.stop > 0 else None


def spelled_items(graph: fx.Graph) -> dict[fx.Node, fx.Node]:
    """The items of each packed parameter its source spreads or takes by index, where each is read once and
    by a call (a spread one: all by one call, in order, side by side: timm twins' `x.reshape(B, C, *size)`):
    each item -> that call, which writes it as the source does (`*size`, `feat_size[0]`)."""
    out: dict[fx.Node, fx.Node] = {}
    for placeholder in graph.find_nodes(op="placeholder"):
        length = packed_length(placeholder)
        spelling = placeholder.meta.get(PACKED_SPELLING)
        items = sorted(placeholder.users, key=lambda u: u.args[1] if is_item_of(u, placeholder) else -1)
        if length is None or spelling not in (SPREAD, INDEXED) or not all(is_item_of(u, placeholder) for u in items):
            continue
        if any(len(u.users) != 1 or next(iter(u.users)).op not in ("call_function", "call_method") for u in items):
            continue
        if spelling == INDEXED:
            out.update({u: next(iter(u.users)) for u in items})
            continue
        calls = {next(iter(u.users)) for u in items}
        call = calls.pop() if len(calls) == 1 else None
        if call is None or [u.args[1] for u in items] != list(range(length)) or any(u in call.kwargs.values() for u in items):
            continue
        args = list(call.args)
        if sum(a in items for a in args if isinstance(a, fx.Node)) == length and _side_by_side(args, items):
            out.update(dict.fromkeys(items, call))
    return out


def is_spread(item: fx.Node) -> bool:
    """True for an item of a parameter its source spreads (`*size`)."""
    return cast(fx.Node, item.args[0]).meta.get(PACKED_SPELLING) == SPREAD


def _side_by_side(args: list[object], items: list[fx.Node]) -> bool:
    first = next(i for i, a in enumerate(args) if a is items[0])
    return all(first + j < len(args) and args[first + j] is item for j, item in enumerate(items))


def is_item_of(node: fx.Node, result: fx.Node) -> bool:
    """True when `node` is `result[i]`, i an int."""
    return (
        node.op == "call_function" and node.target is operator.getitem and not node.kwargs and len(node.args) == 2
        and node.args[0] is result and type(node.args[1]) is int
    )  # fmt: skip


def packed_length(placeholder: fx.Node) -> int | None:
    """How many items a packed parameter (packed_inputs.py) holds; None for any other input."""
    items = placeholder.meta.get(PACKED_ITEMS)
    return None if items is None else len(items)


def _length(gm: fx.GraphModule, node: fx.Node, recorded: bool) -> int | None:
    """How many items the result has, where that is certain."""
    value = node.meta.get("val")
    if node.op == "placeholder":
        return packed_length(node)
    if recorded and isinstance(value, (tuple, list)):
        return len(value)
    if node.op == "call_module":
        module = gm.get_submodule(str(node.target))
        if isinstance(module, fx.GraphModule):
            returned = next(iter(module.graph.find_nodes(op="output"))).args[0]
            return len(returned) if type(returned) is tuple else None  # a generated class returns the tuple as written
        return None
    if node.target in _CHUNK and node.op in ("call_method", "call_function"):
        chunks = node.args[1] if len(node.args) > 1 else node.kwargs.get("chunks")
        if type(chunks) is not int:
            return None
        return chunks if any(u.args[1] == chunks - 1 for u in node.users) else None  # x.chunk(3) may give 2 chunks: only a read of the last shows there are 3
    if is_sliced_shape(node):  # `x.shape[:3]` has 3 items where one reads its third (a tensor's items are views: not unbound)
        stop = cast(int, _first_items(node))
        return stop if any(u.args[1] == stop - 1 for u in node.users) else None
    dim = _unbound_at(node)
    return _fixed_size(cast(fx.Node, node.args[0]), dim, node) if dim is not None else None


def _unbound_at(node: fx.Node) -> int | None:
    """d of `x.unbind(d)` (not negative: a negative one counts from a rank not known here), else None."""
    if node.target not in _UNBIND or node.op not in ("call_method", "call_function") or not node.args or not isinstance(node.args[0], fx.Node):
        return None
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return dim if type(dim) is int and dim >= 0 else None


def _fixed_size(node: fx.Node, dim: int, reader: fx.Node) -> int | None:
    """The size of `node`'s tensor at `dim` where the graph fixed it to a number for every input: a
    number a `reshape`/`view` asks for (not -1), followed back through `permute`, `transpose`,
    `contiguous` and the items of an `unbind`; None where it is not known. Every tensor on the way is
    read by the next step alone (`reader`): an in-place op on one (`y.t_()`) could change its shape."""
    if list(node.users) != [reader]:
        return None
    if node.op not in ("call_method", "call_function") or not node.args or not isinstance(node.args[0], fx.Node) or node.kwargs:
        return None
    source, rest = node.args[0], node.args[1:]
    if is_item_of(node, source) and (removed := _unbound_at(source)) is not None and dim >= 0:
        # an item of `unbind(d)`: the tensor without its dimension d
        return _fixed_size(cast(fx.Node, source.args[0]), dim if dim < removed else dim + 1, source)
    if node.target in _SAME_SHAPE and not rest:
        return _fixed_size(source, dim, node)
    sizes = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
    if node.target in _SHAPED and sizes:
        place = dim + len(sizes) if dim < 0 else dim
        size = sizes[place] if 0 <= place < len(sizes) else None
        return size if type(size) is int and size >= 0 else None
    if node.target in _PERMUTE and sizes and all(type(d) is int for d in sizes):
        place = dim + len(sizes) if dim < 0 else dim
        return _fixed_size(source, cast(int, sizes[place]), node) if 0 <= place < len(sizes) else None
    if node.target in _TRANSPOSE and len(rest) == 2 and all(type(d) is int and d >= 0 for d in rest) and dim >= 0:
        first, second = cast(tuple[int, int], rest)
        return _fixed_size(source, second if dim == first else first if dim == second else dim, node)
    return None
