"""Tensors that share storage, or are not laid out plainly, are saved once as that storage.

A transposed parameter, two slices of one tensor, a buffer that views a parameter: each is
rebuilt on load as a view (`Tensor.set_` with the source's size, stride and storage offset)
of one saved storage, so strides, offsets (and so memory alignment) and sharing are the
source's. Kernels pick their paths by these; a contiguous copy may round differently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import torch

from .ir import TensorIR, ViewIR


def share_storages(tensors: Iterable[TensorIR]) -> tuple[tuple[TensorIR, ...], tuple[TensorIR, ...]]:
    """(tensors, storages): views get a ViewIR; storages that no tensor covers become entries of their own."""
    tensors = tuple(tensors)
    groups: dict[tuple[str, int], list[TensorIR]] = {}
    for item in tensors:
        # A quantized tensor's integer values may view its memory (quantized.integer_values): saved as themselves.
        identity = None if item.quantized is not None else _storage_identity(item.tensor)
        if identity is not None:
            groups.setdefault(identity, []).append(item)
    taken = {t.key for t in tensors}
    views: dict[str, ViewIR] = {}
    storages: list[TensorIR] = []
    for members in groups.values():
        if len(members) == 1 and is_plain(members[0].tensor):
            continue
        span = max(_span(m.tensor) for m in members)
        base = next((m for m in members if is_plain(m.tensor) and m.nbytes == span), None)  # saved as itself
        if base is None:
            storage = _storage_entry(members, span, taken)
            taken.add(storage.key)
            storages.append(storage)
        key = storage.key if base is None else base.key
        views.update((m.key, ViewIR(key, int(m.tensor.storage_offset()), tuple(m.tensor.stride()))) for m in members)
    return tuple(t if views.get(t.key) is t.view else dataclasses.replace(t, view=views.get(t.key)) for t in tensors), tuple(storages)


def _storage_identity(tensor: torch.Tensor) -> tuple[str, int] | None:
    """The storage a tensor's bytes are in, or None when it has no plain storage to share."""
    if tensor.layout != torch.strided or tensor.is_quantized or tensor.device.type == "meta" or tensor.numel() == 0:
        return None
    try:
        pointer = tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # a tensor subclass without storage
        return None
    return (str(tensor.device), pointer) if pointer else None


def is_plain(tensor: torch.Tensor) -> bool:
    """Laid out as a new tensor of its shape would be (strides of size-1 dimensions included)."""
    strides, step = [], 1
    for size in reversed(tensor.shape):
        strides.append(step)
        step *= max(size, 1)
    return tensor.storage_offset() == 0 and tensor.stride() == tuple(reversed(strides))


def _span(tensor: torch.Tensor) -> int:
    """Bytes of its storage from the start to the end of its last element."""
    last = int(tensor.storage_offset()) + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return (last + 1) * tensor.element_size()


def _storage_entry(members: list[TensorIR], span: int, taken: set[str]) -> TensorIR:
    """The storage's first `span` bytes (to the end of the last member), as a 1-d tensor."""
    dtypes = {m.tensor.dtype for m in members}
    dtype = dtypes.pop() if len(dtypes) == 1 else torch.uint8
    if span % dtype.itemsize:
        dtype = torch.uint8
    first = members[0].tensor
    data = torch.empty(0, dtype=dtype, device=first.device).set_(first.untyped_storage(), 0, (span // dtype.itemsize,), (1,))
    key = f"{members[0].key}@storage"
    while key in taken:
        key += "_"
    return TensorIR(key, "storage", tuple(data.shape), str(dtype).removeprefix("torch."), False, False, data)
