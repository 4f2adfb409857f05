"""Container subclasses built from the children their callers pass, as nn.Sequential and nn.ModuleDict are.

torchvision's `_DenseBlock` is a ModuleDict subclass with a forward of its own; its four instances
hold 6, 12, 24 and 16 layers. Their forwards are one code (a loop over `self.values()`), but each
`__init__` lists other children, so each would be a class of its own. Where the instances of one
source Sequential or ModuleDict subclass run the same forward and build nothing but children, the
class keeps no `__init__` and each caller passes the children, as the container's own constructor
takes them: `DenseBlock({"layer1": DenseLayer(64), "layer2": DenseLayer(96)})`.

timm's `RegStage` is a plain module that names its blocks `b1`, `b2`, ... and chains them
(`for block in self.children(): x = block(x)`); its stages hold 1 to 7 blocks. Where the
instances of one source class build nothing but such numbered children and chain them in order,
the class registers the blocks its callers pass under those names and runs the loop:
`RegStage(Bottleneck(56, 152, stride=2), Bottleneck(152, 152))`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from .code_slots import literal_slots, masked
from .ir import ClassIR
from .names import quote
from .spelled_calls import added_module, node_text, self_attribute, without_defaults

_CONTAINER_BASES = frozenset({"Sequential", "ModuleDict"})
_NUMBERED_CHILD = re.compile(r"self\.([A-Za-z_]+?)([0-9]+) = ([A-Za-z_][\w.]*\(.*\))")
_BLOCKS = "blocks"
_NOT_CHILDREN = ("nn.Parameter", "torch.", "Parameter")  # calls that build tensors


def children_passed_in(level: list[ClassIR], known: dict[str, tuple[str, ...]]) -> tuple[list[ClassIR], dict[str, str]]:
    """The classes, those whose callers now pass their children without `__init__` lines, and for each
    of those the arguments of its constructor call (`{"layer1": DenseLayer(64)}`)."""
    groups: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in level:
        if cls.base in _CONTAINER_BASES and not (cls.is_root or cls.parent):
            groups.setdefault((*cls.source, cls.base, cls.forward_params, cls.forward_lines), []).append(cls)
    arguments: dict[str, str] = {}
    for group in groups.values():
        children = [_children(tuple(without_defaults(line, known) for line in cls.init_lines)) for cls in group]
        templates = {masked(cls.init_lines, literal_slots(cls.init_lines, known)) for cls in group}
        if len(group) < 2 or len(templates) < 2 or any(c is None for c in children):
            continue  # one instance, or instances a class with literal parameters serves
        for cls, items in zip(group, children):
            assert items is not None
            arguments[cls.name] = _arguments(cls.base, items)
    out = [replace(c, init_lines=(), init_params=(), takes_children=True) if c.name in arguments else c for c in level]
    return out, arguments


def _children(init_lines: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """(name, constructor code) of each child `__init__` builds, when it builds nothing else."""
    out = []
    for line in init_lines:
        try:
            statement = ast.parse(line).body[0]
        except (SyntaxError, IndexError):
            return None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _on_self(statement.targets[0]):
            target = statement.targets[0]
            assert isinstance(target, ast.Attribute)
            name, value = target.attr, statement.value
        elif isinstance(statement, ast.Expr) and (added := added_module(statement.value)) is not None:
            name, value = added
        else:
            return None
        if not isinstance(value, ast.Call) or ast.unparse(value.func).startswith(_NOT_CHILDREN):
            return None  # a tensor or a plain attribute, not a child
        out.append((name, node_text(line, value)))
    return out if out and all(code for _, code in out) else None


def _on_self(node: ast.expr) -> bool:
    return self_attribute(node) is not None


def _arguments(base: str, children: list[tuple[str, str]]) -> str:
    """A Sequential's children in order; a ModuleDict's as one dict, by name."""
    if base == "Sequential":
        return ", ".join(code for _, code in children)
    return "{" + ", ".join(f"{quote(name)}: {code}" for name, code in children) + "}"


def chained_children_passed_in(level: list[ClassIR], known: dict[str, tuple[str, ...]]) -> tuple[list[ClassIR], dict[str, str]]:
    """The classes, those of a source class whose instances chain numbered children (`b1`, `b2`, ...)
    now registering the children their callers pass, and for each of those its constructor's arguments."""
    groups: dict[tuple[object, ...], list[tuple[ClassIR, tuple[str, int, list[str]]]]] = {}
    for cls in level:
        chain = None if cls.is_root or cls.is_sequential or cls.parent or cls.base != "Module" else _numbered_chain(cls, known)
        if chain is not None:
            groups.setdefault((*cls.source, chain[0], chain[1], cls.forward_params), []).append((cls, chain))
    arguments: dict[str, str] = {}
    replaced: dict[str, ClassIR] = {}
    for group in groups.values():
        if len({len(codes) for _, (_, _, codes) in group}) < 2:
            continue  # one number of children: a class with literal parameters serves
        for cls, (prefix, start, codes) in group:
            arguments[cls.name] = ", ".join(codes)
            replaced[cls.name] = _registering(cls, prefix, start)
    return [replaced.get(c.name, c) for c in level], arguments


