"""write: the last stage. Builds the package in a temporary folder beside the target, then renames."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import FxExportError
from .ir import PackageIR
from .names import is_plain_identifier, sanitize
from .shards import INDEX, index_json
from .weights import write_safetensors

MANIFEST = "fxexport.json"


def check_target(folder: Path, overwrite: bool) -> None:
    """Refuse, before any work, a target that cannot or must not be written."""
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


def _sha256(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def manifest(package: PackageIR, files: dict[str, str], version: str) -> str:
    """The `fxexport.json` text: files with their sha256, tensors, modules and versions, keys sorted."""
    tensors = {
        t.key: {"dtype": t.dtype, "file": t.file, "kind": t.kind, "persistent": t.persistent, "requires_grad": t.requires_grad, "shape": list(t.shape)}
        for t in package.tensors
    }
    data = {
        "module_name": package.class_name,
        "files": dict(sorted(files.items())),
        "format": 1,
        "fxexport": version,
        "modules": [[m.path, m.class_name] for m in package.modules],
        "tensors": dict(sorted(tensors.items())),
        "torch": package.torch_version,
        "warnings": list(package.warnings),
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write_package(
    folder: Path,
    sources: dict[str, str],
    package: PackageIR,
    version: str,
    overwrite: bool,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[str, ...]:
    """Write sources, weights and manifest atomically; returns the relative paths written."""
    check_target(folder, overwrite)
    try:
        folder.absolute().parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".fxexport-tmp", dir=folder.absolute().parent))
    except OSError as error:
        raise FxExportError(f"cannot write to {str(folder.absolute().parent)!r}: {error.strerror}") from error
    try:
        hashes = {}
        for relative, text in sorted(sources.items()):
            data = text.encode("utf-8")
            (staging / relative).write_bytes(data)
            hashes[relative] = _sha256(data)
        written = [0]

        def advance(count: int) -> None:
            written[0] += count
            if progress is not None:
                progress(written[0], package.weight_bytes)

        for name in package.weight_files:
            hashes[name] = write_safetensors(staging / name, [t for t in package.tensors if t.file == name], advance)
        index = index_json(package)
        if index is not None:
            (staging / INDEX).write_text(index, encoding="utf-8")
            hashes[INDEX] = _sha256(index.encode())
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
