"""Quantized torch.ao layers and tensors: what of them is code, what is stored, and how it goes back.

A quantized layer (`torch.ao.nn.quantized.Conv2d`, `.dynamic.Linear`, `.dynamic.LSTM`,
`Embedding`, their fused `intrinsic` forms) keeps its weights packed for its kernel: an
opaque object that is neither a parameter nor a buffer, and that cannot be built on the meta
device. The export stores the packed weights as tensors under the names the layer's
`state_dict` uses (`conv.weight`, `conv.bias`) and the loader hands them back through the
layer's own setter (`set_weight_bias`, `set_weight`). The layer's output scale and zero
point are plain attributes, written as code after its constructor call.

A quantized tensor is stored as its integer values (`integer_values`) with its scales and zero
points as ordinary tensors beside it (`<key>.q_scale`, `<key>.q_zero_point`), and rebuilt on
load with `torch._make_per_tensor_quantized_tensor` / `_make_per_channel_quantized_tensor`.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .errors import FxExportError
from .storages import is_plain

# torch.ao's module namespaces and the aliases their own documentation imports them as.
NAMESPACES = {
    "torch.ao.nn.quantized": "nnq",
    "torch.ao.nn.quantized.dynamic": "nnqd",
    "torch.ao.nn.quantized.reference": "nnqr",
    "torch.ao.nn.intrinsic": "nni",
    "torch.ao.nn.intrinsic.quantized": "nniq",
    "torch.ao.nn.intrinsic.quantized.dynamic": "nniqd",
    "torch.ao.nn.qat": "nnqat",
    "torch.ao.nn.intrinsic.qat": "nniqat",
}
# The suffixes of the entries that hold a quantized tensor's scales and zero points.
SCALE, ZERO_POINT = ".q_scale", ".q_zero_point"
# Attributes a quantized layer sets after construction: its output's scale and zero point.
OUTPUT_QPARAMS = ("scale", "zero_point")
# Reference quantized layers (float weights with their qparams as buffers) cannot be built on meta either.
_REFERENCE = "torch.ao.nn.quantized.reference."


def namespace_of(cls: type) -> tuple[str, str] | None:
    """(module, alias) when `cls` is exported by one of torch.ao's module namespaces, else None."""
    for module, alias in sorted(NAMESPACES.items(), key=lambda item: -len(item[0])):
        namespace = _import(module)
        if namespace is not None and getattr(namespace, cls.__name__, None) is cls:
            return module, alias
    return None


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:  # not in every torch build
        return None


# packed weights -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Packing:
    """How a layer's packed weights are read as named tensors and set back.

    The loader calls `module.<setter>(*tensors)` in `names` order (None for a missing
    one), or with one dict of them when `by_name` (`nnqd.LSTM.set_weight_bias`).
    """

    setter: str
    names: tuple[str, ...]
    by_name: bool
    tensors: tuple[torch.Tensor | None, ...]


def _weight_and_bias(module: nn.Module) -> Packing:
    weight, bias = weight_bias(module)
    return Packing("set_weight_bias", ("weight", "bias"), False, (weight, bias))


_UNPACKED: contextvars.ContextVar[dict[int, tuple[nn.Module, Any]] | None] = contextvars.ContextVar("_UNPACKED", default=None)


@contextlib.contextmanager
def unpacking_once() -> Iterator[None]:
    """Within it, `weight_bias` unpacks each layer once: an export reads a quantized layer's weights
    (to store them) and its bias (for its constructor call, `bias=False`), each an unpacking, a copy."""
    token = _UNPACKED.set({})
    try:
        yield
    finally:
        _UNPACKED.reset(token)


def weight_bias(module: nn.Module) -> Any:
    """A quantized conv's or linear's `_weight_bias()`: its weight and bias, unpacked."""
    cache = _UNPACKED.get()
    found = None if cache is None else cache.get(id(module))
    if found is not None and found[0] is module:
        return found[1]
    unpacked = module._weight_bias()  # type: ignore[operator]
    if cache is not None:
        cache[id(module)] = (module, unpacked)
    return unpacked


