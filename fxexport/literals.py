"""Python values as code: `repr()` for plain literals, explicit forms for torch and float specials."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.fx.immutable_collections import immutable_dict, immutable_list

from .containers import is_output_class
from .errors import FxExportError
from .imports import ImportTable
from .names import quote
from .targets import function_reference

NameOf = Callable[[Any], "str | None"]


def _float(value: float, imports: ImportTable) -> str:
    if math.isnan(value):
        return f"{imports.use('math')}.nan"
    if math.isinf(value):
        return f"{'-' if value < 0 else ''}{imports.use('math')}.inf"
    return repr(value)


def _torch_constant(value: object, imports: ImportTable) -> str:
    """`torch.float32`, `torch.channels_last`, `torch.strided`: checked to resolve to the value."""
    text = str(value)
    attr = text.removeprefix("torch.")
    if getattr(torch, attr, None) is not value and getattr(torch, attr, None) != value:
        raise FxExportError(f"cannot write {value!r} as code")
    return f"{imports.use('torch')}.{attr}"


def _slice_part(value: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    return "" if value is None else literal(value, imports, name_of, where)


def index_code(index: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    """The inside of `x[...]`: `:, 0`, `..., 1:2`, `None`."""

    def one(item: Any) -> str:
        if isinstance(item, slice):
            parts = [_slice_part(p, imports, name_of, where) for p in (item.start, item.stop, item.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if item.step is not None else "")
        if item is Ellipsis:
            return "..."
        return literal(item, imports, name_of, where)

    if isinstance(index, tuple) and type(index) is tuple and index:
        return ", ".join(one(i) for i in index) + ("," if len(index) == 1 else "")
    return one(index)


def _built_from_fields(cls: type) -> bool:
    """A namedtuple, or a dataclass whose __init__ takes exactly its init fields (not a custom one)."""
    if not dataclasses.is_dataclass(cls):
        return True
    try:
        params = list(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return False
    return params == [f.name for f in dataclasses.fields(cls) if f.init]


def _treespec(spec: pytree.TreeSpec, imports: ImportTable, name_of: NameOf, where: str) -> str:
    """A TreeSpec graph constant (torch.export's flat_apply): from its JSON, else rebuilt node by node."""
    module = imports.module("torch.utils._pytree")
    try:
        return f"{module}.treespec_loads({pytree.treespec_dumps(spec)!r})"
    except Exception:  # noqa: BLE001 - a node type without a serialized name
        pass
    if spec.is_leaf():
        return f"{module}.treespec_leaf()" if hasattr(pytree, "treespec_leaf") else f"{module}.LeafSpec()"
    kind = literal(spec.type, imports, name_of, where)
    context = literal(spec.context, imports, name_of, where)
    children = ", ".join(_treespec(c, imports, name_of, where) for c in spec.children())
    return f"{module}.TreeSpec({kind}, {context}, [{children}])"


def _output_instance(value: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    """A namedtuple or dataclass instance as a constructor call (the class imported or stood in for)."""
    cls = function_reference(type(value), imports, where)
    if isinstance(value, tuple):
        return f"{cls}({', '.join(literal(v, imports, name_of, where) for v in value)})"
    fields = [f.name for f in dataclasses.fields(value) if f.init]
    return f"{cls}({', '.join(f'{n}={literal(getattr(value, n), imports, name_of, where)}' for n in fields)})"


def literal(value: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    """Code for an fx argument: nodes by name, containers recursively, everything else checked."""
    name = name_of(value)
    if name is not None:
        return name
    if isinstance(value, str) and not isinstance(value, enum.Enum):
        return quote(value)
    if value is None or isinstance(value, (bool, int, bytes, complex)) and not isinstance(value, enum.Enum):
        return repr(value)
    if isinstance(value, float):
        return _float(value, imports)
    if value is Ellipsis:
        return "..."
    if isinstance(value, slice):
        parts = (literal(p, imports, name_of, where) for p in (value.start, value.stop, value.step))
        return f"slice({', '.join(parts)})"
    if isinstance(value, torch.Size):
        return f"{imports.use('torch')}.Size({literal(list(value), imports, name_of, where)})"
    if isinstance(value, pytree.TreeSpec):
        return _treespec(value, imports, name_of, where)
    if is_output_class(type(value)) and _built_from_fields(type(value)):
        return _output_instance(value, imports, name_of, where)
    if isinstance(value, tuple) and type(value) is tuple:
        items = [literal(v, imports, name_of, where) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if type(value) in (list, immutable_list):
        return f"[{', '.join(literal(v, imports, name_of, where) for v in value)}]"
    if type(value) in (dict, immutable_dict):
        entries = (f"{literal(k, imports, name_of, where)}: {literal(v, imports, name_of, where)}" for k, v in value.items())
        return f"{{{', '.join(entries)}}}"
    if isinstance(value, torch.device):
        return f"{imports.use('torch')}.device({quote(str(value))})"
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return _torch_constant(value, imports)
    if isinstance(value, type) or callable(value):
        return function_reference(value, imports, where)
    raise FxExportError(f"{where}: cannot write a value of type {type(value).__qualname__} as code ({value!r:.60})")
