"""collect: GraphModule -> PackageIR. Every name and literal becomes code here, nowhere else."""

from __future__ import annotations

import contextlib
import dataclasses
import keyword
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import cast

import torch
from torch import fx, nn

from .access import DICT_BASE, SEQUENTIAL_BASE, module_access
from .alone_flags import alone_flags
from .annotations import (
    class_annotation,
    forget_traces,
    recovering,
    root_code_traced,
    source_class_name,
    tracing_root,
    without_echoes,
)
from .augmented import augmented
from .called_functions import called_frames
from .calls import any_named_after, forget_frames, is_sequential, paths_of, qualified_name
from .code_slots import forget_lines
from .describe import describe, producer
from .emitted import Emissions
from .errors import FxExportError
from .forward import Forward, emit_forward, parameter_names, register_globals
from .generalize import generalize
from .guards import CHECK_INPUT, is_guards_module
from .identity_calls import shared_identity_calls
from .imports import ImportTable
from .inferred_stacks import inferred_stacks
from .ir import ClassIR, PackageIR, PackedIR, PackedObjectIR, TensorIR
from .kept_inputs import as_in_source
from .kept_values import forget_kept_values
from .layers import restore_layers
from .libclasses import can_copy, copied_class, setting_lines
from .lifted_names import local_lifted_names
from .literals import literal
from .module_paths import relative, submodule, within
from .names import BUILTIN_NAMES, Namespace, camel_case, code_of, is_plain_identifier, quote, sanitize, variant_names
from .none_arms import none_arms_joined
from .oplibs import forget_libraries
from .packed_objects import KEEP_IN_STATE_DICT, is_packed_object, packed_object
from .parts import is_subclass, quantized_parts, subclass_parts
from .quantized import needs_cpu, packing, unpacking_once
from .raising import raise_aten
from .rebuild import (
    CONTAINERS,
    constructor_code,
    extra_settings,
    fingerprint,
    is_holder,
    is_torch_module,
    swapped_children,
)
from .recovered_statements import recovered_statements
from .returned_values import forget_returned
from .rolled import Roll, Rolled, calls_only_child, loop_kind, rolled
from .runs import repeated
from .shared_modules import SHARED_MODULES
from .source_names import forget_statements, forward_source, source_parameters
from .split import Structure, sequential_base, split
from .storages import share_storages
from .traced_messages import formatted_messages
from .usermodules import trace_user_module
from .with_blocks import inline_with_blocks

# Module-level names of the generated code that are not imports.
RESERVED = {
    "self", "WEIGHT_FILES", "TIED_TENSORS", "TENSOR_VIEWS", "TENSOR_COUNT", "QUANTIZED_TENSORS", "PACKED_WEIGHTS", "PACKED_OBJECTS", "TENSOR_SUBCLASSES",
    "load_tensors", "skip_init", CHECK_INPUT, KEEP_IN_STATE_DICT, "load_weights", "weights",
    "device", "dtype", "__file__", "__name__",
}  # fmt: skip
STRUCTURES = ("structured", "flat")
MAX_COLLECTS = 4  # collects of a model: again while a one-step loop joins no class that runs it (Collector.lone_singles)
# Builtins the emitted code may call; a forward parameter with one of these names is renamed.
EMITTED_BUILTINS = {"getattr", "setattr", "slice", "super", "Ellipsis", "None", "True", "False"}


# Past this many modules in training mode in an eval model, all of them the modules that hold children
# (as symbolic_trace leaves the containers it rebuilds), the flags are set by that rule, not one by one.
_SPELLED_FLAGS = 3
_CONTAINERS_TRAIN = (
    "self.eval()",
    "for module in self.modules():  # as traced: the modules holding children train",
    "    if module is not self and next(module.children(), None) is not None:",
    "        module.training = True",
)

_HOLDER_TYPES = (nn.Module, *CONTAINERS)
_TRACED_RULE_LINES = 9  # _traced_train as black writes it


def _traced_train(nn_name: str) -> tuple[str, ...]:
    """Training flags as symbolic_trace leaves them: it rebuilds each module it traced through as a plain
    module, which trains, and keeps the layers it calls. In the package those are the classes module.py
    defines and the plain modules and containers (rebuilt_by_fx)."""
    holders = ", ".join(f"{nn_name}.{cls.__name__}" for cls in _HOLDER_TYPES)
    head = ("self.eval()", "# as traced: the modules fx rebuilt to hold what it traced through train", "for module in self.modules():")
    if nn_name == "nn":  # as black writes it, so that the export runs no black (its first call imports it: 0.1 s)
        test = ("    if module is not self and (", "        type(module).__module__ == __name__", "        or type(module)", f"        in ({holders})", "    ):")
        return (*head, *test, "        module.training = True")
    return (*head, f"    if module is not self and (type(module).__module__ == __name__ or type(module) in ({holders})):", "        module.training = True")


_SHARED_COMMENT = (
    "modules held here that others run: their attributes, not children, so state_dict() lists each once;",
    "a module put in place of one of them (quantization, adapters) must be set on those attributes too",
)


def _every_path(module: nn.Module, path: tuple[str, ...] = (), above: frozenset[int] = frozenset()) -> Iterator[tuple[tuple[str, ...], nn.Module]]:
    """(path, module) at every place of the tree, a module held at two places at each (flags set)."""
    yield path, module
    for name, child in _children(module):
        if id(child) not in above:
            yield from _every_path(child, (*path, name), above | {id(module)})


def _children(module: nn.Module) -> list[tuple[str, nn.Module]]:
    """A module's children in the tree its flags are set on (not the input checks)."""
    return [(name, child) for name, child in module._modules.items() if child is not None and not is_guards_module(child)]


@dataclass
class _ClassDraft:
    gm: fx.GraphModule
    path: tuple[str, ...]
    init_lines: list[str] = field(default_factory=list)
    attr_lines: list[str] = field(default_factory=list)
    called: frozenset[str] = frozenset()


