"""An input a forward keeps for later while a child is applied to it: kept under a name of its own first.

Where instances of a source class apply a child to their input in place (`x = self.conv_exp(x)`) and
others keep that input for a residual (`out = self.conv_exp(x)`, ..., `return out + x`), the latter are
written as such a source writes them: `shortcut = x`, then `x = self.conv_exp(x)`, ..., `return x +
shortcut`. Every instance then applies the child alike (in_place_children.across_codes shares them).

A class whose source forward starts by keeping its input under a name (timm's `shortcut = x`) and then
rebinds the input to a child's value (`x = self.conv1(x)`) is written so too (`as_in_source`), where
the graph, which has no node for the alias, gave the child's value a name of its own (`out = self.conv1(x)`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from .code_slots import line_tokens, parameter_names, rename_variables, variable_tokens
from .ir import ClassIR
from .regions import f_string
from .spelled_calls import parsed_line

SHORTCUT = "shortcut"
_APPLIED = re.compile(r"([A-Za-z_]\w*) = self\.(\w+)\(([A-Za-z_]\w*)\)")


def as_in_source(cls: ClassIR) -> ClassIR:
    """The class with its input kept under the name its source forward keeps it under first (`shortcut = x`),
    where that source then rebinds the input to the value of the child the forward first applies to it."""
    found = _source_alias(cls.source_forward)
    if found is None:
        return cls
    alias, parameter, rebinding = found
    first = next((m for line in cls.forward_lines if (m := _APPLIED.fullmatch(line)) and m[3] == parameter), None)
    if first is None or first[2] not in rebinding:
        return cls
    kept = kept_input(cls.forward_lines, cls.forward_params, first[2], alias)
    return cls if kept is None else replace(cls, forward_lines=kept)


def _source_alias(source: str) -> tuple[str, str, frozenset[str]] | None:
    """(alias, parameter, children) where the forward's first statement (after its docstring) is
    `alias = parameter` and `children` are those whose value it later binds to the parameter
    (`x = self.conv1(x)`); None otherwise."""
    tree = parsed_line(source) if source else None
    function = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    if not isinstance(function, ast.FunctionDef):
        return None
    parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    body = function.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    first = body[0] if body else None
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
        return None
    alias, value = first.targets[0].id, first.value
    if not isinstance(value, ast.Name) or value.id not in parameters or alias in parameters:
        return None
    rebinding = frozenset(
        node.value.func.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and [_name(t) for t in node.targets] == [value.id]
        and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) and _name(node.value.func.value) == "self"
    )  # fmt: skip
    return (alias, value.id, rebinding) if rebinding else None


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def kept_input(lines: tuple[str, ...], params: tuple[str, ...], child: str, alias: str = SHORTCUT) -> tuple[str, ...] | None:
    """The forward with the input its one call of `child` reads kept as `alias` before the call, and the
    call's value taking the input's name from there on (the lines after it renamed at once: the input's name
    to `alias`, the value's to the input's); None where the call does not bind a name of its own to a
    parameter's value read again later (`out = self.conv_exp(x)`), or the names do not allow it: the call's
    name used before it, `alias` used at all."""
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
    if parameter not in parameter_names(params) or alias in parameter_names(params) or value == parameter or any(alias in n for n in names):
        return None
    if any(value in n for n in names[:at]) or not any(parameter in n for n in names[at + 1 :]):
        return None
    start = at
    while start > 0 and not code[start - 1] and not lines[start - 1].startswith(" "):
        start -= 1  # the comments quoting the call's source line stay over it
    swapped = {value: parameter, parameter: alias}
    after = tuple(rename_variables(line, swapped) if is_code else line for line, is_code in zip(lines[at + 1 :], code[at + 1 :]))
    return (*lines[:start], f"{alias} = {parameter}", *lines[start:at], f"{parameter} = self.{child}({parameter})", *after)

