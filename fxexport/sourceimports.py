"""What a module's own import statements bind: `from types import FunctionType` -> `types.FunctionType`."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
from typing import Any


@functools.lru_cache(maxsize=256)
def _imports(module: str) -> dict[str, str]:
    """Name -> dotted origin, for the absolute imports anywhere at the module's top level (also in if/try)."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def resolve(dotted: str) -> Any:
    """Import the longest importable prefix of `dotted`, then follow attributes."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def imported_name(module: str, name: str, value: object) -> str | None:
    """The dotted name `module` imported `name` from, when it still resolves to `value`."""
    dotted = _imports(module).get(name)
    if dotted is None:
        return None
    try:
        return dotted if resolve(dotted) is value else None
    except Exception:  # noqa: BLE001 - an import that fails now is no reference
        return None
