"""torch.nn constructor calls spelled with every numeric default (to compare them) or without (to print).

`nn.Conv2d(64, 64, 3, padding=1)` and `nn.Conv2d(64, 128, 3, stride=2, padding=1)` differ in
which keywords they spell out. With every numeric default written, in signature order, they
differ only in literals, so the classes holding them can be merged (generalize.py); the
merged code then leaves out the keywords that still equal their default.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from collections.abc import Mapping

from torch import nn

from .quantized import NAMESPACES

_LAYER_NAMESPACES = {"nn", *NAMESPACES.values()}


def layer_class(namespace: str, name: str) -> type | None:
    """The torch layer class `<namespace>.<name>` names: `nn.Conv2d`, or a torch.ao one such as `nnq.Conv2d`."""
    if namespace == "nn":
        found = getattr(nn, name, None)
    else:
        module = next((m for m, alias in NAMESPACES.items() if alias == namespace), None)
        found = None if module is None else getattr(importlib.import_module(module), name, None)
    return found if isinstance(found, type) and issubclass(found, nn.Module) else None


@functools.cache
def _numeric_defaults(name: str) -> tuple[tuple[str, str], ...]:
    """(parameter, default as code) for the numeric keyword defaults of the layer `<namespace>.<name>`, in signature order."""
    cls = layer_class(*name.split("."))
    if cls is None:
        return ()
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple((p.name, repr(p.default)) for p in parameters if _numeric(p.default))


def _numeric(value: object) -> bool:
    """A number, or a tuple of ints (a kernel size): a default a literal slot can hold."""
    if isinstance(value, tuple):
        return bool(value) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@functools.cache
def layer_parameters(name: str) -> tuple[str, ...]:
    """The constructor parameter names of the layer `<namespace>.<name>` (`nn.Conv2d`), in order; () for anything else."""
    cls = layer_class(*name.split("."))
    try:
        return tuple(inspect.signature(cls).parameters) if cls is not None else ()
    except (TypeError, ValueError):
        return ()


def layer_defaults(call: ast.Call) -> dict[str, str]:
    """The numeric keyword defaults of the torch.nn layer `call` builds, as code; {} for another call."""
    name = layer_name(call)
    return dict(_numeric_defaults(name)) if name else {}


def layer_name(call: ast.Call) -> str | None:
    """`nn.Conv2d` for a call of a torch layer class through `nn` or a torch.ao namespace alias, else None."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _LAYER_NAMESPACES:
        return f"{func.value.id}.{func.attr}"
    return None


Signatures = Mapping[str, tuple[str, ...]]  # generated class -> its `__init__` parameters as code ("stride=1")


def _spelled(node: ast.expr, line: str, full: bool, known: Signatures) -> str:
    text = node_text(line, node)
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        return text
    args = [_spelled(a, line, full, known) for a in node.args]
    keywords = {k.arg: _spelled(k.value, line, full, known) for k in node.keywords if k.arg}
    name = layer_name(node)
    if name is None and isinstance(node.func, ast.Name) and node.func.id in known:
        order, defaults = _signature_defaults(known[node.func.id])
    else:
        defaults = dict(_numeric_defaults(name)) if name else {}
        order = list(layer_parameters(name)) if name else []
    if full:
        covered = set(order[: len(args)])
        for key, value in defaults.items():
            if key not in keywords and key not in covered:
                keywords[key] = value
    else:
        keywords = {k: v for k, v in keywords.items() if defaults.get(k) != v}
    ordered = sorted(keywords, key=lambda k: order.index(k) if k in order else len(order)) if order else list(keywords)
    func = node_text(line, node.func)
    return f"{func}({', '.join([*args, *(f'{k}={keywords[k]}' for k in ordered)])})"