class _Collector:
    def __init__(
        self, structure: Structure, class_name: str, standalone: bool, input_checks: bool = True, annotate: bool = True, shapes: bool = False,
        rolls: bool = False, unrolled_singles: frozenset[str] = frozenset(),
    ) -> None:
        root = structure.root
        self.structure = structure
        self.input_checks = input_checks
        self.annotate = annotate
        self.shapes = shapes
        self.layer_keys: dict[int, tuple[object, ...] | None] = {}  # by id: the modules live through the export
        self.layer_codes: dict[tuple[object, ...], str] = {}
        self.layer_extras: dict[tuple[object, ...], tuple[list[tuple[str, str]], list[tuple[tuple[str, ...], str, object]]]] = {}
        self.rolls = rolls and not shapes  # runs repeated per child of a container written as loops (rolled.py)
        self.unrolled_singles = unrolled_singles  # module paths whose container of one child is not run as a loop
        self.loop_containers: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # module path -> containers looped over once, over more
        self.root = root
        # modules run as other modules' attributes (shared_modules.py): called, though no graph of their holders calls them
        self.run_elsewhere = frozenset(
            outside for _, module in _every_path(root) if isinstance(module, fx.GraphModule) for _, outside in module.meta.get(SHARED_MODULES, ())
        )
        self.recorded = producer(root) == "torch.export"  # its recorded values hold: it checks its inputs
        self.namespace = Namespace(BUILTIN_NAMES | RESERVED | {class_name})
        # names an earlier export gave variant classes (`Block_1`): kept for those classes, which come first
        self.variant_names = variant_names(source_class_name(source) for _, source in structure.sources)
        self.handed: set[str] = set()
        for name in self.variant_names:
            self.namespace.reserve(name)
        self.imports = ImportTable(self.namespace)
        self.imports.use("torch")
        self.imports.use("nn")
        self.classes: dict[tuple[object, ...], ClassIR] = {}  # children before the classes that use them
        self.class_paths: dict[str, str] = {}  # module path -> generated class name
        self.module_paths: dict[int, tuple[str, ...]] = {}
        self.copied: set[tuple[str, ...]] = set()  # modules built as copies of their library class
        self.holder_paths: set[tuple[str, ...]] = set()  # plain modules and containers, built child by child
        self.tensor_paths: dict[int, tuple[str, ...]] = {}
        self.tensors: list[TensorIR] = []
        self.parts: list[TensorIR] = []  # entries that rebuild another tensor (see PackageIR.parts)
        self.packed: list[PackedIR] = []  # quantized layers whose weights are set through their setter
        self.unpacked: list[torch.Tensor | None] = []  # their weights, unpacked for the export
        self.packed_objects: list[PackedObjectIR] = []  # packed weights held as attributes (packed_objects.py)
        self.build_device = "meta"
        self.fixups: list[str] = []
        self.ties: list[tuple[str, str]] = []  # (key of a second place, key of the first) of a tied tensor
        self.warnings: list[str] = []
        self.params: dict[str, str] = {}
        self.forwards = Emissions()  # the forwards emitted so far
        self.rolled_graphs: dict[int, Rolled] = {}  # by id: the modules live through the export
        self.loops: dict[type | str, dict[str, dict[str, Roll]]] = {}  # by source class, container and kind (loop_kind): a loop one of its modules runs
        self.class_name = class_name
        self.standalone = standalone

    def root_access(self, path: tuple[str, ...]) -> str:
        return module_access("self", self.root, path)

    # names -----------------------------------------------------------------------------
    def reserve_parameters(self, graph: fx.Graph) -> None:
        """Forward parameters keep their names (callers pass them by keyword) unless they collide."""
        for name in parameter_names(graph):
            if name in self.params:
                continue
            taken = not self.namespace.is_free(name) and name not in BUILTIN_NAMES
            if not is_plain_identifier(name) or name in RESERVED or name in EMITTED_BUILTINS or taken:
                new = self.namespace.create(name)
                self.warnings.append(f"forward parameter {name!r} is renamed {new!r} in the generated code")
                self.params[name] = new
            else:
                self.namespace.reserve(name)
                self.params[name] = name

    def others_parameters(self, graph: fx.Graph) -> set[str]:
        """The names only other forwards take as parameters: a local of this forward may take them (the
        module-level names avoid every parameter's, so none is shadowed)."""
        own = {self.params[name] for name in parameter_names(graph)}
        return {name for name in self.params.values() if name not in own and name not in BUILTIN_NAMES}

    def class_name_for(self, hint: str) -> tuple[str, str]:
        """(the name of a new class of source class `hint`, the name asked for it): a variant name an
        earlier export gave (`Block_1`) for its first class, else the source's in CapWords, numbered."""
        if hint in self.variant_names:  # its first class takes it as reserved, others number it (`Block_2`)
            name = hint if hint not in self.handed else self.namespace.create(hint)
            self.handed.add(hint)
            return name, hint
        wanted = sanitize(camel_case(hint) or "Module")
        return self.namespace.create(wanted), wanted

    # module tree -----------------------------------------------------------------------
    def new_class(self, gm: fx.GraphModule, path: tuple[str, ...], leaf: type | None = None) -> str:
        """Build the class for `gm` (children first) and return its name; equal classes are shared. `leaf`:
        the user class `gm` was traced from (a leaf of the graph), which its class comment names."""
        self.reserve_parameters(gm.graph)
        split_source = self.structure.source_of(".".join(path)) if path else None
        rolled_graph = self.rolled_of(gm, split_source, ".".join(path) not in self.unrolled_singles) if self.rolls else Rolled(gm.graph, {})
        rolls = rolled_graph.rolls.values()
        self.loop_containers[".".join(path)] = (frozenset(r.children for r in rolls if r.single), frozenset(r.children for r in rolls if not r.single))
        register_globals(rolled_graph.graph, self.imports, rolled_graph.rolls)
        here = ".".join(path)
        elsewhere = [relative(outside, here) for outside in self.run_elsewhere if outside != here and within(outside, here)]
        called = _run_by_calls(gm, [*(str(n.target) for n in gm.graph.find_nodes(op="call_module")), *elsewhere])
        draft = _ClassDraft(gm, path, called=called)
        self.build_children(draft, gm, path)
        self.declare_tensors(draft, gm, path)
        self.attribute_values(draft)
        source = (split_source or leaf) if path else None
        self.alone_flags(draft, rolled_graph, source)
        forward = self.forward_of(gm, path, rolled_graph, source)
        init = tuple(draft.init_lines + draft.attr_lines)
        comment = class_annotation(source) if source is not None and self.annotate else ""
        base = gm.meta.get(SEQUENTIAL_BASE) or ("ModuleDict" if gm.meta.get(DICT_BASE, False) else "Module")
        key = (init, forward.params, forward.lines, comment, base)
        if not path:
            self.classes[key] = ClassIR(self.class_name, True, init, (), forward.params, forward.lines, base=base)
        elif key not in self.classes:
            hint = source_class_name(source) if source is not None else _class_hint(gm, path)
            name, wanted = self.class_name_for(hint)
            own = forward_source(source) if source is not None else ""
            self.classes[key] = ClassIR(name, False, init, (), forward.params, forward.lines, comment, base=base, source_name=wanted, source_forward=own)
        self.class_paths[".".join(path)] = self.classes[key].name
        return self.classes[key].name

    def gather_loops(self, root: fx.GraphModule) -> None:
        """Roll every module's runs, and keep by source class the loops its modules run over each container:
        a module of that class whose container of the name holds one child runs the loop too (rolled.py)."""
        for name, module in root.named_modules():
            if isinstance(module, fx.GraphModule):
                found = self.rolled_graphs[id(module)] = rolled(module, in_place=self.recorded)
                source = self.structure.source_of(name) if name else None
                if source is None:
                    continue
                for roll in found.rolls.values():
                    kinds = self.loops.setdefault(source, {}).setdefault(roll.children, {})
                    kinds.setdefault(loop_kind(roll), roll)

    def rolled_of(self, gm: fx.GraphModule, source: type | str | None, singles: bool = True) -> Rolled:
        """`gm`'s graph with its runs rolled, and (`singles`) the one child of a container run as the loop
        other modules of its source class (the split's) run over theirs."""
        found = self.rolled_graphs.get(id(gm)) or rolled(gm, in_place=self.recorded)
        loops = {children: tuple(kinds.values()) for children, kinds in self.loops.get(source, {}).items()} if source is not None else {}
        single = singles and any(calls_only_child(gm, node) for node in gm.graph.find_nodes(op="call_module"))
        if loops and (single or any(len(loops.get(roll.children, ())) > 1 for roll in found.rolls.values())):
            return rolled(gm, loops, singles, self.recorded)
        return found

    def lone_singles(self, renamed: dict[str, str]) -> frozenset[str]:
        """The modules whose container of one child runs a loop once where no module of the class they joined
        (`renamed`: generalize's new name of each class) loops over its container of that name: a trace of
        the export would find no loop to run it as, and write it unrolled (not a fixed point)."""
        final = {path: renamed.get(name, name) for path, name in self.class_paths.items()}
        looping = {(final[path], children) for path, (_, more) in self.loop_containers.items() if path in final for children in more}
        return frozenset(
            path for path, (once, _) in self.loop_containers.items() if path in final and any((final[path], c) not in looping for c in once)
        )

    def forward_of(self, gm: fx.GraphModule, path: tuple[str, ...], rolled_graph: Rolled, source: type | str | None = None) -> Forward:
        """`gm`'s forward, emitted once for modules whose graphs and settings are equal, while no name it
        asked about was taken since (emitted.py). `source`: the class the split found the module to be."""
        parameters = frozenset(source_parameters(source)) if source is not None else frozenset()

        def emit() -> Forward:
            namespace = self.namespace.child(self.others_parameters(gm.graph))
            return emit_forward(
                gm, namespace, self.imports, self.params, self.input_checks, self.annotate, self.shapes, self.recorded, rolled_graph, parameters
            )  # fmt: skip

        if not path:
            return emit()
        return self.forwards.forward(gm, ".".join(path), len(self.params), self.class_paths, self.namespace, emit)

    def build_children(
        self, owner: _ClassDraft, module: nn.Module, path: tuple[str, ...], deferred: list[str] | None = None
    ) -> list[tuple[str, str]] | None:
        """Add the lines that build each child; returns (name, code) per child when each is one constructor call.

        A layer's settings after its constructor call (a quantized layer's output scale) go to `deferred`
        when given, so a container of such layers can still be built in one call, followed by them.
        """
        calls: list[tuple[str, str]] | None = []
        for name, child in module._modules.items():
            child_path = (*path, name)
            target = _access(owner, path)
            start = len(owner.init_lines)
            code = None
            if child is None:
                owner.init_lines.append(f"{target}.register_module({quote(name)}, None)")
            elif is_guards_module(child):
                continue  # torch.export's input checks: emitted as readable code in forward
            elif id(child) in self.module_paths:
                self.fixups.append(_assign_module(self.root_access(path), name, self.root_access(self.module_paths[id(child)])))
            elif self.is_plain_holder(owner, child, child_path):
                self.module_paths[id(child)] = child_path
                code = self.build_holder(owner, child, child_path)
            else:
                self.module_paths[id(child)] = child_path
                code = self.child_code(owner, child, child_path)
                if code is not None:
                    owner.init_lines.append(_assign_module(target, name, code))
                    settings = self.extra_lines(owner, child, child_path, code)
                    (owner.init_lines if deferred is None else deferred).extend(settings)
            if calls is not None and code is not None and len(owner.init_lines) == start + 1:
                calls.append((name, code))
            else:
                calls = None
        return calls

    def build_holder(self, owner: _ClassDraft, holder: nn.Module, path: tuple[str, ...]) -> str | None:
        """A plain module or container, filled child by child; a container of constructor calls in one
        line, whose expression is returned (None otherwise)."""
        kind = type(holder).__name__ if is_holder(holder) else "Module"
        self.holder_paths.add(path)
        if type(holder) is nn.Sequential and (built := self.sequential_class(holder, path)) is not None:
            owner.init_lines.append(_assign_module(_access(owner, path[:-1]), path[-1], built))
            return built
        subclass = self.named_sequential_class(path) if type(holder) is nn.Sequential else None
        constructor = subclass or f"{self.imports.use('nn')}.{kind}"
        start = len(owner.init_lines)
        target = _access(owner, path[:-1])
        owner.init_lines.append(_assign_module(target, path[-1], f"{constructor}()"))
        settings: list[str] = []
        calls = self.build_children(owner, holder, path, settings)
        self.declare_tensors(owner, holder, path)
        filled = None
        if calls and len(owner.init_lines) == start + 1 + len(calls):
            ordered_dict = None if subclass else lambda: f"{self.imports.module('collections')}.OrderedDict"
            filled = _container_code(type(holder), constructor, calls, ordered_dict)
            if filled is not None:
                owner.init_lines[start:] = [_assign_module(target, path[-1], filled)]
        owner.init_lines += settings
        return None if settings else filled

    def sequential_class(self, holder: nn.Module, path: tuple[str, ...], source: type | str | None = None) -> str | None:
        """The constructor call of a source Sequential subclass's instance with numbered children
        (`Conv2dNormActivation()`): a generated subclass of nn.Sequential whose `__init__` builds its children,
        shared by equal instances; generalize turns their literals into parameters, or has the callers pass
        the children (passed_children.py). None for another holder. `source`: the class of a leaf of the graph,
        whose forward, Sequential's, calls every child (else the split's class, its children cut out already)."""
        leaf = source is not None
        source = source or self.structure.source_of(".".join(path))
        if source is None or list(holder._modules) != [str(i) for i in range(len(holder._modules))]:
            return None  # named children: built one by one in place (its callers could not pass them)
        draft = _ClassDraft(cast(fx.GraphModule, holder), path, called=frozenset(holder._modules) if leaf else frozenset())
        self.build_children(draft, holder, path)
        self.declare_tensors(draft, holder, path)
        init = tuple(draft.init_lines)
        return f"{self.sequential_subclass(source, path, init, init)}()"

    def named_sequential_class(self, path: tuple[str, ...]) -> str | None:
        """The generated subclass of nn.Sequential for a source Sequential subclass whose children are named
        (one per source class, with nothing of its own): its instances are filled child by child."""
        source = self.structure.source_of(".".join(path))
        return None if source is None else self.sequential_subclass(source, path, qualified_name(source), ())

    def sequential_subclass(self, source: type | str, path: tuple[str, ...], key: object, init: tuple[str, ...]) -> str:
        """The name of the generated Sequential subclass of `source` with `__init__` lines `init`, one per `key`."""
        comment = class_annotation(source) if self.annotate else ""
        entry = ("sequential", key, comment)
        if entry not in self.classes:
            name, wanted = self.class_name_for(source_class_name(source))
            self.classes[entry] = ClassIR(name, False, init, (), (), (), comment, is_sequential=True, base="Sequential", source_name=wanted)
        self.class_paths[".".join(path)] = self.classes[entry].name
        return self.classes[entry].name

    def extra_lines(self, owner: _ClassDraft, child: nn.Module, path: tuple[str, ...], code: str) -> list[str]:
        """What follows a torch layer's constructor call: children a fused reference layer gets swapped in, and plain
        attributes set after building it (a quantized layer's output scale, transformers' `_is_hf_initialized`)."""
        if not is_torch_module(child) or is_holder(child):
            return []
        where = ".".join(path)
        key = self.layer_key(child)
        found = self.layer_extras.get(key) if key is not None else None
        if found is None:
            found = (swapped_children(child, self.imports, where), extra_settings(child, code, self.imports, where))
            if key is not None:
                self.layer_extras[key] = found
        swapped, settings = found
        swaps = [_assign_module(_access(owner, path), name, call) for name, call in swapped]
        return swaps + [
            _assign(_access(owner, (*path, *sub)), name, literal(value, self.imports, _no_name, f"module {where!r}"), None)
            for sub, name, value in settings
        ]

    def layer_code(self, layer: nn.Module, where: str) -> str:
        """A torch layer's verified constructor call, built and compared once per kind of layer (fingerprint)."""
        key = self.layer_key(layer)
        if key is None:
            return constructor_code(layer, self.imports, where)
        if key not in self.layer_codes:
            self.layer_codes[key] = constructor_code(layer, self.imports, where)
        return self.layer_codes[key]

    def layer_key(self, layer: nn.Module) -> tuple[object, ...] | None:
        if id(layer) not in self.layer_keys:
            self.layer_keys[id(layer)] = fingerprint(layer)
        return self.layer_keys[id(layer)]

    def is_plain_holder(self, owner: _ClassDraft, child: nn.Module, path: tuple[str, ...]) -> bool:
        """Containers, plain modules, and user modules nothing calls: rebuilt member by member.

        Inside a copied library class (libclasses.py) any module may be called by the copied code.
        """
        if isinstance(child, fx.GraphModule) or (is_torch_module(child) and not is_holder(child)):
            return False
        if any(path[:i] in self.copied for i in range(len(path))):
            return is_holder(child)
        return is_holder(child) or ".".join(path[len(owner.path) :]) not in owner.called

    def child_code(self, owner: _ClassDraft, child: nn.Module, path: tuple[str, ...]) -> str | None:
        """The expression that builds a called child: a generated class or a constructor call (None: built in place)."""
        if isinstance(child, fx.GraphModule):
            return f"{self.new_class(child, path)}()"
        if is_torch_module(child):
            code = self.layer_code(child, ".".join(path))
            self.record_leaf_tensors(child, path)
            return code
        return self.user_module_code(owner, child, path)

    def forget_built_under(self, path: tuple[str, ...]) -> None:
        """Forget how the modules under `path` were built, where a trace of the module there failed
        partway and it is built another way (copied, or by import: its constructor builds them)."""
        prefix = ".".join(path)
        self.class_paths = {k: v for k, v in self.class_paths.items() if k != prefix and not k.startswith(f"{prefix}.")}
        self.holder_paths = {p for p in self.holder_paths if p[: len(path)] != path}
        self.copied = {p for p in self.copied if p[: len(path)] != path}
        self.module_paths = {k: p for k, p in self.module_paths.items() if p[: len(path)] != path or p == path}

    def user_module_code(self, owner: _ClassDraft, child: nn.Module, path: tuple[str, ...]) -> str | None:
        """A user class the graph calls: traced into a generated class, else its class copied, else rebuilt by import.
        A Sequential subclass that runs Sequential's forward is a generated subclass of nn.Sequential, as where
        the graph records its call (torchvision's Conv2dNormActivation, a leaf of its feature extractor)."""
        where = ".".join(path)
        if is_sequential(type(child)) and (built := self.sequential_class(child, path, type(child))) is not None:
            return built
        try:
            traced = trace_user_module(child, where)
            if (indexed := sequential_base(type(child), child)) is not None:
                traced.meta[SEQUENTIAL_BASE] = indexed  # a forward of its own indexes its children (`self[0](x)`)
            return f"{self.new_class(traced, path, leaf=type(child))}()"
        except FxExportError as traced_error:
            self.forget_built_under(path)
            why = can_copy(child)
            if not why:
                self.build_copied(owner, child, path)
                return None
            try:
                code = constructor_code(child, self.imports, where)
            except FxExportError as rebuild_error:
                cls = type(child)
                raise FxExportError(
                    f"module {where!r} is a {cls.__module__}.{cls.__qualname__}, which fxexport cannot rebuild as code: "
                    f"{traced_error}; its class cannot be copied ({why}); and rebuilding it by import failed: {rebuild_error}"
                ) from rebuild_error
            self.record_leaf_tensors(child, path)
            self.warnings.append(
                f"module {where!r} could not be traced, nor its class copied ({why}), "
                f"so module.py imports its class {type(child).__qualname__}"
            )
            return code

    def build_copied(self, owner: _ClassDraft, child: nn.Module, path: tuple[str, ...]) -> None:
        """An instance of a copied library class, given its layers and settings by keyword where each is one
        expression (`Clamp(limit=0.5)`), else filled in like a container, then its settings."""
        target = _access(owner, path)
        cls = copied_class(type(child), self.imports)
        self.copied.add(path)
        start = len(owner.init_lines)
        owner.init_lines.append(_assign_module(_access(owner, path[:-1]), path[-1], f"{cls}()"))
        deferred: list[str] = []
        calls = self.build_children(owner, child, path, deferred)
        self.declare_tensors(owner, child, path)
        settings = setting_lines(child, target, self.imports)
        members = _members_given(calls, settings, target, len(child._modules))
        if not deferred and members is not None and len(owner.init_lines) == start + 1 + len(calls or ()):
            owner.init_lines[start:] = [_assign_module(_access(owner, path[:-1]), path[-1], f"{cls}({members})")]
            return
        owner.init_lines += deferred
        owner.init_lines.extend(settings)

    def record_tensor(self, tensor: torch.Tensor, path: tuple[str, ...], kind: str, persistent: bool) -> bool:
        """Remember a tensor for the weights file; False (and a tie line) when it was seen before."""
        if id(tensor) in self.tensor_paths:
            first = self.tensor_paths[id(tensor)]
            self.fixups.append(_tie(self.root_access, path, first, kind, persistent))
            self.ties.append((".".join(path), ".".join(first)))
            return False
        self.tensor_paths[id(tensor)] = path
        key = ".".join(path)
        quantized = subclass = None
        if is_subclass(tensor, kind, key):
            subclass, parts = subclass_parts(key, kind, tensor, self.imports)
            data = tensor
        elif tensor.is_quantized:
            quantized, data, parts = quantized_parts(key, tensor.detach())
        elif tensor.layout != torch.strided:
            raise FxExportError(
                f"tensor {key!r} has the {str(tensor.layout).removeprefix('torch.')} layout (as onednn lowering prepacks weights), "
                "which a weights file cannot hold: export the graph before lowering it, or make the tensor dense (.to_dense())"
            )
        else:
            data, parts = tensor.detach(), []
        self.parts += parts
        self.tensors.append(
            TensorIR(key, kind, tuple(data.shape), str(data.dtype).removeprefix("torch."),
                     bool(tensor.requires_grad), persistent, data, quantized=quantized, subclass=subclass)
        )  # fmt: skip
        return True

    def record_packed(self, layer: nn.Module, path: tuple[str, ...]) -> None:
        """A quantized layer's packed weights, stored under their state_dict names and set through its setter."""
        packed = packing(layer)
        if packed is None:
            return
        self.packed.append(PackedIR(".".join(path), packed.setter, packed.names, packed.by_name))
        self.unpacked.extend(packed.tensors)  # new tensors: kept alive, so no other tensor takes their id
        for name, tensor in zip(packed.names, packed.tensors):
            if tensor is not None:
                self.record_tensor(tensor, (*path, name), "packed", True)

    def record_packed_object(self, target: str, value: torch.ScriptObject) -> None:
        """A packed-weights object the graph reads as an attribute: its tensors stored, packed again on load."""
        if any(p.path == target for p in self.packed_objects):
            return
        found = packed_object(value, f"attribute {target!r}")
        self.packed_objects.append(PackedObjectIR(target, found.op, found.names, found.settings, in_state_dict=False))
        # Copies: objects packed from one tensor (a layer called twice) unpack to it, and the loader ties tensors of modules only.
        tensors = [None if t is None else t.clone() for t in found.tensors]
        self.unpacked.extend(tensors)
        for name, tensor in zip(found.names, tensors):
            if tensor is not None:  # not persistent: the state_dict lists the object, not its tensors
                self.record_tensor(tensor, (*target.split("."), name), "packed", False)

    def record_leaf_tensors(self, leaf: nn.Module, path: tuple[str, ...]) -> None:
        if needs_cpu(leaf):
            self.build_device = "cpu"  # quantized layers cannot be built on the meta device
        for sub_path, sub in leaf.named_modules(remove_duplicate=False):
            full = (*path, *filter(None, sub_path.split(".")))
            self.record_packed(sub, full)
            for name, param in sub._parameters.items():
                if param is not None and self.record_tensor(param, (*full, name), "parameter", True) and not param.requires_grad:
                    self.fixups.append(f"{self.root_access((*full, name))}.requires_grad_(False)")
            for name, buf in sub._buffers.items():
                if buf is not None:
                    self.record_tensor(buf, (*full, name), "buffer", name not in sub._non_persistent_buffers_set)

    def declare_tensors(self, owner: _ClassDraft, module: nn.Module, path: tuple[str, ...]) -> None:
        """A stub for every parameter and buffer, in order; a tied one is then replaced by a fixup (same position)."""
        target = _access(owner, path)
        for name, param in module._parameters.items():
            if param is None:
                owner.init_lines.append(f"{target}.register_parameter({quote(name)}, None)")
                continue
            self.record_tensor(param, (*path, name), "parameter", True)
            grad = "" if param.requires_grad else ", requires_grad=False"
            stub = f"{self.imports.use('nn')}.Parameter({self.stub(param)}{grad})"
            owner.init_lines.append(_assign(target, name, stub, "register_parameter"))
        for name, buf in module._buffers.items():
            persistent = name not in module._non_persistent_buffers_set
            flag = "" if persistent else ", persistent=False"
            if buf is not None:
                self.record_tensor(buf, (*path, name), "buffer", persistent)
            owner.init_lines.append(f"{target}.register_buffer({quote(name)}, {'None' if buf is None else self.stub(buf)}{flag})")
        for name, value in vars(module).items():
            if isinstance(value, torch.Tensor) and self.record_tensor(value, (*path, name), "constant", False):
                owner.init_lines.append(_assign(target, name, self.stub(value), None))

    def stub(self, tensor: torch.Tensor) -> str:
        torch_name = self.imports.use("torch")
        shape = ", ".join(str(s) for s in tensor.shape) or "()"
        dtype = "" if tensor.dtype == torch.get_default_dtype() else f", dtype={literal(tensor.dtype, self.imports, _no_name, 'stub')}"
        return f"{torch_name}.empty({shape}{dtype})"

    def attribute_values(self, draft: _ClassDraft) -> None:
        """get_attr targets that hold plain Python values (not tensors or modules)."""
        for node in draft.gm.graph.find_nodes(op="get_attr"):
            *owner_path, name = str(node.target).split(".")
            owner = draft.gm.get_submodule(".".join(owner_path))
            value = getattr(owner, name)
            if isinstance(value, (torch.Tensor, nn.Module)) or name in owner._parameters or name in owner._buffers:
                continue
            if is_packed_object(value):
                self.record_packed_object(".".join((*draft.path, *owner_path, name)), value)
                code = "None"  # the loader packs it (packed_objects.py)
            else:
                code = literal(value, self.imports, _no_name, f"attribute {node.target!r}")
            line = _assign(_access(draft, (*draft.path, *owner_path)), name, code, None)
            if line not in draft.attr_lines:
                draft.attr_lines.append(line)

    def alone_flags(self, draft: _ClassDraft, found: Rolled, source: type | str | None) -> None:
        """`self.<flag> = True` where the module runs a loop's every period alone that others of its source
        class run headed, `False` in those (alone_flags.py)."""
        own = forward_source(source) if source is not None else ""
        set_here = {line.partition(" = ")[0] for line in draft.attr_lines + draft.init_lines}
        for name, value in alone_flags(found, own, lambda name: hasattr(draft.gm, name) or f"self.{name}" in set_here):
            draft.attr_lines.append(f"self.{name} = {value!r}")

    def shared_fixups(self) -> None:
        """Each module whose method runs a module held elsewhere gets that module as an attribute, not as a
        child of its own: the state_dict and named_modules() list it where the GraphModule holds it (shared_modules.py)."""
        lines = []
        for path, module in _every_path(self.root):
            for name, outside in module.meta.get(SHARED_MODULES, ()) if isinstance(module, fx.GraphModule) else ():
                held = self.root_access(tuple(outside.split(".")))
                lines.append(f"object.__setattr__({self.root_access(path)}, {quote(name)}, {held})")
        if lines:
            self.fixups += [*(f"# {line}" for line in _SHARED_COMMENT), *lines]

    def training_fixups(self) -> None:
        """Training flags as the source has them: `self.eval()` when most modules are in eval mode,
        then `.training = ...` for each module that differs (one attribute, not a walk of its children)."""
        modules: dict[int, tuple[tuple[str, ...], nn.Module]] = {}

        def visit(module: nn.Module, path: tuple[str, ...]) -> None:
            modules[id(module)] = (path, module)
            for name, child in _children(module):
                if id(child) not in modules:
                    visit(child, (*path, name))

        visit(self.root, ())
        evaluating = sum(not m.training for _, m in modules.values()) * 2 > len(modules)
        differing = [(path, module) for path, module in modules.values() if module.training == evaluating]
        holders = {path for path, module in modules.values() if path and _children(module)}
        if evaluating and len(differing) >= _SPELLED_FLAGS and {path for path, _ in differing} == holders:
            self.fixups += _CONTAINERS_TRAIN  # symbolic_trace rebuilt the modules that hold children in training mode
            return
        # Every path: a module the source holds at two places may be two in the package (inside a layer
        # one constructor call builds), each of which the rule sets by its own type.
        traced = [(path, module) for path, module in _every_path(self.root) if module.training != self.rebuilt_by_fx(path, module)]
        rule = _traced_train(self.imports.use("nn"))
        if _TRACED_RULE_LINES + len(traced) < evaluating + len(differing):
            self.fixups += rule  # fewer lines than each flag that differs from the rest
            differing = traced
        else:
            # at every place: a module held at two may be two in the package (fused layers' shared ReLU)
            differing = [(path, module) for path, module in _every_path(self.root) if module.training == evaluating]
            if evaluating:
                self.fixups.append("self.eval()")
        for path, module in differing:
            self.fixups.append(f"{self.root_access(path)}.training = {module.training}")

    def rebuilt_by_fx(self, path: tuple[str, ...], module: nn.Module) -> bool:
        """True where `_traced_train`'s rule sets the module at `path` training: not the root, and in the
        package a generated or copied class (defined in module.py), or a plain module or container."""
        return bool(path) and (
            ".".join(path) in self.class_paths or path in self.copied or path in self.holder_paths or type(module) in _HOLDER_TYPES
        )

    def external_warnings(self) -> None:
        for item in self.imports.external():
            if self.standalone:
                raise FxExportError(
                    f"module.py would import {item.attr} from {item.module}, and standalone=True forbids imports "
                    "other than torch and the standard library; make it traceable or use torch.nn modules"
                )
            why = self.imports.reason(item)
            what = f"{item.attr} from {item.module}" if item.attr else item.module
            self.warnings.append(
                f"module.py imports {what}: the folder needs {item.module!r} importable to load"
                + (f" (it cannot be copied into module.py: {why})" if why else "")
                + (f" (it {item.note})" if item.note else "")
            )


