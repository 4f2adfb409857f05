"""Code that reaches a submodule or tensor by its path: `self.layer1[0].conv1.weight`."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable

from torch import fx, nn

from .names import is_plain_identifier, quote

INDEXED = (nn.Sequential, nn.ModuleList)
# Set in a GraphModule's meta by split.py when its generated class will subclass nn.Sequential or
# nn.ModuleList (the base's name; DICT_BASE: nn.ModuleDict, a source ModuleDict subclass with a
# forward, as torchvision's IntermediateLayerGetter).
SEQUENTIAL_BASE = "fxexport_sequential_base"
DICT_BASE = "fxexport_dict_base"


def _position(module: nn.Module | None, atom: str, building: bool = False) -> int | None:
    """The index of a container's child: `seq[i]` counts children in order, not names. A numbered
    child only where its number is its place; a Sequential's child with a name that is no identifier
    (`block1-0`) by its place too. A ModuleList indexes by name, but only below its length: while it
    is `building`, children held out of order (`1` before `0`) are not all there yet."""
    if module is None or atom not in module._modules:
        return None
    indexed = type(module) in INDEXED or (isinstance(module, fx.GraphModule) and module.meta.get(SEQUENTIAL_BASE, False))
    if not indexed:
        return None
    if atom.isdigit():
        number = int(atom)
        if _name_at(module, number) == atom:
            return number
        if type(module) is not nn.ModuleList or not numbered_in_any_order(module._modules):
            return None
        return None if building and number > list(module._modules).index(atom) else number  # a ModuleList indexes by name
    if is_plain_identifier(atom) or type(module) is nn.ModuleList:
        return None
    return list(module._modules).index(atom)


def _name_at(module: nn.Module, position: int) -> str | None:
    """The name of a module's child at `position`, or None."""
    if position >= len(module._modules):
        return None
    return next(itertools.islice(module._modules, position, None))


def numbered_in_order(names: Iterable[str]) -> bool:
    """Names 0 to n-1, in that order (a Sequential indexes its children by place), at least one."""
    listed = list(names)
    return bool(listed) and listed == [str(i) for i in range(len(listed))]


def numbered_in_any_order(names: Collection[str]) -> bool:
    """Names 0 to n-1, in any order (a ModuleList's children added out of order), at least one."""
    return bool(names) and set(names) == {str(i) for i in range(len(names))}


def module_access(base: str, module: nn.Module | None, path: Iterable[str], building: bool = False) -> str:
    """Index into containers (`[0]`, `["q"]`), attributes elsewhere (`getattr` for odd names); `building`:
    in `__init__`, while containers are filled child by child in their order (_position)."""
    expr = base
    for atom in path:
        if (position := _position(module, atom, building)) is not None:
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
