"""A block whose children each read the list of every earlier output, written as the loop it was.

DenseNet's block calls its layers one after another, each with the block's input and every
earlier layer's output as one list, and joins them all at the end:

    features = [x]
    for layer in self.values():
        features.append(layer(features))
    return torch.cat(features, 1)

The trace unrolls it into calls whose lists grow by one (`self["layer3"]([x, layer1, layer2])`),
lines that grow with the square of the depth. Where a forward holds such a run of calls, of every
child of one container in order, with nothing else in between, and the lists are read nowhere else,
it is written as the loop. Each call receives the one growing list; the callees take it as their
parameter (packing.py) and only read it while they run, so each sees what its unrolled list held.

Blocks of one code applied one after another over a whole container, with the same other arguments,
are a loop too (a chain): `for layer in self.layers: x = layer(x, mask)`. A ModuleList's, of one class
(a strided first block has a code of its own), is a loop however short: its source loops over it, and
stages of one, two and five blocks are then one class (timm's mvitv2). So is a Sequential or
ModuleDict subclass whose forward runs all its children in order, whatever their classes
(torchvision's `IntermediateLayerGetter`: `for layer in self.values(): x = layer(x)`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import cast

import torch
from torch import fx, nn
from torch.fx.immutable_collections import immutable_list

from .access import DICT_BASE, SEQUENTIAL_BASE, module_access
from .annotations import source_class_name
from .calls import SOURCE_CLASS
from .guards import is_guards_module

MIN_ACCUMULATED = 2  # layers an accumulation loop replaces
MIN_CHAIN = 3  # calls a chain loop replaces: two read as well unrolled (but over a ModuleList)
_PLAIN = (int, float, bool, str, type(None))  # arguments compared by value (their repr)
_LISTS = (list, immutable_list)


@dataclass(frozen=True)
class Accumulation:
    """The calls the loop replaces, the value its list starts with, the node that reads the full list
    (and that list among its arguments), and what the loop iterates (`self.values()`)."""

    calls: tuple[fx.Node, ...]
    start: fx.Node
    reader: fx.Node
    container: list[fx.Node]
    children: str


@dataclass(frozen=True)
class Chain:
    """Calls of every child of one container in order, each taking the one before's output (at one
    position: first, or where its source forward lists it) and the same other arguments: `for layer in
    self.layers: x = layer(x, mask)`, `for block in self.blocks: cls_tokens = block(x, cls_tokens)`."""

    calls: tuple[fx.Node, ...]
    start: fx.Node
    children: str
    position: int = 0  # of the value carried from call to call among each call's arguments


Loop = Accumulation | Chain


def loops(gm: fx.GraphModule, statement: set[fx.Node], graph: fx.Graph | None = None) -> tuple[Loop, ...]:
    """The runs of calls in `gm`'s forward (or `graph`, a graph of its) written as loops, in order.
    `statement`: the nodes written as statements."""
    nodes = [n for n in (gm.graph if graph is None else graph).nodes if n in statement]
    found: list[Loop] = []
    i = 0
    while i < len(nodes):
        loop = (_run(gm, nodes, i) or _chain(gm, nodes, i)) if nodes[i].op == "call_module" else None
        found += [loop] if loop else []
        i += len(loop.calls) if loop else 1
    return tuple(found)


def _chain(gm: fx.GraphModule, nodes: list[fx.Node], at: int) -> Chain | None:
    """The chain of calls that starts at `nodes[at]`, if it is one of at least MIN_CHAIN calls (any, over a ModuleList)."""
    first = nodes[at]
    if first.op != "call_module" or not first.users:
        return None
    following = nodes[at + 1] if at + 1 < len(nodes) else None
    carried = [p for p, arg in enumerate(following.args) if arg is first] if following is not None else []
    position = carried[0] if len(carried) == 1 else 0
    if len(first.args) <= position or not isinstance(first.args[position], fx.Node):
        return None
    calls = [first]
    parent = str(first.target).rpartition(".")[0]
    for node in itertools.islice(nodes, at + 1, None):
        previous = calls[-1]
        if node.op != "call_module" or len(node.args) <= position or node.args[position] is not previous or set(previous.users) != {node}:
            break
        if str(node.target).rpartition(".")[0] != parent or not _same_arguments(node, first, position):
            break
        calls.append(node)
    if not calls[-1].users:
        return None
    children = _children(gm, [str(c.target) for c in calls])
    if children is None or children.endswith(".children()"):
        return None  # the layers of a block one after another are its code, not a loop over a container
    listed = isinstance(gm.get_submodule(parent) if parent else gm, nn.ModuleList)  # a list the source loops over, however long
    if len(calls) < (1 if listed else MIN_CHAIN):
        return None
    own = children in ("self", "self.values()")  # a container's own forward over all its children, as nn.Sequential runs them
    if not own and len({_code(gm.get_submodule(str(c.target)), listed) for c in calls}) != 1:
        return None  # blocks of other classes or codes: each call says which
    return Chain(tuple(calls), cast(fx.Node, first.args[position]), children, position)


def _code(module: nn.Module, listed: bool = False) -> tuple[object, ...]:
    """Its class name and, for a generated one, its graph's nodes (what they run, on what); `listed`:
    its source class's name alone (blocks of one class in a ModuleList, a variant's code of its own
    among them: an export's `Block_1` is its source's `Block` too, so the export of a re-trace loops
    where the export did). Only how the code reads depends on it: each block runs its own module either way."""
    if listed:
        source = module.meta.get(SOURCE_CLASS) if isinstance(module, fx.GraphModule) else None
        return (type(module).__name__ if source is None else source_class_name(source),)
    if not isinstance(module, fx.GraphModule):
        return (type(module).__name__,)
    return type(module).__name__, *((n.op, str(n.target), str(n.args), str(n.kwargs)) for n in module.graph.nodes)


def _same_arguments(a: fx.Node, b: fx.Node, position: int = 0) -> bool:
    """The same arguments but the one at `position`: the same values, or equal plain literals."""
    rest_a, rest_b = (*a.args[:position], *a.args[position + 1 :]), (*b.args[:position], *b.args[position + 1 :])
    if len(rest_a) != len(rest_b) or a.kwargs.keys() != b.kwargs.keys():
        return False
    pairs = [*zip(rest_a, rest_b), *((a.kwargs[k], b.kwargs[k]) for k in a.kwargs)]
    return all(_same_argument(x, y) for x, y in pairs)


def _same_argument(x: object, y: object) -> bool:
    """The same value, equal plain literals (-0.0 is not 0.0), or tuples of such (a packed parameter's items)."""
    if type(x) is tuple and type(y) is tuple:
        return len(x) == len(y) and all(_same_argument(i, j) for i, j in zip(x, y))
    return x is y or (type(x) is type(y) and type(x) in _PLAIN and repr(x) == repr(y))


def _run(gm: fx.GraphModule, nodes: list[fx.Node], at: int) -> Accumulation | None:
    """The run of calls that starts at `nodes[at]`, if it is one."""
    first = _growing_list(nodes[at])
    if first is None or len(first) != 1:
        return None
    start = first[0]
    calls = [nodes[at]]
    for node in itertools.islice(nodes, at + 1, None):
        values = _growing_list(node)
        if values is None or not _same(values, [start, *calls]):
            break
        calls.append(node)
    if len(calls) < MIN_ACCUMULATED:
        return None
    readers = {u for c in calls for u in c.users} - set(calls)
    if len(readers) != 1:
        return None
    reader = readers.pop()
    found = [a for a in (*reader.args, *reader.kwargs.values()) if type(a) in _LISTS and _same(cast("list[object]", a), [start, *calls])]
    reads: list[fx.Node] = []
    fx.map_arg((reader.args, reader.kwargs), reads.append)
    if len(found) != 1 or any(reads.count(c) != 1 for c in calls):
        return None
    for later, call in enumerate(calls):
        if any(u not in calls[later + 1 :] and u is not reader for u in call.users):
            return None
    if not all(_only_reads_its_list(gm.get_submodule(str(c.target))) for c in calls):
        return None
    children = _children(gm, [str(c.target) for c in calls])
    if children is None:
        return None
    return Accumulation(tuple(calls), start, reader, cast("list[fx.Node]", found[0]), children)



def _growing_list(node: fx.Node) -> list[fx.Node] | None:
    """The values of a module call whose one argument is a list of values, or None."""
    if node.op != "call_module" or node.kwargs or len(node.args) != 1 or type(node.args[0]) not in _LISTS:
        return None
    values = list(cast("list[object]", node.args[0]))
    return cast("list[fx.Node]", values) if all(isinstance(v, fx.Node) for v in values) else None


def _only_reads_its_list(module: nn.Module) -> bool:
    """A generated method whose one parameter, the list, goes only into functions (`torch.cat`): it
    neither keeps nor returns the list, so passing the one growing list is the same as a copy."""
    if not isinstance(module, fx.GraphModule):
        return False
    params = list(module.graph.find_nodes(op="placeholder"))
    return len(params) == 1 and all(u.op == "call_function" and _torch_function(u.target) for u in params[0].users)


def _torch_function(target: object) -> bool:
    """A torch function or operator (`torch.cat`, `aten.cat.default`): none keeps or edits a list it
    is given; a user's function (copied from a `torch.fx.wrap`) may."""
    return isinstance(target, torch._ops.OpOverload) or getattr(target, "__module__", "").split(".")[0] == "torch"


def _same(values: list[object] | list[fx.Node], nodes: list[fx.Node]) -> bool:
    return len(values) == len(nodes) and all(a is b for a, b in zip(values, nodes))


def _children(gm: fx.GraphModule, targets: list[str]) -> str | None:
    """Code iterating exactly the modules at `targets`, in order: the children of one container."""
    parent, _, _ = targets[0].rpartition(".")
    names = [t.rpartition(".")[2] for t in targets]
    if any(t.rpartition(".")[0] != parent for t in targets):
        return None
    holder = gm.get_submodule(parent) if parent else gm
    held = {k: m for k, m in holder._modules.items() if not is_guards_module(m)}  # torch.export's checks: no child of the export
    if list(held) != names or len({id(m) for m in held.values()}) != len(names) or any(m is None for m in held.values()):
        return None
    access = module_access("self", gm, parent.split(".")) if parent else "self"
    if isinstance(holder, (nn.Sequential, nn.ModuleList)) or (holder is gm and gm.meta.get(SEQUENTIAL_BASE, False)):
        return access
    if isinstance(holder, nn.ModuleDict) or (holder is gm and gm.meta.get(DICT_BASE, False)):
        return f"{access}.values()"
    return f"{access}.children()"
