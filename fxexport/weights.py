"""Weights as safetensors, written tensor by tensor (never a second full copy in memory)."""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

import torch

from .digests import ALGORITHM, Digest, Hasher, hasher
from .errors import FxExportError
from .ir import TensorIR

DTYPES = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
    "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16", "bfloat16": "BF16",
    "float32": "F32", "float64": "F64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
    "complex64": "C64",
}  # fmt: skip
_CHUNK = 64 << 20
# Where each tensor starts in the file, and so in memory when the file is mapped: oneDNN and MKL
# pick their kernels (and summation order) by the alignment of the data, so a tensor must sit
# as the source's does, on a 64-byte boundary (what torch's CPU allocator gives).
ALIGNMENT = 64


def header(tensors: Iterable[TensorIR], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors header: JSON with sorted keys, padded with spaces so the data starts at a multiple of 64."""
    entries: dict[str, object] = {"__metadata__": dict(metadata or {})}
    offset = 0
    for item in tensors:
        if item.dtype not in DTYPES:
            raise FxExportError(f"tensor {item.key!r} has dtype {item.dtype}, which safetensors cannot store")
        entries[item.key] = {"dtype": DTYPES[item.dtype], "shape": list(item.shape), "data_offsets": [offset, offset + item.nbytes]}
        offset += item.nbytes
    text = json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % ALIGNMENT)
    return struct.pack("<Q", len(text)) + text


def layout(tensors: Iterable[TensorIR]) -> list[TensorIR]:
    """The order of the tensors in a file: as many as can be start at a multiple of 64 bytes, every
    one at a multiple of its element size (safetensors leaves no gaps between tensors).

    Tensors whose size is a multiple of 64 come first, widest dtype first, then by key. The rest
    follow by element size, widest first (so each stays aligned for its dtype): the largest goes
    at each 64-byte place, then the largest that ends on one, else the smallest. Those that start
    between (small ones, as a rule) are copied to aligned memory on load.
    """
    items = sorted(tensors, key=lambda t: (-t.tensor.element_size(), t.key))
    order = [t for t in items if t.nbytes % ALIGNMENT == 0]
    position = 0
    for size in sorted({t.tensor.element_size() for t in items}, reverse=True):
        buckets: dict[int, list[TensorIR]] = {}  # size mod 64 -> tensors, smallest first
        odd = (t for t in items if t.nbytes % ALIGNMENT and t.tensor.element_size() == size)
        for item in sorted(odd, key=lambda t: (t.nbytes, t.key)):
            buckets.setdefault(item.nbytes % ALIGNMENT, []).append(item)
        while buckets:
            rest, largest = _pick(buckets, position % ALIGNMENT)
            order.append(buckets[rest].pop() if largest else buckets[rest].pop(0))
            position += order[-1].nbytes
            if not buckets[rest]:
                del buckets[rest]
    return order


def _pick(buckets: dict[int, list[TensorIR]], misaligned: int) -> tuple[int, bool]:
    """(bucket, take its largest): at a 64-byte place the largest tensor; else the largest that
    ends on one; else the smallest."""
    if not misaligned:
        return max(buckets, key=lambda rest: (buckets[rest][-1].nbytes, rest)), True
    if ALIGNMENT - misaligned in buckets:
        return ALIGNMENT - misaligned, True
    return min(buckets, key=lambda rest: (buckets[rest][0].nbytes, rest)), False


# dtypes whose CPU tensors numpy views as they are (not bfloat16 or float8).
_NUMPY_DTYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                 torch.float64, torch.complex64}  # fmt: skip


def _tensor_pieces(tensor: torch.Tensor) -> Iterator[memoryview]:
    """The tensor's bytes in chunks: views of its memory, copies only of a tensor off the CPU or strided."""
    if _whole_view(tensor):
        yield tensor.detach().numpy().data.cast("B")  # a quarter of the time of the path below
        return
    flat = tensor.detach().reshape(-1)
    step = max(1, _CHUNK // max(1, flat.element_size()))
    for start in range(0, flat.numel(), step):
        chunk = flat[start : start + step].cpu().contiguous()  # a view unless the tensor is elsewhere
        yield chunk.view(torch.uint8).numpy().data


def _whole_view(tensor: torch.Tensor) -> bool:
    """True for a tensor numpy can view whole as bytes: one chunk, contiguous on the CPU (a model of
    thousands of small tensors spends its writing time getting at their bytes)."""
    return (
        tensor.dtype in _NUMPY_DTYPES and tensor.device.type == "cpu" and tensor.numel() > 0 and tensor.dim() > 0 and tensor.is_contiguous()
        and not tensor.is_conj() and not tensor.is_neg() and tensor.numel() * tensor.element_size() <= _CHUNK
    )  # fmt: skip


def write_safetensors(
    path: Path,
    tensors: Iterable[TensorIR],
    advance: Callable[[int], None] = lambda n: None,
    metadata: dict[str, str] | None = None,
    digest: Hasher | None = None,
) -> None:
    """Write `tensors` chunk by chunk, in `layout` order (its digest: safetensors_digest, or `digest`
    updated with each chunk as it is written); `advance(count)` as tensor bytes are written.

    The header is padded so the data starts at a multiple of 64 bytes, and the layout puts
    every tensor it can on a multiple of 64, so a loader can map those in place, aligned as
    freshly allocated tensors are.
    """
    ordered = layout(tensors)
    head = header(ordered, metadata)
    update = digest.update if digest is not None else lambda piece: None
    update(head)
    with open(path, "wb", buffering=0) as out:
        _preallocate(out.fileno(), len(head) + sum(item.nbytes for item in ordered))
        writer = _Writer(out, advance)
        writer.add(memoryview(head), counted=False)
        for item in ordered:
            for piece in _tensor_pieces(item.tensor):
                update(piece)
                writer.add(piece)
        writer.flush()


def _preallocate(fd: int, size: int) -> None:
    """Give the new file its `size` bytes of blocks before they are written: ext4 then takes the writes in
    a quarter less kernel time (19 MB: 5.1 -> 4.0 ms), reserving no blocks write by write. Where the system or
    the file system cannot, nothing: the writes allocate as they go, and meet any real problem themselves."""
    if _FALLOCATE is not None:
        _FALLOCATE(fd, 0, 0, size)


def _linux_fallocate() -> Callable[[int, int, int, int], int] | None:
    """Linux's fallocate, called through the C library: not os.posix_fallocate, which, where the file
    system allocates no blocks ahead (NFS 3, ZFS before 2.2), writes to every block first instead."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        library = ctypes.CDLL(None, use_errno=True)
        function = getattr(library, "fallocate64", None) or library.fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    function.restype = ctypes.c_int
    return cast("Callable[[int, int, int, int], int]", function)


_FALLOCATE = _linux_fallocate()


# Bytes per system call. Writing a new file in calls of more than 1 MB costs ten times the kernel time
# of calls of 1 MB here (Linux 6.18, ext4: 50 ms against 5 ms for 19 MB), and never less elsewhere.
_WRITE_BYTES = 1 << 20


class _Writer:
    """Pieces written in calls of at most _WRITE_BYTES: small pieces gathered (writev), large ones cut."""

    def __init__(self, out: BinaryIO, advance: Callable[[int], None]) -> None:
        self._fd, self._advance = out.fileno(), advance
        self._batch: list[memoryview] = []
        self._size = self._counted = 0

    def add(self, piece: memoryview, counted: bool = True) -> None:
        view = memoryview(piece).cast("B")
        for start in range(0, len(view), _WRITE_BYTES):
            part = view[start : start + _WRITE_BYTES]
            if self._size + len(part) > _WRITE_BYTES or len(self._batch) >= _IOV_MAX:
                self.flush()
            self._batch.append(part)
            self._size += len(part)
            self._counted += len(part) if counted else 0

    def flush(self) -> None:
        """Write what was added."""
        views = self._batch
        while views:
            done = os.writev(self._fd, views) if _HAS_WRITEV else os.write(self._fd, views[0])
            while views and done >= len(views[0]):
                done -= len(views.pop(0))
            if views:
                views[0] = views[0][done:]
        if self._counted:
            self._advance(self._counted)
        self._batch, self._size, self._counted = [], 0, 0


_HAS_WRITEV = hasattr(os, "writev")
_IOV_MAX = min(1024, os.sysconf("SC_IOV_MAX")) if hasattr(os, "sysconf") and "SC_IOV_MAX" in os.sysconf_names else 1024


def safetensors_digest(
    tensors: Iterable[TensorIR], metadata: dict[str, str] | None = None, stop: threading.Event | None = None
) -> Digest | None:
    """The digest of the file write_safetensors writes for `tensors`, from the tensors' memory (the
    same bytes: no file is read), so it can run on a thread while the file is written; None once `stop` is set."""
    ordered = layout(tensors)
    state = hasher()
    state.update(header(ordered, metadata))
    for item in ordered:
        for piece in _tensor_pieces(item.tensor):
            if stop is not None and stop.is_set():
                return None
            state.update(piece)
    return Digest(ALGORITHM, state.hexdigest())
