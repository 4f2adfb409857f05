"""capture: a `module:attr` spec -> a torch.fx.GraphModule."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import torch
from torch import fx, nn

from .errors import FxExportError
from .producers import load_pt2, normalize


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise FxExportError(f"no such file: {str(path)!r}")
    name = path.stem
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so functions defined there can be imported again by name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FxExportError(f"cannot import {str(path)!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_object(spec: str) -> Any:
    """Import the object a spec names: `package.module:attr` or `path/to/file.py:attr`."""
    source, sep, attr = spec.rpartition(":")
    if not sep or not source or not attr:
        raise FxExportError(f"bad spec {spec!r}: expected 'package.module:attr' or 'path/to/file.py:attr'")
    if source.endswith(".py") or "/" in source:
        module = _load_file(Path(source))
    else:
        try:
            module = importlib.import_module(source)
        except ImportError as error:
            raise FxExportError(f"cannot import module {source!r} from spec {spec!r}: {error}") from error
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise FxExportError(f"{source!r} has no attribute {attr!r} (spec {spec!r})")
        obj = getattr(obj, part)
    return obj


def to_graph_module(obj: Any, where: str, via: str = "trace", example: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> fx.GraphModule:
    """A GraphModule as is; an nn.Module traced (`via="trace"`) or exported (`via="export"`); a callable called once."""
    if not isinstance(obj, nn.Module) and not isinstance(obj, torch.export.ExportedProgram) and callable(obj):
        try:
            obj = obj()
        except Exception as error:
            raise FxExportError(f"calling {where} with no arguments failed: {type(error).__name__}: {error}") from error
    obj = normalize(obj)
    if via == "export":
        return _export(obj, where, example)
    if isinstance(obj, fx.GraphModule):
        return obj
    if isinstance(obj, nn.Module):
        try:
            return fx.symbolic_trace(obj)
        except Exception as error:
            raise FxExportError(f"torch.fx.symbolic_trace failed on {where}: {type(error).__name__}: {error}; try --via export") from error
    raise FxExportError(f"{where} is a {type(obj).__qualname__}, not a GraphModule, an nn.Module or a callable returning one")


def _export(obj: Any, where: str, example: tuple[tuple[Any, ...], dict[str, Any]] | None) -> fx.GraphModule:
    if not isinstance(obj, nn.Module):
        raise FxExportError(f"--via export needs an nn.Module, but {where} is a {type(obj).__qualname__}")
    if example is None:
        raise FxExportError(
            f"--via export needs example inputs for {where}: pass --example-inputs module:attr naming a tuple of args "
            "(or a dict with 'args' and 'kwargs', or a function returning one)"
        )
    args, kwargs = example
    try:
        return torch.export.export(obj, args, kwargs).module()
    except Exception as error:
        raise FxExportError(f"torch.export.export failed on {where}: {type(error).__name__}: {error}") from error


def capture(spec: str, via: str = "trace", example: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> fx.GraphModule:
    """A spec (`module:attr`, `file.py:attr` or a `.pt2` file) as a GraphModule."""
    if spec.endswith(".pt2") and Path(spec).is_file():
        return load_pt2(Path(spec))
    return to_graph_module(load_object(spec), repr(spec), via, example)
