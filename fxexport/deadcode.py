"""Values nothing reads, computed by code without effects: no statement is written for them.

symbolic_trace keeps every node it recorded, and torch.export keeps some it need not (transformers'
masks build `arange.unsqueeze(1).unsqueeze(2).unsqueeze(3)` and drop it): a forward would carry a
bare expression a person never writes. A node is dead when every user is dead (none at all
included) and it only reads: an item of a tuple, tensor metadata, a view or reshape, a copy or
conversion, arithmetic, or a tensor made without random numbers. Layer calls, in-place methods,
random draws and anything else stay, their results unused or not, so the same bits come out and
the random generator advances as in the source.
"""

from __future__ import annotations

import builtins
import operator

import torch
from torch import fx

# Tensor methods that only read their tensor and make a new value (or a view).
PURE_METHODS = frozenset({
    "chunk", "clone", "contiguous", "dim", "double", "expand", "expand_as", "flatten", "float", "half", "int",
    "long", "bool", "narrow", "numel", "permute", "repeat", "reshape", "reshape_as", "select", "size", "split",
    "squeeze", "t", "to", "transpose", "type_as", "unbind", "unflatten", "unsqueeze", "view", "view_as",
})  # fmt: skip
# Functions that compute a new value from their arguments alone; factories without random numbers.
PURE_FUNCTIONS = frozenset({
    operator.getitem, operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.pow, operator.neg, operator.pos, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
    operator.ge, operator.and_, operator.or_, operator.xor, operator.invert, operator.not_,
    torch.arange, torch.zeros, torch.ones, torch.full, torch.empty, torch.zeros_like, torch.ones_like,
    torch.full_like, torch.empty_like, torch.flatten, torch.transpose, torch.reshape, torch.unsqueeze,
    torch.squeeze, torch.permute, torch.cat, torch.stack,
})  # fmt: skip
# Tensor attributes that only read metadata (symbolic_trace records `x.ndim` for an f-string in an assert message).
METADATA = frozenset({"ndim", "shape", "dtype", "device", "is_cuda", "requires_grad", "layout"})


def dead_nodes(graph: fx.Graph) -> frozenset[fx.Node]:
    """The nodes whose values nothing alive reads and whose code has no effect."""
    dead: set[fx.Node] = set()
    for node in reversed(graph.nodes):
        if _pure(node) and all(user in dead for user in node.users):
            dead.add(node)
    return frozenset(dead)


def _pure(node: fx.Node) -> bool:
    if node.op == "call_method":
        return node.target in PURE_METHODS
    if node.op != "call_function":
        return False
    return reads_metadata(node) or (node.target in PURE_FUNCTIONS and "out" not in node.kwargs)


def reads_metadata(node: fx.Node) -> bool:
    """`x.shape`, `x.ndim`, ...: a tensor attribute that only reads metadata."""
    return node.op == "call_function" and node.target is builtins.getattr and len(node.args) == 2 and node.args[1] in METADATA