def _numbered_chain(cls: ClassIR, known: dict[str, tuple[str, ...]]) -> tuple[str, int, list[str]] | None:
    """(name prefix, first number, constructor code of each child) where `__init__` builds only children
    named prefix + consecutive numbers and the forward calls them one after another on its one input."""
    children = [_NUMBERED_CHILD.fullmatch(without_defaults(line, known)) for line in cls.init_lines]
    if not children or len(cls.forward_params) != 1 or any(c is None or c[2].startswith("0") for c in children):
        return None
    prefix, start = children[0][1], int(children[0][2])  # type: ignore[index]
    names = [f"{prefix}{start + k}" for k in range(len(children))]
    if [c[1] + c[2] for c in children] != names:  # type: ignore[index]
        return None
    return (prefix, start, [c[3] for c in children]) if _called_in_order(cls.forward_lines, cls.forward_params[0]) == names else None  # type: ignore[index]


def _called_in_order(lines: tuple[str, ...], value: str) -> list[str] | None:
    """The children of self the forward calls one after another on its input `value` (`x = self.b1(x)`,
    `return self.b3(self.b2(x))`), in order; None for any other forward."""
    try:
        statements = ast.parse("\n".join(line for line in lines if not line.lstrip().startswith("#"))).body
    except SyntaxError:
        return None
    called: list[str] = []
    for k, statement in enumerate(statements):
        last = k == len(statements) - 1
        if last and isinstance(statement, ast.Return) and statement.value is not None:
            expression = statement.value
        elif not last and isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            expression = statement.value
        else:
            return None
        names = _nested_calls(expression, value)
        if names is None:
            return None
        called += names
        value = statement.targets[0].id if isinstance(statement, ast.Assign) else value  # type: ignore[attr-defined]
    return called


def _nested_calls(expression: ast.expr, value: str) -> list[str] | None:
    """`self.b2(self.b1(x))` on `x`: ["b1", "b2"]; None for anything else."""
    names: list[str] = []
    while isinstance(expression, ast.Call) and len(expression.args) == 1 and not expression.keywords and _on_self(expression.func):
        names.insert(0, expression.func.attr)  # type: ignore[attr-defined]
        expression = expression.args[0]
    return names if names and isinstance(expression, ast.Name) and expression.id == value else None


def _registering(cls: ClassIR, prefix: str, start: int) -> ClassIR:
    """`cls` registering the blocks passed in under numbered names and chaining them, as timm's RegStage does."""
    value = cls.forward_params[0]
    numbered = "enumerate(" + _BLOCKS + (f", {start})" if start else ")")
    init = (f"for i, block in {numbered}:", f"    self.add_module(f{quote(prefix + '{i}')}, block)")
    block = "block" if value != "block" else "child"  # the forward's input may be named `block`
    forward = (f"for {block} in self.children():", f"    {value} = {block}({value})", f"return {value}")
    return replace(cls, init_params=(f"*{_BLOCKS}",), init_lines=init, forward_lines=forward)
