"""Names for forward literals that become parameters, read from the source line the statement quotes.

torch.export bakes `self.num_heads` into `qkv.reshape(1, 17, 3, 4, 16)`; where instances differ there,
the shared class reads it from an attribute. The comment over the statement quotes the source line
(`qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)`): a literal passed where the
source passes an attribute or a local of a descriptive name, in the one call of that method with as
many arguments, takes that name (`num_heads`), not `value`.
"""

from __future__ import annotations

import ast
import keyword

from .annotations import NOTE
from .code_slots import number_slots, per_line
from .names import BUILTIN_NAMES
from .spelled_calls import parsed_line


def literal_names(lines: tuple[str, ...]) -> list[str | None]:
    """For each number literal of the forward (number_slots, blocks too), the name the source passes in
    its place, or None."""
    out: list[str | None] = []
    source = ""
    for line in lines:
        note = NOTE.fullmatch(line)
        if note is not None:
            source = note["code"]
            continue
        count = sum(1 for slot in number_slots((line,), nested=True) if slot.line == 0)
        if count:
            out += list(_statement_names(line.strip(), source)) if source else [None] * count
    return out


@per_line
def _statement_names(statement: str, source: str) -> tuple[str | None, ...]:
    """The name for each literal of `statement` (in number_slots order) that `source` passes in its place."""
    slots = number_slots((statement,))
    names: list[str | None] = [None] * len(slots)
    generated, quoted = parsed_line(statement.strip()), parsed_line(source.strip())
    if generated is None or quoted is None:
        return tuple(names)
    starts = {slot.start: k for k, slot in enumerate(slots)}
    calls = [n for n in ast.walk(quoted) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    for call in (n for n in ast.walk(generated) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
        alike = [c for c in calls if c.func.attr == call.func.attr and len(c.args) == len(call.args)]  # type: ignore[attr-defined]
        if len(alike) != 1:
            continue
        for mine, theirs in zip(call.args, alike[0].args):
            k = starts.get(_start(mine))
            if k is not None and _is_literal(mine):
                names[k] = _name(theirs)
    return tuple(names)


def _start(node: ast.expr) -> int:
    return node.col_offset


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _name(node: ast.expr) -> str | None:
    """A descriptive name the source passes: `self.num_heads`, `head_dim`; not a single letter (`C`)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return None
    name = name.lower() if name.isupper() else name
    plain = name.isidentifier() and name == name.lower() and not name.startswith("_")
    return name if plain and len(name) > 1 and not keyword.iskeyword(name) and name not in BUILTIN_NAMES and name != "self" else None
