"""Local names the model's own source gave its values, read from the statements that computed them.

torch.export and dynamo record each node's stack trace: the file and line of the statement it ran in
(`cls_tokens = x[:, :token_length]`). A value the generated forward names (a statement's result, a
run of statements under one name, an item of an unpacked result) takes the name that statement
assigns where it can: every statement of the run assigns that one name, the last value is what its
statement assigned (nothing later in the same statement reads it), and the name is free in the
method and no builtin. Otherwise the value keeps the name fxexport gives (`out`, the op's name).
The statement is found in the source file's syntax tree (a statement written over several lines
included), never from its line alone: `a=b.view(2),` inside a call reads as an assignment.
"""

from __future__ import annotations

import ast
import functools
import linecache
from collections.abc import Sequence

from torch import fx

from .annotations import source_statement
from .names import BUILTIN_NAMES

Statement = tuple[str, int]  # (file, first line)


@functools.lru_cache(maxsize=64)
def _file_statements(file: str) -> dict[int, tuple[int, tuple[str, ...] | None]] | None:
    """Each line of a source file -> (the first line of the statement it is in, the names that statement
    assigns or None); None where the file cannot be read or parsed."""
    text = "".join(linecache.getlines(file))
    try:
        tree = ast.parse(text) if text else None
    except (SyntaxError, ValueError):
        return None
    if tree is None:
        return None
    out: dict[int, tuple[int, tuple[str, ...] | None]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:  # a compound statement: its header lines alone
            end = body[0].lineno - 1
            targets = None
        else:
            end = node.end_lineno or node.lineno
            targets = _targets(node)
        for line in range(node.lineno, end + 1):
            out.setdefault(line, (node.lineno, targets))
    return out


def _targets(statement: ast.stmt) -> tuple[str, ...] | None:
    """The names an assignment binds, in order (`a, b = f(x)` -> ("a", "b")), else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        target = statement.target
    else:
        return None
    if isinstance(target, ast.Name):
        return (target.id,)
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return tuple(e.id for e in target.elts)  # type: ignore[attr-defined]
    return None


def statement(node: fx.Node) -> tuple[Statement, tuple[str, ...] | None] | None:
    """The source statement the node ran in (its file and first line) and the names it assigns."""
    found = source_statement(node)
    if found is None:
        return None
    file, line, _ = found
    lines = _file_statements(file)
    if lines is None or int(line) not in lines:
        return None
    start, targets = lines[int(line)]
    return (file, start), targets


def forget_statements() -> None:
    """Drop the parsed source files (kept for one export)."""
    _file_statements.cache_clear()


def statement_target(node: fx.Node) -> str | None:
    """The one name the node's source statement assigns (the node its value or a part of it)."""
    return _single(node)


def statement_name(node: fx.Node) -> str | None:
    """The one name the node's source statement assigns it, when the node is that statement's value."""
    name = _single(node)
    return None if name is None or _read_in_its_statement(node) else name


def same_statement(a: fx.Node, b: fx.Node) -> bool:
    """True when both nodes ran in one source statement."""
    found = statement(a)
    return found is not None and found == statement(b)


def run_name(run: Sequence[fx.Node], first: str | None = None) -> str | None:
    """The one name the source statements of a run of values (one name, in order) assign, where the last
    value is what its statement assigned (earlier ones may be parts of theirs); None where they assign
    none, several, or a tuple. `first`: the name the first value's statement gives it (an unpacked item)."""
    names = {first if first is not None else _single(run[0]), *(_single(node) for node in run[1:])}
    if len(names) != 1:
        return None
    name = names.pop()
    if name is None or _read_in_its_statement(run[-1]):
        return None
    return name


def item_names(result: fx.Node, count: int) -> tuple[str, ...] | None:
    """The names the source statement of an unpacked result binds its `count` items to, else None."""
    found = statement(result)
    names = None if found is None else found[1]
    return names if names is not None and len(names) == count else None


def usable(name: str, free: bool) -> bool:
    """A source name a value may take: free in its method, no builtin it would shadow, not `_`."""
    return free and name != "_" and name not in BUILTIN_NAMES


def _single(node: fx.Node) -> str | None:
    found = statement(node)
    names = None if found is None else found[1]
    return names[0] if names is not None and len(names) == 1 else None


def _read_in_its_statement(node: fx.Node) -> bool:
    """True when a later value of the node's own source statement reads it (it is not what the statement
    assigned: `y = f(x) + 1` computes `f(x)` first)."""
    return any(same_statement(node, user) for user in node.users if user.op != "output")
