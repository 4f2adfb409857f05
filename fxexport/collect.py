"""collect: GraphModule -> PackageIR. Every name and literal becomes code here, nowhere else."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import fx, nn

from .describe import describe
from .errors import FxExportError
from .forward import emit_forward, placeholder_name, register_globals
from .imports import ImportTable
from .ir import ClassIR, PackageIR, TensorIR
from .literals import literal
from .names import BUILTIN_NAMES, Namespace, attribute_access, is_plain_identifier
from .rebuild import CONTAINERS, constructor_code, is_holder, is_torch_module

WEIGHTS_FILE = "weights.safetensors"
# Module-level names of the generated code that are not imports.
RESERVED = {"self", "WEIGHT_FILES", "load_tensors", "load_weights", "device", "dtype", "__file__", "__name__"}
# Builtins the emitted code may call; a forward parameter with one of these names is renamed.
EMITTED_BUILTINS = {"getattr", "setattr", "slice", "super", "Ellipsis", "None", "True", "False"}


@dataclass
class _ClassDraft:
    gm: fx.GraphModule
    path: tuple[str, ...]
    name: str
    init_lines: list[str] = field(default_factory=list)
    attr_lines: list[str] = field(default_factory=list)


class _Collector:
    def __init__(self, root: fx.GraphModule, class_name: str) -> None:
        self.root = root
        self.namespace = Namespace(BUILTIN_NAMES | RESERVED)
        self.imports = ImportTable(self.namespace)
        self.imports.use("torch")
        self.imports.use("nn")
        self.drafts: list[_ClassDraft] = []
        self.module_paths: dict[int, tuple[str, ...]] = {}
        self.tensor_paths: dict[int, tuple[str, ...]] = {}
        self.tensors: list[TensorIR] = []
        self.fixups: list[str] = []
        self.warnings: list[str] = []
        self.params: dict[str, str] = {}
        self.class_name = class_name

    # names -----------------------------------------------------------------------------
    def reserve_parameters(self, graphs: list[fx.Graph]) -> None:
        """Forward parameters keep their names (callers pass them by keyword) unless they collide."""
        for graph in graphs:
            for node in graph.nodes:
                if node.op != "placeholder":
                    continue
                name = placeholder_name(node)
                taken = not self.namespace.is_free(name) and name not in self.params
                if name in self.params:
                    continue
                if not is_plain_identifier(name) or name in RESERVED or name in EMITTED_BUILTINS or (taken and name not in BUILTIN_NAMES):
                    new = self.namespace.create(name)
                    self.warnings.append(f"forward parameter {name!r} is renamed {new!r} in the generated code")
                    self.params[name] = new
                else:
                    self.namespace.reserve(name)
                    self.params[name] = name

    # module tree -----------------------------------------------------------------------
    def new_class(self, gm: fx.GraphModule, path: tuple[str, ...]) -> _ClassDraft:
        wanted = self.class_name if not path else type(gm).__name__ if type(gm).__name__ != "GraphModule" else f"{path[-1]}_module"
        draft = _ClassDraft(gm, path, self.class_name if not path else self.namespace.create(_camel(wanted)))
        self.drafts.append(draft)
        self.build_children(draft, gm, path)
        self.declare_tensors(draft, gm, path)
        return draft

    def build_children(self, owner: _ClassDraft, module: nn.Module, path: tuple[str, ...]) -> None:
        for name, child in module._modules.items():
            child_path = (*path, name)
            where = ".".join(child_path)
            if child is None:
                owner.init_lines.append(f"{_access(owner, path)}.register_module({name!r}, None)")
                continue
            if id(child) in self.module_paths:
                self.fixups.append(_assign_module(attribute_access("self", path), name, _root_access(self.module_paths[id(child)])))
                continue
            self.module_paths[id(child)] = child_path
            if isinstance(child, fx.GraphModule):
                draft = self.new_class(child, child_path)
                owner.init_lines.append(_assign_module(_access(owner, path), name, f"{draft.name}()"))
            elif is_holder(child):
                holder = f"{self.imports.use('nn')}.{type(child).__name__}()"
                owner.init_lines.append(_assign_module(_access(owner, path), name, holder))
                self.build_children(owner, child, child_path)
                self.declare_tensors(owner, child, child_path)
            elif is_torch_module(child):
                code = constructor_code(child, self.imports, where)
                owner.init_lines.append(_assign_module(_access(owner, path), name, code))
                self.record_leaf_tensors(child, child_path)
            else:
                cls = type(child)
                raise FxExportError(
                    f"module {where!r} is a {cls.__module__}.{cls.__qualname__}, which fxexport cannot rebuild as code yet; "
                    "trace through it (do not keep it as a leaf) or replace it with torch.nn modules"
                )

    def record_tensor(self, tensor: torch.Tensor, path: tuple[str, ...], kind: str, persistent: bool) -> bool:
        """Remember a tensor for the weights file; False (and a tie line) when it was seen before."""
        if id(tensor) in self.tensor_paths:
            first = self.tensor_paths[id(tensor)]
            self.fixups.append(_tie(path, first, kind, persistent))
            return False
        if tensor.device.type == "meta":
            raise FxExportError(f"{kind} {'.'.join(path)!r} is on the meta device and has no values to export")
        self.tensor_paths[id(tensor)] = path
        data = tensor.detach()
        self.tensors.append(
            TensorIR(".".join(path), kind, tuple(data.shape), str(data.dtype).removeprefix("torch."),
                     bool(tensor.requires_grad), persistent, data)
        )  # fmt: skip
        return True

    def record_leaf_tensors(self, leaf: nn.Module, path: tuple[str, ...]) -> None:
        for sub_path, sub in leaf.named_modules(remove_duplicate=False):
            full = (*path, *filter(None, sub_path.split(".")))
            for name, param in sub._parameters.items():
                if param is not None and self.record_tensor(param, (*full, name), "parameter", True) and not param.requires_grad:
                    self.fixups.append(f"{_root_access((*full, name))}.requires_grad_(False)")
            for name, buf in sub._buffers.items():
                if buf is not None:
                    self.record_tensor(buf, (*full, name), "buffer", name not in sub._non_persistent_buffers_set)

    def declare_tensors(self, owner: _ClassDraft, module: nn.Module, path: tuple[str, ...]) -> None:
        target = _access(owner, path)
        for name, param in module._parameters.items():
            if param is None:
                owner.init_lines.append(f"{target}.register_parameter({name!r}, None)")
            elif self.record_tensor(param, (*path, name), "parameter", True):
                grad = "" if param.requires_grad else ", requires_grad=False"
                stub = f"{self.imports.use('nn')}.Parameter({self.stub(param)}{grad})"
                owner.init_lines.append(_assign(target, name, stub, "register_parameter"))
        for name, buf in module._buffers.items():
            persistent = name not in module._non_persistent_buffers_set
            flag = "" if persistent else ", persistent=False"
            if buf is None:
                owner.init_lines.append(f"{target}.register_buffer({name!r}, None{flag})")
            elif self.record_tensor(buf, (*path, name), "buffer", persistent):
                owner.init_lines.append(f"{target}.register_buffer({name!r}, {self.stub(buf)}{flag})")
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
            code = literal(value, self.imports, _no_name, f"attribute {node.target!r}")
            line = _assign(_access(draft, (*draft.path, *owner_path)), name, code, None)
            if line not in draft.attr_lines:
                draft.attr_lines.append(line)

    def training_fixups(self) -> None:
        def visit(module: nn.Module, path: tuple[str, ...], parent_training: bool) -> None:
            if module.training != parent_training:
                self.fixups.append(f"{_root_access(path)}.{'train' if module.training else 'eval'}()")
            for name, child in module._modules.items():
                if child is not None and self.module_paths.get(id(child)) == (*path, name):
                    visit(child, (*path, name), module.training)

        visit(self.root, (), True)

    def external_warnings(self) -> None:
        for item in self.imports.external():
            self.warnings.append(
                f"module.py imports {item.attr} from {item.module}: the folder needs {item.module!r} importable to load"
            )


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Module"


def _no_name(_value: object) -> None:
    return None


def _access(owner: _ClassDraft, path: tuple[str, ...]) -> str:
    return attribute_access("self", path[len(owner.path) :])


def _root_access(path: tuple[str, ...]) -> str:
    return attribute_access("self", path)


def _assign(target: str, name: str, code: str, register: str | None) -> str:
    if is_plain_identifier(name):
        return f"{target}.{name} = {code}"
    if register:
        return f"{target}.{register}({name!r}, {code})"
    return f"setattr({target}, {name!r}, {code})"


def _assign_module(target: str, name: str, code: str) -> str:
    return _assign(target, name, code, "add_module")


def _tie(path: tuple[str, ...], first: tuple[str, ...], kind: str, persistent: bool) -> str:
    *owner, name = path
    target = _root_access(tuple(owner))
    if kind == "buffer":
        flag = "" if persistent else ", persistent=False"
        return f"{target}.register_buffer({name!r}, {_root_access(first)}{flag})"
    return _assign(target, name, _root_access(first), None)


def _graph_modules(root: fx.GraphModule) -> list[fx.GraphModule]:
    return [m for m in root.modules() if isinstance(m, fx.GraphModule)]


def collect(root: fx.GraphModule, *, module_name: str, class_name: str = "FxModule") -> PackageIR:
    """Turn a GraphModule into the IR of a package named `module_name` defining `class_name`."""
    if not isinstance(root, fx.GraphModule):
        raise FxExportError(f"expected a torch.fx.GraphModule, got {type(root).__qualname__}")
    collector = _Collector(root, class_name)
    collector.namespace.reserve(class_name)
    graphs = [gm.graph for gm in _graph_modules(root)]
    collector.reserve_parameters(graphs)
    for graph in graphs:
        register_globals(graph, collector.imports)
    collector.new_class(root, ())
    collector.training_fixups()
    classes = []
    for draft in collector.drafts:
        collector.attribute_values(draft)
        forward = emit_forward(draft.gm.graph, collector.namespace.child(), collector.imports, collector.params)
        fixups = tuple(collector.fixups) if not draft.path else ()
        init = tuple(draft.init_lines + draft.attr_lines)
        classes.append(ClassIR(draft.name, not draft.path, init, fixups, forward.params, forward.lines))
    if collector.tensors:
        collector.imports.use("Path")
    collector.external_warnings()
    params = {id(p): p for p in root.parameters()}
    package = PackageIR(
        module_name=module_name,
        class_name=class_name,
        imports=collector.imports.lines(),
        classes=tuple(classes[1:] + classes[:1]),
        tensors=tuple(collector.tensors),
        weight_files=(WEIGHTS_FILE,) if collector.tensors else (),
        parameter_count=sum(p.numel() for p in params.values()),
        buffer_count=len({id(b) for b in root.buffers()}),
        torch_version=torch.__version__.split("+")[0],
        warnings=tuple(collector.warnings),
    )
    return describe(root, package, {".".join(draft.path): draft.name for draft in collector.drafts})
