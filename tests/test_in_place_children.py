"""Instances of one source class that differ in which children they build and apply in place take one
forward applying each under `if self.<child> is not None:`, and build None where they have none."""

from __future__ import annotations

import pytest

from fxexport.in_place_children import _gap_in, in_place_children
from fxexport.ir import ClassIR

CORE_INIT = ("self.expand = nn.Conv2d(4, 8, 1)", "self.project = nn.Conv2d(8, 4, 1)")
SE = "self.se = SqueezeGate()"
DW = "self.conv_dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)"
SHORTCUT = "self.shortcut = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4))"


def _block(name: str, init: tuple[str, ...], forward: tuple[str, ...]) -> ClassIR:
    return ClassIR(name, False, init, (), ("x",), forward, "# m.py:1 Block")


PLAIN = _block("Block", CORE_INIT, ("out = self.expand(x)", "out = self.project(out)", "return out + x"))
WITH_SE = _block("Block_1", (CORE_INIT[0], SE, CORE_INIT[1]), ("out = self.expand(x)", "out = self.se(out)", "out = self.project(out)", "return out + x"))
WITH_DW_SHORTCUT = _block(
    "Block_2", (CORE_INIT[0], DW, CORE_INIT[1], SHORTCUT),
    ("out = self.expand(x)", "out = self.conv_dw(out)", "out = self.project(out)", "x = self.shortcut(x)", "return out + x"),
)  # fmt: skip
ALL_FORWARD = (  # se and conv_dw, never built together, in the order first seen
    "out = self.expand(x)",
    "if self.se is not None:",
    "    out = self.se(out)",
    "if self.conv_dw is not None:",
    "    out = self.conv_dw(out)",
    "out = self.project(out)",
    "if self.shortcut is not None:",
    "    x = self.shortcut(x)",
    "return out + x",
)


def _returning(name: str, init: tuple[str, ...], last: str) -> ClassIR:
    return _block(name, init, ("out = self.expand(x)", "out = self.project(out)", last))


CASES = [
    # (name, classes, the forward every class takes, or None where each keeps its own)
    ("three_kinds", [PLAIN, WITH_SE, WITH_DW_SHORTCUT], ALL_FORWARD),
    ("one_kind_is_optional_children_own", [PLAIN, WITH_SE], None),
    # the order one class gives (conv_dw before se) holds though classes seen before it never ordered them
    ("order_from_a_later_class", [WITH_SE, _block("Block_3", (CORE_INIT[0], DW, CORE_INIT[1]), ("out = self.expand(x)", "out = self.conv_dw(out)", "out = self.project(out)", "return out + x")),
                                  _block("Block_4", (CORE_INIT[0], DW, SE, CORE_INIT[1]), ("out = self.expand(x)", "out = self.conv_dw(out)", "out = self.se(out)", "out = self.project(out)", "return out + x"))],
     ("out = self.expand(x)", "if self.conv_dw is not None:", "    out = self.conv_dw(out)", "if self.se is not None:", "    out = self.se(out)",
      "out = self.project(out)", "return out + x")),
    # a child called inside the statement (torch.export's `x += self.shortcut(x)`): called first, on its own line
    ("called_in_the_return", [_returning("Block", (*CORE_INIT, SE), "return out.add_(self.se(x))"),
                              _returning("Block_1", (*CORE_INIT, SHORTCUT), "return out.add_(self.shortcut(x))"),
                              _returning("Block_2", CORE_INIT, "return out.add_(x)")],
     ("out = self.expand(x)", "out = self.project(out)", "if self.se is not None:", "    x = self.se(x)",
      "if self.shortcut is not None:", "    x = self.shortcut(x)", "return out.add_(x)")),
    # a call that runs before it in the statement would then run after it (random draws in both): left
    ("a_call_ends_before_it", [_returning("Block", (*CORE_INIT, SE), "return torch.rand_like(out) + self.se(x)"),
                               _returning("Block_1", (*CORE_INIT, SHORTCUT), "return torch.rand_like(out) + self.shortcut(x)"),
                               _returning("Block_2", CORE_INIT, "return torch.rand_like(out) + x")], None),
    # a class holding no such child writes the values inside the statements reading them (Res2Net's blocks but
    # the first of a stage): the same code, written as the others
    ("written_inside_statements", [_block("Block", CORE_INIT, ("y = torch.relu(self.expand(x))", "return y * 2 + x")),
                                   _block("Block_1", (CORE_INIT[0], SE, CORE_INIT[1]), ("out = self.expand(x)", "out = self.se(out)", "y = torch.relu(out)", "return y * 2 + x")),
                                   _block("Block_2", (CORE_INIT[0], DW, CORE_INIT[1], SHORTCUT),
                                          ("out = self.expand(x)", "out = self.conv_dw(out)", "y = torch.relu(out)", "x = self.shortcut(x)", "return y * 2 + x"))],
     ("out = self.expand(x)", "if self.se is not None:", "    out = self.se(out)", "if self.conv_dw is not None:", "    out = self.conv_dw(out)",
      "y = torch.relu(out)", "if self.shortcut is not None:", "    x = self.shortcut(x)", "return y * 2 + x")),
    # a child every class calls inside the last statement stays there (called apart only to be compared)
    ("every_class_calls_it_in_the_return", [
        _block("Block", CORE_INIT, ("out = self.expand(x)", "return self.project(out) + x")),
        _block("Block_1", (CORE_INIT[0], SE, CORE_INIT[1]), ("out = self.expand(x)", "out = self.se(out)", "return self.project(out) + x")),
        _block("Block_2", (CORE_INIT[0], DW, CORE_INIT[1], SHORTCUT), ("out = self.expand(x)", "out = self.conv_dw(out)", "x = self.shortcut(x)",
                                                                       "return self.project(out) + x"))],
     ("out = self.expand(x)", "if self.se is not None:", "    out = self.se(out)", "if self.conv_dw is not None:", "    out = self.conv_dw(out)",
      "    x = self.shortcut(x)", "return self.project(out) + x")),  # conv_dw and shortcut, built together, under one `if`
    # an activation every class applies in place and again elsewhere stays where it is, the others join
    ("shared_activation", [_block(c.name, (*c.init_lines, "self.act = nn.ReLU()"), (c.forward_lines[0], "out = self.act(out)", *c.forward_lines[1:-1], "return self.act(out + x)"))
                           for c in (PLAIN, WITH_SE, WITH_DW_SHORTCUT)],
     (ALL_FORWARD[0], "out = self.act(out)", *ALL_FORWARD[1:-1], "return self.act(out + x)")),
    # the child is read again after it is applied: not applied in place
    ("child_read_elsewhere", [PLAIN, WITH_SE, _block("Block_2", (CORE_INIT[0], DW, CORE_INIT[1]),
                              ("out = self.expand(x)", "out = self.conv_dw(out)", "out = self.project(out)", "return out + self.conv_dw.weight"))],
     None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "classes", "forward"), CASES, ids=[c[0] for c in CASES])