def _class_hint(gm: fx.GraphModule, path: tuple[str, ...]) -> str:
    """The source class's name, or one made from the path for generic and lambda GraphModules."""
    name = type(gm).__name__
    generic = name in ("GraphModule", "GraphModuleImpl", "InterpreterModule") or not name.isidentifier()
    return (path[-1] if path[-1][:1].isalpha() else f"{path[-1]}_module") if generic else name


def _container_code(kind: type, constructor: str, calls: list[tuple[str, str]], ordered_dict: Callable[[], str] | None) -> str | None:
    """`nn.Sequential(a, b)`, `nn.ModuleList([a, b])`, `nn.ModuleDict({"k": a})`, or None for another kind;
    a run of children one call builds alike as a comprehension (`nn.Sequential(a, *[b for _ in range(7)])`,
    `nn.ModuleList([b for _ in range(n)])`: each call builds its own). An nn.Sequential of named children
    is built from an OrderedDict, as torch documents it, where every name can be a keyword
    (`nn.Sequential(collections.OrderedDict(conv=..., act=...))`, so that a class holding it may take it
    whole; `ordered_dict` spells the class). A source Sequential subclass's instances (`ordered_dict` None)
    are one class without an `__init__`, filled child by child: the one-call form reads no better there."""
    numbered = [name for name, _ in calls] == [str(i) for i in range(len(calls))]
    items = repeated([code for _, code in calls])
    if kind is nn.Sequential and numbered:
        return f"{constructor}({', '.join(items)})"
    if kind is nn.Sequential and ordered_dict is not None and all(is_plain_identifier(name) for name, _ in calls):
        return f"{constructor}({ordered_dict()}({', '.join(f'{name}={code}' for name, code in calls)}))"
    if kind is nn.ModuleList and numbered:
        whole = len(items) == 1 and items[0].startswith("*")
        return f"{constructor}({items[0][1:]})" if whole else f"{constructor}([{', '.join(items)}])"
    if kind is nn.ModuleDict:
        return f"{constructor}({{{', '.join(f'{quote(name)}: {code}' for name, code in calls)}}})"
    return None


