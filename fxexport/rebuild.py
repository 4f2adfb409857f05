"""Constructor calls that rebuild torch.nn modules as code, each verified on the meta device."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch
from torch import nn

from .errors import FxExportError
from .imports import ImportTable
from .literals import literal
from .targets import function_reference

CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)
_RNN_PARAMS = [p for name, p in inspect.signature(nn.modules.rnn.RNNBase.__init__).parameters.items() if name not in ("self", "mode")]
_RNN_NONLINEARITY = inspect.Parameter("nonlinearity", inspect.Parameter.KEYWORD_ONLY, default="tanh")

# Constructor parameters for classes whose own __init__ only says (*args, **kwargs).
SIGNATURES: dict[type, list[inspect.Parameter]] = {
    nn.LSTM: _RNN_PARAMS,
    nn.GRU: _RNN_PARAMS,
    nn.RNN: [*_RNN_PARAMS, _RNN_NONLINEARITY],
}

# Arguments whose value is not stored under the argument's own name.
ARGUMENTS: dict[type, dict[str, Callable[[Any], Any]]] = {
    nn.MultiheadAttention: {
        "bias": lambda m: m.in_proj_bias is not None,
        "add_bias_kv": lambda m: m.bias_k is not None,
        "kdim": lambda m: None if m.kdim == m.embed_dim else m.kdim,
        "vdim": lambda m: None if m.vdim == m.embed_dim else m.vdim,
    },
}

_NOT_ARGUMENTS = {"self", "device", "dtype"}


def is_holder(module: nn.Module) -> bool:
    """A plain `nn.Module` or a container: rebuilt empty, then filled child by child."""
    return type(module) is nn.Module or type(module) in CONTAINERS


def is_torch_module(module: nn.Module) -> bool:
    return type(module).__module__.split(".")[:2] in (["torch", "nn"], ["torch", "ao"])


def class_reference(cls: type, imports: ImportTable) -> str:
    if getattr(nn, cls.__name__, None) is cls:
        return f"{imports.use('nn')}.{cls.__name__}"
    return function_reference(cls, imports, f"class {cls.__qualname__}")


def _parameters(cls: type) -> list[inspect.Parameter]:
    for klass in cls.__mro__:
        if klass in SIGNATURES:
            return SIGNATURES[klass]
    params = list(inspect.signature(cls.__init__).parameters.values())
    return [p for p in params if p.name not in _NOT_ARGUMENTS and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _value(module: nn.Module, param: inspect.Parameter) -> Any:
    for klass in type(module).__mro__:
        if param.name in ARGUMENTS.get(klass, {}):
            return ARGUMENTS[klass][param.name](module)
    if not hasattr(module, param.name):
        return param.default
    value = getattr(module, param.name)
    if isinstance(param.default, bool) and (value is None or isinstance(value, torch.Tensor)):
        return value is not None
    return value


def _same(value: Any, default: Any) -> bool:
    if default is inspect.Parameter.empty:
        return False
    if isinstance(value, tuple) and not isinstance(default, tuple):
        return all(_same(v, default) for v in value)
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:
        return False


def _collapse(value: Any) -> Any:
    """`(3, 3)` becomes `3`, as people write it; verification decides whether that holds."""
    if isinstance(value, tuple) and value and all(type(v) is int and v == value[0] for v in value):
        return value[0]
    return value


def _floating_dtype(module: nn.Module) -> torch.dtype | None:
    dtypes = {t.dtype for t in [*module.parameters(), *module.buffers()] if t.is_floating_point()}
    if len(dtypes) == 1 and (dtype := dtypes.pop()) != torch.get_default_dtype():
        return dtype
    return None


def _arguments(module: nn.Module, imports: ImportTable, where: str, collapse: bool) -> list[str]:
    args: list[str] = []
    no_name = lambda value: None  # noqa: E731
    for param in _parameters(type(module)):
        value = _value(module, param)
        if value is inspect.Parameter.empty:
            raise FxExportError(f"module {where!r} ({type(module).__qualname__}): cannot recover constructor argument {param.name!r}")
        if isinstance(value, nn.Module) or _same(value, param.default):
            continue
        code = literal(_collapse(value) if collapse else value, imports, no_name, f"module {where!r}")
        required = param.default is inspect.Parameter.empty and param.kind != param.KEYWORD_ONLY
        args.append(code if required else f"{param.name}={code}")
    if "dtype" in inspect.signature(type(module).__init__).parameters and (dtype := _floating_dtype(module)):
        args.append(f"dtype={literal(dtype, imports, no_name, where)}")
    return args


def _public_state(module: nn.Module) -> dict[str, Any]:
    return {
        k: v
        for k, v in vars(module).items()
        if not k.startswith("_") and k != "training" and not isinstance(v, (torch.Tensor, nn.Module))
    }


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:
        return a is b


def mismatch(original: nn.Module, rebuilt: nn.Module) -> str | None:
    """What differs between a module and its rebuild, or None."""
    left = dict(original.named_modules(remove_duplicate=False))
    right = dict(rebuilt.named_modules(remove_duplicate=False))
    if list(left) != list(right):
        return f"submodules {sorted(left)} != {sorted(right)}"
    for path, mod in left.items():
        other = right[path]
        label = path or "the module"
        if type(mod) is not type(other):
            return f"{label}: class {type(other).__qualname__} != {type(mod).__qualname__}"
        if mod.extra_repr() != other.extra_repr():
            return f"{label}: rebuilt as ({other.extra_repr()}) instead of ({mod.extra_repr()})"
        if mod._non_persistent_buffers_set != other._non_persistent_buffers_set:
            return f"{label}: non-persistent buffers differ"
        mine, theirs = _public_state(mod), _public_state(other)
        for key in sorted(set(mine) | set(theirs)):
            if key not in mine or key not in theirs or not _equal(mine[key], theirs[key]):
                return f"{label}: attribute {key!r} is {theirs.get(key)!r}, expected {mine.get(key)!r}"
    ours = {k: (tuple(v.shape), v.dtype) for k, v in original.state_dict(keep_vars=True).items() if v is not None}
    new = {k: (tuple(v.shape), v.dtype) for k, v in rebuilt.state_dict(keep_vars=True).items() if v is not None}
    if ours != new:
        diff = sorted(set(ours.items()) ^ set(new.items()), key=str)[:3]
        return f"state_dict differs: {diff}"
    return None


def constructor_code(module: nn.Module, imports: ImportTable, where: str) -> str:
    """A verified constructor call, e.g. `nn.Conv2d(3, 8, 3, padding=1)`."""
    reference = class_reference(type(module), imports)
    problem = ""
    tried: set[str] = set()
    for collapse in (True, False):
        code = f"{reference}({', '.join(_arguments(module, imports, where, collapse))})"
        if code in tried:
            continue
        tried.add(code)
        try:
            with torch.device("meta"):
                rebuilt = eval(code, imports.bindings())  # our own code, built from repr() of literals
        except Exception as error:  # noqa: BLE001 - any failure means this rebuild is unusable
            problem = f"{code} fails on the meta device: {type(error).__name__}: {error}"
            continue
        problem = mismatch(module, rebuilt) or ""
        if not problem:
            return code
    raise FxExportError(f"module {where!r} ({type(module).__qualname__}) cannot be rebuilt as code: {problem}")
