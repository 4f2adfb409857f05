"""The `forward` of one graph as code: statements built from namespace names and checked literals."""

from __future__ import annotations

import builtins
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import fx
from torch.fx.immutable_collections import immutable_dict, immutable_list

from .access import module_access
from .annotations import shape_comment
from .augmented import augmented
from .calls import SOURCE_CLASS, stack_frames
from .deadcode import dead_nodes, reads_metadata
from .defaults import without_defaults
from .errors import FxExportError
from .guards import input_checks, is_guards_module
from .imports import ImportTable
from .inlining import Planner, statement_note
from .literals import function_reference, index_code, literal
from .loops import Accumulation, Chain, loops
from .module_paths import submodule
from .names import Namespace, is_plain_identifier, quote, without_number
from .outputclasses import is_output_class
from .pytree_io import NotPlain, leaf_accesses, pytree_info, rebuilt_class, spec_json, structure_code
from .rolled import Roll, Rolled, first_of, loop_of, loop_variable
from .scopes import Scope, common_prefix, scopes_of
from .source_names import (
    always_run,
    bound_before,
    built_always,
    combines_parts,
    item_names,
    run_name,
    same_statement,
    statement_name,
    statement_target,
    unpacked_apart,
    unpacked_as,
    usable,
)
from .subgraphs import generic_input
from .traced_messages import is_message
from .unpacking import (
    PACKED_ITEMS,
    UNUSED,
    is_shape,
    is_sliced_shape,
    is_spread,
    sliced_shapes,
    spelled_items,
    unpackable,
)
from .views import storage_roots

if TYPE_CHECKING:
    from torch.fx.graph import _PyTreeInfo

BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}  # fmt: skip
_SIMPLE_POWER_OPERAND = re.compile(r"^-?([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9][0-9a-zA-Z_.+-]*)$")
_BODY_INDENT, _LINE_LENGTH = 8, 88  # a method body, black's line length
UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}

# Python's operator precedence, for the parentheses an expression written inside another needs.
PRIMARY, POWER, SIGN, NOT = 100, 90, 80, 5
_LEVEL = {
    operator.pow: POWER, operator.mul: 70, operator.truediv: 70, operator.floordiv: 70, operator.mod: 70,
    operator.matmul: 70, operator.add: 60, operator.sub: 60, operator.lshift: 50, operator.rshift: 50,
    operator.and_: 40, operator.xor: 30, operator.or_: 20, operator.eq: 10, operator.ne: 10,
    operator.lt: 10, operator.le: 10, operator.gt: 10, operator.ge: 10,
}  # fmt: skip


@dataclass(frozen=True)
class Forward:
    """A generated `forward`: its parameter list and its body, one statement per line."""

    params: tuple[str, ...]
    lines: tuple[str, ...]


def register_globals(graph: fx.Graph, imports: ImportTable, rolls: dict[fx.Node, Roll] | None = None) -> None:
    """Bind every callable and output class the graph uses before any local name is chosen, so none is
    shadowed; those of rolled runs' bodies too (`rolls`)."""
    for node in graph.nodes:
        where = f"node {node.name!r}"
        if node.target is loop_of:
            register_globals((rolls or {})[node].body, imports)
            continue
        if node.target is first_of:
            continue  # an `if` statement
        if node.op == "call_function" and node.target not in BINARY and node.target not in UNARY and not _is_syntax(node):
            function_reference(node.target, imports, where)
            imports.wrap(node.target)  # a copied library function stays a call when the export is traced again
        _register_value((node.args, node.kwargs), imports, where)
    info = pytree_info(graph)
    if info is not None and info.out_spec is not None:
        _register_spec(info.out_spec, imports)


def _is_syntax(node: fx.Node) -> bool:
    """A call written as syntax, which imports nothing: `x[i]`, `x.name` (as `_Emitter.function_call` writes them)."""
    if node.kwargs or len(node.args) != 2:
        return False
    return node.target is operator.getitem or (
        node.target is builtins.getattr and isinstance(node.args[1], str) and is_plain_identifier(node.args[1])
    )


_PLAIN = frozenset({int, float, bool, str, type(None), torch.dtype, torch.device})
# The containers of nodes' arguments: no output class, so not asked (500 times in the bench transformer's export).
_CONTAINERS = frozenset({tuple, list, dict, immutable_list, immutable_dict})


def _register_value(value: Any, imports: ImportTable, where: str) -> None:
    if type(value) in _PLAIN or isinstance(value, fx.Node):
        return
    if type(value) not in _CONTAINERS and is_output_class(type(value)):
        function_reference(type(value), imports, where)
    if isinstance(value, (tuple, list)):
        for item in value:
            _register_value(item, imports, where)
    elif isinstance(value, dict):
        for item in value.values():
            _register_value(item, imports, where)
    elif isinstance(value, type) or callable(value):
        function_reference(value, imports, where)


def _register_spec(spec: Any, imports: ImportTable) -> None:
    if (cls := rebuilt_class(spec)) is not None:
        function_reference(cls, imports, "output structure")
    for child in spec.children():
        _register_spec(child, imports)


def placeholder_name(node: fx.Node) -> str:
    """The parameter name of a placeholder, without the `*` of `*args` or `**kwargs`."""
    return str(node.target).lstrip("*")


def parameter_names(graph: fx.Graph) -> list[str]:
    """The names callers pass arguments by: the original arguments of an export graph, else placeholders."""
    info = pytree_info(graph)
    if info is not None:
        return list(info.orig_args)
    return [placeholder_name(node) for node in graph.find_nodes(op="placeholder")]


def is_guards_call(gm: fx.GraphModule, node: fx.Node) -> bool:
    """True for a call of torch.export's input-guards submodule (emitted as input checks, not a call)."""
    if node.op != "call_module":
        return False
    return is_guards_module(submodule(gm, str(node.target)))


