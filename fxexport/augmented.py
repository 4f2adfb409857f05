"""In-place tensor methods written as the augmented assignments that run them: `out += identity`.

torch.export records the source's `out += identity` as `aten.add_`, which the forward spells
`out = out.add_(identity)`. On a tensor, `out += identity` calls `out.add_(identity)` and binds `out`
to what it returns, that same tensor: the statement runs and binds the same. Written on each class's
final forward, after every stage that compares forwards (regions.py refuses augmented assignments),
so that no stage sees one.
"""

from __future__ import annotations

import ast

_OPERATORS = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}


def augmented(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The forward with each `x = x.add_(y)` written `x += y` (`sub_`, `mul_`, `div_` alike)."""
    return tuple(_augmented(line) for line in lines)


def _augmented(line: str) -> str:
    text = line.lstrip(" ")
    if not any(f".{method}(" in text for method in _OPERATORS):
        return line
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return line
    statement = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return line
    call = statement.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr not in _OPERATORS:
        return line
    target, owner = statement.targets[0].id, call.func.value
    if not isinstance(owner, ast.Name) or owner.id != target or len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return line
    operand = ast.get_source_segment(text, call.args[0])
    if operand is None:
        return line
    return f"{line[: len(line) - len(text)]}{target} {_OPERATORS[call.func.attr]} {operand}"
