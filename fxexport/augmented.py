"""In-place tensor methods written as the augmented assignments that run them: `out += identity`.

torch.export records the source's `out += identity` as `aten.add_`, which the forward spells
`out = out.add_(identity)`. On a tensor, `out += identity` calls `out.add_(identity)` and binds `out`
to what it returns, that same tensor: the statement runs and binds the same. Written on each class's
final forward, after every stage that compares forwards (regions.py refuses augmented assignments),
so that no stage sees one. A forward returning the tensor it adds to in place (`return out.add_(y)`,
the source's `out += y` before an activation torch.export left out, an identity) writes the statement,
then `return out`.
"""

from __future__ import annotations

import ast

OPERATORS = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}  # in-place method -> the assignment running it


def augmented(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The forward with each `x = x.add_(y)` written `x += y` (`sub_`, `mul_`, `div_` alike), and each
    `return x.add_(y)` written `x += y`, then `return x`, unless the `if` block it ends is followed by that
    same `return x` (torchvision's MBConv: `if self.use_res_connect: result += input`, `return result`)."""
    out: list[str] = []
    for k, line in enumerate(lines):
        written = _augmented(line)
        if len(written) == 2 and _falls_through(lines, k, written[1]):
            written = written[:1]
        out += written
    return tuple(out)


def _falls_through(lines: tuple[str, ...], k: int, returned: str) -> bool:
    """True where line `k` ends the body of an `if` (`elif`, `else`) whose next line returns `returned` as well."""
    indent = len(returned) - len(returned.lstrip(" "))
    after = returned[4:] if indent >= 4 else None
    if after is None or k + 1 >= len(lines) or lines[k + 1] != after:
        return False
    header = next((line for line in reversed(lines[:k]) if len(line) - len(line.lstrip(" ")) < indent and line.strip()), "")
    return header.lstrip(" ").startswith(("if ", "elif ", "else:")) and len(header) - len(header.lstrip(" ")) == indent - 4


def _augmented(line: str) -> tuple[str, ...]:
    text = line.lstrip(" ")
    indent = line[: len(line) - len(text)]
    if not any(f".{method}(" in text for method in OPERATORS):
        return (line,)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return (line,)
    statement = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(statement, ast.Return):
        found = _in_place(text, statement.value)
        return (line,) if found is None else (f"{indent}{found[0]} {found[1]}", f"{indent}return {found[0]}")
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return (line,)
    found = _in_place(text, statement.value)
    if found is None or found[0] != statement.targets[0].id:
        return (line,)
    return (f"{indent}{found[0]} {found[1]}",)


def _in_place(text: str, call: ast.expr | None) -> tuple[str, str] | None:
    """(`x`, `+= y`) for a call `x.add_(y)` of a name (`sub_`, `mul_`, `div_` alike); None for any other value."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr not in OPERATORS:
        return None
    owner = call.func.value
    if not isinstance(owner, ast.Name) or len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return None
    operand = ast.get_source_segment(text, call.args[0])
    return None if operand is None else (owner.id, f"{OPERATORS[call.func.attr]} {operand}")
