"""Keywords one instance's call writes and another's leaves at their default, written out in both.

torch.export spells torchvision r3d's `Conv3DSimple` as `F.conv3d(x, self.weight, None, stride=2,
padding=1)` in the blocks that downsample and `F.conv3d(x, self.weight, None, padding=1)` in the
others: the spelling leaves out a keyword at its default. Compared so, the two differ in more than
literals and come out as two codes. With `stride=1` written where it was left out, they differ in a
literal only and are one class taking `stride`. Keywords are written out only in the forwards of
classes of one source that are one code so, and only those some instance writes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch
import torch.nn.functional as F

from .aten_spellings import Keywords, keyword_defaults, keyword_targets, none_keywords
from .code_slots import masked, number_slots, per_line
from .ir import ClassIR
from .spelled_calls import char_offset, node_text, parsed_line


def with_shared_keywords(classes: tuple[ClassIR, ...]) -> tuple[ClassIR, ...]:
    """The classes, the forwards of those of one source that differ only in keywords left at their
    default (and literals) written with the keywords any of them writes."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for k, cls in enumerate(classes):
        if not cls.is_root and cls.forward_lines:
            full = tuple(_all_filled(line) for line in cls.forward_lines)
            if full != cls.forward_lines:
                groups.setdefault((*cls.source, cls.forward_params, _masked(full)), []).append(k)
    out = list(classes)
    for members in groups.values():
        forwards = [classes[k].forward_lines for k in members]
        if len(members) < 2 or len({_masked(f) for f in forwards}) == 1:
            continue
        for k in members:
            lines = tuple(_filled(line, _written(line, [f[i] for f in forwards])) for i, line in enumerate(classes[k].forward_lines))
            out[k] = replace(classes[k], forward_lines=lines)
    return tuple(out)


def _masked(lines: tuple[str, ...]) -> tuple[str, ...]:
    return masked(lines, number_slots(lines, nested=True))


def _written(line: str, lines: list[str]) -> list[set[str]]:
    """For each call of a known function in `line` (in order), the keywords any of `lines` writes there."""
    out: list[set[str]] = []
    for other in lines:
        for i, (_, keywords) in enumerate(_calls(other)):
            if i == len(out):
                out.append(set())
            out[i] |= {k.arg for k in keywords.keywords if k.arg}
    return out


@per_line
def _all_filled(line: str) -> str:
    """The line with every left-out default keyword of its known calls written (kept per line text:
    repeated blocks repeat their lines)."""
    return _filled(line, None) if any(_known(m.group(1)) is not None for m in _CALLED.finditer(line)) else line


def _filled(line: str, wanted: list[set[str]] | None) -> str:
    """The line with each call of a known function writing its left-out default keywords: those in
    `wanted` (per call, in order), or all of them (None)."""
    for i in range(len(_calls(line))):
        spec, call = _calls(line)[i]
        given = {k.arg for k in call.keywords if k.arg}
        missing = [k for k in spec.defaults if k not in given and (wanted is None or (i < len(wanted) and k in wanted[i]))]
        unpacked = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        if not missing or len(call.args) > spec.positional or unpacked or "\n" in line:
            continue
        values = {k.arg: node_text(line, k.value) for k in call.keywords if k.arg}
        values.update({k: repr(spec.defaults[k]) for k in missing})
        order = sorted(values, key=lambda k: spec.order.index(k) if k in spec.order else len(spec.order))
        arguments = [*(node_text(line, a) for a in call.args), *(f"{k}={values[k]}" for k in order)]
        start, end = _offsets(line, call)
        line = f"{line[:start]}{node_text(line, call.func)}({', '.join(arguments)}){line[end:]}"
    return line


def _calls(line: str) -> list[tuple[Keywords, ast.Call]]:
    """The calls of functions the spellings leave keywords out of, in the order they start."""
    tree = parsed_line(line)
    if tree is None:
        return []
    found = [(spec, node) for node in ast.walk(tree) if isinstance(node, ast.Call) and (spec := _known(node_text(line, node.func))) is not None]
    return sorted(found, key=lambda item: (item[1].col_offset, -(item[1].end_col_offset or 0)))


def _offsets(line: str, call: ast.Call) -> tuple[int, int]:
    return char_offset(line, call.col_offset), char_offset(line, call.end_col_offset)


# Where a line may call a function by the names _known() has: `F.name(` or `torch.name(` (one pattern
# for all: an alternation of its two dozen names took 0.8 ms to compile, in every first export).
_CALLED = re.compile(r"(?<![\w.])((?:F|torch)\.\w+)\(")


def _known(name: str) -> Keywords | None:
    """How a known function called by the name generated code calls it by (`F.conv3d`, `torch.cat`) takes
    its keywords, where some have defaults; else None."""
    target = _targets().get(name)
    spec = keyword_defaults(target) if target is not None else None
    return spec if spec is not None and spec.defaults else None


def none_defaults(name: str) -> frozenset[str]:
    """The keywords a known function called by `name` (`F.scaled_dot_product_attention`) defaults to None."""
    target = _targets().get(name)
    return none_keywords(target) if target is not None else frozenset()


@functools.cache
def _targets() -> dict[str, Callable[..., Any]]:
    """The functions the spellings call with keywords, by the names generated code calls them by."""
    out: dict[str, Callable[..., Any]] = {}
    for target in keyword_targets():
        name = getattr(target, "__name__", "")
        for prefix, module in (("F", F), ("torch", torch)):
            if getattr(module, name, None) is target:
                out[f"{prefix}.{name}"] = target
    return out
