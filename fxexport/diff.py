"""Compare two export folders, OLD then NEW as `diff -u` does: unified diffs for text, tensor by tensor for weights."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .errors import FxExportError
from .write import MANIFEST

TEXT_SUFFIXES = {".py", ".json", ".md", ".txt", ".jinja"}


@dataclass(frozen=True)
class FileDifference:
    """One file that differs between two export folders."""

    path: str
    kind: str  # "removed" (only in old), "added" (only in new), "text", "tensors" or "binary"
    detail: str


@dataclass(frozen=True)
class DiffResult:
    """The changes from export folder `old` (say, a golden export) to `new`; `report()` renders them."""

    old: Path
    new: Path
    differences: tuple[FileDifference, ...]

    @property
    def equal(self) -> bool:
        """True when the folders have the same files with the same contents."""
        return not self.differences

    def report(self) -> str:
        """Human-readable: one paragraph per differing file; `-` marks what OLD had, `+` what NEW has."""
        if self.equal:
            return f"{self.old} and {self.new} are the same"
        parts = []
        for item in self.differences:
            if item.kind == "removed":
                parts.append(f"only in {self.old}: {item.path}")
            elif item.kind == "added":
                parts.append(f"only in {self.new}: {item.path}")
            else:
                parts.append(item.detail.rstrip("\n"))
        return "\n".join(parts)


def export_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of an export folder; FxExportError if `folder` is not one."""
    path = folder / MANIFEST
    if not folder.is_dir() or not path.is_file():
        raise FxExportError(f"{str(folder)!r} is not an fxexport export folder (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise FxExportError(f"cannot read {str(path)!r}: {error.strerror or error}") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise FxExportError(f"{str(path)!r} is not a valid manifest: {error}") from error
    if not isinstance(data, dict):
        raise FxExportError(f"{str(path)!r} is not a valid manifest")
    for key, kind, what in _MAPS:
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(item, kind) for item in value.values()):
            raise FxExportError(f"{str(path)!r} is not a valid manifest: {key!r} must map names to {what}")
    return data


# The manifest's maps that every reader walks: key, type of each value, and that type in words.
_MAPS = (("files", str, "digest strings"), ("tensors", dict, "objects"))


def _files(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _text_diff(relative: str, old: Path, new: Path) -> str | None:
    before = (old / relative).read_text(encoding="utf-8").splitlines(keepends=True)
    after = (new / relative).read_text(encoding="utf-8").splitlines(keepends=True)
    if before == after:
        return None
    return "".join(difflib.unified_diff(before, after, str(old / relative), str(new / relative)))


def tensor_differences(old: Path, new: Path) -> list[str]:
    """Names each tensor that was removed, added, or changed shape, dtype or values from `old` to `new`."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(old), framework="pt") as before, safe_open(str(new), framework="pt") as after:
            old_keys, new_keys = set(before.keys()), set(after.keys())
            lines = [f"tensor {k!r}: removed" for k in sorted(old_keys - new_keys)]
            lines += [f"tensor {k!r}: added" for k in sorted(new_keys - old_keys)]
            for key in sorted(old_keys & new_keys):
                a, b = before.get_tensor(key), after.get_tensor(key)
                if a.dtype != b.dtype or a.shape != b.shape:
                    lines.append(f"tensor {key!r}: {a.dtype}{list(a.shape)} -> {b.dtype}{list(b.shape)}")
                elif not torch.equal(a, b):
                    lines.append(f"tensor {key!r}: values differ (max abs diff {_max_diff(a, b)})")
    except (SafetensorError, OSError) as error:
        return [f"cannot read weights: {error}"]
    return lines


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.dtype == torch.bool:
        return "bool"
    return f"{(a.double() - b.double()).abs().max().item():.3g}"


def _compare(relative: str, old: Path, new: Path) -> FileDifference | None:
    before, after = old / relative, new / relative
    if relative.endswith(".safetensors"):
        lines = tensor_differences(before, after)
        if lines:
            return FileDifference(relative, "tensors", f"{relative}:\n" + "\n".join(f"  {line}" for line in lines))
        return None
    if Path(relative).suffix in TEXT_SUFFIXES:
        try:
            text = _text_diff(relative, old, new)
        except UnicodeDecodeError:
            text = None if before.read_bytes() == after.read_bytes() else f"{relative}: not valid UTF-8 text, contents differ"
        return FileDifference(relative, "text", text) if text else None
    if before.read_bytes() != after.read_bytes():
        return FileDifference(relative, "binary", f"{relative}: binary contents differ")
    return None


def diff_exports(old: str | Path, new: str | Path, *, ignore: frozenset[str] = frozenset()) -> DiffResult:
    """The changes from export folder `old` (the golden, expected one) to `new`; `ignore` lists relative paths to skip."""
    old, new = Path(old), Path(new)
    export_manifest(old)
    export_manifest(new)
    before, after = _files(old) - ignore, _files(new) - ignore
    differences = [FileDifference(p, "removed", "") for p in sorted(before - after)]
    differences += [FileDifference(p, "added", "") for p in sorted(after - before)]
    for relative in sorted(before & after):
        found = _compare(relative, old, new)
        if found:
            differences.append(found)
    return DiffResult(old, new, tuple(differences))
