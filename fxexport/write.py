"""write: the last stage. Builds the package in a temporary folder beside the target, then renames."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import jsontext
from .bytecode import write_bytecode
from .digests import ALGORITHM, Digest, digest_of, hasher
from .errors import FxExportError
from .hashes import WeightHashes, file_tensors
from .ir import PackageIR, QuantizedIR
from .names import is_plain_identifier, sanitize
from .shards import INDEX, index_json
from .weights import write_safetensors

MANIFEST = "fxexport.json"
# The safetensors loader (and input check) module.py imports: the same text in every export, written when imported.
LOADER = "loader.py"
# 2: files map to "blake3:<hex>" (1: bare sha256 hex).
MANIFEST_FORMAT = 2


def check_target(folder: Path, overwrite: bool) -> None:
    """Refuse, before any work, a target that cannot or must not be written."""
    if folder.name in ("", ".."):  # "", ".", "/" and ".." name no new folder
        raise FxExportError(f"output path {str(folder)!r} does not end in a package name; name the folder to write, e.g. exports/my_model")
    if not is_plain_identifier(folder.name):
        raise FxExportError(
            f"output folder name {folder.name!r} is not a valid Python package name; use e.g. {sanitize(folder.name)!r}"
        )
    if folder.exists() and not folder.is_dir():
        raise FxExportError(f"output path {str(folder)!r} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        if not overwrite:
            raise FxExportError(f"output folder {str(folder)!r} exists and is not empty; pass --overwrite to replace an earlier export")
        if not (folder / MANIFEST).is_file():
            raise FxExportError(f"output folder {str(folder)!r} was not written by fxexport (no {MANIFEST}); refusing to replace it")
    parent = _existing_parent(folder)
    if not parent.is_dir():
        raise FxExportError(f"cannot create {str(folder)!r}: {str(parent)!r} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise FxExportError(f"cannot write to {str(parent)!r}: permission denied")


def _existing_parent(folder: Path) -> Path:
    parent = folder.absolute().parent
    while not parent.exists():
        parent = parent.parent
    return parent


def _quantized(item: QuantizedIR) -> dict[str, object]:
    """How a quantized tensor is rebuilt from its integer values (the entry's dtype) and two more entries."""
    return {"dtype": item.dtype, "qscheme": item.qscheme, "axis": item.axis, "scale": item.scale, "zero_point": item.zero_point}


def manifest(package: PackageIR, files: dict[str, Digest], version: str) -> str:
    """The `fxexport.json` text: files with their digests (`"blake3:<hex>"`), tensors, modules and versions, keys sorted.

    A tensor rebuilt as a view records the key of the storage it views, its stride and offset; a
    quantized tensor its dtype, scheme, axis and the keys of its scales and zero points; a tensor subclass
    its class and the keys of its inner tensors (it has no entry of its own); a quantized
    layer (`packed_weights`, only when there is one) the setter its weights are loaded through; a packed
    object held as an attribute (`packed_objects`) the op and settings it is packed again with.
    """
    tensors = {
        t.key: {"dtype": t.dtype, "file": t.file, "kind": t.kind, "persistent": t.persistent, "requires_grad": t.requires_grad, "shape": list(t.shape)}
        | ({} if t.view is None else {"storage": t.view.storage, "stride": list(t.view.stride), "offset": t.view.offset})
        | ({} if t.quantized is None else {"quantized": _quantized(t.quantized)})
        | ({} if t.subclass is None else {"subclass": {"class": t.subclass.qualname, "parts": [f"{t.key}.{n}" for n in t.subclass.names]}})
        for t in (*package.tensors, *package.storages, *package.parts)
    }
    data = {
        "module_name": package.class_name,
        "files": {name: str(digest) for name, digest in sorted(files.items())},
        "format": MANIFEST_FORMAT,
        "fxexport": version,
        "modules": [[m.path, m.class_name] for m in package.modules],
        "inline_modules": [{"path": m.path, "class": m.class_name, "reason": m.reason} for m in package.inline_modules],
        "tensors": dict(sorted(tensors.items())),
        "torch": package.torch_version,
        "warnings": list(package.warnings),
    }
    if package.packed:
        data["packed_weights"] = {p.path: {"setter": p.setter, "tensors": list(p.names)} for p in package.packed}
    if package.packed_objects:
        data["packed_objects"] = {p.path: {"op": p.op, "tensors": list(p.names), "settings": list(p.settings)} for p in package.packed_objects}
    return jsontext.dumps(data) + "\n"


def write_package(
    folder: Path,
    sources: dict[str, str],
    package: PackageIR,
    version: str,
    overwrite: bool,
    progress: Callable[[int, int], None] | None = None,
    bytecode: bool = False,
    weights: WeightHashes | None = None,
) -> tuple[str, ...]:
    """Write sources, weights and manifest atomically; returns the relative paths written.

    With `bytecode`, the Python sources are also compiled into `__pycache__` (see bytecode.py).
    `weights` hashes the large weight files beside the writing (see hashes.py); the others are hashed as they are written.
    """
    check_target(folder, overwrite)
    try:
        folder.absolute().parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".fxexport-tmp", dir=folder.absolute().parent))
    except OSError as error:
        raise FxExportError(f"cannot write to {str(folder.absolute().parent)!r}: {error.strerror}") from error
    try:
        hashes: dict[str, Digest] = {}
        encoded = {relative: text.encode("utf-8") for relative, text in sources.items()}
        for relative, data in sorted(encoded.items()):
            (staging / relative).write_bytes(data)
            hashes[relative] = digest_of([data])
        if bytecode:
            write_bytecode(staging, {name: data for name, data in encoded.items() if name.endswith(".py")}, shared=(LOADER,))
        written = [0]

        def advance(count: int) -> None:
            written[0] += count
            if progress is not None:
                progress(written[0], package.weight_bytes)

        inline = {name: hasher() for name in package.weight_files if weights is None or not weights.hashes(name)}
        for name in package.weight_files:
            write_safetensors(staging / name, file_tensors(package, name), advance, digest=inline.get(name))
        for name in package.weight_files:
            hashes[name] = Digest(ALGORITHM, inline[name].hexdigest()) if name in inline else weights.result(name)  # type: ignore[union-attr]
        index = index_json(package)
        if index is not None:
            (staging / INDEX).write_text(index, encoding="utf-8")
            hashes[INDEX] = digest_of([index.encode()])
        (staging / MANIFEST).write_text(manifest(package, hashes, version), encoding="utf-8")
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)
        _replace(staging, folder)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise FxExportError(f"cannot write {str(folder)!r}: {error.strerror or error}") from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return tuple(sorted([*hashes, MANIFEST]))


def _replace(staging: Path, folder: Path) -> None:
    if not folder.exists():
        os.rename(staging, folder)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".fxexport-old", dir=folder.absolute().parent))
    os.rename(folder, retired / "old")
    try:
        os.rename(staging, folder)
    except BaseException:
        os.rename(retired / "old", folder)
        raise
    shutil.rmtree(retired, ignore_errors=True)
