"""Tied tensors read under the path of the module call reading them.

torch.export's GraphModule holds a tied tensor under each of its paths (BART's embedding weight as
`model.shared.weight`, `model.encoder.embed_tokens.weight`, `model.decoder.embed_tokens.weight` and
`lm_head.weight`), and its graph may read it under any of them: the decoder's embedding lookup reads
`lm_head.weight`. A module call reading a tensor held outside it cannot always be cut out (split.py:
BART's `model` stayed inline). The same tensor object is held inside the call, so a read is made under
the path inside the innermost call that holds it; nothing computed changes, and the state_dict is the
GraphModule's.
"""

from __future__ import annotations

import torch
from torch import fx

from .calls import Frame


def inside_reads(gm: fx.GraphModule, nodes: list[fx.Node], frames: dict[fx.Node, tuple[Frame, ...]]) -> dict[fx.Node, dict[fx.Node, str]]:
    """For each tensor read (`get_attr`) whose reader runs in a module call that holds the same tensor
    under a path of its own while the read's path is not in it: reader -> {read: that path}."""
    paths = _paths_by_tensor(gm)
    out: dict[fx.Node, dict[fx.Node, str]] = {}
    for user in nodes:
        for read in user.all_input_nodes:
            tensor = _held(gm, read)
            if tensor is None or len(paths.get(id(tensor), ())) < 2:
                continue
            inside = _inside(str(read.target), paths[id(tensor)], frames.get(user, ()))
            if inside is not None:
                out.setdefault(user, {})[read] = inside
    return out


def _inside(target: str, aliases: list[str], stack: tuple[Frame, ...]) -> str | None:
    """The first alias under the innermost call of `stack` holding one, where `target` is not under it."""
    for frame in reversed(stack):
        prefix = f"{frame.path}."
        if target.startswith(prefix):
            return None
        found = [a for a in aliases if a.startswith(prefix)]
        if found:
            return found[0]
    return None


def _held(gm: fx.GraphModule, read: fx.Node) -> torch.Tensor | None:
    if read.op != "get_attr":
        return None
    owner, _, name = str(read.target).rpartition(".")
    try:
        module = gm.get_submodule(owner)
    except AttributeError:
        return None
    found = module._parameters.get(name, module._buffers.get(name))
    return found if isinstance(found, torch.Tensor) else None


def _paths_by_tensor(gm: fx.GraphModule) -> dict[int, list[str]]:
    """Each parameter's and buffer's paths, in the order the GraphModule holds them, by the tensor's id."""
    out: dict[int, list[str]] = {}
    for path, module in gm.named_modules(remove_duplicate=False):
        for name, tensor in [*module._parameters.items(), *module._buffers.items()]:
            if tensor is not None:
                out.setdefault(id(tensor), []).append(f"{path}.{name}" if path else name)
    return out