def _no_name(_value: object) -> None:
    return None


def _members_given(calls: list[tuple[str, str]] | None, settings: list[str], target: str, children: int) -> str | None:
    """`qkv=nn.Linear(8, 24), ws=7`: a copied instance's layers (one constructor call each) and settings
    (`target.name = value`) as keyword arguments; None where one is built otherwise or has no plain name."""
    if calls is None or len(calls) != children or not all(is_plain_identifier(name) and not keyword.iskeyword(name) for name, _ in calls):
        return None
    given = [f"{name}={code}" for name, code in calls]
    prefix = f"{target}."
    for line in settings:
        name, _, code = line.removeprefix(prefix).partition(" = ")
        if not line.startswith(prefix) or not is_plain_identifier(name) or keyword.iskeyword(name) or not code:
            return None
        given.append(f"{name}={code}")
    return ", ".join(given)


def _access(owner: _ClassDraft, path: tuple[str, ...]) -> str:
    return module_access("self", owner.gm, path[len(owner.path) :], building=True)


def _assign(target: str, name: str, code: str, register: str | None) -> str:
    if is_plain_identifier(name):
        return f"{target}.{name} = {code}"
    if register:
        return f"{target}.{register}({quote(name)}, {code})"
    return f"setattr({target}, {quote(name)}, {code})"


