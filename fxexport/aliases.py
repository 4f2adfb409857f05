"""Ops that return their input itself, and uses of them outside the module call that made them.

torch.export records values by tensor object: `x.to(torch.float32)` of a float32 `x` returns `x`
itself, so the caller's later uses of `x` (T5's residual around its layer norm) read the `to` node
made inside the layer norm's call, and that call could not be cut out ("its intermediate value is
used outside it"). Those uses read the input instead: it is the same tensor, so every value and
every in-place change is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import fx


def identity_source(node: fx.Node) -> fx.Node | None:
    """The input a `to` node returns itself, by the values the graph recorded (same dtype, device and
    layout, no copy, no other memory format); None for any other node."""
    source = _to_source(node)
    if source is None:
        return None
    before, after = source.meta.get("val"), node.meta.get("val")
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor)):
        return None
    same = (before.dtype, before.device, before.layout) == (after.dtype, after.device, after.layout)
    return source if same else None


def _to_source(node: fx.Node) -> fx.Node | None:
    """The tensor a `to` call converts, where the call asks for no copy and no memory format: ATen's
    `aten.to.*`, or `x.to(...)` as raise_aten.py writes it (only dtypes and devices given)."""
    if node.op == "call_method" and node.target == "to" and node.args:
        plain = all(isinstance(a, (torch.dtype, torch.device, str)) for a in node.args[1:]) and set(node.kwargs) <= {"dtype", "device", "non_blocking"}
        return node.args[0] if plain and isinstance(node.args[0], fx.Node) else None
    if node.op != "call_function" or getattr(node.target, "overloadpacket", None) is not torch.ops.aten.to:
        return None
    bound = _bound_arguments(node.target, node.args, node.kwargs)
    source = bound.get("self")
    if not isinstance(source, fx.Node) or bound.get("copy", False) or bound.get("memory_format") not in (None, torch.preserve_format):
        return None
    return source


def _bound_arguments(target: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The op's arguments by their schema's names."""
    names = [a.name for a in target._schema.arguments]
    return {**dict(zip(names, args)), **kwargs}


def reads_outside(node: fx.Node, source: fx.Node, frames: Mapping[fx.Node, tuple[object, ...]]) -> list[fx.Node]:
    """The users of `node` that run outside the innermost recorded call `node` runs in, where `source`
    is made outside that call too (its input, as T5's residual): reading `source` there instead lets
    the call be cut out. A `source` made inside the call (a rotary embedding's `cos.to(x.dtype)`) would
    only escape in its place. None where the call itself does not read `node` (it is what the call returns)."""
    stack = frames.get(node, ())
    if not stack or stack[-1] in frames.get(source, ()):
        return []
    outside = [user for user in node.users if stack[-1] not in frames.get(user, ())]
    return outside if len(outside) < len(node.users) else []  # the call's result itself (a module that only casts) stays
