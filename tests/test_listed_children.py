"""Container subclasses whose instances hold other numbers of children of one code, and run one forward
but for lists of numbers, become one class building its children from lists (listed_children.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fxexport.instances import Instances
from fxexport.ir import ClassIR
from fxexport.listed_children import _plural, forward_slots, listed_children

FORWARD = (
    "x_split = torch.split(x, {}, dim=1)",
    "outs = []",
    "for i, layer in enumerate(self.values()):",
    "    out = layer(x_split[i])",
    "    outs.append(out)",
    "return torch.cat(outs, 1)",
)


def _conv(k: int, channels: int = 4, stride: int = 1) -> str:
    return f"nn.Conv2d({channels}, {channels}, {k}, stride={stride}, padding={k // 2}, dilation=1, groups=1, bias=False)"


def _block(name: str, children: list[str], splits: list[int], base: str = "ModuleDict", extra: tuple[str, ...] = (),
           forward: tuple[str, ...] = FORWARD) -> ClassIR:  # fmt: skip
    init = tuple(f'self.add_module("{k}", {child})' for k, child in enumerate(children)) + extra
    lines = tuple(line.format(splits) if "{}" in line else line for line in forward)
    return ClassIR(name, False, init, (), ("x",), lines, "# m.py:1 Mixed", base=base)


STACKED = ("outs = []", "for layer in self:", "    out = layer(x)", "    outs.append(out)", "return torch.stack(outs)")
TWO = _block("Mixed", [_conv(3), _conv(5)], [4, 4])
THREE = _block("Mixed_1", [_conv(3), _conv(5), _conv(7)], [4, 4, 4])
THREE_STRIDED = _block("Mixed_2", [_conv(3, stride=2), _conv(5, stride=2), _conv(7, stride=2)], [4, 4, 4])
UNEVEN = _block("Mixed_3", [_conv(3, 6), _conv(5, 2)], [6, 2])

CASES = [
    # (name, classes, the merged class's `__init__` parameters and lines, and each class's constructor call; None: not listed)
    ("kernel_sizes_a_list", [TWO, THREE],
     (("kernel_sizes", "paddings"),
      ("for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):",
       "    self.add_module(str(i), nn.Conv2d(4, 4, kernel_size, padding=padding, bias=False))",
       "self.sizes = [4] * len(kernel_sizes)"),  # the forward's list an item a child, the same item
      {"Mixed": "Mixed([3, 5], [1, 2])", "Mixed_1": "Mixed([3, 5, 7], [1, 2, 3])"})),
    # a literal alike in each instance's children, but not between instances: a plain parameter, a keyword as passed
    ("stride_a_keyword", [TWO, THREE, THREE_STRIDED],
     (("kernel_sizes", "paddings", "stride=1"),
      ("for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):",
       "    self.add_module(str(i), nn.Conv2d(4, 4, kernel_size, stride=stride, padding=padding, bias=False))",
       "self.sizes = [4] * len(kernel_sizes)"),
      {"Mixed": "Mixed([3, 5], [1, 2])", "Mixed_1": "Mixed([3, 5, 7], [1, 2, 3])", "Mixed_2": "Mixed([3, 5, 7], [1, 2, 3], stride=2)"})),
    # ... a parameter, where the item is one
    ("splits_of_the_channels", [TWO, _block("Mixed_5", [_conv(3, 8), _conv(5, 8), _conv(7, 8)], [8, 8, 8])],
     (("in_channels", "kernel_sizes", "paddings"),
      ("for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):",
       "    self.add_module(str(i), nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding, bias=False))",
       "self.sizes = [in_channels] * len(kernel_sizes)"),
      {"Mixed": "Mixed(4, [3, 5], [1, 2])", "Mixed_5": "Mixed(8, [3, 5, 7], [1, 2, 3])"})),
    # the forward's list the children's channels: one parameter (stored under the source's name for it, where it has one)
    ("splits_the_channels", [UNEVEN, THREE],
     (("in_channels_list", "kernel_sizes", "paddings"),
      ("for i, (in_channels, kernel_size, padding) in enumerate(zip(in_channels_list, kernel_sizes, paddings)):",
       "    self.add_module(str(i), nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding, bias=False))",
       "self.in_channels_list = in_channels_list"),
      {"Mixed_3": "Mixed_3([6, 2], [3, 5], [1, 2])", "Mixed_1": "Mixed_3([4, 4, 4], [3, 5, 7], [1, 2, 3])"})),
    # children built alike: a count (the forward's list of one item repeated as many times)
    ("alike_children_counted_by_the_list", [_block("Heads", ["nn.Linear(4, 4)"] * 2, [4, 4], "ModuleList"), _block("Heads_1", ["nn.Linear(4, 4)"] * 3, [4, 4, 4], "ModuleList")],
     (("count",), ("for i in range(count):", "    self.add_module(str(i), nn.Linear(4, 4))", "self.sizes = [4] * count"),
      {"Heads": "Heads(2)", "Heads_1": "Heads(3)"})),
    # ... as many as the forward's list has items, where it is no item repeated
    ("alike_children_as_many_as_a_list", [_block("Heads", ["nn.Linear(4, 4)"] * 2, [6, 2], "ModuleList"), _block("Heads_1", ["nn.Linear(4, 4)"] * 3, [4, 2, 2], "ModuleList")],
     (("sizes",), ("for i in range(len(sizes)):", "    self.add_module(str(i), nn.Linear(4, 4))", "self.sizes = sizes"),
      {"Heads": "Heads([6, 2])", "Heads_1": "Heads([4, 2, 2])"})),
    # ... a count of its own, though a literal has its values (`range(in_features)` would mislead)
    ("alike_children_counted", [_block("Heads", ["nn.Linear(2, 2)"] * 2, [], "ModuleList", forward=STACKED), _block("Heads_1", ["nn.Linear(3, 3)"] * 3, [], "ModuleList", forward=STACKED)],
     (("in_features", "count"), ("for i in range(count):", "    self.add_module(str(i), nn.Linear(in_features, in_features))"),
      {"Heads": "Heads(2, 2)", "Heads_1": "Heads(3, 3)"})),
    # a forward's number that is the number of children: `len(self)`, as the source reads it
    ("the_count_read", [_block("Heads", ["nn.Linear(4, 4)"] * 2, [], "ModuleList", forward=(*STACKED[:-1], "return torch.stack(outs).view(2, -1)")),
                        _block("Heads_1", ["nn.Linear(4, 4)"] * 3, [], "ModuleList", forward=(*STACKED[:-1], "return torch.stack(outs).view(3, -1)"))],
     (("count",), ("for i in range(count):", "    self.add_module(str(i), nn.Linear(4, 4))"), {"Heads": "Heads(2)", "Heads_1": "Heads(3)"})),
    # an instance whose children are of another code keeps its class; the others are listed all the same
    ("one_instance_of_other_children", [TWO, THREE, _block("Mixed_4", [_conv(3).replace(", bias=False", ""), _conv(5).replace(", bias=False", "")], [4, 4])],
     (("kernel_sizes", "paddings"),
      ("for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):",
       "    self.add_module(str(i), nn.Conv2d(4, 4, kernel_size, padding=padding, bias=False))", "self.sizes = [4] * len(kernel_sizes)"),
      {"Mixed": "Mixed([3, 5], [1, 2])", "Mixed_1": "Mixed([3, 5, 7], [1, 2, 3])"})),
    ("as_many_children_left_to_generalize", [TWO, _block("Mixed_1", [_conv(5), _conv(7)], [4, 4])], None),
    ("children_of_two_codes", [TWO, _block("Mixed_1", [_conv(3), "nn.Linear(4, 4)", _conv(7)], [4, 4, 4])], None),
    ("children_of_two_classes", [TWO, _block("Mixed_1", [_conv(3), _conv(5), "nn.Conv1d(4, 4, 7)"], [4, 4, 4])], None),
    ("a_tensor_of_its_own", [TWO, _block("Mixed_1", [_conv(3), _conv(5), _conv(7)], [4, 4, 4], extra=("self.scale = nn.Parameter(torch.empty(4))",))], None),
    ("named_children", [TWO, ClassIR("Mixed_1", False, tuple(f'self.add_module("c{k}", {_conv(3)})' for k in range(3)), (), ("x",),
                                     tuple(line.format([4, 4, 4]) if "{}" in line else line for line in FORWARD), "# m.py:1 Mixed", base="ModuleDict")], None),
    ("a_plain_module", [_block("Mixed", [_conv(3), _conv(5)], [4, 4], "Module"), _block("Mixed_1", [_conv(3), _conv(5), _conv(7)], [4, 4, 4], "Module")], None),
    ("forwards_differ_in_code", [TWO, _block("Mixed_1", [_conv(3), _conv(5), _conv(7)], [4, 4, 4], forward=(*FORWARD[:-1], "return torch.stack(outs, 1)"))], None),
    ("other_source_classes", [TWO, ClassIR("Other", False, THREE.init_lines, (), ("x",), THREE.forward_lines, "# m.py:9 Other", base="ModuleDict")], None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "classes", "expected"), CASES, ids=[c[0] for c in CASES])
def test_instances_of_other_counts_are_one_class_built_from_lists(name: str, classes: list[ClassIR], expected: tuple | None) -> None:
    left, listed = listed_children(classes, {}, Instances())
    if expected is None:
        assert listed == [] and left == classes
        return
    params, init, calls = expected
    assert left == [c for c in classes if c.name not in calls] and len(listed) == 1
    assert listed[0].merged.init_params == params
    assert listed[0].merged.init_lines == init
    assert listed[0].calls == calls


def test_the_forward_reads_the_number_of_children_as_the_length_of_self() -> None:
    found = listed_children(next(c[1] for c in CASES if c[0] == "the_count_read"), {}, Instances())[1][0]
    assert found.merged.forward_lines[-1] == "return torch.stack(outs).view(len(self), -1)"


def test_a_number_the_source_names_is_no_length_though_it_equals_one() -> None:
    source = "def forward(self, x):\n    return torch.stack([h(x) for h in self]).view(self.heads, -1)\n"
    classes = [replace(c, source_forward=source) for c in next(c[1] for c in CASES if c[0] == "the_count_read")]
    found = listed_children(classes, {}, Instances())[1][0]
    assert found.merged.forward_lines[-1] == "return torch.stack(outs).view(self.heads, -1)"
    assert found.calls == {"Heads": "Heads(2, 2)", "Heads_1": "Heads(3, 3)"}


def test_the_forward_reads_its_lists_from_self() -> None:
    (found,) = listed_children([UNEVEN, THREE], {}, Instances())[1]
    assert found.merged.forward_lines[0] == "x_split = torch.split(x, self.in_channels_list, dim=1)"
    assert found.merged.forward_lines[1:] == FORWARD[1:]


def test_a_stored_list_never_takes_a_name_the_container_has() -> None:
    source = "def forward(self, x):\n    return torch.split(x, values, 1)\n"  # the source names the list `values`
    classes = [replace(TWO, source_forward=source), replace(_block("Mixed_1", [_conv(3), _conv(5), _conv(7)], [6, 4, 2]), source_forward=source)]
    (found,) = listed_children(classes, {}, Instances())[1]
    assert found.merged.init_params[-1] == "values"
    assert "self.values_2 = values" in found.merged.init_lines  # `self.values()` is the ModuleDict's
    assert found.merged.forward_lines[0] == "x_split = torch.split(x, self.values_2, dim=1)"


SLOTS = [
    # (line, the slots' texts: a list of numbers is one, numbers outside lists one each)
    ("x = torch.split(x, [4, 4], dim=1)", ["[4, 4]", "1"]),
    ("x = x.view([2, -1]) * 0.5", ["[2, -1]", "0.5"]),
    ("x = f(x, [(1, 2), (3, 4)])", ["[(1, 2), (3, 4)]"]),
    ("x = f(x, [a, 4])", ["4"]),  # not all numbers: its numbers alone
    ("x = f(x, [])", []),
    ("    y = g([1], 2)", ["[1]", "2"]),  # in a block
    ("y = g('héllo', [1, 2])", ["[1, 2]"]),  # columns in characters, not UTF-8 bytes
]


@pytest.mark.parametrize(("line", "texts"), SLOTS, ids=[s[0] for s in SLOTS])
def test_forward_slots_take_a_list_of_numbers_whole(line: str, texts: list[str]) -> None:
    slots = forward_slots((line,))
    assert [s.text for s in slots] == texts
    assert all(line[s.start : s.end] == s.text for s in slots)


@pytest.mark.parametrize(("name", "plural"), [("kernel_size", "kernel_sizes"), ("in_channels", "in_channels_list"), ("value_2", "values_2"),
                                              ("size_10", "sizes_10"), ("conv_3x3", "conv_3x3s")])  # fmt: skip
def test_a_list_is_named_after_its_items(name: str, plural: str) -> None:
    assert _plural(name) == plural
