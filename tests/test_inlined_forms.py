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
]
NOT_SIMPLE = [("if self.a is not None:", "    x = self.a(x)", "return x"), ("x += 1", "return x"), ("self.a(x)", "return x")]


@pytest.mark.parametrize(("a", "b"), ALIKE)
def test_forwards_apart_only_in_what_is_written_inside_statements_are_one_code(a, b) -> None:
    assert canonical(a) is not None
    assert canonical(a) == canonical(b)


@pytest.mark.parametrize(("a", "b"), APART)
def test_forwards_computing_otherwise_or_in_another_order_are_not(a, b) -> None:
    assert canonical(a) != canonical(b)


@pytest.mark.parametrize("lines", NOT_SIMPLE)
def test_a_forward_of_other_statements_than_assignments_and_a_return_has_no_canonical_form(lines) -> None:
    assert canonical(lines) is None
