"""Whether a module's forward may keep a value on the module, where its caller could read it.

A value computed inside a module call and read after it by its caller is either returned (in a
tuple, a dict, a list the caller passed in: IntermediateLayerGetter's features, T5's position bias)
or kept on the module (`self.hidden = h`, read as `self.cached.hidden`). The graph cannot tell them
apart; the source can: a forward that stores nothing reached from `self` (no attribute or item of
it assigned or deleted, no method of it that fills a container or sets a tensor in place, no
`setattr(self, ...)`), nor any method of its class it calls as `self.name(...)`, keeps nothing.
Its call may return every value its caller reads. Where the source cannot be read, it may keep one.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import tokenize
import warnings

from .calls import resolve_class

_FILLS = frozenset({
    "append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear", "remove",
    "register_buffer", "register_parameter", "register_module", "add_module", "__setitem__", "__setattr__",
})  # fmt: skip
_SETTERS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})


@functools.lru_cache(maxsize=1024)
def may_keep_values(cls: type | str) -> bool:
    """True unless `cls.forward`, and every method of `cls` it calls on `self`, keeps nothing on the module."""
    found = resolve_class(cls)
    if found is None:
        return True
    pending, seen = ["forward"], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        function = _method(found, name)
        if function is None:
            return True
        called = _called_methods(function)
        if called is None:
            return True
        pending += [m for m in called if m not in seen and _is_own_method(found, m)]
    return False


def _method(cls: type, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The syntax tree of the method `name` of `cls`, or None where its source cannot be read."""
    method = inspect.getattr_static(cls, name, None)
    method = getattr(method, "__func__", method)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    except (OSError, TypeError, SyntaxError, ValueError, tokenize.TokenError, RecursionError, MemoryError):
        return None
    function = tree.body[0] if tree.body else None
    return function if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _is_own_method(cls: type, name: str) -> bool:
    """True for a method a class of the model defines (not one of torch.nn.Module's, which keep no values)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return not klass.__module__.startswith("torch.nn.") and inspect.isfunction(vars(klass)[name])
    return False


def _called_methods(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The methods `function` calls as `self.name(...)`; None where it stores something reached from `self`."""
    args = function.args.posonlyargs + function.args.args
    if not args:
        return None
    own = args[0].arg
    called: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)) and _root(node) == own:
            return None
        if isinstance(node, ast.Name) and node.id == own and isinstance(node.ctx, (ast.Store, ast.Del)):
            return None  # `self` rebound: what it names is no longer known
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _SETTERS and node.args and _root(node.args[0]) == own:
                return None
            if isinstance(func, ast.Attribute) and func.attr in _SETTERS | {"__dict__"} and node.args and _root(node.args[0]) == own:
                return None  # object.__setattr__(self, ...)
            if isinstance(func, ast.Attribute) and _root(func.value) == own:
                if func.attr in _FILLS or _in_place(func.attr):
                    return None
                if isinstance(func.value, ast.Name):
                    called.add(func.attr)
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and _root(node.value) == own:
            return None
    return called


def _in_place(method: str) -> bool:
    """A tensor method that writes its tensor (`add_`, `copy_`), not a private name (`_helper`)."""
    return method.endswith("_") and not method.startswith("_")


def _root(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from: `self` for `self.a.b[0]`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
