"""A layer some instances of a Sequential subclass end with: a flag of its `__init__`.

torchvision's Conv2dNormActivation ends with its activation, unless built with
`activation_layer=None` (the projection of every MBConv and InvertedResidual). Its instances build
two or three layers, so their `__init__`s differ in more than literals and the class would take its
layers from its callers. Where the instances of a Sequential subclass differ only in whether they
end with one layer, built alike by all that do, that layer is set aside while generalize merges
their other layers as any class's, then added back under a flag named after it, on by default where
most instances build it: `Conv2dNormActivation(out_channels, out_channels_3, 1, activation=False)`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from .child_lines import init_template
from .code_slots import ACTIVATIONS
from .instances import Instances
from .ir import ClassIR
from .names import unique_identifier
from .spelled_calls import added_line, layer_name, without_defaults
from .super_calls import children_end, numbered_children


@dataclass(frozen=True)
class LastLayer:
    """The layer (its `add_module` line) that the instances `holders` of one source class end with."""

    line: str
    holders: frozenset[str]


def set_aside(level: list[ClassIR], known: dict[str, tuple[str, ...]]) -> tuple[list[ClassIR], dict[str, LastLayer]]:
    """The classes, those of a Sequential subclass whose instances differ in ending with one layer
    without it, and for each class of such a source class the layer set aside."""
    groups: dict[tuple[str, str], list[ClassIR]] = {}
    ends: dict[str, int] = {}  # by class: where its layers end (its own tensors follow)
    for cls in level:
        if cls.is_sequential and not cls.takes_children:
            end = ends[cls.name] = children_end(cls.init_lines)
            if numbered_children(cls.init_lines[:end]) is not None:
                groups.setdefault(cls.source, []).append(cls)
    aside: dict[str, LastLayer] = {}
    for group in groups.values():
        longest = max(ends[c.name] for c in group)
        ending = [c for c in group if ends[c.name] == longest]
        if len(ending) == len(group) or any(ends[c.name] != longest - 1 for c in group if c not in ending):
            continue
        lasts = {c.init_lines[longest - 1] for c in ending}
        shortened = [_without_line(c, longest - 1) if c in ending else c for c in group]
        if len(lasts) != 1 or len({init_template(c, known) for c in shortened}) != 1:
            continue
        layer = LastLayer(lasts.pop(), frozenset(c.name for c in ending))
        aside.update({c.name: layer for c in group})
    out = [_without_line(c, ends[c.name] - 1) if c.name in aside and c.name in aside[c.name].holders else c for c in level]
    return out, aside


def _without_line(cls: ClassIR, index: int) -> ClassIR:
    """The class without its `__init__` line `index` (its last layer; its own tensors, set after its layers, stay)."""
    return replace(cls, init_lines=(*cls.init_lines[:index], *cls.init_lines[index + 1 :]))


def added_back(
    merged: ClassIR, group: list[ClassIR], calls: dict[str, str], aside: Mapping[str, LastLayer], instances: Instances,
    known: dict[str, tuple[str, ...]],
) -> tuple[ClassIR, dict[str, str]]:
    """The merged class with its set-aside layer under a flag, and each instance's call with the flag where
    it is not the default."""
    layer = next((aside[c.name] for c in group if c.name in aside), None)
    if layer is None:
        return merged, calls
    names = [c.name for c in group]
    default = instances.most(frozenset(i for i, name in enumerate(names) if name in layer.holders), names)
    taken = {p.lstrip("*").partition("=")[0] for p in merged.init_params}
    base = _flag_base(layer.line)
    flag = unique_identifier(base if base not in taken else f"use_{base}", taken, "layer", start=2)  # not `activation_2`
    line = without_defaults(layer.line, known)
    end = children_end(merged.init_lines)  # after its layers, before its own tensors
    lines = (*merged.init_lines[:end], f"if {flag}:", f"    {line}", *merged.init_lines[end:])
    cls = replace(merged, init_params=(*merged.init_params, f"{flag}={default}"), init_lines=lines)
    flagged = {name: _with_keyword(call, flag, name in layer.holders) if (name in layer.holders) != default else call for name, call in calls.items()}
    return cls, flagged


def _flag_base(line: str) -> str:
    """`activation` for an activation layer (code_slots.ACTIVATIONS), else the layer's class in snake case (`dropout`)."""
    added = added_line(line)
    call = added[1] if added is not None else None
    if not isinstance(call, ast.Call):
        return "layer"
    if layer_name(call) in ACTIVATIONS:
        return "activation"
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", ast.unparse(call.func).rpartition(".")[2]).lower() or "layer"


def _with_keyword(call: str, flag: str, value: bool) -> str:
    """`Conv(8, 16)` -> `Conv(8, 16, activation=False)`."""
    head, _, _ = call.rpartition(")")
    separator = "" if head.endswith("(") else ", "
    return f"{head}{separator}{flag}={value})"
