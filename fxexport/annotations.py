"""Source annotations: a comment naming the file, line and source line a group of statements came from.

Paths are shortened to be relative to site-packages or the current project, never absolute,
so annotations do not leak the exporting machine's layout and exports stay reproducible.
"""

from __future__ import annotations

import os
import re
import site
import sys
from functools import cache
from pathlib import Path
from typing import Any

import torch
from torch import fx
from torch.fx.passes.shape_prop import TensorMetadata

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>[^\n]*)')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_CODE = 100


@cache
def _roots() -> tuple[Path, ...]:
    """Folders a path is shown relative to: site-packages first, then the current folder."""
    folders = [*site.getsitepackages(), site.getusersitepackages(), *(p for p in sys.path if p.endswith("site-packages"))]
    return tuple(dict.fromkeys(Path(f).resolve() for f in folders if f)) + (Path(os.getcwd()).resolve(),)


def short_path(path: str) -> str:
    """`torch/nn/modules/linear.py`, `models/net.py`, or just the file name for anything else."""
    resolved = Path(path).resolve()
    for root in _roots():
        if resolved.is_relative_to(root):
            return resolved.relative_to(root).as_posix()
    return resolved.name


def annotation(node: fx.Node) -> str | None:
    """`# models/net.py:12 in forward: y = self.lin(x)` for the outermost recorded frame, or None."""
    match = _FRAME.search(node.stack_trace or "")
    if match is None:
        return None
    code = _CONTROL.sub(" ", match["code"]).strip()
    if len(code) > MAX_CODE:
        code = code[: MAX_CODE - 3] + "..."
    where = f"{short_path(match['file'])}:{match['line']} in {_CONTROL.sub(' ', match['func'])}"
    return f"# {where}: {code}" if code else f"# {where}"


def _describe(value: Any) -> str | None:
    if isinstance(value, torch.Tensor) or isinstance(value, TensorMetadata):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{dtype}[{', '.join(str(size) for size in value.shape)}]"
    if isinstance(value, (tuple, list)) and value:
        parts = [_describe(v) for v in value]
        return f"({', '.join(p or '?' for p in parts)})" if any(parts) else None
    return None


def shape_comment(node: fx.Node) -> str | None:
    """`float32[s0, 4]` from `node.meta["val"]` or `["tensor_meta"]` when the producer recorded them."""
    for key in ("val", "tensor_meta"):
        if key in node.meta:
            text = _describe(node.meta[key])
            if text:
                return _CONTROL.sub(" ", text)
    return None
