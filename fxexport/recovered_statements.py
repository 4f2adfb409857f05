"""recovered_statements: while a symbolic_trace graph is collected, each node records the source statement it ran in.

torch.export and fxexport.trace record each node's stack trace, from which a generated forward takes
the source's names for its values and writes a statement as the source does (`x = x + self.attn(self.norm1(x))`).
torch.fx.symbolic_trace records none, but it records which module call each node ran inside
(`nn_module_stack`, with the module's class), and the nodes of one call come in the order its forward ran.
So each call's nodes are matched, in order, with the statements of its class's source forward: a node
belongs to the first statement from the current one on that does what the node does (calls that child,
method or function, applies that operator, indexes, reads that attribute, unpacks). A nested call is one
node of its caller (a call of that child), so every node gets one frame per module call it ran in.

A child's child is the path the forward calls it by (`self.rel_pos.mlp(x)`), and one that ran outside
any call of the child (in a method of it, `self.rel_pos.get_bias()`) is an item of it, not the child's
call (`self.rel_pos(attn)` in the other arm), as a container's child is (`self.blocks[0](x)`). A tuple a
child the trace ran through returns is a Python tuple: unpacking it makes no node.

The calls fxexport inferred for a graph that recorded none (inferred_stacks.py) are matched too where
they are named after the source model's class (`classes_from`). torch.export of a GraphModule that a
tracer of its own made records the statements of the layers it calls, none of the code between: there
the nodes of such calls get statements, a layer's nodes their caller's before their own, and an ATen
operator is matched as the operator, method or function of its name (`aten.mul.Tensor` as `x * y`).

The match is greedy and conservative: it keeps to the keys' order within a statement, never steps back
(but to the start of a loop it is in), skips the other arm of an `if` it is in, never steps past a child
call a statement always makes that has not come yet (the node would be out of order), and a node no
statement does keeps no statement (named as before). A statement in a loop keeps none either: every
iteration would have the same line, and be taken for one statement. The root's source is not known (a
GraphModule replaced its class), so its own nodes keep none. Recovered statements give names and
statements only: no note quotes them (annotations.recovering), since the export of the export, matched
with the generated code, would have none.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import operator
import textwrap
import tokenize
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx, nn

from . import source_blocks
from .annotations import frame_matches
from .calls import (
    Call,
    body_nodes,
    call_tree,
    is_inferred,
    is_torch_class,
    named_after,
    recorded_frames,
    resolve_class,
    stack_frames,
)
from .module_paths import joined, relative, within
from .shared_modules import attribute_name, outside_paths
from .source_names import called_name, forward_code, forward_source

Key = tuple[str, ...]

_OPERATORS = {
    operator.add: "Add", operator.iadd: "Add", operator.sub: "Sub", operator.isub: "Sub", operator.mul: "Mult",
    operator.imul: "Mult", operator.truediv: "Div", operator.itruediv: "Div", operator.floordiv: "FloorDiv",
    operator.matmul: "MatMult", operator.pow: "Pow", operator.mod: "Mod", operator.and_: "BitAnd", operator.or_: "BitOr",
    operator.xor: "BitXor", operator.lshift: "LShift", operator.rshift: "RShift", operator.neg: "USub", operator.pos: "UAdd",
    operator.invert: "Invert", operator.eq: "Eq", operator.ne: "NotEq", operator.lt: "Lt", operator.le: "LtE",
    operator.gt: "Gt", operator.ge: "GtE",
}  # fmt: skip
_ATEN_OPERATORS = {
    "add": "Add", "add_": "Add", "sub": "Sub", "sub_": "Sub", "mul": "Mult", "mul_": "Mult", "div": "Div", "div_": "Div",
    "floor_divide": "FloorDiv", "matmul": "MatMult", "pow": "Pow", "remainder": "Mod", "neg": "USub", "eq": "Eq", "ne": "NotEq",
    "lt": "Lt", "le": "LtE", "gt": "Gt", "ge": "GtE",
}  # fmt: skip
_RECORDED_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_RECORDED_UNARY = (ast.USub, ast.UAdd, ast.Invert)


@dataclass(frozen=True)
class Unit:
    """A statement (or a compound statement's header) of a forward: its line, what it does, where it may run."""

    line: int  # in the file
    code: str
    keys: tuple[tuple[Key, bool], ...]  # in the order Python evaluates them; True: a child call it always makes
    conditional: bool  # inside an if/else, try handler or loop's else
    loop: tuple[int, int] | None  # the units of the innermost loop it is in: [first, last]
    arms: tuple[tuple[int, int], ...]  # (if statement, 0 for its body or 1 for its else) of each `if` it is in


@dataclass(frozen=True)
class _Forward:
    file: str
    units: tuple[Unit, ...]
    reached: frozenset[str] = frozenset()  # children's children it calls by attributes (`self.rel_pos.mlp`)


@contextlib.contextmanager
def recovered_statements(gm: fx.GraphModule) -> Iterator[frozenset[tuple[str, int]]]:
    """While the block runs, each node of `gm` it can be recovered for records its stack trace (module
    docstring); the frames (file, line) recovered, which no note quotes (annotations.recovering). Nothing
    where its nodes record statements already or no module
    calls. The nodes are as they were once the block ends: a copy of the graph would cost more than all
    the rest of this (a third of a transformer block's collect)."""
    traces = _traces(gm)
    recorded = {node: node.meta.get("stack_trace") for node in traces}
    kept = {(m["file"], int(m["line"])) for node in traces for m in frame_matches(node)}
    for node, trace in traces.items():
        node.meta["stack_trace"] = trace
    try:
        yield frozenset((m["file"], int(m["line"])) for node in traces for m in frame_matches(node)) - kept
    finally:
        for node, original in recorded.items():
            if original is None:
                node.meta.pop("stack_trace", None)
            else:
                node.meta["stack_trace"] = original


def _traces(gm: fx.GraphModule) -> dict[fx.Node, str]:
    """The recovered stack trace of each node that gets one. In a graph that records statements, only nodes
    of inferred calls (inferred_stacks.py) that record none get one: torch.export of a GraphModule a tracer
    of its own made records the statements of the layers it calls, none of the code between."""
    nodes = body_nodes(gm)
    if not any(n.meta.get("nn_module_stack") for n in nodes):
        return {}
    recorded = any(n.stack_trace for n in gm.graph.nodes)
    if recorded and not any(is_inferred(f.cls) for n in nodes for f in stack_frames(n)):
        return {}
    leaves = {str(n.target) for n in gm.graph.find_nodes(op="call_module")}
    stacks = {n: recorded_frames(n, leaves) for n in nodes}
    modules = dict(gm.named_modules(remove_duplicate=False))
    traces: dict[fx.Node, str] = {}
    for item in call_tree(nodes, stacks):
        if isinstance(item, Call) and not (recorded and _own_statements(item)):
            _align(item, (), modules, leaves, traces, recorded)
    return traces


def _align(call: Call, prefix: tuple[str, ...], modules: dict[str, nn.Module], leaves: set[str], traces: dict[fx.Node, str], recorded: bool = False) -> None:
    """Give each node of `call` its frames: `prefix` (the callers'), then the statement of the call's own
    forward it ran in, where one is found. `recorded`: a graph some of whose calls recorded their statements
    (_recorded_callees), whose nodes keep them, the caller's frames put first."""
    module = modules.get(call.frame.path)
    children = _children(module, call.frame.cls) if module is not None else frozenset()
    children |= {relative(item.frame.path, call.frame.path) for item in call.items if isinstance(item, Call) and within(item.frame.path, call.frame.path)}  # held nothing: not in gm
    callees = _recorded_callees(call) if recorded else [None] * len(call.items)
    children |= {relative(c[1], call.frame.path).split(".")[0] for c in callees if c is not None}  # a layer torch.export kept no holder of (`act`)
    children |= {attribute_name(outside) for outside in outside_paths(call)}  # held by another module, run as an attribute (shared_modules.py)
    forward = _forward(named_after(call.frame.cls) or call.frame.cls, children, _traced(call.frame.path, children, leaves))
    matcher = Matcher(forward.units) if forward is not None else None
    reached = forward.reached if forward is not None else frozenset()
    returned = {n for item in call.items if isinstance(item, Call) for n in item.interface()[1]}  # what nested calls return
    running: object = None  # the recorded call the items before ran in
    outer = prefix
    for item, recorded_callee in zip(call.items, callees, strict=True):
        if recorded_callee is not None:  # its nodes' statements are a recorded call's own: the caller's frames go first
            callee, path = recorded_callee
            if callee != running:
                running = callee
                key = _child_key(path, call.frame.path, reached, item if isinstance(item, fx.Node) else item.first_node())
                unit = matcher.match(key) if matcher is not None and key is not None else None
                outer = _with_frame(prefix, forward, unit)
            for node in [item] if isinstance(item, fx.Node) else item.nodes():
                if outer and node.stack_trace:
                    traces[node] = "\n".join((*outer, node.stack_trace))
            continue
        running = None
        key = _key(item, call.frame.path, reached)
        others = [_UNPACKED] if key == _INDEXED and isinstance(item, fx.Node) and item.args[0] in returned else _spelled_otherwise(item)
        unit = matcher.match(key, *others) if matcher is not None and key is not None else None
        # A statement in a loop runs once per iteration: one line for all would make them one statement
        # (inlined into each other, named as none), so they keep no statement, though matched.
        frames = _with_frame(prefix, forward, unit)
        if isinstance(item, Call):
            _align(item, frames, modules, leaves, traces, recorded)
        elif frames:
            traces[item] = "\n".join(frames)


def _with_frame(prefix: tuple[str, ...], forward: _Forward | None, unit: Unit | None) -> tuple[str, ...]:
    """`prefix`, then the frame of the statement `unit` where one was matched outside a loop."""
    return prefix if unit is None or unit.loop is not None or forward is None else (*prefix, frame(forward.file, unit))


def _spelled_otherwise(item: fx.Node | Call) -> list[Key]:
    """What an ATen operator's node may also have run as: `torch.mul(x, y)` where it is taken for `x * y`."""
    target = item.target if isinstance(item, fx.Node) else None
    if isinstance(target, torch._ops.OpOverload) and target._opname in _ATEN_OPERATORS:
        return [("call", target._opname)]
    return []


def _own_statements(call: Call) -> bool:
    """True for a call of a model's class fxexport did not infer: its nodes record its own statements (a
    container's calls, torch's, record none: inferred or not, the calls inside them are aligned)."""
    return not is_inferred(call.frame.cls) and not is_torch_class(call.frame.cls)


def _recorded_callees(call: Call) -> list[tuple[object, str] | None]:
    """The call's items that ran in a call recording its own statements (torch.export of a GraphModule a
    tracer of its own made records those of the layers and leaf modules it calls, none of the code between):
    a node with a stack trace that ran in a layer below the call, and a nested call of its own statements:
    per item, the call it ran in and that call's path (`self.convs[0](x)` is one statement, however many
    nodes it ran), else None."""
    out: list[tuple[object, str] | None] = []
    for item in call.items:
        frames = stack_frames(item) if isinstance(item, fx.Node) and item.stack_trace else ()
        if isinstance(item, Call):
            out.append((item.frame.key, item.frame.path) if _own_statements(item) else None)
        elif frames and within(frames[-1].path, call.frame.path) and frames[-1].path != call.frame.path:
            out.append((frames[-1].key, frames[-1].path))
        else:
            out.append(None)
    return out


def _children(module: nn.Module, cls: type | str) -> frozenset[str]:
    """The module's children, and its children's children its forward calls by path (`self.rel_pos.mlp`)."""
    direct = set(module._modules)
    return frozenset(direct | {path for path in _spelled_paths(cls) if path.split(".")[0] in direct and _holds(module, path)})


def _holds(module: nn.Module, path: str) -> bool:
    for name in path.split("."):
        child = module._modules.get(name)
        if child is None:
            return False
        module = child
    return True


@functools.lru_cache(maxsize=1024)
def _spelled_paths(cls: type | str) -> frozenset[str]:
    """`a.b` of each `self.a.b(...)` the class's source forward calls (none where it cannot be read)."""
    tree = _forward_tree(cls)
    if tree is None:
        return frozenset()
    called = (_self_path(_held(node.func)[0]) for node in ast.walk(tree) if isinstance(node, ast.Call))
    return frozenset(path for path in called if path is not None and "." in path)


_INDEXED: Key = ("getitem",)
_UNPACKED: Key = ("unpack",)  # an item of what a child traced through returned, unpacked: `a, b = self.halves(x)` of its `x.chunk(2)`


def _traced(path: str, children: frozenset[str], leaves: set[str]) -> frozenset[str]:
    """The descendants whose code the trace ran through, not called as leaves: what they return is a
    Python value, so a tuple they return unpacks with no node (`x, h = self.mixer(x)`)."""
    return frozenset(child for child in children if joined(path, child) not in leaves)


def frame(file: str, unit: Unit, function: str = "forward") -> str:
    """A stack trace's frame of `unit`, as Python writes one."""
    return f'  File "{file}", line {unit.line}, in {function}\n    {unit.code}'


class Matcher:
    """Matches a call's nodes, in order, with the units of its forward (module docstring)."""

    def __init__(self, units: tuple[Unit, ...]) -> None:
        self.units = units
        self.read = [0] * len(units)  # per unit: how many of its keys are matched or passed
        self.position = 0

    def match(self, key: Key, *others: Key) -> Unit | None:
        """The unit the next node (doing `key`, or one of `others`) ran in: ahead within the current loop, then
        the loop's next iteration, then ahead past it."""
        keys = (key, *others)
        loop = self.units[self.position].loop if self.units else None
        found = self._ahead(keys, loop[1] + 1) if loop is not None else None
        if found is None and loop is not None:
            found = self._around(keys, loop)
        if found is None:
            found = self._ahead(keys, len(self.units))
        if found is None and loop is not None:  # the loop ended: a node taken for its next iteration ran after it
            found = self._ahead(keys, len(self.units), loop[1] + 1)
        if found is None:
            return None
        unit, place = found
        self.read[unit] = place + 1
        self.position = unit
        return self.units[unit]

    def _ahead(self, keys: tuple[Key, ...], stop: int, start: int | None = None) -> tuple[int, int] | None:
        """(unit, place) of `key` in the first unit from the current one (or `start`) on that does it next,
        unless that passes a child call still to make (the node would be out of order)."""
        taken = dict(self.units[self.position].arms)
        first = self.position if start is None else start
        for i in range(first, stop):
            unit = self.units[i]
            if any(taken.get(branch, arm) != arm for branch, arm in unit.arms):
                continue  # the other arm of an `if` the current statement is in
            place = _next(unit, self.read[i], keys)
            if place is not None:
                return i, place
            if i != first and not unit.conditional and any(anchor for _, anchor in unit.keys[self.read[i] :]):
                return None
        return None

    def _around(self, keys: tuple[Key, ...], loop: tuple[int, int]) -> tuple[int, int] | None:
        """Inside a loop: its next iteration from its first unit (what it did so far undone); else an
        enclosing loop's."""
        current: tuple[int, int] | None = loop
        while current is not None:
            first, last = current
            for i in range(first, last + 1):
                place = _next(self.units[i], 0, keys)
                if place is not None:
                    self.read[first : last + 1] = [0] * (last + 1 - first)
                    return i, place
                if not self.units[i].conditional and any(anchor for _, anchor in self.units[i].keys):
                    break
            current = self.units[first - 1].loop  # the loop's own header is in the enclosing loop
        return None


def _next(unit: Unit, read: int, keys: tuple[Key, ...]) -> int | None:
    """Where one of `keys` comes next in the unit's keys from `read` on, passing no child call it always makes."""
    for place in range(read, len(unit.keys)):
        found, anchor = unit.keys[place]
        if found in keys:
            return place
        if anchor:
            return None
    return None


def matched_in_order(cls: type, children: frozenset[str], keys: list[tuple[Key, ...]]) -> list[Unit | None] | None:
    """Per node's keys (what it does, `keys_in`), the statement of the source forward of `cls`, read from
    its start, that does it next, matched in order as a call's nodes are (None for no statement); None
    where the forward cannot be read."""
    forward = _forward(cls, children)
    if forward is None:
        return None
    matcher = Matcher(forward.units)
    return [matcher.match(*key) if key else None for key in keys]


def keys_in(node: fx.Node, path: str) -> tuple[Key, ...]:
    """What a node does, as a statement of the forward of the module at `path` would spell it, and what
    else it may have run as (an ATen operator as the method or function of its name, `aten.permute.default`
    as `x.permute(...)`; `aten.mul.Tensor` as `x * y` or `torch.mul(x, y)`); () where it spells nothing."""
    key = _key(node, path)
    return () if key is None else (key, *_spelled_otherwise(node))


def node_key(node: fx.Node) -> Key | None:
    """What a node does, as a plain function's statement would spell it (no module calls)."""
    return None if node.op == "call_module" else _key(node, "")


def _key(item: fx.Node | Call, path: str, reached: frozenset[str] = frozenset()) -> Key | None:
    """What a node (or a nested call) does, as a statement of the caller's forward would spell it."""
    if isinstance(item, Call):
        return _child_key(item.frame.path, path, reached, item.first_node())
    if item.op == "call_module":
        return _child_key(str(item.target), path, reached, item)
    target = item.target
    if item.op == "call_function" and target is operator.getitem:
        return _INDEXED
    if item.op == "call_function" and target is getattr and len(item.args) > 1 and isinstance(item.args[1], str):
        return ("attr", item.args[1])
    if item.op == "call_function" and target in _OPERATORS:
        return ("op", _OPERATORS[target])
    if item.op == "call_function" and isinstance(target, torch._ops.OpOverload):
        return ("op", _ATEN_OPERATORS[target._opname]) if target._opname in _ATEN_OPERATORS else ("call", target._opname)
    name = called_name(item)
    return None if name is None else ("call", name)


def _child_key(target: str, path: str, reached: frozenset[str], node: fx.Node) -> Key | None:
    """The child called, as the caller's forward calls it: the child (`self.stem(x)`, a call the node ran
    inside), a child's child by its path (`self.rel_pos.mlp(x)`, in `reached`), else an item of a child
    (`self.blocks[0](x)`, `for block in self.blocks`), or a call inside a method of it (`self.rel_pos.get_bias()`,
    not the `self.rel_pos(attn)` of another arm)."""
    if path and not target.startswith(path + "."):
        outside = _outside_callee(path, node)
        return None if outside is None or not within(target, outside) else ("module", attribute_name(outside))
    rest = relative(target, path)
    if not rest:
        return None
    parts = rest.split(".")
    found = next((".".join(parts[:n]) for n in range(len(parts), 1, -1) if ".".join(parts[:n]) in reached), None)
    if found is not None:
        return ("module", found)
    child = joined(path, parts[0])
    called = len(parts) == 1 or any(p == child for p, _ in (node.meta.get("nn_module_stack") or {}).values())
    return ("module" if called else "item", parts[0])


def _outside_callee(path: str, node: fx.Node) -> str | None:
    """The module held outside the one at `path` whose call, made by that module itself, the node ran in (a
    module its model hands to it, shared_modules.py), or None."""
    paths = [p for p, _ in (node.meta.get("nn_module_stack") or {}).values()]
    callee = next((paths[i + 1] for i, p in enumerate(paths[:-1]) if p == path), None)
    return callee if callee is not None and not within(callee, path) else None


@functools.lru_cache(maxsize=1024)
def _forward(cls: type | str, children: frozenset[str], traced: frozenset[str] = frozenset()) -> _Forward | None:
    """The units of the class's source forward, None where it cannot be read."""
    forward = getattr(resolve_class(cls), "forward", None)
    forward = inspect.unwrap(forward) if callable(forward) else None
    found = forward_code(cls)
    if not inspect.isfunction(forward) or (forward.__module__ or "").startswith("torch.") or found is None:
        return None
    file, start, lines = found
    if file is None:
        return None
    tree = _forward_tree(cls)
    return None if tree is None else _units_of(tree, file, start, lines, children, static=False, traced=traced)


@functools.lru_cache(maxsize=1024)
def _forward_tree(cls: type | str) -> ast.Module | None:
    """The syntax tree of the class's source forward (read, never changed), None where it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(forward_source(cls))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=256)
def function_units(function: Callable[..., Any]) -> _Forward | None:
    """The units of a plain Python function a forward calls (transformers' `apply_rotary_pos_emb`), keyed
    as a torch.export graph records them: sizes are numbers there (`x.shape[-1] // 2` makes no node)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lines, start = source_blocks.source_lines(function)
            file = inspect.getsourcefile(function)
            tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, ValueError, tokenize.TokenError, RecursionError, MemoryError):
        return None
    return None if file is None else _units_of(tree, file, start, tuple(lines), frozenset(), static=True)


def _units_of(tree: ast.Module, file: str, start: int, lines: tuple[str, ...], children: frozenset[str], static: bool,
              traced: frozenset[str] = frozenset()) -> _Forward | None:  # fmt: skip
    function = tree.body[0] if tree.body else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    units: list[Unit] = []
    found = _Units(units, lines, start, children, static, traced)
    found.block(function.body, conditional=False, loop=None, loops={})
    return _Forward(file, tuple(units), frozenset(found.reached))


@dataclass
class _Units:
    """Collects the units of a forward's body, statement by statement."""

    units: list[Unit]
    lines: tuple[str, ...]
    start: int
    children: frozenset[str]
    static: bool  # sizes are numbers, not traced (torch.export)
    traced: frozenset[str] = frozenset()  # children traced through (_traced)
    reached: set[str] = dataclasses.field(default_factory=set)
    arms: tuple[tuple[int, int], ...] = ()
    branches: int = 0

    def block(self, body: list[ast.stmt], conditional: bool, loop: tuple[int, int] | None, loops: dict[str, str]) -> None:
        for statement in body:
            self.statement(statement, conditional, loop, loops)

    def statement(self, statement: ast.stmt, conditional: bool, loop: tuple[int, int] | None, loops: dict[str, str]) -> None:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        if isinstance(statement, ast.If):
            self.unit(statement, [statement.test], conditional, loop, loops)
            self.branches += 1
            outer, branch = self.arms, self.branches
            for arm, body in enumerate((statement.body, statement.orelse)):
                self.arms = (*outer, (branch, arm))
                self.block(body, True, loop, loops)
            self.arms = outer
        elif isinstance(statement, (ast.For, ast.While)):
            self.unit(statement, [statement.iter if isinstance(statement, ast.For) else statement.test], conditional, loop, loops)
            first = len(self.units)
            inner = {**loops, **_loop_names(statement, self.children)}
            self.block(statement.body, conditional, (first, first), inner)
            last = len(self.units) - 1
            for i in range(first, last + 1):  # now that the loop's extent is known
                if self.units[i].loop == (first, first):
                    self.units[i] = _replace_loop(self.units[i], (first, last))
            self.block(statement.orelse, True, loop, loops)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            self.unit(statement, [item.context_expr for item in statement.items], conditional, loop, loops)
            self.block(statement.body, conditional, loop, loops)
        elif isinstance(statement, ast.Try):
            self.block(statement.body, conditional, loop, loops)
            for handler in statement.handlers:
                self.block(handler.body, True, loop, loops)
            self.block(statement.orelse, True, loop, loops)
            self.block(statement.finalbody, conditional, loop, loops)
        elif isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)):
            self.unit(statement, [statement], conditional, loop, loops)

    def unit(self, statement: ast.stmt, parts: list[Any], conditional: bool, loop: tuple[int, int] | None, loops: dict[str, str]) -> None:
        keys: list[tuple[Key, bool]] = []
        for part in parts:
            _Keys(keys, self.children, loops, self.static, self.traced, self.reached).visit(part)
        line = self.start + statement.lineno - 1
        code = self.lines[statement.lineno - 1].strip()
        self.units.append(Unit(line, code, tuple(keys), conditional, loop, self.arms))