def _assign_module(target: str, name: str, code: str) -> str:
    return _assign(target, name, code, "add_module")


def _tie(access: Callable[[tuple[str, ...]], str], path: tuple[str, ...], first: tuple[str, ...], kind: str, persistent: bool) -> str:
    *owner, name = path
    target = access(tuple(owner))
    if kind == "buffer":
        flag = "" if persistent else ", persistent=False"
        return f"{target}.register_buffer({quote(name)}, {access(first)}{flag})"
    return _assign(target, name, access(first), None)


def _run_by_calls(gm: fx.GraphModule, targets: list[str]) -> frozenset[str]:
    """The modules `gm`'s graph calls and those a called Sequential runs (its children, theirs if Sequential too)."""
    out: set[str] = set()
    while targets:
        target = targets.pop()
        if target in out:
            continue
        out.add(target)
        module = submodule(gm, target)
        if type(module) is nn.Sequential:
            targets += [f"{target}.{name}" for name in module._modules]
    return frozenset(out)


def collect(
    root: fx.GraphModule,
    *,
    module_name: str,
    class_name: str = "FxModule",
    standalone: bool = False,
    input_checks: bool = True,
    annotate: bool = True,
    shapes: bool = False,
    structure: str = "structured",
    classes_from: nn.Module | None = None,
) -> PackageIR:
    """Turn a GraphModule into the IR of a package named `module_name` defining `class_name`.

    `structure="structured"` writes a class per module the graph recorded calls of (split.py);
    `"flat"` writes the whole graph as the root's forward. `classes_from`: the model `root` was captured
    from, whose classes name the modules whose calls the graph did not record (inferred_stacks.py).
    """
    if not isinstance(root, fx.GraphModule):
        raise FxExportError(f"expected a torch.fx.GraphModule, got {type(root).__qualname__}")
    if structure not in STRUCTURES:
        raise FxExportError(f"structure must be one of {', '.join(map(repr, STRUCTURES))}, not {structure!r}")
    _check_classes_from(classes_from, structure)
    try:
        with unpacking_once(), paths_of(root):
            formatted = formatted_messages(root)
            traced = root_code_traced(formatted.graph.nodes) is not False  # before calls are inferred
            if structure == "structured":
                formatted = inferred_stacks(formatted, classes_from)
            statements = recovered_statements(formatted) if structure == "structured" else contextlib.nullcontext(frozenset[tuple[str, int]]())
            with statements as recovered, recovering(recovered), tracing_root(traced):
                package = _collect(formatted, module_name, class_name, standalone, input_checks, annotate, shapes, structure)
            if classes_from is not None and not any_named_after():
                package = dataclasses.replace(package, warnings=(*package.warnings, _named_nothing(classes_from)))
            return _packed_kept_in_state_dict(package, root)
    finally:
        forget_lines()
        forget_frames()
        forget_libraries()
        forget_kept_values()
        forget_returned()
        forget_statements()
        forget_traces()


