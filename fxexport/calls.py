"""The module calls a flat graph recorded (`node.meta["nn_module_stack"]`), grouped into a tree.

symbolic_trace, torch.export and dynamo record, for every node, the module calls it ran inside,
outermost first, each as `key: (path, class)`; a module called again gets a new key
(`shared@1`). A call's nodes are a run of consecutive nodes sharing its key: the `Call`s below
form a tree of such runs, whose leaves are nodes. torch.nn layers (other than Sequential) are
not cut out: symbolic_trace calls them as leaves, and torch.export traces them into operations.
dynamo records paths from where it found the module (`L['self'].layer1.0`, `L['model'].0` for a
compiled function's argument, `G['model']` for a global): in its graphs they are read as paths
under the root (`layer1.0`, `model.0`), as torch.export reads `L['self']`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from torch import fx, nn

from .guards import is_guards_module


@dataclass(frozen=True)
class Frame:
    """One recorded module call: its key (unique per call), the module's path and its class."""

    key: str
    path: str
    cls: type | str  # torch.export records the qualified name, symbolic_trace the class


@dataclass
class Call:
    """A run of consecutive nodes inside one module call: nodes and nested calls, in order."""

    frame: Frame
    items: list[fx.Node | Call] = field(default_factory=list)
    misordered: bool = False  # its outputs are not in the order its source returns them (split._in_source_order)
    source_items: tuple[tuple[int, ...], int] | None = None  # the items of its source's tuple its outputs are, of how many

    def nodes(self) -> list[fx.Node]:
        """Every node of the call, nested calls' included, in graph order."""
        return list(self._nodes)

    def first_node(self) -> fx.Node:
        """The call's first node (no copy of them all, as `nodes()` makes)."""
        return self._nodes[0]

    @functools.cached_property
    def _nodes(self) -> tuple[fx.Node, ...]:
        # A call's items are fixed once call_tree made it; each enclosing call asks for them again.
        out: list[fx.Node] = []
        for item in self.items:
            out += item._nodes if isinstance(item, Call) else [item]
        return tuple(out)

    def interface(self) -> tuple[list[fx.Node], list[fx.Node]]:
        """(inputs, outputs): the values its nodes use from outside it (a parameter of a module outside its
        own subtree included) and its values used after it, each in the order the graph first uses or computes them."""
        inputs, outputs = self._interface
        return list(inputs), list(outputs)

    @functools.cached_property
    def _interface(self) -> tuple[tuple[fx.Node, ...], tuple[fx.Node, ...]]:
        # Asked of each call by several stages of split, while no node it reads or is read by changes.
        body = self._nodes
        inside = set(body)
        prefix = f"{self.frame.path}."
        inputs: dict[fx.Node, None] = {}
        for node in body:
            for used in node.all_input_nodes:
                if used in inside or used in inputs or (used.op == "get_attr" and str(used.target).startswith(prefix)):
                    continue
                inputs[used] = None
        outputs = tuple(n for n in body if any(u not in inside for u in n.users))
        return tuple(inputs), outputs

    def put_outputs(self, outputs: Sequence[fx.Node]) -> None:
        """Return its outputs in this order (the source's), not the graph's."""
        inputs, current = self._interface
        assert set(outputs) == set(current) and len(outputs) == len(current), "the same outputs, reordered"
        self.__dict__["_interface"] = (inputs, tuple(outputs))

    def calls(self) -> list[Call]:
        """This call and every nested call, children before their parents."""
        out: list[Call] = []
        for item in self.items:
            if isinstance(item, Call):
                out += item.calls()
        return [*out, self]


def class_name(cls: type | str) -> str:
    """`BasicBlock` for the class or for `torchvision.models.resnet.BasicBlock`."""
    return cls.__name__ if isinstance(cls, type) else cls.rpartition(".")[2]


def qualified_name(cls: type | str) -> str:
    """`torchvision.models.resnet.BasicBlock`."""
    return f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else cls


INFERRED = "<inferred>"  # the module of a class recorded for a call fxexport inferred (inferred_stacks.py)


def is_inferred(cls: type | str) -> bool:
    """True for the class of a call fxexport inferred: named after where the module is held or after the
    class the source model holds there; its code is the graph's, not that class's."""
    return isinstance(cls, str) and cls.startswith(f"{INFERRED}.")


