"""Whether a module's source returns a value computed inside its call, rather than keeping it on itself.

A value computed inside a module call and read after it is returned or kept on a module
(kept_values.py). A class that passes `self` to a function the source does not name may keep one
(T5Attention's `attention_interface(self, ...)`). The value's stack trace says more: the statement it
ran in, in each module's forward. The call returns it where, from the innermost module out to the one
called, each forward binds it to a name there (the innermost by assigning it, in a statement that keeps
nothing on the module, statement_keeps.py: `position_bias = self.compute_bias(...)`; each caller by
unpacking the item its child, called by its path, returns: `attention_output, position_bias,
attn_weights = self.SelfAttention(...)`, `self.layer[-1](...)`), or returns it in that statement
(`return (self.lin2(a), a)`), binds that name nowhere after it (but in the other arm of an `if`, or an
arm that its dtype, which the graph records, skips: `if hidden_states.dtype == torch.float16:`) and not
in a loop, ends with a `return` and returns the name as the same item in every `return` after it. Stack traces do not record a
decorator's wrapper: each must be marked (functools.wraps) and return what it wraps, called, or a
checkpoint of it; a model class defining `__call__` shows nothing. Hooks are not seen.
"""
from __future__ import annotations

import ast
import functools
import inspect
import itertools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import fx, nn

from .annotations import frame_matches, in_class_code, in_torch, passes_on
from .calls import Frame, is_torch_class, model_classes, resolve_class, stack_frames
from .kept_values import is_partial, passes_to
from .source_names import function_at, function_syntax, own_nodes, self_path, statement_site
from .statement_keeps import keeps_nothing

Site = tuple[tuple[str, int], ...]  # (file, first line of the statement) of each frame, outermost first
Block = tuple[int, str, str]  # a block a node is in: id of its compound statement, the field holding it, "if", "loop" or "other"


@dataclass(frozen=True)
class _Returned:
    """How a forward returns a name: item `index` of a tuple of `length` items, or whole (index None)."""

    index: int | None
    length: int = 1


def returned_from(value: fx.Node, key: str) -> bool:
    """True where the source shows that the module call recorded as `key` in the value's `nn_module_stack`
    returns `value` (the module docstring)."""
    return _returned(value, key) is not None


def source_item(value: fx.Node, key: str) -> tuple[int, int] | None:
    """(item, items) of the tuple the module call recorded as `key` returns: which item the source shows
    `value` is, and how many the tuple has; None where not shown."""
    returned = _returned(value, key)
    return None if returned is None or returned.index is None else (returned.index, returned.length)


@functools.lru_cache(maxsize=1 << 14)
def _returned(value: fx.Node, key: str) -> _Returned | None:
    """Asked of an output when split orders a call's outputs and again when it decides whether to cut it out."""
    stack = _model_frames(stack_frames(value))
    start = next((i for i, frame in enumerate(stack) if frame.key == key), None)
    if start is None:
        return None
    found = _forward_frames(value, stack, start)
    if found is None or not _is_statement_value(value, stack[-1].key, found[0]):
        return None
    returned: _Returned | None = None
    levels = stack[start:]
    if not all(_passes_result_on(level.cls, frame[0], frame[1]) for level, frame in zip(levels, found[1])):
        return None
    for depth in range(len(levels) - 1, -1, -1):
        file, line, _ = found[1][depth]  # its code read as the file has it (_site)
        child = _spellings(value.graph, levels[depth].path, levels[depth + 1].path) if depth + 1 < len(levels) else None
        at = function_at(file, line)
        statement = _statement_at(at[1], line - at[0] + 1) if at is not None else None
        if at is None or statement is None:
            return None
        is_child = functools.partial(_is_child, value.graph, levels[depth].path)
        if child is None and not keeps_nothing(statement, levels[depth].cls, at[1], is_child):
            return None
        if isinstance(statement, ast.Return):
            returned = _returned_here(statement.value, returned, child)
        else:
            name = _bound_name(statement, returned, child)
            returned = _return_of(at[1], statement, name, getattr(value.meta.get("val"), "dtype", None)) if name is not None else None
        if returned is None:
            return None
    return returned


