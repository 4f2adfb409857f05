"""Whether a module's forward may keep a value on the module, where its caller could read it.

A value computed inside a module call and read after it by its caller is either returned (in a
tuple, a dict, a list the caller passed in: IntermediateLayerGetter's features, T5's position bias)
or kept on the module (`self.hidden = h`, read as `self.cached.hidden`). The graph cannot tell them
apart; the source can. A class keeps nothing where the code it runs when called (`forward`, every
definition of it along the class's bases, `__call__` where the model overrides it, the wrappers its
decorators put around them, and the methods of the class these read off `self`, called or passed
on) stores nothing reached from `self`: no attribute or item of it, or of a local naming part of it
(`cache = self.cache`, `for m in self.children()`), assigned or deleted; no container of it filled,
no tensor of it written in place (`self.buf.add_(1)`, `out=self.buf`, `nn.init.zeros_(self.w)`), no
module method that changes it (`self.apply(...)`, `self.train()`), no method of a child or other
object it holds called but those that only read (a tensor's `view`, a dict's `get`), no `global` or
`nonlocal` name, and `self` itself passed to no function but builtins that only read it
(`getattr`, `isinstance`) and the function a decorator wraps. torch's own classes keep none a
caller reads (a batch norm's running statistics are buffers, not values of the graph). Where any
of that source cannot be read, the class may keep one.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from .calls import is_torch_class, model_classes, named_after, resolve_class
from .source_names import function_syntax

# methods that change the container they are called on, or are given first (`operator.setitem(d, k, v)`)
_FILLS = frozenset({
    "append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear", "remove", "discard",
    "setitem", "delitem", "__setitem__", "__delitem__", "__setattr__", "__delattr__", "__iadd__",
})  # fmt: skip
# torch.nn.Module's methods that change the module: on `self` itself, and (but those a tensor has too, which
# return a new tensor: `self.table.to(x.device)`) on what it holds
_MODULE_CHANGES = frozenset({
    "register_buffer", "register_parameter", "register_module", "add_module", "apply", "train", "eval",
    "requires_grad_", "zero_grad", "load_state_dict", "set_extra_state", "to_empty", "share_memory",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook",
})  # fmt: skip
_MODULE_CASTS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type"})
_SETTERS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})
# builtins that take `self` and keep nothing of what they are given
_READERS = frozenset({"getattr", "hasattr", "isinstance", "issubclass", "type", "id", "len", "repr", "str", "print", "callable", "super"})
# calls that return part of what they are called on (a local so bound names part of `self`), and read only
_VIEWS = frozenset({
    "children", "named_children", "modules", "named_modules", "parameters", "named_parameters", "buffers",
    "named_buffers", "get_submodule", "get_parameter", "get_buffer", "values", "items", "keys", "get",
    "view", "reshape", "expand", "expand_as", "view_as", "transpose", "permute", "t", "squeeze", "unsqueeze",
    "flatten", "unflatten", "narrow", "select", "unbind", "split", "chunk", "tensor_split", "as_strided",
    "detach", "movedim", "swapaxes", "diagonal", "real", "imag",
})  # fmt: skip
_PART_OF = frozenset({"getattr", "vars", "type", "iter", "next", "enumerate", "zip", "reversed", "list", "tuple", "dict", "sorted", "filter", "map"})
# methods of what a module holds that only read it (besides torch.Tensor's own that do not end in `_`)
_READ_ONLY = _VIEWS | frozenset({
    "forward", "__call__", "copy", "index", "count", "startswith", "endswith", "format", "join", "lower", "upper", "replace", "strip",
    "size", "dim", "numel", "__len__", "__contains__", "__getitem__", "__iter__",
})  # fmt: skip
_ENTRY_POINTS = ("forward", "__call__", "_call_impl", "_wrapped_call_impl", "__getattr__")
_DATA = (int, float, complex, str, bytes, bool, tuple, frozenset, list, dict, set, type(None))


def may_keep_values(cls: type | str) -> bool:
    """True unless the source shows that calling an instance of `cls` keeps nothing on it (the module docstring);
    for an inferred call named after the source model's class (inferred_stacks.py), that class's source."""
    try:
        return _may_keep_values(named_after(cls) or cls)
    except Exception:  # noqa: BLE001 - a model's class may be anything (unhashable, raising descriptors): it may keep one
        return True


def forget_kept_values() -> None:
    """Forget the answers of one export (a class may be edited and reloaded before the next)."""
    _may_keep_values.cache_clear()


def method_may_keep(cls: type | str, name: str) -> bool:
    """True unless the source shows that the method `name` of `cls` (and the methods it reads off `self`)
    keeps nothing on the instance; False for a name that is no method of the class (a child: `self.o(x)`)."""
    try:
        return _may_keep_values(cls, (name,))
    except Exception:  # noqa: BLE001 - as may_keep_values
        return True


@functools.lru_cache(maxsize=1024)
def _may_keep_values(cls: type | str, entry: tuple[str, ...] = ()) -> bool:
    found = resolve_class(cls)
    if found is None:
        return True
    if entry and not any(name in vars(klass) for klass in model_classes(found) for name in entry):
        return False  # not a method of the class: a child, or an attribute
    pending, seen = [*(entry or (*_ENTRY_POINTS, *_overrides(found)))], set()
    methods = frozenset(name for k in model_classes(found) for name, v in vars(k).items() if callable(v) or isinstance(v, (staticmethod, classmethod, property)))
    while pending:
        name = pending.pop()
        seen.add(name)
        for definition in _definitions(found, name):
            read = _read(definition, methods)
            if read is None:
                return True
            pending += [m for m in read if m not in seen]
    return False


def _definitions(cls: type, name: str) -> Iterator[Any]:
    """Every definition of `name` along the class's bases (calls.model_classes)."""
    return (vars(klass)[name] for klass in model_classes(cls) if name in vars(klass))


