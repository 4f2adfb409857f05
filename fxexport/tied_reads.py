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

from torch import fx

from .calls import Frame


def inside_reads(gm: fx.GraphModule, nodes: list[fx.Node], frames: dict[fx.Node, tuple[Frame, ...]]) -> dict[fx.Node, dict[fx.Node, str]]:
    """For each tensor read (`get_attr`) whose reader runs in a module call that holds the same tensor
    under a path of its own while the read's path is not in it: reader -> {read: that path}."""
    held = [*gm.named_parameters(remove_duplicate=False), *gm.named_buffers(remove_duplicate=False)]
    by_path = dict(held)
    aliases: dict[int, list[str]] = {}  # each tensor's paths, in the order the GraphModule holds them
    for path, tensor in held:
        aliases.setdefault(id(tensor), []).append(path)
    out: dict[fx.Node, dict[fx.Node, str]] = {}
    for user in nodes:
        for read in user.all_input_nodes:
            found = by_path.get(str(read.target)) if read.op == "get_attr" else None
            if found is None or len(aliases[id(found)]) < 2:
                continue
            inside = _inside(str(read.target), aliases[id(found)], frames.get(user, ()))
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
