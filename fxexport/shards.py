"""Plan the weight files: one safetensors file, several shards with an index, or none."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

from . import jsontext
from .errors import FxExportError
from .ir import PackageIR, TensorIR

SINGLE = "weights.safetensors"
INDEX = "weights.safetensors.index.json"
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_SIZE = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*([a-zA-Z]*)\s*$", re.ASCII)
MIN_SHARD_SIZE = 10**6


def _bytes(text: str | int) -> int:
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise FxExportError(f"bad size {text!r}: use a number of bytes or e.g. '500MB', '2GiB'")
    return int(Decimal(match.group(1)) * _UNITS[match.group(2).lower()])


def parse_size(text: str | int) -> int:
    """A shard size: `500MB`, `2GiB`, `1.5GB` or a number of bytes, at least MIN_SHARD_SIZE (1MB)."""
    size = _bytes(text)
    if size < MIN_SHARD_SIZE:
        raise FxExportError(
            f"max shard size {text!r} is under the 1MB minimum (a tensor is never split, so smaller shards only "
            "multiply files); use e.g. '500MB' or '2GB'"
        )
    return size


def _shards(tensors: list[TensorIR], limit: int | None) -> list[list[TensorIR]]:
    shards: list[list[TensorIR]] = [[]]
    size = 0
    for tensor in tensors:
        if limit is not None and shards[-1] and size + tensor.nbytes > limit:
            shards.append([])
            size = 0
        shards[-1].append(tensor)
        size += tensor.nbytes
    return shards


def plan_weights(package: PackageIR, *, weights: str = "safetensors", max_shard_size: str | int | None = None) -> PackageIR:
    """Assign each tensor to a weight file (`weights="none"`: code only, no files)."""
    if weights not in ("safetensors", "none"):
        raise FxExportError(f"unknown weights format {weights!r}: use 'safetensors' or 'none'")
    if weights == "none" or not package.tensors:
        return dataclasses.replace(package, weight_files=())
    on_meta = next((t for t in package.tensors if t.tensor.is_meta), None)
    if on_meta is not None:
        raise FxExportError(f"{on_meta.kind} {on_meta.key!r} is on the meta device and has no values to export; use --weights none")
    limit = None if max_shard_size is None else parse_size(max_shard_size)
    shards = _shards(sorted(package.stored, key=lambda t: t.key), limit)
    names = [SINGLE] if len(shards) == 1 else [f"weights-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    files = {t.key: name for name, shard in zip(names, shards) for t in shard}

    def placed(item: TensorIR) -> TensorIR:  # a view is in the file of the storage it views; a subclass, of its first part
        if item.subclass is not None:
            return item.in_file(files[f"{item.key}.{item.subclass.names[0]}"])
        return item.in_file(files[item.key if item.view is None else item.view.storage])

    tensors, storages, parts = (tuple(map(placed, group)) for group in (package.tensors, package.storages, package.parts))
    return dataclasses.replace(package, tensors=tensors, storages=storages, parts=parts, weight_files=tuple(names))


def index_json(package: PackageIR) -> str | None:
    """The Hugging Face style index of a sharded export, or None for one file."""
    if len(package.weight_files) < 2:
        return None
    data = {"metadata": {"total_size": package.weight_bytes}, "weight_map": {t.key: t.file for t in sorted(package.stored, key=lambda t: t.key)}}
    return jsontext.dumps(data) + "\n"