def _is_child(graph: fx.Graph, caller: str, path: str) -> bool:
    """True where `path` from the module at `caller` is a module the GraphModule holds or the graph recorded a call of."""
    full = f"{caller}.{path}" if caller else path
    module = graph.owning_module
    try:
        held = module is not None and isinstance(module.get_submodule(full), nn.Module)
    except AttributeError:
        held = False
    return held or full in _recorded_paths(graph)


@functools.lru_cache(maxsize=8)
def _recorded_paths(graph: fx.Graph) -> frozenset[str]:
    return frozenset(frame.path for node in graph.nodes for frame in stack_frames(node))


def forget_returned() -> None:
    """Drop the answers and the graphs' recorded paths (kept for one export)."""
    _returned.cache_clear()
    _recorded_paths.cache_clear()


def _passes_result_on(cls: type | str, file: str, line: int) -> bool:
    """True where the class's `forward`, unwrapped, is the function the frame at line `line` of `file` ran in, each
    wrapper a decorator put around it returns only what it wraps returns, called (`return func(*args, **kwargs)`:
    one that reorders the tuple would not), and no model class of it defines `__call__`."""
    resolved = resolve_class(cls)
    function = getattr(resolved, "forward", None) if resolved is not None else None
    if resolved is None or any("__call__" in vars(k) for k in model_classes(resolved)):
        return False
    if not _runs_in(inspect.unwrap(function) if function is not None else None, file, line):
        return False  # a wrapper without functools.wraps: what it does with the result is not known
    while function is not None and (wrapped := getattr(function, "__wrapped__", None)) is not None:
        tree = function_syntax(function.__code__) if inspect.isfunction(function) else None
        names = passes_to(function, wrapped)
        if tree is None or not names:
            return False
        returns = [n.value for n in own_nodes(tree.body) if isinstance(n, ast.Return)]
        if not returns or not all(_calls_wrapped(r, names) for r in returns):
            return False
        function = wrapped
    return True


def _runs_in(function: object, file: str, line: int) -> bool:
    """True where `function`'s code is in `file` and spans line `line`."""
    code = getattr(function, "__code__", None)
    if code is None or os.path.realpath(code.co_filename) != os.path.realpath(file):
        return False
    lines = [number for _, _, number in code.co_lines() if number is not None]
    return bool(lines) and code.co_firstlineno <= line <= max(lines)


# what a checkpoint is called as: it returns what the function it is given returns
_CHECKPOINTS = frozenset({"checkpoint", "torch.utils.checkpoint.checkpoint", "self._gradient_checkpointing_func"})


def _calls_wrapped(value: ast.expr | None, names: frozenset[str]) -> bool:
    """`func(*args, **kwargs)`, or a checkpoint given it first (`self._gradient_checkpointing_func(partial(forward,
    self), *args)`: transformers' gradient checkpointing, which returns what the function returns)."""
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id in names:
        return True
    if ast.unparse(value.func) not in _CHECKPOINTS:
        return False
    first = value.args[0] if value.args else None
    return isinstance(first, ast.Call) and is_partial(first.func) and bool(first.args) and isinstance(first.args[0], ast.Name) and first.args[0].id in names


def _model_frames(stack: list[Frame]) -> list[Frame]:
    """The stack without the torch.nn layer the value is the output of (its statement is its caller's: `out =
    self.o(h)`); all of it, the layer's included, where a model's class runs inside a torch class (read as none)."""
    while stack and is_torch_class(stack[-1].cls):
        stack = stack[:-1]
    return stack