def _embedding(module: nn.Module) -> Packing:
    return Packing("set_weight", ("weight",), False, (module.weight(),))  # type: ignore[operator]


def _recurrent(module: nn.Module) -> Packing:
    found = module._weight_bias()  # type: ignore[operator]
    named = {**found["weight"], **found["bias"]}
    names = tuple(sorted(named))
    return Packing("set_weight_bias", names, True, tuple(named[n] for n in names))


def _readers() -> tuple[tuple[tuple[type, ...], Callable[[nn.Module], Packing]], ...]:
    import torch.ao.nn.quantized as nnq
    import torch.ao.nn.quantized.dynamic as nnqd
    from torch.ao.nn.quantized.modules.conv import _ConvNd

    return (
        ((_ConvNd, nnq.Linear), _weight_and_bias),  # dynamic Linear and the fused forms subclass these
        ((nnq.Embedding, nnq.EmbeddingBag), _embedding),
        ((nnqd.LSTM, nnqd.GRU), _recurrent),
    )


def packing(module: nn.Module) -> Packing | None:
    """The packed weights of a quantized layer, or None for any other module."""
    read = _reader(module)
    return None if read is None else read(module)


def packs(module: nn.Module) -> bool:
    """True for a quantized layer holding packed weights (what `packing` reads, without unpacking them)."""
    return _reader(module) is not None


def _reader(module: nn.Module) -> Callable[[nn.Module], Packing] | None:
    if not type(module).__module__.startswith("torch.ao.nn."):
        return None
    return next((read for classes, read in _readers() if isinstance(module, classes)), None)


def is_packed_data(module: nn.Module, value: object) -> bool:
    """True for a packed-weights object (a torch.classes object) held by a quantized layer or the holder
    it keeps them in (`LinearPackedParams`, the LSTM's `PackedParameter`): what `packing` reads; or what
    a layer built `without_packing` holds in its place."""
    return isinstance(value, (torch.ScriptObject, Unpacked)) and type(module).__module__.startswith("torch.ao.nn.quantized")


class Unpacked:
    """What a quantized conv built `without_packing` holds where its constructor would keep packed weights."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, object]) -> Unpacked:
        return self


# The ops a quantized conv's constructor packs its (zero) weights with, and stores what they return and nothing
# else: a tenth of a second for a ResNet's convs, spent on weights the package sets through the layer's setter.
_CONV_PACKING = frozenset(f"quantized::{kind}{n}d_prepack" for kind in ("conv", "conv_transpose") for n in (1, 2, 3))


class _WithoutPacking(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        if isinstance(func, torch._ops.OpOverloadPacket) and func._qualified_op_name in _CONV_PACKING:
            return Unpacked()
        return func(*args, **(kwargs or {}))


def without_packing() -> TorchFunctionMode:
    """A mode in which quantized convs are built without packing their weights: for a layer compared
    without them (see rebuild.mismatch, `packed`); any other op runs as it would."""
    return _WithoutPacking()


def set_packed(module: nn.Module, packed: Packing) -> None:
    """Set packed weights through the layer's setter, as the package's loader does."""
    setter = getattr(module, packed.setter)
    if packed.by_name:
        setter(dict(zip(packed.names, packed.tensors)))
    else:
        setter(*packed.tensors)


def needs_cpu(module: nn.Module) -> bool:
    """True when `module` or a module inside it holds packed weights (their constructors pack on the CPU:
    the quantized kernels have no meta implementation) or is a reference quantized layer (its constructor
    reads its weight axis with `.item()`), so the tree is built on the CPU."""
    return any(packs(m) or type(m).__module__.startswith(_REFERENCE) for m in module.modules())


def float_class(cls: type) -> type | None:
    """The torch.nn layer a reference quantized layer stands in for (`nnqr.Conv2d` -> `nn.Conv2d`), else None."""
    if not cls.__module__.startswith(_REFERENCE):
        return None
    return next((base for base in cls.__mro__[1:] if base.__module__.startswith("torch.nn.modules.")), None)


def reference_qparams(module: nn.Module) -> dict[str, Any]:
    """The `weight_qparams` a reference quantized layer (`nnqr.Linear`, `nnqr.Conv2d`) was built with;
    its scale and zero point are its buffers (filled from the weights file)."""
    params: dict[str, Any] = {"qscheme": module.weight_qscheme, "dtype": module.weight_dtype}
    if module.weight_dtype in (torch.quint8, torch.qint8, torch.quint4x2, torch.qint32):
        params.update(scale=module.weight_scale, zero_point=module.weight_zero_point)
        if module.weight_qscheme in (torch.per_channel_affine, torch.per_channel_affine_float_qparams):
            params["axis"] = module.weight_axis_int
    if module.is_decomposed:
        params["is_decomposed"] = True
    for key in ("quant_min", "quant_max"):
        if (value := getattr(module, f"weight_{key}")) is not None:
            params[key] = value
    return params


def output_qparams(module: nn.Module) -> dict[str, Any]:
    """A packed layer's output scale and zero point (plain attributes its constructor sets to 1.0 and 0)."""
    if not packs(module):
        return {}
    return {name: vars(module)[name] for name in OUTPUT_QPARAMS if isinstance(vars(module).get(name), (int, float))}