# During an export, the source model's class each inferred call named after one (`classes_from`) is named
# after, by the name recorded for the call: the class itself, not imported again by name (a class defined in
# a function or redefined since the model was built would not be the one).
_NAMED_AFTER: dict[str, type] = {}


def name_after(cls: type) -> str | None:
    """The class recorded for an inferred call named after the source model's class `cls`
    (`<inferred>.timm.models._efficientnet_blocks.InvertedResidual`); None where another class of that
    qualified name took it in this export (a class redefined after some of the model was built)."""
    name = f"{INFERRED}.{qualified_name(cls)}"
    if _NAMED_AFTER.setdefault(name, cls) is not cls:
        return None
    return name


def any_named_after() -> bool:
    """True when an inferred call of this export was named after a class of the source model."""
    return bool(_NAMED_AFTER)


def named_after(cls: type | str) -> type | None:
    """The source model's class an inferred call is named after, None for one named after where it is held."""
    return _NAMED_AFTER.get(cls) if isinstance(cls, str) else None


def resolve_class(cls: type | str) -> type | None:
    """The class itself; torch.export records only its name, imported here when it can be."""
    if isinstance(cls, type):
        return cls
    module, _, name = cls.rpartition(".")
    if is_inferred(cls) or not module:
        return None
    try:
        found = getattr(importlib.import_module(module), name)
    except Exception:  # noqa: BLE001 - importing an arbitrary module may raise anything
        return None
    return found if isinstance(found, type) else None


SEQUENTIAL = "torch.nn.modules.container.Sequential"  # torch.nn.Sequential, as torch.export records it


def is_sequential(cls: type | str) -> bool:
    """True for torch.nn.Sequential (which symbolic_trace traces through, unlike other torch.nn layers),
    and for a subclass that runs Sequential's forward (torchvision's Conv2dNormActivation)."""
    if qualified_name(cls) == SEQUENTIAL:
        return True
    found = resolve_class(cls)
    return found is not None and issubclass(found, nn.Sequential) and found.forward is nn.Sequential.forward


def is_library_sequential(cls: type | str) -> bool:
    """True for torch.nn.Sequential itself."""
    return qualified_name(cls) == SEQUENTIAL


@functools.lru_cache(maxsize=1 << 12)
def is_library_layer(cls: type | str) -> bool:
    """A torch.nn / torch.ao layer other than Sequential: never cut out as a generated class."""
    module = qualified_name(cls).rpartition(".")[0]
    return module.startswith(("torch.nn.", "torch.ao.nn.")) and not is_library_sequential(cls)


def is_torch_class(cls: type | str) -> bool:
    """A class torch defines (its module under `torch.`), or the qualified name torch.export records of one."""
    module = cls if isinstance(cls, str) else str(getattr(cls, "__module__", None) or "")
    return module.startswith("torch.")


def model_classes(cls: type) -> list[type]:
    """The class and its bases, torch's own classes and `object` aside."""
    return [klass for klass in cls.__mro__ if not is_torch_class(klass) and klass is not object]


def forget_frames() -> None:
    """Drop the frames and classes kept during an export, so that no user class outlives it here."""
    _NAMED_AFTER.clear()
    _frame.cache_clear()
    _kept_frames.cache_clear()
    is_library_layer.cache_clear()


def _names_a_class(cls: object) -> bool:
    """A class or its dotted name (torch.export records `_empty_nn_module_stack_from_metadata_hook` for some nodes)."""
    return isinstance(cls, type) or (isinstance(cls, str) and "." in cls)


def body_nodes(gm: fx.GraphModule) -> list[fx.Node]:
    """The nodes that run in order: not placeholders, the output, get_attr (made where used) or input guards."""
    return graph_body_nodes(gm.graph, dict(gm.named_modules(remove_duplicate=False)))


def graph_body_nodes(graph: fx.Graph, modules: dict[str, nn.Module]) -> list[fx.Node]:
    """body_nodes of `graph`, run by a module holding `modules` (by path)."""
    guards = {path for path, module in modules.items() if is_guards_module(module)}
    return [node for node in graph.nodes if node.op not in ("placeholder", "output", "get_attr") and not (node.op == "call_module" and node.target in guards)]


