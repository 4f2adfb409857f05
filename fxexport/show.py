"""show: a summary of an export folder, from its manifest and safetensors headers only.

Nothing here imports the exported package or unpickles anything, so it is safe on a folder
from anywhere. `fxexport verify` checks the files; `show` only describes them.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .diff import export_manifest
from .errors import FxExportError
from .module_paths import depth as path_depth
from .module_paths import prefixes, within
from .write import MANIFEST

MAX_HEADER = 100 << 20  # safetensors' own limit on the JSON header
MAX_LISTED = 20  # tensors listed per kind; fxexport.json lists them all


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the manifest, with its size from the weight file's header (0 if unknown, or a view)."""

    key: str
    kind: str  # "parameter", "buffer", "constant", or "storage" (bytes that views share)
    dtype: str
    shape: tuple[int, ...]
    persistent: bool
    requires_grad: bool
    nbytes: int
    storage: str = ""  # for a tensor rebuilt as a view: the key of the stored bytes it views
    parts: tuple[str, ...] = ()  # for a tensor subclass: the keys of the inner tensors it is stored as

    @property
    def stored_as(self) -> tuple[str, ...]:
        """The weight-file entries that hold its bytes."""
        return self.parts or (self.storage or self.key,)

    @property
    def owner(self) -> str:
        """Dotted path of the module that holds the tensor ("" for the root)."""
        return self.key.rpartition(".")[0]

    @property
    def numel(self) -> int:
        """Number of elements."""
        count = 1
        for size in self.shape:
            count *= size
        return count


@dataclass(frozen=True)
class ModuleEntry:
    """One module, with the totals of the tensors stored in it and below it."""

    path: str  # "" for the root
    class_name: str  # "" when the manifest does not record modules (older exports)
    parameters: int  # number of parameter elements
    buffers: int  # number of buffer tensors
    nbytes: int


@dataclass(frozen=True)
class WeightFile:
    """One weight file: its tensor count, the bytes of tensor data, and its size on disk."""

    name: str
    tensors: int
    data_bytes: int
    file_bytes: int


@dataclass(frozen=True)
class ShowResult:
    """Everything `fxexport show` prints; `report()` renders it."""

    folder: Path
    class_name: str
    torch: str
    fxexport: str
    modules: tuple[ModuleEntry, ...]
    tensors: tuple[TensorEntry, ...]
    weight_files: tuple[WeightFile, ...]
    warnings: tuple[str, ...]
    problems: tuple[str, ...]
    inline_modules: tuple[str, ...] = ()  # "layer1.0 (BasicBlock): why it stays written out in its caller"

    @property
    def ok(self) -> bool:
        """True when no problems were found."""
        return not self.problems

    def report(self, depth: int | None = None) -> str:
        """The summary as text; `depth` limits the module tree (0: the root only)."""
        head = f"{self.folder.name}: {self.class_name}, exported by fxexport {self.fxexport} with torch {self.torch}"
        shown = [m for m in self.modules if depth is None or path_depth(m.path) <= depth]
        sections = [head, _module_table(shown), _tensor_list(self, "buffer"), _tensor_list(self, "constant"),
                    _frozen(self), _weights(self), _bullets("modules written inline in their caller", self.inline_modules),
                    _bullets("warnings", self.warnings)]  # fmt: skip
        sections += [_bullets("problems", self.problems)] if self.problems else []
        return "\n\n".join(s for s in sections if s)