# methods a model's class overrides that a torch layer's forward does not call while it runs
_NOT_CALLED = frozenset({
    "__init__", "__new__", "__repr__", "extra_repr", "reset_parameters", "_reset_parameters", "_load_from_state_dict",
    "_save_to_state_dict", "__setstate__", "__getstate__", "state_dict", "load_state_dict", "train", "eval",
    "__dir__", "_apply", "_replicate_for_data_parallel", "__init_subclass__",
})  # fmt: skip


def _overrides(cls: type) -> list[str]:
    """The methods a subclass of a torch layer with a forward of its own (Conv2d, TransformerEncoderLayer)
    overrides: that forward may call them (`_conv_forward`, `_sa_block`)."""
    layers = [k for k in cls.__mro__ if is_torch_class(k) and "forward" in vars(k) and k is not nn.Module]
    names = {name for k in layers for name in vars(k)}
    return sorted({name for k in model_classes(cls) for name in vars(k) if name in names} - _NOT_CALLED)


def _read(definition: Any, methods: frozenset[str] = frozenset()) -> set[str] | None:
    """The names the code of `definition` reads off its first argument (methods it may call); None where it
    may keep a value or cannot be read. A decorated function is read layer by layer, wrappers first."""
    if isinstance(definition, _DATA):
        return set()  # data of the class (`expansion = 4`)
    if isinstance(definition, staticmethod):
        return _static_read(definition.__func__)
    if isinstance(definition, property):
        definition = definition.fget
    function = getattr(definition, "__func__", definition)  # staticmethod, classmethod
    if not inspect.isfunction(function):
        return None  # a partial, a cached_property, a callable object, a class: its code is not at hand
    names: set[str] = set()
    layers: set[int] = set()
    while True:
        wrapped = getattr(function, "__wrapped__", None)
        tree = function_syntax(function.__code__)
        if tree is None or (wrapped is not None and not inspect.isfunction(wrapped)) or id(function) in layers:
            return None
        layers.add(id(function))
        read = _reads_keeping_nothing(tree, passes_to(function, wrapped), methods)
        if read is None:
            return None
        names |= read
        if wrapped is None:
            return names
        function = wrapped


