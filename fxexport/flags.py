"""Two forwards of one class as one, branching on a flag the constructor takes.

torchvision's `InvertedResidual` builds the same layers in every block, and adds its input back
only where the shapes allow (`if self.use_res_connect: return x + self.conv(x)`). Traced, each
instance runs only its own side, so the blocks come out as two codes of one `__init__`. They are
one class whose forward holds both, the common lines once and the rest under `if self.<flag>:`,
and each instance is built with its side (`InvertedResidual(16, 96, residual=True)`). The flag is
named after what its side adds: `residual` for adding a forward input back, `use_<name>` for the
first function or layer only that side calls, else `variant`.
"""

from __future__ import annotations

import re

from .code_slots import called_names

INDENT = "    "


def flag_name(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> str:
    """What the flagged forward does that the plain one does not, as a parameter name."""
    inputs = [p.lstrip("*").split("=")[0] for p in params]
    if _adds_input(flagged, inputs) and not _adds_input(plain, inputs):
        return "residual"
    seen = {name for line in code_lines(plain) for name in called_names(line)}
    bound = {m[1] for line in flagged if (m := re.match(r"\s*for (\w+) in ", line))}  # a loop's variable says nothing
    for line in code_lines(flagged):
        for name in _called(line):
            if name not in seen and name not in bound and name.strip("_"):
                return f"use_{name.strip('_').lower()}"
    return "variant"


def flagged_side(a: tuple[str, ...], b: tuple[str, ...], params: tuple[str, ...]) -> bool:
    """True when `b` is the side the flag turns on (the one that adds something), else `a` is."""
    name_a, name_b = flag_name(b, a, params), flag_name(a, b, params)
    if (name_a == "variant") != (name_b == "variant"):
        return name_a == "variant"
    return len(b) >= len(a)


def branched(plain: tuple[str, ...], flagged: tuple[str, ...], condition: str, negated: str) -> tuple[str, ...]:
    """The statements both forwards share once, the rest under `if <condition>:` (`if <negated>:` for
    the plain side alone). A loop and its body are one statement; a side whose own lines are only
    comments has none."""
    if code_lines(plain) == code_lines(flagged):
        return plain
    a, b = _statements(plain), _statements(flagged)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start] and not _returns(a[start][0]):
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    head, tail = _lines(a[:start]), _lines(a[len(a) - end :])
    only_plain, only_flagged = _lines(a[start : len(a) - end]), _lines(b[start : len(b) - end])
    only_plain = only_plain if code_lines(only_plain) else ()
    only_flagged = only_flagged if code_lines(only_flagged) else ()
    if not only_flagged:
        return (*head, f"if {negated}:", *_indented(only_plain), *tail)
    if not only_plain:
        return (*head, f"if {condition}:", *_indented(only_flagged), *tail)
    if not tail and _returns(only_flagged[-1]):  # a top-level return: the plain side follows without else
        return (*head, f"if {condition}:", *_indented(only_flagged), *only_plain)
    return (*head, f"if {condition}:", *_indented(only_flagged), "else:", *_indented(only_plain), *tail)


def code_lines(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The lines that are code, not comments."""
    return tuple(line for line in lines if not line.lstrip().startswith("#"))


def _statements(lines: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Top-level statements: a line and the indented lines after it (a loop's body)."""
    out: list[tuple[str, ...]] = []
    for line in lines:
        if line.startswith((" ", "\t")) and out:
            out[-1] = (*out[-1], line)
        else:
            out.append((line,))
    return out


def _lines(statements: list[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(line for statement in statements for line in statement)


def _indented(lines: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(INDENT + line for line in lines)


def _returns(line: str) -> bool:
    return line.startswith("return ") or line == "return"


def _adds_input(lines: tuple[str, ...], inputs: list[str]) -> bool:
    """True when a line adds a forward input to something (`x + out`, `out + x`, `out += x`, `out.add_(x)`)."""
    names = "|".join(re.escape(name) for name in inputs if name)
    if not names:
        return False
    pattern = re.compile(rf"(?<![\w.])(?:{names})\s*\+(?!=)|\+=?\s*(?:{names})(?![\w.(\[])|\.add_?\((?:{names})[,)]|(?<![\w.])(?:{names})\.add_?\(")
    return any(pattern.search(line) for line in code_lines(lines))


_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _called(line: str) -> list[str]:
    """The last part of each called name in the line, in order: `roll` for `torch.roll(`, `proj` for `self.proj(`."""
    return [match[1].rpartition(".")[2] for match in _CALLED.finditer(line)]
