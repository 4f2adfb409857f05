"""Code that names a callable: torch functions through `torch`, others imported by qualified name."""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch.fx.node import _get_qualified_name

from .errors import FxExportError
from .imports import ImportTable


def _resolve(dotted: str) -> Any:
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


def _resolves_to(dotted: str, target: object) -> bool:
    try:
        return _resolve(dotted) is target
    except Exception:  # noqa: BLE001 - importing an arbitrary module may raise anything
        return False


def _candidates(target: Callable[..., Any]) -> list[str]:
    names = []
    try:
        names.append(_get_qualified_name(target))
    except Exception:  # noqa: BLE001 - torch's naming fails in many ways; the fallback below covers it
        pass
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if module and qualname:
        names.append(f"{module}.{qualname}")
    return names


def _is_importable_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: a module object with no __spec__, e.g. torch._C._nn
        return False


def _torch_reference(dotted: str, imports: ImportTable) -> str:
    name = dotted.rsplit(".", 1)[1]
    target = _resolve(dotted)
    for alias in (f"torch.nn.functional.{name}", f"torch.{name}"):
        if alias != dotted and _resolves_to(alias, target):
            dotted = alias  # the spelling people write: F.linear, not torch._C._nn.linear
            break
    if dotted.startswith("torch.nn.functional."):
        return f"{imports.use('F')}.{dotted.removeprefix('torch.nn.functional.')}"
    module = dotted.rsplit(".", 1)[0]
    while module != "torch" and (module.startswith("torch._C") or not _is_importable_module(module)):
        module = module.rsplit(".", 1)[0]
    if module == "torch":
        imports.use("torch")
    else:
        imports.module(module)
    return dotted


def function_reference(target: Callable[..., Any], imports: ImportTable, where: str) -> str:
    """The expression that names `target` in generated code; `where` names the node for errors."""
    try:
        return imports.references[target]
    except (KeyError, TypeError):  # TypeError: an unhashable callable
        pass
    reference = _reference(target, imports, where)
    try:
        imports.references[target] = reference
    except TypeError:
        pass
    return reference


def _reference(target: Callable[..., Any], imports: ImportTable, where: str) -> str:
    if getattr(builtins, getattr(target, "__name__", ""), None) is target:
        return target.__name__
    if getattr(operator, getattr(target, "__name__", ""), None) is target:
        return f"{imports.use('operator')}.{target.__name__}"
    for dotted in _candidates(target):
        if "<" in dotted or dotted.startswith("__main__."):
            continue
        if not _resolves_to(dotted, target):
            continue
        if dotted.split(".")[0] == "torch":
            return _torch_reference(dotted, imports)
        if dotted.split(".")[0] == "math":
            return f"{imports.use('math')}.{dotted.removeprefix('math.')}"
        module, _, qualname = dotted.rpartition(".")
        while module and not _resolves_to(f"{module}.{qualname}", target):
            module, _, head = module.rpartition(".")
            qualname = f"{head}.{qualname}"
        first, *rest = qualname.split(".")
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        return ".".join([imports.symbol(module, first), *rest])
    raise FxExportError(
        f"{where} calls {target!r}, which has no importable qualified name; "
        "define it at module level (and torch.fx.wrap it), or keep the module that calls it as a leaf"
    )


def is_torch_object(target: object) -> bool:
    """True for a torch op or a callable that torch itself defines."""
    return isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or any(
        c.split(".")[0] == "torch" for c in _candidates(target)  # type: ignore[arg-type]
    )
