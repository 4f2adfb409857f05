"""Where a callable lives: its qualified names, and the code that reaches it from module.py.

torch functions through `torch` or `F`, builtins and `operator` by name, anything else by
`from module import name`. A leaf of the family that spells objects as code: it knows nothing
of copying functions (inline.py) or of output classes (outputclasses.py); literals.py's
`function_reference()` tries these spellings in turn.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch.fx.node import _get_qualified_name

from .imports import ImportTable, is_stdlib
from .oplibs import register_op_library
from .sourceimports import resolve


def _resolves_to(dotted: str, target: object) -> bool:
    try:
        return resolve(dotted) is target
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
    target = resolve(dotted)
    register_op_library(target, imports)
    for alias in (f"torch.nn.functional.{name}", f"torch.{name}", f"torch.linalg.{name.removeprefix('linalg_')}"):
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
    elif _by_attributes(dotted) is not target:  # a package attribute hides the submodule (torch._higher_order_ops.flat_apply)
        first, *rest = dotted[len(module) + 1 :].split(".")
        return ".".join([imports.symbol(module, first), *rest])
    else:
        imports.module(module)
    return dotted


def _by_attributes(dotted: str) -> Any:
    """What `dotted` means as code after its imports: attribute access from the top package."""
    top, *rest = dotted.split(".")
    obj: Any = importlib.import_module(top)
    for attr in rest:
        obj = getattr(obj, attr, None)
    return obj


def library_free_name(target: object) -> str | None:
    """A dotted name in torch or the standard library that resolves to `target`, or None."""
    for dotted in _candidates(target):  # type: ignore[arg-type]
        top = dotted.split(".")[0]
        if "<" not in dotted and top != "__main__" and (top == "torch" or is_stdlib(top)) and _resolves_to(dotted, target):
            return dotted
    return None


def named_reference(dotted: str, target: object, imports: ImportTable) -> str:
    """Code for `target`, found at `dotted`: `torch.x`, `F.x`, `math.x`, else `from module import name`."""
    if dotted.split(".")[0] == "torch":
        return _torch_reference(dotted, imports)
    if dotted.split(".")[0] == "math":
        return f"{imports.use('math')}.{dotted.removeprefix('math.')}"
    module, _, qualname = dotted.rpartition(".")
    while module and not _is_importable_module(module):
        module, _, head = module.rpartition(".")
        qualname = f"{head}.{qualname}"
    first, *rest = qualname.split(".")
    return ".".join([imports.symbol(module, first), *rest])


def simple_reference(target: Callable[..., Any], imports: ImportTable) -> str | None:
    """A builtin by name, `operator.x`, or a name in torch or the standard library; else None."""
    name = getattr(target, "__name__", "")
    if getattr(builtins, name, None) is target:
        return name
    if getattr(operator, name, None) is target:
        return f"{imports.use('operator')}.{name}"
    dotted = library_free_name(target)
    return None if dotted is None else named_reference(dotted, target, imports)


def imported_reference(target: Callable[..., Any], imports: ImportTable) -> str | None:
    """`target` imported by a qualified name that resolves to it (never from `__main__`), or None."""
    for dotted in _candidates(target):
        if "<" in dotted or dotted.startswith("__main__.") or not _resolves_to(dotted, target):
            continue
        if not any(_is_importable_module(dotted[:i]) for i in range(len(dotted)) if dotted[i] == "."):
            continue
        return named_reference(dotted, target, imports)
    return None


def is_torch_object(target: object) -> bool:
    """True for a torch op or a callable that torch itself defines."""
    return isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or any(
        c.split(".")[0] == "torch" for c in _candidates(target)  # type: ignore[arg-type]
    )