def _replace_loop(unit: Unit, loop: tuple[int, int]) -> Unit:
    return dataclasses.replace(unit, loop=loop)


def _loop_names(statement: ast.For | ast.While, children: frozenset[str]) -> dict[str, str]:
    """Names a loop binds to the children of a container child: `for block in self.blocks` (or
    `enumerate(self.blocks)`, `self.blocks.values()`) makes `block(x)` a call of child `blocks`, and
    `for conv, bn in zip(self.convs, self.bns)` `bn(x)` one of `bns`."""
    if not isinstance(statement, ast.For):
        return {}
    iterated, target = statement.iter, statement.target
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "enumerate" and iterated.args:
        iterated = iterated.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else target
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "zip":
        names = target.elts if isinstance(target, ast.Tuple) and len(target.elts) == len(iterated.args) else []
        return {k: v for name, arg in zip(names, iterated.args) for k, v in _loop_names_of(arg, name, children).items()}
    return _loop_names_of(iterated, target, children)


def _loop_names_of(iterated: ast.AST, target: ast.AST, children: frozenset[str]) -> dict[str, str]:
    """`target` bound to the children of `iterated` (`self.blocks`, `self.blocks.values()`), if it is a child."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "values":
        iterated = iterated.func.value
    child = _self_attribute(iterated)
    return {target.id: child} if child in children and isinstance(target, ast.Name) else {}


def _self_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _self_path(node: ast.AST) -> str | None:
    """`a.b` for `self.a.b`, else None."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join(reversed(names)) if isinstance(node, ast.Name) and node.id == "self" and names else None


