"""Calls that pass their inputs as one list: `self.layer([x, layer1, layer2])`.

A DenseNet layer reads every earlier feature map as one list (`torch.cat(features, 1)`), so each
instance of it has another number of inputs. Cut out one parameter per input, every instance would
be a class of its own (`forward(self, x, x_1)`, `forward(self, x, x_1, x_2)`, ...). Where every call
of a class reads its inputs only as one list (or tuple) of all of them, in order, and the calls
differ in how many they take, the method takes the list and each call builds it: one class, as the
source wrote it. A class whose calls all take the same number of inputs keeps one parameter each.
"""

from __future__ import annotations

from collections import defaultdict

from torch import fx

from .calls import Call
from .subgraphs import ListArgument


def list_arguments(calls: list[Call]) -> dict[str, ListArgument]:
    """By frame key, the calls whose method takes their inputs as one list."""
    found: dict[str, ListArgument | None] = {c.frame.key: _list_argument(c) for c in calls}
    by_class: dict[object, list[Call]] = defaultdict(list)
    for call in calls:
        by_class[call.frame.cls].append(call)
    out: dict[str, ListArgument] = {}
    for group in by_class.values():
        lists = [found[c.frame.key] for c in group]
        if all(lists) and len({len(a.container) for a in lists if a is not None}) > 1:
            out.update({c.frame.key: a for c, a in zip(group, lists) if a is not None})
    return out


def _list_argument(call: Call) -> ListArgument | None:
    """The one list (or tuple) of the body's arguments that holds all the call's inputs, in order,
    when the body reads them nowhere else."""
    inputs, _ = call.interface()
    inside = set(call.nodes())
    users = {u for node in inputs for u in node.users if u in inside}
    if not inputs or len(users) != 1:
        return None
    user = users.pop()
    if not any(item is user for item in call.items):
        return None  # read inside a nested call: that call's inputs are the values, not the list
    reads: list[fx.Node] = []
    fx.map_arg((user.args, user.kwargs), reads.append)
    if any(reads.count(node) != 1 for node in inputs):
        return None
    for container in _containers([*user.args, *user.kwargs.values()]):
        if len(container) == len(inputs) and all(a is b for a, b in zip(container, inputs)):
            return ListArgument(user, container)
    return None


def _containers(items: list[object]) -> list[list[fx.Node] | tuple[fx.Node, ...]]:
    """The lists and tuples among `items` (a node's arguments) and nested in them."""
    out: list[list[fx.Node] | tuple[fx.Node, ...]] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.append(item)
            out += _containers(list(item))
        elif isinstance(item, dict):
            out += _containers(list(item.values()))
    return out
