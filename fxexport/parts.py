"""Tensors stored as parts: a quantized tensor as its integer values, scales and zero points; a tensor
subclass (torchao's `Int8Tensor`) as its inner tensors. Each part is an entry of its own in the
weight files (kind "part"); the loader puts the tensor together again (see quantized.py)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

from .errors import FxExportError
from .imports import ImportTable
from .ir import QuantizedIR, SubclassIR, TensorIR
from .literals import function_reference, literal
from .quantized import SCALE, ZERO_POINT, split_quantized


def _part(key: str, value: torch.Tensor) -> TensorIR:
    return TensorIR(key, "part", tuple(value.shape), str(value.dtype).removeprefix("torch."), False, False, value.detach())


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def is_subclass(tensor: torch.Tensor, kind: str, key: str) -> bool:
    """True for a tensor subclass that can be stored as its inner tensors; FxExportError for one that cannot."""
    if is_traceable_wrapper_subclass(tensor):
        return True
    if type(tensor).__torch_dispatch__ is not torch.Tensor.__torch_dispatch__:
        raise FxExportError(
            f"{kind} {key!r} is a {_class_name(type(tensor))} (a tensor subclass) without __tensor_flatten__ and "
            "__tensor_unflatten__, so fxexport cannot store it as plain tensors; dequantize it or use a plain tensor"
        )
    return False


def subclass_parts(key: str, kind: str, tensor: torch.Tensor, imports: ImportTable) -> tuple[SubclassIR, list[TensorIR]]:
    """How to rebuild a tensor subclass (its class and flatten context as code), and its inner tensors."""
    cls = type(tensor)
    names, context = tensor.__tensor_flatten__()  # type: ignore[attr-defined]
    inner = {name: getattr(tensor, name) for name in names}
    try:
        nested = next((n for n, t in inner.items() if type(t) not in (torch.Tensor, nn.Parameter)), None)
        if nested is not None:
            raise FxExportError(f"its inner tensor {nested!r} is itself a {type(inner[nested]).__qualname__}")
        cls_code = function_reference(cls, imports, "its class")
        context_code = literal(context, imports, lambda _: None, "its flatten context")
    except FxExportError as error:
        raise FxExportError(
            f"{kind} {key!r} is a {_class_name(cls)} (a tensor subclass) that fxexport cannot store as plain tensors: "
            f"{error}; dequantize it or use a plain tensor"
        ) from error
    subclass = SubclassIR(_class_name(cls), cls_code, tuple(names), context_code, tuple(tensor.shape), tuple(tensor.stride()))
    return subclass, [_part(f"{key}.{name}", value) for name, value in inner.items()]


def quantized_parts(key: str, tensor: torch.Tensor) -> tuple[QuantizedIR, torch.Tensor, list[TensorIR]]:
    """How to rebuild a quantized tensor, its integer values (stored under its key), and its scales and zero points."""
    split = split_quantized(tensor, key)
    rebuild = QuantizedIR(str(tensor.dtype).removeprefix("torch."), split.qscheme, split.axis, key + SCALE, key + ZERO_POINT)
    return rebuild, split.values, [_part(key + SCALE, split.scale), _part(key + ZERO_POINT, split.zero_point)]
