"""Any Python object as code: the entry point of the family that spells objects in module.py.

`literal()` writes a value: `repr()` for plain literals, explicit forms for torch and float
specials, containers item by item, and callables and classes through `function_reference()`.
That in turn names torch and the standard library (qualnames.py), defines a stand-in for a
library's output class (outputclasses.py), or copies a library function (inline.py); and the
field defaults of a stand-in and the globals and defaults of a copy are written by `literal()`
again. That recursion lives here alone, and the modules below never import this one: a
stand-in gets its defaults' code as a callback, a copy its globals' code as a dict.

    names, imports, sourceimports  <-  outputclasses, qualnames  <-  inline  <-  literals
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import logging
import math
import re
import types
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.fx.immutable_collections import immutable_dict, immutable_list

from .errors import FxExportError
from .imports import ImportTable
from .inline import (
    NotInlinable,
    Source,
    check_function,
    emit,
    global_import,
    is_data,
    is_mutable_data,
    is_plain_function,
    load_source,
    logger_code,
    module_code,
)
from .names import quote
from .outputclasses import is_output_class, output_class_reference
from .qualnames import imported_reference, named_reference, simple_reference

NameOf = Callable[[Any], "str | None"]


def _no_name(value: Any) -> None:
    """The `name_of` of a value that is never a graph node."""
    return None


def _float(value: float, imports: ImportTable) -> str:
    if math.isnan(value):
        return f"{imports.use('math')}.nan"
    if math.isinf(value):
        return f"{'-' if value < 0 else ''}{imports.use('math')}.inf"
    return repr(value).replace("e+", "e")  # as black writes an exponent: 1e38, not 1e+38


def _torch_constant(value: object, imports: ImportTable) -> str:
    """`torch.float32`, `torch.channels_last`, `torch.strided`: checked to resolve to the value."""
    text = str(value)
    attr = text.removeprefix("torch.")
    if getattr(torch, attr, None) is not value and getattr(torch, attr, None) != value:
        raise FxExportError(f"cannot write {value!r} as code")
    return f"{imports.use('torch')}.{attr}"


def _slice_part(value: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    return "" if value is None else literal(value, imports, name_of, where)


_TRIVIAL_BOUND = re.compile(r"-?([A-Za-z_][A-Za-z0-9_]*|[0-9][0-9a-zA-Z_.]*)")


def _complex_bound(code: str) -> bool:
    """A slice bound black counts as an expression (an attribute, a call, arithmetic), not a name or number."""
    return bool(code) and not _TRIVIAL_BOUND.fullmatch(code)


def index_code(index: Any, imports: ImportTable, name_of: NameOf, where: str) -> str:
    """The inside of `x[...]`: `:, 0`, `..., 1:2`, `None`."""

    def one(item: Any) -> str:
        if isinstance(item, slice):
            parts = [_slice_part(p, imports, name_of, where) for p in (item.start, item.stop, item.step)]
            parts = parts[:2] + parts[2:] * (item.step is not None)
            if not any(map(_complex_bound, parts)):
                return ":".join(parts)
            # black spaces a slice with a bound beyond a name or number as a binary operator: `x[: self.n]`
            return "".join(part if i == 0 else f"{' ' if parts[i - 1] else ''}:{' ' if part else ''}{part}" for i, part in enumerate(parts))
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
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout, torch.qscheme)):
        return _torch_constant(value, imports)
    if isinstance(value, type) or callable(value):
        return function_reference(value, imports, where)
    raise FxExportError(f"{where}: cannot write a value of type {type(value).__qualname__} as code ({value!r:.60})")


# callables and classes ---------------------------------------------------------------------
def function_reference(target: Callable[..., Any], imports: ImportTable, where: str) -> str:
    """The expression that names `target` in generated code; `where` names the node for errors.

    torch and the standard library by name; a library's output class (namedtuple, dataclass)
    as the library's class with a stand-in; a library function copied from its source; only
    what cannot be copied is imported by qualified name (and module.py then needs its library).
    """
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
    simple = simple_reference(target, imports)
    if simple is not None:
        return simple
    if is_output_class(target):
        return output_class_reference(target, imports, lambda value: _default_code(value, imports))  # type: ignore[arg-type]
    inlined, why = _inline_function(target, imports)
    if inlined is not None:
        return inlined
    code = imported_reference(target, imports)
    if code is not None:
        imports.explain(code.split(".")[0], why)
        return code
    raise FxExportError(
        f"{where} calls {target!r}, which has no importable qualified name; "
        "define it at module level (and torch.fx.wrap it), or keep the module that calls it as a leaf"
        + (f" (it cannot be copied into module.py: {why})" if why else "")
    )


def _default_code(value: Any, imports: ImportTable) -> str | None:
    """A stand-in's field default: plain data other than a (mutable) list or dict, else None."""
    return literal(value, imports, _no_name, "a field default") if is_data(value) and not isinstance(value, (list, dict)) else None


# copied library functions (inline.py plans and rewrites them) ------------------------------
def value_code(value: Any, imports: ImportTable, hint: str, source: Source | None = None) -> str:
    """Code for a global value (or a default) a copied function reads; `hint` is its name there."""
    if isinstance(value, types.ModuleType):
        return module_code(value, imports)
    if isinstance(value, logging.Logger):
        return imports.define(value, hint, lambda n: f"{n} = {logger_code(value, imports.module('logging'))}")
    if is_data(value):
        code = literal(value, imports, _no_name, hint)
        return imports.define(value, hint, lambda n: f"{n} = {code}") if is_mutable_data(value) else code
    try:
        return function_reference(value, imports, hint)
    except FxExportError:
        dotted = global_import(source, hint) if source is not None else None
        if dotted is None:
            raise
        return named_reference(dotted, value, imports)  # e.g. types.FunctionType, named only by how it was imported


def function_code(fn: types.FunctionType, imports: ImportTable, name: str) -> str:
    """`fn`'s copy under `name`, binding what it needs in module.py (plan it first: see inline.check_function)."""
    source = load_source(fn)
    codes = {g: value_code(v, imports, g, source) for g, v in source.globals.items()}
    return emit(source, name, codes, lambda v: value_code(v, imports, "default"))


def _inline_function(fn: object, imports: ImportTable) -> tuple[str | None, str]:
    """(the name module.py defines `fn` under, "") or (None, why it cannot be copied)."""
    if not is_plain_function(fn):
        return None, ""
    assert isinstance(fn, types.FunctionType)
    try:
        check_function(fn)
    except NotInlinable as error:
        return None, str(error)
    return imports.define(fn, fn.__name__, lambda name: function_code(fn, imports, name)), ""
