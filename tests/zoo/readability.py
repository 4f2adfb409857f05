"""How readable an export is: its module.py measured against the source model's own classes (issue 14).

The source side (`source_classes`) is read from the eager model before it is captured: each
distinct class among its modules that torch does not define (`type(m).__module__` not under
`torch.`), with its number of instances and the lines of its source. The export side
(`measure`) is read from the package folder alone: module.py with `ast` (and `tokenize` for the
comment on each class line) and the manifest. Nothing here imports a model library, so the
measures are tested on hand-written texts under the main venv. Works on the flat output (one
class) and on the structured one (a class per kind of block, named after its source class, with
`# path:line Name` on the class line).
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from torch import fx, nn

from tests.packages import imported

METHODS = ("__init__", "forward")  # the lines counted per generated class
LINE_RATIO = 1.0  # issue 14: generated class lines <= 1.0x the source classes' lines


@dataclass(frozen=True)
class SourceClass:
    """A class among the source model's modules that torch does not define."""

    name: str  # __name__
    qualname: str
    instances: int  # distinct module objects of the class in the model
    lines: int | None  # len(inspect.getsource(cls).splitlines()); None when the source cannot be found


@dataclass(frozen=True)
class GeneratedClass:
    """A class statement of module.py that defines `__init__` or `forward` (the output stand-ins,
    `OutputMapping` and the dataclasses for library output types, define neither)."""

    name: str
    comment: str  # the comment on its class line, "" when none
    lines: int  # line spans of its __init__ and forward


@dataclass(frozen=True)
class Code:
    """What module.py holds, counted inside its generated classes (the loader is module-level functions)."""

    classes: tuple[GeneratedClass, ...]
    string_getattrs: int  # getattr(x, "literal") calls
    torch_ops: int  # calls of torch.ops.*
    dels: int  # del statements in forward methods


@dataclass(frozen=True)
class Readability:
    """One export against its source model."""

    graph_nodes: int
    code: Code
    source: tuple[SourceClass, ...]
    inline_modules: int  # manifest "inline_modules": modules the export left inline, with a reason
    call_nodes: int = 0  # call_function / call_method / call_module nodes of the graph
    layers: tuple[int, int] = (0, 0)  # (torch.nn layers of the source that come back as their class, those that ran)
    ran: frozenset[str] | None = None  # names of the classes the graph recorded calls of (None: not known)

    @property
    def ops_share(self) -> float:
        """torch.ops calls over the graph's call nodes (issue 15: at most 2%)."""
        return self.code.torch_ops / self.call_nodes if self.call_nodes else 0.0

    @property
    def class_lines(self) -> int:
        return sum(c.lines for c in self.code.classes)

    @property
    def source_lines(self) -> int:
        return sum(s.lines or 0 for s in self.source)

    @property
    def ratio(self) -> float | None:
        return self.class_lines / self.source_lines if self.source_lines else None

    def classes_of(self, source: SourceClass) -> list[GeneratedClass]:
        """The generated classes for `source`: named after it (variant suffixes allowed) or naming it in their class-line comment."""
        names = [s.name for s in self.source]
        return [c for c in self.code.classes if _named_after(c.name, source.name, names) or _comment_names(c.comment, source)]

    @property
    def found(self) -> int:
        """How many source classes appear as a generated class (by name or class-line comment)."""
        return sum(bool(self.classes_of(s)) for s in self.source)

    @property
    def repeated(self) -> tuple[SourceClass, ...]:
        """Source classes with two or more instances: the repeated blocks."""
        return tuple(s for s in self.source if s.instances >= 2)

    def target_failures(self) -> list[str]:
        """Which of issue 14's targets fail; [] when all hold (only asked of a model with repeated blocks)."""
        failures = []
        if self.ratio is None or self.ratio > LINE_RATIO:
            got = "no source lines" if self.ratio is None else f"{self.ratio:.2f}x"
            failures.append(f"class lines {got} > {LINE_RATIO:g}x")
        if self.code.string_getattrs:
            failures.append(f"{self.code.string_getattrs} string getattr")
        for block in self.repeated:
            if (count := len(self.classes_of(block))) != 1 and not self.without_code(block):
                failures.append(f"{block.name}: {count} classes")
        return failures

    def without_code(self, block: SourceClass) -> bool:
        """True for a block the graph has no code of (torch.export removes an eval-mode StochasticDepth
        or DropPath, an identity): nothing of it can be a class."""
        return self.ran is not None and not self.classes_of(block) and block.name not in self.ran

    def targets(self) -> str:
        """'ok', the failed targets, or 'n/a' for a model without repeated blocks."""
        if not self.repeated:
            return "n/a"
        failures = self.target_failures()
        if len(failures) > 3:
            failures = [*failures[:3], f"+{len(failures) - 3} more"]
        absent = [b.name for b in self.repeated if self.without_code(b)]
        return ("; ".join(failures) or "ok") + (f" ({', '.join(absent)}: no code in the graph)" if absent else "")