def read_header(path: Path) -> dict[str, Any]:
    """The JSON header of a safetensors file, read without loading any tensor; ValueError if damaged."""
    with open(path, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise ValueError("shorter than a safetensors header")
        (length,) = struct.unpack("<Q", prefix)
        if length > min(MAX_HEADER, path.stat().st_size - 8):
            raise ValueError(f"header length {length} does not fit in the file")
        header = json.loads(handle.read(length))
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    return header


def show(folder: str | Path) -> ShowResult:
    """Summarise the export at `folder`; FxExportError if it is not an export folder."""
    folder = Path(folder)
    manifest = export_manifest(folder)
    sizes, files, problems = _read_weights(folder, manifest)
    try:
        tensors = tuple(
            _tensor(key, entry, sizes.get(key, 0)) for key, entry in sorted(_dict(manifest, "tensors").items())
        )
        modules = _modules(manifest, tensors)
    except (AttributeError, TypeError, ValueError) as error:
        raise FxExportError(f"{str(folder / MANIFEST)!r} is not a valid manifest: {error}") from error
    problems += [f"tensor {t.key!r} is in the manifest but in no weight file" for t in tensors if any(k not in sizes for k in t.stored_as)]
    return ShowResult(
        folder=folder,
        class_name=str(manifest.get("module_name", "?")),
        torch=str(manifest.get("torch", "?")),
        fxexport=str(manifest.get("fxexport", "?")),
        modules=modules,
        tensors=tensors,
        weight_files=tuple(files),
        warnings=tuple(map(str, manifest.get("warnings", []))),
        problems=tuple(problems),
        inline_modules=_inline_modules(manifest),
    )


def _inline_modules(manifest: dict[str, Any]) -> tuple[str, ...]:
    entries = manifest.get("inline_modules", [])
    if not isinstance(entries, list):
        return ()
    return tuple(f"{e.get('path', '?')} ({e.get('class', '?')}): {e.get('reason', '?')}" for e in entries if isinstance(e, dict))


def _dict(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    value = manifest.get(key, {})
    return value if isinstance(value, dict) else {}


def _read_weights(folder: Path, manifest: dict[str, Any]) -> tuple[dict[str, int], list[WeightFile], list[str]]:
    sizes: dict[str, int] = {}
    files: list[WeightFile] = []
    problems: list[str] = []
    for name in sorted(n for n in _dict(manifest, "files") if n.endswith(".safetensors")):
        path = folder / name
        try:
            found = _tensor_sizes(read_header(path))
        except (OSError, KeyError, TypeError, ValueError) as error:
            problems.append(f"{name}: cannot read the safetensors header ({error}); run: fxexport verify {folder}")
            continue
        sizes.update(found)
        files.append(WeightFile(name, len(found), sum(found.values()), path.stat().st_size))
    return sizes, files, problems


def _tensor_sizes(header: dict[str, Any]) -> dict[str, int]:
    """Bytes of each tensor, from its `data_offsets`."""
    sizes = {}
    for key, entry in header.items():
        if key != "__metadata__":
            start, end = entry["data_offsets"]
            sizes[key] = int(end) - int(start)
    return sizes


def _tensor(key: str, entry: dict[str, Any], nbytes: int) -> TensorEntry:
    kind, dtype = str(entry.get("kind", "?")), str(entry.get("dtype", "?"))
    shape = tuple(int(size) for size in entry.get("shape", ()))
    storage = str(entry.get("storage", ""))
    parts = tuple(str(part) for part in entry.get("subclass", {}).get("parts", ()))
    return TensorEntry(
        key, kind, dtype, shape, bool(entry.get("persistent", True)), bool(entry.get("requires_grad")), nbytes, storage, parts
    )


def _modules(manifest: dict[str, Any], tensors: tuple[TensorEntry, ...]) -> tuple[ModuleEntry, ...]:
    """The recorded module tree, or (older manifests) the owners of the tensors, with subtree totals."""
    recorded = manifest.get("modules")
    if isinstance(recorded, list) and recorded:
        pairs = [(str(path), str(cls)) for path, cls in recorded]
    else:
        owners = {"", *(p for t in tensors for p in prefixes(t.owner))}
        pairs = [(path, "") for path in sorted(owners, key=lambda p: p.split("."))]
    return tuple(_totals(path, cls, tensors) for path, cls in pairs)


def _totals(path: str, class_name: str, tensors: tuple[TensorEntry, ...]) -> ModuleEntry:
    inside = [t for t in tensors if within(t.owner, path)]
    parameters = sum(t.numel for t in inside if t.kind == "parameter")
    buffers = sum(1 for t in inside if t.kind == "buffer")
    return ModuleEntry(path, class_name, parameters, buffers, sum(t.nbytes for t in inside))


def _label(name: str) -> str:
    """A name as is when it prints on one line, else its repr (names may be anything)."""
    return name if name.isprintable() and name.strip() == name and name else repr(name)


def _module_table(modules: list[ModuleEntry]) -> str:
    rows = [("module", "class", "parameters", "buffers", "bytes")]
    for m in modules:
        name = "  " * path_depth(m.path) + (_label(m.path.rpartition(".")[2]) if m.path else "(root)")
        rows.append((name, m.class_name, f"{m.parameters:,}", f"{m.buffers:,}", f"{m.nbytes:,}"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(r[2:], widths[2:]))
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines)


def _tensor_list(result: ShowResult, kind: str) -> str:
    items = [t for t in result.tensors if t.kind == kind]
    lines = [f"  {_label(t.key)}: {t.dtype} {list(t.shape)}{_flag(t)}" for t in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        lines.append(f"  ... and {len(items) - MAX_LISTED} more (all are in fxexport.json)")
    return f"{kind}s ({len(items)}):\n" + "\n".join(lines) if items else ""


def _flag(tensor: TensorEntry) -> str:
    flags = ["not persistent"] if tensor.kind == "buffer" and not tensor.persistent else []
    flags += [f"a view of {_label(tensor.storage)}"] if tensor.storage and tensor.storage != tensor.key else []
    return f" ({', '.join(flags)})" if flags else ""


def _frozen(result: ShowResult) -> str:
    keys = [_label(t.key) for t in result.tensors if t.kind == "parameter" and not t.requires_grad]
    return _bullets("parameters with requires_grad=False", keys) if keys else ""


def _weights(result: ShowResult) -> str:
    lines = [
        f"  {w.name}: {w.tensors} tensors, {w.data_bytes:,} bytes of data, {w.file_bytes:,} bytes on disk"
        for w in result.weight_files
    ]
    return "weights:\n" + "\n".join(lines) if lines else "weights: none"


def _bullets(title: str, items: tuple[str, ...] | list[str]) -> str:
    return f"{title}:\n" + "\n".join(f"  - {item}" for item in items) if items else f"{title}: none"
