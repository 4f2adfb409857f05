"""capture: a `module:attr` spec -> a torch.fx.GraphModule."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import fx, nn

from .errors import FxExportError, user_code
from .producers import load_pt2, normalize


def _existing_file(path: Path, kind: str) -> Path:
    """`path` if it is a file; else FxExportError saying that it is a folder, or that it does not exist."""
    if path.is_dir():
        raise FxExportError(f"{str(path)!r} is a folder, not {kind}; name a file (path/to/file.py:attr), a module (package.module:attr) or a .pt2 file")
    if not path.is_file():
        raise FxExportError(f"no such file: {str(path)!r}")
    return path


def _load_file(path: Path) -> Any:
    _existing_file(path, "a Python file")
    name = path.stem
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so functions defined there can be imported again by name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FxExportError(f"cannot import {str(path)!r} as Python: name a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with user_code(f"cannot import {str(path)!r}"):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # as the import system does: no half-run module stays behind
        raise
    return module


def _import_module(source: str, spec: str) -> Any:
    with user_code(f"cannot import module {source!r} from spec {spec!r}"):
        return importlib.import_module(source)


_MISSING = object()


def load_object(spec: str) -> Any:
    """Import the object a spec names: `package.module:attr` or `path/to/file.py:attr`."""
    source, sep, attr = spec.rpartition(":")
    if not sep or not source or not attr:
        raise FxExportError(f"bad spec {spec!r}: expected 'package.module:attr' or 'path/to/file.py:attr'")
    module = _load_file(Path(source)) if source.endswith(".py") or "/" in source else _import_module(source, spec)
    obj: Any = module
    for part in attr.split("."):
        with user_code(f"reading {attr!r} of {source!r} failed (spec {spec!r})"):
            obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            raise FxExportError(f"{source!r} has no attribute {attr!r} (spec {spec!r})")
    return obj


def model_of(spec: str) -> nn.Module:
    """The nn.Module a spec names, or that the callable it names returns (`--classes-from`)."""
    obj = load_object(spec)
    if not isinstance(obj, nn.Module) and callable(obj):
        with user_code(f"calling {spec!r} with no arguments failed"):
            obj = obj()
    if not isinstance(obj, nn.Module):
        raise FxExportError(f"{spec!r} is a {type(obj).__qualname__}, not an nn.Module or a callable returning one")
    return obj


def to_graph_module(obj: Any, where: str, via: str = "trace", example: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> fx.GraphModule:
    """A GraphModule as is; an nn.Module traced (`via="trace"`) or exported (`via="export"`); a callable called once."""
    if not isinstance(obj, nn.Module) and not isinstance(obj, torch.export.ExportedProgram) and callable(obj):
        with user_code(f"calling {where} with no arguments failed"):
            obj = obj()
    obj = normalize(obj)
    if via == "export":
        return _export(obj, where, example)
    if isinstance(obj, fx.GraphModule):
        return obj
    if isinstance(obj, nn.Module):
        with user_code(f"torch.fx.symbolic_trace failed on {where}", "; try --via export"):
            return trace(obj)
    raise FxExportError(f"{where} is a {type(obj).__qualname__}, not a GraphModule, an nn.Module or a callable returning one")


def trace(root: nn.Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None) -> fx.GraphModule:
    """`torch.fx.symbolic_trace(root, concrete_args)`, each node also recording the stack trace of the
    statement it ran in, as torch.export's do: the export then takes the source's names for its values and
    quotes its lines. (torch's own `record_stack_traces` imports torch._dynamo and sympy to filter the
    frames: seconds.)"""
    tracer = fx.Tracer()
    create_node = tracer.create_node

    def recording(*args: Any, **kwargs: Any) -> fx.Node:
        node = create_node(*args, **kwargs)
        if not node.stack_trace:
            node.stack_trace = _user_stack()
        return node

    tracer.create_node = recording  # type: ignore[method-assign]
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else getattr(root, "__name__", "function")
    return fx.GraphModule(tracer.root, graph, name)


_TORCH = str(Path(torch.__file__).resolve().parent) + os.sep
_TORCH_FX = _TORCH + "fx" + os.sep
_TRACE = str(Path(fx.Tracer.trace.__code__.co_filename).resolve())
_HERE = str(Path(__file__).resolve())


def _user_stack() -> str | None:
    """The stack of the code the trace ran (the frames below `Tracer.trace`: the root's forward or the
    function traced, then what it called), formatted as a traceback: torch's own frames left out but the
    forwards of its modules (nn.Sequential's, that call the next); None outside that code (an input)."""
    frames = list(reversed(traceback.StackSummary.extract(traceback.walk_stack(None), lookup_lines=False)))
    entry = next((i for i in range(len(frames) - 1, -1, -1) if frames[i].name == "trace" and _resolved(frames[i].filename) == _TRACE), None)
    shown = [f for f in frames[entry + 1 :] if _shown(f.filename, f.name)] if entry is not None else []
    return "".join(traceback.StackSummary.from_list(shown).format()).strip() or None


@functools.lru_cache(maxsize=4096)
def _resolved(filename: str) -> str:
    return str(Path(filename).resolve())


@functools.lru_cache(maxsize=4096)
def _shown(filename: str, function: str) -> bool:
    """A frame of the model's code, or a forward of a torch.nn module; not torch's machinery nor this file's."""
    path = _resolved(filename)
    if path == _HERE:
        return False
    return not path.startswith(_TORCH) or (function == "forward" and not path.startswith(_TORCH_FX))


def _export(obj: Any, where: str, example: tuple[tuple[Any, ...], dict[str, Any]] | None) -> fx.GraphModule:
    if not isinstance(obj, nn.Module):
        raise FxExportError(f"--via export needs an nn.Module, but {where} is a {type(obj).__qualname__}")
    if example is None:
        raise FxExportError(
            f"--via export needs example inputs for {where}: pass --example-inputs module:attr naming a tuple of args "
            "(or a dict with 'args' and 'kwargs', or a function returning one)"
        )
    args, kwargs = example
    with user_code(f"torch.export.export failed on {where}"):
        return torch.export.export(obj, args, kwargs).module()


def capture(spec: str, via: str = "trace", example: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> fx.GraphModule:
    """A spec (`module:attr`, `file.py:attr` or a `.pt2` file) as a GraphModule."""
    if spec.endswith(".pt2"):
        return load_pt2(_existing_file(Path(spec), "a .pt2 file"))
    return to_graph_module(load_object(spec), repr(spec), via, example)
