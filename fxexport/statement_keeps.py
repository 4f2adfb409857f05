"""Whether one statement of a module's forward may keep a value on the module.

returned_values.py takes the last value a statement computed for what it binds. A statement that
hands the module to code it does not read may store a later value on it (`position_bias =
attend(self, x)`, the function keeping `module.scores = x * 2` last), which would pass for the
bound one. A statement keeps nothing where every use of `self` in it is one of: a child's call
(`self.bias(x)`, `self.layer[0](h)`: an attribute the class does not define, called, indexed by
constants only), a method of its class that keeps nothing (kept_values.method_may_keep: T5's
`self.compute_bias(...)`), class data or an instance attribute read (`self.n_heads`) where no call
but torch's, math's and reading builtins is given it; and it names no local bound to part of
`self` (`cache = self.cache`), calls no function its forward defines and uses no `super()`. Hooks
are not seen.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable

import torch

from .calls import model_classes, resolve_class
from .kept_values import holding, method_may_keep

_READERS = frozenset({"len", "int", "float", "bool", "abs", "min", "max", "tuple", "list", "range", "isinstance", "getattr", "hasattr", "round"})
_LIBRARIES = ("torch", "math", "F", "nn")  # modules whose functions keep nothing given a number or a tensor


def keeps_nothing(
    statement: ast.stmt, cls: type | str, function: ast.FunctionDef | ast.AsyncFunctionDef, is_child: Callable[[str], bool]
) -> bool:
    """True where the statement (of `function`, the forward of `cls`) keeps nothing on the module (the module
    docstring); `is_child`: whether a path from the module (`layer.0`) is a child module of it, not a callable
    it holds (`self.attend = partial(keep, self)`)."""
    resolved = resolve_class(cls)
    if resolved is None:
        return False
    parents = {child: node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
    aliases = holding(function, "self") - {"self"}
    local_functions = {n.name for n in ast.walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not function}
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and (node.id in aliases or node.id == "super"):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in local_functions:
            return False
        if isinstance(node, ast.Name) and node.id == "self" and not _use_keeps_nothing(node, parents, resolved, is_child):
            return False
    return True


def _use_keeps_nothing(name: ast.Name, parents: dict[ast.AST, ast.AST], cls: type, is_child: Callable[[str], bool]) -> bool:
    attribute = parents.get(name)
    if not isinstance(attribute, ast.Attribute) or attribute.value is not name:
        return False  # `self` itself: passed, bound, put in a container
    chain: ast.expr = attribute
    while isinstance(parent := parents.get(chain), (ast.Attribute, ast.Subscript)) and parent.value is chain:
        chain = parent
    called = isinstance(parent, ast.Call) and parent.func is chain
    member = _class_member(cls, attribute.attr)
    if member is not None:
        if inspect.isfunction(member) or isinstance(member, (staticmethod, classmethod)):
            return called and chain is attribute and not method_may_keep(cls, attribute.attr)
        return not called and not inspect.isdatadescriptor(member) and _read_only_by_libraries(chain, parents)
    if called:  # a child's call: `self.bias(x)`, `self.layer[0](h)`
        path = _constant_path(chain, attribute)
        return path is not None and is_child(path)
    return _read_only_by_libraries(chain, parents)


def _class_member(cls: type, name: str) -> object | None:
    return next((vars(klass)[name] for klass in model_classes(cls) if name in vars(klass)), None)


def _constant_path(chain: ast.expr, attribute: ast.Attribute) -> str | None:
    """`x.0.q` for `self.x[0]["q"]`: the attribute indexed by constants only; else None."""
    parts = []
    node = chain
    while node is not attribute:
        if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Constant):
            return None
        parts.append(str(node.slice.value))
        node = node.value
    return ".".join([attribute.attr, *reversed(parts)])


def _read_only_by_libraries(chain: ast.expr, parents: dict[ast.AST, ast.AST]) -> bool:
    """True where every call the value read is given to (as an argument, at any depth) is torch's, math's or a
    reading builtin: `torch.zeros((1, self.n_heads, n))`, not `fill(self.cache, x)`."""
    node: ast.AST = chain
    while (parent := parents.get(node)) is not None:
        if isinstance(parent, ast.Call) and parent.func is not node and not _library_call(parent.func):
            return False
        node = parent
    return True


def _library_call(func: ast.expr) -> bool:
    """A function of torch's, math's, a reading builtin, or a tensor's method that writes nothing (`x.view(...)`)."""
    if isinstance(func, ast.Name):
        return func.id in _READERS
    if isinstance(func, ast.Attribute) and hasattr(torch.Tensor, func.attr) and not func.attr.endswith("_"):
        return True
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in _LIBRARIES
