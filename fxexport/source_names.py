"""Local names the model's own source gave its values, read from the statements that computed them.

torch.export and dynamo record each node's stack trace: the file and line of the statement it ran in
(`cls_tokens = x[:, :token_length]`). A value the generated forward names (a statement's result, a
run of statements under one name, an item of an unpacked result) takes the name that statement
assigns where it can: every statement of the run assigns that one name, the last value is what its
statement assigned (nothing later in the same statement reads it), and the name is free in the
method and no builtin. Otherwise the value keeps the name fxexport gives (`out`, the op's name).
The statement is found in the syntax tree of the function it is in (a statement written over several
lines included), never from its line alone: `a=b.view(2),` inside a call reads as an assignment.
"""

from __future__ import annotations

import ast
import bisect
import functools
import inspect
import linecache
import re
import textwrap
import tokenize
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

from torch import fx

from . import source_blocks
from .annotations import frame_matches, source_frames
from .calls import MISORDERED, SOURCE_ITEMS, resolve_class
from .names import BUILTIN_NAMES
from .unpacking import is_item_of

Statement = tuple[tuple[str, int], ...]  # (file, first line) of the statement and of those calling it
# first and last line, names assigned and read, and what each item of a tuple it assigns calls (`q, k =
# self.q_norm(q), self.k_norm(k)`: ("q_norm", "k_norm"))
Span = tuple[int, int, "tuple[str, ...] | None", "frozenset[str] | None", "tuple[str | None, ...] | None"]


_DEF = re.compile(r"\s*(?:async\s+)?def\s")


@functools.lru_cache(maxsize=1024)
def _function_statements(file: str, first: int) -> tuple[list[int], list[Span]] | None:
    """The statements of the function whose `def` is line `first` of a source file, as (first line, last
    line, the names it assigns or None, the names it reads or None), ordered and apart (a compound statement by its header lines
    alone), with their first lines for bisecting; None where it cannot be read or parsed. The function
    alone is parsed: a model's file may hold thousands of lines (timm's vision_transformer.py)."""
    tree = _function_tree(file, first)
    if tree is None:
        return None
    spans: dict[int, Span] = {}
    for start, end, targets, reads, callees in _spans(tree.body):
        start, end = start + first - 1, end + first - 1
        if start in spans:  # statements sharing a line (`a = f(x); b = g(x)`): which a node ran in is not known
            targets, reads, callees, end = None, None, None, max(end, spans[start][1])
        spans[start] = (start, end, targets, reads, callees)
    ordered = sorted(spans.values(), key=lambda span: span[0])
    return [span[0] for span in ordered], ordered


def _function_tree(file: str, first: int) -> ast.Module | None:
    """The parsed function whose `def` is line `first` of a source file (its lines from 1), else None (not
    kept: what its callers read off it is)."""
    lines = linecache.getlines(file)
    quick = source_blocks.block(lines, first)
    tree = source_blocks.parsed(quick) if quick is not None else None  # None also where the quick block ended early: inspect's then
    if tree is None:
        try:
            tree = source_blocks.parsed(inspect.getblock(lines[first - 1 :]))
        except (SyntaxError, tokenize.TokenError, IndexError):
            return None
    return tree


@functools.lru_cache(maxsize=1024)
def _always_run(file: str, first: int) -> frozenset[int]:
    """The first lines of the statements of a function that run whenever it does, all of each statement
    (`y = self.proj(x) if self.proj is not None else x` does not)."""
    tree = _function_tree(file, first)
    if tree is None or not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    return frozenset(
        statement.lineno + first - 1
        for statement in _unconditional(tree.body[0].body)
        if not _branches(statement)
    )


def _branches(statement: ast.stmt) -> bool:
    """True where part of the statement may not run: a conditional expression, `and` or `or`."""
    return any(isinstance(n, (ast.IfExp, ast.BoolOp)) for n in ast.walk(statement))


def _unconditional(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block that run whenever it does: not inside an `if`, a loop, a `try` or a
    `match`; a `with` block's do."""
    for statement in body:
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _unconditional(statement.body)
        else:
            yield statement


@functools.lru_cache(maxsize=1024)
def built_always(cls: type | str) -> frozenset[str]:
    """The children a module class's `__init__` always builds: `self.v = ConvNorm(...)` once, at its top
    level (a `with` block's included); not one it builds under an `if`, as a conditional expression
    (`nn.Conv2d(...) if proj else nn.Identity()`), as None, or from a parameter that defaults to None
    (a generated class's optional child). Empty where the source cannot be read."""
    init = getattr(resolve_class(cls), "__init__", None)
    function = None if init is None else function_syntax(init)
    if function is None:
        return frozenset()
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(arguments.defaults) :], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    optional = {name for name, value in defaults.items() if isinstance(value, ast.Constant) and value.value is None}
    counts: dict[str, int] = {}
    for node in ast.walk(function):
        for target in _self_targets(node):
            counts[target] = counts.get(target, 0) + 1
    found: set[str] = set()
    for statement in _unconditional(function.body):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _self_targets(statement):
            name, value = _self_targets(statement)[0], statement.value
            plain = not isinstance(value, (ast.IfExp, ast.BoolOp)) and not (isinstance(value, ast.Constant) and value.value is None)
            if plain and not (isinstance(value, ast.Name) and value.id in optional) and counts[name] == 1:
                found.add(name)
    return frozenset(found)


@functools.lru_cache(maxsize=1024)
def called_always(cls: type | str) -> frozenset[str]:
    """The children a module class's `forward` calls whenever it runs: `self.pool(out)` in a simple
    statement at its top level (a `with` block's included); not one under an `if`, in a loop, in a
    conditional expression or after a block that may return, unless that block's own statements call it
    too before they return (timm's MobileOneBlock: `if self.reparam_conv is not None: return
    self.act(self.se(self.reparam_conv(x)))`, then `return self.act(self.se(out))`). Empty where the
    source cannot be read."""
    return frozenset(_called_in(list(_unconditional(_forward_body(cls)))))


_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)  # statements with no body of their own


