"""Runs of children a container builds alike are one comprehension, also where generalize made them alike."""

from __future__ import annotations

import pytest

from fxexport.runs import with_runs

CASES = [
    # (an `__init__` line, as with_runs writes it)
    ("self.a = nn.Sequential(B(1), B(1), B(1))", "self.a = nn.Sequential(*[B(1) for _ in range(3)])"),
    # a comprehension and its equal neighbours: one run
    ("self.a = nn.Sequential(C(), *[B(1) for _ in range(3)], B(1))", "self.a = nn.Sequential(C(), *[B(1) for _ in range(4)])"),
    ("self.a = nn.ModuleList([B(1), B(1), B(1)])", "self.a = nn.ModuleList([B(1) for _ in range(3)])"),
    ("self.a = nn.ModuleList([C(), B(1), B(1), B(1)])", "self.a = nn.ModuleList([C(), *[B(1) for _ in range(3)]])"),
    # nested containers, and one inside another call; offsets past text of more than one byte per character
    ('self.a = nn.Sequential(nn.Sequential(B("é"), B("é"), B("é")), nn.Sequential(B(2), B(2), B(2)))',
     'self.a = nn.Sequential(nn.Sequential(*[B("é") for _ in range(3)]), nn.Sequential(*[B(2) for _ in range(3)]))'),
    ("self.a = X(blocks=nn.Sequential(B(1), B(1), B(1)), y=2)", "self.a = X(blocks=nn.Sequential(*[B(1) for _ in range(3)]), y=2)"),
    # left as they are: too short a run, other calls, a comprehension reading its variable, no list of children
    ("self.a = nn.Sequential(B(1), B(1))", "self.a = nn.Sequential(B(1), B(1))"),
    ("self.a = nn.Sequential(B(1), B(2), B(1))", "self.a = nn.Sequential(B(1), B(2), B(1))"),
    ("self.a = nn.ModuleList([B(_) for _ in range(3)])", "self.a = nn.ModuleList([B(_) for _ in range(3)])"),
    ("self.a = nn.Sequential(B(_), B(_), B(_))", "self.a = nn.Sequential(B(_), B(_), B(_))"),
    ("self.a = nn.Sequential(OrderedDict([('x', B(1))]))", "self.a = nn.Sequential(OrderedDict([('x', B(1))]))"),
    ("self.a = nn.ModuleList(blocks)", "self.a = nn.ModuleList(blocks)"),
    ("self.a = nn.Sequential(*blocks)", "self.a = nn.Sequential(*blocks)"),
    ("if use_se:", "if use_se:"),
    # a line under an `if` of `__init__`, read without its indent
    ("    self.a = nn.Sequential(B(1), B(1), B(1))", "    self.a = nn.Sequential(*[B(1) for _ in range(3)])"),
    # a generated subclass of nn.Sequential, whose callers pass its children; another call is left alone
    ("self.a = Stage(B(1), B(1), B(1))", "self.a = Stage(*[B(1) for _ in range(3)])"),
    ("self.a = Other(B(1), B(1), B(1))", "self.a = Other(B(1), B(1), B(1))"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_runs_of_equal_children_are_one_comprehension(line: str, expected: str) -> None:
    assert with_runs(line, frozenset({"Stage"})) == expected
    assert with_runs(expected, frozenset({"Stage"})) == expected
