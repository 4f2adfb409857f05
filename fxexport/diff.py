"""Compare two export folders: unified diffs for text, tensor by tensor for weights."""

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
    kind: str  # "missing", "extra", "text", "tensors" or "binary"
    detail: str


@dataclass(frozen=True)
class DiffResult:
    """The differences between export folder `actual` and `golden`; `report()` renders them."""

    actual: Path
    golden: Path
    differences: tuple[FileDifference, ...]

    @property
    def equal(self) -> bool:
        """True when the folders have the same files with the same contents."""
        return not self.differences

    def report(self) -> str:
        """Human-readable: one paragraph per differing file."""
        if self.equal:
            return f"{self.actual} and {self.golden} are the same"
        parts = []
        for item in self.differences:
            if item.kind == "missing":
                parts.append(f"missing from {self.actual}: {item.path}")
            elif item.kind == "extra":
                parts.append(f"not in {self.golden}: {item.path}")
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
    except (ValueError, UnicodeDecodeError) as error:
        raise FxExportError(f"{str(path)!r} is not a valid manifest: {error}") from error
    if not isinstance(data, dict):
        raise FxExportError(f"{str(path)!r} is not a valid manifest")
    return data


def _files(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _text_diff(relative: str, actual: Path, golden: Path) -> str | None:
    old = golden.read_text(encoding="utf-8").splitlines(keepends=True)
    new = actual.read_text(encoding="utf-8").splitlines(keepends=True)
    if old == new:
        return None
    return "".join(difflib.unified_diff(old, new, f"golden/{relative}", f"actual/{relative}"))


def tensor_differences(actual: Path, golden: Path) -> list[str]:
    """Names each tensor that is missing, extra, or differs in shape, dtype or values."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(golden), framework="pt") as old, safe_open(str(actual), framework="pt") as new:
            old_keys, new_keys = set(old.keys()), set(new.keys())
            lines = [f"tensor {k!r}: missing" for k in sorted(old_keys - new_keys)]
            lines += [f"tensor {k!r}: extra" for k in sorted(new_keys - old_keys)]
            for key in sorted(old_keys & new_keys):
                a, b = new.get_tensor(key), old.get_tensor(key)
                if a.dtype != b.dtype or a.shape != b.shape:
                    lines.append(f"tensor {key!r}: {a.dtype}{list(a.shape)} != golden {b.dtype}{list(b.shape)}")
                elif not torch.equal(a, b):
                    lines.append(f"tensor {key!r}: values differ (max abs diff {_max_diff(a, b)})")
    except (SafetensorError, OSError) as error:
        return [f"cannot read weights: {error}"]
    return lines


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.dtype == torch.bool:
        return "bool"
    return f"{(a.double() - b.double()).abs().max().item():.3g}"


def _compare(relative: str, actual: Path, golden: Path) -> FileDifference | None:
    a, g = actual / relative, golden / relative
    if relative.endswith(".safetensors"):
        lines = tensor_differences(a, g)
        if lines:
            return FileDifference(relative, "tensors", f"{relative}:\n" + "\n".join(f"  {line}" for line in lines))
        return None
    if Path(relative).suffix in TEXT_SUFFIXES:
        try:
            text = _text_diff(relative, a, g)
        except UnicodeDecodeError:
            text = None if a.read_bytes() == g.read_bytes() else f"{relative}: not valid UTF-8 text, contents differ"
        return FileDifference(relative, "text", text) if text else None
    if a.read_bytes() != g.read_bytes():
        return FileDifference(relative, "binary", f"{relative}: binary contents differ")
    return None


def diff_exports(actual: str | Path, golden: str | Path, *, ignore: frozenset[str] = frozenset()) -> DiffResult:
    """Compare export folder `actual` with `golden`; `ignore` lists relative paths to skip."""
    actual, golden = Path(actual), Path(golden)
    export_manifest(actual)
    export_manifest(golden)
    ours, theirs = _files(actual) - ignore, _files(golden) - ignore
    differences = [FileDifference(p, "missing", "") for p in sorted(theirs - ours)]
    differences += [FileDifference(p, "extra", "") for p in sorted(ours - theirs)]
    for relative in sorted(ours & theirs):
        found = _compare(relative, actual, golden)
        if found:
            differences.append(found)
    return DiffResult(actual, golden, tuple(differences))
