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

A parameter the source reads otherwise is packed too where its graph shows where: spread (timm twins'
`x.reshape(B, C, *size)`, the inputs passed side by side where the star stands) or taken by index (timm
pvt_v2's `view(B, C, feat_size[0], feat_size[1])`), and module.py writes it so; a caller passing such a
tuple whole to a leaf module (twins' `self.attn(x, size)` of its LocallyGroupedAttn) takes it whole too.
Graphs of a class that read none of the items (an attention without its reduction) keep their other
inputs; the others take the items out where they first read them, under the branch the joined forward
reads them in.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import cast

from torch import fx

from .calls import named_after
from .module_paths import called_path
from .source_names import (
    Indexed,
    Spread,
    called_name,
    indexed_parameters,
    passed_argument,
    passes_whole,
    positional_parameter,
    source_parameters,
    starred_parameters,
    unpacked_parameters,
)
from .subgraphs import local_name
from .unpacking import INDEXED, PACKED_ITEMS, PACKED_SPELLING, SPREAD, is_item_of, packed_length


@dataclass(frozen=True)
class Packed:
    """Inputs `start` to `start + count - 1` (the old positions) of a method, taken as one parameter `name`:
    its item j is the input at `start + order[j]` (the graph may read the second item first)."""

    start: int
    order: tuple[int, ...]
    name: str
    items: tuple[str, ...]  # the names of its items: the source's (`cos`, `sin`), or those its child gives them
    spelling: str = ""  # how the source reads the items: SPREAD (`*size`), INDEXED (`size[0]`), else unpacked or passed on
    at_use: bool = False  # its items taken out right before the first statement reading one, not after the inputs

    @property
    def count(self) -> int:
        """How many inputs it takes the place of."""
        return len(self.order)


Packings = Mapping[str, tuple[Packed, ...]]  # module path -> its packed inputs, first to last
Leaves = Mapping[str, type]  # module path -> the class of a module the graphs call as a leaf (not cut out)


def pack_inputs(graphs: Mapping[str, fx.Graph], kinds: Mapping[str, type | str], fixed: set[str], leaves: Leaves) -> dict[str, tuple[Packed, ...]]:
    """Pack the inputs of the graphs (by module path) the source passes as one tuple, and the arguments
    of the calls of them the graphs make; `fixed`: paths whose inputs stay as they are (a list passed
    whole). Returns the packings, for the calls in graphs built later (the root's: `repack_calls`)."""
    packings: dict[str, tuple[Packed, ...]] = {}
    while found := _packable(graphs, kinds, fixed | set(packings), packings, leaves):  # a round per level of callers
        for path, groups in found.items():
            _pack_placeholders(graphs[path], groups)
        packings.update(found)
        for path, graph in graphs.items():
            _pass_tuples(graph, path, found)
    for path, graph in graphs.items():
        _pass_whole(graph, path, packings, graphs, leaves)
    return packings


def repack_calls(graph: fx.Graph, path: str, packings: Packings, graphs: Mapping[str, fx.Graph], leaves: Leaves) -> None:
    """Pass one value for each packed parameter in the calls `graph` (of the module at `path`) makes."""
    _pass_tuples(graph, path, packings)
    _pass_whole(graph, path, packings, graphs, leaves)


def _packable(
    graphs: Mapping[str, fx.Graph], kinds: Mapping[str, type | str], skip: set[str], packings: Packings, leaves: Leaves
) -> dict[str, tuple[Packed, ...]]:
    """The packings of the paths not in `skip` whose class's graphs all pack alike."""
    by_class: dict[type | str, list[str]] = {}
    for path in graphs:
        if path in kinds and path not in skip:
            by_class.setdefault(kinds[path], []).append(path)
    found: dict[str, tuple[Packed, ...]] = {}
    for cls, paths in by_class.items():
        by_path = {path: _groups(graphs[path], path, cls, kinds, packings, leaves) for path in paths}
        groups = [found_here for found_here in by_path.values() if found_here]
        if len({_shape(found_here) for found_here in groups}) != 1:
            continue
        only = groups[0]  # its items named as the first graph's children name them
        packed = [path for path, found_here in by_path.items() if found_here]
        # the others take none of the items (timm twins' GlobalSubSampleAttn without its `sr` reads no `size`),
        # else they take the items unpacked: all stay as they are
        left = [n for i, n in enumerate(_names(graphs[packed[0]])) if not any(g.start <= i < g.start + g.count for g in only)]
        lacking = [path for path in paths if not by_path[path]]
        if all(_names(graphs[path]) == left for path in lacking):
            # where some graphs of the class lack the items, the others read them in code of their own (under
            # `if self.sr is not None:`): taken out where first read, so the joined forward does so there
            found.update(dict.fromkeys(packed, tuple(replace(g, at_use=bool(lacking)) for g in only)))
    return found


def _source(cls: type | str) -> type | str:
    """The class whose source forward tells how `cls` takes its inputs: for an inferred call named after a
    class of the source model (`classes_from`), that class. Packing changes only how values are handed on,
    so where the inferred cut is not the source's, the names are all that can be off."""
    return named_after(cls) or cls


def _shape(groups: tuple[Packed, ...]) -> tuple[tuple[int, tuple[int, ...], str], ...]:
    """The groups but the names of their items, which the children of one class may give otherwise."""
    return tuple((g.start, g.order, g.name) for g in groups)


def _names(graph: fx.Graph) -> list[str]:
    return [str(p.target) for p in graph.find_nodes(op="placeholder")]


def _groups(
    graph: fx.Graph, path: str, cls: type | str, kinds: Mapping[str, type | str], packings: Packings, leaves: Leaves
) -> tuple[Packed, ...]:
    """The inputs of `graph` its source forward takes as one parameter: side by side, named as the items
    it unpacks that parameter into; else those it passes on whole as such a parameter of its children."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    if any(p.args for p in placeholders):
        return ()  # an input with a default: its callers may leave it out
    names = [str(p.target) for p in placeholders]
    cls = _source(cls)
    out = [group for parameter, items in unpacked_parameters(cls) if (group := _unpacked(names, parameter, items)) is not None]
    if not out and len(starred := starred_parameters(cls)) == 1 and (spread := _spread(placeholders, *starred[0])) is not None:
        out = [spread]
    if not out and len(indexed := indexed_parameters(cls)) == 1 and (by_index := _indexed(placeholders, *indexed[0])) is not None:
        out = [by_index]
    if not out and (passed := _passed_whole(graph, path, cls, kinds, packings, leaves)) is not None:
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


def _spread(placeholders: list[fx.Node], parameter: str, calls: tuple[Spread, ...]) -> Packed | None:
    """Two inputs or more, side by side, that every statement reading them passes all, in order, as
    arguments side by side of one call, where one of the source's `calls` spreads `parameter` (`*size`):
    the items of `parameter`."""
    index = {p: i for i, p in enumerate(placeholders)}
    runs: set[tuple[int, int]] = set()
    for user in {u for p in placeholders for u in p.users}:
        runs |= _runs(user, index, calls)
    if len(runs) != 1:
        return None
    ((start, count),) = runs
    run = placeholders[start : start + count]
    for user in {u for p in run for u in p.users}:
        values = [*user.args, *user.kwargs.values()]
        if sum(v is p for v in values for p in run) != count or (start, count) not in _runs(user, index, calls):
            return None  # an item read otherwise, or twice
    return Packed(start, tuple(range(count)), parameter, tuple(p.name for p in run), SPREAD)


def _indexed(placeholders: list[fx.Node], parameter: str, uses: tuple[Indexed, ...]) -> Packed | None:
    """Two inputs or more, side by side, that the statements read only where the source's `uses` read the
    items of `parameter` by index (`x.view(B, C, feat_size[0], feat_size[1])`), each as one item: those items."""
    index = {p: i for i, p in enumerate(placeholders)}
    item_of: dict[fx.Node, int] = {}
    for user in {u for p in placeholders for u in p.users}:
        for called, position, after, item in uses:
            arg = _one(_passed_where(user, called, position, after))
            if isinstance(arg, fx.Node) and arg in index and item_of.setdefault(arg, item) != item:
                return None  # one input read as two items
    items = sorted(item_of, key=item_of.__getitem__)
    if len(items) < 2 or [item_of[p] for p in items] != list(range(len(items))):
        return None
    positions = sorted(index[p] for p in items)
    if positions != list(range(positions[0], positions[0] + len(items))):
        return None
    for p in items:  # read nowhere else, and once by each statement reading it
        if any(sum(a is p for a in [*u.args, *u.kwargs.values()]) != 1 or not _reads_item(u, p, item_of[p], uses) for u in p.users):
            return None
    start = positions[0]
    return Packed(start, tuple(index[p] - start for p in items), parameter, tuple(p.name for p in items), INDEXED)


def _reads_item(user: fx.Node, placeholder: fx.Node, item: int, uses: tuple[Indexed, ...]) -> bool:
    """True when `user` reads `placeholder` where one of the source's `uses` reads that item."""
    return any(k == item and _one(_passed_where(user, called, position, after)) is placeholder for called, position, after, k in uses)


def _runs(call: fx.Node, index: dict[fx.Node, int], calls: tuple[Spread, ...]) -> set[tuple[int, int]]:
    """(first input, count) of the run of two inputs or more, side by side, in order, that `call` passes
    where a source call of that name spreads its parameter."""
    found: set[tuple[int, int]] = set()
    for called, before, after in calls:
        run = _passed_where(call, called, before, after)
        first = run[0] if run else None
        if len(run) >= 2 and isinstance(first, fx.Node) and first in index and all(isinstance(a, fx.Node) and index.get(a) == index[first] + j for j, a in enumerate(run)):
            found.add((index[first], len(run)))
    return found


def _passed_where(user: fx.Node, called: str, before: int, after: int) -> tuple[object, ...]:
    """The arguments a call `user` passes where the source's call of `called` has `before` arguments before
    and `after` after them (a method's receiver one more before); () where `user` calls something else."""
    if user.op not in ("call_method", "call_function") or called_name(user) != called:
        return ()
    start = before + (user.op == "call_method")
    return tuple(user.args[start : len(user.args) - after])


def _one(values: tuple[object, ...]) -> object:
    """The one value, else None."""
    return values[0] if len(values) == 1 else None


def _passed_whole(
    graph: fx.Graph, path: str, cls: type | str, kinds: Mapping[str, type | str], packings: Packings, leaves: Leaves
) -> Packed | None:
    """Inputs side by side the graph reads only as the items of a tuple its calls pass for a parameter of a
    packed child or of a leaf (timm twins' `self.attn(x, size)` of its LocallyGroupedAttn), where each
    calling statement passes one parameter of the source forward whole for it: that parameter, its items
    named as the children name them."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    index = {p: i for i, p in enumerate(placeholders)}
    for call in graph.find_nodes(op="call_module"):
        for arg, parameter, items in _tuple_arguments(call, path, packings, leaves):
            if not (len(arg) > 1 and all(isinstance(a, fx.Node) and a in index for a in arg)):
                continue
            positions = [index[cast(fx.Node, a)] for a in arg]
            start = min(positions)
            users = {u for a in arg for u in cast(fx.Node, a).users}
            if sorted(positions) != list(range(start, start + len(arg))) or not all(_passes(u, arg, path, packings, leaves) for u in users):
                continue
            alone = len(arg) == len(placeholders)
            passed = {_passed_parameter(u, path, cls, kinds, leaves, parameter, alone) for u in users}
            if len(passed) == 1 and (name := passed.pop()) is not None:
                return Packed(start, tuple(p - start for p in positions), name, items)
    return None


def _tuple_arguments(call: fx.Node, path: str, packings: Packings, leaves: Leaves) -> list[tuple[tuple[object, ...], str, tuple[str, ...]]]:
    """(the tuple, the parameter, its items' names) for each tuple `call` passes for a packed parameter of
    its module, or, calling a leaf, for a parameter of the leaf's forward (its items named as the leaf
    unpacks them, else as the values passed)."""
    out = [(arg, group.name, group.items) for arg, group in _packed_arguments(call, path, packings) if isinstance(arg, tuple)]
    leaf = leaves.get(called_path(path, call)) if call.op == "call_module" and not out else None
    for i, arg in enumerate(call.args if leaf is not None else ()):
        passed = cast("tuple[object, ...]", arg) if isinstance(arg, tuple) and len(arg) > 1 else None
        parameter = positional_parameter(cast(type, leaf), i) if passed is not None else None
        if passed is not None and parameter is not None and local_name(parameter):
            unpacked = dict(unpacked_parameters(cast(type, leaf))).get(parameter, ())
            items = unpacked if len(unpacked) == len(passed) else tuple(a.name if isinstance(a, fx.Node) else f"item_{j}" for j, a in enumerate(passed))
            out.append((passed, parameter, items))
    return out


def _passes(call: fx.Node, items: tuple[object, ...], path: str, packings: Packings, leaves: Leaves) -> bool:
    """True when `call` reads `items` only as that tuple, passed for a packed parameter of its module or a
    parameter of a leaf."""
    if call.op != "call_module" or any(a in items for a in [*call.args, *call.kwargs.values()] if isinstance(a, fx.Node)):
        return False
    return any(arg == items for arg, _, _ in _tuple_arguments(call, path, packings, leaves))


def _passed_parameter(
    call: fx.Node, path: str, cls: type | str, kinds: Mapping[str, type | str], leaves: Leaves, parameter: str, alone: bool
) -> str | None:
    """The parameter of the caller's source forward its statement making `call` passes whole for the
    child's `parameter`: by keyword or position (passed_argument), else, where it holds all the inputs,
    the forward's only parameter (timm pit's `x = module(x)`); None where the statement passes none."""
    cls = _source(cls)
    parameters = source_parameters(cls)
    child_path = called_path(path, call)
    child = _source(kinds[child_path]) if child_path in kinds else leaves.get(child_path)
    name = passed_argument(call, str(call.target), child, parameter, caller=cls) if child is not None else None
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
    the inputs (or, `at_use`, right before the first node reading one), one after another."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    first_body = next(n for n in graph.nodes if n.op != "placeholder")  # the output at least
    order = {n: i for i, n in enumerate(graph.nodes)}
    for group in reversed(groups):
        with graph.inserting_before(placeholders[group.start]):
            whole = graph.placeholder(group.name)
        whole.meta[PACKED_ITEMS] = group.items
        if group.spelling:
            whole.meta[PACKED_SPELLING] = group.spelling
        items = [placeholders[group.start + i] for i in group.order]
        readers = [u for item in items for u in item.users]
        place = _statement_start(min(readers, key=order.__getitem__), order) if group.at_use and readers else first_body
        for index, item in enumerate(items):
            with graph.inserting_before(place):
                taken = graph.call_function(operator.getitem, (whole, index))
            taken.meta = {k: v for k, v in item.meta.items() if k in ("val", "tensor_meta", "example_value")}
            item.replace_all_uses_with(taken)
            graph.erase_node(item)


def _statement_start(node: fx.Node, order: dict[fx.Node, int]) -> fx.Node:
    """The first node of the values read by `node` alone, one after another right before it, which module.py
    writes inside its statement (`x.permute(0, 2, 1).reshape(B, C, H, W)`): the items are taken out
    before that statement, not in the middle of it."""
    while True:
        inner = [a for a in node.all_input_nodes if a.op not in ("placeholder", "get_attr") and len(a.users) == 1 and order[a] == order[node] - 1]
        if not inner:
            return node
        node = inner[0]


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


def _pass_whole(graph: fx.Graph, path: str, packings: Packings, graphs: Mapping[str, fx.Graph], leaves: Leaves) -> None:
    """A tuple argument of a packed child's or a leaf's call, of the items of one value that holds exactly
    them, in order, is that value (`position_embeddings` for `(cos, sin)`); items of it no longer read are
    not taken out of it."""
    passed: set[fx.Node] = set()
    for call in graph.find_nodes(op="call_module"):
        if packings.get(called_path(path, call)) or called_path(path, call) in leaves:
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