def _static_read(function: Any) -> set[str] | None:
    """A static method is given no instance: it keeps nothing on one where it stores into nothing (no attribute
    or item, none deleted, no `global`), changes nothing in place and gives its values to no function but
    torch's and math's or a tensor's method that writes nothing (T5's `_relative_position_bucket`, rebinding its
    argument); None otherwise (`_store(self.cache, x)` may fill what it is given)."""
    tree = function_syntax(function.__code__) if inspect.isfunction(function) else None
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return None
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return None
        if isinstance(node, ast.AugAssign) and not isinstance(node.target, ast.Name):
            return None
        if isinstance(node, ast.Call) and not _pure_call(node):
            return None
    return set()


def _pure_call(call: ast.Call) -> bool:
    """A call of torch's, math's, a reading builtin, or a tensor method that writes nothing, given no `out=`."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in _READERS or func.id in ("int", "float", "abs", "min", "max", "round", "tuple", "range")
    if isinstance(func, ast.Attribute) and _root_name(func) in ("torch", "math"):
        return not _in_place(func.attr)
    return isinstance(func, ast.Attribute) and hasattr(torch.Tensor, func.attr) and not _in_place(func.attr) and func.attr not in _FILLS


def passes_to(function: Callable[..., Any], wrapped: Any) -> frozenset[str]:
    """The names a wrapper calls the function it wraps by (a decorator's closure over it)."""
    if wrapped is None:
        return frozenset()
    names = set()
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            if cell.cell_contents is wrapped:
                names.add(name)
        except ValueError:  # an empty cell
            continue
    return frozenset(names)


def _reads_keeping_nothing(function: ast.FunctionDef | ast.AsyncFunctionDef, passes_to: frozenset[str], methods: frozenset[str] = frozenset()) -> set[str] | None:
    """The names `function` reads off its first argument; None where it may keep something reached from it.
    `methods`: those of its class, whose result may be part of it (`cache = self.get_cache()`)."""
    arguments = function.args
    first = (arguments.posonlyargs + arguments.args)[:1] or ([arguments.vararg] if arguments.vararg else [])
    if not first:
        return None
    own = first[0].arg
    held = holding(function, own, methods)
    local = _locals(function)
    read: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return None
        if isinstance(node, ast.Name) and node.id == own and isinstance(node.ctx, (ast.Store, ast.Del)):
            return None  # the name rebound: what it names is no longer known
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)) and _part_of(node.value, held):
            return None
        if isinstance(node, ast.AugAssign) and _part_of(node.target, held):
            return None  # `cache += [x]`, `w += 1` where they name part of it
        if isinstance(node, ast.Call) and _keeps(node, own, held, passes_to, local):
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == own:
            read.add(node.attr)  # a method of its class, called or passed on (`map(self.keep, xs)`)
        if isinstance(node, ast.Call) and (name := _attribute_named(node, own)) is not None:
            read.add(name)  # `getattr(self, "keep")`
        if isinstance(node, ast.Attribute) and _is_super(node.value):
            read.add(node.attr)  # read in the bases (_definitions)
    return read