def _forward_frames(value: fx.Node, stack: Sequence[Frame], start: int) -> tuple[int, list[tuple[str, int, str]]] | None:
    """The frame of each module's forward from `stack[start]` in, where the value's stack trace records
    each, one after the other (but for torch's own frames and wrappers passing their call on), with the
    number of frames outside torch up to the last; None otherwise."""
    matches = list(frame_matches(value))
    callers = sum(frame.cls == stack[start].cls for frame in stack[:start])
    found: list[int] = []
    for depth, frame in enumerate(stack[start:]):
        after = found[-1] + 1 if found else 0
        at = [i for i in range(after, len(matches)) if matches[i]["func"] == "forward" and in_class_code(frame.cls, matches[i]["file"], int(matches[i]["line"]))]
        at = at[callers:] if depth == 0 else at[:1]
        if not at or (found and not all(_passes(matches[i]) for i in range(found[-1] + 1, at[0]))):
            return None
        found.append(at[0])
    count = sum(not in_torch(m["file"]) for m in matches[: found[-1] + 1])
    return count, [(matches[i]["file"], int(matches[i]["line"]), matches[i]["code"].strip()) for i in found]


def _passes(match: re.Match[str]) -> bool:
    """A frame between a forward and its child's: torch's own (`_call_impl`) or a wrapper passing its call on."""
    return in_torch(match["file"]) or passes_on(match["code"])


def _is_statement_value(value: fx.Node, key: str, count: int) -> bool:
    """True where the value is the last one its statement in the forward of its innermost module call
    (`key`) computed and no other value of that statement reads it: what the statement binds. `count`:
    the value's frames outside torch up to that statement's."""
    site = _site(value, count)
    if site is None:
        return False
    for node in (*value.users, *_after_inside(value, key)):
        if node.op != "output" and _inside(node, key) and _site(node, count) in (site, None):
            return False
    return True


def _after_inside(node: fx.Node, key: str) -> Iterator[fx.Node]:
    """The nodes after `node` up to the end of the module call `key` (a call's nodes are consecutive)."""
    later = node.next
    while later.op not in ("output", "root") and _inside(later, key):
        yield later
        later = later.next


def _inside(node: fx.Node, key: str) -> bool:
    return any(frame.key == key for frame in stack_frames(node))


def _site(node: fx.Node, count: int) -> Site | None:
    """(file, the statement's first line) of the node's first `count` frames outside torch (fewer where it
    has fewer); None where one cannot be read."""
    out: list[tuple[str, int]] = []
    for match in frame_matches(node):
        if len(out) == count:
            break
        if in_torch(match["file"]):
            continue
        start = statement_site(match["file"], int(match["line"]), match["code"].strip())
        if start is None:
            return None
        out.append((match["file"], start))
    return tuple(out) if out else None


def _returned_here(value: ast.expr | None, returned: _Returned | None, child: frozenset[str] | None) -> _Returned | None:
    """How a `return` statement the value ran in returns it: the one item of its tuple that is no name or
    constant (`return (self.lin2(a), a)`), else the whole; in a caller, the child's call returned whole
    (`return self.layers[1](x, bias)`) or as an item (`return (self.attention(x), x)`)."""
    items = value.elts if isinstance(value, ast.Tuple) else None
    if items is not None and any(isinstance(item, ast.Starred) for item in items):
        return None
    if returned is None:
        if items is None:
            return _Returned(None) if value is not None and not isinstance(value, (ast.Name, ast.Constant)) else None
        computed = [i for i, item in enumerate(items) if not isinstance(item, (ast.Name, ast.Constant))]
        return _Returned(computed[0], len(items)) if len(computed) == 1 else None
    if value is not None and _calls_child(value, child):
        return returned
    places = [i for i, item in enumerate(items or []) if _calls_child(item, child)]
    return _Returned(places[0], len(items or [])) if len(places) == 1 and returned.index is None else None


def _spellings(graph: fx.Graph, caller: str, child: str) -> frozenset[str]:
    """The paths from its caller the child may be read as: `layer.1` for `block.0` and `block.0.layer.1`, and
    `layer.-1` where the container holds 2 (what the GraphModule holds or the graph recorded a call of)."""
    parts = (child[len(caller) + 1 :] if caller else child).split(".")
    spelled = [[part] for part in parts]
    for i, part in enumerate(parts):
        count = _children_count(graph, ".".join([*([caller] if caller else []), *parts[:i]])) if part.isdigit() else None
        if count is not None and int(part) < count:
            spelled[i].append(str(int(part) - count))
    return frozenset(".".join(path) for path in itertools.product(*spelled))


