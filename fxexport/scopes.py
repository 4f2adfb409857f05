"""The `with` blocks a node ran in (`node.meta[SCOPES]`): `with torch.no_grad():`, `with torch.autocast(...):`.

with_blocks.py marks the nodes of a region torch.export recorded as a higher-order op with the
blocks they ran in; split.py writes a block around a module call where the whole call ran in it
and inside the module's forward where only part did, and forward.py writes the statements of
one block inside one `with` statement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import fx

T = TypeVar("T")
SCOPES = "fxexport_scopes"  # node.meta key: the blocks the node ran in, outermost first


@dataclass(frozen=True)
class Scope:
    """One `with` block: the context manager's code and its arguments (`kind`: "autocast" or "grad"),
    the path of the module whose forward the torch.export op was recorded in, and a number that
    tells two blocks with the same code apart."""

    code: str
    kind: str
    args: tuple[object, ...]
    owner: str
    key: int

    def within(self, path: str) -> bool:
        """The block was recorded in the forward of the module at `path` or of one inside it."""
        return self.owner == path or self.owner.startswith(path + ".")

    def context(self) -> AbstractContextManager[object]:
        """The context manager the block enters."""
        if self.kind == "autocast":
            device, dtype, enabled, cache_enabled = self.args
            return torch.autocast(str(device), dtype=dtype, enabled=bool(enabled), cache_enabled=cache_enabled)  # type: ignore[arg-type]
        return torch.set_grad_enabled(bool(self.args[0]))


def scopes_of(node: fx.Node) -> tuple[Scope, ...]:
    """The blocks the node ran in, outermost first (none for most)."""
    return node.meta.get(SCOPES, ())


def entered(scopes: Iterable[Scope]) -> contextlib.ExitStack:
    """One context manager entering every block in `scopes`, outermost first."""
    stack = contextlib.ExitStack()
    for scope in scopes:
        stack.enter_context(scope.context())
    return stack


def call_site_scopes(nodes: list[fx.Node], callee: str) -> tuple[Scope, ...]:
    """The blocks a call of the module at `callee` runs in as a whole: those all its nodes ran in,
    outermost first, up to the first recorded inside the callee (its own forward writes that one)."""
    common: tuple[Scope, ...] | None = None
    for node in nodes:
        common = scopes_of(node) if common is None else common_prefix(common, scopes_of(node))
        if not common:
            return ()  # most calls: the first node says so
    common = common or ()
    inside = next((i for i, scope in enumerate(common) if scope.within(callee)), len(common))
    return common[:inside]


def common_prefix(a: Sequence[T], b: Sequence[T]) -> tuple[T, ...]:
    """The items `a` and `b` start with alike."""
    same = 0
    while same < min(len(a), len(b)) and a[same] == b[same]:
        same += 1
    return tuple(a[:same])


def after(scopes: tuple[Scope, ...], applied: tuple[Scope, ...]) -> tuple[Scope, ...]:
    """`scopes` without the blocks its callers already wrote around the call (`applied`, a prefix of it)."""
    return scopes[len(applied) :] if scopes[: len(applied)] == applied else scopes


def blocks_of(graph: fx.Graph) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Each node's blocks, by code and order of first appearance: equal for two bodies whose statements
    are written in the same `with` blocks."""
    order: dict[int, int] = {}
    return tuple(tuple((s.code, order.setdefault(s.key, len(order))) for s in scopes_of(node)) for node in graph.nodes)
