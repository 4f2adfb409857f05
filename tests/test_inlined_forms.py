"""Forwards that differ only in which values are written inside the statements reading them (inlined_forms.py)."""

from __future__ import annotations

import pytest

from fxexport.inlined_forms import canonical

ALIKE = [
    # a chain written as one statement, and as one statement a value
    (("return self.project(F.relu(self.dw(x)))",), ("# m.py:4 in forward: x = ...", "x = self.dw(x)", "x = F.relu(x)", "return self.project(x)")),
    # values read first in a statement that calls other things after them; a `del` says nothing of what is computed
    (("return self.dw(x) + self.a(z)",), ("x = self.dw(x)", "y = self.a(z)", "del z", "return x + y")),
    (("y = x.reshape(2, -1)[:, 1:]", "return y"), ("y = x.reshape(2, -1)", "y = y[:, 1:]", "return y")),
    # locals of other names; a block (a loop, an `if`) as it is, between statements written inside others
    (("h = self.a(x)", "return h * h"), ("y = self.a(x)", "return y * y")),
    (("outs = []", "for i, conv in enumerate(self.convs):", "    if i == 0:", "        out = x[i]", "    else:", "        out = out + x[i]",
      "    outs.append(conv(out))", "last = x[-1]", "outs = outs + [last]", "return torch.cat(outs, 1)"),
     ("outs = []", "for i, conv in enumerate(self.convs):", "    if i == 0:", "        out_1 = x[i]", "    else:", "        out_1 = out_1 + x[i]",
      "    outs.append(conv(out_1))", "return torch.cat(outs + [x[-1]], 1)")),
    (("if self.a is not None:", "    x = self.a(x)", "return x"), ("if self.a is not None:", "    x = self.a(x)", "y = x", "return y")),
]
APART = [
    # another value
    (("return self.project(F.relu(self.dw(x)))",), ("y = self.dw(x)", "x = F.relu(x)", "return self.project(y)")),
    # read after something the statement calls: the calls would run in another order
    (("x = self.a(x)", "return self.b(y) + x"), ("return self.b(y) + self.a(x)",)),
    # read again later
    (("y = self.a(x)", "z = self.b(y)", "return z + y"), ("z = self.b(self.a(x))", "return z + self.a(x)")),
    # other literals
    (("return x.reshape(2, -1)",), ("return x.reshape(4, -1)",)),
    # other inputs read; an input bound again (`x = ...`) against a local
    (("return self.a(x)",), ("return self.a(y)",)),
    (("y = self.a(x)", "return y + x"), ("x = self.a(x)", "return x + x")),
    # other loop bodies; a value the loop reads written into a statement after it (never out of a block)
    (("for conv in self.convs:", "    x = conv(x)", "return x"), ("for conv in self.convs:", "    x = conv(x) + 1", "return x")),
    (("y = self.a(x)", "for conv in self.convs:", "    x = conv(x) + y", "return x"), ("for conv in self.convs:", "    x = conv(x) + self.a(x)", "return x")),
]
NOT_SIMPLE = [("x += 1", "return x"), ("self.a(x)", "return x"), ("    x = self.a(x)", "return x")]


@pytest.mark.parametrize(("a", "b"), ALIKE)
def test_forwards_apart_only_in_what_is_written_inside_statements_are_one_code(a, b) -> None:
    assert canonical(a, renamed=True) is not None
    assert canonical(a, renamed=True) == canonical(b, renamed=True)


@pytest.mark.parametrize(("a", "b"), [pair for pair in ALIKE if canonical(pair[0]) != canonical(pair[1])])
def test_locals_of_other_names_are_one_code_only_where_renamed(a, b) -> None:
    assert canonical(a, renamed=True) == canonical(b, renamed=True)
    assert any(line.split(" = ")[0].strip() not in " ".join(a) for line in b if " = " in line)  # the names differ


@pytest.mark.parametrize(("a", "b"), APART)
def test_forwards_computing_otherwise_or_in_another_order_are_not(a, b) -> None:
    assert canonical(a) != canonical(b)
    assert canonical(a, renamed=True) != canonical(b, renamed=True)


@pytest.mark.parametrize("lines", NOT_SIMPLE)
def test_a_forward_of_other_statements_than_assignments_and_a_return_has_no_canonical_form(lines) -> None:
    assert canonical(lines) is None
