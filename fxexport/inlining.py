"""Which values of a forward are written inside the statement that uses them.

A value used once, by the very next statement, goes inside it where the two come from one line of
the source, or, where no lines are recorded (or shown), where neither is a layer call or the value
is returned; and only while the line stays short. The calls still run in the graph's order: a
value goes inside its user only if everything run in between goes there too, in the order Python
evaluates it. And never so that a value lives longer: a computed value a statement reads last
stays that statement's own, unless the statement only views it or its user returns it, or is the
method's last and returned as the source returns it (`return a + b + c`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import fx

from .annotations import annotation, quoted
from .names import is_plain_identifier
from .scopes import scopes_of
from .source_names import returned_together

# The longest statement values are written inside: black's line in a method body, less room for
# literals that become `self.` attributes when classes are shared.
INLINE_WIDTH = 76


@dataclass
class Planner:
    """Plans one graph; `inlined` (value -> the statement it is written inside) fills as it goes, so
    `measure` (a statement's width as written with the plan so far) can read it."""

    graph: fx.Graph
    annotate: bool
    statement: Callable[[fx.Node], bool]  # emitted as a statement of its own
    apart: Callable[[fx.Node], bool]  # a statement nothing goes inside and that goes inside nothing (input checks, a loop)
    last_use: dict[fx.Node, fx.Node]
    small: set[fx.Node]  # sizes and flags: freeing them pays nothing
    roots: dict[fx.Node, fx.Node]  # each value -> the value whose memory it uses (views.storage_roots)
    measure: Callable[[fx.Node], int]
    kept: frozenset[fx.Node] = frozenset()  # values that stay statements of their own (items of an unpacked result)
    inlined: dict[fx.Node, fx.Node] = field(default_factory=dict)
    notes: dict[fx.Node, str | None] = field(default_factory=dict)

    def plan(self) -> dict[fx.Node, fx.Node]:
        """Walk the statements in order; each takes in the ones just before it that it may hold."""
        done: list[fx.Node] = []  # statements so far, each with what it holds inside
        for user in filter(self.statement, self.graph.nodes):
            operands: list[fx.Node] | None = None  # found once the statement before is used by this one alone
            before = 0
            while done and self.users(done[-1]) == [user]:
                last = done[-1]
                if not self.inlinable(last, user):
                    break
                if operands is None:
                    operands = operand_order(user)
                    before = len(operands)
                if operands.count(last) != 1 or operands.index(last) >= before:
                    break
                self.inlined[last] = user
                if self.measure(user) > INLINE_WIDTH:
                    del self.inlined[last]
                    break
                before = operands.index(last)
                done.pop()
            done.append(user)
        return self.inlined

    def users(self, node: fx.Node) -> list[fx.Node]:
        """The nodes that read `node` and are written: a dead reader (deadcode.py) is none."""
        return [u for u in node.users if u.op == "output" or self.statement(u)]

    def inlinable(self, node: fx.Node, user: fx.Node) -> bool:
        """`node`'s statement may go inside `user`'s (order and width aside)."""
        if node.op not in ("call_function", "call_method", "call_module") or node in self.kept:
            return False
        if self.holds_memory(node, user) or any(map(self.apart, (node, user))):
            return False
        if scopes_of(node) != scopes_of(user):
            return False  # computed in another `with` block (or in none)
        notes = [self.note(n) for n in (*written_in(node, self.inlined), user) if n.op != "output"]
        if None not in notes:
            return len(set(notes)) == 1  # one line of the source
        return user.op == "output" or "call_module" not in (node.op, user.op)  # layer calls are statements of their own

    def note(self, node: fx.Node) -> str | None:
        """The source line `node` comes from, if recorded and shown."""
        if not self.annotate:
            return None
        if node not in self.notes:
            self.notes[node] = annotation(node)
        return self.notes[node]

    def returns(self, node: fx.Node, user: fx.Node) -> bool:
        """True where the return statement is `user`'s value, the method's last, computed with `node` in one
        statement the source returns (`return a + b + c`, or `h = f(a + b)` then `return h`): nothing runs after
        it, so a value read last inside it lives no longer than in a statement of its own before it. (A
        statement the source returns in some instances of a class and not in others would be written two ways,
        and the class split; one the source does not record, written as two, would be read back as two.)"""
        if not user.users or any(u.op != "output" for u in user.users) or not returned_together(node, user):
            return False
        after = user.next
        while after.op != "output":
            if self.statement(after):
                return False
            after = after.next
        return True

    def holds_memory(self, node: fx.Node, user: fx.Node) -> bool:
        """A computed value `node` reads last (not a size, not viewed by it) would live on while `user`
        computes, where a statement of its own frees it first. Returning or viewing allocates nothing."""
        roots = self.roots
        if user.op == "output" or roots[user] is roots[node] or self.returns(node, user):
            return False
        return any(
            used.op not in ("placeholder", "get_attr") and used not in self.inlined and used not in self.small
            and self.last_use.get(used) is node and roots[node] is not roots[used]
            for used in node.all_input_nodes
        )  # fmt: skip


def written_in(node: fx.Node, inlined: dict[fx.Node, fx.Node]) -> list[fx.Node]:
    """`node` and the values written inside its statement, in the graph's order."""
    inside = [n for n in node.all_input_nodes if inlined.get(n) is node]
    return [found for n in inside for found in written_in(n, inlined)] + [node]


def statement_note(node: fx.Node, inlined: dict[fx.Node, fx.Node]) -> str | None:
    """The source line a statement comes from: that of the first of its values that has one (none for
    recovered statements: annotations.recovering)."""
    return next((note for n in written_in(node, inlined) if (note := annotation(n)) is not None and quoted(n)), None)


def operand_order(node: fx.Node) -> list[fx.Node]:
    """The values `node` reads, in the order Python evaluates them in its statement, a value read
    twice twice; a slice bound counts as read twice (it is not written inside), and so is everything
    in keywords that are no identifiers (written last, out of order)."""
    found: list[fx.Node] = []

    def visit(value: Any, times: int) -> None:
        if isinstance(value, fx.Node):
            found.extend([value] * times)
        elif isinstance(value, (tuple, list)):
            for item in value:
                visit(item, times)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, times)
        elif isinstance(value, slice):
            for item in (value.start, value.stop, value.step):
                visit(item, 2)

    visit(node.args, 1)
    for key, value in node.kwargs.items():
        visit(value, 1 if is_plain_identifier(key) else 2)
    return found
