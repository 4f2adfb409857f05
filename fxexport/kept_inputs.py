"""An input a forward keeps for later while a child is applied to it: kept under a name of its own first.

Where instances of a source class apply a child to their input in place (`x = self.conv_exp(x)`) and
others keep that input for a residual (`out = self.conv_exp(x)`, ..., `return out + x`), the latter are
written as such a source writes them: `shortcut = x`, then `x = self.conv_exp(x)`, ..., `return x +
shortcut`. Every instance then applies the child alike (in_place_children.across_codes shares them).

A class whose source forward starts by keeping its input under a name (timm's `shortcut = x`) and then
rebinds the input to a child's value (`x = self.conv1(x)`) is written so too (`as_in_source`), where
the graph, which has no node for the alias, gave the child's value a name of its own (`out = self.conv1(x)`).
So is a value the source binds, keeps under another name at once and rebinds to a child's value
(transformers' decoder layers: `hidden_states = residual + hidden_states`, `residual = hidden_states`,
`hidden_states = self.post_attention_layernorm(hidden_states)`), where the graph named the value
after its later read (`residual = residual + hidden_states`) and the chain `out_1`; also where the pair
is the first of an `if` block (Whisper's `if encoder_hidden_states is not None:`) or follows one.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterator
from dataclasses import replace
from typing import cast

from .code_slots import line_tokens, parameter_names, rename_variables, variable_tokens
from .ir import ClassIR
from .regions import f_string
from .source_names import bound_name, called_child, kept_input_alias, plain_name
from .spelled_calls import parsed_line

SHORTCUT = "shortcut"
_APPLIED = re.compile(r"([A-Za-z_]\w*) = self\.(\w+)\(([A-Za-z_]\w*)\)")


def as_in_source(cls: ClassIR) -> ClassIR:
    """The class with its input kept under the name its source forward keeps it under first (`shortcut = x`),
    where that source then rebinds the input to the value of the child the forward first applies to it;
    and each value the source keeps under another name at once (`_kept_values`)."""
    lines = cls.forward_lines
    found = kept_input_alias(cls.source_forward)
    if found is not None:
        alias, parameter, rebinding, _, bound_alias = found
        first = next((m for line in lines if (m := _APPLIED.fullmatch(line)) and m[3] == parameter), None)
        if first is not None and first[2] in rebinding:
            lines = kept_input(lines, cls.forward_params, first[2], alias) or lines
        elif parameter in parameter_names(cls.forward_params):
            lines = _alias_rebound(lines, alias, parameter, bound_alias)
            lines = _input_name_reused(lines, parameter, rebinding)
    lines = _kept_values(lines, cls.source_forward)  # after the input's: its names are the source's then
    return cls if lines == cls.forward_lines else replace(cls, forward_lines=lines)


def _alias_rebound(lines: tuple[str, ...], alias: str, parameter: str, children: frozenset[str]) -> tuple[str, ...]:
    """The forward with the input kept as `alias` first where the source keeps it so and later binds the
    alias, not the input, to the value of one of `children` (torchvision's `identity = x`, ..., `identity =
    self.downsample(x)`, `out += identity`; timm's pre-activation blocks, `shortcut = x`, ..., `shortcut =
    self.downsample(x_preact)`): the forward's `x = self.downsample(...)` (under its `if` or not) binds
    `alias`, read from there where it read `x`; the alias is kept first only where that call is under an
    `if`. Not where the forward binds `x` elsewhere or names anything `alias`."""
    at = next((j for j, line in enumerate(lines) if (m := _APPLIED.fullmatch(line.lstrip(" "))) and m[1] == parameter and m[2] in children), None)
    if at is None or _in_loop(lines, at):
        return lines  # in a loop the input's name carries a value from one step to the next
    read = _code_names(lines)
    if read is None:
        return lines
    code, names = read
    if any(alias in n for n in names) or any(binds(line, parameter) for j, line in enumerate(lines) if code[j] and j != at):
        return lines
    if not any(parameter in n for n in names[at + 1 :]):
        return lines
    line = lines[at]
    indent = _indent(line)
    applied = cast(re.Match[str], _APPLIED.fullmatch(line.lstrip(" ")))
    after = tuple(rename_variables(text, {parameter: alias}) if is_code else text for text, is_code in zip(lines[at + 1 :], code[at + 1 :]))
    kept = (f"{alias} = {parameter}",) if indent else ()  # a child every instance calls binds it first: nothing to keep
    return (*kept, *lines[:at], f"{indent}{alias} = self.{applied[2]}({applied[3]})", *after)


def _input_name_reused(lines: tuple[str, ...], parameter: str, children: frozenset[str]) -> tuple[str, ...]:
    """The forward with the value of the first child the source binds to the input's name (`x =
    self.conv1(x_preact)`, after `shortcut = x`) taking that name, where the forward reads the input no more
    from there and named the value otherwise (`out`, unused before): the value and what takes its name
    after it, as the source rebinds the input."""
    at = next((j for j, line in enumerate(lines) if (m := _APPLIED.fullmatch(line)) and m[2] in children), None)
    read = _code_names(lines) if at is not None else None
    if at is None or read is None:
        return lines
    code, names = read
    value = cast(re.Match[str], _APPLIED.fullmatch(lines[at]))[1]
    if value == parameter or any(parameter in n for n in names[at:]) or any(value in n for n in names[:at]):
        return lines
    return (*lines[:at], *(rename_variables(line, {value: parameter}) if is_code else line for line, is_code in zip(lines[at:], code[at:])))


def _in_loop(lines: tuple[str, ...], at: int) -> bool:
    """True where line `at` is inside a `for` or `while` block (its headers: the lines above it indented less)."""
    indent = len(_indent(lines[at]))
    for line in reversed(lines[:at]):
        own = len(_indent(line))
        if own < indent and line.strip() and not line.lstrip().startswith("#"):
            if re.match(r"(?:async\s+)?(?:for|while)\b", line.lstrip()):
                return True
            indent = own
    return False


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" "))]


def binds(line: str, name: str) -> bool:
    """True when the line binds `name` (`name = ...`, `a, name = ...`, `name += ...`, `for name in ...`)."""
    tokens = line_tokens(line)
    depth = 0
    for i, token in enumerate(tokens):
        depth += (token.string in "([{") - (token.string in ")]}") if token.type == tokenize.OP else 0
        if depth == 0 and token.type == tokenize.OP and token.string in _ASSIGNING or (i == 0 and token.string == "for"):
            target = tokens[1 : _index_of(tokens, "in")] if token.string == "for" else tokens[:i]
            return name in {t.string for t in variable_tokens(target)}
    return False


def _index_of(tokens: list[tokenize.TokenInfo], word: str) -> int:
    return next((i for i, t in enumerate(tokens) if t.string == word), len(tokens))


_ASSIGNING = frozenset({"=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<="})


def _kept_values(lines: tuple[str, ...], source: str) -> tuple[str, ...]:
    """The forward with each value the source keeps under another name at once before rebinding its name
    to a child's value (`r = h`, `h = self.norm(h)`) written so: where the forward binds the value to the
    keeping name (`r = r + h`, the source's `h = r + h` before the pair), first bound to `h`
    (`_bound_to_the_name`); then, where the forward applies the child to it under a name of its own
    (`out = self.norm(h)`), kept_input's `r = h` and the call rebinding `h`."""
    for name, alias, child, value in _source_kept_values(source):
        if value is not None:
            lines = _bound_to_the_name(lines, name, alias, value)
        call = next((j for j, line in enumerate(lines) if (m := _APPLIED.fullmatch(line)) and m[2] == child and m[3] == name and m[1] != name), None)
        bound = [i for i, line in enumerate(lines[:call]) if line.startswith(f"{name} = ")] if call is not None else []
        if not bound:
            continue
        kept = kept_input(lines[bound[-1] + 1 :], (name,), child, alias)  # None where the alias is read or bound there
        lines = lines if kept is None else (*lines[: bound[-1] + 1], *kept)
    return lines


def _bound_to_the_name(lines: tuple[str, ...], name: str, alias: str, value: str) -> tuple[str, ...]:
    """The forward with the value it binds to `alias` (`r = r + h`, the source's `h = r + h`) bound to `name`
    and read as `name` from there, where it reads neither the name's last value nor binds the alias after."""
    for i, line in enumerate(lines):
        if _assignment(line) != (alias, value):
            continue
        after = _undeleted(lines[i + 1 :], name)  # the name's last value died there: rebinding the name frees it
        read = _code_names(after)
        if read is None or any(name in names for names in read[1]) or any(binds(text, name) for text in after):
            continue  # the alias is renamed throughout, a later binding of it too (`r = r + h` again: `h = h + ...`)
        reads = tuple(rename_variables(text, {alias: name}) if is_code else text for text, is_code in zip(after, read[0]))
        return (*lines[:i], f"{name} = {line.split(' = ', 1)[1]}", *reads)
    return lines


def _undeleted(lines: tuple[str, ...], name: str) -> tuple[str, ...]:
    """The lines without deleting `name` (`del hidden_states`; `del out, hidden_states` keeps `del out`)."""
    out = []
    for line in lines:
        targets = line.removeprefix("del ").split(", ") if line.startswith("del ") else None
        if targets is None or name not in targets:
            out.append(line)
        elif len(targets) > 1:
            out.append("del " + ", ".join(t for t in targets if t != name))
    return tuple(out)


def _assignment(line: str) -> tuple[str, str] | None:
    """(target, the value's code as ast.unparse writes it) of a line binding one name, else None."""
    if " = " not in line or line.startswith((" ", "#")):
        return None
    tree = parsed_line(line)
    statement = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    name = bound_name(statement) if statement is not None else None
    return None if name is None else (name, ast.unparse(cast(ast.Assign, statement).value))


def _source_kept_values(source: str) -> list[tuple[str, str, str, str | None]]:
    """(name, alias, child, the value's code) for each two statements of the source forward in a row
    `alias = name`, `name = self.<child>(...)`; the value's code where the statement before them is
    `name = <value>`, else None."""
    tree = parsed_line(source) if source else None
    if tree is None:
        return []
    found: list[tuple[int, tuple[str, str, str, str | None]]] = []
    for block, ahead in _blocks(tree.body, None):
        for k, (kept, rebound) in enumerate(zip(block, block[1:])):
            alias, name, child = bound_name(kept), bound_name(rebound), called_child(rebound)
            if alias is None or name is None or child is None or name == alias or plain_name(cast(ast.Assign, kept).value) != name:
                continue
            value = _value_before(block, k, ahead, name)
            found.append((kept.lineno, (name, alias, child, value)))
    return [entry for _, entry in sorted(found)]  # in the source's order: one pair's rebinding feeds the next's


def _value_before(block: list[ast.stmt], k: int, ahead: ast.stmt | None, name: str) -> str | None:
    """The code of the value the statement that runs just before `block[k]` binds to `name`, else None; after
    an `if`, the value each way through it binds (Whisper's `hidden_states = residual + hidden_states` both
    at the end of `if encoder_hidden_states is not None:` and before it)."""
    before = block[k - 1] if k > 0 else ahead
    if isinstance(before, ast.If):
        ends = [before.body[-1], before.orelse[-1] if before.orelse else (block[k - 2] if k > 1 else ahead)]
        values = {_value_before([end], 1, None, name) if end is not None else None for end in ends}
        return values.pop() if len(values) == 1 else None
    return ast.unparse(cast(ast.Assign, before).value) if before is not None and bound_name(before) == name else None


def _blocks(block: list[ast.stmt], ahead: ast.stmt | None) -> Iterator[tuple[list[ast.stmt], ast.stmt | None]]:
    """Each block of statements with the statement that runs just before its first: the one before it in
    its block, or, for the first of an `if`'s body (Whisper's `if encoder_hidden_states is not None:
    residual = hidden_states`), the one before the `if`."""
    yield block, ahead
    for k, statement in enumerate(block):
        before = block[k - 1] if k > 0 else ahead
        inner = [getattr(statement, field, None) for field in ("body", "orelse", "finalbody")]
        inner += [handler.body for handler in getattr(statement, "handlers", [])]  # a `try`'s `except` blocks
        for body in inner:
            if isinstance(body, list) and body:
                yield from _blocks(body, before if isinstance(statement, ast.If) else None)


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
    read = _code_names(lines)
    if read is None:
        return None
    code, names = read
    if parameter not in parameter_names(params) or alias in parameter_names(params) or value == parameter:
        return None
    if any(alias in n for n in names) and not _alias_bound_after(lines, code, names, at, parameter, alias):
        return None
    if any(value in n for n in names[:at]) or not any(parameter in n for n in names[at + 1 :]):
        return None
    start = at
    while start > 0 and not code[start - 1] and not lines[start - 1].startswith(" "):
        start -= 1  # the comments quoting the call's source line stay over it
    swapped = {value: parameter, parameter: alias}
    rebound = _rebinding(lines, code, names, at, parameter, value, alias)
    stop = len(lines) if rebound is None else rebound
    after = tuple(rename_variables(line, swapped) if is_code else line for line, is_code in zip(lines[at + 1 : stop], code[at + 1 : stop]))
    if rebound is not None:  # the source binds the input's name to a new value there: `x = shortcut + x`, then `x` is that
        indent, rest = lines[rebound].split(f"{parameter} = ", 1)
        after += (f"{indent}{parameter} = {rename_variables(rest, swapped)}", *lines[rebound + 1 :])
    return (*lines[:start], f"{alias} = {parameter}", *lines[start:at], f"{parameter} = self.{child}({parameter})", *after)


def _alias_bound_after(lines: tuple[str, ...], code: list[bool], names: list[set[str]], at: int, parameter: str, alias: str) -> bool:
    """True when the forward names nothing `alias` until a plain statement of the call's block after it
    binds that name (`residual = x + out`, the source's `residual = residual + out` once the input is
    kept as `residual`), and reads the input no more from there: the input's reads renamed to the alias
    all come before the alias takes its new value."""
    first = next((j for j, n in enumerate(names) if alias in n), None)
    if first is None or first <= at or not code[first]:
        return False
    indent = _indent(lines[at])
    if not lines[first].startswith(f"{indent}{alias} = ") or not all(line.startswith(indent) for line in lines[at + 1 : first]):
        return False
    if alias in {t.string for t in variable_tokens(line_tokens(lines[first].split(f"{alias} = ", 1)[1]))}:
        return False  # it reads the alias's value from before these lines (a caller's slice of a forward)
    return not any(parameter in n for n in names[first + 1 :]) and not any(binds(line, parameter) for line in lines[at + 1 : first + 1])


def _rebinding(lines: tuple[str, ...], code: list[bool], names: list[set[str]], at: int, parameter: str, value: str, alias: str) -> int | None:
    """The line after `at` that binds the input's name to a new value as a plain statement of the call's
    block (`x = x + out`, which the renaming would make `shortcut = shortcut + x`), where nothing after it
    reads the call's value; None where there is none (every later line is renamed)."""
    indent = _indent(lines[at])
    for j in range(at + 1, len(lines)):
        if not code[j] or not binds(lines[j], parameter):
            continue
        plain = lines[j].startswith(f"{indent}{parameter} = ") and not any(value in n or alias in n for n in names[j + 1 :])
        return j if plain and all(line.startswith(indent) for line in lines[at + 1 : j]) else None
    return None


def _code_names(lines: tuple[str, ...]) -> tuple[list[bool], list[set[str]]] | None:
    """Which lines are code (not comments), and the variables each reads or binds; None where a line holds an
    f-string, whose names are no tokens of their own before Python 3.12, so renaming would miss them."""
    code = [not line.lstrip().startswith("#") for line in lines]
    tokens = [line_tokens(line) if is_code else [] for line, is_code in zip(lines, code)]
    if any(f_string(t) for line in tokens for t in line):
        return None
    return code, [{t.string for t in variable_tokens(line)} for line in tokens]
