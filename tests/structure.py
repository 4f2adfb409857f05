"""An output's structure and leaves, named by class name and fields: equal for a library class and its stand-in;
and how a module's tensors are laid out in memory (sharing, strides, alignment).

Used on both sides of a fresh-process check (torch only), so a namedtuple or ModelOutput
rebuilt by a stand-in compares equal to the library's own when its name, fields and order
are the same. `torch.utils._pytree` would compare the classes themselves (or skip
unregistered ones as leaves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

PLAIN = {"immutable_list": "list", "immutable_dict": "dict"}


def flatten(value: Any) -> tuple[list[Any], Any]:
    """(leaves in order, a JSON-able description of the containers around them)."""
    leaves: list[Any] = []
    return leaves, _describe(value, leaves)


def _describe(value: Any, leaves: list[Any]) -> Any:
    kind = PLAIN.get(type(value).__name__, type(value).__name__)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return {"namedtuple": kind, "fields": list(type(value)._fields), "items": [_describe(v, leaves) for v in value]}
    if isinstance(value, Mapping):
        return {"mapping": kind, "keys": list(value), "items": [_describe(v, leaves) for v in value.values()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        return {"dataclass": kind, "fields": names, "items": [_describe(getattr(value, n), leaves) for n in names]}
    if isinstance(value, (list, tuple)):
        return {"sequence": kind, "items": [_describe(v, leaves) for v in value]}
    leaves.append(value)
    return "tensor" if isinstance(value, torch.Tensor) else kind


def _named(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    return [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]


def _tensors(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """Tensors with storage of their own (a tensor subclass keeps its data in inner tensors)."""
    return [(key, tensor) for key, tensor in _named(model)
            if tensor.numel() and tensor.device.type != "meta" and not is_traceable_wrapper_subclass(tensor)]  # fmt: skip


def tensor_sharing(model: nn.Module) -> list[list[str]]:
    """Groups of names that hold the same tensor object (ties)."""
    groups: dict[int, list[str]] = {}
    for key, tensor in _named(model):
        groups.setdefault(id(tensor), []).append(key)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def storage_sharing(model: nn.Module) -> list[list[str]]:
    """Groups of tensor names whose data lives in one storage (ties, views of one another)."""
    groups: dict[int, list[str]] = {}
    for key, tensor in _tensors(model):
        groups.setdefault(tensor.untyped_storage().data_ptr(), []).append(key)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def layouts(model: nn.Module) -> dict[str, list[Any]]:
    """Each tensor's strides and storage offset: kernels (and so results) depend on them."""
    return {key: [list(t.stride()), t.storage_offset()] for key, t in _tensors(model)}


def alignments(model: nn.Module) -> dict[str, int]:
    """Each tensor's address modulo 64: oneDNN and MKL pick kernels (and summation orders) by it."""
    return {key: t.data_ptr() % 64 for key, t in _tensors(model)}


def plain_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The state_dict as plain tensors, to compare across processes: a quantized tensor as its integer
    values, scales and zero points; packed weights (tuples, torch.classes objects) by their contents."""
    found: dict[str, torch.Tensor] = {}
    for key, value in model.state_dict().items():
        _plain_tensors(key, value, found)
    return found


def _plain_tensors(key: str, value: Any, found: dict[str, torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor) and value.is_quantized:
        found[key] = value.int_repr()
        if value.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            found[f"{key}#scale"] = torch.tensor(value.q_scale(), dtype=torch.float64)
            found[f"{key}#zero_point"] = torch.tensor(value.q_zero_point())
        else:
            found[f"{key}#scale"] = value.q_per_channel_scales()
            found[f"{key}#zero_point"] = value.q_per_channel_zero_points()
            found[f"{key}#axis"] = torch.tensor(value.q_per_channel_axis())
    elif is_traceable_wrapper_subclass(value):
        for name in value.__tensor_flatten__()[0]:
            _plain_tensors(f"{key}#{name}", getattr(value, name), found)
    elif isinstance(value, torch.Tensor):
        found[key] = value.detach()
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            _plain_tensors(f"{key}#{index}", item, found)
    elif isinstance(value, torch.ScriptObject):
        _plain_tensors(key, value.__getstate__(), found)