def _check_classes_from(classes_from: object, structure: str) -> None:
    """`classes_from` is the model itself, for a structured export (a flat one writes no class to name)."""
    if classes_from is None:
        return
    if isinstance(classes_from, type) and issubclass(classes_from, nn.Module):
        raise FxExportError(f"classes_from must be the model the graph was captured from, not its class {classes_from.__qualname__}: pass an instance")
    if not isinstance(classes_from, nn.Module):
        raise FxExportError(f"classes_from must be the torch.nn.Module the graph was captured from, got {type(classes_from).__qualname__}")
    if structure != "structured":
        raise FxExportError("classes_from names the classes of a structured export; a flat one (--flat, structure='flat') writes none")


def _named_nothing(classes_from: nn.Module) -> str:
    return (
        f"classes_from named no class: the graph records the class of each module it calls, or the {type(classes_from).__qualname__} "
        "given holds other modules where it infers the calls (pass the model the graph was captured from)"
    )


def _packed_kept_in_state_dict(package: PackageIR, root: fx.GraphModule) -> PackageIR:
    """The package listing in its state_dict the packed objects it holds that the GraphModule's lists (a hook
    FX quantization's convert adds), as it does: after its tensors, by name."""
    held = {p.path for p in package.packed_objects if "." not in p.path}  # the hook lists the root's own
    listed = sorted(held.intersection(root.state_dict(keep_vars=True))) if held else []
    if not listed:
        return package
    keep = f"{KEEP_IN_STATE_DICT}(self, {code_of(tuple(listed))})"
    return dataclasses.replace(
        package,
        classes=tuple(dataclasses.replace(c, fixup_lines=(*c.fixup_lines, keep)) if c.is_root else c for c in package.classes),
        packed_objects=tuple(dataclasses.replace(p, in_state_dict=p.path in listed) for p in package.packed_objects),
    )