# quantized tensors --------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantizedParts:
    """A quantized tensor as plain tensors: its integer values, scales and zero points, and its axis."""

    values: torch.Tensor
    scale: torch.Tensor
    zero_point: torch.Tensor
    axis: int | None  # None: one scale and zero point for the whole tensor
    qscheme: str


# The integer dtype each quantized dtype holds one value per element in (sub-byte ones pack several).
INTEGER_DTYPES = {torch.qint8: torch.int8, torch.quint8: torch.uint8, torch.qint32: torch.int32}


def integer_values(tensor: torch.Tensor) -> torch.Tensor:
    """A quantized tensor's integer values: a view of its own memory where each element is one
    integer (`int_repr()` copies them: 4 ms of a quantized ResNet-18's export), else `int_repr()`."""
    dtype = INTEGER_DTYPES.get(tensor.dtype)
    if dtype is None:
        return tensor.int_repr()
    view = torch.empty(0, dtype=dtype, device=tensor.device)
    return view.set_(tensor.untyped_storage(), tensor.storage_offset(), tensor.shape, tensor.stride())


def _plainly_laid_out(values: torch.Tensor) -> torch.Tensor:
    """`values` laid out plainly (storages.is_plain), so never saved as a view of a storage: the loader
    rebuilds a quantized tensor from one saved tensor. fbgemm on AVX2 unpacks a 1x1 conv's weight with
    strides [16, 1, 16, 16], which `contiguous()` keeps (torch calls that layout contiguous); the
    packing repacks it either way."""
    values = values.contiguous()
    return values if is_plain(values) else values.clone(memory_format=torch.contiguous_format)


def split_quantized(tensor: torch.Tensor, where: str) -> QuantizedParts:
    """The plain tensors that rebuild `tensor`; FxExportError for a scheme the loader cannot rebuild."""
    scheme = tensor.qscheme()
    values = _plainly_laid_out(integer_values(tensor))
    if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scale = torch.tensor(tensor.q_scale(), dtype=torch.float64)
        zero_point = torch.tensor(tensor.q_zero_point(), dtype=torch.int64)
        return QuantizedParts(values, scale, zero_point, None, "per_tensor_affine")
    if scheme in (torch.per_channel_affine, torch.per_channel_symmetric, torch.per_channel_affine_float_qparams):
        scales = tensor.q_per_channel_scales().contiguous()
        zero_points = tensor.q_per_channel_zero_points().contiguous()
        return QuantizedParts(values, scales, zero_points, tensor.q_per_channel_axis(), str(scheme).removeprefix("torch."))
    raise FxExportError(f"tensor {where!r} is quantized with {scheme}, which fxexport cannot store; dequantize it first")
