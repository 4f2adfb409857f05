"""Source annotations: a comment naming the file, line and source line a group of statements came from.

Paths are shortened to be relative to site-packages or the current project, never absolute,
so annotations do not leak the exporting machine's layout and exports stay reproducible.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import linecache
import os
import re
import site
import sys
import tokenize
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import torch
from torch import fx
from torch.fx.passes.shape_prop import TensorMetadata

from . import source_blocks
from .augmented import OPERATORS
from .calls import class_name, is_inferred, model_classes, named_after, resolve_class, stack_frames
from .regions import OPTIONAL_TEST

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>[^\n]*)')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_CODE = 100
_ANNOTATION = re.compile(r"(\S+:\d+ )?[A-Za-z_][\w.]*(?:\.<locals>\.[A-Za-z_][\w.]*)*")  # "torchvision/models/resnet.py:59 BasicBlock", "net.py:3 make.<locals>.Gate"
EXPORTED_BY = "exported by fxexport."  # the end of the first line of every module.py (render.py, its docstring)
# The header of a class fxexport wrote (black may have split it): its base, then the source comment, if any.
_CLASS_HEADER = r"class \w+\(\s*(?:nn\.(?:Module|Sequential|ModuleDict|ModuleList)|[A-Za-z_]\w*),?\s*\):"
_GENERATED_CLASS = re.compile(_CLASS_HEADER + r"  # (?P<comment>[^\n]+)\n?")
_PLAIN_CLASS = re.compile(_CLASS_HEADER + r"\n?")


@cache
def _roots() -> tuple[Path, ...]:
    """Folders a path is shown relative to: site-packages first, then the current folder."""
    folders = [*site.getsitepackages(), site.getusersitepackages(), *(p for p in sys.path if p.endswith("site-packages"))]
    return tuple(dict.fromkeys(Path(f).resolve() for f in folders if f)) + (Path(os.getcwd()).resolve(),)


def short_path(path: str) -> str:
    """`torch/nn/modules/linear.py`, `models/net.py`, or just the file name for anything else."""
    return _short_path(path, os.getcwd())


@lru_cache(maxsize=1024)
def _short_path(path: str, cwd: str) -> str:
    """Kept per file (and folder a relative one is in): resolving asks the file system for each folder of the path."""
    resolved = Path(_resolved_in(path, cwd))
    for root in _roots():
        if resolved.is_relative_to(root):
            return resolved.relative_to(root).as_posix()
    return resolved.name


def class_annotation(cls: type | str) -> str:
    """`# torchvision/models/resnet.py:59 BasicBlock`: where the source class is defined.

    A class fxexport generated keeps the comment it was written with, or none, so exports stay a fixed
    point. A class whose calls fxexport inferred points at the source model's class it is named after
    (`classes_from`), where there is one; else it has no source to point at: no comment (a name the
    model chose would be the only thing it could say).
    """
    if is_inferred(cls):
        source = named_after(cls)
        return class_annotation(source) if source is not None else ""
    name = _CONTROL.sub(" ", cls.__qualname__ if isinstance(cls, type) else cls.rpartition(".")[2])
    found = _class_source(cls)
    if found is None:
        return f"# {name}"
    file, line, first = found
    kept = _GENERATED_CLASS.fullmatch(first)
    if kept and _ANNOTATION.fullmatch(kept["comment"]):
        return f"# {_CONTROL.sub(' ', kept['comment'])}"
    if _PLAIN_CLASS.fullmatch(first) and _written_by_fxexport(file):
        return ""  # written without one (its calls were inferred, or exported with annotate=False)
    return f"# {short_path(file)}:{line} {name}" if file else f"# {name}"


def _written_by_fxexport(file: str) -> bool:
    """True for a module.py fxexport wrote (its docstring's first line says so)."""
    first = linecache.getline(file, 1)
    return first.startswith('"""') and first.rstrip().endswith(EXPORTED_BY)


@cache
def _class_source(cls: type | str) -> tuple[str, int, str] | None:
    """(file, line, its header: the lines up to its colon) where a class is defined, or None.

    A class whose module has left sys.modules (an imported export) is found from its forward's code.
    """
    found = resolve_class(cls)
    if found is None:
        return None
    quick = _class_line(found)
    if quick is not None:
        return quick
    try:
        lines, line = inspect.getsourcelines(found)
        file = inspect.getsourcefile(found)
        return (file, line, _header(lines)) if file and lines else None
    except (TypeError, OSError):
        code = getattr(vars(found).get("forward"), "__code__", None)
    file, last = (code.co_filename, code.co_firstlineno) if code is not None else (_module_file(found.__module__), None)
    if file is None:
        return None
    text = linecache.getlines(file)
    for line in range(min(last or len(text), len(text)), 0, -1):
        if re.match(rf"class {re.escape(found.__name__)}\b", text[line - 1]):
            return file, line, _header(text[line - 1 :])
    return None


def _class_line(cls: type) -> tuple[str, int, str] | None:
    """What `inspect.getsourcelines` finds for a top-level, undecorated class with methods, without
    parsing its whole file as inspect does (50-100 ms for a large model file, on each export's first
    use of it): the last `class <name>` line at the left margin above its first method, after a blank
    line or a comment. None for any other class (nested, decorated, without methods of its own in its
    module's file)."""
    if cls.__qualname__ != cls.__name__:
        return None
    try:
        file = inspect.getsourcefile(cls)
    except TypeError:
        return None
    if not file:
        return None
    where = os.path.abspath(file)
    codes = [v.__code__ for v in vars(cls).values() if inspect.isfunction(v)]
    firsts = [c.co_firstlineno for c in codes if os.path.abspath(c.co_filename) == where]
    if not firsts:
        return None
    text = linecache.getlines(file)
    pattern = re.compile(rf"class {re.escape(cls.__name__)}\b")
    line = next((n for n in range(min(min(firsts), len(text)), 0, -1) if pattern.match(text[n - 1])), None)
    if line is None or (line > 1 and text[line - 2].strip() and not text[line - 2].startswith("#")):
        return None  # decorated, perhaps over several lines: inspect counts the decorators in
    return file, line, _header(text[line - 1 :])


def _header(lines: list[str]) -> str:
    """A class statement's header: its first line, or, split after `(`, up to the line that closes its bases."""
    if lines[0].rstrip().endswith("("):
        for end, text in enumerate(lines[:_HEADER_LINES]):
            if text.startswith(")"):
                return "".join(lines[: end + 1])
    return lines[0]


_HEADER_LINES = 4  # `class Name(`, the base, `):  # comment` as black splits a long one


def _module_file(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def source_class_name(cls: type | str) -> str:
    """The name a generated class takes: the source class's, or for a class fxexport generated
    (`Block_1` with `# models.py:3 Block`), the one its comment names."""
    annotation = class_annotation(cls)  # none for an inferred class or one fxexport wrote without a comment: its own name
    return annotation.rsplit(" ", 1)[-1].rpartition(".")[2] if annotation else class_name(cls)


@cache
def _class_span(cls: type | str) -> tuple[str, int, int] | None:
    """(file, first line, last line) of a class's source, or None; found as _class_source finds it (so also
    for a class of an imported export whose module has left sys.modules)."""
    source = _class_source(cls)
    if source is None:
        return None
    file, start, _ = source
    lines = linecache.getlines(file)
    found = source_blocks.block(lines, start)
    if found is None or source_blocks.parsed(found) is None:
        try:
            found = inspect.getblock(lines[start - 1 :])
        except (IndexError, SyntaxError, tokenize.TokenError):
            return None
    return (_resolved(file), start, start + len(found) - 1) if found else None


def in_class_code(cls: type | str, file: str, line: int) -> bool:
    """True when line `line` of `file` is in the source of `cls` or of a base it inherits but torch's own."""
    resolved = resolve_class(cls)
    classes: list[type | str] = [*model_classes(resolved)] if resolved is not None else [cls]
    where = _resolved(file)
    return any((span := _class_span(c)) is not None and span[0] == where and span[1] <= line <= span[2] for c in classes)


def own_stack_trace(stack_trace: str | None, cls: type | str, callers: int = 0) -> str | None:
    """The part of a node's stack trace from the frame inside `cls`'s own code (or the forward it inherits)
    on (None if none is), so a generated class's comments point into its source class, not into its
    callers. A module that runs inside `callers` modules running the same forward (a tree of trees)
    starts at the `forward` frame after theirs, where the trace has one. An inferred call named after the
    source model's class (inferred_stacks.py) has that class's frames (recovered_statements.py)."""
    return _own_stack_trace(stack_trace, named_after(cls) or cls, callers, os.getcwd()) if stack_trace else None


# Kept during one export (forget_traces): the nodes of a module's instances share a few traces (a 6-block
# transformer's 144 nodes, 8), each read frame by frame; by folder, as _resolved reads a relative path.
@lru_cache(maxsize=1 << 12)
def _own_stack_trace(stack_trace: str, cls: type | str, callers: int, cwd: str) -> str | None:
    spans = [s for s in (_class_span(cls), _inherited_forward_span(cls)) if s is not None]
    if not spans:
        return None
    own = (m for m in _FRAME.finditer(stack_trace) if any(_resolved(m["file"]) == s[0] and s[1] <= int(m["line"]) <= s[2] for s in spans))
    first = next(own, None)
    if first is None:
        return None
    if callers:  # read the rest of the trace only for such a module
        forwards = [m for m in (first, *own) if m["func"] == "forward"]
        first = forwards[callers] if callers < len(forwards) else first
    return stack_trace[first.start() :]


def _model_forward(cls: type | str) -> Any:
    """The `forward` function a model class runs, None where it is torch's or no plain function."""
    resolved = resolve_class(cls)
    forward = getattr(resolved, "forward", None) if resolved is not None else None
    return forward if inspect.isfunction(forward) and not (forward.__module__ or "").startswith("torch.") else None


def inherited_forward(cls: type | str) -> Any:
    """The `forward` a model class runs that a base of it defines, not torch (None where it defines its own)."""
    resolved = resolve_class(cls)
    return None if resolved is None or "forward" in vars(resolved) else _model_forward(resolved)


def runs_forward_of(caller: type | str, cls: type | str) -> bool:
    """True when a module of class `caller` may run the code of `cls`'s forward: it is of that class, or a class
    it is, or inherits, defines that forward (`class Leaf(Tree)`; an outer block whose forward calls
    `super().forward(...)`, the inner one's)."""
    if caller == cls:
        return True
    forward, runner = _model_forward(cls), resolve_class(caller)
    return forward is not None and runner is not None and any(vars(klass).get("forward") is forward for klass in model_classes(runner))


@lru_cache(maxsize=1 << 10)
def _inherited_forward_span(cls: type | str) -> tuple[str, int, int] | None:
    """(file, first line, last line) of the forward `cls` inherits from a base (inherited_forward), else None."""
    forward = inherited_forward(cls)
    try:
        file = inspect.getsourcefile(forward) if forward is not None else None
        lines, start = source_blocks.source_lines(forward) if file is not None else ([], 0)
    except (OSError, TypeError, SyntaxError, tokenize.TokenError, IndexError):
        return None
    return (_resolved(file), start, start + len(lines) - 1) if file is not None and lines else None


def starts_in(trace: str, cls: type | str) -> bool:
    """True when the trace's outermost frame is in the code of `cls` or of a base it inherits (BatchNorm2d's
    forward is `_BatchNorm`'s)."""
    resolved = resolve_class(cls)
    classes = [c for c in resolved.__mro__ if c not in (torch.nn.Module, object)] if resolved is not None else [cls]
    return any((own := own_stack_trace(trace, c)) is not None and not trace[: len(trace) - len(own)].strip() for c in classes)


def root_code_traced(nodes: Iterable[fx.Node]) -> bool | None:
    """Whether the stack traces of a graph's nodes hold frames of its root's own code: False where each starts
    in the outermost module call below the root that its node ran in (torch.export of a GraphModule, whose
    own code fx wrote), True where one does not, None where no node has one (symbolic_trace records none)."""
    traced = False
    for node in nodes:
        if not node.stack_trace:
            continue
        traced = True
        frames = [f for f in stack_frames(node) if f.path and not is_inferred(f.cls)]
        if not frames or not starts_in(node.stack_trace, frames[0].cls):
            return True
    return False if traced else None


def forget_traces() -> None:
    """Drop the traces kept during an export (own_stack_trace)."""
    _own_stack_trace.cache_clear()


def _resolved(file: str) -> str:
    """The file's real path: asked of the file system once per file and folder (every frame of every node's trace names one)."""
    return _resolved_in(file, os.getcwd())


@lru_cache(maxsize=4096)
def _resolved_in(file: str, cwd: str) -> str:
    return str(Path(file).resolve())


def _outermost_frame(node: fx.Node) -> re.Match[str] | None:
    """The outermost recorded frame of the node's stack trace: file, line, function and source line."""
    return _FRAME.search(node.stack_trace or "")


def source_statement(node: fx.Node) -> tuple[str, str, str] | None:
    """(file, line number, source line) of the outermost recorded frame of the node's stack trace, or None."""
    match = _outermost_frame(node)
    return None if match is None else (match["file"], match["line"], match["code"].strip())


def source_frames(node: fx.Node) -> tuple[tuple[str, str, str], ...]:
    """(file, line number, source line) of each recorded frame of the node's stack trace, outermost first:
    its module's forward and the functions it called, up to another module's forward (a child's code is
    its own class's: the items of its result carry its frames) or the first frame in torch's own code
    after one outside it (`F.layer_norm`'s body says nothing of a model's; a torch.nn class's own
    statements, nn.TransformerEncoderLayer's, do)."""
    frames: list[tuple[str, str, str]] = []
    for match in _FRAME.finditer(node.stack_trace or ""):
        if frames and passes_on(match["code"]):
            continue  # a wrapper calling what it wraps (transformers 5's kernel-replaceable functions are modules)
        if frames and (match["func"] == "forward" or in_torch(match["file"]) and not in_torch(frames[0][0])):
            break
        frames.append((match["file"], match["line"], match["code"].strip()))
    return tuple(frames)


_PASSES_ON = re.compile(r"return [A-Za-z_][\w.]*\(\*\w+, \*\*\w+\)")


def passes_on(code: str) -> bool:
    """True for a frame's line that calls what its function wraps (`return func(*args, **kwargs)`)."""
    return _PASSES_ON.fullmatch(code.strip()) is not None


def frame_matches(node: fx.Node) -> Iterator[re.Match[str]]:
    """The frames of the node's stack trace, outermost first: file, line, function and source line."""
    return _FRAME.finditer(node.stack_trace or "")


def in_torch(file: str) -> bool:
    """True for a file of torch's own code."""
    return _resolved(file).startswith(_TORCH_FOLDER)


_TORCH_FOLDER = str(Path(torch.__file__).resolve().parent) + os.sep


_RECOVERED: ContextVar[frozenset[tuple[str, int]]] = ContextVar("recovered", default=frozenset())


@contextlib.contextmanager
def _setting(var: ContextVar[Any], value: object) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def recovering(frames: frozenset[tuple[str, int]]) -> contextlib.AbstractContextManager[None]:
    """While collecting a graph: the frames (file, line) of its statements that were recovered
    (recovered_statements.py) rather than recorded. Recovered ones give names and statements alone: no
    note quotes them, and the root, whose source is unknown, has none."""
    return _setting(_RECOVERED, frames)


_ROOT_TRACED: ContextVar[bool] = ContextVar("root_traced", default=True)


def tracing_root(traced: bool) -> contextlib.AbstractContextManager[None]:
    """While collecting a graph: whether its stack traces may hold frames of its root's own code
    (root_code_traced of the graph as given, before any stage adds a call); where not, the root quotes none."""
    return _setting(_ROOT_TRACED, traced)


def root_traced() -> bool:
    """Whether the root of the graph being collected may quote its stack traces (tracing_root)."""
    return _ROOT_TRACED.get()


def quoted(node: fx.Node) -> bool:
    """True unless the node's outermost frame is a recovered statement (recovering), which no note quotes."""
    match = _outermost_frame(node)
    return match is None or (match["file"], int(match["line"])) not in _RECOVERED.get()


def recovered() -> bool:
    """Whether statements of the graph being collected were recovered (recovering)."""
    return bool(_RECOVERED.get())


def annotation(node: fx.Node) -> str | None:
    """`# models/net.py:12 in forward: y = self.lin(x)` for the outermost recorded frame, or None."""
    match = _outermost_frame(node)
    if match is None:
        return None
    code = _CONTROL.sub(" ", match["code"]).strip()
    if len(code) > MAX_CODE:
        code = code[: MAX_CODE - 3] + "..."
    where = f"{short_path(match['file'])}:{match['line']} in {_CONTROL.sub(' ', match['func'])}"
    return f"# {where}: {code}" if code else f"# {where}"


# A note (annotation) as a line of a forward, indented as its statements are, and what it quotes.
NOTE = re.compile(r"(?P<indent> *)# \S+:\d+ in (?P<function>[^:]*): (?P<code>.*)")


def without_echoes(lines: list[str]) -> list[str]:
    """The forward's lines without each note whose statements are one statement that reads as the source
    line it quotes (`# timm/layers/mlp.py:48 in forward: x = self.fc1(x)` over `x = self.fc1(x)`): it
    says nothing the code does not. A `del` after the statement does not count, nor does a name kept
    under another (`residual = hidden_states`: no node stands for it), nor a `return` after
    it (the method's result is quoted by no note: over `x = self.fc2(x)` then `return self.drop2(x)`,
    the note quotes the first alone; nor `out += x` before `return out`, a return written so); a note over several statements (a block's too), or one the code
    differs from, stays; a statement under `if self.<child> is not None:`, that child's call, is an echo
    too; so is a note the line before repeats (both branches' statement, written once after them). Run on
    each class's final forward: forwards compared while classes are shared (generalize.py) keep every
    note, so that theirs align."""
    echoes = set()
    for i, line in enumerate(lines):
        note = NOTE.fullmatch(line)
        if note is None:
            continue
        if i > 0 and lines[i - 1] == line:
            echoes.add(i)
            continue
        code = [statement.strip() for statement in _noted(lines, i + 1, note["indent"]) if not statement.strip().startswith(("del ", "#"))]
        code = code[:1] + [statement for statement in code[1:] if not _ALIAS.fullmatch(statement)]
        code = code[:1] + [statement for k, statement in enumerate(code[1:], 1) if not _returned(code, k)]
        if len(code) == 2 and (test := OPTIONAL_TEST.fullmatch(code[0])) and f"self.{test[1]}(" in code[1]:
            code = code[1:]  # the statement under the test of the child it applies (optional_children.py)
        if len(code) == 1 and _spaceless(code[0]) == _spaceless(note["code"]):
            echoes.add(i)
    return [line for i, line in enumerate(lines) if i not in echoes]


_ALIAS = re.compile(r"[A-Za-z_]\w* = [A-Za-z_]\w*")
_AUGMENTED = re.compile(rf"([A-Za-z_]\w*) (?:{'|'.join(map(re.escape, OPERATORS.values()))}) .*")  # augmented.py's


def _returned(code: list[str], k: int) -> bool:
    """True for a `return`, and for an in-place operation on the value the next statement returns (`out +=
    x`, `return out`: augmented.py's form of torch.export's `return out.add_(x)`)."""
    if code[k].startswith("return "):
        return True
    augmented = _AUGMENTED.fullmatch(code[k])
    return augmented is not None and k + 1 < len(code) and code[k + 1] == f"return {augmented[1]}"


def _noted(lines: list[str], start: int, indent: str) -> list[str]:
    """The lines a note at `indent` stands over, from `start`: up to the next note at that depth or less,
    or the end of its block."""
    out = []
    for line in lines[start:]:
        depth = len(line) - len(line.lstrip(" "))
        note = NOTE.fullmatch(line)
        if depth < len(indent) or (note is not None and len(note["indent"]) <= len(indent)):
            break
        out.append(line)
    return out


def _spaceless(code: str) -> str:
    return re.sub(r"\s+", "", code)


def _describe(value: Any) -> str | None:
    if isinstance(value, torch.Tensor) or isinstance(value, TensorMetadata):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{dtype}[{', '.join(str(size) for size in value.shape)}]"
    if isinstance(value, (tuple, list)) and value:
        parts = [_describe(v) for v in value]
        return f"({', '.join(p or '?' for p in parts)})" if any(parts) else None
    return None


def shape_comment(node: fx.Node) -> str | None:
    """`float32[s0, 4]` from `node.meta["val"]` or `["tensor_meta"]` when the producer recorded them."""
    for key in ("val", "tensor_meta"):
        if key in node.meta:
            text = _describe(node.meta[key])
            if text:
                return _CONTROL.sub(" ", text)
    return None
