"""An input a forward keeps for later while a child is applied to it: kept under a name of its own first.

Where instances of a source class apply a child to their input in place (`x = self.conv_exp(x)`) and
others keep that input for a residual (`out = self.conv_exp(x)`, ..., `return out + x`), the latter are
written as such a source writes them: `shortcut = x`, then `x = self.conv_exp(x)`, ..., `return x +
shortcut`. Every instance then applies the child alike (in_place_children.across_codes shares them).
"""

from __future__ import annotations

import re

from .code_slots import line_tokens, parameter_names, rename_variables, variable_tokens
from .regions import f_string

SHORTCUT = "shortcut"
_APPLIED = re.compile(r"([A-Za-z_]\w*) = self\.(\w+)\(([A-Za-z_]\w*)\)")


def kept_input(lines: tuple[str, ...], params: tuple[str, ...], child: str) -> tuple[str, ...] | None:
    """The forward with the input its one call of `child` reads kept as `shortcut` before the call, and the
    call's value taking the input's name from there on (the lines after it renamed at once: the input's name
    to `shortcut`, the value's to the input's); None where the call does not bind a name of its own to a
    parameter's value read again later (`out = self.conv_exp(x)`), or the names do not allow it: the call's
    name used before it, `shortcut` used at all."""
    calls = [j for j, line in enumerate(lines) if (m := _APPLIED.fullmatch(line)) and m[2] == child]
    if len(calls) != 1:
        return None
    at = calls[0]
    found = _APPLIED.fullmatch(lines[at])
    assert found is not None
    value, parameter = found[1], found[3]
    code = [not line.lstrip().startswith("#") for line in lines]
    tokens = [line_tokens(line) if is_code else [] for line, is_code in zip(lines, code)]
    if any(f_string(t) for line in tokens for t in line):
        return None  # an f-string's names are no tokens of their own before Python 3.12: not renamed
    names = [{t.string for t in variable_tokens(line)} for line in tokens]
    if parameter not in parameter_names(params) or value == parameter or any(SHORTCUT in n for n in names):
        return None
    if any(value in n for n in names[:at]) or not any(parameter in n for n in names[at + 1 :]):
        return None
    start = at
    while start > 0 and not code[start - 1] and not lines[start - 1].startswith(" "):
        start -= 1  # the comments quoting the call's source line stay over it
    swapped = {value: parameter, parameter: SHORTCUT}
    after = tuple(rename_variables(line, swapped) if is_code else line for line, is_code in zip(lines[at + 1 :], code[at + 1 :]))
    return (*lines[:start], f"{SHORTCUT} = {parameter}", *lines[start:at], f"{parameter} = self.{child}({parameter})", *after)

