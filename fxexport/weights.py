"""Weights as safetensors, written tensor by tensor (never a second full copy in memory)."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import torch

from .errors import FxExportError
from .ir import TensorIR

DTYPES = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
    "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16", "bfloat16": "BF16",
    "float32": "F32", "float64": "F64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
    "complex64": "C64",
}  # fmt: skip
_CHUNK = 64 << 20


def header(tensors: Iterable[TensorIR], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors header: JSON with sorted keys, padded with spaces to 8 bytes."""
    entries: dict[str, object] = {"__metadata__": dict(metadata or {})}
    offset = 0
    for item in tensors:
        if item.dtype not in DTYPES:
            raise FxExportError(f"tensor {item.key!r} has dtype {item.dtype}, which safetensors cannot store")
        entries[item.key] = {"dtype": DTYPES[item.dtype], "shape": list(item.shape), "data_offsets": [offset, offset + item.nbytes]}
        offset += item.nbytes
    text = json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def _write_tensor(out: BinaryIO, hash_chunk: Callable[[memoryview], None], tensor: torch.Tensor, advance: Callable[[int], None]) -> None:
    flat = tensor.detach().reshape(-1)
    step = max(1, _CHUNK // max(1, flat.element_size()))
    for start in range(0, flat.numel(), step):
        chunk = flat[start : start + step].cpu().contiguous()  # a view unless the tensor is elsewhere
        data = chunk.view(torch.uint8).numpy().data
        out.write(data)
        hash_chunk(data)
        advance(len(data))


def write_safetensors(
    path: Path, tensors: Iterable[TensorIR], advance: Callable[[int], None] = lambda n: None, metadata: dict[str, str] | None = None
) -> str:
    """Write `tensors` in key order, chunk by chunk; returns the file's sha256.

    The hash of one chunk is computed on a second thread while the next is written (both
    release the GIL), so hashing adds little to the time of writing.
    """
    ordered = sorted(tensors, key=lambda t: t.key)
    digest = hashlib.sha256()
    with open(path, "wb") as out, ThreadPoolExecutor(max_workers=1) as hasher:
        pending: list[Future[None]] = []

        def hash_chunk(data: memoryview) -> None:
            if pending:
                pending.pop().result()
            pending.append(hasher.submit(digest.update, data))

        head = header(ordered, metadata)
        out.write(head)
        hash_chunk(memoryview(head))
        for item in ordered:
            _write_tensor(out, hash_chunk, item.tensor, advance)
        if pending:
            pending.pop().result()
    return digest.hexdigest()