# the source model -------------------------------------------------------------------------
def source_classes(model: nn.Module, eager: nn.Module | None = None) -> tuple[SourceClass, ...]:
    """The distinct non-torch classes among `model`'s modules (the eager model, not its GraphModule). For a
    feature extractor (a GraphModule holding only the leaf modules of `eager`, the model it was built from):
    those of `eager`'s modules at the paths its graph ran and their parents, the root included."""
    modules = model.modules() if eager is None else extracted_modules(model, eager)  # modules(): each shared module once
    counts = Counter(type(m) for m in modules)
    classes = [cls for cls in counts if not cls.__module__.startswith("torch.")]
    return tuple(SourceClass(cls.__name__, cls.__qualname__, counts[cls], _source_lines(cls)) for cls in classes)


def extracted_modules(extractor: nn.Module, eager: nn.Module) -> list[nn.Module]:
    """The distinct modules of `eager` at the paths the extractor's graph ran (called, read a tensor of, or
    recorded a call of) and at their parents."""
    assert isinstance(extractor, fx.GraphModule), "a feature extractor is a GraphModule"
    ran = {str(n.target) for n in extractor.graph.nodes if n.op == "call_module"}
    ran |= {str(n.target).rpartition(".")[0] for n in extractor.graph.nodes if n.op == "get_attr"}
    ran |= {path for n in extractor.graph.nodes for path, _ in (n.meta.get("nn_module_stack") or {}).values()}
    paths = {".".join(parts[:i]) for parts in (p.split(".") if p else [] for p in ran) for i in range(len(parts) + 1)}
    held = dict(eager.named_modules())
    return list({id(held[p]): held[p] for p in sorted(paths) if p in held}.values())


def _source_lines(cls: type) -> int | None:
    try:
        return len(inspect.getsource(cls).splitlines())
    except (OSError, TypeError):  # built in, defined in a REPL or by exec: no file to read
        return None


def layer_paths(model: nn.Module, gm: fx.GraphModule) -> dict[str, str]:
    """The source's torch.nn layers (leaf modules, not Identity) that the graph ran code of: path -> class name.
    A layer that runs nothing (Identity, an unused head) leaves no trace in a graph to restore it from."""
    ran = {path for n in gm.graph.nodes for path, _ in (n.meta.get("nn_module_stack") or {}).values()}
    ran |= {str(n.target) for n in gm.graph.nodes if n.op == "call_module"}
    return {path: type(m).__name__ for path, m in model.named_modules() if path in ran and not m._modules
            and type(m).__module__.startswith("torch.nn.") and type(m) is not nn.Identity}  # fmt: skip


def restored_layers(folder: Path, layers: dict[str, str], class_name: str = "FxModule") -> int:
    """How many of `layers` the package at `folder` builds as that class at that path (its structure only, on meta)."""
    with imported(folder, f"_measured_{folder.name}") as package:
        built = dict(getattr(package, class_name)(load_weights=False).named_modules())
    return sum(path in built and type(built[path]).__name__ == cls for path, cls in layers.items())


def call_nodes(gm: fx.GraphModule) -> int:
    """Call nodes of the GraphModule's graph and of every GraphModule nested in it."""
    calls = ("call_function", "call_method", "call_module")
    return sum(n.op in calls for m in gm.modules() if isinstance(m, fx.GraphModule) for n in m.graph.nodes)


def graph_nodes(gm: fx.GraphModule) -> int:
    """Nodes of the GraphModule's graph and of every GraphModule nested in it."""
    return sum(len(m.graph.nodes) for m in gm.modules() if isinstance(m, fx.GraphModule))


# the export -------------------------------------------------------------------------------
def measure(
    folder: Path,
    source: tuple[SourceClass, ...],
    nodes: int,
    calls: int = 0,
    layers: dict[str, str] | None = None,
    ran: frozenset[str] | None = None,
) -> Readability:
    """Measure the package at `folder` (module.py, fxexport.json) against its source classes and layers."""
    code = read_code((folder / "module.py").read_text(encoding="utf-8"))
    manifest = json.loads((folder / "fxexport.json").read_text(encoding="utf-8"))
    restored = (restored_layers(folder, layers), len(layers)) if layers else (0, 0)
    return Readability(nodes, code, source, len(manifest.get("inline_modules", [])), calls, restored, ran)