def _children_count(graph: fx.Graph, container: str) -> int | None:
    """How many children the numbered container at `container` holds: those the GraphModule holds and the graph
    recorded calls of, numbered 0 up; None where it holds a named one."""
    module = graph.owning_module
    try:
        held = list(module.get_submodule(container)._modules) if module is not None else []
    except AttributeError:
        held = []
    prefix = f"{container}." if container else ""
    called = {path[len(prefix) :].split(".")[0] for path in _recorded_paths(graph) if path.startswith(prefix)}
    names = {*held, *called}
    if not names or not all(name.isdigit() for name in names):
        return None
    return max(int(name) for name in names) + 1


def _bound_name(statement: ast.stmt | None, returned: _Returned | None, child: frozenset[str] | None) -> str | None:
    """The name a statement binds the value to: the one name it assigns (the innermost module's), or the
    item `returned` says its child returns it as, of the names it unpacks that child's call into (`child`:
    the attribute of `self` holding it)."""
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
        return None
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if len(targets) != 1:
        return None
    target = targets[0]
    if returned is None:
        return target.id if isinstance(target, ast.Name) else None
    if not _calls_child(statement.value, child):
        return None
    if returned.index is None:
        return target.id if isinstance(target, ast.Name) else None
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
    if len(names) != returned.length or not all(isinstance(n, ast.Name) for n in names):
        return None
    return names[returned.index].id  # type: ignore[attr-defined]


def _calls_child(value: ast.expr, child: frozenset[str] | None) -> bool:
    """True where the statement's value is the child's call: `self.<child>...(...)`, calling nothing else the
    same way (`self.attention(self.norm(h), bias)`), or a call of a local calling nothing else (`layer(h, bias)`):
    a call inside its arguments would run first, and its result not be the statement's. A child read by a
    negative index calls nothing else: the children the count starts from may not all be known."""
    if not isinstance(value, ast.Call):
        return False
    inner = [n.func for n in ast.walk(value) if isinstance(n, ast.Call) and n is not value]
    path = self_path(value.func)
    if path is not None and any(part.startswith("-") for part in path.split(".")):
        return child is not None and path in child and not inner  # a stateless child not held may be the one it counts from
    if path is not None:
        return child is not None and path in child and all(ast.dump(func) != ast.dump(value.func) for func in inner)
    return not inner and isinstance(value.func, ast.Name)


def _statement_at(function: ast.FunctionDef | ast.AsyncFunctionDef, at: int) -> ast.stmt | None:
    """The one simple statement of the function (lines from 1 at its `def`) that line `at` is in; None where
    there is none, or several share the line (which one ran is not known)."""
    covering = [s for s in own_nodes(function.body) if isinstance(s, ast.stmt) and not _blocks(s) and s.lineno <= at <= (s.end_lineno or s.lineno)]
    return covering[0] if len(covering) == 1 else None


