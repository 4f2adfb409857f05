"""computed_inputs.py: a last input some callers leave out, the block computing it then, becomes one forward
computing it when it is None; only where the shared ending reads one value from each side's beginning."""

from __future__ import annotations

import pytest

from fxexport.computed_inputs import computed_inputs
from fxexport.ir import ClassIR

INIT = ("self.weight = nn.Parameter(torch.empty(10, 4))",)
SHORTER = ((), ("out = torch.arange(8)", "out = out.expand(1, -1)", "out = out + 2", "return F.embedding(out, self.weight)"))
CASES = [  # (name, longer forward (params, lines), the merged forward or None: kept apart)
    ("both compute the value", (("ids",), ("x = ids.unsqueeze(0)", "x = x + 2", "return F.embedding(x, self.weight)")),
     ("if ids is None:", "    x = torch.arange(8)", "    x = x.expand(1, -1)", "else:", "    x = ids.unsqueeze(0)", "x = x + 2",
      "return F.embedding(x, self.weight)")),
    ("the input is the value", (("ids",), ("ids = ids + 2", "return F.embedding(ids, self.weight)")),
     ("if ids is None:", "    ids = torch.arange(8)", "    ids = ids.expand(1, -1)", "ids = ids + 2", "return F.embedding(ids, self.weight)")),
    ("comments go with their statement", (("ids",), ("# a.py:3", "x = ids.unsqueeze(0)", "# a.py:4", "x = x + 2", "return F.embedding(x, self.weight)")),
     ("if ids is None:", "    x = torch.arange(8)", "    x = x.expand(1, -1)", "else:", "    # a.py:3", "    x = ids.unsqueeze(0)", "# a.py:4",
      "x = x + 2", "return F.embedding(x, self.weight)")),
    ("the ending reads two values", (("ids",), ("x = ids.unsqueeze(0)", "x = x + 2", "return F.embedding(x, self.weight) + ids")), None),
    ("beginnings apart but short", (("ids",), ("x = ids.unsqueeze(0)", "x = x * 2", "return F.embedding(x, self.weight)")),
     ("if ids is None:", "    x = torch.arange(8)", "    x = x.expand(1, -1)", "    x = x + 2", "else:", "    x = ids.unsqueeze(0)",
      "    x = x * 2", "return F.embedding(x, self.weight)")),
    ("long beginnings apart", (("ids",), (*(["x = ids.unsqueeze(0)"] + ["x = x * 2"] * 8), "return F.embedding(x, self.weight)")), None),
    ("a block first", (("ids",), ("if ids is None:", "    ids = ids", "return F.embedding(ids, self.weight)")), None),
]


def _class(name: str, params: tuple[str, ...], lines: tuple[str, ...]) -> ClassIR:
    return ClassIR(name, False, INIT, (), params, lines, "# m.py:1 Positions")


@pytest.mark.parametrize("name,longer,merged", CASES, ids=[c[0] for c in CASES])
def test_a_left_out_input_is_computed_only_where_the_endings_agree(name: str, longer: tuple, merged: tuple[str, ...] | None) -> None:
    level = [_class("Positions", *SHORTER), _class("Positions_1", *longer)]
    short, long = computed_inputs(level, {}, {})
    if merged is None:
        assert (short, long) == tuple(level)
        return
    assert short.forward_params == long.forward_params == ("ids=None",)
    assert long.forward_lines == merged
    assert short.forward_lines == merged


def test_each_class_keeps_its_numbers_in_the_shared_ending() -> None:
    longer = _class("Positions_1", ("ids",), ("x = ids.unsqueeze(0)", "x = x + 3", "return F.embedding(x, self.weight)"))
    short, long = computed_inputs([_class("Positions", *SHORTER), longer], {}, {})
    assert "x = x + 2" in short.forward_lines
    assert "x = x + 3" in long.forward_lines


def test_the_computed_value_takes_names_the_forward_does_not_use() -> None:
    shorter = _class("Positions", ("a",), ("x = torch.arange(8)", "out = x + a", "return F.embedding(out, self.weight)"))
    longer = _class("Positions_1", ("a", "x"), ("return F.embedding(x, self.weight)",))
    short, long = computed_inputs([shorter, longer], {}, {})
    assert long.forward_lines == ("if x is None:", "    x_1 = torch.arange(8)", "    x = x_1 + a", "return F.embedding(x, self.weight)")
    assert short.forward_params == ("a", "x=None")


def test_a_second_tuple_target_of_the_computed_value_is_renamed() -> None:
    shorter = _class("Positions", (), ("a, pos = torch.arange(16).chunk(2)", "pos = pos.expand(1, -1)", "x = pos + 2", "return F.embedding(x, self.weight)"))
    longer = _class("Positions_1", ("ids",), ("x = ids.unsqueeze(0)", "x = x + 2", "return F.embedding(x, self.weight)"))
    short, _ = computed_inputs([shorter, longer], {}, {})
    assert short.forward_lines[1:3] == ("    a, x = torch.arange(16).chunk(2)", "    x = x.expand(1, -1)")


def test_a_computed_local_never_takes_the_name_of_a_global_the_other_side_reads() -> None:
    shorter = _class("Positions", (), ("helper = torch.arange(8)", "out = helper.expand(1, -1)", "out = out + 2", "return F.embedding(out, self.weight)"))
    longer = _class("Positions_1", ("ids",), ("x = helper(ids)", "x = x + 2", "return F.embedding(x, self.weight)"))
    _, long = computed_inputs([shorter, longer], {}, {})
    assert long.forward_lines[:5] == ("if ids is None:", "    helper_1 = torch.arange(8)", "    x = helper_1.expand(1, -1)", "else:", "    x = helper(ids)")


BLOCK = ("out = self.norm(x)", "out = self.attn(out{})", "x = x + out", "out_1 = self.mlp(x)", "return x + out_1")


@pytest.mark.parametrize(("attn_forward", "joined_here"), [(("x", "size=None"), False), (("x", "size"), True)], ids=["defaulted", "required"])
def test_a_child_call_left_without_an_input_its_forward_defaults_is_no_computed_value(attn_forward: tuple[str, ...], joined_here: bool) -> None:
    """timm twins' blocks: `self.attn(out)` beside `self.attn(out, size)`, the attention's forward defaulting
    `size` to None, is the one call passing `size` (defaulted_inputs joins them), not a branch computing `out`."""
    init = ("self.norm = nn.LayerNorm(8)", "self.attn = Attn(8)", "self.mlp = nn.Linear(8, 8)")
    shorter = ClassIR("Block", False, init, (), ("x",), tuple(line.format("") for line in BLOCK), "# m.py:1 Block")
    longer = ClassIR("Block_1", False, init, (), ("x", "size"), tuple(line.format(", size") for line in BLOCK), "# m.py:1 Block")
    short, long = computed_inputs([shorter, longer], {}, {"Attn": attn_forward})
    assert ((short, long) != (shorter, longer)) == joined_here
