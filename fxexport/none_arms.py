"""A branch on an attribute that some instances set to None, whose arms differ only in passing it or None.

timm's `Linear` passes its bias on, `F.linear(x, self.weight, self.bias)`, and some instances have
none. Traced, those pass None, so the shared class branched:

    if self.bias is not None:
        return F.linear(x, self.weight, self.bias)
    return F.linear(x, self.weight, None)

Where `self.bias` is None the first arm passes None too, so the branch is its first arm alone, as the
source wrote it; so where the other arm leaves out a keyword torch's function defaults to None
(`F.layer_norm(x, (4,), weight=self.weight)` beside `..., bias=self.bias)`). The test reads the attribute before the call does, which a re-trace records (the
GraphModule would hold the bias before the weight), so the export of the export differed.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import torch

_TEST = re.compile(r"( *)if self\.(\w+) is not None:")


def none_arms_joined(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The forward with each such branch (module docstring) its first arm: followed by an `else:` arm, or,
    where the first arm returns, by the same lines to the end of its block."""
    out = list(lines)
    i = 0
    while i < len(out):
        test = _TEST.fullmatch(out[i])
        end = _joined_end(out, i, test[1], test[2]) if test is not None else None
        if test is not None and end is not None:
            out[i:end] = [line[4:] if _is_under(line, test[1]) else line for line in _block(out, i + 1, test[1])]
            continue  # the arm's first line may open another such branch
        i += 1
    return tuple(out)


def _joined_end(lines: list[str], at: int, indent: str, attribute: str) -> int | None:
    """Where the branch at `at` and its other arm end, if that arm is its first with None for the attribute."""
    first = _block(lines, at + 1, indent)
    start = at + 1 + len(first)
    if start < len(lines) and lines[start] == f"{indent}else:":
        other = _block(lines, start + 1, indent)
        return start + 1 + len(other) if _without_it(first, other, attribute) else None
    if not first or not first[-1].startswith(f"{indent}    return "):  # a return of its own, not of a block inside it
        return None
    rest = lines[start : start + len(first)]
    return start + len(rest) if _without_it(first, [f"    {line}" for line in rest], attribute) and _block_ends(lines, start + len(rest), indent) else None


def _without_it(first: list[str], other: list[str], attribute: str) -> bool:
    """True where each line of the other arm is the first arm's, passing None for the attribute or leaving
    out the keyword that passes it where None is that keyword's default (`F.layer_norm(x, s, bias=None)`)."""
    return len(first) == len(other) and all(theirs in (_with_none(ours, attribute), _without_keyword(ours, attribute)) for ours, theirs in zip(first, other))


def _block(lines: list[str], start: int, indent: str) -> list[str]:
    """The lines from `start` indented under `indent`."""
    end = start
    while end < len(lines) and _is_under(lines[end], indent):
        end += 1
    return lines[start:end]


def _is_under(line: str, indent: str) -> bool:
    return line.startswith(f"{indent}    ") or not line.strip()  # a blank line stays in its block


def _block_ends(lines: list[str], at: int, indent: str) -> bool:
    """True at the end of the forward or of the block holding lines at `indent`."""
    return at == len(lines) or len(lines[at]) - len(lines[at].lstrip(" ")) < len(indent)


def _without_keyword(line: str, attribute: str) -> str | None:
    """The code line without its one `, name=self.<attribute>` keyword, where the function called (of
    torch.nn.functional or torch) defaults it to None; else None."""
    found = list(re.finditer(rf", (\w+)=self\.{attribute}\b(?![\w.(\[])", line))
    if len(found) != 1 or line.lstrip(" ").startswith("#"):
        return None
    called = re.search(r"\b(F|torch)\.([\w.]+)\($", line[: _call_start(line, found[0].start())])
    function = _resolved(called[1], called[2]) if called is not None else None
    try:
        default = inspect.signature(function).parameters[found[0][1]].default if function is not None else inspect.Parameter.empty
    except (TypeError, ValueError, KeyError):
        return None
    return line[: found[0].start()] + line[found[0].end() :] if default is None else None


def _call_start(line: str, at: int) -> int:
    """Where the call whose argument list holds `at` opens: just after its `(`."""
    depth = 0
    for i in range(at - 1, -1, -1):
        depth += {")": 1, "]": 1, "}": 1, "(": -1, "[": -1, "{": -1}.get(line[i], 0)
        if depth < 0:
            return i + 1
    return 0


def _resolved(module: str, dotted: str) -> Callable[..., Any] | None:
    """`F.layer_norm` (module "F", dotted "layer_norm") as the function it names in generated code."""
    found: object = torch.nn.functional if module == "F" else torch
    for name in dotted.split("."):
        found = getattr(found, name, None)
    return found if callable(found) else None


def _with_none(line: str, attribute: str) -> str:
    """The code line with None where it reads `self.<attribute>` itself (not an attribute, call or item of it)."""
    if line.lstrip(" ").startswith("#"):
        return line
    return re.sub(rf"\bself\.{attribute}\b(?![\w.(\[])", "None", line)
