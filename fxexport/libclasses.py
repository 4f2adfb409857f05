"""Library layers that torch.fx cannot trace (data-dependent Python in forward): their methods copied.

A called leaf module whose class comes from a library is first traced into a generated
class. When tracing fails (an `if` on a tensor, a loop over a shape), module.py gets a copy
of the class instead: every method but `__init__`, copied like library functions
(inline.py), on the same torch base class, with an `__init__` that sets up nn.Module and
sets the members it is given by keyword. The exporter builds each instance in one call
given its layers and its settings (plain instance attributes) where each is one expression
(`Clamp(limit=0.5)`), else as it builds a plain container: its layers, its tensors, and its
settings one by one. Either way no library constructor has to run at load time.
"""

from __future__ import annotations

import functools
import textwrap
import types
from typing import Any

import torch
from torch import nn

from .imports import ImportTable
from .inline import NotInlinable, check_function, check_value, is_data, is_method
from .literals import function_code, value_code
from .names import is_plain_identifier
from .rebuild import class_reference, is_torch_module

_SKIPPED = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__", "__init__",
            "__firstlineno__", "__static_attributes__", "__orig_bases__", "__parameters__", "_abc_impl",
            "__abstractmethods__", "__slots__", "__type_params__"}  # fmt: skip
# Bookkeeping every nn.Module instance has: not settings.
_INTERNALS = frozenset(vars(nn.Module())) | {"training"}
_DESCRIPTORS = {property: "property", staticmethod: "staticmethod", classmethod: "classmethod"}


def _is_torch_class(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "torch"


def library_chain(cls: type) -> tuple[list[type], type]:
    """The library classes from `cls` down to its first torch base, and that base."""
    chain: list[type] = []
    while not _is_torch_class(cls):
        if len(cls.__bases__) != 1 or cls.__bases__[0] is object:
            raise NotInlinable(f"{cls.__qualname__} has {len(cls.__bases__)} base classes")
        chain.append(cls)
        cls = cls.__bases__[0]
    return chain, cls


def _member(cls: type, key: str, value: Any) -> tuple[str | None, types.FunctionType | None, Any]:
    """(decorator, method, data) for one entry of a class body."""
    if isinstance(value, property):
        if value.fset is not None or value.fdel is not None:
            raise NotInlinable(f"{cls.__qualname__}.{key} is a property with a setter")
        value, decorator = value.fget, "property"
    elif type(value) in _DESCRIPTORS:
        value, decorator = value.__func__, _DESCRIPTORS[type(value)]
    else:
        decorator = None
    if isinstance(value, types.FunctionType):
        if not is_method(value, cls, key):
            raise NotInlinable(f"{cls.__qualname__}.{key} is not a method defined in the class")
        return decorator, value, None
    if decorator is None and is_data(value):
        return None, None, value
    raise NotInlinable(f"{cls.__qualname__}.{key} is a {type(value).__qualname__}")


def _members(cls: type) -> list[tuple[str, str | None, types.FunctionType | None, Any]]:
    return [(key, *_member(cls, key, value)) for key, value in vars(cls).items() if key not in _SKIPPED]


def check_class(cls: type) -> None:
    """Raise NotInlinable unless every library class in `cls`'s chain can be copied."""
    chain, _ = library_chain(cls)
    for klass in chain:
        for key, _decorator, method, _data in _members(klass):
            try:
                if method is not None:
                    check_function(method)
            except NotInlinable as error:
                raise NotInlinable(f"{klass.__qualname__}.{key}: {error}") from None


def _class_code(cls: type, name: str, base: str, first: bool, imports: ImportTable) -> str:
    doc = (f'"""Copied from {cls.__module__}.{cls.__qualname__}: its methods; the layers, tensors and settings '
           f'of each instance are given to it, or set up, by the code that creates it."""')  # fmt: skip
    body = [doc]
    if first:  # members by keyword (`self` too: HF's `self.self`), in the order given, the order the instance holds them
        body.append(f"def __init__(self, /, **members):\n    {imports.use('nn')}.Module.__init__(self)\n"
                    "    for name, value in members.items():\n        setattr(self, name, value)")  # fmt: skip
    for key, decorator, method, data in _members(cls):
        if method is None:
            body.append(f"{key} = {value_code(data, imports, key)}")
        else:
            body.append((f"@{decorator}\n" if decorator else "") + function_code(method, imports, key))
    return f"class {name}({base}):\n" + textwrap.indent("\n\n".join(body), "    ")


def copied_class(cls: type, imports: ImportTable) -> str:
    """The name module.py gives its copy of `cls` (check_class first)."""
    chain, torch_base = library_chain(cls)
    base = class_reference(torch_base, imports)
    for index, klass in enumerate(reversed(chain)):
        base = imports.define(klass, klass.__name__, functools.partial(_class_code, klass, base=base, first=index == 0, imports=imports))
    return base


def setting_lines(module: nn.Module, target: str, imports: ImportTable) -> list[str]:
    """`target.name = value` for the instance's own attributes that are not layers or tensors."""
    lines = []
    for key, value in vars(module).items():
        if key in _INTERNALS or isinstance(value, (torch.Tensor, nn.Module)):
            continue
        check_value(value, key)
        code = value_code(value, imports, key)
        lines.append(f"{target}.{key} = {code}" if is_plain_identifier(key) else f"setattr({target}, {key!r}, {code})")
    return lines


def can_copy(module: nn.Module) -> str:
    """Why the module cannot be copied, or "" when it can."""
    if is_torch_module(module):
        return "it is a torch module"
    if any(len(getattr(module, hooks)) for hooks in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks")):
        return "it has hooks"
    try:
        check_class(type(module))
        for key, value in vars(module).items():
            if key not in _INTERNALS and not isinstance(value, (torch.Tensor, nn.Module)):
                check_value(value, f"self.{key}")
    except NotInlinable as error:
        return str(error)
    return ""
