"""The import table: each import tied to the name it binds, emitted sorted and grouped.

It also holds the module-level definitions that stand in for library code (inlined
functions, output classes), since those bind names in the same module namespace.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import FxExportError
from .names import Namespace, is_plain_identifier

if TYPE_CHECKING:
    from torch import nn

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

# Names every generated module may use; reserved up front so nothing from the model takes them.
FIXED = {
    "torch": ("torch", None),
    "nn": ("torch", "nn"),
    "F": ("torch.nn.functional", None),
    "math": ("math", None),
    "operator": ("operator", None),
    "gc": ("gc", None),
    "json": ("json", None),
    "struct": ("struct", None),
    "threading": ("threading", None),
    "Path": ("pathlib", "Path"),
    "Mapping": ("collections.abc", "Mapping"),
    "contextmanager": ("contextlib", "contextmanager"),
}


@dataclass(frozen=True, order=True)
class Import:
    """One import statement: `import module as alias` or `from module import attr as alias`."""

    module: str
    attr: str | None
    alias: str
    note: str = field(default="", compare=False)  # why a module is imported for its side effect, as a comment

    @property
    def code(self) -> str:
        """The import statement as code; `as` only when the alias differs; the note as a comment."""
        comment = f"  # {self.note}" if self.note else ""
        if self.attr is None:
            return (f"import {self.module}" if self.alias == self.module else f"import {self.module} as {self.alias}") + comment
        suffix = "" if self.alias == self.attr else f" as {self.alias}"
        return f"from {self.module} import {self.attr}{suffix}{comment}"

    @property
    def group(self) -> int:
        """Sort group: 0 for the standard library, 1 for torch, 2 for anything else."""
        top = self.module.split(".")[0]
        return 0 if is_stdlib(top) else 1 if top == "torch" else 2


@dataclass(frozen=True)
class Definition:
    """Module-level code that binds `name`; `obj` is what the name means at export time."""

    name: str
    code: str
    obj: object


def is_stdlib(module: str) -> bool:
    """True when `module` belongs to the standard library."""
    return module.split(".")[0] in sys.stdlib_module_names


def check_dotted(name: str, what: str) -> str:
    """`name` if it is a dotted name of plain identifiers; FxExportError naming `what` otherwise."""
    if not _DOTTED.match(name) or not all(is_plain_identifier(p) for p in name.split(".")):
        raise FxExportError(f"{what} {name!r} is not an importable dotted name")
    return name


class ImportTable:
    """Allocates import aliases from the module namespace and remembers what each binds."""

    def __init__(self, namespace: Namespace) -> None:
        self._namespace = namespace
        self._imports: dict[tuple[str, str | None], Import] = {}
        self._objects: dict[str, object] = {}
        self._definitions: dict[int, Definition] = {}
        self._defining: dict[int, tuple[str, object]] = {}
        self._reasons: dict[str, str] = {}
        self._wrapped: set[int] = set()
        self.references: dict[object, str] = {}  # callable -> the code that names it (see literals.function_reference)
        self.built: dict[tuple[str, bool], nn.Module] = {}  # (constructor code, unpacked) -> the module it builds (see rebuild._build)
        # the last built module, its source layer, and the built one as loading leaves it (see rebuild.py)
        self.settled: tuple[nn.Module, nn.Module, nn.Module] | None = None
        self._bindings: dict[str, object] | None = None
        for alias in FIXED:
            namespace.reserve(alias)

    def use(self, alias: str) -> str:
        """Use one of the fixed names (`torch`, `nn`, `F`, `math`, `operator`, `gc`, `json`, `struct`, `threading`, `Path`, `Mapping`, `contextmanager`)."""
        module, attr = FIXED[alias]
        self._add(Import(module, attr, alias))
        return alias

    def module(self, module: str, note: str = "") -> str:
        """`import a.b.c`, giving the expression `a.b.c`; the top package must be free. `note` says
        why, for a module imported for what importing it does (it registers operators)."""
        check_dotted(module, "module")
        top = module.split(".")[0]
        if top in FIXED and FIXED[top] == (top, None):
            self.use(top)
        self._add(Import(module, None, module, note))
        return module

    def module_as(self, module: str, hint: str) -> str:
        """`import a.b.c as hint` (another name when `hint` is taken); returns the bound name."""
        check_dotted(module, "module")
        found = next((i for i in self._imports.values() if i.module == module and i.attr is None and i.alias != module), None)
        if found is None:
            found = Import(module, None, self._namespace.create(hint))
            self._add(found)
        return found.alias

    def symbol(self, module: str, attr: str) -> str:
        """`from module import attr` (aliased when the name is taken); returns the bound name."""
        check_dotted(module, "module")
        key = (module, attr)
        if key not in self._imports:
            self._add(Import(module, attr, self._namespace.create(attr)))
        return self._imports[key].alias

    def define(self, obj: object, hint: str, build: Callable[[str], str]) -> str:
        """Bind `obj` to module-level code that `build(name)` writes; the same object is defined once.

        The name is taken before `build` runs, so code that refers to itself (recursion) or to
        definitions made while building it gets the final names.
        """
        key = id(obj)
        if key in self._definitions:
            return self._definitions[key].name
        if key in self._defining:
            return self._defining[key][0]
        name = self._namespace.create(hint)
        self._defining[key] = (name, obj)
        try:
            code = build(name)
        finally:
            del self._defining[key]
        self._definitions[key] = Definition(name, code, obj)
        self._bindings = None
        return name

    def explain(self, alias: str, why: str) -> None:
        """Note why a name is imported rather than copied into module.py (shown in the warning)."""
        if why:
            self._reasons.setdefault(alias, why)

    def reason(self, item: Import) -> str:
        """Why `item` is imported (for the warning), or ""."""
        return self._reasons.get(item.alias, "")

    def wrap(self, obj: object) -> None:
        """A copied function a graph calls stays a leaf for torch.fx: `torch.fx.wrap(name)` follows its definition."""
        if id(obj) in self._definitions and id(obj) not in self._wrapped:
            self._wrapped.add(id(obj))
            self.module("torch.fx")

    def definitions(self) -> tuple[str, ...]:
        """Definition code in the order the definitions were completed (dependencies first)."""
        return tuple(
            d.code + (f"\n\n\ntorch.fx.wrap({d.name!r})" if key in self._wrapped else "") for key, d in self._definitions.items()
        )

    def _add(self, item: Import) -> None:
        if (item.module, item.attr) not in self._imports:
            self._imports[(item.module, item.attr)] = item
            self._bindings = None

    def lines(self) -> tuple[str, ...]:
        """The import block: sorted, groups separated by a blank line."""
        ordered = sorted(self._imports.values(), key=lambda i: (i.group, i.attr is not None, i.module, i.attr or ""))
        lines: list[str] = []
        for index, item in enumerate(ordered):
            if index and item.group != ordered[index - 1].group:
                lines.append("")
            lines.append(item.code)
        return tuple(lines)

    def external(self) -> tuple[Import, ...]:
        """Imports of modules that are neither the standard library nor torch."""
        return tuple(sorted(i for i in self._imports.values() if i.group == 2))

    def bindings(self) -> dict[str, object]:
        """What each bound name refers to, for evaluating generated code at export time."""
        if self._bindings is not None:
            return dict(self._bindings)
        result: dict[str, object] = {}
        for item in self._imports.values():
            module = importlib.import_module(item.module)
            if item.attr is None and item.alias == item.module:
                result[item.alias.split(".")[0]] = importlib.import_module(item.alias.split(".")[0])
            elif item.attr is None:
                result[item.alias] = module
            else:
                result[item.alias] = getattr(module, item.attr)
        result.update((d.name, d.obj) for d in self._definitions.values())
        self._bindings = result
        return dict(result)
