"""The `with` blocks a node ran in (`node.meta[SCOPES]`): `with torch.no_grad():`, `with torch.autocast(...):`.

with_blocks.py marks the nodes of a region torch.export recorded as a higher-order op with the
blocks they ran in; split.py gives a module call the blocks its caller wrote around it, and
forward.py writes the statements of one block inside one `with` statement.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import fx

SCOPES = "fxexport_scopes"  # node.meta key: the regions the node ran in, outermost first


@dataclass(frozen=True)
class Scope:
    """One `with` block: the context manager's code, the path of the module whose forward holds the
    statement, and a number that tells two blocks with the same code apart."""

    code: str
    owner: str
    key: int

    def within(self, path: str) -> bool:
        """The `with` statement is in the forward of the module at `path` or of one inside it."""
        return not path or self.owner == path or self.owner.startswith(path + ".")


def scopes_of(node: fx.Node) -> tuple[Scope, ...]:
    """The blocks the node ran in, outermost first (none for most)."""
    return node.meta.get(SCOPES, ())


def scopes_within(scopes: tuple[Scope, ...], path: str) -> tuple[Scope, ...]:
    """The blocks written in the forward of the module at `path` (or inside it): those of its callers dropped."""
    return tuple(s for s in scopes if s.within(path))


def shared_scopes(nodes: list[fx.Node], callee: str) -> tuple[Scope, ...]:
    """The blocks a call of the module at `callee` runs in: those all its nodes ran in, written outside it."""
    common: tuple[Scope, ...] | None = None
    for node in nodes:
        outside = tuple(s for s in scopes_of(node) if not s.within(callee))
        if common is None:
            common = outside
        else:
            same = 0
            while same < min(len(common), len(outside)) and common[same] == outside[same]:
                same += 1
            common = common[:same]
        if not common:
            return ()  # most calls: the first node says so
    return common or ()
