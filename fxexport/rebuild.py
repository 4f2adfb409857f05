"""Constructor calls that rebuild torch.nn modules as code, each verified on the meta device.

Arguments come from the class's `__init__` signature and the instance's attributes of the
same names; `rebuild_overrides` lists the few that live elsewhere. A module argument (a
Transformer's layer, a loss's distance module) becomes its own nested constructor call, and
a tensor argument the module keeps as a parameter or buffer (a loss's class weights)
becomes an empty stub that the weights file fills.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import inspect
import types
import warnings
from typing import Any

import torch
from torch import nn
from torch.ao.nn.intrinsic.modules.fused import _FusedModule
from torch.nn.parameter import is_lazy

from .errors import FxExportError
from .imports import ImportTable
from .literals import function_reference, literal
from .names import quote
from .parametrized import parametrized, same_parametrized_class, wrapped
from .quantized import (
    float_class,
    is_packed_data,
    namespace_of,
    needs_cpu,
    output_qparams,
    packing,
    packs,
    set_packed,
    without_packing,
)
from .rebuild_overrides import ARGUMENTS, SIGNATURES
from .skipped_init import initialisers_skipped

CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)

_NOT_ARGUMENTS = {"self", "device", "dtype"}
# Bookkeeping every nn.Module has; the rest of a module's attributes describe its configuration.
_MODULE_INTERNALS = frozenset(vars(nn.Module())) | {"training"}
_HOOKS = (
    "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)  # fmt: skip


def is_holder(module: nn.Module) -> bool:
    """A plain `nn.Module` or a container: rebuilt empty, then filled child by child."""
    return type(module) is nn.Module or type(module) in CONTAINERS


def is_torch_module(module: nn.Module) -> bool:
    """True for a module class defined in torch.nn or torch.ao."""
    return type(module).__module__.split(".")[:2] in (["torch", "nn"], ["torch", "ao"])


def class_reference(cls: type, imports: ImportTable) -> str:
    """The code that names `cls`: `nn.Name` for torch.nn's own classes, `nnq.Name` for torch.ao's quantized
    ones (imported as torch's documentation does), else an import."""
    if getattr(nn, cls.__name__, None) is cls:
        return f"{imports.use('nn')}.{cls.__name__}"
    if (namespace := namespace_of(cls)) is not None:
        return f"{imports.module_as(*namespace)}.{cls.__name__}"
    return function_reference(cls, imports, f"class {cls.__qualname__}")


# arguments ---------------------------------------------------------------------------------
def _signature(cls: type[Any]) -> list[inspect.Parameter]:
    for klass in cls.__mro__:
        if klass in SIGNATURES:
            return SIGNATURES[klass]
    init = cls.__init__
    return list(_init_parameters(init) if isinstance(init, types.FunctionType) else inspect.signature(init).parameters.values())


@functools.lru_cache(maxsize=512)
def _init_parameters(init: types.FunctionType) -> tuple[inspect.Parameter, ...]:
    """The parameters of an `__init__` (keyed by the function: 2,000 Linears ask once)."""
    return tuple(inspect.signature(init).parameters.values())


def _is_argument(param: inspect.Parameter) -> bool:
    """A constructor argument to recover: not a factory keyword (`device`, `dtype=None`); a `dtype` with a
    dtype as its default is configuration (a quantized layer's weight dtype: `nnqd.Linear(..., dtype=torch.float16)`)."""
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
        return False
    return param.name not in _NOT_ARGUMENTS or (param.name == "dtype" and isinstance(param.default, torch.dtype))


def _parameters(cls: type[Any]) -> list[inspect.Parameter]:
    return [p for p in _signature(cls) if _is_argument(p)]


def _cannot_recover(module: nn.Module, name: str, where: str, why: str = "") -> FxExportError:
    cls = type(module).__qualname__
    return FxExportError(f"module {where!r} ({cls}): cannot recover constructor argument {name!r}{why}")


def _value(module: nn.Module, param: inspect.Parameter, where: str) -> Any:
    for klass in type(module).__mro__:
        if param.name in ARGUMENTS.get(klass, {}):
            try:
                return ARGUMENTS[klass][param.name](module)
            except Exception as error:  # the module is not built the way the override expects
                raise _cannot_recover(module, param.name, where, f" ({type(error).__name__}: {error})") from error
    if not hasattr(module, param.name):
        return param.default
    value = getattr(module, param.name)
    if isinstance(param.default, bool) and (value is None or isinstance(value, torch.Tensor)):
        return value is not None
    return value


def _same(value: Any, default: Any, collapse: bool = True) -> bool:
    """The value is the parameter's default; a tuple of it counts where tuples collapse (a Conv2d stores
    `padding=0` as `(0, 0)`; a MaxPool3d keeps `(0, 0, 0)` as given, which the other attempt writes out)."""
    if default is inspect.Parameter.empty:
        return False
    if isinstance(value, tuple) and not isinstance(default, tuple):
        return collapse and all(_same(v, default) for v in value)
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # noqa: BLE001 - a user's __eq__ or __bool__ may raise anything
        return False


def _collapse(value: Any) -> Any:
    """`(3, 3)` becomes `3`, as people write it; verification decides whether that holds."""
    if isinstance(value, tuple) and value and all(type(v) is int and v == value[0] for v in value):
        return value[0]
    return value


def _floating_dtype(module: nn.Module) -> torch.dtype | None:
    tensors = [*module.parameters(), *module.buffers()]
    dtypes = {t.dtype for t in tensors if t.is_floating_point() or t.is_complex()}
    if len(dtypes) == 1 and (dtype := dtypes.pop()) != torch.get_default_dtype():
        return dtype
    return None


def _no_name(_value: object) -> None:
    return None


def _module_argument(owner: nn.Module, value: nn.Module, imports: ImportTable, where: str) -> str:
    """A module passed to the constructor, rebuilt as a nested (and itself verified) call."""
    path = next((p for p, m in owner.named_modules() if m is value and p), "")
    inner = f"{where}.{path}" if path else where
    if is_holder(value) or not is_torch_module(value):
        raise FxExportError(
            f"module {inner!r} ({type(value).__qualname__}) is a constructor argument of {where!r}; "
            "fxexport can only pass torch.nn layers there, not containers or user classes"
        )
    if isinstance(owner, _FusedModule) and (stand_in := float_class(type(value))) is not None:
        # A fused layer's constructor takes float layers only: one of the same shape, swapped afterwards.
        return f"{class_reference(stand_in, imports)}({', '.join(_arguments(value, imports, inner, True, stand_in))})"
    return constructor_code(value, imports, inner)


def swapped_children(module: nn.Module, imports: ImportTable, where: str) -> list[tuple[str, str]]:
    """(child name, verified constructor call) of the children a fused layer of a reference model gets once
    built: `nni.ConvReLU2d` takes only float layers, so it is built with an `nn.Conv2d`, which is then swapped
    for the `nnqr.Conv2d` (as `convert_to_reference_fx` does)."""
    if not isinstance(module, _FusedModule):
        return []
    children = module.named_children()
    return [(name, constructor_code(child, imports, f"{where}.{name}")) for name, child in children if float_class(type(child)) is not None]


def _tensor_argument(owner: nn.Module, name: str, value: torch.Tensor, imports: ImportTable, where: str, wrap: bool = False) -> str:
    """A tensor the module keeps as a parameter or buffer: an empty stub the weights file fills; `wrap`: a
    parameter's as an nn.Parameter (a quantized LayerNorm assigns its `weight` argument over nn.LayerNorm's)."""
    if not any(value is t for t in [*owner._parameters.values(), *owner._buffers.values()]):
        raise FxExportError(
            f"module {where!r} ({type(owner).__qualname__}): constructor argument {name!r} is a tensor "
            "the module does not keep as a parameter or buffer, so fxexport cannot write it as code"
        )
    shape = literal(tuple(value.shape), imports, _no_name, where)
    dtype = literal(value.dtype, imports, _no_name, where)
    dtype = "" if value.dtype == torch.get_default_dtype() else f", dtype={dtype}"
    empty = f"{imports.use('torch')}.empty({shape}{dtype})"
    if wrap and any(value is t for t in owner._parameters.values()):
        return f"{class_reference(nn.Parameter, imports)}({empty})"
    return empty


def _argument_code(module: nn.Module, name: str, value: Any, imports: ImportTable, where: str, collapse: bool, wrap: bool = False) -> str:
    if isinstance(value, nn.Module):
        return _module_argument(module, value, imports, where)
    if isinstance(value, torch.Tensor):
        return _tensor_argument(module, name, value, imports, where, wrap)
    if type(value) is dict and any(isinstance(v, torch.Tensor) for v in value.values()):
        # A reference quantized layer's weight_qparams: its tensors become the buffers the weights file fills.
        entries = (f"{quote(k)}: {_argument_code(module, name, v, imports, where, False)}" for k, v in value.items())
        return f"{{{', '.join(entries)}}}"
    try:
        return literal(_collapse(value) if collapse else value, imports, _no_name, f"module {where!r}")
    except FxExportError as error:
        if isinstance(value, type) or not callable(value):
            raise
        why = f": {value!r} has no importable name; pass a module-level function"
        raise _cannot_recover(module, name, where, why) from error


def _arguments(module: nn.Module, imports: ImportTable, where: str, collapse: bool, cls: type | None = None, wrap: bool = False) -> list[str]:
    """The arguments of `cls` (by default the module's own class) that rebuild `module`; `wrap`: its
    parameters passed as nn.Parameters (_tensor_argument)."""
    args: list[str] = []
    for param in _parameters(cls or type(module)):
        value = _value(module, param, where)
        if value is inspect.Parameter.empty:
            raise _cannot_recover(module, param.name, where)
        if _same(value, param.default, collapse):
            continue
        code = _argument_code(module, param.name, value, imports, where, collapse, wrap)
        required = param.default is inspect.Parameter.empty and param.kind != param.KEYWORD_ONLY
        args.append(code if required else f"{param.name}={code}")
    factory_dtype = any(p.name == "dtype" and not _is_argument(p) for p in _signature(type(module)))
    if factory_dtype and (dtype := _floating_dtype(module)):
        args.append(f"dtype={literal(dtype, imports, _no_name, where)}")
    return args


# verification ------------------------------------------------------------------------------
def _plain(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _state(module: nn.Module) -> dict[str, Any]:
    """Configuration attributes: every public one, and private ones that hold plain data."""
    return {
        k: v
        for k, v in vars(module).items()
        if k not in _MODULE_INTERNALS
        and not isinstance(v, (torch.Tensor, nn.Module))
        and not is_packed_data(module, v)
        and (not k.startswith("_") or _plain(v))
    }


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:  # noqa: BLE001 - a user's __eq__ or __bool__ may raise anything
        return a is b


def _module_mismatch(label: str, mod: nn.Module, other: nn.Module, packed: bool = False) -> str | None:
    """What differs between a module and its rebuild; `packed`: the rebuild is compared unsettled, with
    the output qparams the package sets after its constructor call and not its repr (see `mismatch`)."""
    if type(mod) is not type(other) and not same_parametrized_class(type(mod), type(other)):
        return f"{label}: class {type(other).__qualname__} != {type(mod).__qualname__}"
    if not packed and mod.extra_repr() != other.extra_repr():
        return f"{label}: rebuilt as ({other.extra_repr()}) instead of ({mod.extra_repr()})"
    if mod._non_persistent_buffers_set != other._non_persistent_buffers_set:
        return f"{label}: non-persistent buffers differ"
    if [len(getattr(mod, h, ())) for h in _HOOKS] != [len(getattr(other, h, ())) for h in _HOOKS]:
        return f"{label}: has hooks that a constructor call does not register"
    mine, theirs = _state(mod), _state(other) | (output_qparams(mod) if packed else {})
    for key in sorted(set(mine) | set(theirs)):
        if key in mine and key not in theirs and key not in vars(other) and _plain(mine[key]):
            continue  # set on the layer after construction (e.g. by its library): see extra_settings
        if key not in mine or key not in theirs or not _equal(mine[key], theirs[key]):
            return f"{label}: attribute {key!r} is {theirs.get(key)!r}, expected {mine.get(key)!r}"
    return None


def extra_settings(original: nn.Module, code: str, imports: ImportTable, where: str) -> list[tuple[tuple[str, ...], str, Any]]:
    """(submodule path, name, value) of plain attributes the layer has and its constructor call does not set:
    a quantized layer's output scale and zero point, and what a library set on a layer after building it."""
    alone = _packs_alone(original, imports, where)
    built = _build(code, imports, _device(original), unpacked=alone)
    extras: list[tuple[tuple[str, ...], str, Any]] = [((), k, v) for k, v in output_qparams(original).items() if not _equal(vars(built)[k], v)]
    settled = built if alone else _settled(built, original, imports, where)  # its setters add no attribute
    rebuilt = dict(settled.named_modules(remove_duplicate=False))
    for path, mod in original.named_modules(remove_duplicate=False):
        other = vars(rebuilt[path]) if path in rebuilt else {}
        extras += [(tuple(filter(None, path.split("."))), k, v) for k, v in _state(mod).items() if k not in other and _plain(v)]
    return extras


def _tensor_specs(module: nn.Module) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    # A quantized layer's state_dict also holds packed weights (tuples, torch.classes objects): not compared here.
    return {k: (tuple(v.shape), v.dtype) for k, v in module.state_dict(keep_vars=True).items() if isinstance(v, torch.Tensor)}


def mismatch(original: nn.Module, rebuilt: nn.Module, packed: bool = False) -> str | None:
    """What differs between a module and its rebuild, or None.

    `packed`: a layer holding packed weights, compared without packing or unpacking any: the package
    sets the layer's own weights through its setter, so what they give (the `weight` and `bias`
    entries, a missing bias, the weight's qscheme in its repr) is the layer's by construction; its
    attributes are compared with the output scale and zero point the package sets, and its
    parameters and buffers instead of its state_dict."""
    left = dict(original.named_modules(remove_duplicate=False))
    right = dict(rebuilt.named_modules(remove_duplicate=False))
    if list(left) != list(right):
        return f"submodules {sorted(left)} != {sorted(right)}"
    for path, mod in left.items():
        if problem := _module_mismatch(path or "the module", mod, right[path], packed):
            return problem
    specs = _held_specs if packed else _tensor_specs
    ours, new = specs(original), specs(rebuilt)
    if ours != new:
        diff = sorted(set(ours.items()) ^ set(new.items()), key=str)[:3]
        return f"{'parameters and buffers differ' if packed else 'state_dict differs'}: {diff}"
    return None


def _held_specs(module: nn.Module) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    tensors = [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]
    return {k: (tuple(v.shape), v.dtype) for k, v in tensors}


def _packs_alone(module: nn.Module, imports: ImportTable, where: str) -> bool:
    """A quantized layer that holds packed weights and swaps in no children: compared unsettled (`mismatch`)."""
    return packs(module) and not swapped_children(module, imports, where)


def _check_materialized(module: nn.Module, where: str) -> None:
    if any(is_lazy(t) for t in [*module.parameters(), *module.buffers()]):
        raise FxExportError(
            f"module {where!r} ({type(module).__qualname__}) has uninitialized lazy parameters; "
            "run one forward pass to materialize them before tracing"
        )


def _device(module: nn.Module) -> str:
    """Where a rebuild of `module` is built: the meta device, or the CPU for quantized layers (see quantized.py)."""
    return "cpu" if needs_cpu(module) else "meta"


def _build(code: str, imports: ImportTable, device: str = "meta", unpacked: bool = False) -> nn.Module:
    """The module `code` builds, on `device`; built once per export (compared, never changed).
    `unpacked`: a quantized conv without its packed weights, for a layer compared without them."""
    key = (code, unpacked)
    if key not in imports.built:
        skipped = initialisers_skipped() if device == "meta" else contextlib.nullcontext()
        with torch.device(device), skipped, without_packing() if unpacked else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the source module's own construction already warned
            imports.built[key] = eval(code, imports.bindings())  # our own code, built from repr() of literals
    return imports.built[key]


def _settled(rebuilt: nn.Module, original: nn.Module, imports: ImportTable, where: str) -> nn.Module:
    """The rebuild as the package leaves it after loading: a fused reference layer with its children swapped;
    a quantized layer with its output scale and zero point (written after its constructor call) and its
    packed weights set, as the loader does. A copy, so the cached rebuild stays as its code builds it;
    the last one is kept, for extra_settings reads it right after verifying did (packing weights is slow)."""
    last = imports.settled
    if last is None or last[0] is not rebuilt or last[1] is not original:
        imports.settled = last = (rebuilt, original, _settle(rebuilt, original, imports, where))
    return last[2]


def _settle(rebuilt: nn.Module, original: nn.Module, imports: ImportTable, where: str) -> nn.Module:
    packed, swaps = packing(original), swapped_children(original, imports, where)
    if packed is None and not swaps:
        return rebuilt
    settled = copy.deepcopy(rebuilt)
    for name, code in swaps:
        settled.add_module(name, copy.deepcopy(_build(code, imports, "cpu")))
    if packed is not None:
        vars(settled).update(output_qparams(original))
        set_packed(settled, packed)
    return settled


def constructor_code(module: nn.Module, imports: ImportTable, where: str) -> str:
    """A verified constructor call, e.g. `nn.Conv2d(3, 8, 3, padding=1)`; a parametrized layer's wrapped
    in the calls registering its parametrizations (parametrized.py)."""
    _check_materialized(module, where)
    try:
        found = parametrized(module)
    except ValueError as error:
        raise FxExportError(f"module {where!r} ({type(module).__qualname__}) cannot be rebuilt as code: {error}") from None
    cls = type(module) if found is None else found.layer_class
    reference = class_reference(cls, imports)
    problem = ""
    tried: set[str] = set()
    alone = _packs_alone(module, imports, where)
    for collapse, wrap in ((True, False), (False, False), (True, True)):
        code = f"{reference}({', '.join(_arguments(module, imports, where, collapse, cls, wrap))})"
        code = code if found is None else wrapped(code, found)
        if code in tried:
            continue
        tried.add(code)
        try:
            rebuilt = _build(code, imports, _device(module), unpacked=alone)
        except Exception as error:  # noqa: BLE001 - any failure means this rebuild is unusable
            problem = f"{code} fails on the {_device(module)} device: {type(error).__name__}: {error}"
            continue
        if alone:
            problem = mismatch(module, rebuilt, packed=True) or ""
        else:
            problem = mismatch(module, _settled(rebuilt, module, imports, where)) or ""
        if not problem:
            return code
    raise FxExportError(f"module {where!r} ({type(module).__qualname__}) cannot be rebuilt as code: {problem}")


# one verification per kind of layer ---------------------------------------------------------
def fingerprint(module: nn.Module) -> tuple[Any, ...] | None:
    """All that `constructor_code` and `extra_settings` read of `module`, as a key two layers have alike
    only where both calls would give the same code and settings: per submodule its class, every attribute
    (plain data by value, any other object by identity: one object gives one code) and each tensor's
    shape, dtype, device, layout and `requires_grad`. None where that does not hold for sure: hooks,
    quantized, lazy or subclassed tensors, or layers built on the CPU (their packed weights)."""
    if needs_cpu(module):
        return None
    parts: list[Any] = []
    for path, sub in module.named_modules(remove_duplicate=False):
        items: list[Any] = []
        for key, value in vars(sub).items():
            if key not in _MODULE_INTERNALS:
                items.append((key, _value_key(value)))
            elif key in ("_parameters", "_buffers"):
                tensors = [(name, _tensor_key(t)) for name, t in value.items()]
                if any(k is _NOT_PLAIN for _, k in tensors):
                    return None
                items.append((key, tuple(tensors)))
            elif key == "_modules":
                items.append((key, tuple((name, child is None) for name, child in value.items())))
            elif key == "_non_persistent_buffers_set":
                items.append((key, tuple(sorted(value))))
            elif key == "training":
                items.append((key, value))
            elif value:
                return None  # hooks, or another of nn.Module's own in use
        parts.append((path, type(sub), tuple(items)))
    return tuple(parts)


_NOT_PLAIN = object()
_PLAIN_TYPES = frozenset({bool, int, float, str, complex})


def _tensor_key(tensor: torch.Tensor | None) -> Any:
    if tensor is None:
        return None
    if type(tensor) not in (torch.Tensor, nn.Parameter) or tensor.is_quantized or is_lazy(tensor):
        return _NOT_PLAIN
    return type(tensor), tuple(tensor.shape), tensor.dtype, tensor.device.type, tensor.layout, tensor.requires_grad


def _value_key(value: Any) -> Any:
    if value is None or type(value) in _PLAIN_TYPES:
        return type(value), repr(value)  # repr tells -0.0 from 0.0 and round-trips floats
    if type(value) in (tuple, list):
        return type(value), tuple(_value_key(v) for v in value)
    if type(value) in (dict, collections.OrderedDict):
        return type(value), tuple((_value_key(k), _value_key(v)) for k, v in value.items())
    return "object", id(value)  # the same object, alive through the export: the same code