def _return_of(function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.stmt, name: str, dtype: torch.dtype | None) -> _Returned | None:
    """How the function returns `name`, bound by `statement`, or None where some `return` after it does not
    return it, or returns it as another item, or the name is bound again, or the statement is in a loop. An
    arm of an `if` testing only the name's dtype (`dtype`, as the graph records it) that cannot have run
    (transformers' `if hidden_states.dtype == torch.float16:` clamps) binds and returns nothing."""
    around = _blocks_around(function)
    if any(kind == "loop" for _, _, kind in around[statement]) or not isinstance(function.body[-1], ast.Return):
        return None
    end = statement.end_lineno or statement.lineno
    other_arms = {(block, "orelse" if field == "body" else "body", kind) for block, field, kind in around[statement] if kind == "if"}
    skipped = other_arms | _dead_arms(function, name, dtype, end)
    bound = (n for n in own_nodes(function.body) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
    if any(n.lineno > end and not around[n] & skipped for n in bound):
        return None  # bound again after it, not only in the other arm of an `if` it is in
    returns = (r for r in own_nodes(function.body) if isinstance(r, ast.Return) and r.lineno > end and not around[r] & skipped)
    ways = {_returned_as(r.value, name) for r in returns}
    return ways.pop() if len(ways) == 1 else None


def _dead_arms(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, dtype: torch.dtype | None, end: int) -> set[Block]:
    """The arms of the `if`s after line `end` that did not run: their test reads only `name`'s dtype, which is `dtype`."""
    out: set[Block] = set()
    for node in own_nodes(function.body):
        if dtype is not None and isinstance(node, ast.If) and node.lineno > end:
            holds = _dtype_test(node.test, name, dtype)
            if holds is not None:
                out.add((id(node), "orelse" if holds else "body", "if"))
    return out


def _dtype_test(test: ast.expr, name: str, dtype: torch.dtype) -> bool | None:
    """What `test` gives where `name` is a tensor of `dtype`: `name.dtype == torch.float16` (`!=`, `is`, `is not`,
    `in (...)`, `not in (...)`), `not` of one, and `and` / `or` of them (one of them deciding the rest); None
    where it reads anything else."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _dtype_test(test.operand, name, dtype)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_dtype_test(v, name, dtype) for v in test.values]
        decides = isinstance(test.op, ast.Or)  # True decides an `or`, False an `and`
        return decides if decides in values else (not decides if all(v is not None for v in values) else None)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if not _reads_dtype(left, name):
        left, right = right, left
        if isinstance(op, (ast.In, ast.NotIn)) or not _reads_dtype(left, name):
            return None
    if isinstance(op, (ast.In, ast.NotIn)):
        items = [_torch_dtype(item) for item in right.elts] if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [None]
        return None if None in items else (dtype in items) == isinstance(op, ast.In)
    other = _torch_dtype(right)
    if other is None or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        return None
    return (dtype == other) == isinstance(op, (ast.Eq, ast.Is))


def _reads_dtype(value: ast.expr, name: str) -> bool:
    return isinstance(value, ast.Attribute) and value.attr == "dtype" and isinstance(value.value, ast.Name) and value.value.id == name


def _torch_dtype(value: ast.expr) -> torch.dtype | None:
    """The dtype `torch.float16` names (`torch.half`), else None."""
    if not (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "torch"):
        return None
    found = getattr(torch, value.attr, None)
    return found if isinstance(found, torch.dtype) else None


def _returned_as(value: ast.expr | None, name: str) -> _Returned | None:
    if isinstance(value, ast.Name) and value.id == name:
        return _Returned(None)
    items = value.elts if isinstance(value, ast.Tuple) else []
    places = [i for i, item in enumerate(items) if isinstance(item, ast.Name) and item.id == name]
    if len(places) != 1 or any(isinstance(item, ast.Starred) for item in items):
        return None
    return _Returned(places[0], len(items))


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of statements a compound statement holds ([] for a simple one, and a function or class defined)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    blocks = [getattr(statement, name, None) or [] for name in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(statement, "handlers", [])] + [c.body for c in getattr(statement, "cases", [])]
    return [b for b in blocks if b]


def _blocks_around(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.AST, frozenset[Block]]:
    """The blocks each syntax node of the function's own body is in (those of functions and classes it defines aside)."""
    out: dict[ast.AST, frozenset[Block]] = {}
    pending: list[tuple[ast.AST, frozenset[Block]]] = [(n, frozenset()) for n in function.body]
    while pending:
        node, inside = pending.pop()
        out[node] = inside
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        kind = "if" if isinstance(node, ast.If) else "loop" if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else "other"
        for field, value in ast.iter_fields(node):
            block = inside | {(id(node), field, kind)} if isinstance(node, ast.stmt) and field in ("body", "orelse", "finalbody", "handlers", "cases") else inside
            pending += [(child, block) for child in (value if isinstance(value, list) else [value]) if isinstance(child, ast.AST)]
    return out
