"""A generated forward takes its inputs in the order its source forward lists them.

split cuts a module's call out with its inputs in the order its graph first reads them: timm xcit's
PositionalEncodingFourier reads `H` before `B`, so it came out `def forward(self, H, W, B)` where the
source has `def forward(self, B: int, H: int, W: int)`, and a caller passing sizes in the source's
order would get another result. Where every input of every graph of one source class is named after
a parameter of its source forward (split's input naming), and all those graphs name them alike, the
inputs are put in the source's order and every call of those modules passes its arguments in that
order: the values and what is computed stay the same.
"""

from __future__ import annotations

from collections.abc import Mapping

from torch import fx

from .module_paths import called_path
from .source_names import source_parameters

Orders = Mapping[str, tuple[int, ...]]  # module path -> the old position of each input, in the new order


def source_ordered(graphs: Mapping[str, fx.Graph], kinds: Mapping[str, type | str], fixed: set[str]) -> dict[str, tuple[int, ...]]:
    """Put the inputs of the graphs (by module path) in their source forward's order, and the arguments of
    the calls of them the graphs make; `fixed`: paths whose inputs stay as they are (a list passed whole).
    Returns the new orders, for the calls in graphs built later (the root's: `reorder_calls`)."""
    by_class: dict[type | str, list[str]] = {}
    for path in graphs:
        if path in kinds and path not in fixed:
            by_class.setdefault(kinds[path], []).append(path)
    orders: dict[str, tuple[int, ...]] = {}
    for cls, paths in by_class.items():
        order = _source_order(cls, {_input_names(graphs[path]) for path in paths})
        if order is not None:
            orders.update(dict.fromkeys(paths, order))
    for path, order in orders.items():
        _reorder_inputs(graphs[path], order)
    for path, graph in graphs.items():
        reorder_calls(graph, path, orders)
    return orders


def reorder_calls(graph: fx.Graph, path: str, orders: Orders) -> None:
    """Pass the arguments of each call `graph` (of the module at `path`) makes of a reordered module in its new order."""
    for node in graph.find_nodes(op="call_module"):
        order = orders.get(called_path(path, node))
        if order is not None:
            if node.kwargs or len(node.args) != len(order):
                raise AssertionError(f"call of {node.target!r} does not pass its inputs by position")  # split makes none such
            node.args = tuple(node.args[i] for i in order)


def _input_names(graph: fx.Graph) -> tuple[str, ...]:
    return tuple(str(p.target) for p in graph.find_nodes(op="placeholder"))


def _source_order(cls: type | str, names: set[tuple[str, ...]]) -> tuple[int, ...] | None:
    """The old position of each input in the source's order, where all graphs name their inputs alike, each
    after a parameter of the source forward, and that order is another; else None."""
    if len(names) != 1:
        return None
    (current,) = names
    parameters = source_parameters(cls)
    if len(current) < 2 or not set(current) <= set(parameters):
        return None
    order = tuple(sorted(range(len(current)), key=lambda i: parameters.index(current[i])))
    return order if order != tuple(range(len(current))) else None


def _reorder_inputs(graph: fx.Graph, order: tuple[int, ...]) -> None:
    placeholders = list(graph.find_nodes(op="placeholder"))
    after = placeholders[-1].next  # the first node after the inputs
    for i in order:
        after.prepend(placeholders[i])