def test_instances_differing_in_children_applied_in_place_share_one_forward(name, classes, forward) -> None:
    out = in_place_children(classes, {})
    if forward is None:
        assert [c.forward_lines for c in out] == [c.forward_lines for c in classes]
        return
    assert all(c.forward_lines == forward for c in out)


def test_each_builds_every_child_or_none_in_the_order_of_the_forward() -> None:
    out = in_place_children([PLAIN, WITH_SE, WITH_DW_SHORTCUT], {})
    assert out[0].init_lines == (CORE_INIT[0], "self.se = None", "self.conv_dw = None", CORE_INIT[1], "self.shortcut = None")
    assert out[1].init_lines == (CORE_INIT[0], SE, "self.conv_dw = None", CORE_INIT[1], "self.shortcut = None")
    assert out[2].init_lines == (CORE_INIT[0], "self.se = None", DW, CORE_INIT[1], SHORTCUT)
    assert all(c.whole_children == {"conv_dw", "se", "shortcut"} for c in out)  # passed in (or built) by the shared class


def test_children_register_in_their_class_order_not_the_forward_order() -> None:
    """`b` built before `a` but applied after it: `__init__` keeps b first (state_dict keys in the source's order)."""
    a, b = "self.a = nn.Linear(4, 4)", "self.b = nn.Linear(4, 4)"
    forward = ("out = self.expand(x)", "out = self.a(out)", "out = self.b(out)", "out = self.project(out)", "return out + x")
    classes = [
        _block("Block", (CORE_INIT[0], b, a, CORE_INIT[1]), forward),
        _block("Block_1", (CORE_INIT[0], a, CORE_INIT[1]), tuple(line for line in forward if "self.b" not in line)),
        _block("Block_2", (CORE_INIT[0], b, CORE_INIT[1]), tuple(line for line in forward if "self.a" not in line)),
    ]
    out = in_place_children(classes, {})
    assert [c.init_lines for c in out] == [
        (CORE_INIT[0], b, a, CORE_INIT[1]),
        (CORE_INIT[0], "self.b = None", a, CORE_INIT[1]),
        (CORE_INIT[0], b, "self.a = None", CORE_INIT[1]),
    ]
    assert out[0].forward_lines[1:5] == ("if self.a is not None:", "    out = self.a(out)", "if self.b is not None:", "    out = self.b(out)")


OTHER = ("q = self.glob(x)", "x = self.blocks[0](x)", "x = self.blocks[1](x, q)", "return x.flip(-1)")
DEEPER = ("q = self.glob(x)", "x = self.blocks[0](x)", "x = self.blocks[1](x, q)", "x = self.blocks[2](x)", "x = self.blocks[3](x, q)", "return x.flip(-1)")


@pytest.mark.parametrize(
    ("name", "code", "other", "gap", "expected"),
    [
        ("before_the_line_it_precedes", DEEPER, OTHER, 3, 5),  # the norm before the return, after every block
        ("before_a_matched_first_line", DEEPER, OTHER, 0, 0),
        ("after_the_line_it_follows", ("q = self.glob(x)", "y = x.relu()"), ("q = self.glob(x)", "return q"), 1, 1),
        ("at_the_end", ("y = x.relu()",), ("return q",), 1, 1),
        ("no_line_matches", ("y = x.relu()", "return y"), ("q = self.glob(x)", "return q"), 1, None),
        # statements anchor it, before the comments quoting the next one's source; not a comment sitting elsewhere
        ("before_the_comments_of_the_next_statement", ("# m.py:9: y = b(y)", "shortcut = x", "# m.py:9: y = b(y)", "for b in self.blocks:"),
         ("shortcut = x", "# m.py:9: y = b(y)", "for b in self.blocks:"), 1, 2),
    ],
)
def test_a_child_no_class_of_a_code_builds_goes_where_the_other_code_applies_it(name, code, other, gap, expected) -> None:
    assert _gap_in(code, other, gap) == expected
