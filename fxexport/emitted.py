"""Forwards emitted once per equal module graph: the six blocks of a transformer are one forward.

collect emits a forward for every module split cut out (split.py), then shares one class among the
instances whose code came out the same: a 6-block transformer's blocks, attentions and MLPs are 13
emissions of 3 forwards (a fifth of its export). Emitting reads the module's graph (each node's op,
target, arguments, and what it recorded: values, stack traces, module calls), the module's children
and attributes, and whether the names it asks about are taken (a local takes no name taken); where the
first are equal and none of those names was taken since, so is the forward.

`Emissions` spells those inputs out as hashable values. A module path in what a node recorded is
written relative to the module's own path (`blocks.3.attention.qkv` in the module at `blocks.3` is
`attention.qkv` there, as `blocks.2.attention.qkv` is in the module at `blocks.2`). Anything the key
cannot spell by value (an object of an unknown kind) is spelled by its identity, so two modules
holding different such objects never share a forward: an unknown input costs an emission, never a
wrong forward. The keys of node.meta in UNREAD_META are not spelled: they number or name a node apart
from its code (torch.export's `seq_nr`, `from_node`, `torch_fn`, `source_fn_stack`, `original_aten`),
and no stage of collect reads them. A child split cut out is spelled by its own graph, in full: a
forward reads its children's graphs (loops.py rolls a chain of children only where their graphs are
equal), and children of one generated class may differ in code their forwards leave out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import fx, nn

from .module_paths import joined

if TYPE_CHECKING:
    from .forward import Forward
    from .names import Namespace

UNREAD_META = frozenset({"seq_nr", "from_node", "torch_fn", "source_fn_stack", "original_aten"})


class Emissions:
    """The forwards emitted so far, by what their emission read. A module's outline (its class, its
    children and their settings, its graph's length) is spelled first; its graph in full only
    where an earlier module has the same outline (blocks of other channel counts never get that far)."""

    def __init__(self) -> None:
        self._by_outline: dict[Hashable, list[_Emitted]] = {}
        self._graphs: dict[int, tuple[fx.GraphModule, Hashable]] = {}  # by module: its graph spelled

    def forward(
        self, gm: fx.GraphModule, path: str, parameters: int, classes: Mapping[str, str], names: Namespace, emit: Callable[[], Forward]
    ) -> Forward:
        """`gm`'s forward (`gm` being the module at `path`): one emitted before for a module whose emission
        read the same, else `emit()`. `parameters`: how many forward parameter names the export has taken
        (a local may take another forward's); `classes`: the class generated for each module split cut out,
        by path; `names`: the module's names, of which an emission asks about some (a local may not take a
        name taken): an earlier forward holds while none of the names it asked about was taken since."""
        earlier = self._by_outline.setdefault(_outline(gm, path, parameters, classes), [])
        if earlier:
            graph = self.graph(gm, path)
            for emitted in earlier:
                if self.graph(emitted.gm, emitted.path) == graph and emitted.asked.isdisjoint(names.added_since(emitted.mark)):
                    return emitted.forward
        with names.asking() as asked:
            forward = emit()
        earlier.append(_Emitted(gm, path, forward, frozenset(asked), names.mark()))
        return forward

    def graph(self, gm: fx.GraphModule, path: str) -> Hashable:
        """The module's graph and those of the modules split cut out inside it, what their nodes recorded, and
        the values they hold that their graphs read (spelled once a module: collect changes no graph split made)."""
        inner = tuple((name, self._own_graph(module, where)) for name, where, module in _inside(gm, path) if isinstance(module, fx.GraphModule))
        return (self._own_graph(gm, path), inner)

    def _own_graph(self, gm: fx.GraphModule, path: str) -> Hashable:
        found = self._graphs.get(id(gm))
        if found is None or found[0] is not gm:
            found = self._graphs[id(gm)] = (gm, _graph(gm, path))
        return found[1]


class _Emitted:
    def __init__(self, gm: fx.GraphModule, path: str, forward: Forward, asked: frozenset[str], mark: int) -> None:
        self.gm, self.path, self.forward, self.asked, self.mark = gm, path, forward, asked, mark


def _outline(gm: fx.GraphModule, path: str, parameters: int, classes: Mapping[str, str]) -> Hashable:
    modules = tuple((name, _kind(module, classes.get(where)), module.training, _settings(module)) for name, where, module in _inside(gm, path))
    return (type(gm).__name__, parameters, len(gm.graph.nodes), modules)


def _inside(gm: fx.GraphModule, path: str) -> Iterator[tuple[str, str, nn.Module]]:
    """Every module inside `gm` (the module at `path`): its name there, its path in the model, itself."""
    for name, module in gm.named_modules(remove_duplicate=False):
        if name:
            yield name, joined(path, name), module


def _graph(gm: fx.GraphModule, path: str) -> Hashable:
    """The module's own graph, what its nodes recorded, and the values it holds that the graph reads."""
    spell = _Speller(path, {node: i for i, node in enumerate(gm.graph.nodes)})
    nodes = tuple(
        (
            node.op, node.name, spell(node.target), spell(node.args), spell(node.kwargs), spell(node.type),
            spell.meta(node.meta, node.op == "placeholder"), len(node.users),
        )
        for node in gm.graph.nodes
    )  # fmt: skip
    held = tuple((str(n.target), spell(_attribute(gm, str(n.target)))) for n in gm.graph.find_nodes(op="get_attr"))
    codegen = gm.graph._codegen  # how the graph takes and returns values (a pytree's, torch.export's root)
    return (spell(gm.meta), nodes, held, type(codegen), repr(getattr(codegen, "pytree_info", None)))


