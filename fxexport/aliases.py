"""Ops that return their input itself, and uses of them outside the module call that made them.

torch.export records values by tensor object: `x.to(torch.float32)` of a float32 `x` returns `x`
itself, so the caller's later uses of `x` (T5's residual around its layer norm) read the `to` node
made inside the layer norm's call, and that call could not be cut out ("its intermediate value is
used outside it"); so with a dropout that does not train, which returns its input too (timm
efficientvit's `ConvLayer` starts with one). Those uses read the input instead: it is the same
tensor, so every value and every in-place change is the same.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx, nn

from .aten_spellings import bind
from .module_paths import submodule


def identity_source(node: fx.Node, gm: fx.GraphModule) -> fx.Node | None:
    """The input a node returns itself: a `to` that changes nothing by the values the graph recorded
    (same dtype, device and layout, no copy, no other memory format), or a dropout that does not train
    (ATen's `if (!train) return input`); None for any other node."""
    dropped = _dropout_source(node, gm)
    if dropped is not None:
        return dropped
    source = _to_source(node)
    if source is None:
        return None
    before, after = source.meta.get("val"), node.meta.get("val")
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor)):
        return None
    same = (before.dtype, before.device, before.layout) == (after.dtype, after.device, after.layout)
    return source if same else None


_DROPOUTS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout)
_ATEN_DROPOUTS = ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")


def _dropout_source(node: fx.Node, gm: fx.GraphModule) -> fx.Node | None:
    """The input of a dropout that does not train: a `torch.nn` dropout layer in eval mode, or a call
    of a dropout function (torch.nn.functional's or ATen's) with training False."""
    training: object  # False only where the call says so
    if node.op == "call_module":
        module = submodule(gm, str(node.target))
        training = module.training if isinstance(module, nn.modules.dropout._DropoutNd) else True
    elif node.op == "call_function" and node.target in _DROPOUTS:
        training = _signature_bound(node.target, node.args, node.kwargs).get("training", True)
    elif node.op == "call_function" and getattr(getattr(node.target, "overloadpacket", None), "__name__", "") in _ATEN_DROPOUTS:
        training = bind(node).values.get("train")
    else:
        return None
    source = node.args[0] if node.args else None
    return source if training is False and isinstance(source, fx.Node) else None


def _signature_bound(function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A Python function's arguments by name, its defaults filled in ({} where they do not bind)."""
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return {}
    bound.apply_defaults()
    return dict(bound.arguments)


def _to_source(node: fx.Node) -> fx.Node | None:
    """The tensor a `to` call converts, where the call asks for no copy and no memory format: ATen's
    `aten.to.*`, or `x.to(...)` as raise_aten.py writes it (only dtypes and devices given)."""
    if node.op == "call_method" and node.target == "to" and node.args:
        plain = all(isinstance(a, (torch.dtype, torch.device, str)) for a in node.args[1:]) and set(node.kwargs) <= {"dtype", "device", "non_blocking"}
        return node.args[0] if plain and isinstance(node.args[0], fx.Node) else None
    if node.op != "call_function" or getattr(node.target, "overloadpacket", None) is not torch.ops.aten.to:
        return None
    bound = bind(node).values  # the overloads differ: `to.prim_dtype` has no memory format
    source = bound.get("self")
    if not isinstance(source, fx.Node) or bound.get("copy") or bound.get("memory_format") not in (None, torch.preserve_format):
        return None
    return source


def reads_outside(node: fx.Node, source: fx.Node, frames: Mapping[fx.Node, tuple[object, ...]]) -> list[fx.Node]:
    """The users of `node` that run outside the innermost recorded call `node` runs in, where `source`
    is made outside that call too (its input, as T5's residual): reading `source` there instead lets
    the call be cut out. A `source` made inside the call (a rotary embedding's `cos.to(x.dtype)`) would
    only escape in its place. None where the call itself does not read `node` (it is what the call returns): []."""
    stack = frames.get(node, ())
    if not stack or stack[-1] in frames.get(source, ()):
        return []
    outside = [user for user in node.users if stack[-1] not in frames.get(user, ())]
    return outside if len(outside) < len(node.users) else []  # the call's result itself (a module that only casts) stays
