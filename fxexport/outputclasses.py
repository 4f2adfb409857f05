"""Output classes from libraries (namedtuples, dataclasses, dict-like dataclasses such as ModelOutput).

module.py imports the library's own class when it can, and otherwise defines a stand-in with
the same name, fields and field order, so a folder whose library is missing still loads:

    try:
        from torchvision.models.googlenet import GoogLeNetOutputs
    except Exception:
        # torchvision.models.googlenet cannot be imported: a stand-in with the same fields, in order
        GoogLeNetOutputs = collections.namedtuple("GoogLeNetOutputs", ("logits", "aux_logits2", "aux_logits1"))

A dict-like dataclass (transformers' `ModelOutput`) gets a stand-in on a small base class
that keeps the fields that are not None as its items, indexes by key or position, and is a
pytree node like the original.

A leaf of the family that spells objects as code (below inline.py and literals.py): field
defaults are written by the `default_code` its caller passes in (literals.py's `literal()`).
"""

from __future__ import annotations

import dataclasses
import importlib
import textwrap
from collections.abc import Callable
from typing import Any

import torch.utils._pytree as pytree

from .imports import ImportTable
from .names import is_plain_identifier

_MAPPING_BASE = object()  # the key of the one OutputMapping definition

DefaultCode = Callable[[Any], "str | None"]  # a field default's code, or None when it cannot be written

MAPPING_BASE_CODE = '''
class {name}({ordered_dict}):
    """Base of the stand-ins for dict-like output dataclasses (such as transformers' ModelOutput):
    the fields that are not None are its items, in order, by key, attribute or position."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        {pytree}.register_pytree_node(
            cls, lambda output: (list(output.values()), list(output.keys())), lambda values, keys: cls(**dict(zip(keys, values)))
        )

    def __post_init__(self):
        for field in {dataclasses}.fields(self):
            if getattr(self, field.name) is not None:
                self[field.name] = getattr(self, field.name)

    def __getitem__(self, key):
        return super().__getitem__(key) if isinstance(key, str) else self.to_tuple()[key]

    def to_tuple(self):
        return tuple(self.values())
'''


def is_namedtuple_class(cls: object) -> bool:
    """True for a namedtuple class (a tuple subclass with `_fields`)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def is_output_class(cls: object) -> bool:
    """True for output containers rebuilt by class: namedtuples and dataclasses."""
    return is_namedtuple_class(cls) or (isinstance(cls, type) and dataclasses.is_dataclass(cls))


def is_mapping_dataclass(cls: type) -> bool:
    """True for a dataclass that is also a dict (like Hugging Face ModelOutput)."""
    return dataclasses.is_dataclass(cls) and issubclass(cls, dict)


def field_names(cls: type) -> tuple[str, ...]:
    """The field names of a namedtuple or dataclass, in order."""
    if is_namedtuple_class(cls):
        return tuple(vars(cls)["_fields"])
    return tuple(f.name for f in dataclasses.fields(cls))


def _import_line(cls: type, name: str) -> str | None:
    """`from module import Class`, when that names this very class at export time."""
    module, qualname = cls.__module__, cls.__qualname__
    if module == "__main__" or not is_plain_identifier(qualname):
        return None
    try:
        if getattr(importlib.import_module(module), qualname) is not cls:
            return None
    except (ImportError, AttributeError):
        return None
    return f"from {module} import {qualname}" + ("" if name == qualname else f" as {name}")


def _namedtuple_stand_in(cls: type, name: str, imports: ImportTable, default_code: DefaultCode) -> str:
    defaults = [default_code(v) for v in vars(cls)["_field_defaults"].values()]
    codes = [d for d in defaults if d is not None]
    extra = f", defaults=({', '.join(codes)},)" if codes and len(codes) == len(defaults) else ""
    return f"{name} = {imports.module('collections')}.namedtuple({cls.__name__!r}, {field_names(cls)!r}{extra})"


def _field_line(field: dataclasses.Field, default_code: DefaultCode) -> str:
    default = None if field.default is dataclasses.MISSING else default_code(field.default)
    return f"{field.name}: object" + ("" if default is None else f" = {default}")


def _dataclass_stand_in(cls: type, name: str, imports: ImportTable, default_code: DefaultCode) -> str:
    module = imports.module("dataclasses")
    base = ""
    if is_mapping_dataclass(cls):
        base = f"({mapping_base(imports)})"
    lines = [_field_line(f, default_code) for f in dataclasses.fields(cls)]
    if any("=" in a and "=" not in b for a, b in zip(lines, lines[1:])):
        lines = [line.split(" = ")[0] + " = None" for line in lines]  # a required field after a defaulted one
    doc = f'"""Stand-in for {cls.__module__}.{cls.__qualname__}: the same fields, in order."""'
    body = textwrap.indent("\n".join([doc, "", *lines]), "    ")
    code = f"@{module}.dataclass\nclass {name}{base}:\n{body}"
    if cls in pytree.SUPPORTED_NODES and not base:  # a pytree node like the original (OutputMapping registers its own)
        code += f"\n\n\n{imports.module('torch.utils._pytree')}.register_dataclass({name})"
    return code


def mapping_base(imports: ImportTable) -> str:
    """The code of the dict-like base class the stand-in output classes share."""
    def build(name: str) -> str:
        return MAPPING_BASE_CODE.format(
            name=name,
            ordered_dict=f"{imports.module('collections')}.OrderedDict",
            pytree=imports.module("torch.utils._pytree"),
            dataclasses=imports.module("dataclasses"),
        ).strip()

    return imports.define(_MAPPING_BASE, "OutputMapping", build)


def _definition(cls: type, name: str, imports: ImportTable, default_code: DefaultCode) -> str:
    if is_namedtuple_class(cls):
        stand_in = _namedtuple_stand_in(cls, name, imports, default_code)
    else:
        stand_in = _dataclass_stand_in(cls, name, imports, default_code)
    origin = _import_line(cls, name)
    if origin is None:
        return stand_in
    return (
        f"try:\n    {origin}\nexcept Exception:\n"
        f"    # {cls.__module__} cannot be imported: a stand-in with the same fields, in order\n" + textwrap.indent(stand_in, "    ")
    )


def output_class_reference(cls: type, imports: ImportTable, default_code: DefaultCode) -> str:
    """The name module.py binds `cls` to: the library's class, or its stand-in (its field defaults by `default_code`)."""
    return imports.define(cls, cls.__name__, lambda name: _definition(cls, name, imports, default_code))