def _kind(module: nn.Module, generated: str | None) -> Hashable:
    """A module's class; for one split cut out (a GraphModule, of a class of its own), the class collect
    generated for it (its graph is spelled with its parent's, Emissions.graph), else its identity."""
    if isinstance(module, fx.GraphModule):
        return ("generated", generated) if generated is not None else ("id", id(module))
    return cast(Hashable, type(module))


def _settings(module: nn.Module) -> str:
    """A torch layer's constructor settings as its repr shows them; "" for other modules, whose
    settings are their children and graph."""
    return module.extra_repr() if type(module).__module__.startswith("torch.") else ""


def _attribute(gm: fx.GraphModule, target: str) -> Any:
    owner, _, name = target.rpartition(".")
    try:
        module = gm.get_submodule(owner) if owner else gm
    except AttributeError:
        return _Missing
    return getattr(module, name, _Missing)


class _Missing:
    pass


_PLAIN = (str, int, bool, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format)


class _Speller:
    """Values as hashable spellings: nodes by position, module paths relative to the module's own,
    tensors by what a graph records of them, anything unknown by its identity."""

    def __init__(self, path: str, positions: dict[fx.Node, int]) -> None:
        self.path = path
        self.positions = positions
        self.stacks: dict[tuple[Any, ...], tuple[tuple[Hashable, Hashable], ...]] = {}

    def __call__(self, value: Any) -> Hashable:
        kind = type(value)
        if kind is str:
            return value  # no other spelling is a str
        if isinstance(value, fx.Node):
            return ("node", self.positions.get(value, id(value)))
        if kind in _PLAIN or value is Ellipsis:
            return (kind, value)
        if isinstance(value, (tuple, list)):
            return (kind, tuple(self(v) for v in value))
        if kind is float:
            return (kind, "nan") if math.isnan(value) else (kind, value, math.copysign(1.0, value))
        if isinstance(value, dict):
            return (kind, tuple((self(k), self(v)) for k, v in value.items()))
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, slice):
            return (kind, self(value.start), self(value.stop), self(value.step))
        if isinstance(value, (type, torch.SymInt)) or callable(value):
            return ("object", value) if _hashable(value) else ("id", id(value))
        return ("id", id(value))

    def meta(self, meta: dict[str, Any], placeholder: bool) -> Hashable:
        """What a node recorded; its module calls (`nn_module_stack`) by path relative to the module's, in
        order (their keys are ids torch makes of the paths). An input's calls are its caller's (where the
        value passed in was made: the block before, for a chain of blocks): by their classes alone (the
        statement that made it, its stack trace, is read: source_names.py's reusable inputs)."""
        spelled: list[tuple[str, Hashable]] = []
        for key, value in meta.items():
            if key in UNREAD_META:
                continue
            if key == "nn_module_stack" and isinstance(value, dict):
                stack = self.stack(tuple(value.values()))
                spelled.append((key, tuple(cls for _, cls in stack) if placeholder else stack))
            else:
                spelled.append((key, self(value)))
        return tuple(spelled)

    def stack(self, frames: tuple[Any, ...]) -> tuple[tuple[Hashable, Hashable], ...]:
        """Recorded module calls, spelled once per stack (the nodes of one call record equal ones)."""
        try:
            return self.stacks[frames]
        except KeyError:
            found = self.stacks[frames] = tuple(self.frame(frame) for frame in frames)
        except TypeError:  # a frame that cannot be hashed
            found = tuple(self.frame(frame) for frame in frames)
        return found

    def frame(self, frame: object) -> tuple[Hashable, Hashable]:
        """A recorded module call: (path, class)."""
        if not (isinstance(frame, tuple) and len(frame) == 2):
            return ("frame", self(frame))
        path, cls = frame
        return (self.relative(path), cast(Hashable, cls) if isinstance(cls, (type, str)) else ("id", id(cls)))

    def tensor(self, value: torch.Tensor) -> Hashable:
        shape = tuple(str(s) for s in value.shape)
        stride = tuple(str(s) for s in value.stride()) if value.layout == torch.strided else ()
        return ("tensor", type(value), shape, stride, value.dtype, str(value.device), value.requires_grad, isinstance(value, nn.Parameter))

    def relative(self, path: object) -> Hashable:
        """A module path as seen from the module's own: itself, inside it, an ancestor (levels up), or elsewhere."""
        if not isinstance(path, str):
            return ("id", id(path))
        if path == self.path:
            return ("self",)
        if not self.path:
            return ("in", path)
        if path.startswith(self.path + "."):
            return ("in", path[len(self.path) + 1 :])
        if not path or self.path.startswith(path + "."):
            return ("up", self.path.count(".") + 1 - (path.count(".") + 1 if path else 0))
        return ("at", path)


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