def _generalized(split_tree: Structure, settings: tuple[str, bool, bool, bool, bool, bool]) -> tuple[_Collector, tuple[ClassIR, ...], dict[str, str]]:
    """The collector of `split_tree`'s classes, the classes generalized, and each class's new name;
    collected again, with those modules' steps written out, while a module runs a loop of one step that
    no module of the class it joined runs (`_Collector.lone_singles`), the last time with none so run."""
    unrolled: frozenset[str] = frozenset()
    for attempt in range(MAX_COLLECTS):
        collector = _Collector(split_tree, *settings, unrolled)
        if collector.rolls:
            collector.gather_loops(split_tree.root)
        collector.new_class(split_tree.root, ())
        collector.shared_fixups()
        collector.training_fixups()
        instances = Counter(collector.class_paths.values())
        generalized, renamed = generalize(tuple(collector.classes.values()), collector.namespace.create, instances)
        lone = collector.lone_singles(renamed)
        if not lone:
            break
        unrolled |= lone if attempt < MAX_COLLECTS - 2 else frozenset(collector.loop_containers)
    return collector, generalized, renamed


def _final_forward(cls: ClassIR, in_place: Callable[[tuple[str, ...]], tuple[str, ...]]) -> ClassIR:
    """The class with its forward as the source writes it, once classes are shared (their forwards compared no more)."""
    forward = as_in_source(dataclasses.replace(cls, forward_lines=none_arms_joined(cls.forward_lines))).forward_lines
    return dataclasses.replace(cls, forward_lines=tuple(without_echoes(list(in_place(forward)))))