def holding(function: ast.FunctionDef | ast.AsyncFunctionDef, own: str, methods: frozenset[str] = frozenset()) -> set[str]:
    """`own` and the local names bound to part of what it holds (`cache = self.cache`, `for m in self.children()`,
    `cache = self.get_cache()`: the result of a method of its class)."""
    held = {own}
    grew = True
    while grew:
        grew = False
        for node in ast.walk(function):
            for target, value in _bindings(node):
                if _part_of(value, held) or _own_method_result(value, own, methods):
                    new = _bound_names(target) - held
                    held |= new
                    grew |= bool(new)
    return held


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names the function binds: its parameters and every name it assigns."""
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg] if a is not None}
    return names | {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _attribute_named(call: ast.Call, own: str) -> str | None:
    """`name` for `getattr(self, "name")`."""
    func, args = call.func, call.args
    if isinstance(func, ast.Name) and func.id == "getattr" and len(args) >= 2 and isinstance(args[0], ast.Name) and args[0].id == own:
        if isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
            return args[1].value
    return None


def _own_method_result(value: ast.expr, own: str, methods: frozenset[str]) -> bool:
    func = value.func if isinstance(value, ast.Call) else None
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == own and func.attr in methods


def _bindings(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr]]:
    if isinstance(node, ast.Assign):
        yield from ((target, node.value) for target in node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        yield node.target, node.value
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield node.target, node.iter
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        yield from ((item.optional_vars, item.context_expr) for item in node.items if item.optional_vars is not None)


def _bound_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _part_of(node: ast.expr, held: set[str]) -> bool:
    """True where `node` is part of what a name in `held` holds: an attribute or item of it, or a view of it."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in held
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_part_of(e, held) for e in node.elts)  # `for m in (self.a, self.b)`
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in _PART_OF:
            return any(_part_of(a, held) for a in node.args)
        if isinstance(func, ast.Attribute) and func.attr in _VIEWS:
            return _part_of(func.value, held)
    return False


def _keeps(call: ast.Call, own: str, held: set[str], passes_to: frozenset[str], local: set[str]) -> bool:
    """True where this call may store something into what `held` names."""
    func = call.func
    arguments = [*call.args, *(k.value for k in call.keywords)]
    if isinstance(func, ast.Name) and func.id in passes_to:
        return False  # a wrapper calling what it wraps, read next
    if is_partial(func) and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id in passes_to:
        return False  # `partial(forward, self)`, what it wraps called later (transformers' gradient checkpointing)
    if isinstance(func, ast.Attribute) and _is_super(func.value) and (func.attr in _SETTERS or func.attr in _FILLS or func.attr in _MODULE_CHANGES):
        return True  # `super().__setattr__("h", x)`
    if isinstance(func, ast.Attribute) and _part_of(func.value, held):
        on_self = isinstance(func.value, ast.Name) and func.value.id == own
        if func.attr in _FILLS or _in_place(func.attr) or func.attr in _MODULE_CHANGES or (on_self and func.attr in _MODULE_CASTS):
            return True
        if not on_self and not _reads_only(func.attr):
            return True  # a method of a child or of another object it holds (`self.recorder.remember(h)`)
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name in _SETTERS and call.args and _part_of(call.args[0], held):
        return True
    # a function given what it changes first (`nn.init.zeros_(self.weight)`, `operator.setitem(self.cache, k, v)`),
    # not a method of a local value (`x.mul_(self.gamma)` changes x)
    function_form = isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and _root_name(func.value) not in local)
    if function_form and (name in _FILLS or _in_place(name)) and call.args and _part_of(call.args[0], held):
        return True
    if any(k.arg == "out" and _part_of(k.value, held) for k in call.keywords):
        return True
    passed = any(isinstance(a, ast.Name) and a.id == own or isinstance(a, ast.Starred) and _part_of(a.value, {own}) for a in arguments)
    return passed and not (isinstance(func, ast.Name) and func.id in _READERS)


def is_partial(func: ast.expr) -> bool:
    """`partial` or `functools.partial`, as called."""
    return isinstance(func, ast.Name) and func.id == "partial" or isinstance(func, ast.Attribute) and func.attr == "partial"


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _reads_only(method: str) -> bool:
    """A method of something a module holds that changes nothing: a tensor's (`view`, `mean`), a dict's `get`."""
    return method in _READ_ONLY or (hasattr(torch.Tensor, method) and not _in_place(method))


def _in_place(method: str) -> bool:
    """A tensor method that writes its tensor (`add_`, `copy_`), not a private name (`_helper`)."""
    return method.endswith("_") and not method.startswith("_")


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
