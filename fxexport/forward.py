"""The `forward` of one graph as code: statements built from namespace names and checked literals."""

from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass
from typing import Any, Callable

from torch import fx
from torch.fx.node import map_aggregate

from .imports import ImportTable
from .literals import index_code, literal
from .names import Namespace, attribute_access, is_plain_identifier
from .targets import function_reference

BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}  # fmt: skip
UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}


@dataclass(frozen=True)
class Forward:
    params: tuple[str, ...]
    lines: tuple[str, ...]


def register_globals(graph: fx.Graph, imports: ImportTable) -> None:
    """Bind every callable the graph uses before any local name is chosen, so none is shadowed."""
    for node in graph.nodes:
        where = f"node {node.name!r}"
        if node.op == "call_function" and node.target not in BINARY and node.target not in UNARY:
            function_reference(node.target, imports, where)
        map_aggregate((node.args, node.kwargs), lambda v: _register_value(v, imports, where))


def _register_value(value: Any, imports: ImportTable, where: str) -> Any:
    if (isinstance(value, type) or callable(value)) and not isinstance(value, fx.Node):
        function_reference(value, imports, where)
    return value


def placeholder_name(node: fx.Node) -> str:
    return str(node.target).lstrip("*")


class _Emitter:
    def __init__(self, graph: fx.Graph, namespace: Namespace, imports: ImportTable, params: dict[str, str]):
        self.graph = graph
        self.imports = imports
        self.names: dict[fx.Node, str] = {}
        for node in graph.nodes:
            if node.op == "placeholder":
                self.names[node] = params[placeholder_name(node)]
        for node in graph.nodes:
            if node.op not in ("placeholder", "output"):
                self.names[node] = namespace.create(node.name)

    def name_of(self, value: Any) -> str | None:
        return self.names[value] if isinstance(value, fx.Node) else None

    def code(self, value: Any, node: fx.Node) -> str:
        return literal(value, self.imports, self.name_of, f"node {node.name!r}")

    def operand(self, value: Any, node: fx.Node) -> str:
        text = self.code(value, node)
        return f"({text})" if text.startswith("-") or text.startswith("not ") else text

    def call_args(self, node: fx.Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self.code(a, node) for a in args]
        odd = {k: v for k, v in kwargs.items() if not is_plain_identifier(k)}
        parts += [f"{k}={self.code(v, node)}" for k, v in kwargs.items() if k not in odd]
        if odd:
            parts.append(f"**{self.code(odd, node)}")
        return ", ".join(parts)

    def expression(self, node: fx.Node) -> str:
        target, args, kwargs = node.target, node.args, dict(node.kwargs)
        if node.op == "get_attr":
            return attribute_access("self", str(target).split("."))
        if node.op == "call_module":
            return f"{attribute_access('self', str(target).split('.'))}({self.call_args(node, args, kwargs)})"
        if node.op == "call_method":
            receiver = self.operand(args[0], node)
            method = f"{receiver}.{target}" if is_plain_identifier(str(target)) else f"getattr({receiver}, {target!r})"
            return f"{method}({self.call_args(node, args[1:], kwargs)})"
        return self.function_call(node, target, args, kwargs)

    def function_call(self, node: fx.Node, target: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        if not kwargs:
            if target is operator.getitem and len(args) == 2:
                index = index_code(args[1], self.imports, self.name_of, f"node {node.name!r}")
                return f"{self.operand(args[0], node)}[{index}]"
            if target in BINARY and len(args) == 2:
                return f"{self.operand(args[0], node)} {BINARY[target]} {self.operand(args[1], node)}"
            if target in UNARY and len(args) == 1:
                return f"{UNARY[target]}{self.operand(args[0], node)}"
            if target is builtins.getattr and len(args) == 2 and isinstance(args[1], str) and is_plain_identifier(args[1]):
                return f"{self.operand(args[0], node)}.{args[1]}"
        reference = function_reference(target, self.imports, f"node {node.name!r}")
        return f"{reference}({self.call_args(node, args, kwargs)})"

    def statements(self) -> list[str]:
        last_use: dict[fx.Node, fx.Node] = {}
        for node in self.graph.nodes:
            if _skipped(node):
                continue  # its inputs are freed after their last emitted use instead
            for used in node.all_input_nodes:
                last_use[used] = node
        frees: dict[fx.Node, list[str]] = {}
        for used, user in last_use.items():
            frees.setdefault(user, []).append(self.names[used])
        lines: list[str] = []
        for node in self.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                lines.append(f"return {self.code(node.args[0], node)}")
                break
            if _skipped(node):
                continue
            expression = self.expression(node)
            lines.append(f"{self.names[node]} = {expression}" if node.users else expression)
            if frees.get(node):
                lines.append(f"del {', '.join(sorted(set(frees[node]), key=frees[node].index))}")
        return lines


def _skipped(node: fx.Node) -> bool:
    """An unused element of a tuple result: nothing to compute, so no statement is emitted."""
    return not node.users and node.op == "call_function" and node.target is operator.getitem


def emit_forward(graph: fx.Graph, namespace: Namespace, imports: ImportTable, params: dict[str, str]) -> Forward:
    """`params` maps each placeholder's parameter name to the name the code uses for it."""
    emitter = _Emitter(graph, namespace, imports, params)
    signature = []
    for node in graph.nodes:
        if node.op != "placeholder":
            continue
        star = str(node.target)[: len(str(node.target)) - len(placeholder_name(node))]
        default = f"={emitter.code(node.args[0], node)}" if node.args else ""
        signature.append(f"{star}{emitter.names[node]}{default}")
    return Forward(tuple(signature), tuple(emitter.statements()))
