"""Inputs the source passes as one tuple: `cos, sin = position_embeddings`.

transformers' attention takes its rotary pair as one parameter and unpacks it (`cos, sin =
position_embeddings`); its decoder layer passes that parameter on whole, and the model binds it once
(`position_embeddings = self.rotary_emb(x, position_ids)`). The graph has no tuple: a cut-out method
takes each item as an input of its own (`def forward(self, hidden_states, cos, sin, attention_mask)`)
and every caller passes both. Where every graph of a source class takes, side by side, inputs named
as the items its source forward unpacks a parameter into, that method takes the parameter and unpacks
it as the source does; a caller whose inputs are only passed on as such a parameter takes it whole
under its own source parameter's name (the decoder layer's `position_embeddings`, timm pit's
`SequentialTuple` `x`). Each call passes one value for the items: the tuple a call returned or a
parameter holds, where it holds exactly those items in that order, else a tuple of them. What is
computed stays the same: only how the values are handed on changes.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from torch import fx

from .module_paths import called_path
from .source_names import passed_argument, passes_whole, source_parameters, unpacked_parameters
from .subgraphs import local_name
from .unpacking import PACKED_ITEMS, is_item_of, packed_length


@dataclass(frozen=True)
class Packed:
    """Inputs `start` to `start + count - 1` (the old positions) of a method, taken as one parameter `name`:
    its item j is the input at `start + order[j]` (the graph may read the second item first)."""

    start: int
    order: tuple[int, ...]
    name: str
    items: tuple[str, ...]  # the names of its items: the source's (`cos`, `sin`), or those its child gives them

    @property
    def count(self) -> int:
        """How many inputs it takes the place of."""
        return len(self.order)


Packings = Mapping[str, tuple[Packed, ...]]  # module path -> its packed inputs, first to last


def pack_inputs(graphs: Mapping[str, fx.Graph], kinds: Mapping[str, type | str], fixed: set[str]) -> dict[str, tuple[Packed, ...]]:
    """Pack the inputs of the graphs (by module path) the source passes as one tuple, and the arguments
    of the calls of them the graphs make; `fixed`: paths whose inputs stay as they are (a list passed
    whole). Returns the packings, for the calls in graphs built later (the root's: `repack_calls`)."""
    packings: dict[str, tuple[Packed, ...]] = {}
    while found := _packable(graphs, kinds, fixed | set(packings), packings):  # a round per level of callers
        for path, groups in found.items():
            _pack_placeholders(graphs[path], groups)
        packings.update(found)
        for path, graph in graphs.items():
            _pass_tuples(graph, path, found)
    for path, graph in graphs.items():
        _pass_whole(graph, path, packings, graphs)
    return packings


def repack_calls(graph: fx.Graph, path: str, packings: Packings, graphs: Mapping[str, fx.Graph]) -> None:
    """Pass one value for each packed parameter in the calls `graph` (of the module at `path`) makes."""
    _pass_tuples(graph, path, packings)
    _pass_whole(graph, path, packings, graphs)


def _packable(
    graphs: Mapping[str, fx.Graph], kinds: Mapping[str, type | str], skip: set[str], packings: Packings
) -> dict[str, tuple[Packed, ...]]:
    """The packings of the paths not in `skip` whose class's graphs all pack alike."""
    by_class: dict[type | str, list[str]] = {}
    for path in graphs:
        if path in kinds and path not in skip:
            by_class.setdefault(kinds[path], []).append(path)
    found: dict[str, tuple[Packed, ...]] = {}
    for cls, paths in by_class.items():
        groups = {_groups(graphs[path], path, cls, kinds, packings) for path in paths}
        if len(groups) == 1 and (only := groups.pop()):
            found.update(dict.fromkeys(paths, only))
    return found


def _groups(graph: fx.Graph, path: str, cls: type | str, kinds: Mapping[str, type | str], packings: Packings) -> tuple[Packed, ...]:
    """The inputs of `graph` its source forward takes as one parameter: side by side, named as the items
    it unpacks that parameter into; else those it passes on whole as such a parameter of its children."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    if any(p.args for p in placeholders):
        return ()  # an input with a default: its callers may leave it out
    names = [str(p.target) for p in placeholders]
    out = [group for parameter, items in unpacked_parameters(cls) if (group := _unpacked(names, parameter, items)) is not None]
    if not out and (passed := _passed_whole(graph, path, cls, kinds, packings)) is not None:
        out = [passed]
    out.sort(key=lambda p: p.start)
    taken = [name for i, name in enumerate(names) if not any(g.start <= i < g.start + g.count for g in out)]
    if any(a.start + a.count > b.start for a, b in zip(out, out[1:])) or any(g.name in taken for g in out):
        return ()  # groups overlap, or a parameter takes the name of an input left as it is
    return tuple(out)


def _unpacked(names: list[str], parameter: str, items: tuple[str, ...]) -> Packed | None:
    """The inputs named `items` (once each, side by side, in any order) as the parameter unpacked into them."""
    if len(set(items)) != len(items) or not local_name(parameter):
        return None
    starts = [i for i in range(len(names) - len(items) + 1) if sorted(names[i : i + len(items)]) == sorted(items)]
    if len(starts) != 1:
        return None
    side = names[starts[0] : starts[0] + len(items)]
    return Packed(starts[0], tuple(side.index(item) for item in items), parameter, items)


def _passed_whole(graph: fx.Graph, path: str, cls: type | str, kinds: Mapping[str, type | str], packings: Packings) -> Packed | None:
    """Inputs side by side the graph reads only as the items of a packed parameter of the calls it makes,
    where each calling statement passes one parameter of the source forward whole for it: that
    parameter, its items named as the children name them."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    index = {p: i for i, p in enumerate(placeholders)}
    for call in graph.find_nodes(op="call_module"):
        for arg, child in _packed_arguments(call, path, packings):
            if not (isinstance(arg, tuple) and len(arg) > 1 and all(isinstance(a, fx.Node) and a in index for a in arg)):
                continue
            positions = [index[a] for a in arg]
            start = min(positions)
            users = {u for a in arg for u in a.users}
            if sorted(positions) != list(range(start, start + len(arg))) or not all(_passes(u, arg, path, packings) for u in users):
                continue
            alone = len(arg) == len(placeholders)
            passed = {_passed_parameter(u, path, cls, kinds, child.name, alone) for u in users}
            if len(passed) == 1 and (name := passed.pop()) is not None:
                return Packed(start, tuple(p - start for p in positions), name, child.items)
    return None


def _passes(call: fx.Node, items: tuple[fx.Node, ...], path: str, packings: Packings) -> bool:
    """True when `call` reads `items` only as that tuple, passed for a packed parameter of its module."""
    if call.op != "call_module" or any(a in items for a in [*call.args, *call.kwargs.values()] if isinstance(a, fx.Node)):
        return False
    return any(arg == items for arg, _ in _packed_arguments(call, path, packings))


def _passed_parameter(call: fx.Node, path: str, cls: type | str, kinds: Mapping[str, type | str], parameter: str, alone: bool) -> str | None:
    """The parameter of the caller's source forward its statement making `call` passes whole for the
    child's `parameter`: by keyword or position (passed_argument), else, where it holds all the inputs,
    the forward's only parameter (timm pit's `x = module(x)`); None where the statement passes none."""
    parameters = source_parameters(cls)
    child = kinds.get(called_path(path, call))
    name = passed_argument(call, str(call.target), child, parameter) if child is not None else None
    if name is None and alone and len(parameters) == 1:
        name = parameters[0]
    return name if name is not None and name in parameters and local_name(name) and passes_whole(call, name, cls) else None


def _packed_arguments(call: fx.Node, path: str, packings: Packings) -> list[tuple[object, Packed]]:
    """The arguments `call` passes for packed parameters of its module, with those parameters."""
    groups = packings.get(called_path(path, call), ())
    out: list[tuple[object, Packed]] = []
    for index, group in enumerate(groups):
        position = group.start - sum(g.count - 1 for g in groups[:index])
        if position < len(call.args):
            out.append((call.args[position], group))
    return out


def _pack_placeholders(graph: fx.Graph, groups: tuple[Packed, ...]) -> None:
    """One placeholder per group, its items taken out of it (`cos, sin = position_embeddings`) right after
    the inputs, one after another."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    first_body = next(n for n in graph.nodes if n.op != "placeholder")  # the output at least
    for group in reversed(groups):
        with graph.inserting_before(placeholders[group.start]):
            whole = graph.placeholder(group.name)
        whole.meta[PACKED_ITEMS] = group.items
        for index, item in enumerate(placeholders[group.start + i] for i in group.order):
            with graph.inserting_before(first_body):
                taken = graph.call_function(operator.getitem, (whole, index))
            taken.meta = {k: v for k, v in item.meta.items() if k in ("val", "tensor_meta", "example_value")}
            item.replace_all_uses_with(taken)
            graph.erase_node(item)


def _pass_tuples(graph: fx.Graph, path: str, packings: Packings) -> None:
    """Pass each packed group of the calls of packed modules as one tuple of its items."""
    for call in graph.find_nodes(op="call_module"):
        groups = packings.get(called_path(path, call))
        if not groups:
            continue
        if call.kwargs or len(call.args) < groups[-1].start + groups[-1].count:
            raise AssertionError(f"call of {call.target!r} does not pass its inputs by position")  # split makes none such
        args = list(call.args)
        for group in reversed(groups):
            args[group.start : group.start + group.count] = [tuple(args[group.start + i] for i in group.order)]
        call.args = tuple(args)


def _pass_whole(graph: fx.Graph, path: str, packings: Packings, graphs: Mapping[str, fx.Graph]) -> None:
    """A tuple argument of the items of one value that holds exactly them, in order, is that value
    (`position_embeddings` for `(cos, sin)`); items of it no longer read are not taken out of it."""
    passed: set[fx.Node] = set()
    for call in graph.find_nodes(op="call_module"):
        if packings.get(called_path(path, call)):
            args = tuple(_whole(arg, path, graphs) if isinstance(arg, tuple) else arg for arg in call.args)
            passed |= {a for a, old in zip(args, call.args) if a is not old and isinstance(a, fx.Node)}
            call.args = args
    for value in passed:
        taken = [u for u in value.users if is_item_of(u, value)]
        if taken and not any(u.users for u in taken):
            for node in taken:
                graph.erase_node(node)


def _whole(items: tuple[object, ...], path: str, graphs: Mapping[str, fx.Graph]) -> object:
    """The value `items` are all of, in order, else `items`."""
    sources = [i.args[0] if isinstance(i, fx.Node) and i.op == "call_function" and i.target is operator.getitem else None for i in items]
    first = sources[0]
    if not isinstance(first, fx.Node) or any(s is not first for s in sources):
        return items
    if [cast(fx.Node, i).args[1] for i in items] != list(range(len(items))):
        return items
    return first if _arity(first, path, graphs) == len(items) else items


def _arity(value: fx.Node, path: str, graphs: Mapping[str, fx.Graph]) -> int | None:
    """How many items the tuple `value` holds, where known: a packed parameter's, or a cut-out call's outputs."""
    if value.op == "placeholder":
        return packed_length(value)
    if value.op == "call_module":
        child = graphs.get(called_path(path, value))
        if child is None:
            return None
        returned = next(iter(child.find_nodes(op="output"))).args[0]
        return len(returned) if isinstance(returned, tuple) else None
    return None
