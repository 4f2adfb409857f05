"""Forwards that differ only in which values are written inside the statement that uses them.

A block whose first layer reads the forward's own input writes the source line whole (`return
self.project(F.relu(self.dw(x)))`), where one whose input a child computed first writes it as three
statements: inside the next one, that value would live on while it runs (inlining.py). The two are one
code. `canonical` writes a forward with each value its next statement alone reads inside it, where
nothing that statement calls runs before the value is read (the calls then run in the same order).
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import cast

from .code_slots import per_line
from .spelled_calls import parsed_line

_Events = Iterator[tuple[str, str]]
_Statement = ast.Assign | ast.Return


@per_line  # repeated blocks ask for their forward again and again
def canonical(lines: tuple[str, ...], renamed: bool = False) -> str | None:
    """The forward's statements, each value its next statement alone reads written inside it, as a syntax
    tree's dump (comments and `del` left out; a block, such as a loop, as it is); None where a line is
    not a simple statement of its own. `renamed`: its locals' names aside (`_locals_renamed`), for whole
    forwards (a tail's names read first are bound before it, which renaming cannot tell apart)."""
    statements: list[ast.stmt] = []
    blocks = _blocks(lines)
    if blocks is None:
        return None
    for block in blocks:
        if len(block) > 1:
            statement: ast.stmt | None = _block(block)
        else:
            tree = parsed_line(block[0])  # read, never changed: merged statements share its nodes
            statement = tree.body[0] if tree is not None and len(tree.body) == 1 else None
            statement = statement if isinstance(statement, (ast.Assign, ast.Return)) else None
        if statement is None:
            return None
        statements.append(statement)
    statements = _locals_renamed(statements) if renamed else statements
    reads = [_names_read(statement) for statement in statements]
    k = 0
    while k < len(statements) - 1:
        found = _inside(statements[k], statements[k + 1], reads[k + 1], zip(statements[k + 2 :], reads[k + 2 :]))
        if found is None:
            k += 1
            continue
        merged, name = found
        statements[k : k + 2] = [merged]
        reads[k : k + 2] = [reads[k + 1] - Counter({name: 1}) + reads[k]]  # its one read of the name: the value's reads
        k = max(k - 1, 0)
    return "\n".join(ast.dump(statement) for statement in statements)


def _names_read(statement: ast.stmt) -> Counter[str]:
    """How many times the statement reads each name: an assignment's or return's value, a block whole."""
    node = statement.value if isinstance(statement, (ast.Assign, ast.Return)) else statement
    return Counter(n.id for n in ast.walk(node) if isinstance(n, ast.Name)) if node is not None else Counter()


def _locals_renamed(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Copies of the statements with each name bound before anything reads it renamed by the order it is
    first bound: forwards apart only in their locals' names are one code. Names read first (the inputs,
    globals, and names a loop reads before it binds them) keep theirs."""
    names: dict[str, str] = {}
    read: set[str] = set()

    def visit(node: ast.AST) -> None:  # the order they run in: a value before the names it binds
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store) and node.id not in read and node.id not in names:
                names[node.id] = f"<local {len(names)}>"
            elif not isinstance(node.ctx, ast.Store) and node.id not in names:
                read.add(node.id)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id not in names:
            read.add(node.target.id)  # `x += y` reads x first
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            children: list[ast.AST] = [node.value] if node.value is not None else []
            children += [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else node.targets
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            children = [node.iter, node.target, *node.body, *node.orelse]
        else:
            children = list(ast.iter_child_nodes(node))
        for child in children:
            visit(child)

    for statement in statements:
        visit(statement)

    class _Renamed(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Name(id=names.get(node.id, node.id), ctx=node.ctx)

    return [_Renamed().visit(copy.deepcopy(statement)) for statement in statements] if names else statements


_CONTINUED = ("else:", "elif ", "except", "finally:")  # a block's lines after its first at its indent


def _blocks(lines: tuple[str, ...]) -> list[list[str]] | None:
    """The statements' lines, comments and `del` aside: one line each, a block (a loop) its lines; None
    where the first is indented."""
    out: list[list[str]] = []
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#") or (text.startswith("del ") and not line[:1].isspace()):
            continue
        if (line[:1].isspace() or line.startswith(_CONTINUED)) and out:
            out[-1].append(line)
        elif line[:1].isspace():
            return None  # an indented first line: no statement
        else:
            out.append([line])
    return out


def _block(lines: list[str]) -> ast.stmt | None:
    """The one statement a block's lines are (`for ...:` and its body), if they are."""
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    return tree.body[0] if len(tree.body) == 1 and not isinstance(tree.body[0], (ast.Assign, ast.Return)) else None


def _inside(
    first: ast.stmt, then: ast.stmt, then_reads: Counter[str], later: Iterable[tuple[ast.stmt, Counter[str]]]
) -> tuple[ast.stmt, str] | None:
    """`then` with the value `first` binds written where it reads it, and the name, when it reads it once,
    before anything it calls has run, and no later statement reads that binding; else None. Never into a
    block nor out of one. `then_reads` and each later statement's counts are `_names_read`'s. The trees are never
    changed: the new statement shares what it does not rewrite."""
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
        return None
    if not isinstance(then, (ast.Assign, ast.Return)):
        return None
    name, read = first.targets[0].id, then.value
    if read is None:
        return None
    if then_reads[name] != 1 or _read_later(name, then, later) or not _read_before_calls(read, name):
        return None
    merged = copy.copy(then)
    merged.value = cast(ast.expr, _put(read, name, first.value))  # an expression with a name replaced by one
    return merged, name


def _put(node: ast.AST, name: str, value: ast.expr) -> ast.AST:
    """`node` with its reads of `name` replaced by `value`: new nodes on the way to them, the rest shared."""
    if isinstance(node, ast.Name):
        return value if node.id == name else node
    changed: dict[str, object] = {}
    for field, old in ast.iter_fields(node):
        if isinstance(old, ast.AST):
            new = _put(old, name, value)
            if new is not old:
                changed[field] = new
        elif isinstance(old, list):
            items = [_put(item, name, value) if isinstance(item, ast.AST) else item for item in old]
            if any(a is not b for a, b in zip(items, old)):
                changed[field] = items
    if not changed:
        return node
    new_node = copy.copy(node)
    for field, new_value in changed.items():
        setattr(new_node, field, new_value)
    return new_node


def _read_later(name: str, then: _Statement, later: Iterable[tuple[ast.stmt, Counter[str]]]) -> bool:
    """True when a statement after `then` reads the binding of `name` before `then` reads it (it binds it
    again: `x = f(x)`, or a later statement does); a block naming it anyhow reads it."""
    if isinstance(then, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in then.targets):
        return False
    for statement, reads in later:
        if reads[name]:
            return True
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return False
    return False


def _read_before_calls(node: ast.AST, name: str) -> bool:
    """True when evaluating `node` reads `name` before it calls anything (an operator counts as a call)."""
    for event in _events(node):
        if event == ("name", name):
            return True
        if event[0] == "call":
            return False
    return False


def _events(node: ast.AST) -> _Events:
    """The names read and the calls made ("call", "") while `node` is evaluated, in order; an expression
    not known here counts as a call."""
    if isinstance(node, ast.Name):
        yield ("name", node.id)
    elif isinstance(node, ast.Constant):
        return
    elif isinstance(node, ast.Attribute):
        yield from _events(node.value)
    elif isinstance(node, ast.Call):
        yield from _events(node.func)
        for argument in node.args:
            yield from _events(argument.value if isinstance(argument, ast.Starred) else argument)
        for keyword in node.keywords:
            yield from _events(keyword.value)
        yield ("call", "")
    elif isinstance(node, ast.BinOp):
        yield from _events(node.left)
        yield from _events(node.right)
        yield ("call", "")  # an operator runs the operands' methods
    elif isinstance(node, ast.UnaryOp):
        yield from _events(node.operand)
        yield ("call", "")
    elif isinstance(node, ast.Subscript):
        yield from _events(node.value)
        yield from _events(node.slice)
        yield ("call", "")
    elif isinstance(node, ast.Slice):
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                yield from _events(part)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _events(element)
    else:
        yield ("call", "")
