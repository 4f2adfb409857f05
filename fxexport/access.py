"""Code that reaches a submodule or tensor by its path: `self.layer1[0].conv1.weight`."""

from __future__ import annotations

from collections.abc import Iterable

from torch import fx, nn

from .names import is_plain_identifier, quote

INDEXED = (nn.Sequential, nn.ModuleList)
# Set in a GraphModule's meta by split.py when its generated class will subclass nn.Sequential.
SEQUENTIAL_BASE = "fxexport_sequential_base"


def _is_position(module: nn.Module | None, atom: str) -> bool:
    """True when `atom` is a container's child at that position: `seq[i]` counts children, not names."""
    indexed = type(module) in INDEXED or (isinstance(module, fx.GraphModule) and module.meta.get(SEQUENTIAL_BASE, False))
    if module is None or not indexed or not atom.isdigit() or atom not in module._modules:
        return False
    return list(module._modules).index(atom) == int(atom)


def module_access(base: str, module: nn.Module | None, path: Iterable[str]) -> str:
    """Index into containers (`[0]`, `["q"]`), attributes elsewhere (`getattr` for odd names)."""
    expr = base
    for atom in path:
        if _is_position(module, atom):
            expr = f"{expr}[{int(atom)}]"
        elif type(module) is nn.ModuleDict and atom in module._modules:
            expr = f"{expr}[{quote(atom)}]"
        elif is_plain_identifier(atom):
            expr = f"{expr}.{atom}"
        else:
            expr = f"getattr({expr}, {quote(atom)})"
        module = module._modules.get(atom) if isinstance(module, nn.Module) else None
    return expr
