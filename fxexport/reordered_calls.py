"""Calls of some classes' instances with their positional arguments in another order.

A forward whose input in the middle becomes optional (defaulted_inputs.py: BART's cross-attention,
`attn(x, key_value_states, mask)` beside the self-attention's `attn(x, mask)`) takes that input
last, so its callers pass theirs last too: `self.encoder_attn(x, x_2, x_3)` becomes
`self.encoder_attn(x, x_3, x_2)`. Only where every instance is a child its holder builds
(`self.encoder_attn = BartAttention_1()`) and calls directly with exactly that many positional
arguments, the ones that move plain names or literals (moving a computed argument would change
the order things run in); anything else (a container holding it or a container's forward, a
call through another module `self.layer.attn(...)`, keywords, `*args`) leaves the calls as they are.
"""

from __future__ import annotations

import ast
import re
import tokenize
from dataclasses import replace

from .child_lines import attribute
from .code_slots import line_tokens
from .ir import ClassIR
from .spelled_calls import char_offset, node_text

Order = tuple[int, ...]  # new position i takes the old argument order[i]
Spelled = tuple[tuple[str | None, int], ...]  # argument i of the new call: (its keyword or None, the old argument it passes)


def reorder_callers(classes: list[ClassIR], names: set[str], order: Order) -> list[ClassIR] | None:
    """`classes` with every call of an instance of a class in `names` taking its arguments in `order`;
    None when an instance is built or used otherwise than as described above."""
    return respell_callers(classes, names, tuple((None, i) for i in order))


def respell_callers(classes: list[ClassIR], names: set[str], spelled: Spelled) -> list[ClassIR] | None:
    """`classes` with every call of an instance of a class in `names` passing its arguments as `spelled`
    (`self.self_attn(x, x_1)` -> `self.self_attn(x, attention_mask=x_1)`); None as reorder_callers."""
    built = [_instances(cls, names) for cls in classes]
    if any(attrs is None for attrs in built) or _reached_otherwise(classes, set().union(*built)):  # type: ignore[arg-type]
        return None
    out = []
    for cls, attrs in zip(classes, built):
        assert attrs is not None
        if attrs and (cls.base != "Module" or cls.is_sequential or _iterates_self(cls)):
            return None  # a container's forward may reach its children by key or in a loop
        lines = []
        for line in cls.forward_lines:
            new = _reordered(line, attrs, spelled) if attrs and _mention_count(line, attrs) else line
            if new is None:
                return None
            lines.append(new)
        out.append(replace(cls, forward_lines=tuple(lines)) if attrs else cls)
    return out


def _instances(cls: ClassIR, names: set[str]) -> set[str] | None:
    """The attributes `cls` builds an instance of a class in `names` in, one per line
    (`self.attn = Attention_1()`); None when such a class is named anywhere else."""
    attrs = set()
    for line in (*cls.init_lines, *cls.fixup_lines):
        used = {t.string for t in line_tokens(line) if t.type == tokenize.NAME} & names
        if not used:
            continue
        value = _value(line)
        built = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in names
        if not (attribute(line) and built and len(used) == 1):
            return None
        attrs.add(attribute(line))
    return attrs


_CHILD_ITERATORS = frozenset({"children", "named_children", "modules", "named_modules", "values", "items", "_modules", "__getitem__"})


def _reached_otherwise(classes: list[ClassIR], attrs: set[str]) -> bool:
    """True when a forward names one of `attrs` other than as `self.<attr>` (`self.layer.attn(...)`, a
    string): an instance of a reordered class may be called there."""
    for cls in classes:
        for line in cls.forward_lines:
            tokens = line_tokens(line)
            for i, token in enumerate(tokens):
                if token.type == tokenize.STRING and any(re.search(rf"(?<!\w){re.escape(attr)}(?!\w)", token.string) for attr in attrs):
                    return True  # the attribute's name as a word of a string (`getattr(self, "attn")`), not inside one ("src")
                if token.string in attrs and i > 0 and tokens[i - 1].string == "." and (i < 2 or tokens[i - 2].string != "self"):
                    return True
    return False


def _iterates_self(cls: ClassIR) -> bool:
    """True when the forward reaches its children otherwise than as `self.<name>`: `self[...]`, `self.values()`, `for ... in self`."""
    for line in cls.forward_lines:
        tokens = line_tokens(line)
        for i, token in enumerate(tokens):
            if token.string != "self":
                continue
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if after != "." or (i + 2 < len(tokens) and tokens[i + 2].string in _CHILD_ITERATORS):
                return True
    return False


def _value(line: str) -> ast.expr | None:
    try:
        statement = ast.parse(line).body[0]
    except (SyntaxError, IndexError):
        return None
    return statement.value if isinstance(statement, ast.Assign) else None


def _reordered(line: str, attrs: set[str], spelled: Spelled) -> str | None:
    """The line with each call `self.<attr>(...)` passing its arguments as `spelled`; None if a mention is no such call."""
    indent = len(line) - len(line.lstrip())
    body = line[indent:]
    tree = _parsed(body)
    if tree is None:
        return None
    mentions = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in attrs and _is_self(n.value)]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and any(n.func is m for m in mentions)]
    if len(calls) != len(mentions) or len(mentions) != _mention_count(body, attrs):
        return None
    spans = []
    for call in calls:
        if call.keywords or len(call.args) != len(spelled) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(not isinstance(call.args[i], (ast.Name, ast.Constant)) for position, (_, i) in enumerate(spelled) if position != i):
            return None  # an argument computed in the call: moving it would change the order things run in
        texts = [node_text(body, a) for a in call.args]
        start, end = char_offset(body, call.args[0].col_offset), char_offset(body, call.args[-1].end_col_offset)
        if body[start:end] != ", ".join(texts):
            return None  # parentheses or line breaks around an argument: not rewritten as text
        spans.append((start, end, ", ".join(texts[i] if keyword is None else f"{keyword}={texts[i]}" for keyword, i in spelled)))
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return None  # one call inside another's arguments
    pieces, last = [], 0
    for start, end, text in spans:
        pieces += [body[last:start], text]
        last = end
    return line[:indent] + "".join(pieces) + body[last:]


def _parsed(body: str) -> ast.AST | None:
    """The statement of one forward line; a block header (`if ...:`) parsed with an empty body."""
    for text in (body, f"{body} pass"):
        try:
            return ast.parse(text)
        except SyntaxError:
            continue
    return None


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _mention_count(line: str, attrs: set[str]) -> int:
    """How many times the line names `self.<attr>` for an attribute in `attrs`."""
    tokens = line_tokens(line)
    return sum(a.string == "self" and b.string == "." and c.string in attrs for a, b, c in zip(tokens, tokens[1:], tokens[2:]))
