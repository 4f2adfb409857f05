"""capture: a `module:attr` spec -> a torch.fx.GraphModule."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from torch import fx, nn

from .errors import FxExportError


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


def to_graph_module(obj: Any, where: str) -> fx.GraphModule:
    """A GraphModule as is; an nn.Module traced with symbolic_trace; a callable called once."""
    if not isinstance(obj, nn.Module) and callable(obj):
        try:
            obj = obj()
        except Exception as error:
            raise FxExportError(f"calling {where} with no arguments failed: {type(error).__name__}: {error}") from error
    if isinstance(obj, fx.GraphModule):
        return obj
    if isinstance(obj, nn.Module):
        try:
            return fx.symbolic_trace(obj)
        except Exception as error:
            raise FxExportError(f"torch.fx.symbolic_trace failed on {where}: {type(error).__name__}: {error}") from error
    raise FxExportError(f"{where} is a {type(obj).__qualname__}, not a GraphModule, an nn.Module or a callable returning one")


def capture(spec: str) -> fx.GraphModule:
    return to_graph_module(load_object(spec), repr(spec))