def _called_in(statements: list[ast.stmt]) -> set[str]:
    """The children the statements call whenever they run (called_always)."""
    found: set[str] = set()
    for k, statement in enumerate(statements):
        simple = isinstance(statement, _SIMPLE)
        if not simple and any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(statement)):
            # `if self.res_scale1 is None: ... return ...`: what follows runs only where it does not
            return found | (_called_in(statements[k + 1 :]) & _returning_calls(statement))
        if simple and not _branches(statement):
            found.update(_self_callees(statement))
    return found


@functools.lru_cache(maxsize=1024)
def return_chains(cls: type | str) -> tuple[tuple[str, ...], ...]:
    """For each `return` of a module class's `forward`, the children it calls one inside the other on its
    value, outermost first (`return self.act(self.se(out))`: `("act", "se")`); () where the source cannot
    be read, or a function defined inside holds a return."""
    body = _forward_body(cls)
    nodes = [n for statement in body for n in ast.walk(statement)]
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for n in nodes):
        return ()
    return tuple(_chain(n.value) for n in nodes if isinstance(n, ast.Return))


def _chain(value: ast.expr | None) -> tuple[str, ...]:
    out = []
    while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and isinstance(value.func, ast.Attribute):
        if not (isinstance(value.func.value, ast.Name) and value.func.value.id == "self"):
            break
        out.append(value.func.attr)
        value = value.args[0]
    return tuple(out)


def _returning_calls(statement: ast.stmt) -> set[str]:
    """For an `if` without `else` whose body returns at its end, the plain statements of its body being all
    else: the children they call; else none."""
    if not isinstance(statement, ast.If) or statement.orelse or not isinstance(statement.body[-1], ast.Return):
        return set()
    body = statement.body
    if not all(isinstance(s, _SIMPLE) and not _branches(s) for s in body):
        return set()
    return {name for s in body for name in _self_callees(s)}


def _self_callees(statement: ast.stmt) -> Iterator[str]:
    """The attributes of `self` a statement calls (`self.pool` in `out = self.pool(out)`)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            yield node.func.attr


def function_syntax(code: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The syntax tree of the function whose code is `code` (its own, not that of what it wraps)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError, ValueError, tokenize.TokenError, RecursionError, MemoryError, IndexError):
        return None
    function = tree.body[0] if tree.body else None
    return function if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _self_targets(node: ast.AST) -> list[str]:
    """The attributes of `self` an assignment binds (`self.v = ...`)."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return []
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t.attr for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]


def bound_before(node: fx.Node, name: str) -> bool:
    """True when a statement before the node's source statement in its function assigns `name`
    (`shortcut = x` before `shortcut = self.downsample(shortcut)`); False for a parameter never assigned."""
    found = _statement_function(node)
    if found is None:
        return False
    file, first, span = found
    parsed = _function_statements(file, first)
    return parsed is not None and any(other[0] < span[0] and name in (other[2] or ()) for other in parsed[1])


def always_run(node: fx.Node) -> bool:
    """True when the node's source statement runs whenever its function does (`v = self.v(x)`; not
    resnet's `identity = self.downsample(x)` under `if self.downsample is not None:`)."""
    found = _statement_function(node)
    return found is not None and found[2][0] in _always_run(found[0], found[1])


def _statement_function(node: fx.Node) -> tuple[str, int, Span] | None:
    """The file, the line of the `def` of the function the node's source statement is in, and that
    statement's span; None where not known."""
    found = _statement_span(node)
    if found is None:
        return None
    _, file, span = found
    first = _enclosing_def(linecache.getlines(file), span[0])
    return None if first is None else (file, first, span)


def _enclosing_def(lines: list[str], line: int) -> int | None:
    """The line of the `def` whose body holds `line` of a file's `lines` (the nearest one above it,
    indented less), else None."""
    indent = _indent(lines[line - 1])
    for number in range(line - 1, 0, -1):
        above = lines[number - 1]
        if _DEF.match(above) and _indent(above) < indent:
            return number
    return None


def _indent(line: str) -> int:
    text = line.expandtabs()
    return len(text) - len(text.lstrip())


def _spans(statements: list[ast.stmt]) -> Iterator[Span]:
    """Each statement's span, those inside compound statements included (expressions are not walked)."""
    for node in statements:
        inner = [getattr(node, name, None) or [] for name in ("body", "orelse", "finalbody")]
        inner += [handler.body for handler in getattr(node, "handlers", [])] + [case.body for case in getattr(node, "cases", [])]
        first = min((block[0].lineno for block in inner if block), default=None)
        if first is None:
            yield node.lineno, node.end_lineno or node.lineno, _value_targets(node), _loaded(node), _item_callees(node)
            continue
        yield node.lineno, first - 1, None, None, None  # a compound statement's header
        for block in inner:
            yield from _spans(block)


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


def _value_targets(statement: ast.stmt) -> tuple[str, ...] | None:
    """The names an assignment binds to values of the graph: none for one name bound to a tuple or list
    display (`position_embeddings = (x.cos(), x.sin())`), which the graph holds only as its items."""
    value = getattr(statement, "value", None)
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) > 1 and isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        return None
    return _targets(statement)


