"""Tensor constants a trace folded into the root, held by the module whose calls alone read them.

symbolic_trace does not trace a module's buffers through plain attribute reads: torchvision's
`FrozenBatchNorm2d` computes `scale` and `bias` from its buffers while tracing, and the graph reads
the results as constants the root holds (`_tensor_constant2`). Each block's code then took them
as inputs from its caller, the constants of every block apart, so no block was a class of its own
(its caller's code ran it inline) and a class reading them took them as forward parameters. Here
a constant the root holds that is read only inside one recorded module call is held by that
module instead, numbered within it in the order its code reads them (`self._tensor_constant0` in
every FrozenBatchNorm2d), as a plain tensor attribute. A constant the root holds as a buffer (fx
registers them so) stays its buffer, under its state_dict key: the module holds the same tensor,
and the export ties the two. The input GraphModule is not changed.
"""

from __future__ import annotations

import re

import torch
from torch import fx, nn

from .calls import recorded_frames
from .subgraphs import copy_graph, holder_copy, private_holder, with_graph

_FOLDED = re.compile(r"_tensor_constant[0-9]+")  # how symbolic_trace names a tensor it folded into the root


def held_constants(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with each folded constant its root holds held by the module whose calls alone read it; `gm` itself where none is."""
    moves = _owners(gm)
    if not moves:
        return gm
    mode = _layer_mode(gm)
    holder = holder_copy(gm)
    private = {id(holder)}
    renames: dict[str, str] = {}
    numbers: dict[str, int] = {}
    for name, path in moves.items():  # in the order the graph first reads them
        module = private_holder(holder, path.split("."), private, missing=lambda parent, child: _made_holder(parent, child, mode))
        taken = set(vars(module)) | set(module._parameters) | set(module._buffers) | set(module._modules)
        k = numbers.get(path, 0)
        while f"_tensor_constant{k}" in taken:
            k += 1
        numbers[path] = k + 1
        module.__dict__[f"_tensor_constant{k}"] = holder._buffers[name] if name in holder._buffers else holder.__dict__.pop(name)
        renames[name] = f"{path}._tensor_constant{k}"
    graph = copy_graph(gm.graph)
    for node in graph.find_nodes(op="get_attr"):
        node.target = renames.get(str(node.target), node.target)
    graph.lint()
    return with_graph(gm, graph, holder)


def _owners(gm: fx.GraphModule) -> dict[str, str]:
    """Root constant name -> the path of the innermost module call every reader of it ran inside."""
    readers: dict[str, list[fx.Node]] = {}
    for node in gm.graph.find_nodes(op="get_attr"):
        name = str(node.target)
        value = gm._buffers.get(name, gm.__dict__.get(name))  # fx registers a folded tensor as a buffer
        if _FOLDED.fullmatch(name) and isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter):
            readers.setdefault(name, []).extend(node.users)
    if not readers:
        return {}
    shared = _shared_tensor_ids(gm)
    leaves = {str(n.target) for n in gm.graph.find_nodes(op="call_module")}
    out = {}
    for name, users in readers.items():
        if id(gm._buffers.get(name, gm.__dict__.get(name))) in shared:
            continue
        stacks = [[f.path for f in recorded_frames(user, leaves)] for user in users]
        common = _common_prefix(stacks) if stacks else []
        if common:
            out[name] = common[-1]
    return out


def _shared_tensor_ids(gm: fx.GraphModule) -> set[int]:
    """Ids of tensors the module tree holds in more than one place (a tie a move would break)."""
    seen: set[int] = set()
    twice: set[int] = set()
    for module in gm.modules():
        held = [*module._parameters.values(), *module._buffers.values(), *(v for v in vars(module).values() if isinstance(v, torch.Tensor))]
        for tensor in held:
            if tensor is not None:
                (twice if id(tensor) in seen else seen).add(id(tensor))
    return twice


def _common_prefix(stacks: list[list[str]]) -> list[str]:
    """The frames (by path) every stack starts with."""
    out: list[str] = []
    for level in zip(*stacks):
        if any(path != level[0] for path in level):
            break
        out.append(level[0])
    return out


def _layer_mode(gm: fx.GraphModule) -> bool:
    """The training flag most of the model's layers (modules without children) have."""
    flags = [m.training for m in gm.modules() if not m._modules]
    return sum(flags) * 2 > len(flags) if flags else gm.training


def _made_holder(parent: nn.Module, name: str, mode: bool) -> nn.Module:
    """A module the GraphModule did not keep (its code was traced through, its tensors folded), made to
    hold its constants, in the mode of the model's layers (it ran as one)."""
    made = nn.Module()
    made.training = mode
    parent._modules[name] = made
    names = list(parent._modules)
    if all(n.isascii() and n.isdecimal() for n in names) and names[:-1] == sorted(names[:-1], key=int):  # a Sequential's: it runs them in order
        parent._modules = type(parent._modules)(sorted(parent._modules.items(), key=lambda item: int(item[0])))
    return made
