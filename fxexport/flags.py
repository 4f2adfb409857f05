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
    seen = {name for line in plain if not line.startswith("#") for name in called_names(line)}
    for line in flagged:
        if line.startswith("#"):
            continue
        for name in _called(line):
            if name not in seen and name.strip("_"):
                return f"use_{name.strip('_').lower()}"
    return "variant"


def flagged_side(a: tuple[str, ...], b: tuple[str, ...], params: tuple[str, ...]) -> bool:
    """True when `b` is the side the flag turns on (the one that adds something), else `a` is."""
    name_a, name_b = flag_name(b, a, params), flag_name(a, b, params)
    if (name_a == "variant") != (name_b == "variant"):
        return name_a == "variant"
    return len(b) >= len(a)


def branched(plain: tuple[str, ...], flagged: tuple[str, ...], condition: str, negated: str) -> tuple[str, ...]:
    """The lines both forwards share once, the rest under `if <condition>:` (`if <negated>:` for the plain side alone)."""
    if plain == flagged:
        return plain
    start = 0
    while start < min(len(plain), len(flagged)) and plain[start] == flagged[start] and not _returns(plain[start]):
        start += 1
    end = 0
    while end < min(len(plain), len(flagged)) - start and plain[-1 - end] == flagged[-1 - end]:
        end += 1
    head, tail = plain[:start], plain[len(plain) - end :]
    only_plain, only_flagged = plain[start : len(plain) - end], flagged[start : len(flagged) - end]
    if not only_flagged:
        return (*head, f"if {negated}:", *_indented(only_plain), *tail)
    if not only_plain:
        return (*head, f"if {condition}:", *_indented(only_flagged), *tail)
    if not tail and _returns(only_flagged[-1]):
        return (*head, f"if {condition}:", *_indented(only_flagged), *only_plain)
    return (*head, f"if {condition}:", *_indented(only_flagged), "else:", *_indented(only_plain), *tail)


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
    return any(pattern.search(line) for line in lines if not line.startswith("#"))


_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _called(line: str) -> list[str]:
    """The last part of each called name in the line, in order: `roll` for `torch.roll(`, `proj` for `self.proj(`."""
    return [match[1].rpartition(".")[2] for match in _CALLED.finditer(line)]
