"""Library functions a graph calls, written into module.py from their source.

A `torch.fx.wrap`ped helper or any other `call_function` target that lives in a library
(torchvision, timm, the user's own code) is copied as source when it is a plain module-level
function whose globals are torch, the standard library, plain constants, or other functions
that can be copied the same way. The copy drops decorators and type annotations, writes
defaults as the values they evaluated to, and renames globals to the names module.py binds.
Anything else is left to the caller, which imports the function by name (with a warning).

This module decides whether a function can be copied (`check_function`, `check_value`) and
rewrites its source (`emit`) given the code of each global and default. Spelling those values
recurses into every kind of value, so it lives with `literal()` in literals.py, which is the
one module above this one in the family.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dis
import inspect
import logging
import operator as operator_module
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .imports import ImportTable, is_stdlib
from .outputclasses import is_output_class
from .qualnames import library_free_name
from .sourceimports import imported_name

DATA = (type(None), bool, int, float, complex, str, bytes)
TORCH_DATA = (torch.dtype, torch.device, torch.Size, torch.memory_format, torch.layout)
_LOADS = {"LOAD_GLOBAL", "LOAD_NAME"}
_STORES = {"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME", "DELETE_NAME"}


class NotInlinable(Exception):
    """Why a function cannot be copied into module.py."""


@dataclass(frozen=True)
class Source:
    """A plain function's parsed source and the globals its code reads."""
    fn: types.FunctionType
    tree: ast.FunctionDef
    globals: dict[str, Any]  # each global name the code loads -> its value (builtins left out)


def is_plain_function(fn: object) -> bool:
    """True for a module-level Python function with no closure: one whose source can be copied."""
    return (
        isinstance(fn, types.FunctionType)
        and fn.__closure__ is None
        and fn.__qualname__ == fn.__name__
        and fn.__name__ != "<lambda>"
        and not (fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR))
    )


def is_method(fn: object, cls: type, name: str) -> bool:
    """A function defined in `cls`'s body under `name` (it may use `super()`)."""
    return (
        isinstance(fn, types.FunctionType)
        and fn.__qualname__ == f"{cls.__qualname__}.{name}"
        and fn.__name__ == name
        and fn.__code__.co_freevars in ((), ("__class__",))
        and not (fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR))
    )


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    return [code, *(c for const in code.co_consts if isinstance(const, types.CodeType) for c in _code_objects(const))]


def _global_names(fn: types.FunctionType) -> list[str]:
    names: dict[str, None] = {}
    for code in _code_objects(fn.__code__):
        for instruction in dis.get_instructions(code):
            if instruction.opname in _STORES:
                raise NotInlinable(f"it assigns the global {instruction.argval!r}")
            if instruction.opname in _LOADS:
                names[instruction.argval] = None
    return list(names)


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the function binds anywhere: arguments, assignments, imports, nested definitions."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not tree:
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def load_source(fn: types.FunctionType) -> Source:
    """Parse `fn`'s source and resolve the global names it reads."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(text).body[0]
    except (OSError, TypeError, SyntaxError, IndexError) as error:
        raise NotInlinable(f"its source is not available ({type(error).__name__})") from error
    if not isinstance(tree, ast.FunctionDef) or tree.name != fn.__name__:
        raise NotInlinable("its source is not a plain function definition")
    values = {}
    for name in _global_names(fn):
        if name in fn.__globals__:
            values[name] = fn.__globals__[name]
        elif not hasattr(builtins, name):
            raise NotInlinable(f"its global {name!r} is not defined")
    clash = sorted(_bound_names(tree) & set(values))
    if clash:
        raise NotInlinable(f"it uses {clash[0]!r} both as a global and as a local name")
    return Source(fn, tree, values)


def is_data(value: object) -> bool:
    """Plain values `literal()` writes as code: numbers, strings, torch dtypes, and tuples, lists, dicts of them."""
    if isinstance(value, DATA + TORCH_DATA):
        return type(value) in DATA or isinstance(value, TORCH_DATA)
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return all(is_data(v) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return all(is_data(k) and is_data(v) for k, v in value.items())
    return False


def is_mutable_data(value: object) -> bool:
    """True for a list or dict global, which a copy must not share."""
    return type(value) in (list, dict)


class _AnnotationStripper(ast.NodeTransformer):
    """Type annotations would need the library's names: argument, return and variable annotations go."""

    def __init__(self, root: ast.FunctionDef) -> None:
        self.root = root

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        node.decorator_list = [] if node is self.root else node.decorator_list
        self.generic_visit(node)
        if not node.body:
            node.body = [ast.Pass()]
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt | None:
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


