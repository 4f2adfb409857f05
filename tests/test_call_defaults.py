"""Keywords some instances' calls leave at their default are written out in the forwards of classes of
one source that are one code so, and only there."""

from __future__ import annotations

import pytest

from fxexport.call_defaults import with_shared_keywords
from fxexport.generalize import generalize
from fxexport.ir import ClassIR

CONV = "return F.conv2d(x, self.weight, None, {}padding=1)"
CASES = [
    # (forwards of the classes of one source, what they become)
    ((CONV.format("stride=2, "), CONV.format("")), (CONV.format("stride=2, "), CONV.format("stride=1, "))),
    # the keywords any instance writes, in the function's order; the others stay left out
    (("y = F.conv2d(x, w, None, groups=2)", "y = F.conv2d(x, w, None, stride=2)"),
     ("y = F.conv2d(x, w, None, stride=1, groups=2)", "y = F.conv2d(x, w, None, stride=2, groups=1)")),
    # nested calls, each filled
    (("y = torch.cat([F.conv2d(x, w, None, stride=2), x], dim=1)", "y = torch.cat([F.conv2d(x, w, None), x])"),
     ("y = torch.cat([F.conv2d(x, w, None, stride=2), x], dim=1)", "y = torch.cat([F.conv2d(x, w, None, stride=1), x], dim=0)")),
    # the same code already: nothing written
    ((CONV.format("stride=2, "), CONV.format("stride=3, ")), (CONV.format("stride=2, "), CONV.format("stride=3, "))),
    # other code besides the keyword: nothing written
    ((CONV.format("stride=2, "), CONV.format("") + ".relu()"), (CONV.format("stride=2, "), CONV.format("") + ".relu()")),
    # keywords unpacked from a mapping: which it holds is not known, nothing written
    (("y = F.conv2d(x, w, None, **kw)", "y = F.conv2d(x, w, None, stride=2, **kw)"),
     ("y = F.conv2d(x, w, None, **kw)", "y = F.conv2d(x, w, None, stride=2, **kw)")),
    # the keyword given by position in one: nothing written
    (("y = F.conv2d(x, w, None, 2)", "y = F.conv2d(x, w, None)"), ("y = F.conv2d(x, w, None, 2)", "y = F.conv2d(x, w, None)")),
]  # fmt: skip


def _block(name: str, forward: str, comment: str = "# m.py:1 Block") -> ClassIR:
    return ClassIR(name, False, ("self.weight = nn.Parameter(torch.empty(3, 3, 3, 3))",), (), ("x",), (forward,), comment)


@pytest.mark.parametrize(("forwards", "expected"), CASES)
def test_keywords_left_at_their_default_are_written_where_another_instance_writes_them(forwards, expected) -> None:
    classes = tuple(_block(f"Block_{i}" if i else "Block", f) for i, f in enumerate(forwards))
    assert tuple(c.forward_lines[0] for c in with_shared_keywords(classes)) == expected


def test_classes_of_other_sources_are_left_as_they_are() -> None:
    classes = (_block("Block", CONV.format("stride=2, ")), _block("Other", CONV.format(""), "# m.py:9 Other"))
    assert with_shared_keywords(classes) == classes


def test_blocks_apart_in_a_keyword_left_out_are_one_class_taking_it() -> None:
    blocks = (_block("Block", CONV.format("stride=2, ")), _block("Block_1", CONV.format("")))
    root = ClassIR("Net", True, ("self.a = Block()", "self.b = Block_1()"), (), ("x",), ("return self.b(self.a(x))",))
    classes, names = generalize((*blocks, root), lambda name: name)
    (block,) = [c for c in classes if c.name == "Block"]
    assert names["Block_1"] == "Block"
    assert block.forward_lines == ("return F.conv2d(x, self.weight, None, stride=self.stride, padding=1)",)
    assert classes[-1].init_lines == ("self.a = Block(2)", "self.b = Block(1)")
