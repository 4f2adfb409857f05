"""Dotted module paths (`blocks.0.attn`), "" for the root: their prefixes, depth and nesting."""

from __future__ import annotations


def prefixes(path: str) -> list[str]:
    """`a`, `a.b`, `a.b.c` for `a.b.c`; none for the root."""
    parts = path.split(".") if path else []
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def depth(path: str) -> int:
    """How many names the path has: 0 for the root."""
    return path.count(".") + 1 if path else 0


def within(path: str, ancestor: str) -> bool:
    """True when `path` is `ancestor` or under it (everything is under the root)."""
    return not ancestor or path == ancestor or path.startswith(f"{ancestor}.")


def parent(path: str) -> str:
    """The path of the module holding the one at `path` ("" for a child of the root)."""
    return path.rpartition(".")[0]