def _collect(
    root: fx.GraphModule, module_name: str, class_name: str, standalone: bool, input_checks: bool, annotate: bool, shapes: bool, structure: str
) -> PackageIR:
    split_tree = (
        split(shared_identity_calls(called_frames(raise_aten(restore_layers(inline_with_blocks(local_lifted_names(root)))))))
        if structure == "structured"
        else Structure(root)
    )
    settings = (class_name, standalone, input_checks, annotate, shapes, structure == "structured")
    collector, generalized, renamed = _generalized(split_tree, settings)
    in_place = augmented if collector.recorded else (lambda lines: lines)  # torch.export records `x += y` as `x.add_(y)`, symbolic_trace as `x + y`
    generalized = tuple(_final_forward(c, in_place) for c in generalized)
    classes = [c for c in generalized if not c.is_root]
    root_class = next(c for c in generalized if c.is_root)
    root_class = dataclasses.replace(root_class, fixup_lines=tuple(collector.fixups))
    if collector.tensors:
        collector.imports.use("Path")  # module.py tells the loader (loader.py) its folder
    collector.external_warnings()
    params = {id(p): p for p in root.parameters()}
    tensors, storages = share_storages(collector.tensors)
    package = PackageIR(
        module_name=module_name,
        class_name=class_name,
        imports=collector.imports.lines(),
        definitions=collector.imports.definitions(),
        classes=(*classes, root_class),
        tensors=tensors,
        storages=storages,
        ties=tuple(collector.ties),
        weight_files=(),  # chosen when the weights are planned (see shards.py)
        parameter_count=sum(p.numel() for p in params.values()),
        buffer_count=len({id(b) for b in root.buffers()}),
        torch_version=torch.__version__.split("+")[0],
        warnings=tuple(collector.warnings),
        inline_modules=split_tree.inline,
        parts=tuple(collector.parts),
        packed=tuple(collector.packed),
        packed_objects=tuple(collector.packed_objects),
        build_device=collector.build_device,
        checks_inputs=any(line.startswith(f"{CHECK_INPUT}(") for c in generalized for line in c.forward_lines),
    )
    return describe(root, package, {path: renamed.get(name, name) for path, name in collector.class_paths.items()})
