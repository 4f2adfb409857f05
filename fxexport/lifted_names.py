"""Tensor constants torch.export lifted out of a forward, named within their module.

torch.export turns a tensor a forward makes from Python values (`torch.tensor([1.0, 2.0])`) into
a constant held by the module that made it, numbered over the whole model: the three blocks of
a ModuleList hold `lifted_tensor_0`, `lifted_tensor_1` and `lifted_tensor_2`. Their code then
differs in that name alone, and each became a class of its own (`Block`, `BlockWithLiftedTensor1`,
...). Here each module's lifted constants are numbered within it, in the order its code reads
them (`lifted_tensor_0` in every block): one class. They are plain tensor attributes, in no
state_dict, so the keys stay the source's. The input GraphModule is not changed.
"""

from __future__ import annotations

import re

import torch
from torch import fx, nn

from .rebuild import is_holder
from .subgraphs import copy_graph, holder_copy, private_holder, with_graph

_LIFTED = re.compile(r"lifted_tensor_[0-9]+")
_LIFT_FRESH_COPY = torch.ops.aten.lift_fresh_copy.default


def local_lifted_names(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with its lifted constants numbered within the module holding each; `gm` itself where they are."""
    renames = _renames(gm)
    if not renames:
        return gm
    holder = holder_copy(gm)
    private = {id(holder)}
    by_owner: dict[str, dict[str, str]] = {}
    for old, new in renames.items():
        owner, _, name = old.rpartition(".")
        by_owner.setdefault(owner, {})[name] = new.rpartition(".")[2]
    for owner, names in by_owner.items():
        module = private_holder(holder, owner.split("."), private) if owner else holder
        keys = list(module.__dict__)
        moved = [(key, module.__dict__.pop(key)) for key in keys[min(map(keys.index, names)) :]]
        for key, value in moved:  # in their order: `__init__` sets them in it
            module.__dict__[names.get(key, key)] = value
    graph = copy_graph(gm.graph)
    for node in graph.find_nodes(op="get_attr"):
        node.target = renames.get(str(node.target), node.target)
    graph.lint()
    return with_graph(gm, graph, holder)


def _renames(gm: fx.GraphModule) -> dict[str, str]:
    """Old target -> new target of every lifted constant whose number is not its place in its module."""
    read: dict[str, list[str]] = {}  # module path -> its lifted constants, in the order the graph reads them
    for node in gm.graph.find_nodes(op="get_attr"):
        owner, _, name = str(node.target).rpartition(".")
        if _LIFTED.fullmatch(name) and name not in read.get(owner, []) and _made_in_forward(node) and _renamable(gm, owner, name):
            read.setdefault(owner, []).append(name)
    out = {}
    for owner, names in read.items():
        module = gm.get_submodule(owner)
        taken = set(vars(module)) | set(module._parameters) | set(module._buffers) | set(module._modules)
        taken -= set(names)
        wanted = iter(name for k in range(len(taken) + len(names) + 1) if (name := f"lifted_tensor_{k}") not in taken)
        for old in names:
            new = next(wanted)
            if new != old:
                out[f"{owner}.{old}" if owner else old] = f"{owner}.{new}" if owner else new
    return out


def _made_in_forward(node: fx.Node) -> bool:
    """Read only as torch.export reads a tensor the forward made (`lift_fresh_copy`): not an attribute
    of the source that happens to have such a name."""
    return bool(node.users) and all(u.op == "call_function" and u.target is _LIFT_FRESH_COPY for u in node.users)


def _renamable(gm: fx.GraphModule, owner: str, name: str) -> bool:
    """A plain tensor attribute of a plain holder reached through plain holders (torch.export's modules)."""
    try:
        module = gm.get_submodule(owner)
    except AttributeError:
        return False
    parts = owner.split(".") if owner else []
    path_holders = all(is_holder(gm.get_submodule(".".join(parts[:i]))) for i in range(1, len(parts) + 1))
    value = vars(module).get(name)
    return path_holders and isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter)