def recorded_classes(gm: fx.GraphModule) -> frozenset[str]:
    """Names of the classes whose calls the graph recorded (`nn_module_stack`: a class, or its qualified name)."""
    names = set()
    for module in gm.modules():
        if isinstance(module, fx.GraphModule):
            for node in module.graph.nodes:
                for _, cls in (node.meta.get("nn_module_stack") or {}).values():
                    names.add(cls.__name__ if isinstance(cls, type) else str(cls).rpartition(".")[2])
    return frozenset(names)


def read_code(text: str) -> Code:
    """Count what module.py's classes hold."""
    tree = ast.parse(text)
    comments = _line_comments(text)
    classes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and _is_module_class(n)), key=lambda n: n.lineno)
    generated = tuple(GeneratedClass(c.name, _class_comment(c, comments), _method_lines(c)) for c in classes)
    inside = [node for c in _outermost(tree) for node in ast.walk(c)]
    forwards = [f for c in classes for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
    return Code(
        generated,
        string_getattrs=sum(_is_string_getattr(node) for node in inside),
        torch_ops=sum(isinstance(node, ast.Call) and _dotted(node.func).startswith("torch.ops.") for node in inside),
        dels=sum(isinstance(node, ast.Delete) for f in forwards for node in ast.walk(f)),
    )


def _outermost(node: ast.AST) -> list[ast.ClassDef]:
    """Generated classes not inside another one (so nothing in a nested class is counted twice)."""
    found = []
    for child in ast.iter_child_nodes(node):
        found += [child] if isinstance(child, ast.ClassDef) and _is_module_class(child) else _outermost(child)
    return found


def _is_module_class(cls: ast.ClassDef) -> bool:
    """A generated module class: it has `__init__` or `forward`, or subclasses nn.Sequential (a source
    Sequential subclass that only builds its layers)."""
    return bool(_methods(cls)) or any(_dotted(base) == "nn.Sequential" for base in cls.bases)


def _methods(cls: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Its `__init__` and `forward`: a class with neither (an output stand-in) is not a generated module class."""
    return [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in METHODS]


def _method_lines(cls: ast.ClassDef) -> int:
    return sum((f.end_lineno or f.lineno) - f.lineno + 1 for f in _methods(cls))


def _line_comments(text: str) -> dict[int, str]:
    """Comments that follow code on their line, by line number."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and token.line[: token.start[1]].strip():
            found[token.start[0]] = token.string
    return found


def _class_comment(cls: ast.ClassDef, comments: dict[int, str]) -> str:
    """The comment on the class statement's header (the lines up to its body)."""
    header = range(cls.lineno, cls.body[0].lineno)
    return next((comments[line] for line in header if line in comments), "")


def _is_string_getattr(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def _dotted(node: ast.AST) -> str:
    """`torch.ops.aten.add.Tensor` for that attribute chain; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _named_after(generated: str, source: str, names: list[str]) -> bool:
    """`generated` is `source` or `source` with a variant suffix (`BasicBlock_1`, `BasicBlock2`), and no
    longer source class name prefixes it (`BlockStack` is not a variant of `Block` when both are sources)."""
    if not generated.startswith(source):
        return False
    return not any(len(other) > len(source) and generated.startswith(other) for other in names)


def _comment_names(comment: str, source: SourceClass) -> bool:
    """The class-line comment (`# torchvision/models/resnet.py:59 BasicBlock`) names the source class."""
    words = {word.strip("(),;:") for word in comment.lstrip("#").split()}
    return source.name in words or source.qualname in words


# the table --------------------------------------------------------------------------------
HEADER = ("nodes", "classes", "source classes found", "class lines", "source lines", "ratio", "str getattr",
          "torch.ops", "torch.ops / calls", "nn layers restored", "del", "inline", "targets (repeated blocks)")  # fmt: skip


def cells(r: Readability) -> tuple[str, ...]:
    unknown = sum(s.lines is None for s in r.source)
    source_lines = f"{r.source_lines}" + (f" (+{unknown} unread)" if unknown else "")
    ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
    return (str(r.graph_nodes), str(len(r.code.classes)), f"{r.found}/{len(r.source)}", str(r.class_lines), source_lines,
            ratio, str(r.code.string_getattrs), str(r.code.torch_ops), f"{r.ops_share:.1%}", f"{r.layers[0]}/{r.layers[1]}",
            str(r.code.dels), str(r.inline_modules), r.targets())  # fmt: skip
