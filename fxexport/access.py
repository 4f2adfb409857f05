"""Code that reaches a submodule or tensor by its path: `self.layer1[0].conv1.weight`."""

from __future__ import annotations

from collections.abc import Iterable

from torch import fx, nn

from .names import is_plain_identifier, quote

INDEXED = (nn.Sequential, nn.ModuleList)
# Set in a GraphModule's meta by split.py when its generated class will subclass nn.Sequential
# (or nn.ModuleDict: a source ModuleDict subclass with a forward, as torchvision's IntermediateLayerGetter).
SEQUENTIAL_BASE = "fxexport_sequential_base"
DICT_BASE = "fxexport_dict_base"


def _position(module: nn.Module | None, atom: str) -> int | None:
    """The index of a container's child: `seq[i]` counts children in order, not names. A numbered
    child only where its number is its place; a Sequential's child with a name that is no identifier
    (`block1-0`) by its place too."""
    if module is None or atom not in module._modules:
        return None
    indexed = type(module) in INDEXED or (isinstance(module, fx.GraphModule) and module.meta.get(SEQUENTIAL_BASE, False))
    if not indexed:
        return None
    position = list(module._modules).index(atom)
    if atom.isdigit() and type(module) is nn.ModuleList and sorted(map(str, range(len(module._modules)))) == sorted(module._modules):
        return int(atom)  # a ModuleList indexes by name (`str(i)`), whatever the order its children were added in
    if atom.isdigit():
        return position if position == int(atom) else None
    return None if is_plain_identifier(atom) or type(module) is nn.ModuleList else position


def module_access(base: str, module: nn.Module | None, path: Iterable[str]) -> str:
    """Index into containers (`[0]`, `["q"]`), attributes elsewhere (`getattr` for odd names)."""
    expr = base
    for atom in path:
        if (position := _position(module, atom)) is not None:
            expr = f"{expr}[{position}]"
        elif module is not None and _is_dict(module) and atom in module._modules:
            expr = f"{expr}[{quote(atom)}]"
        elif is_plain_identifier(atom):
            expr = f"{expr}.{atom}"
        else:
            expr = f"getattr({expr}, {quote(atom)})"
        module = module._modules.get(atom) if isinstance(module, nn.Module) else None
    return expr


def _is_dict(module: nn.Module) -> bool:
    return type(module) is nn.ModuleDict or (isinstance(module, fx.GraphModule) and module.meta.get(DICT_BASE, False))
