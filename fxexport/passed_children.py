"""Container subclasses built from the children their callers pass, as nn.Sequential and nn.ModuleDict are.

torchvision's `_DenseBlock` is a ModuleDict subclass with a forward of its own; its four instances
hold 6, 12, 24 and 16 layers. Their forwards are one code (a loop over `self.values()`), but each
`__init__` lists other children, so each would be a class of its own. Where the instances of one
source Sequential or ModuleDict subclass run the same forward and build nothing but children, the
class keeps no `__init__` and each caller passes the children, as the container's own constructor
takes them: `DenseBlock({"layer1": DenseLayer(64), "layer2": DenseLayer(96)})`.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from .code_slots import literal_slots, masked
from .ir import ClassIR
from .names import quote

_CONTAINER_BASES = frozenset({"Sequential", "ModuleDict"})
_NOT_CHILDREN = ("nn.Parameter", "torch.", "Parameter")  # calls that build tensors


def children_passed_in(level: list[ClassIR], known: dict[str, tuple[str, ...]]) -> tuple[list[ClassIR], dict[str, str]]:
    """The classes, those whose callers now pass their children without `__init__` lines, and for each
    of those the arguments of its constructor call (`{"layer1": DenseLayer(64)}`)."""
    groups: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in level:
        if cls.base in _CONTAINER_BASES and not (cls.is_root or cls.is_sequential or cls.parent):
            groups.setdefault((*cls.source, cls.base, cls.forward_params, cls.forward_lines), []).append(cls)
    arguments: dict[str, str] = {}
    for group in groups.values():
        children = [_children(cls) for cls in group]
        templates = {masked(cls.init_lines, literal_slots(cls.init_lines, known)) for cls in group}
        if len(group) < 2 or len(templates) < 2 or any(c is None for c in children):
            continue  # one instance, or instances a class with literal parameters serves
        for cls, items in zip(group, children):
            assert items is not None
            arguments[cls.name] = _arguments(cls.base, items)
    out = [replace(c, init_lines=(), init_params=(), takes_children=True) if c.name in arguments else c for c in level]
    return out, arguments


def _children(cls: ClassIR) -> list[tuple[str, str]] | None:
    """(name, constructor code) of each child `__init__` builds, when it builds nothing else."""
    out = []
    for line in cls.init_lines:
        try:
            statement = ast.parse(line).body[0]
        except (SyntaxError, IndexError):
            return None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _on_self(statement.targets[0]):
            target = statement.targets[0]
            assert isinstance(target, ast.Attribute)
            name, value = target.attr, statement.value
        elif isinstance(statement, ast.Expr) and _adds_module(statement.value):
            call = statement.value
            assert isinstance(call, ast.Call)
            name, value = call.args[0].value, call.args[1]  # type: ignore[attr-defined]
        else:
            return None
        if not isinstance(value, ast.Call) or ast.unparse(value.func).startswith(_NOT_CHILDREN):
            return None  # a tensor or a plain attribute, not a child
        out.append((name, ast.get_source_segment(line, value) or ""))
    return out if out and all(code for _, code in out) else None


def _on_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _adds_module(node: ast.expr) -> bool:
    """`self.add_module("name", Child(...))`."""
    return (
        isinstance(node, ast.Call)
        and _on_self(node.func)
        and node.func.attr == "add_module"  # type: ignore[attr-defined]
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _arguments(base: str, children: list[tuple[str, str]]) -> str:
    """A Sequential's children in order; a ModuleDict's as one dict, by name."""
    if base == "Sequential":
        return ", ".join(code for _, code in children)
    return "{" + ", ".join(f"{quote(name)}: {code}" for name, code in children) + "}"
