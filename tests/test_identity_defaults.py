"""A child some callers pass as an nn.Identity where the shared class tests it for None: the caller passes
nothing only where the forward applies it in place under that test and nowhere else (an identity then
does what None does; with an `else`, or more lines under the test, None would run other code)."""

from __future__ import annotations

import pytest

from fxexport.generalize import _applied_if_present

CASES = [
    # (name, forward lines, child, an identity does what None does)
    ("in_place_under_the_test", ("shortcut = x", "x = self.ghost(x)", "if self.shortcut is not None:", "    shortcut = self.shortcut(shortcut)",
                                 "return x + shortcut"), "shortcut", True),
    ("a_comment_between", ("if self.se is not None:", "    # timm/x.py:3 in forward: x = self.se(x)", "    x = self.se(x)", "return x"), "se", True),
    ("else_branch", ("if self.shortcut is not None:", "    shortcut = self.shortcut(shortcut)", "else:", "    shortcut = shortcut * 2", "return shortcut"),
     "shortcut", False),
    ("elif_branch", ("if self.a is not None:", "    x = self.a(x)", "elif self.b is not None:", "    x = self.b(x)", "return x"), "a", False),
    ("more_lines_under_the_test", ("if self.conv_dw is not None:", "    x = self.conv_dw(x)", "    x = x * 2", "return x"), "conv_dw", False),
    ("not_in_place", ("if self.proj is not None:", "    y = self.proj(x)", "return y"), "proj", False),
    ("called_without_the_test", ("return x + self.shortcut(x)",), "shortcut", False),
    ("read_elsewhere_too", ("if self.se is not None:", "    x = self.se(x)", "return x * self.se.scale"), "se", False),
    ("another_child_tested", ("if self.se is not None:", "    x = self.se(x)", "return x"), "s", False),
]  # fmt: skip


@pytest.mark.parametrize(("forward", "child", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_caller_passes_no_identity_only_where_none_runs_the_same_code(forward: tuple[str, ...], child: str, expected: bool) -> None:
    assert _applied_if_present(forward, child) is expected
