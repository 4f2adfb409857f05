"""A merged class's defaults are the values most instances have, not most classes; instances its merge
builds alike are a run like those collect found alike. Both so that the export of a re-trace of an
export, where instances built alike are one class from the start, reads the same (issue 14's fixed point)."""

from __future__ import annotations

import pytest

from fxexport.generalize import generalize
from fxexport.instances import Instances
from fxexport.ir import ClassIR


def _block(name: str, padding: int) -> ClassIR:
    return ClassIR(name, False, (f"self.conv = nn.Conv2d(4, 4, 3, padding={padding})",), (), ("x",), ("return self.conv(x)",), "# m.py:1 Block")


# One padding per class: Block 2, Block_1 3, Block_2 and Block_3 1 (the same code: collect would have made
# them one class, as a re-trace does).
BLOCKS = (_block("Block", 2), _block("Block_1", 3), _block("Block_2", 1), _block("Block_3", 1))
ROOT = ClassIR("Net", True, ("self.layers = nn.Sequential(Block(), Block_1(), Block_2(), Block_3(), Block_3())",), (), ("x",),
               ("return self.layers(x)",))  # fmt: skip
CASES = [
    # (instances of each class, the Block class's parameters, the root's line)
    pytest.param({"Block_2": 1, "Block_3": 2}, ("padding=1",), "self.layers = nn.Sequential(Block(padding=2), Block(padding=3), *[Block() for _ in range(3)])",
                 id="most instances pass 1, though as many classes pass 2 and 3"),
    pytest.param({"Block": 4, "Block_2": 1, "Block_3": 2}, ("padding=2",), "self.layers = nn.Sequential(Block(), Block(padding=3), *[Block(padding=1) for _ in range(3)])",
                 id="most instances pass 2"),
    pytest.param({"Block": 2}, ("padding=2",), "self.layers = nn.Sequential(Block(), Block(padding=3), *[Block(padding=1) for _ in range(3)])",
                 id="a tie of 2 and 1: the first instance's value"),
    pytest.param({}, ("padding=1",), "self.layers = nn.Sequential(Block(padding=2), Block(padding=3), *[Block() for _ in range(3)])",
                 id="counts not given: one instance per class"),
]  # fmt: skip


@pytest.mark.parametrize(("counts", "params", "line"), CASES)
def test_defaults_are_the_values_most_instances_have(counts: dict[str, int], params: tuple[str, ...], line: str) -> None:
    classes, names = generalize((*BLOCKS, ROOT), lambda name: name, counts)
    block = next(c for c in classes if c.name == "Block")
    assert {names[c.name] for c in BLOCKS} == {"Block"}
    assert block.init_params == params
    assert classes[-1].init_lines == (line,)


TIES = [
    # (values per class, instances per class, collect's order of the classes, the value)
    ((("2", "A"), ("1", "B")), {"A": 1, "B": 1}, ("A", "B"), "2"),
    ((("2", "A"), ("1", "B")), {"A": 1, "B": 1}, ("B", "A"), "1"),  # the earliest instance's, not the first row's
    ((("2", "A"), ("1", "B"), ("1", "C")), {"A": 2, "B": 1, "C": 1}, ("A", "B", "C"), "2"),
    ((("2", "A"), ("1", "B"), ("1", "C")), {"A": 2, "B": 1, "C": 2}, ("A", "B", "C"), "1"),
]


@pytest.mark.parametrize(("rows", "counts", "order", "expected"), TIES)
def test_a_tie_goes_to_the_earliest_instance(rows, counts, order, expected) -> None:
    instances = Instances(counts, {name: i for i, name in enumerate(order)})
    assert instances.most_common([v for v, _ in rows], [n for _, n in rows]) == expected
