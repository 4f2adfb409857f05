"""A branch on an attribute that some instances set to None, whose arms differ only in passing it or None.

timm's `Linear` passes its bias on, `F.linear(x, self.weight, self.bias)`, and some instances have
none. Traced, those pass None, so the shared class branched:

    if self.bias is not None:
        return F.linear(x, self.weight, self.bias)
    return F.linear(x, self.weight, None)

Where `self.bias` is None the first arm passes None too, so the branch is its first arm alone, as the
source wrote it. The test reads the attribute before the call does, which a re-trace records (the
GraphModule would hold the bias before the weight), so the export of the export differed.
"""

from __future__ import annotations

import re

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
        i += 1
    return tuple(out)


def _joined_end(lines: list[str], at: int, indent: str, attribute: str) -> int | None:
    """Where the branch at `at` and its other arm end, if that arm is its first with None for the attribute."""
    first = _block(lines, at + 1, indent)
    start = at + 1 + len(first)
    passed_none = [_with_none(line, attribute) for line in first]
    if start < len(lines) and lines[start] == f"{indent}else:":
        other = _block(lines, start + 1, indent)
        return start + 1 + len(other) if [line[4:] for line in other] == [line[4:] for line in passed_none] else None
    if not first or not first[-1].lstrip(" ").startswith("return "):
        return None
    rest = lines[start : start + len(first)]
    return start + len(rest) if rest == [line[4:] for line in passed_none] and _block_ends(lines, start + len(rest), indent) else None


def _block(lines: list[str], start: int, indent: str) -> list[str]:
    """The lines from `start` indented under `indent`."""
    end = start
    while end < len(lines) and _is_under(lines[end], indent):
        end += 1
    return lines[start:end]


def _is_under(line: str, indent: str) -> bool:
    return line.startswith(f"{indent}    ")


def _block_ends(lines: list[str], at: int, indent: str) -> bool:
    """True at the end of the forward or of the block holding lines at `indent`."""
    return at == len(lines) or not lines[at].startswith(indent) or (len(lines[at]) - len(lines[at].lstrip(" "))) < len(indent)


def _with_none(line: str, attribute: str) -> str:
    """The code line with None where it reads `self.<attribute>` itself (not an attribute, call or item of it)."""
    if line.lstrip(" ").startswith("#"):
        return line
    return re.sub(rf"\bself\.{attribute}\b(?![\w.(\[])", "None", line)