class _Renamer(ast.NodeTransformer):
    def __init__(self, codes: dict[str, str]) -> None:
        self.codes = codes

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.codes:
            return ast.copy_location(ast.parse(self.codes[node.id], mode="eval").body, node)
        return node


def _defaults(fn: types.FunctionType, tree: ast.FunctionDef, code: Callable[[Any], str]) -> None:
    """Defaults as the values they evaluated to: their source would need the library's names."""
    values = fn.__defaults__ or ()
    tree.args.defaults = [ast.parse(code(v), mode="eval").body for v in values]
    kw = fn.__kwdefaults__ or {}
    tree.args.kw_defaults = [ast.parse(code(kw[a.arg]), mode="eval").body if a.arg in kw else None for a in tree.args.kwonlyargs]


def emit(source: Source, name: str, global_codes: dict[str, str], value_code: Callable[[Any], str]) -> str:
    """The function's code under `name`, with each global replaced by the code module.py uses for it."""
    tree = copy.deepcopy(source.tree)
    tree.name = name
    tree = _AnnotationStripper(tree).visit(tree)
    _defaults(source.fn, tree, value_code)
    tree = _Renamer({k: v for k, v in global_codes.items() if v != k}).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


def module_code(module: types.ModuleType, imports: ImportTable) -> str:
    """The name module.py binds a module global to: torch, nn, F, math and operator by their fixed names."""
    fixed = {"torch": "torch", "torch.nn": "nn", "torch.nn.functional": "F", "math": "math", "operator": "operator"}
    if module.__name__ in fixed:
        return imports.use(fixed[module.__name__])
    return imports.module(module.__name__)


def logger_code(value: logging.Logger, module: str) -> str:
    """Code that gets the same logger in the generated module."""
    return f"{module}.getLogger({value.name!r})"


def global_import(source: Source, name: str) -> str | None:
    """The dotted name the function's own module imported `name` from, when that resolves to the same object."""
    return imported_name(source.fn.__module__, name, source.globals[name])


# planning: everything a function needs must be standalone before any of it is written ------
def _check_value(value: Any, seen: set[int], source: Source | None = None, name: str = "") -> None:
    """Raise NotInlinable unless module.py can express `value` without the library."""
    if isinstance(value, types.ModuleType):
        top = value.__name__.split(".")[0]
        if top != "torch" and not is_stdlib(top):
            raise NotInlinable(f"it uses the module {value.__name__}")
    elif is_data(value) or isinstance(value, logging.Logger):
        return
    elif _is_builtin(value) or library_free_name(value) or is_output_class(value):
        return
    elif source is not None and global_import(source, name):
        return
    elif is_plain_function(value):
        _plan(value, seen)
    else:
        raise NotInlinable(f"it uses {name or 'a value'!r}, a {type(value).__module__}.{type(value).__qualname__}")


def _is_builtin(value: Any) -> bool:
    name = getattr(value, "__name__", "")
    return getattr(builtins, name, None) is value or getattr(operator_module, name, None) is value


def _plan(fn: types.FunctionType, seen: set[int]) -> None:
    if id(fn) in seen:
        return
    seen.add(id(fn))
    source = load_source(fn)
    for name, value in source.globals.items():
        try:
            _check_value(value, seen, source, name)
        except NotInlinable as error:
            raise NotInlinable(f"{fn.__module__}.{fn.__name__}: {error}") from None
    for value in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):
        _check_value(value, seen, None, "a default value")


def check_function(fn: types.FunctionType) -> None:
    """Raise NotInlinable unless `fn` and everything it needs can be copied."""
    _plan(fn, set())


def check_value(value: Any, name: str) -> None:
    """Raise NotInlinable unless module.py can write `value` (called `name` in messages) without its library."""
    _check_value(value, set(), None, name)
