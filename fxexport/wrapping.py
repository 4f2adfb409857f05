"""A long constructor statement, call, display or `def` line wrapped as black wraps it, without black.

Importing black costs a tenth of a second and black a millisecond per line; the long lines of
generated code are nearly all constructor calls (`nn.Conv2d(...)`, nested `nn.Sequential`,
`nn.ModuleList([...])`), method calls (`self.register_buffer(...)`), tables of literals
(`NAME = {...}`), `def` lines with many defaults and runs of children built alike
(`nn.Sequential(*[Block(64) for _ in range(3)])`), whose wrapping black decides by a few rules: split
at the call's bracket; arguments on one line if they fit, else one per line with a trailing comma;
a list, tuple or dict of several items always one per line once split; a comprehension split
before its `for`, with no comma; each line too long split the same way. `wrap` returns None for anything else (black decides it); tests/test_wrapping.py
compares it with black on every shape it accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_LENGTH = 88
# Strings in double quotes only (black would requote others); numbers only as black writes them
# (it rewrites `1e+38` as `1e38`, `1E5` as `1e5`, `0XFF` as `0xFF`).
_TOKEN = re.compile(r"""\s*(?:"[^"]*"|-?[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?(?![0-9A-Za-z_.+])|[A-Za-z_][A-Za-z0-9_]*|[()\[\]{},.=:*])""")
# A target: a dotted name, indexed by numbers or plain string keys (`self.stages[1][0].shortcut`,
# `self.blocks["q"]`): black wraps those statements as it wraps `self.shortcut = ...`.
_TARGET = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:[0-9]+|"[A-Za-z0-9_]*")\])* = """)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(r"def (?=[A-Za-z_])")
_RETURNS = re.compile(r"(?: -> [A-Za-z_][A-Za-z0-9_.]*)?:$")
_CLOSE = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class _Group:
    """A bracketed expression: `opener` is `nn.Conv2d(` for a call, `[`, `(` or `{` for a display."""

    opener: str
    items: tuple[tuple[str, object], ...]  # (prefix such as `stride=`, `*` or `"key": `, expression)
    clause: str = ""  # a list comprehension's `for _ in range(3)` after its one item

    @property
    def closer(self) -> str:
        return _CLOSE[self.opener[-1]]

    @property
    def is_display(self) -> bool:
        return len(self.opener) == 1


class _Unsupported(Exception):
    pass


def wrap(line: str, indent: int) -> list[str] | None:
    """The lines black writes for the statement `line` at `indent` columns, or None when black must decide.

    Only `name.name[0] = call-or-display`, a call on its own, or `def name(parameters) -> name:`,
    where the call's arguments are names, numbers, strings, calls, lists, tuples and dicts of them
    (a def's parameters: names with such defaults), written as black writes them on one line.
    """
    if not line.isascii() or "\\" in line:
        return None  # black counts columns of wide characters; escapes need no handling in constructor code
    prefix, text, suffix = _parts(line)
    try:
        tokens = _tokens(text)
        expression, end = _expression(tokens, 0)
    except _Unsupported:
        return None
    if end != len(tokens) or not isinstance(expression, _Group) or _text(expression) != text:
        return None  # not one call or display, or not spaced as black spaces it
    if expression.is_display and not prefix.endswith(" = "):
        return None  # a display on its own is no statement of ours
    if prefix == "def " and any(p == "*" for p, _ in expression.items):
        return None  # a star parameter
    if prefix == "def " and not all(isinstance(value, str) and _NAME.fullmatch(value) for value in _plain_parameters(expression)):
        return None  # a parameter is a name, with or without a default
    if prefix == "def " and len(expression.items) == 1 and indent + len(line) > LINE_LENGTH:
        return None  # black splits a lone parameter onto its line with a trailing comma
    return _lines(prefix, expression, suffix, indent)


def _parts(line: str) -> tuple[str, str, str]:
    """`line` as what comes before its bracketed expression, that expression, and what follows it."""
    if _DEF.match(line) and (returns := _RETURNS.search(line)):
        return "def ", line[4 : returns.start()], returns.group()
    target = _TARGET.match(line)
    return ("", line, "") if target is None else (target.group(), line[target.end() :], "")


def _plain_parameters(group: _Group) -> list[object]:
    """The items of a def's parameter list that must be plain names: those without a default."""
    return [value for prefix, value in group.items if not prefix]


def _tokens(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise _Unsupported
        tokens.append(match.group().strip())
        position = match.end()
    return tokens


def _expression(tokens: list[str], at: int) -> tuple[object, int]:
    """A name (dotted), literal, call of a dotted name, or display, from `tokens[at]`; and where it ends."""
    if at >= len(tokens):
        raise _Unsupported
    token = tokens[at]
    if token in _CLOSE:
        return _group(token, tokens, at + 1)
    if not (token[0].isalnum() or token[0] in '_-"'):
        raise _Unsupported
    if token[0].isalpha() or token[0] == "_":
        while at + 2 < len(tokens) and tokens[at + 1] == "." and tokens[at + 2][0].isalpha():
            token, at = f"{token}.{tokens[at + 2]}", at + 2
        if at + 1 < len(tokens) and tokens[at + 1] == "(":
            return _group(f"{token}(", tokens, at + 2)
    return token, at + 1


def _group(opener: str, tokens: list[str], at: int) -> tuple[_Group, int]:
    closer, items = _CLOSE[opener[-1]], []
    while at < len(tokens) and tokens[at] != closer:
        prefix = ""
        if opener[-1] == "(" and len(opener) > 1 and at + 1 < len(tokens) and tokens[at + 1] == "=":
            prefix, at = f"{tokens[at]}=", at + 2
        elif opener[-1] == "(" and len(opener) > 1 and tokens[at] == "*":
            prefix, at = "*", at + 1  # an unpacked argument: `*[Block() for _ in range(3)]`
        elif opener == "{":
            key, at = _expression(tokens, at)
            if at >= len(tokens) or tokens[at] != ":" or isinstance(key, _Group):
                raise _Unsupported
            prefix, at = f"{key}: ", at + 1
        value, at = _expression(tokens, at)
        items.append((prefix, value))
        if opener == "[" and len(items) == 1 and at < len(tokens) and tokens[at] == "for":
            clause, at = _for_clause(tokens, at)
            if at >= len(tokens) or tokens[at] != closer:
                raise _Unsupported  # another `for` or an `if`: black decides
            return _Group(opener, tuple(items), clause), at + 1
        if at < len(tokens) and tokens[at] == ",":
            at += 1
            if at < len(tokens) and tokens[at] == closer:
                raise _Unsupported  # a trailing comma: black's magic trailing comma, or a 1-tuple
        elif at < len(tokens) and tokens[at] != closer:
            raise _Unsupported  # an operator, subscript or attribute of a call
    if at >= len(tokens) or (opener == "(" and len(items) == 1):
        raise _Unsupported  # unclosed, or parentheses around one expression
    return _Group(opener, tuple(items)), at + 1


def _for_clause(tokens: list[str], at: int) -> tuple[str, int]:
    """`for name in expression` from `tokens[at]` (at `for`), spelled as black spells it; and where it ends."""
    if at + 3 >= len(tokens) or not _NAME.fullmatch(tokens[at + 1]) or tokens[at + 1] in ("for", "in") or tokens[at + 2] != "in":
        raise _Unsupported
    iterable, end = _expression(tokens, at + 3)
    return f"for {tokens[at + 1]} in {_text(iterable)}", end


def _text(expression: object) -> str:
    if isinstance(expression, _Group):
        clause = " " + expression.clause if expression.clause else ""
        return expression.opener + ", ".join(prefix + _text(value) for prefix, value in expression.items) + clause + expression.closer
    return str(expression)


def _lines(prefix: str, expression: object, suffix: str, indent: int) -> list[str] | None:
    """`prefix + expression + suffix` at `indent`: on one line if it fits, else split at the expression's bracket."""
    pad = " " * indent
    whole = f"{pad}{prefix}{_text(expression)}{suffix}"
    if len(whole) <= LINE_LENGTH:
        return [whole]
    if not isinstance(expression, _Group) or not expression.items or len(pad + prefix + expression.opener) > LINE_LENGTH:
        return None  # nothing to split at, or a head too long: black tries other splits
    body = _body(expression, indent + 4)
    return None if body is None else [f"{pad}{prefix}{expression.opener}", *body, f"{pad}{expression.closer}{suffix}"]


def _body(group: _Group, indent: int) -> list[str] | None:
    """A group's items once its brackets are split: on one line if they fit (a display of several never), else one per line."""
    if group.clause:
        return _comprehension_body(group, indent)
    several = len(group.items) > 1
    joined = " " * indent + ", ".join(prefix + _text(value) for prefix, value in group.items)
    if len(joined) <= LINE_LENGTH and not (group.is_display and several):
        return [joined]
    if not several:
        return _lines(*group.items[0], "", indent)
    lines: list[str] = []
    for prefix, value in group.items:
        item = _lines(prefix, value, ",", indent)
        if item is None:
            return None
        lines += item
    return lines


def _comprehension_body(group: _Group, indent: int) -> list[str] | None:
    """A comprehension's item and `for` clause on one line if they fit, else the item (wrapped if it must be) above the clause."""
    ((prefix, value),) = group.items
    pad = " " * indent
    joined = f"{pad}{prefix}{_text(value)} {group.clause}"
    if len(joined) <= LINE_LENGTH:
        return [joined]
    item = _lines(prefix, value, "", indent)
    return None if item is None or len(pad + group.clause) > LINE_LENGTH else [*item, pad + group.clause]
