"""Packed weights a GraphModule holds as bare attributes, not inside a quantized layer.

FX graph mode quantization lowers a functional `F.linear` / `F.conv2d` (a module subclassing nn.Linear
whose forward calls `F.linear`, as timm's classifier does) to `torch.ops.quantized.linear(x,
self.<path>_packed_weight_0, ...)`: the attribute is a packed-weights object of the quantized kernels,
which no code can spell and no weights file can hold. The export stores its unpacked weight and bias
(`<attribute>.weight`, `<attribute>.bias`) and the loader packs them again with the quantized op that
gives the same object (`linear_prepack`, `conv2d_prepack`, ...), given the settings it was packed with.
convert_fx also puts these objects in its model's state_dict (a state_dict hook); the package does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .errors import FxExportError

KEEP_IN_STATE_DICT = "keep_packed_in_state_dict"  # loader.py's function registering the state_dict hooks
_INSTEAD = "export the graph before it is lowered (convert_to_reference_fx in place of convert_fx keeps its weights as tensors)"


@dataclass(frozen=True)
class PackedObject:
    """A packed-weights object as the op that packs it again: `torch.ops.quantized.<op>(*tensors, *settings)`."""

    op: str
    names: tuple[str, ...]  # the tensors' names (keys `<attribute>.<name>`)
    tensors: tuple[torch.Tensor | None, ...]
    settings: tuple[Any, ...]  # the op's arguments after the tensors: stride, padding, ...


def is_packed_object(value: object) -> bool:
    """True for a packed-weights object of the quantized kernels (`LinearPackedParamsBase`, ...)."""
    return isinstance(value, torch.ScriptObject) and _kind(value).endswith("PackedParamsBase")


_CONV_SETTINGS = ("stride", "padding", "output_padding", "dilation", "groups", "transpose")


def packed_object(value: Any, where: str) -> PackedObject:  # a torch.classes object: its methods are not typed
    """How `value` is packed again; an FxExportError where it is not a linear's or a conv's, or packing its
    weights again would not give the same object."""
    kind = _kind(value)
    if kind == "LinearPackedParamsBase":
        weight, bias = value.unpack()
        found = PackedObject("linear_prepack" if weight.is_quantized else "linear_prepack_fp16", ("weight", "bias"), (weight, bias), ())
    elif kind in ("Conv2dPackedParamsBase", "Conv3dPackedParamsBase"):
        found = _conv(value, where)
    else:
        raise FxExportError(f"{where}: a packed {kind}, which fxexport cannot store: {_INSTEAD}")
    if not _same(value, _packed(found)):
        raise FxExportError(f"{where}: its {kind} does not come back the same from {found.op}, so it cannot be stored: {_INSTEAD}")
    return found


def _kind(value: torch.ScriptObject) -> str:
    return str(value._type().qualified_name()).rpartition(".")[2]


def _conv(value: Any, where: str) -> PackedObject:  # a torch.classes object: its methods are not typed
    """A conv's object. A conv1d's is a conv2d's of height 1 (its weight unpacks 4-D, its settings have two
    items), so it is packed again as that: the same object."""
    try:
        weight, bias = value.unpack()
    except RuntimeError as error:  # QNNPACK unpacks 2-D convs only
        first = str(error).strip().splitlines()[0]
        raise FxExportError(f"{where}: its {_kind(value)} cannot be unpacked ({first}), so it cannot be stored: {_INSTEAD}") from error
    dims = weight.dim() - 2
    stride, padding, dilation = (tuple(int(i) for i in items) for items in (value.stride(), value.padding(), value.dilation()))
    if value.transpose():
        output_padding = tuple(int(i) for i in value.output_padding())
        settings: tuple[Any, ...] = (stride, padding, output_padding, dilation, int(value.groups()))
        return PackedObject(f"conv_transpose{dims}d_prepack", ("weight", "bias"), (weight, bias), settings)
    return PackedObject(f"conv{dims}d_prepack", ("weight", "bias"), (weight, bias), (stride, padding, dilation, int(value.groups())))


def _packed(found: PackedObject) -> torch.ScriptObject:
    return getattr(torch.ops.quantized, found.op)(*found.tensors, *found.settings)


def _same(a: Any, b: Any) -> bool:
    """True when both unpack to the same tensors and, a conv's, hold the same settings."""
    if _kind(a) != _kind(b) or not all(map(_same_tensor, a.unpack(), b.unpack())):
        return False
    return _kind(a) == "LinearPackedParamsBase" or all(getattr(a, s)() == getattr(b, s)() for s in _CONV_SETTINGS)


def _same_tensor(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    if a is None or b is None:
        return a is b
    if a.dtype != b.dtype or a.shape != b.shape or a.is_quantized != b.is_quantized:
        return False
    if not a.is_quantized:
        return torch.equal(a, b)
    if a.qscheme() != b.qscheme() or not torch.equal(a.int_repr(), b.int_repr()):
        return False
    if a.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    return (a.q_per_channel_axis() == b.q_per_channel_axis() and torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales())
            and torch.equal(a.q_per_channel_zero_points(), b.q_per_channel_zero_points()))  # fmt: skip