class _Emitter:
    def __init__(
        self,
        gm: fx.GraphModule,
        namespace: Namespace,
        imports: ImportTable,
        params: dict[str, str],
        checks: bool,
        annotate: bool,
        shapes: bool = False,
        recorded: bool = False,
        rolled: Rolled | None = None,
        held: dict[fx.Node, str] | None = None,
        carried: str | None = None,
        source_parameters: frozenset[str] = frozenset(),
    ):
        self.annotate = annotate
        self.source_parameters = source_parameters  # of the source forward the split named this one's inputs after
        self.recorded = recorded
        self.namespace = namespace
        self.rolls = rolled.rolls if rolled is not None else {}
        self.held = held or {}  # call_module nodes that call a loop variable
        self.carried = carried  # a loop body's placeholder (by target) for the value it carries: values may take its name
        self.shapes = shapes
        self.gm = gm
        self.graph = gm.graph if rolled is None else rolled.graph
        self.lists = _kept_lists(self.graph, self.rolls)
        self.indexed = _indexed_values(self.rolls)  # tuples loops index (`spx[i]`): no tensor's name
        self.imports = imports
        self.checks = checks
        self.names: dict[fx.Node, str] = {}
        self.bindings: list[str] = []
        self.info = pytree_info(self.graph)
        placeholders = list(self.graph.find_nodes(op="placeholder"))
        if self.info is None:
            for node in placeholders:
                self.names[node] = params[placeholder_name(node)]
        else:
            self.bind_pytree_inputs(placeholders, namespace, params)
        for node in self.graph.find_nodes(op="get_attr"):
            self.names[node] = self.expression(node)  # read where used, as `self.scale`, not into a local
        self.dead = dead_nodes(self.graph)  # nothing reads them and computing them does nothing else
        self.small = _sizes(self.graph)
        self.roots = storage_roots(self.graph)
        last_uses = _last_uses(self.graph, self.dead)
        written = {n for n in self.graph.nodes if n.op not in ("placeholder", "get_attr", "output") and n not in self.dead}
        found = [
            loop for loop in loops(gm, written, self.graph)
            if len({scopes_of(c) for c in loop.calls}) == 1 and not any(c in self.held for c in loop.calls)
        ]  # a loop body's call of its loop variable is no child of a container to loop over again
        self.accumulations = {loop.calls[0]: loop for loop in found if isinstance(loop, Accumulation)}  # by the call that writes it
        self.chains = {loop.calls[-1]: loop for loop in found if isinstance(loop, Chain)}  # by the call whose value it is
        self.looped = frozenset(c for loop in self.accumulations.values() for c in loop.calls)  # no statement, no name
        in_loops = {c for loop in found for c in loop.calls}
        self.list_names: dict[fx.Node, str] = {}  # each accumulation's list (by its first call), named with the rest
        self.loop_variable = ""
        self.chain_variables: dict[fx.Node, str] = {}  # by a chain's last call: its loop's variable (`for stage in self.stages:`)
        self.spelled = spelled_items(self.graph)  # written `*size` or `size[0]` in the call reading them
        self.unpacked = {  # with shapes, each value a statement of its own (its comment), but a parameter's items
            result: items for result, items in unpackable(gm, self.dead, recorded, self.graph).items()
            if result not in in_loops and result not in self.held and (not shapes or PACKED_ITEMS in result.meta)
            and not any(i in self.spelled for i in items)
        }  # a loop variable's call: its children may return other lengths than the one the body was copied from
        self.unpacked_items = frozenset(i for items in self.unpacked.values() for i in items if i is not None)
        self.sliced = sliced_shapes(gm, self.unpacked, recorded)  # `B, N, C = x.shape[:3]`
        self.inlined: dict[fx.Node, fx.Node] = {}
        if not shapes:
            planned = self.plan_inlining(last_uses)
            self.inlined = {k: v for k, v in planned.items() if k not in in_loops and v not in in_loops}
        for end, chain in self.chains.items():
            self.inlined.update({c: end for c in chain.calls[:-1]})  # written by the loop the last call's statement is
        self.inlined.update(self.spelled)
        self.last_use = {used: self.statement_of(user) for used, user in last_uses.items()}
        self.rebinds: set[fx.Node] = set()  # values whose name the next value takes: no `del` needed
        # statements recorded: values may take source names (an input's trace is its caller's statement, not one of here)
        self.traced = any(n.stack_trace for n in self.graph.nodes if n.op != "placeholder")
        self.threaded: dict[fx.Node, list[fx.Node]] = {}  # an unpacked result -> the inputs its items are named after
        self.item_source: dict[fx.Node, str] = {}
        self.order = {node: i for i, node in enumerate(self.graph.nodes)}
        looping = in_loops | self.looped | self.rolls.keys()
        self.read_in_loops = frozenset(n for n in self.graph.nodes if any(u in looping for u in n.users))
        self.dead_parameters = self.rebindable_parameters() if self.traced else {}
        self.carriers: dict[fx.Node, fx.Node] = {}  # a parameter -> the last value that took its name, while naming
        self.name_values(namespace)

    def rebindable_parameters(self) -> dict[str, fx.Node]:
        """Parameters (by name) whose name a value computed after their last use may take (free_at): read,
        and not in a loop (a loop's body is written where its first call is)."""
        if self.info is not None or self.carried is not None:
            return {}
        return {self.names[p]: p for p in self.graph.find_nodes(op="placeholder") if p in self.last_use and p not in self.read_in_loops}

    @property
    def pytree(self) -> _PyTreeInfo:
        """The graph's `_PyTreeInfo`: the pytree methods below run only for graphs that have one."""
        assert self.info is not None
        return self.info

    def class_code(self, cls: type) -> str:
        return function_reference(cls, self.imports, "output structure")

    def key_code(self, key: Any) -> str:
        return literal(key, self.imports, lambda v: None, "pytree key")

    def bind_pytree_inputs(self, placeholders: list[fx.Node], namespace: Namespace, params: dict[str, str]) -> None:
        """Placeholders of an export graph are leaves of (args, kwargs): bind each to its access."""
        names = [params[name] for name in self.pytree.orig_args]
        tops = self.top_level_specs(names, params)
        try:
            accesses = [a for name, spec in tops for a in leaf_accesses(spec, name, self.key_code)]
        except NotPlain:
            accesses = []
        if len(accesses) != len(placeholders):
            self.bind_with_treespec(placeholders, namespace, names)
            return
        for node, access in zip(placeholders, accesses):
            if access in names:
                self.names[node] = access
            else:
                self.names[node] = namespace.create(node.name)
                self.bindings.append(f"{self.names[node]} = {access}")

    def top_level_specs(self, names: list[str], params: dict[str, str]) -> list[tuple[str, Any]]:
        """(parameter, its TreeSpec): export's in_spec is (args, kwargs); make_fx's is just args."""
        if self.has_kwargs_spec():
            args_spec, kwargs_spec = self.pytree.in_spec.children()
            tops = list(zip(names[: args_spec.num_children], args_spec.children()))
            return tops + [(params[key], child) for key, child in zip(kwargs_spec.context, kwargs_spec.children())]
        return list(zip(names, self.pytree.in_spec.children()))

    def has_kwargs_spec(self) -> bool:
        spec = self.pytree.in_spec
        if spec.type is not tuple or spec.num_children != 2:
            return False
        args_spec, kwargs_spec = spec.children()
        return (args_spec.type is tuple and kwargs_spec.type is dict
                and args_spec.num_children + kwargs_spec.num_children == len(self.pytree.orig_args))  # fmt: skip

    def bind_with_treespec(self, placeholders: list[fx.Node], namespace: Namespace, names: list[str]) -> None:
        if not self.has_kwargs_spec():
            raise FxExportError(f"cannot write the input structure {self.pytree.in_spec} as code")
        args_spec, kwargs_spec = self.pytree.in_spec.children()
        positional = ", ".join(names[: args_spec.num_children])
        keywords = ", ".join(f"{self.key_code(k)}: {n}" for k, n in zip(kwargs_spec.context, names[args_spec.num_children :]))
        for node in placeholders:
            self.names[node] = namespace.create(node.name)
        flatten = self.imports.module("torch.fx._pytree")
        loads = self.imports.module("torch.utils._pytree")
        spec = f"{loads}.treespec_loads({quote(spec_json(self.pytree.in_spec))})"
        targets = ", ".join(self.names[n] for n in placeholders) + ("," if len(placeholders) == 1 else "")
        self.bindings.append(f"{targets} = {flatten}.tree_flatten_spec((({positional}{',' if args_spec.num_children == 1 else ''}), {{{keywords}}}), {spec})")

    def pytree_signature(self, params: dict[str, str]) -> list[str]:
        """Original argument names; a keyword argument traced as a constant defaults to that constant."""
        by_name = {name: node for node, name in self.names.items() if node.op == "placeholder"}
        kwargs = set(self.pytree.in_spec.children()[1].context) if self.has_kwargs_spec() else set()
        signature = []
        for original in self.pytree.orig_args:
            name = params[original]
            value = by_name[name].meta.get("val", ...) if name in by_name else ...
            constant = original in kwargs and (value is None or isinstance(value, (bool, int, float, str)))
            signature.append(f"{name}={literal(value, self.imports, lambda _: None, name)}" if constant else name)
        first_kwarg = len(self.pytree.orig_args) - len(kwargs)
        defaults = ["=" in p for p in signature]
        if any(defaults[i] and not all(defaults[i:]) for i in range(len(defaults))):
            signature.insert(first_kwarg, "*")  # a required keyword argument after a defaulted one
        return signature

    def output_code(self, value: Any, node: fx.Node) -> str:
        if self.info is None or self.info.out_spec is None or (isinstance(value, fx.Node) and value in self.lists):  # the loop's list, added to (rolled._collector)
            return self.code(value, node)
        leaves = [self.code(v, node) for v in value]
        try:
            return structure_code(self.info.out_spec, iter(leaves), self.key_code, self.class_code)
        except NotPlain:
            loads = self.imports.module("torch.utils._pytree")
            return f"{loads}.tree_unflatten([{', '.join(leaves)}], {loads}.treespec_loads({quote(spec_json(self.info.out_spec))}))"

    def name_of(self, value: Any) -> str | None:
        if not isinstance(value, fx.Node):
            return None
        return self.expression(value) if value in self.inlined else self.names[value]

    def code(self, value: Any, node: fx.Node) -> str:
        for first, loop in self.accumulations.items():
            if value is loop.container:
                return self.list_names.get(first, _NAME)  # measured before names are chosen, as every name
        return literal(value, self.imports, self.name_of, f"node {node.name!r}")

    def operand(self, value: Any, node: fx.Node, needs: int = PRIMARY) -> str:
        """`value` where an expression binding at least as tightly as `needs` goes (a receiver, an operand)."""
        text = self.code(value, node)
        if isinstance(value, fx.Node) and value in self.inlined:
            return f"({text})" if _precedence(value) < needs else text
        return f"({text})" if text.startswith("-") or text.startswith("not ") else text

    def statement_of(self, node: fx.Node) -> fx.Node:
        """The statement that computes `node`: itself, or the one it is written inside."""
        while node in self.inlined:
            node = self.inlined[node]
        return node

    def plan_inlining(self, last_uses: dict[fx.Node, fx.Node]) -> dict[fx.Node, fx.Node]:
        """Which values are written inside the statement that uses them (inlining.py). Names are not
        chosen yet: each is measured as one of one width, and so is an input named for want of a name (`x`
        or `x_1`, as instances name theirs, make no line longer than another's), and one named after a parameter
        of its source forward: the split names them form by form (one attention's `x_1` is another's
        `key_value_states`), and forms written alike line by line can be joined (optional_inputs.py)."""
        inputs = {p: self.names[p] for p in self.graph.find_nodes(op="placeholder") if p in self.names and (self.names[p] in self.source_parameters or _GENERIC_INPUT.fullmatch(self.names[p]))}
        self.names.update(dict.fromkeys(inputs, "x"))
        # the items of a packed parameter as inputs too: so they were before it was packed (`H, W = feat_size`)
        self.names.update(dict.fromkeys((i for i in self.unpacked_items if cast(fx.Node, i.args[0]).op == "placeholder"), "x"))
        for node in self.graph.nodes:
            self.names.setdefault(node, _NAME)
        planner = Planner(
            self.graph,
            self.annotate,
            statement=lambda n: n.op not in ("placeholder", "get_attr") and n not in self.dead,
            apart=lambda n: is_guards_call(self.gm, n) or n in self.rolls or n.target is first_of,
            last_use=last_uses,
            small=self.small | self.lists,  # a list: its items live on in `outs + [y]`
            roots=self.roots,
            measure=self.statement_length,
            kept=self.unpacked_items,
        )
        self.inlined = planner.inlined  # measuring writes with the plan so far
        planner.plan()
        for node in self.graph.find_nodes(op="call_function", target=first_of):
            planner.inlined.update({
                v: node for v in node.args[1:] if isinstance(v, fx.Node) and v.op != "placeholder" and set(v.users) == {node}
            })  # each branch computes its own; a value read elsewhere too is computed once, before them
        for node in self.graph.nodes:
            if node.op not in ("placeholder", "get_attr"):
                del self.names[node]
        self.names.update(inputs)
        return planner.inlined

    def statement_length(self, node: fx.Node) -> int:
        """The statement's length with every local name and every number of one width, so that modules
        differing only in names or numbers are written alike (and can share a class)."""
        if node.op == "output":
            text = "return " + self.output_code(node.args[0], node)
        else:
            text = f"{_NAME} = {self.expression(node)}" if node.users else self.expression(node)
        return len(_NUMBER.sub(_NUMBER_WIDTH, text))

    def call_args(self, node: fx.Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self.spread_code(a) if self.spread_first(a) else self.code(a, node) for a in args if not self.spread_later(a)]
        odd = {k: v for k, v in kwargs.items() if not is_plain_identifier(k)}
        parts += [f"{k}={self.code(v, node)}" for k, v in kwargs.items() if k not in odd]
        if odd:
            parts.append(f"**{self.code(odd, node)}")
        return ", ".join(parts)

    def spread_first(self, value: Any) -> bool:
        """True for the first item of a spread parameter, written `*size`."""
        return isinstance(value, fx.Node) and value in self.spelled and is_spread(value) and bool(value.args[1] == 0)

    def spread_later(self, value: Any) -> bool:
        """True for an item of a spread parameter but its first: written by the first's `*size`."""
        return isinstance(value, fx.Node) and value in self.spelled and is_spread(value) and bool(value.args[1] != 0)

    def spread_code(self, item: fx.Node) -> str:
        return f"*{self.names[cast(fx.Node, item.args[0])]}"

    def expression(self, node: fx.Node) -> str:
        target, args, kwargs = node.target, node.args, dict(node.kwargs)
        if node.op == "get_attr":
            return module_access("self", self.gm, str(target).split("."))
        if node.op == "call_module":
            callee = self.held.get(node) or module_access("self", self.gm, str(target).split("."))
            return f"{callee}({self.call_args(node, args, kwargs)})"
        if node in self.rolls:
            return "..."  # written by roll_lines
        if node.target is first_of:
            return self.code(node.args[2], node)  # measured as its longer branch; written by first_lines
        if node.op == "call_method":
            receiver = self.operand(args[0], node)
            method = f"{receiver}.{target}" if is_plain_identifier(str(target)) else f"getattr({receiver}, {quote(str(target))})"
            return f"{method}({self.call_args(node, args[1:], kwargs)})"
        return self.function_call(node, cast("Callable[..., Any]", target), args, kwargs)  # call_function

    def function_call(self, node: fx.Node, target: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        if not kwargs:
            if target is tuple and node in self.lists:
                return f"{self.builtin('tuple')}({self.code(args[0], node)})"  # a loop's list returned as a tuple
            if target is operator.getitem and len(args) == 2:
                index = index_code(args[1], self.imports, self.name_of, f"node {node.name!r}")
                return f"{self.operand(args[0], node)}[{index}]"
            if target in BINARY and len(args) == 2:
                level = _LEVEL[target]
                left = self.operand(args[0], node, PRIMARY if level == POWER else level + (level == _LEVEL[operator.eq]))
                right = self.operand(args[1], node, PRIMARY if level == POWER else level + 1)
                if target is operator.pow and _SIMPLE_POWER_OPERAND.match(left) and _SIMPLE_POWER_OPERAND.match(right):
                    return f"{left}**{right}"  # black hugs ** between simple operands
                return f"{left} {BINARY[target]} {right}"
            if target in UNARY and len(args) == 1:
                return f"{UNARY[target]}{self.operand(args[0], node, POWER + 1)}"  # black writes -(x**2)
            if target is builtins.getattr and len(args) == 2 and isinstance(args[1], str) and is_plain_identifier(args[1]):
                return f"{self.operand(args[0], node)}.{args[1]}"
        reference = function_reference(target, self.imports, f"node {node.name!r}")
        return f"{reference}({self.call_args(node, args, without_defaults(target, kwargs))})"

    def name_values(self, namespace: Namespace) -> None:
        """One name per value, or per chain of values each taking its input's name; a chain of
        two or more is `out` (`out = self.conv(x)`, `out = self.bn(out)`, ...) unless it starts at an input,
        and a value the model's source names takes that name where it can (source_names.py)."""
        statements = [
            n for n in self.graph.nodes
            if n.op not in ("placeholder", "output", "get_attr") and n not in self.inlined and n not in self.looped and n not in self.unpacked
            and n not in self.dead
        ]  # fmt: skip
        kept: set[fx.Node] = set()  # values that take an input's name although their source names them otherwise
        self.item_source = {  # the names the source binds the items of each unpacked result to
            item: name
            for result, found in self.unpacked.items()
            for item, name in zip(found, result.meta.get(PACKED_ITEMS) or (item_names(result, len(found)) if self.traced else None) or ())
            if item is not None
        }  # fmt: skip
        for rounds in range(NAMING_ROUNDS + 1):
            reused, declined = self.reuses(statements, kept if rounds < NAMING_ROUNDS else None)
            head: dict[fx.Node, fx.Node] = {}
            for node, previous in reused.items():
                head[node] = node if previous is None else head.get(previous, previous)
            runs: dict[fx.Node, list[fx.Node]] = {}
            for node, first in head.items():
                runs.setdefault(first, []).append(node)
            source = self.source_names(runs)
            # declined an input's name for one it cannot have, or kept others from its own without getting it
            missed = {node for node in declined if node not in source}
            missed |= {n for first, run in runs.items() if first not in source and statement_name(first) is not None for n in run}
            if not missed - kept:
                break
            kept |= missed
        for name in source.values():
            namespace.reserve(name)
        items = {item: f"{_item_base(result)}{i + 1}" for result, found in self.unpacked.items() for i, item in enumerate(found) if item is not None}
        ending = self.carrying_run(head)
        for node, first in head.items():
            if node is first:
                fallback = "out" if len(runs[node]) >= CHAIN else self.passed_as(node) or items.get(node, _own_name(node))
                fallback = "outs" if node in self.rolls and self.rolls[node].collected else fallback
                self.names[node] = source.get(node) or (self.names[cast(fx.Node, ending[1])] if node is ending[0] else namespace.create(fallback))
            else:
                self.names[node] = self.names[first]
        self.unused = UNUSED  # `_` for an item nothing reads, unless a value of the method has that name
        if any(None in items for items in self.unpacked.values()):
            self.unused = UNUSED if namespace.is_free(UNUSED) and UNUSED not in self.names.values() else namespace.create("unused")
            namespace.reserve(self.unused)
        self.list_names = {first: namespace.create("features") for first in self.accumulations}
        if self.accumulations:
            self.loop_variable = namespace.create("layer")
        singular: dict[str, str] = {}  # loops over containers of one name share their variable
        for end, chain in self.chains.items():
            container = str(chain.calls[0].target).rpartition(".")[0].rpartition(".")[2]
            base = loop_variable(container)
            self.chain_variables[end] = singular.get(base) or singular.setdefault(base, namespace.create(base))

    def carrying_run(self, head: dict[fx.Node, fx.Node]) -> tuple[fx.Node | None, fx.Node | None]:
        """In a loop body that reads no carried value (each period starts anew), the first value of the run
        of values the body's value is computed from, and the carried placeholder: that run takes its name
        (`out = spx[i]`, ..., `outs.append(out)`)."""
        carried = next((p for p in self.graph.find_nodes(op="placeholder") if p.target == self.carried), None)
        if carried is None or carried.users:
            return None, None
        value = next(iter(self.graph.find_nodes(op="output"))).args[0]
        while isinstance(value, fx.Node) and value in self.inlined:
            computed = [n for n in value.all_input_nodes if n.op != "placeholder" and n.op != "get_attr"]
            value = computed[0] if len(computed) == 1 else None
        return (head.get(value), carried) if isinstance(value, fx.Node) else (None, None)

    def passed_as(self, node: fx.Node) -> str | None:
        """The name of the parameter that every statement reading `node` passes it to a generated child as
        (`cos, sin = self.rotary_emb(position_ids)` for the items `layer(x, cos, sin, mask)` passes on), where
        the child's input has a name of its own (not `x`, `x_1`, ...); None where a statement reads it otherwise."""
        found: set[str] = set()  # the names of the inputs it is passed as
        generic = False
        for user in node.users:
            child = self.called_graph(user) if user not in self.held else None
            if child is None:
                return None
            inputs = list(child.find_nodes(op="placeholder"))
            for i, arg in enumerate(user.args):
                if arg is node and i < len(inputs):
                    found.add(str(inputs[i].target))
                    generic |= generic_input(inputs[i])
                elif type(arg) is tuple and any(a is node for a in arg) and i < len(inputs) and PACKED_ITEMS in inputs[i].meta:
                    found.add(inputs[i].meta[PACKED_ITEMS][next(j for j, a in enumerate(arg) if a is node)])  # `(cos, sin)`
            if any(arg is node for arg in user.args[len(inputs) :]):
                return None
        name = found.pop() if len(found) == 1 and not generic else None
        return name if name is not None and is_plain_identifier(name) and name.islower() else None

    def called_graph(self, node: fx.Node) -> fx.Graph | None:
        """The graph of the generated child `node` calls, with positional arguments only; None for any other node."""
        if node.op != "call_module" or node.kwargs:
            return None
        try:
            child = self.gm.get_submodule(str(node.target))
        except AttributeError:
            return None
        return child.graph if isinstance(child, fx.GraphModule) else None

    def reuses(self, statements: list[fx.Node], kept: set[fx.Node] | None) -> tuple[dict[fx.Node, fx.Node | None], set[fx.Node]]:
        """Each statement's input whose name it takes (reusable_input), and the statements that declined
        one for the name their source gives them; `kept` take one regardless (None: all do)."""
        self.rebinds, self.threaded = set(), {}
        reused: dict[fx.Node, fx.Node | None] = {}
        declined: set[fx.Node] = set()
        claimed: set[str] = set()  # source names values that start a name of their own ask for, so far
        kept = kept if self.traced else None
        self.carriers = {}
        bearer = {p: p for p in self.dead_parameters.values()}  # the last value bearing a parameter's name -> the parameter
        for node in statements:
            own = statement_target(node) if kept is not None and node not in kept else None
            reused[node], declines = self.reusable_input(node, own, claimed, kept)
            if reused[node] in bearer:
                parameter = bearer.pop(cast(fx.Node, reused[node]))
                bearer[node] = parameter
                self.carriers[parameter] = node
            if declines:
                declined.add(node)
            if reused[node] is None and own is not None:
                claimed.add(own)
        return reused, declined

    def source_names(self, runs: dict[fx.Node, list[fx.Node]]) -> dict[fx.Node, str]:
        """The name the model's source gave each run of values sharing a name (source_names.py), where it can
        take it, by its first value: free in the method, and given again only once the values given it before
        are read no more (`cls_tokens = x[:, :n]` after `x, cls_tokens = self.pool(x, cls_tokens)`, as the source
        rebinds it; an unpacked item's by `item_source`)."""
        out: dict[fx.Node, str] = {}
        given: dict[str, list[fx.Node]] = {}  # a name -> the values given it so far
        for first, run in runs.items():
            if first in self.unpacked_items:
                packed = cast(fx.Node, first.args[0]).op == "placeholder"  # a parameter's items: its later items too
                name = run_name(run, self.item_source[first], self.item_source if packed else None) if first in self.item_source else None
            elif _is_item(first) and _names_its_tuple(first, self.inlined):
                name = None  # `spx = x.chunk(4)` names the tuple, not its item `spx[3]`
            else:
                name = run_name(run)
            if name is not None and self.unread_by(given.get(name, []), first) and usable(name, self.free_at(name, first)):
                out[first] = name
                given.setdefault(name, []).extend(run)
        return out

    def unread_by(self, values: list[fx.Node], node: fx.Node) -> bool:
        """True when no statement after the one binding `node`'s name reads any of `values` (none in a loop)."""
        bound = self.order[self.binding(node)]
        return all(
            value not in self.read_in_loops and self.order[self.binding(value)] < bound and self.order[self.last_use.get(value, value)] <= bound
            for value in values
        )

    def frees(self) -> dict[fx.Node, list[str]]:
        """`del` where the last value of a memory dies, well before return, of the names still bound to it
        (a view's `del` alone frees nothing while the value it views lives on)."""
        order = {node: i for i, node in enumerate(n for n in self.graph.nodes if n.op != "placeholder" and n not in self.dead and n not in self.inlined)}
        left: dict[fx.Node, int] = {}  # statements from each node to the end; an unpacked item is no statement of its own
        count = 0
        for node in reversed(order):
            count += node not in self.unpacked_items
            left[node] = count
        binders: dict[str, list[int]] = {}  # a name -> where statements bind it (an item: where its result is unpacked)
        for node in order:
            if node in self.names and node.op != "output":
                binders.setdefault(self.names[node], []).append(order.get(self.binding(node), order[node]))
        members: dict[fx.Node, list[fx.Node]] = {}
        for node, root in self.roots.items():
            members.setdefault(root, []).append(node)
        frees: dict[fx.Node, list[str]] = {}
        for root, values in members.items():
            deaths = [self.last_use[v] for v in values if v in self.last_use]
            if not deaths or _held_by_caller(root) or root in self.small or root in self.looped or any(d.op == "output" for d in deaths):
                continue
            death = max(deaths, key=order.__getitem__)
            if left[death] <= DEL_DISTANCE:
                continue
            bound = [v for v in values if v in self.last_use and v not in self.inlined and v not in self.rebinds and v not in self.unpacked]
            # a name a later value took by then (free_at) is that value's now
            bound = [v for v in bound if not any(order.get(v, -1) < i <= order[death] for i in binders.get(self.names[v], ()))]
            if not bound:
                continue
            frees.setdefault(death, []).extend(self.names[v] for v in bound)
        return frees

    def reusable_input(self, node: fx.Node, own: str | None, claimed: set[str], kept: set[fx.Node] | None) -> tuple[fx.Node | None, bool]:
        """A computed input whose last use this is: the new value takes its name (`x = self.conv(x)`),
        which frees the old value as a `del` would. Parameters read into locals keep their names.

        Where the source names values (source_names.py; `kept` None: it does not), a value its statement
        names `own` takes no input's name but one of that name or of its own statement, and declines the
        others (True with it) where its own is free (`claimed`: asked for by earlier values). A value
        with no such name of its own takes no name its source gave another value (`scores` stays bound
        where `scores - max` is computed), generic ones and those in `kept` aside. A child applied to
        the input alone takes its name (`x = self.downsample(x)`, the in-place form optional children
        are found by)."""
        if node in self.unpacked_items:
            return self.threaded_input(node), False
        if not node.users or node in self.dead or node.op == "get_attr" or _is_item(node) or all(map(_is_item, node.users)) or node in self.indexed:
            return None, False  # a tuple and its items keep names of their own
        chain = self.chains.get(node)
        if node in self.rolls:  # a rolled run's value may take only its start's name, unless its body reads that too
            start = node.args[0]
            kept_apart = not isinstance(start, fx.Node) or start in node.args[1:] or self.rolls[node].collected  # a list takes none
            inputs = [] if kept_apart else [cast(fx.Node, start)]  # a number's loop takes none
        else:
            inputs = self.statement_inputs(node) if chain is None else [chain.start]  # a loop's value may take only its start's name
        renamable = [used for used in inputs if self.renamable(used, node, chain is not None)]
        declines = False
        if renamable and kept is not None and (not _applies_child(node) or self.named_apart(node, own, renamable)):
            if own is not None and own not in claimed and usable(own, self.free_at(own, node)):
                renamable = [
                    used for used in renamable
                    if self.source_name_of(used) == own or same_statement(used, node) or unpacked_as(used, own, node) or self.nameless_loop(used)
                ]  # fmt: skip
                declines = not renamable
            elif own is None and (any(used not in kept and unpacked_apart(used, node) for used in renamable) or combines_parts(node)):
                renamable = []  # unpacked into other names than an input was (`attn_output, attn_weights = f(query_states)`)
            else:
                renamable = [used for used in renamable if used.op == "placeholder" or not self.named_otherwise(used, node, own, kept)]
        if renamable:
            self.rebinds.add(renamable[0])
            return renamable[0], False
        return None, declines

    def nameless_loop(self, value: fx.Node) -> bool:
        """A loop's value carried from a start (`out = 0` or `out = scale_out`, ..., `out = out + out_1`): no
        statement names it (the source's in the loop bind it once per step), so the statement it flows into
        may (`out = out + i`)."""
        return value in self.rolls and value.args[0] is not None and not self.rolls[value].collected

    def named_apart(self, node: fx.Node, own: str | None, inputs: list[fx.Node]) -> bool:
        """True when a statement that always runs binds the result of a child its class always builds to a
        name of its own, one no statement before it binds (`v = self.v(x)`): it takes that name rather than
        its input's, which a child only some instances have or call takes (`x = self.downsample(x)`, the
        in-place form optional children are found by), as does one rebinding a kept value (`shortcut = x`,
        then `shortcut = self.downsample(x)`)."""
        if own is None or own in {self.source_name_of(used) for used in inputs} or not always_run(node):
            return False
        if bound_before(node, own):
            return False  # a value kept under that name first (`shortcut = x` ... `shortcut = self.downsample(x)`)
        return str(node.target).split(".")[0] in built_always(self.owner_class(node))

    def owner_class(self, node: fx.Node) -> type | str:
        """The source class whose child `node` calls: the one this method was cut out of (split.py), else
        (the root's method) the frame its call records before the child's."""
        if SOURCE_CLASS in self.gm.meta:
            return cast("type | str", self.gm.meta[SOURCE_CLASS])
        frames = stack_frames(node)
        paths = {f.path for f in frames}
        owner = next((f for f in frames if (f"{f.path}.{node.target}" if f.path else node.target) in paths), None)
        return "" if owner is None else owner.cls

    def free_at(self, name: str, node: fx.Node) -> bool:
        """True when a value `node`'s statement computes may be named `name`: a name free in the method, or
        that of a parameter no later statement reads, nor any value that took its name (`x =
        F.scaled_dot_product_attention(q, k, v)` after `qkv = self.qkv(x)`, `x, idx = torch.sort(x)`, as
        the source rebinds it)."""
        if self.namespace.is_free(name):
            return True
        parameter = self.dead_parameters.get(name)
        if parameter is None:
            return False
        carrier = self.carriers.get(parameter, parameter)  # the last value bearing the name so far
        end = self.last_use.get(carrier, carrier)
        bound = self.order[self.binding(node)]
        return carrier not in self.read_in_loops and self.order[carrier] < bound and self.order[end] <= bound

    def binding(self, node: fx.Node) -> fx.Node:
        """The statement that binds the value's name: an unpacked item's is its result's (`x, idx = ...`); a
        packed parameter's, the last of its items (which follow the inputs one after another: `x, cls_tokens =
        x` binds them all at the first)."""
        if node not in self.unpacked_items:
            return node
        result = cast(fx.Node, node.args[0])
        if result.op == "placeholder":
            return max((i for i in self.unpacked[result] if i is not None), key=self.order.__getitem__)
        return result

    def named_otherwise(self, used: fx.Node, node: fx.Node, own: str | None, kept: set[fx.Node]) -> bool:
        """True when the source named `used` (by no generic name, not `own`) in another statement than `node`'s."""
        name = self.source_name_of(used)
        return used not in kept and name not in (None, own, *GENERIC_INPUTS) and not same_statement(used, node)

    def source_name_of(self, value: fx.Node) -> str | None:
        """An input's name, or the name the source statement of a computed value (an unpacked item) assigns it."""
        if value.op == "placeholder":
            return self.names.get(value)
        return self.item_source.get(value) or statement_name(value)

    def renamable(self, used: fx.Node, statement: fx.Node, chained: bool = False) -> bool:
        """True when the value `statement` computes may take the name of `used`, which dies there; `chained`:
        `statement` is a loop of blocks over a container, whose value is what its input was, one step on
        (`hidden_states = layer(hidden_states)`, as the source writes it), so any input's name does."""
        if self.last_use.get(used) is not statement or used.op in ("get_attr", "output") or used in self.rebinds or used in self.looped:
            return False
        if (used in self.lists) != (statement in self.lists):
            return False  # a list's name is no tensor's (`torch.cat(outs, 1)`), nor a tensor's a list's (`[x] + outs`)
        if chained:
            return True
        # an input named for what it holds (`tokens`), or bound from a pytree input, keeps its name; where no
        # statement was recorded, `x_1`, ... are as generic as `x` (`x, x_1 = self.pool(x, x_1)`, pit's stages)
        generic = self.names.get(used) in GENERIC_INPUTS or (not self.traced and generic_input(used))
        return used.op != "placeholder" or used.target == self.carried or (self.names.get(used) == placeholder_name(used) and generic)

    def threaded_input(self, item: fx.Node) -> fx.Node | None:
        """The input whose name an item of an unpacked result takes: where the statement's inputs all die
        there and are as many as the items read, each item takes the input in its place (`x, tokens =
        self.pool(x, tokens)`, as a block that threads its state is called)."""
        result = cast(fx.Node, item.args[0])
        items = [i for i in self.unpacked[result] if i is not None]
        if result not in self.threaded:  # decided once, for all its items
            inputs = self.statement_inputs(result)
            threaded = len(inputs) == len(items) and all(self.renamable(used, result) for used in inputs)
            self.threaded[result] = (self.threaded_by_name(result, items, inputs) or inputs) if threaded else []
            self.rebinds.update(self.threaded[result])
        return self.threaded[result][items.index(item)] if self.threaded[result] else None

    def threaded_by_name(self, result: fx.Node, items: list[fx.Node], inputs: list[fx.Node]) -> list[fx.Node] | None:
        """The input each item takes the name of where the called module's source names its outputs after
        its parameters in another order (timm's pit stage takes `x, cls_tokens` and returns `cls_tokens,
        x`: `cls_tokens, x = self.stage(x, cls_tokens)`), else None (in their places)."""
        child = self.called_graph(result)
        if child is None:
            return None
        parameters = [str(p.target) for p in child.find_nodes(op="placeholder")]
        returned = next(iter(child.find_nodes(op="output"))).args[0]
        if not isinstance(returned, (tuple, list)) or len(returned) != len(self.unpacked[result]) or len(result.args) != len(parameters):
            return None
        out: list[fx.Node] = []
        for item in items:
            value = returned[self.unpacked[result].index(item)]
            name = statement_name(value) if isinstance(value, fx.Node) else None
            argument = result.args[parameters.index(name)] if name is not None and parameters.count(name) == 1 else None
            if not isinstance(argument, fx.Node):
                return None
            out.append(argument)
        return out if len(set(out)) == len(out) and set(out) == set(inputs) else None

    def statement_inputs(self, node: fx.Node) -> list[fx.Node]:
        """The named values a statement reads, those of the values written inside it included, in order."""
        found: list[fx.Node] = []
        for used in node.all_input_nodes:
            for value in self.statement_inputs(used) if used in self.inlined else [used]:
                if value not in found:
                    found.append(value)
        return found

    def accumulation_lines(self, first: fx.Node) -> list[str]:
        """`features = [x]`, then each child called with the list so far, its output appended."""
        loop, features = self.accumulations[first], self.list_names[first]
        return [
            f"{features} = [{self.code(loop.start, first)}]",
            f"for {self.loop_variable} in {loop.children}:",
            f"    {features}.append({self.loop_variable}({features}))",
        ]

    def chain_lines(self, chain: Chain) -> list[str]:
        """`x = start` (unless x is its name), then each child called on the value so far."""
        name, first, position = self.names[chain.calls[-1]], chain.calls[0], chain.position
        start = self.code(chain.start, first)
        before = self.call_args(first, first.args[:position], {})
        after = self.call_args(first, first.args[position + 1 :], dict(first.kwargs))
        variable = self.chain_variables[chain.calls[-1]]
        call = f"{variable}({', '.join(part for part in (before, name, after) if part)})"
        return [*([] if start == name else [f"{name} = {start}"]), f"for {variable} in {chain.children}:", f"    {name} = {call}"]

    def roll_lines(self, node: fx.Node) -> list[str]:
        """`x = start` (unless x is its name, or the first period starts otherwise), then the loop over the
        container, its body written by an emitter of its own (its names from this method's namespace) and
        ending in `x = ...` (and `outs.append(x)` where the loop keeps every period's value)."""
        roll, name = self.rolls[node], self.names[node]
        start = None if node.args[0] is None else self.code(node.args[0], node)
        carried = self.carried_name(node)
        variables = [self.namespace.create(roll.variable), *(self.namespace.create(v) for _, _, v in roll.zipped)]
        index = self.namespace.create("i") if roll.indexed else None
        params = {"carried": carried, **{f"invariant_{i}": self.code(v, node) for i, v in enumerate(node.args[1:])}}
        params.update({"index": index} if index is not None else {})
        named = {n.name: n for n in roll.body.nodes}
        held = {named[name]: variables[k] for name, k in roll.loop_calls}
        # Not `recorded`: the body's recorded values are one period's; the other periods' lengths may differ.
        body = _Emitter(
            self.gm, self.namespace, self.imports, params, self.checks, self.annotate,
            rolled=Rolled(roll.body, {}), held=held, carried="carried",
        )  # fmt: skip
        lines = body.statements()
        result = lines.pop().removeprefix("return ")
        # `out += v`, as torch.export records it (collect.py writes its other such statements so), and from a number,
        # where only that form adds the number to v first
        augment = self.recorded or isinstance(node.args[0], (int, float))
        rebinding = augmented((f"{carried} = {result}",)) if augment else (f"{carried} = {result}",)
        lines += [] if result == carried else list(rebinding)
        lines += [f"{name}.append({carried})"] if roll.collected else []
        head = [f"{name} = []"] if roll.collected else []
        head += [] if start is None or start == carried else [f"{carried} = {start}"]
        return [*head, f"for {_loop_targets(variables, roll, index, self.builtin)}:", *(f"    {line}" for line in lines)]

    def builtin(self, name: str) -> str:
        """A builtin the generated code calls (`zip`, `enumerate`, `tuple`), as `builtins.zip` where a
        value of the method (an input the source named so) has its name."""
        return name if name not in self.names.values() else f"{self.imports.module('builtins')}.{name}"

    def first_lines(self, node: fx.Node) -> list[str]:
        """A loop body's value its first period computes otherwise: `if i == 0:` ... `else:` ..."""
        index, first, later, *flag = node.args
        name, index_code = self.names[node], self.code(index, node)
        alone = f"self.{flag[0]}" if flag else None  # the module's flag: every period `first` (alone_flags.py)
        if self.code(first, node) == name:  # the value its name holds already: only the later periods compute
            test = f"{index_code} > 0" + (f" and not {alone}" if alone else "")
            return [f"if {test}:", f"    {name} = {self.code(later, node)}"]
        test = f"{index_code} == 0" + (f" or {alone}" if alone else "")
        return [f"if {test}:", f"    {name} = {self.code(first, node)}", "else:", f"    {name} = {self.code(later, node)}"]

    def carried_name(self, node: fx.Node) -> str:
        """The name of the value a loop carries: the loop's own, but for a loop whose value is the list of
        every period's, its start's where nothing reads that after the loop starts (`x = block(x)`), else `out`."""
        if not self.rolls[node].collected:
            return self.names[node]
        start = node.args[0]
        if isinstance(start, fx.Node) and start not in self.inlined and start not in node.args[1:] and self.last_use.get(start) is node:
            inputs = {self.names[p] for p in self.graph.find_nodes(op="placeholder")}
            if self.names[start] in inputs or self.names[start] == self.source_name_of(start):
                return self.names[start]  # an input's name, or the source's, as the source's loop rebinds it (not `mul`)
        return self.namespace.create("out")

    def statements(self) -> list[str]:
        frees = self.frees()
        lines = _BlockedLines(list(self.bindings))
        last_note: str | None = None
        guards = next((node for node in self.graph.nodes if is_guards_call(self.gm, node)), None)
        # the inputs are checked before any statement reads them (PT2E's convert places its quantize calls first)
        unchecked = self.checks and guards is not None
        for node in self.graph.nodes:
            if node.op == "placeholder":
                continue
            lines.enter(scopes_of(node))
            if unchecked and node.op != "get_attr" and (node.op == "output" or node is guards or node not in self.dead):
                placeholders = [(n, self.names[n]) for n in self.graph.find_nodes(op="placeholder")]
                lines += input_checks(placeholders, lambda v: literal(v, self.imports, lambda _: None, "input check"))
                unchecked = False
            if node.op == "output":
                lines.append(f"return {self.output_code(node.args[0], node)}")
                break
            if node is guards:
                continue
            if node in self.dead or node.op == "get_attr" or node in self.inlined or (node in self.looped and node not in self.accumulations):
                continue
            note = statement_note(node, self.inlined) if self.annotate else None
            if note is not None and note != last_note:
                lines.append(note)
                last_note = note
            if node in self.unpacked_items:
                result = cast(fx.Node, node.args[0])
                if result.op == "placeholder" and node is next(i for i in self.unpacked[result] if i is not None):
                    lines.append(f"{self.unpacked_targets(result)} = {self.names[result]}")  # a parameter the source unpacks
                continue  # bound where its result is unpacked
            if node in self.unpacked:
                cut = f"[:{len(self.unpacked[node])}]" if node in self.sliced else ""
                lines.append(f"{self.unpacked_targets(node)} = {self.expression(node)}{cut}")
            elif node in self.accumulations:
                lines += self.accumulation_lines(node)
            elif node in self.chains:
                lines += self.chain_lines(self.chains[node])
            elif node in self.rolls:
                lines += self.roll_lines(node)
            elif node.target is first_of:
                lines += self.first_lines(node)
            else:
                lines += self.statement_lines(node)
            if frees.get(node):
                lines.append(f"del {', '.join(sorted(set(frees[node]), key=frees[node].index))}")
        return lines.lines

    def unpacked_targets(self, result: fx.Node) -> str:
        """`a, b`: the names an unpacked result's items are bound to, `_` for one nothing reads."""
        return ", ".join(self.unused if item is None else self.names[item] for item in self.unpacked[result])

    def statement_lines(self, node: fx.Node) -> list[str]:
        """The statement computing `node` (named, unless nothing reads it), with its shape comment if asked."""
        expression = self.expression(node)
        statement = f"{self.names[node]} = {expression}" if node.users else expression
        shape = shape_comment(node) if self.shapes else None
        if shape is None:
            return [statement]
        if len(statement) + len(shape) + 4 + _BODY_INDENT <= _LINE_LENGTH:
            return [f"{statement}  # {shape}"]
        return [f"# {self.names[node]}: {shape}", statement]  # a trailing comment would make black split the line


class _BlockedLines:
    """A method's lines, each statement inside the `with` blocks its node ran in (scopes.py): a block
    opens before the first statement in it and ends after the last."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.open: tuple[Scope, ...] = ()
        self.wanted: tuple[Scope, ...] = ()

    def enter(self, scopes: tuple[Scope, ...]) -> None:
        """The next statement's blocks (opened once it writes a line: a dead node writes none)."""
        self.wanted = scopes

    def append(self, line: str) -> None:
        if self.wanted != self.open:
            same = len(common_prefix(self.open, self.wanted))
            for depth, scope in enumerate(self.wanted[same:], start=same):
                self.lines.append(f"{'    ' * depth}with {scope.code}:")
            self.open = self.wanted
        self.lines.append(f"{'    ' * len(self.open)}{line}")

    def __iadd__(self, lines: list[str]) -> _BlockedLines:
        for line in lines:
            self.append(line)
        return self


_NAME, _NUMBER_WIDTH = "name_1", "12345"
_GENERIC_INPUT = re.compile(r"x(_\d+)?")  # an input named for want of a name (subgraphs.generic_input)
_NUMBER = re.compile(r"(?<![\w.])\d[\w.]*(?:e[+-]?\d+)?")
# A value that dies this many statements or more before its method returns gets a `del`; in a
# short method locals die at return instead.
DEL_DISTANCE = 6
CHAIN = 2
# Rounds of naming in which a value may decline its input's name for its source's (source_names.py);
# one more where none does.
NAMING_ROUNDS = 3
# Inputs whose name says nothing of what they hold: a value computed from one may take its name.
GENERIC_INPUTS = frozenset({"x", "input", "inputs", "hidden_states", "h", "out"})


def _applies_child(node: fx.Node) -> bool:
    """A child module called on one value: `x = self.downsample(x)`."""
    return node.op == "call_module" and len(node.args) == 1 and not node.kwargs


def _precedence(node: fx.Node) -> int:
    """How tightly the expression `_Emitter.function_call` writes for `node` binds."""
    if node.op == "call_function" and not node.kwargs:
        if node.target in BINARY and len(node.args) == 2:
            return _LEVEL[node.target]
        if node.target in UNARY and len(node.args) == 1:
            return NOT if node.target is operator.not_ else SIGN
    return PRIMARY


def _names_its_tuple(item: fx.Node, inlined: dict[fx.Node, fx.Node]) -> bool:
    """An item whose statement binds one name to the value it is an item of, a statement of its own
    (`spx = x.chunk(4)`: `spx[3]` is no `spx`)."""
    whole = item.args[0]
    return isinstance(whole, fx.Node) and whole not in inlined and same_statement(item, whole) and item_names(whole, 1) is not None


def _indexed_values(rolls: dict[fx.Node, Roll]) -> frozenset[fx.Node]:
    """Values made before a rolled loop whose body only indexes them: tuples (`spx[i]`)."""
    found: set[fx.Node] = set()
    for node, roll in rolls.items():
        invariants = [p for p in roll.body.find_nodes(op="placeholder") if str(p.target).startswith("invariant_")]
        for placeholder, value in zip(invariants, node.args[1:]):  # in the order the loop node reads them
            if placeholder.users and all(_is_item(u) and u.args[0] is placeholder for u in placeholder.users):
                found.add(cast(fx.Node, value))
    return frozenset(found)


def _kept_lists(graph: fx.Graph, rolls: dict[fx.Node, Roll]) -> frozenset[fx.Node]:
    """The lists of rolled loops that keep every period's value, and those made by adding to them."""
    found = {node for node, roll in rolls.items() if roll.collected}
    if not found:
        return frozenset()  # most forwards: no pass over their nodes
    for node in graph.nodes:
        if node.op == "call_function" and node.target in (operator.add, tuple) and any(isinstance(a, fx.Node) and a in found for a in node.args):
            found.add(node)  # `[x] + outs`, `tuple(outs)`
    return frozenset(found)


def _loop_targets(variables: list[str], roll: Roll, index: str | None, builtin: Callable[[str], str]) -> str:
    """What a rolled loop iterates: `conv in self.convs`, `conv, bn in zip(self.convs, self.bns)`, with
    `enumerate` where the body reads the index (`i, (conv, bn) in enumerate(zip(...))`)."""
    containers = [roll.children, *(children for children, _, _ in roll.zipped)]
    items = ", ".join(variables)
    iterated = containers[0] if len(containers) == 1 else f"{builtin('zip')}({', '.join(containers)})"
    if index is None:
        return f"{items} in {iterated}"
    return f"{index}, {items if len(variables) == 1 else f'({items})'} in {builtin('enumerate')}({iterated})"


def _own_name(node: fx.Node) -> str:
    """The name a value takes where nothing better is known: its node's, but an attribute read's
    (`getattr_1 = x.shape` in a symbolic_trace graph) is the attribute's (`shape = x.shape`), a child's
    call not named after it (a torch.export graph's `linear_4 = self.head(x)`) the child's (`head`), and
    a name the graph numbered after its op (`getitem_9`) is the op's alone, which the method's
    namespace numbers among its own values (`getitem`, `getitem_1`): the graph's count runs over the
    whole graph, so the same method in another graph (a re-trace of the export) would be numbered otherwise."""
    if node.op == "call_function" and node.target is builtins.getattr and without_number(node.name) == "getattr" and len(node.args) == 2:
        attribute = node.args[1]
        if isinstance(attribute, str) and is_plain_identifier(attribute) and attribute.islower() and not attribute.startswith("_"):
            return attribute
    if is_message(node):
        return "message"
    if node.op == "call_module" and not node.name.startswith(str(node.target).replace(".", "_")):
        attribute = str(node.target).rpartition(".")[2]
        if is_plain_identifier(attribute) and attribute.islower() and not attribute.startswith("_"):
            return attribute  # the split's call of a child keeps the name of the op it was cut at (`linear_4`)
    op = _op_name(node)
    if op is not None:
        base = without_number(op)  # fx numbers calls of a function named `stage_2` stage_3, stage_4, ...
        if node.name == op or re.fullmatch(rf"{re.escape(base)}_[0-9]+", node.name):
            return base
    return node.name


def _op_name(node: fx.Node) -> str | None:
    """The name fx gives a call of this function or method before numbering it (`getitem`, `add`), or None."""
    if node.op not in ("call_function", "call_method"):
        return None
    try:
        return str(node.graph._target_to_str(node.target))  # fx's own rule (private)
    except (AttributeError, AssertionError, TypeError):
        return None


def _item_base(result: fx.Node) -> str:
    """What the items of an unpacked result are named after: `chunk1, chunk2`, `pool1, pool2`; `out1, out2`
    for the call of a numbered child (`self[0](x)`, node `_0`); `shape1, shape2` for a shape's, sliced or not."""
    if is_sliced_shape(result):
        result = cast(fx.Node, result.args[0])
    if is_shape(result):
        return "size" if result.op == "call_method" else "shape"
    base = without_number(result.name).lstrip("_")
    return base if base and not base[0].isdigit() else "out"


def _last_uses(graph: fx.Graph, dead: frozenset[fx.Node]) -> dict[fx.Node, fx.Node]:
    last_use: dict[fx.Node, fx.Node] = {}
    for node in graph.nodes:
        if node in dead:
            continue  # its inputs are freed after their last emitted use instead
        for used in node.all_input_nodes:
            last_use[used] = node
    return last_use


# Methods that give sizes, counts or flags, not tensors: freeing their result pays nothing.
_SIZE_METHODS = frozenset({"dim", "size", "numel", "nelement", "stride", "element_size", "is_contiguous", "is_floating_point"})


def _sizes(graph: fx.Graph) -> set[fx.Node]:
    """Values that are sizes, flags and messages (`x.shape`, `x.dim() == 3`, `h // 16`): no `del` for them."""
    small: set[fx.Node] = set()
    for node in graph.nodes:
        target = node.target
        if node.op == "call_method" and target in _SIZE_METHODS:
            small.add(node)
        elif reads_metadata(node):
            small.add(node)
        elif node.op == "call_function" and target is torch._assert:
            small.add(node)
        elif is_message(node):
            small.add(node)
        elif node.op == "call_function" and (target in BINARY or target in UNARY or target is operator.getitem):
            if node.all_input_nodes and all(n in small for n in node.all_input_nodes):
                small.add(node)
    return small


def _held_by_caller(node: fx.Node) -> bool:
    """True for a parameter, a tensor of the module, or an item of a parameter (`cos, sin =
    position_embeddings`): a `del` of it frees nothing."""
    if node.op == "call_function" and node.target is operator.getitem and isinstance(node.args[0], fx.Node):
        return node.args[0].op == "placeholder"
    return node.op in ("placeholder", "get_attr")


def _is_item(node: fx.Node) -> bool:
    """An item of a tuple or list, or an index into a value not known to be a tensor (a symbolic_trace
    graph records no values); a slice of a tensor torch.export recorded (`x[:, :h]`) is none."""
    if node.op != "call_function" or node.target is not operator.getitem:
        return False
    indexed = node.args[0]
    return not (isinstance(indexed, fx.Node) and isinstance(indexed.meta.get("val"), torch.Tensor))


def emit_forward(
    gm: fx.GraphModule,
    namespace: Namespace,
    imports: ImportTable,
    params: dict[str, str],
    checks: bool = True,
    annotate: bool = True,
    shapes: bool = False,
    recorded: bool = False,
    rolled: Rolled | None = None,
    source_parameters: frozenset[str] = frozenset(),
) -> Forward:
    """`params` maps each caller-visible parameter name to the name the code uses for it. `recorded`: the
    values the graph recorded (`meta["val"]`) hold for every input it takes (torch.export checks them).
    `source_parameters`: those of the source forward the split named the inputs of a class's forward after."""
    emitter = _Emitter(gm, namespace, imports, params, checks, annotate, shapes, recorded, rolled, source_parameters=source_parameters)
    if emitter.info is not None:
        return Forward(tuple(emitter.pytree_signature(params)), tuple(emitter.statements()))
    signature = []
    for node in emitter.graph.find_nodes(op="placeholder"):
        star = str(node.target)[: len(str(node.target)) - len(placeholder_name(node))]
        default = f"={emitter.code(node.args[0], node)}" if node.args else ""
        signature.append(f"{star}{emitter.names[node]}{default}")
    return Forward(tuple(signature), tuple(emitter.statements()))