def stack_frames(node: fx.Node) -> list[Frame]:
    """Every well-formed entry of the node's `nn_module_stack`, outermost first."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return []
    entries, dynamo = tuple(stack.items()), _DYNAMO_GRAPH.get()
    try:
        return list(_kept_frames(entries, dynamo))
    except TypeError:  # an entry that cannot be hashed
        return list(_read_frames(entries, dynamo))


def _read_frames(entries: tuple[tuple[object, object], ...], dynamo: bool) -> tuple[Frame, ...]:
    path = module_path if dynamo else str
    return tuple(_frame(str(key), path(entry[0]), entry[1]) for key, entry in entries
                 if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str))  # fmt: skip


# The nodes of a call record equal stacks, each read several times (split, its recovered statements, called
# functions): read once per stack during one export (forget_frames).
_kept_frames = functools.lru_cache(maxsize=1 << 14)(_read_frames)


MISORDERED = "fxexport_misordered_items"  # in a call_module node's meta: its items are not in its source's order
SOURCE_ITEMS = "fxexport_source_items"  # in a call_module node's meta: Call.source_items
SOURCE_CLASS = "fxexport_source_class"  # in a GraphModule split cut out of a module call (its meta): the module's class


_DYNAMO_GRAPH: ContextVar[bool] = ContextVar("dynamo_graph", default=False)


@contextlib.contextmanager
def paths_of(gm: fx.GraphModule) -> Iterator[None]:
    """While collecting `gm`: read its recorded paths as dynamo's where dynamo made it (its `meta`
    says so), so that a module another tracer recorded as named `L['self']` keeps its name."""
    meta = getattr(gm, "meta", None)
    token = _DYNAMO_GRAPH.set(isinstance(meta, dict) and "dynamo_compile_id" in meta)
    try:
        yield
    finally:
        _DYNAMO_GRAPH.reset(token)


def dynamo_graph() -> bool:
    """True while collecting a graph dynamo made (paths_of)."""
    return _DYNAMO_GRAPH.get()


# dynamo's name for where it found a module: a local (`L['self']`) or global (`G['model']`) of the
# compiled frame, then attributes
_DYNAMO_ROOT = re.compile(r"""[LG]\[(['"])([A-Za-z_][A-Za-z0-9_]*)\1\](?=\.|$)""")


_MODULE_NAMES = frozenset(dir(nn.Module()))  # `forward`, `training`, ...: no child takes them


def module_path(recorded: str) -> str:
    """The path under the root of a path dynamo recorded: `L['self'].blocks.0` is `blocks.0`,
    `L['model'].0` (a compiled function's argument) `model.0`; any other as recorded, and so is one
    whose first name no child may take (`L['forward']`: an attribute of every module)."""
    found = _DYNAMO_ROOT.match(recorded)
    if found is None:
        return recorded
    rest = recorded[found.end() :].removeprefix(".")
    name = found.group(2)
    if name == "self":
        return rest
    if name in _MODULE_NAMES:
        return recorded
    return f"{name}.{rest}" if rest else name


# Every node of a call repeats the call's entries: one Frame (immutable) per entry, and one answer per
# class, during one export (forget_frames).
@functools.lru_cache(maxsize=1 << 14)
def _frame(key: str, path: str, cls: type | str) -> Frame:
    return Frame(key, path, cls)


def recorded_frames(node: fx.Node, leaves: set[str]) -> tuple[Frame, ...]:
    """The calls `node` ran inside that could become classes: not the root, torch.nn layers or called leaves."""
    if not node.meta.get("nn_module_stack"):
        return ()  # most nodes of a flat graph
    return tuple(f for f in stack_frames(node) if f.path and f.path not in leaves and not is_library_layer(f.cls) and _names_a_class(f.cls))


def call_tree(nodes: list[fx.Node], stacks: dict[fx.Node, tuple[Frame, ...]], depth: int = 0) -> list[fx.Node | Call]:
    """Group runs of nodes that share the frame at `depth` into calls, recursively."""
    items: list[fx.Node | Call] = []
    i = 0
    while i < len(nodes):
        stack = stacks[nodes[i]]
        if len(stack) <= depth:
            items.append(nodes[i])
            i += 1
            continue
        j = i
        while j < len(nodes) and len(stacks[nodes[j]]) > depth and stacks[nodes[j]][depth].key == stack[depth].key:
            j += 1
        items.append(Call(stack[depth], call_tree(nodes[i:j], stacks, depth + 1)))
        i = j
    return items
