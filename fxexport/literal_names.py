"""Names for forward literals that become parameters, read from the source line the statement quotes,
or from the source class's forward where no line is quoted.

torch.export bakes `self.num_heads` into `qkv.reshape(1, 17, 3, 4, 16)`; where instances differ there,
the shared class reads it from an attribute. The comment over the statement quotes the source line
(`qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)`): a literal passed where the
source passes an attribute or a local of a descriptive name, in the one call of that function or
method with as many arguments or in the statement's value of the same shape (`q * self.scale`),
takes that name (`num_heads`, `scale`), not `value`. symbolic_trace quotes no lines: there the calls
of the source forward are read, one of a name and argument count (`stochastic_depth(x, self.p, ...)`).
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Iterator

from .annotations import NOTE
from .code_slots import number_slots, per_line
from .names import BUILTIN_NAMES
from .spelled_calls import parsed_line


def literal_names(lines: tuple[str, ...], source: str = "") -> list[str | None]:
    """For each number literal of the forward (number_slots, blocks too), the name the source passes in
    its place, or None. `source`: the source class's forward, read where the quoted line names none (a
    symbolic_trace graph quotes none; a statement that reads as its source line quotes none of its own):
    there a call is matched only where the forward makes one call of that function with as many arguments
    (or, where none has, one with more)."""
    out: list[str | None] = []
    quoted = ""
    for line in lines:
        note = NOTE.fullmatch(line)
        if note is not None:
            quoted = note["code"]
            continue
        count = sum(1 for slot in number_slots((line,), nested=True) if slot.line == 0)
        if not count:
            continue
        names = _statement_names(line.strip(), quoted, True) if quoted else (None,) * count
        if source and None in names:
            names = tuple(a or b for a, b in zip(names, _statement_names(line.strip(), source, False)))
        out += names
    return out


@per_line
def _statement_names(statement: str, source: str, one_statement: bool) -> tuple[str | None, ...]:
    """The name for each literal of `statement` (in number_slots order) that `source` passes in its place:
    with `one_statement`, `source` is the statement a note quotes (its value too is matched with the
    generated one's: `q = q * self.scale`), else the whole forward (its calls alone)."""
    slots = number_slots((statement,))
    names: list[str | None] = [None] * len(slots)
    generated, theirs = parsed_line(statement.strip()), parsed_line(source.strip())
    if generated is None or theirs is None:
        return tuple(names)
    starts = {slot.start: k for k, slot in enumerate(slots)}
    calls = _named_calls(source.strip())
    pairs = [(_value(generated), _value(theirs))] if one_statement else []
    for call in _named_calls(statement.strip()):
        named = [c for c in calls if _called(c) == _called(call)]
        alike = [c for c in named if len(c.args) == len(call.args)] or [c for c in named if len(c.args) > len(call.args)]
        if len(alike) == 1:
            pairs.append((call, alike[0]))
    for mine, source_node in pairs:
        for literal, passed in _aligned(mine, source_node):
            k = starts.get(_start(literal))
            if k is not None and names[k] is None:
                names[k] = _name(passed)
    return tuple(names)


@per_line
def _named_calls(code: str) -> tuple[ast.Call, ...]:
    """The calls of a statement or of a whole forward (parsed once an export: a forward is read for each
    statement no note names) that call a name (`_called`)."""
    tree = parsed_line(code)
    return () if tree is None else tuple(n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) is not None)


def _value(tree: ast.AST | None) -> ast.AST | None:
    """The expression a one-statement line computes (an assignment's or a return's value), or None."""
    body = tree.body if isinstance(tree, ast.Module) else []
    if len(body) != 1:
        return None
    statement = body[0]
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
        return statement.value
    return None


def _called(call: ast.Call) -> str | None:
    """The name a call calls: `view` of `x.view(...)`, `stochastic_depth`, `layer_norm` of `F.layer_norm`."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _aligned(mine: ast.AST | None, theirs: ast.AST | None) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(a literal of `mine`, what `theirs` has in its place) where the two trees have one shape down to it:
    calls of one name and as many positional arguments (or the source more: the trace passes its last
    ones by keyword), one operator, tuples and lists of one length."""
    if mine is None or theirs is None:
        return
    if isinstance(mine, ast.expr) and _is_literal(mine):
        yield mine, theirs  # type: ignore[misc]
    elif isinstance(mine, ast.Call) and isinstance(theirs, ast.Call):
        if _method_of_function(mine, theirs):  # `x.split(4)` where the source wrote `torch.split(x, n)`
            yield from _aligned(mine.func.value, theirs.args[0])  # type: ignore[attr-defined]
            theirs = ast.Call(theirs.func, theirs.args[1:], theirs.keywords)
        if _called(mine) != _called(theirs) or len(mine.args) > len(theirs.args):
            return  # (fewer arguments: the trace passes the source's last ones by keyword, `training=False`)
        if any(isinstance(a, ast.Starred) for a in (*mine.args, *theirs.args)):
            return
        for a, b in zip(mine.args, theirs.args):
            yield from _aligned(a, b)
        passed = {k.arg: k.value for k in theirs.keywords if k.arg is not None}
        for keyword in mine.keywords:
            yield from _aligned(keyword.value, passed.get(keyword.arg or ""))
    elif isinstance(mine, ast.BinOp) and isinstance(theirs, ast.BinOp) and type(mine.op) is type(theirs.op):
        yield from _aligned(mine.left, theirs.left)
        yield from _aligned(mine.right, theirs.right)
    elif isinstance(mine, (ast.Tuple, ast.List)) and isinstance(theirs, (ast.Tuple, ast.List)) and len(mine.elts) == len(theirs.elts):
        if not any(isinstance(e, ast.Starred) for e in theirs.elts):
            for a, b in zip(mine.elts, theirs.elts):
                yield from _aligned(a, b)


def _method_of_function(mine: ast.Call, theirs: ast.Call) -> bool:
    """`mine` calls a tensor method (`x.split(...)`) where `theirs` calls torch's function of that name on
    its first argument (`torch.split(x, ...)`): torch.export writes the one for the other."""
    function = theirs.func
    return (
        isinstance(mine.func, ast.Attribute) and not (isinstance(mine.func.value, ast.Name) and mine.func.value.id in _MODULES)
        and isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id in _MODULES
        and mine.func.attr == function.attr and len(theirs.args) > len(mine.args)
    )  # fmt: skip


_MODULES = frozenset({"torch", "F"})


def _start(node: ast.expr) -> int:
    return node.col_offset


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _name(node: ast.expr) -> str | None:
    """A descriptive name the source passes: `self.num_heads`, `self.p`, `head_dim`; not a local of a
    single letter (`C`, `h`)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        name, shortest = node.attr, 1
    elif isinstance(node, ast.Name):
        name, shortest = node.id, 2
    else:
        return None
    name = name.lower() if name.isupper() else name
    plain = name.isidentifier() and name == name.lower() and not name.startswith("_")
    return name if plain and len(name) >= shortest and not keyword.iskeyword(name) and name not in BUILTIN_NAMES and name != "self" else None