def _held(func: ast.expr) -> tuple[ast.expr, list[ast.expr]]:
    """What a call calls with its indices taken off (`self.blocks` of `self.blocks[i][j](x)`), and those indices."""
    indices: list[ast.expr] = []
    while isinstance(func, ast.Subscript):  # `self.blocks[0](x)`, `self.fuse_layers[i][j](x)`: no getitem traced
        indices.append(func.slice)
        func = func.value
    return func, indices


@dataclass
class _Keys(ast.NodeVisitor):
    """What a statement does that a trace records, as keys in the order Python evaluates them: child
    calls (anchors where always made), calls by name, operators, indexing, attribute reads, unpacking."""

    keys: list[tuple[Key, bool]]
    children: frozenset[str]
    loops: dict[str, str]
    static: bool = False  # sizes are numbers: `x.shape[-1] // 2`, `x.size(1)` make no node
    traced: frozenset[str] = frozenset()  # children traced through: a tuple they return unpacks with no node
    reached: set[str] = dataclasses.field(default_factory=set)  # collects the children's children called
    optional: int = 0

    def visit(self, node: ast.AST) -> Any:
        if self.static and _size_only(node):
            return None
        return super().visit(node)

    def add(self, key: Key) -> None:
        self.keys.append((key, key[0] in ("module", "item") and not self.optional))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and not isinstance(node.value, (ast.Tuple, ast.List)):
                item = _UNPACKED if self._returns_python(node.value) else _INDEXED
                for _ in target.elts:
                    self.add(item)  # a traced value unpacked: one getitem per name (none for a Python tuple)
            self.visit(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.add(("op", type(node.op).__name__))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.static and isinstance(func, (ast.Attribute, ast.Name)) and _name(func) == "matmul" and len(node.args) + isinstance(func, ast.Attribute) == 2:
            self.generic_visit(node)  # raised from ATen as `a @ b`
            self.add(("op", "MatMult"))
            return
        child, indices = self._child(func)
        if child is not None and "." in child:
            self.reached.add(child)
        if child is not None:
            for index in reversed(indices):
                self.visit(index)
        key: Key | None = None
        if child is not None:
            key = (("item" if indices else "module"), child) if child in self.children else ("call", child)
        elif isinstance(func, ast.Name):
            key = ("item", self.loops[func.id]) if func.id in self.loops else ("call", func.id)
        elif isinstance(func, ast.Attribute):
            self.visit(func.value)
            key = ("call", func.attr)
        else:
            self.visit(func)
        for argument in node.args:
            self.visit(argument)
        for keyword in node.keywords:
            self.visit(keyword.value)
        if key is not None:
            self.add(key)

    def _child(self, func: ast.expr) -> tuple[str | None, list[ast.expr]]:
        """The child a call calls (`self.norm`, `self.rel_pos.mlp`, `self.blocks[i]`) and the indices into it."""
        held, indices = _held(func)
        path = _self_path(held)  # a child's child only where the module holds it (a method of the child is none)
        return (path if path is not None and ("." not in path or path in self.children) else None), indices

    def _returns_python(self, value: ast.expr) -> bool:
        """True for a call of a child traced through: a tuple it returns is a Python tuple, unpacked with no
        node; one value it returns (`x.chunk(2)`) is unpacked by items of it (`_key`'s "unpack")."""
        if not isinstance(value, ast.Call):
            return False
        child, indices = self._child(value.func)
        return not indices and child in self.traced

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.visit(node.left)
        self.visit(node.right)
        self.add(("op", type(node.op).__name__))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        self.visit(node.operand)
        if isinstance(node.op, _RECORDED_UNARY) and not isinstance(node.operand, ast.Constant):  # `x[-1]`: a number
            self.add(("op", type(node.op).__name__))

    def visit_Compare(self, node: ast.Compare) -> None:
        self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            self.visit(comparator)
            if isinstance(op, _RECORDED_COMPARISONS):
                self.add(("op", type(op).__name__))

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)
        self.visit(node.slice)
        self.add(("getitem",) if isinstance(node.ctx, ast.Load) else ("call", "setitem"))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        if isinstance(node.ctx, ast.Load) and _self_attribute(node) is None:
            self.add(("attr", node.attr))

    def _optionally(self, node: ast.AST) -> None:
        self.optional += 1
        self.generic_visit(node)
        self.optional -= 1

    visit_IfExp = visit_BoolOp = visit_ListComp = visit_GeneratorExp = visit_DictComp = visit_SetComp = visit_Lambda = _optionally


_SIZES = frozenset({"shape", "size", "dim", "ndim", "numel", "len"})


def _name(func: ast.Attribute | ast.Name) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id


def _size_only(node: ast.AST) -> bool:
    """True for an expression of sizes and numbers alone (`x.shape[-1] // 2`, `len(x)`), which a graph with
    static shapes computes in Python (a name holds a tensor unless read as a size)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute) and node.attr in _SIZES:
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and _name(node.func) in _SIZES:
        return all(_size_only(a) for a in node.args)
    if isinstance(node, ast.Subscript):
        return _size_only(node.value) and _size_only(node.slice)
    if isinstance(node, ast.BinOp):
        return _size_only(node.left) and _size_only(node.right) and (_has_size(node.left) or _has_size(node.right))
    if isinstance(node, ast.UnaryOp):
        return _size_only(node.operand) and _has_size(node.operand)
    if isinstance(node, ast.Compare):
        return all(map(_size_only, (node.left, *node.comparators))) and any(map(_has_size, (node.left, *node.comparators)))
    return False


def _has_size(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in _SIZES or isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _SIZES for n in ast.walk(node))