@functools.cache
def _signature_defaults(params: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """The parameter names of a generated class's `__init__`, in order, and its numeric defaults as code."""
    order, defaults = [], {}
    for param in params:
        name, _, default = param.lstrip("*").partition("=")
        order.append(name)
        try:
            value = ast.literal_eval(default) if default else None
        except (ValueError, SyntaxError):
            continue
        if _numeric(value):
            defaults[name] = default
    return order, defaults


@functools.lru_cache(maxsize=1 << 14)
def parsed_line(line: str) -> ast.Module | None:
    """The line parsed alone (or a whole function's source), or None where it is not whole statements; kept
    per text (repeated blocks repeat their lines): callers read the tree, never change it."""
    try:
        return ast.parse(line)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a null byte
        return None


def _respelled(line: str, full: bool, known: Signatures) -> str:
    tree = parsed_line(line)
    if tree is None:
        return line
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Assign, ast.Expr)):
        return line
    statement = tree.body[0]
    if isinstance(statement, ast.Expr):  # `self.add_module("0", nn.Conv2d(...))`: the child's call
        added = added_module(statement.value)
        value = added[1] if added is not None else None
    else:
        value = statement.value
    if not isinstance(value, ast.Call):
        return line
    return line[: char_offset(line, value.col_offset)] + _spelled(value, line, full, known) + line[char_offset(line, value.end_col_offset) :]


def added_module(node: ast.expr) -> tuple[str, ast.expr] | None:
    """(name, child) of a `self.add_module("name", child)` call, else None."""
    if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "self.add_module" and len(node.args) == 2 and not node.keywords):
        return None
    name = node.args[0]
    return (name.value, node.args[1]) if isinstance(name, ast.Constant) and isinstance(name.value, str) else None


def self_attribute(node: ast.expr) -> str | None:
    """`attn` for `self.attn`, else None."""
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" else None


def named_children(call: ast.Call) -> list[tuple[str, ast.expr]] | None:
    """(name, child) of each child of a Sequential built from named children, as collect writes one
    (`nn.Sequential(collections.OrderedDict(conv=..., act=...))`); None for any other call."""
    return ordered_children(call.args[0]) if len(call.args) == 1 and not call.keywords else None


def ordered_children(node: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """(name, child) of each keyword of an `OrderedDict(conv=..., act=...)` call, else None."""
    if not (isinstance(node, ast.Call) and _is_ordered_dict(node.func) and not node.args):
        return None
    named = [(k.arg, k.value) for k in node.keywords if k.arg]
    return named if len(named) == len(node.keywords) else None


def _is_ordered_dict(func: ast.expr) -> bool:
    """`collections.OrderedDict` (its module under the name module.py imports it as: `collections_1` where a
    child is named `collections`)."""
    return isinstance(func, ast.Attribute) and func.attr == "OrderedDict" and isinstance(func.value, ast.Name) and func.value.id.startswith("collections")


def added_line(line: str) -> tuple[str, ast.expr] | None:
    """(name, child) of a line that is one `self.add_module("name", child)` statement, else None."""
    tree = parsed_line(line)
    statement = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    return added_module(statement.value) if isinstance(statement, ast.Expr) else None


def node_text(line: str, node: ast.expr) -> str:
    """ast.get_source_segment, without splitting the line again for each node of a one-line source."""
    if node.lineno == node.end_lineno == 1:
        return line[char_offset(line, node.col_offset) : char_offset(line, node.end_col_offset)]
    return ast.get_source_segment(line, node) or ""


def char_offset(line: str, byte_offset: int | None) -> int:
    """ast counts columns in UTF-8 bytes; this is the same place in characters."""
    if line.isascii():
        return byte_offset or 0
    return len(line.encode()[: byte_offset or 0].decode(errors="ignore"))


def with_defaults(line: str, known: Signatures | None = None) -> str:
    """`self.c = nn.Conv2d(3, 8, 3)` -> `self.c = nn.Conv2d(3, 8, 3, stride=1, padding=0, dilation=1, groups=1)`;
    a generated class's numeric defaults too (`ConvNormAct(8, 8, 1, stride=1)`), given `known` signatures."""
    return _respelled(line, True, known or {})


def without_defaults(line: str, known: Signatures | None = None) -> str:
    """The reverse: keywords of torch.nn layers (and of `known` classes) that equal their default left out."""
    return _respelled(line, False, known or {})