def _item_callees(statement: ast.stmt) -> tuple[str | None, ...] | None:
    """For `a, b = f(x), self.g(y)`: what each item calls (`f`, `g`; None for an item that is no call);
    None for any other statement."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Tuple)):
        return None
    value = statement.value
    if not isinstance(value, ast.Tuple) or len(value.elts) != len(statement.targets[0].elts):
        return None
    return tuple(_callee(item) for item in value.elts)


def _callee(item: ast.expr) -> str | None:
    """`g` of `self.g(...)`, `x.g(...)` or `g(...)`; `qkv[0]` of itself (torchvision's `q, k, v = qkv[0],
    qkv[1], qkv[2]`)."""
    if isinstance(item, ast.Subscript):
        index = int_constant(item.slice)
        return f"{item.value.id}[{index}]" if isinstance(item.value, ast.Name) and index is not None else None
    if not isinstance(item, ast.Call):
        return None
    func = item.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def int_constant(node: ast.expr) -> int | None:
    """The int an expression writes (`2`, `-1`), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_constant(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _loaded(statement: ast.AST) -> frozenset[str]:
    """The names a statement (or an expression) reads."""
    return frozenset(n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def statement(node: fx.Node) -> tuple[Statement, tuple[str, ...] | None] | None:
    """The source statement the node ran in (where it was called from, its file and first line) and the names it assigns."""
    found = _statement_span(node)
    return None if found is None else (found[0], found[2][2])


def forward_reads(node: fx.Node) -> frozenset[str] | None:
    """The names the statement of its module's forward the node ran in reads (a helper function's
    statements aside), None where not known."""
    found = _frame_spans(node)
    return found[0][1][3] if found else None


@functools.lru_cache(maxsize=1 << 16)
def _statement_span(node: fx.Node) -> tuple[Statement, str, Span] | None:
    """Where the node's source statement was called from, its file and its span (asked of each node
    several times while its method is named: kept for one export). Where the forward calls a function
    (transformers' `apply_rotary_pos_emb`), the statement is the outermost one whose one name the node is
    the value of: the forward's `q = rotate(q)`, the function's `cos = cos.unsqueeze(1)`; else the
    outermost one binding several names, where the innermost binds none; else the innermost."""
    spans = _frame_spans(node)
    if not spans:
        return None
    fallback = None
    for depth, (_, span) in enumerate(spans):
        if span[2] is None or _read_within(node, depth):
            continue
        if len(span[2]) == 1:
            return _placed(spans, depth)
        fallback = depth if fallback is None else fallback
    return _placed(spans, fallback if fallback is not None and spans[-1][1][2] is None else len(spans) - 1)


def _placed(spans: tuple[tuple[str, Span], ...], depth: int) -> tuple[Statement, str, Span]:
    return _site(spans, depth), spans[depth][0], spans[depth][1]


def _site(spans: tuple[tuple[str, Span], ...], depth: int) -> Statement:
    """The statement at `depth` with the statements that called it: its place in one run of the forward."""
    return tuple((file, span[0]) for file, span in spans[: depth + 1])


def _read_within(node: fx.Node, depth: int) -> bool:
    """True when a later value of the node's statement at `depth` (called from where it was) reads it; an
    item of the node (`a, b = split(x)`) counts by what reads the item."""
    site = _site(_frame_spans(node), depth)
    readers = [item_user for user in node.users for item_user in (user.users if is_item_of(user, node) else (user,))]
    return any(len(found := _frame_spans(user)) > depth and _site(found, depth) == site for user in readers if user.op != "output")


def _reads_where(reader: fx.Node, value: fx.Node) -> frozenset[str] | None:
    """The names `reader`'s statement reads in the function `value`'s statement is in, called from where
    it was (a function it calls names its own variables): None where it ran elsewhere or is not known."""
    found, spans = _statement_span(value), _frame_spans(reader)
    depth = len(found[0]) - 1 if found is not None else -1
    if depth < 0 or len(spans) <= depth or _site(spans, depth)[:-1] != found[0][:-1]:  # type: ignore[index]
        return None
    return spans[depth][1][3]


@functools.lru_cache(maxsize=1 << 16)
def _frame_spans(node: fx.Node) -> tuple[tuple[str, Span], ...]:
    """The file and span of the statement of each recorded frame of the node, outermost first, up to the
    first that cannot be read."""
    out = []
    for file, line, code in source_frames(node):
        span = _frame_span(file, int(line), code)
        if span is None:
            break
        out.append((file, span))
    return tuple(out)


def statement_syntax(file: str, line: int, code: str) -> ast.stmt | None:
    """The syntax tree of the simple statement that line `line` of a file (which reads `code`) is in, with
    its lines numbered from its function's `def`; None where the file changed or it is no such statement."""
    place = _statement_place(file, line, code)
    if place is None:
        return None
    span, first = place
    return _simple_statements(file, first).get(span[0] - first + 1)


def _statement_place(file: str, line: int, code: str) -> tuple[Span, int] | None:
    """The span of the statement that line `line` of a file (which reads `code`) is in, and the line of the `def`
    of its function; None where the file changed or the line is in no function."""
    span = _frame_span(file, line, code)
    first = _enclosing_def(linecache.getlines(file), span[0]) if span is not None else None
    return None if span is None or first is None else (span, first)


def statement_site(file: str, line: int, code: str) -> int | None:
    """The first line of the statement that line `line` of a file (which reads `code`) is in, else None."""
    span = _frame_span(file, line, code)
    return None if span is None else span[0]


def function_at(file: str, line: int) -> tuple[int, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The line of the `def` of the function whose body holds line `line` of a file, and its syntax tree
    (its lines numbered from 1 at the `def`); None where it cannot be read."""
    lines = linecache.getlines(file)
    first = _enclosing_def(lines, line) if 0 < line <= len(lines) else None
    tree = _function_tree(file, first) if first is not None else None
    function = tree.body[0] if tree is not None and tree.body else None
    return (first, function) if first is not None and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


@functools.lru_cache(maxsize=256)
def _simple_statements(file: str, first: int) -> dict[int, ast.stmt]:
    """The simple statements of the function whose `def` is line `first` of a file, by first line (from 1 at the `def`)."""
    tree = _function_tree(file, first)
    nodes = ast.walk(tree) if tree is not None else ()
    return {n.lineno: n for n in nodes if isinstance(n, ast.stmt) and not hasattr(n, "body")}


def returned_together(value: fx.Node, user: fx.Node) -> bool:
    """True where both nodes ran in one statement of their forward, a `return` (`return a + b + c`) or one
    binding a name that the next statement of its block returns (`h = self.norm(a + b)`, then `return h`)."""
    frames, other = source_frames(user), source_frames(value)
    place = _statement_place(frames[0][0], int(frames[0][1]), frames[0][2]) if frames else None
    if place is None or not other or other[0][0] != frames[0][0]:
        return False
    span, first = place
    if _frame_span(other[0][0], int(other[0][1]), other[0][2]) != span:
        return False
    at = span[0] - first + 1
    statement = _simple_statements(frames[0][0], first).get(at)
    if isinstance(statement, ast.Return):
        return True
    following = _following(frames[0][0], first).get(at)
    returned = following.value if isinstance(following, ast.Return) else None
    return isinstance(returned, ast.Name) and span[2] == (returned.id,)


@functools.lru_cache(maxsize=256)
def _following(file: str, first: int) -> dict[int, ast.stmt]:
    """The statement after each statement of its block in the function whose `def` is line `first` of a file,
    by the first line of the statement it follows (from 1 at the `def`)."""
    tree = _function_tree(file, first)
    out: dict[int, ast.stmt] = {}
    for node in ast.walk(tree) if tree is not None else ():
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                out.update({a.lineno: b for a, b in zip(block, block[1:]) if isinstance(a, ast.stmt)})
    return out


def _frame_span(file: str, line: int, code: str) -> Span | None:
    lines = linecache.getlines(file)
    if not 0 < line <= len(lines) or lines[line - 1].strip() != code:
        return None  # the file is not what ran (changed since): its statements would name other values
    first = _enclosing_def(lines, line)
    parsed = None if first is None else _function_statements(file, first)
    if parsed is None:
        return None
    starts, spans = parsed
    index = bisect.bisect_right(starts, line) - 1
    if index < 0 or spans[index][1] < line:
        return None
    return spans[index]


@functools.lru_cache(maxsize=1024)
def source_parameters(cls: type | str) -> tuple[str, ...]:
    """The names of the parameters of a module class's `forward` (not `self`, `*args` or `**kwargs`),
    () where they cannot be read."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in _forward_parameters(cls) if p.kind in kinds and p.name.isascii() and p.name.isidentifier())


def _forward_parameters(cls: type | str) -> list[inspect.Parameter]:
    """The parameters of a module class's `forward` but `self`, in order; [] where they cannot be read."""
    found = resolve_class(cls)
    try:
        forward = getattr(found, "forward", None)
        signature = inspect.signature(forward) if callable(forward) else None
    except (TypeError, ValueError):
        return []
    return list(signature.parameters.values())[1:] if signature is not None else []


@functools.lru_cache(maxsize=1024)
def forward_source(cls: type | str) -> str:
    """The source of a module class's `forward`, dedented; "" where it cannot be read."""
    found = forward_code(cls)
    return "" if found is None else textwrap.dedent("".join(found[2]))


@functools.lru_cache(maxsize=1024)
def forward_code(cls: type | str) -> tuple[str | None, int, tuple[str, ...]] | None:
    """(its file, where there is one, its first line, its lines) of a module class's `forward`; None where
    it cannot be read."""
    forward = getattr(resolve_class(cls), "forward", None)
    if not callable(forward):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lines, start = source_blocks.source_lines(forward)
            return inspect.getsourcefile(forward), start, tuple(lines)
    except (OSError, TypeError, ValueError, SyntaxError, tokenize.TokenError, RecursionError, MemoryError):
        return None


def called_name(node: fx.Node) -> str | None:
    """The name of what a call node calls: the child's own name (`q_norm` of `blocks.0.attn.q_norm`), the
    method's, or the function's."""
    if node.op == "call_module":
        return str(node.target).rpartition(".")[2]
    if node.op == "call_method":
        return str(node.target)
    name = getattr(node.target, "__name__", None) if node.op == "call_function" else None
    return name if isinstance(name, str) else None


def passed_as(placeholder: fx.Node) -> str | None:
    """The one name the source passes where the graph passes the input to a call, in the statement of its
    module's forward each reader ran in: the one call there of that name with as many arguments and the
    same keywords (`x.permute(0, 2, 1).reshape(B, C, H, W)`: the graph's `reshape(B, C, x_1, x_2)` passes
    `x_1` where the source passes `H`); None where no reader's statement has one or they disagree."""
    names: set[str] = set()
    for user in placeholder.users:
        frames = source_frames(user)
        tree = statement_syntax(frames[0][0], int(frames[0][1]), frames[0][2]) if len(frames) == 1 else None
        found = _passed_names(user, placeholder, tree) if tree is not None else None
        names |= found or set()
    return names.pop() if len(names) == 1 else None


def _passed_names(user: fx.Node, value: fx.Node, tree: ast.stmt) -> set[str] | None:
    """The names the one call of `tree` that `user` is passes where `user` passes `value`; None where there
    is not one such call, or it passes something else than a name there."""
    callee = called_name(user) if user.op in ("call_method", "call_function", "call_module") else None
    if callee is None:
        return None
    method = user.op == "call_method"  # its receiver is its first argument
    matches = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or _callee(call) != callee or (method and not isinstance(call.func, ast.Attribute)):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        positional = [call.func.value] if method and isinstance(call.func, ast.Attribute) else []
        positional += call.args
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        if len(positional) == len(user.args) and set(keywords) == set(user.kwargs):
            matches.append((positional, keywords))
    if len(matches) != 1:
        return None
    positional, keywords = matches[0]
    passed = [plain_name(positional[i]) for i, arg in enumerate(user.args) if arg is value]
    passed += [plain_name(keywords[key]) for key, arg in user.kwargs.items() if arg is value]
    return None if None in passed else {name for name in passed if name is not None}


@functools.lru_cache(maxsize=1024)
def unpacked_parameters(cls: type | str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The parameters of a module class's `forward` that its body unpacks into names, once each, with
    those names in order: `cos, sin = position_embeddings` (transformers' attention) gives
    (("position_embeddings", ("cos", "sin")),); () where the source cannot be read. A parameter unpacked into
    its own name among others (timm's pit: `x, cls_tokens = x`) counts where that is the first statement."""
    parameters = set(source_parameters(cls))
    body = _forward_body(cls) if parameters else []
    found: dict[str, list[tuple[str, ...]]] = {}
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body[0] if body else None
    for node in own_nodes(body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in parameters:
            names = _targets(node)
            # a parameter unpacked into its own name (`x, cls_tokens = x`): only as the first statement, so
            # that every statement reading the name reads the item
            if names is not None and len(names) > 1 and (node.value.id not in names or node is first):
                found.setdefault(node.value.id, []).append(names)
    return tuple((parameter, unpackings[0]) for parameter, unpackings in found.items() if len(set(unpackings)) == 1)


Spread = tuple[str, int, int]  # a call spreading a parameter: the name called, the arguments before and after the star


@functools.lru_cache(maxsize=1024)
def starred_parameters(cls: type | str) -> tuple[tuple[str, tuple[Spread, ...]], ...]:
    """The parameters of a module class's `forward` its body reads only as the starred arguments of calls
    (timm twins' `x.reshape(B, C, *size)`: ("reshape", 2, 0)), never binding them, with those calls; ()
    where the source cannot be read."""
    parameters = source_parameters(cls)
    body = _forward_body(cls) if parameters else []
    spreads: dict[int, Spread] = {}  # the id of a starred name -> its call
    for node in own_nodes(body):
        if isinstance(node, ast.Call) and (called := _callee(node)) is not None:
            for i, argument in enumerate(node.args):
                if isinstance(argument, ast.Starred) and sum(isinstance(a, ast.Starred) for a in node.args) == 1:
                    spreads[id(argument.value)] = (called, i, len(node.args) - i - 1)
    return _read_only_at(parameters, body, spreads)


Indexed = tuple[str, int, int, int]  # a call reading an item of a parameter: the name called, the argument's place, the arguments after it, the item
_Place = TypeVar("_Place", Spread, Indexed)


@functools.lru_cache(maxsize=1024)
def indexed_parameters(cls: type | str) -> tuple[tuple[str, tuple[Indexed, ...]], ...]:
    """The parameters of a module class's `forward` its body reads only as items taken by a number, each
    passed as an argument of a call (timm pvt_v2's `x.view(B, C, feat_size[0], feat_size[1])`: ("view", 2, 1,
    0) and ("view", 3, 0, 1)), never binding them, with those calls; () where the source cannot be read."""
    parameters = source_parameters(cls)
    body = _forward_body(cls) if parameters else []
    reads: dict[int, Indexed] = {}  # the id of a name read by index -> its call
    for node in own_nodes(body):
        if isinstance(node, ast.Call) and (called := _callee(node)) is not None and not any(isinstance(a, ast.Starred) for a in node.args):
            for i, argument in enumerate(node.args):
                if not (isinstance(argument, ast.Subscript) and isinstance(argument.value, ast.Name)):
                    continue
                if (item := int_constant(argument.slice)) is not None and item >= 0:
                    reads[id(argument.value)] = (called, i, len(node.args) - i - 1, item)
    return _read_only_at(parameters, body, reads)


def _read_only_at(parameters: tuple[str, ...], body: list[ast.stmt], places: Mapping[int, _Place]) -> tuple[tuple[str, tuple[_Place, ...]], ...]:
    """The parameters every use of which in `body` is a read at one of `places` (by the id of the name
    read), with those places."""
    found = []
    for parameter in parameters:
        uses = [n for n in own_nodes(body) if isinstance(n, ast.Name) and n.id == parameter]
        if uses and all(isinstance(n.ctx, ast.Load) and id(n) in places for n in uses):
            found.append((parameter, tuple(sorted({places[id(n)] for n in uses}))))
    return tuple(found)


@functools.lru_cache(maxsize=1024)
def rebound_parameters(cls: type | str) -> frozenset[str]:
    """The parameters of a module class's `forward` that a statement of its body (not one under an `if`)
    binds to a value not made of them before any statement reads them (`x, y = y, x`): the source's
    statements read another value under that name, so no input is named after it. (GPT-2's
    `hidden_states = attn_output + residual` comes after `residual = hidden_states`.)"""
    parameters = set(source_parameters(cls))
    found: set[str] = set()
    read: set[str] = set()  # the names statements read so far
    for statement in _forward_body(cls) if parameters else []:
        pairs: list[tuple[str, ast.expr]] = []
        if isinstance(statement, ast.Assign):
            pairs = [pair for target in statement.targets for pair in _bound_values(target, statement.value)]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            pairs = _bound_values(statement.target, statement.value)
        found |= {name for name, value in pairs if name in parameters and name not in read and name not in _loaded(value)}
        read |= _loaded(statement)
    return frozenset(found)


def _forward_body(cls: type | str) -> list[ast.stmt]:
    """The statements of a module class's `forward`; [] where its source cannot be read or parsed."""
    source = forward_source(cls)
    if not source:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    function = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    return function.body if function else []


def _bound_values(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """(name, the value it is bound to) for each name an assignment binds; a tuple bound item by item to
    a tuple of as many, else each name to the whole value."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts):
        return [pair for t, v in zip(target.elts, value.elts) for pair in _bound_values(t, v)]
    return [(node.id, value) for node in ast.walk(target) if isinstance(node, ast.Name)]


def own_nodes(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a function body, not those of the functions, lambdas and classes it defines."""
    pending: list[ast.AST] = list(statements)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _outer_statement(node: fx.Node) -> ast.Module | None:
    """The parsed source statement of the node's outermost recorded frame, else None."""
    found = _frame_spans(node)
    if not found:
        return None
    file, (start, end, *_) = found[0]
    try:
        return ast.parse(textwrap.dedent("".join(linecache.getlines(file)[start - 1 : end])))
    except (SyntaxError, ValueError):
        return None


def passes_whole(node: fx.Node, name: str, cls: type | str | None = None) -> bool:
    """True when the source statement `node` ran in passes the name itself to a call, as an argument or
    a keyword's value (`self.attn(x, position_embeddings=position_embeddings)`), not a value made of it.
    Where no statement was recorded (symbolic_trace) and `cls` is given: where the forward of `cls` reads
    the name nowhere but as such an argument (timm pit's `for module in self: x = module(x)`)."""
    tree = _outer_statement(node)  # the forward's statement: it passes the name on, or a value made of it
    if tree is None:
        return cls is not None and not node.stack_trace and _only_passed(_forward_body(cls), name)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    values = [*(a for c in calls for a in c.args), *(k.value for c in calls for k in c.keywords)]
    return any(isinstance(v, ast.Name) and v.id == name for v in values)


def _only_passed(body: list[ast.stmt], name: str) -> bool:
    """True when the statements read `name` somewhere, and only whole: as an argument or a keyword's value
    of a call, or returned (`return x`), never taken apart."""
    tree = ast.Module(body=body, type_ignores=[])
    passed = {id(v) for c in ast.walk(tree) if isinstance(c, ast.Call) for v in [*c.args, *(k.value for k in c.keywords)]}
    passed |= {id(r.value) for r in ast.walk(tree) if isinstance(r, ast.Return) and r.value is not None}
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(n) in passed for n in reads)


def passed_argument(node: fx.Node, child: str, cls: type | str, parameter: str, caller: type | str | None = None) -> str | None:
    """The name the source statement `node` ran in passes for the parameter `parameter` of the child at `child`
    (its path from the caller; `cls`: the child's class) in its one call of the child, `self.<child>(...)`: by
    keyword (`attention_mask=encoder_attention_mask`) or by position, where nothing but positional parameters
    stands before it; None where the name is bound before the statement, or where it cannot be told. Where
    no statement was recorded and the caller's class `caller` is given, from its source forward alone."""
    position = _positional_index(cls, parameter)
    if position is None:
        return None
    tree = _outer_statement(node)
    if tree is None:
        return _statically_passed(caller, child, position, parameter) if caller is not None and not node.stack_trace else None
    name = _passed_in(tree, child, position, parameter)
    return None if name is None or bound_before(node, name) else name


def _passed_in(tree: ast.AST, child: str, position: int, parameter: str) -> str | None:
    """The name the one call `self.<child>(...)` in `tree` passes for the parameter at `position` named
    `parameter` (-1: keyword-only), by keyword or position; None where there is no such one call or name."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and self_path(n.func) == child]
    if len(calls) != 1:
        return None
    call = calls[0]
    keywords = [k.value for k in call.keywords if k.arg == parameter]
    starred = any(isinstance(a, ast.Starred) for a in call.args[: max(position, 0) + 1])
    positional = call.args[position] if 0 <= position < len(call.args) and not starred else None
    value = keywords[0] if len(keywords) == 1 else positional if not keywords else None
    return value.id if isinstance(value, ast.Name) else None


def _statically_passed(caller: type | str, child: str, position: int, parameter: str) -> str | None:
    """Where no statement was recorded (symbolic_trace): the parameter of the caller's source forward that
    its one call of the child passes for `parameter`, where the forward binds that name nowhere (timm
    twins' `self.attn(self.norm1(x), size)`)."""
    body = _forward_body(caller)
    name = _passed_in(ast.Module(body=body, type_ignores=[]), child, position, parameter)
    if name is None or name not in source_parameters(caller):
        return None
    stored = any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in own_nodes(body))
    return None if stored else name


def _positional_index(cls: type | str, parameter: str) -> int | None:
    """Where the source forward of `cls` takes `parameter` by position (not counting `self`); -1 for a
    keyword-only one, or one after `*args`; None where it has no such parameter."""
    listed = _forward_parameters(cls)
    for i, each in enumerate(listed):
        if each.name == parameter:
            positional = each.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            return i if positional else -1 if each.kind is inspect.Parameter.KEYWORD_ONLY else None
        if each.kind is inspect.Parameter.VAR_POSITIONAL:
            return -1 if any(p.name == parameter for p in listed[i + 1 :]) else None
    return None


def positional_parameter(cls: type | str, index: int) -> str | None:
    """The name of the parameter of the source forward of `cls` that the positional argument at `index`
    (not counting `self`) is bound to; None where that is no named parameter (`*args`) or not known."""
    listed = _forward_parameters(cls)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not 0 <= index < len(listed) or any(p.kind not in positional for p in listed[: index + 1]):
        return None
    return listed[index].name


def self_path(func: ast.expr) -> str | None:
    """`layer.0` for `self.layer[0]` (`layer.-1` for `self.layer[-1]`): the path of the module read off `self`
    ("" where it is indexed by anything but a number or a string; None where it is not read off `self`)."""
    parts: list[str] = []
    node = func
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif (index := _index(node.slice)) is not None:
            parts.append(index)
        else:
            return ""
        node = node.value
    return ".".join(reversed(parts)) if isinstance(node, ast.Name) and node.id == "self" and parts else None


def _index(key: ast.expr) -> str | None:
    """`0`, `-1` or `q` for `[0]`, `[-1]` or `["q"]`; None for any other key."""
    negative = isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub)
    value = key.operand if isinstance(key, ast.UnaryOp) and negative else key
    if not isinstance(value, ast.Constant) or isinstance(value.value, bool) or not isinstance(value.value, (int, str)):
        return None
    if negative and not isinstance(value.value, int):
        return None
    return f"-{value.value}" if negative else str(value.value)


def forget_statements() -> None:
    """Drop the parsed source files and the nodes' statements (kept for one export)."""
    _function_statements.cache_clear()
    _statement_span.cache_clear()
    _frame_spans.cache_clear()
    _simple_statements.cache_clear()
    source_parameters.cache_clear()
    forward_source.cache_clear()
    unpacked_parameters.cache_clear()
    called_always.cache_clear()


def statement_name(node: fx.Node) -> str | None:
    """The one name the node's source statement assigns it, when the node is that statement's value."""
    name = statement_target(node)
    return None if name is None or _read_in_its_statement(node) else name


def same_statement(a: fx.Node, b: fx.Node) -> bool:
    """True when both nodes ran in one source statement."""
    found = statement(a)
    return found is not None and found == statement(b)


def run_name(run: Sequence[fx.Node], first: str | None = None, items: Mapping[fx.Node, str] | None = None) -> str | None:
    """The one name the source statements of a run of values (one name, in order) assign, where the last
    value is what its statement assigned (earlier ones may be parts of theirs); None where they assign
    none or several. A statement unpacking a tuple may hold earlier values if one of its names is that
    one (`attn_output, attn_weights = attention_interface(...)`, then `attn_output = attn_output.reshape(...)`):
    the later statement reads the run's value by that name. A run inside one such statement takes the one
    of its names the statements reading its last value read. `first`: the name the first value's
    statement gives it (an unpacked item). Values at the end computed inside a statement that binds no
    name (`return x * self.gate(x_se)` after `x_se = self.conv_expand(x_se)`) take the name those before
    them have. `items`: the names of later values that are unpacked items too (a packed parameter's item
    passed through `x, cls_tokens = self.pool(x, cls_tokens)`)."""
    while len(run) > 1 and statement(run[-1]) is not None and _assigned(run[-1]) is None and _assigned(run[-2]) is not None:
        run = run[:-1]
    if _read_in_its_statement(run[-1]):
        return None
    if first is None and (names := _assigned(run[0])) is not None and len(names) > 1:
        first = _item_target(run[0], names)  # `B` of `B, N, C = x.shape`, its items read one by one
    later = items or {}
    assigned = [(first,) if first is not None else _assigned(run[0]), *((later[node],) if node in later else _assigned(node) for node in run[1:])]
    depths = [len(found[0]) if (found := statement(node)) is not None else 0 for node in run]
    shallowest = min((d for d, names in zip(depths, assigned) if names is not None), default=0)
    # values made inside a function the run's statements call go by the name the calling statement gives them
    assigned = [names for names, d in zip(assigned, depths) if names is None or d == shallowest]
    singles = {names[0] for names in assigned if names is not None and len(names) == 1}
    if not singles and first is None and len(set(assigned)) == 1 and assigned[0] is not None:
        return _read_as(run[-1], assigned[0])
    if len(singles) != 1:
        return None
    name = singles.pop()
    last = assigned[-1]
    if any(names is None or name not in names for names in assigned) or last is None or len(last) != 1:
        return None
    return name


def combines_parts(node: fx.Node) -> bool:
    """True when `node`'s statement binds several names and `node` reads two or more values computed in it:
    where that statement's result starts (`attention_interface(...)`'s attention of the query and the key
    and value it repeated), not a step of one of them."""
    names, found = _assigned(node), statement(node)
    if names is None or len(names) < 2 or found is None or not _runs_in(node, found[0][-1]):
        return False
    parts = [a for a in node.all_input_nodes if a.op not in ("placeholder", "get_attr") and same_statement(a, node)]
    return len(parts) > 1


def _runs_in(node: fx.Node, place: tuple[str, int]) -> bool:
    """True when the statement at `place` is the innermost frame the node recorded: it ran in that statement's
    own code, not in a module it calls (whose nodes a multi-name statement holds where the module stays inline)."""
    frames = list(frame_matches(node))
    last = frames[-1] if frames else None
    if last is None or last["file"] != place[0]:
        return False
    span = _frame_span(place[0], int(last["line"]), last["code"].strip())
    return span is not None and span[0] == place[1]


def _read_as(value: fx.Node, names: tuple[str, ...]) -> str | None:
    """The one of `names` (that its statement binds) that every later statement reading `value` reads."""
    read: set[str] = set()
    for user in value.users:
        reads = _reads_where(user, value)
        if user.op == "output" or reads is None or same_statement(user, value):
            return None
        read |= reads & set(names)
    return read.pop() if len(read) == 1 else None


def unpacked_as(value: fx.Node, name: str, reader: fx.Node) -> bool:
    """True when the statement of `value` binds `name` among others (`attn_output, attn_weights = ...`) and
    that of `reader` reads it and no other of them (`a = b + a` reads both: which is `value` is not known)."""
    names, reads = _assigned(value), _reads_where(reader, value)
    return names is not None and len(names) > 1 and reads is not None and reads & set(names) == {name}


def unpacked_apart(a: fx.Node, b: fx.Node) -> bool:
    """True when the statements of `a` and `b` each bind several names, none the same."""
    names_a, names_b = _assigned(a), _assigned(b)
    return names_a is not None and names_b is not None and min(len(names_a), len(names_b)) > 1 and not set(names_a) & set(names_b)


def _assigned(node: fx.Node) -> tuple[str, ...] | None:
    """The names the node's statement assigns; the one it assigns the node, where it pairs names with
    calls (`q, k = self.q_norm(q), self.k_norm(k)`: `q` for the q_norm call)."""
    found = statement(node)
    names = None if found is None else found[1]
    if names is not None and len(names) > 1 and (one := _paired_target(node, names) or _kept_item(node, names)) is not None:
        return (one,)
    return names


def _kept_item(node: fx.Node, names: tuple[str, ...]) -> str | None:
    """The one name a statement keeping one item of a child's result binds (`hidden_states, _ =
    self.self_attn(...)`), for that child's call where the graph reads no item of it: the split made the
    child return the one item read."""
    kept = [name for name in names if name != "_"]
    if len(kept) != 1 or node.op != "call_module" or any(is_item_of(user, node) for user in node.users):
        return None
    return kept[0]


def item_names(result: fx.Node, count: int) -> tuple[str, ...] | None:
    """The names the source statement of an unpacked result binds its `count` items to, else None (also where
    the result is a child's whose items are known not to be in the order its source returns them). A child's
    items that are known items of its source's tuple take theirs (`hidden_states, position_bias` of
    `hidden_states, position_bias, _ = self.layer[0](...)`, the third item read by nobody)."""
    if result.meta.get(MISORDERED):
        return None
    names = _assigned(result)
    items = result.meta.get(SOURCE_ITEMS)
    if names is not None and items is not None and len(names) == items[1] and len(items[0]) == count:
        return tuple(names[i] for i in items[0])
    return names if names is not None and len(names) == count else None


def usable(name: str, free: bool) -> bool:
    """A source name a value may take: free in its method, no builtin it would shadow, not `_`, ASCII (as
    every name the later stages read in generated lines)."""
    return free and name != "_" and name not in BUILTIN_NAMES and name.isascii()


def statement_target(node: fx.Node) -> str | None:
    """The one name the node's source statement assigns (the node its value or a part of it), or the
    name it binds the node to as an item of a value it unpacks whole (`B` of `B, N, C = x.shape`)."""
    names = _assigned(node)
    if names is None:
        return None
    return names[0] if len(names) == 1 else _item_target(node, names)


def _item_target(node: fx.Node, names: tuple[str, ...]) -> str | None:
    """`names[i]` for `node`, item i of a value of the same statement whose users are its items 0 to
    len(names) - 1, each read once: what symbolic_trace records for `B, N, C = x.shape`, whose length it
    does not know (so the items stay indexed: `B = shape[0]`); `a, b = x.shape[0], x.shape[1]` reads
    two values, one item of each."""
    result = node.args[0] if node.args else None
    if not isinstance(result, fx.Node) or not is_item_of(node, result) or not same_statement(result, node):
        return None
    if not all(is_item_of(user, result) for user in result.users):
        return None
    places = sorted(cast(int, user.args[1]) for user in result.users)
    return names[cast(int, node.args[1])] if places == list(range(len(names))) else None


def _paired_target(node: fx.Node, names: tuple[str, ...]) -> str | None:
    """`names[i]` for `node`, the call item i of a tuple its statement assigns makes (`q` of `q, k =
    self.q_norm(q), self.k_norm(k)`), where no other item makes such a call."""
    found = _statement_span(node)
    callees = found[2][4] if found is not None else None
    if callees is None or len(callees) != len(names):
        return None
    called = _subscript(node) or called_name(node)
    places = [i for i, callee in enumerate(callees) if callee is not None and callee == called]
    return names[places[0]] if len(places) == 1 else None


def _subscript(node: fx.Node) -> str | None:
    """`qkv[0]` for item 0 of a value its source bound to `qkv` (or a forward input of that name), else None."""
    value = node.args[0] if node.args else None
    if not isinstance(value, fx.Node) or not is_item_of(node, value):
        return None
    name = value.target if value.op == "placeholder" else statement_target(value)
    return f"{name}[{node.args[1]}]" if isinstance(name, str) else None


def _read_in_its_statement(node: fx.Node) -> bool:
    """True when a later value of the node's own source statement reads it (it is not what the statement
    assigned: `y = f(x) + 1` computes `f(x)` first)."""
    return any(same_statement(node, user) for user in node.users if user.op != "output")


@functools.lru_cache(maxsize=1024)
def chosen_aliases(source: str) -> dict[str, frozenset[str]]:
    """Locals the forward binds to one of two names by a conditional expression testing a name (`current =
    key_value_states if key_value_states is not None else hidden_states`), and parameters it binds to another
    where None (`if key_value_states is None: key_value_states = hidden_states`, as fxexport writes the first),
    each with those two: a statement reading the local reads either."""
    if "None" not in source or (" else " not in source and "is None:" not in source):
        return {}  # no such expression: not parsed (most forwards, in every first export)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, frozenset[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.IfExp):
            chosen = (node.value.body, node.value.orelse)
            test = node.value.test
            if all(isinstance(c, ast.Name) for c in chosen) and _tests_a_name(test):
                out[node.targets[0].id] = frozenset(c.id for c in chosen if isinstance(c, ast.Name))
        elif isinstance(node, ast.If) and (found := _defaulted_to_name(node)) is not None:
            out[found[0]] = frozenset(found)
    return out


def _defaulted_to_name(statement: ast.If) -> tuple[str, str] | None:
    """(name, other) for `if name is None: name = other` (no `else`), else None."""
    test, body = statement.test, statement.body
    if statement.orelse or len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return None
    target, value, tested = body[0].targets[0], body[0].value, none_test(test)
    if tested is None or not tested[1]:
        return None
    name = tested[0]
    if not isinstance(target, ast.Name) or target.id != name or not isinstance(value, ast.Name) or value.id == name:
        return None
    return name, value.id


def none_test(test: ast.expr) -> tuple[str, bool] | None:
    """(name, True) for `name is None`, (name, False) for `name is not None`, else None."""
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1:
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            return test.left.id, isinstance(test.ops[0], ast.Is)
    return None


def _tests_a_name(test: ast.expr) -> bool:
    """True for a test of a name: `key_value_states is not None`, `is_cross_attention`, `not is_cross_attention`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Name) or (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name))


@functools.lru_cache(maxsize=1024)
def kept_input_alias(source: str) -> tuple[str, str, frozenset[str], frozenset[str], frozenset[str]] | None:
    """(alias, parameter, children, alias children, children bound to the alias) where the forward keeps an
    input under another name, `alias = parameter`, before any statement binds either name (its first
    statement, or after `B, H, W, C = x.shape`): `children` are those whose value it later binds to the
    parameter (timm's `x = self.conv1(x)`), `alias children` those whose value of the parameter it binds to
    the alias (torchvision's `identity = self.downsample(x)`), and the last those whose value of anything
    it binds to the alias (timm's `shortcut = self.downsample(x_preact)` too); None where it keeps none so."""
    try:
        tree = ast.parse(source) if source else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    function = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    if not isinstance(function, ast.FunctionDef):
        return None
    parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    found = _input_kept(function.body, parameters)
    if found is None:
        return None
    alias, parameter = found
    statements = [node for node in ast.walk(function) if isinstance(node, ast.stmt)]
    rebinding = frozenset(child for node in statements if bound_name(node) == parameter and (child := called_child(node)))
    bound_alias = [(node, child) for node in statements if bound_name(node) == alias and (child := called_child(node))]
    rebound_alias = frozenset(child for node, child in bound_alias if _first_argument(node) == parameter)
    return alias, parameter, rebinding, rebound_alias, frozenset(child for _, child in bound_alias)


def _input_kept(body: list[ast.stmt], parameters: set[str]) -> tuple[str, str] | None:
    """(alias, parameter) of the first top-level `alias = parameter` keeping an input, where no statement
    before it binds a name (the input would be another value, or the alias one already)."""
    bound: set[str] = set()
    for statement in body:
        alias = bound_name(statement)
        parameter = plain_name(statement.value) if isinstance(statement, ast.Assign) else None
        if alias is not None and parameter in parameters and alias not in parameters:
            return (alias, parameter) if not bound & {alias, parameter} else None
        bound |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return None


def _first_argument(statement: ast.stmt) -> str | None:
    """The name a call's first argument reads, in a statement binding the call's value (`x` of `y = f(x)`)."""
    call = statement.value if isinstance(statement, ast.Assign) else None
    return plain_name(call.args[0]) if isinstance(call, ast.Call) and call.args else None


def bound_name(statement: ast.stmt) -> str | None:
    """The one name `statement` binds (`x = ...`), else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def called_child(statement: ast.stmt) -> str | None:
    """`c` of a statement binding the value of a call of `self.c` (`x = self.c(x)`), else None."""
    call = statement.value if isinstance(statement, ast.Assign) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and plain_name(call.func.value) == "self":
        return call.func.attr
    return None


def plain_name(node: ast.expr) -> str | None:
    """The name a bare name expression reads (`x`), else None."""
    return node.id if isinstance(node, ast.Name) else None
