"""defaulted_inputs.py: a last forward input some callers leave out defaults to the input it stands for,
only where the longer forward computes exactly what the shorter one does."""

from __future__ import annotations

import pytest
import torch

from fxexport.defaulted_inputs import defaulted_inputs
from fxexport.ir import ClassIR

INIT = ("self.conv = nn.Conv2d(4, 4, 1)",)
LONGER = (("x", "x_1"), ("x = self.conv(x)", "x = x + x_1", "return torch.relu(x)"))
CASES = [  # (name, shorter forward (params, lines), the merged forward's first lines or None: kept apart)
    ("residual", (("x",), ("out = self.conv(x)", "out = out + x", "return torch.relu(out)")), ("if x_1 is None:", "    x_1 = x")),
    ("comments aside", (("y",), ("# source line", "out = self.conv(y)", "out = out + y", "return torch.relu(out)")), ("if x_1 is None:", "    x_1 = x")),
    ("the local, not the input", (("x",), ("out = self.conv(x)", "out = out + out", "return torch.relu(out)")), None),
    ("another call", (("x",), ("out = self.conv(x)", "out = out + x", "return torch.sigmoid(out)")), None),
    ("a statement more", (("x",), ("out = self.conv(x)", "out = out + x", "out = out * 2", "return torch.relu(out)")), None),
    ("a block", (("x",), ("out = self.conv(x)", "if out is None:", "    out = x", "return torch.relu(out)")), None),
]


def _class(name: str, params: tuple[str, ...], lines: tuple[str, ...]) -> ClassIR:
    return ClassIR(name, False, INIT, (), params, lines, "# m.py:1 Block")


@pytest.mark.parametrize("name,shorter,prologue", CASES, ids=[c[0] for c in CASES])
def test_a_left_out_input_defaults_only_where_the_code_agrees(name: str, shorter: tuple, prologue: tuple[str, ...] | None) -> None:
    level = [_class("Block", *LONGER), _class("Block_1", *shorter)]
    longer, short = defaulted_inputs(level, [], {})[0]
    if prologue is None:
        assert (longer, short) == tuple(level)
        return
    assert longer.forward_params == short.forward_params == ("x", "x_1=None")
    assert longer.forward_lines[:2] == short.forward_lines[:2] == prologue
    assert short.forward_lines[2:] == LONGER[1]


def test_the_shorter_forward_keeps_its_numbers() -> None:
    longer = _class("Block", ("x", "x_1"), ("x = self.conv(x)", "x = x + x_1 * 0.5", "return x[:, :2]"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x)", "out = out + x * 0.25", "return out[:, :3]"))
    _, short = defaulted_inputs([longer, shorter], [], {})[0]
    assert short.forward_lines == ("if x_1 is None:", "    x_1 = x", "x = self.conv(x)", "x = x + x_1 * 0.25", "return x[:, :3]")


def test_imaginary_literals_must_be_equal() -> None:
    longer = _class("Block", ("x", "x_1"), ("x = self.conv(x) * 1j", "return x + x_1"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x) * 2j", "return out + x"))
    assert defaulted_inputs([longer, shorter], [], {})[0] == [longer, shorter]  # 2j is no parameter generalize.py makes


def test_each_longer_class_defaults_to_its_own_input() -> None:
    first = _class("Block", ("x", "x_1"), LONGER[1])
    other = _class("Block_2", ("inp", "x"), ("inp = self.conv(inp)", "inp = inp + x", "return torch.relu(inp)"))
    shorter = _class("Block_1", ("x",), ("out = self.conv(x)", "out = out + x", "return torch.relu(out)"))
    _, merged_other, _ = defaulted_inputs([first, other, shorter], [], {})[0]
    assert merged_other.forward_lines[:2] == ("if x is None:", "    x = inp")


# an input left out in the middle (BART's cross-attention beside its self-attention): taken last, callers reordered
CROSS = _class("Attention", ("x", "x_1", "x_2"), ("q = self.conv(x)", "k = self.conv(x_1)", "return q * k + x_2"))
SELF = _class("Attention_1", ("x", "x_1"), ("out = self.conv(x)", "out_1 = self.conv(x)", "return out * out_1 + x_1"))
HOLDER = ("self.self_attn = Attention_1()", "self.cross_attn = Attention()")
CALLERS = [  # (name, the holder's init and forward lines, its forward after the merge or None: nothing merged)
    ("direct calls", (HOLDER, ("x = self.self_attn(x, m)", "return self.cross_attn(x, enc, m)")),
     ("x = self.self_attn(x, m)", "return self.cross_attn(x, m, enc)")),
    ("calls in a block", (HOLDER, ("if flag:", "    x = self.cross_attn(x, enc, m) + self.cross_attn(x, x, m)", "return x")),
     ("if flag:", "    x = self.cross_attn(x, m, enc) + self.cross_attn(x, m, x)", "return x")),
    ("a keyword", (HOLDER, ("return self.cross_attn(x, enc, mask=m)",)), None),
    ("no call", (HOLDER, ("f = self.cross_attn", "return f(x, enc, m)")), None),
    ("a call inside a call", (HOLDER, ("return self.cross_attn(x, self.cross_attn(x, enc, m), m)",)), None),
    ("a container", (("self.layers = nn.ModuleList([Attention()])",), ("return self.layers[0](x, enc, m)",)), None),
    ("a computed argument that stays", (HOLDER, ("return self.cross_attn(F.dropout(x, 0.5), enc, m)",)),
     ("return self.cross_attn(F.dropout(x, 0.5), m, enc)",)),
    ("a computed argument that moves", (HOLDER, ("return self.cross_attn(x, F.dropout(enc, 0.5), m)",)), None),
    ("a parenthesized argument", (HOLDER, ("return self.cross_attn(x, enc, (m))",)), None),
    ("in a string", (HOLDER, ("x = self.cross_attn(x, enc, m)", 'return f"{self.cross_attn(x, enc, m)}"')), None),
    ("named by a string", (HOLDER, ('x = getattr(self, "cross_attn")(x, enc, m)', "return self.cross_attn(x, enc, m)")), None),
    ("inside a word of a string", (HOLDER, ('check(x, "cross_attn_mask")', "return self.cross_attn(x, enc, m)")),
     ('check(x, "cross_attn_mask")', "return self.cross_attn(x, m, enc)")),
]


@pytest.mark.parametrize("name,holder,expected", CALLERS, ids=[c[0] for c in CALLERS])
def test_an_input_left_out_in_the_middle_is_taken_last(name: str, holder: tuple, expected: tuple[str, ...] | None) -> None:
    init, forward = holder
    parent = ClassIR("Layer", False, init, (), ("x", "enc", "m", "flag"), forward, "# m.py:9 Layer")
    (cross, short), (caller,) = defaulted_inputs([CROSS, SELF], [parent], {})
    if expected is None:
        assert (cross, short, caller) == (CROSS, SELF, parent)
        return
    assert caller.forward_lines == expected
    assert cross.forward_params == short.forward_params == ("x", "x_1", "x_2=None")
    assert cross.forward_lines == short.forward_lines == ("if x_2 is None:", "    x_2 = x", "q = self.conv(x)", "k = self.conv(x_2)", "return q * k + x_1")


def test_named_inputs_keep_their_names_when_taken_last() -> None:
    cross = _class("Attention", ("hidden", "memory", "mask"), ("q = self.conv(hidden)", "k = self.conv(memory)", "return q * k + mask"))
    (merged, _), _ = defaulted_inputs([cross, SELF], [], {})
    assert merged.forward_params == ("hidden", "mask", "memory=None")
    assert merged.forward_lines[:2] == ("if memory is None:", "    memory = hidden")



def _holder(forward: tuple[str, ...], base: str = "Module") -> ClassIR:
    return ClassIR("Layer", False, HOLDER, (), ("x", "enc", "m"), forward, "# m.py:9 Layer", base=base)


REACHED_OTHERWISE = [  # (name, the holder, the classes above it): calls the reordering cannot see, so nothing merges
    ("a call through the holder", _holder(("x = self.self_attn(x, m)", "return self.cross_attn(x, enc, m)")),
     [ClassIR("Net", True, ("self.layer = Layer()",), (), ("x", "enc", "m"), ("return self.layer.cross_attn(x, enc, m)",))]),
    ("a dict's forward by key", _holder(('return self["cross_attn"](x, enc, m)',), base="ModuleDict"), []),
    ("a loop over the holder's children", _holder(("for layer in self.values():", "    x = layer(x, enc, m)", "return x")), []),
]


@pytest.mark.parametrize("name,holder,above", REACHED_OTHERWISE, ids=[c[0] for c in REACHED_OTHERWISE])
def test_an_instance_reached_otherwise_than_by_its_attribute_keeps_the_classes_apart(name: str, holder: ClassIR, above: list[ClassIR]) -> None:
    level, pending = defaulted_inputs([CROSS, SELF], [holder, *above], {})
    assert (level, pending) == ([CROSS, SELF], [holder, *above])


def _run(classes: list[ClassIR], name: str, *args: torch.Tensor) -> torch.Tensor:
    """Run class `name`'s forward, its children the classes its `__init__` lines name (`self.a = Attention()`)
    and `self.conv` a fixed affine map: what the classes compute, as Python runs them."""
    by_name = {c.name: c for c in classes}

    def instance(cls: ClassIR) -> object:
        namespace: dict[str, object] = {"torch": torch}
        exec(f"def forward(self, {', '.join(cls.forward_params)}):\n" + "\n".join(f"    {line}" for line in cls.forward_lines), namespace)
        obj = type(cls.name, (), {"__call__": namespace["forward"], "conv": staticmethod(lambda t: t * 2 + 1)})()
        for line in cls.init_lines:
            attr, built = line.removeprefix("self.").split(" = ")
            if built.removesuffix("()") in by_name:
                setattr(obj, attr, instance(by_name[built.removesuffix("()")]))
        return obj

    return instance(by_name[name])(*args)  # type: ignore[operator]


def test_three_arities_merge_one_pair_only() -> None:
    """Forwards taking 2, 3 and 4 inputs, each a middle one more: a class takes part in one pair, so its
    callers are reordered at most once, and the holder computes what it did."""
    four = _class("Attention_2", ("x", "x_1", "x_2", "x_3"), ("q = self.conv(x)", "k = self.conv(x_1)", "v = self.conv(x_2)", "return q * k * v + x_3"))
    three = _class("Attention", ("x", "x_1", "x_2"), ("q = self.conv(x)", "k = self.conv(x_1)", "v = self.conv(x)", "return q * k * v + x_2"))
    two = _class("Attention_1", ("x", "x_1"), ("q = self.conv(x)", "k = self.conv(x)", "v = self.conv(x)", "return q * k * v + x_1"))
    holder = ClassIR("Layer", False, ("self.a2 = Attention_1()", "self.a3 = Attention()", "self.a4 = Attention_2()"), (), ("x", "e", "f", "m"),
                     ("x = self.a2(x, m)", "x = self.a3(x, e, m)", "return self.a4(x, e, f, m)"), "# m.py:9 Layer")  # fmt: skip
    inputs = [torch.randn(3, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    expected = _run([two, three, four, holder], "Layer", *inputs)
    for level in ([two, three, four], [four, three, two]):
        merged, (caller,) = defaulted_inputs(level, [holder], {})
        assert sum(c is not old for c, old in zip(merged, level)) == 2  # one pair
        assert torch.equal(_run([*merged, caller], "Layer", *inputs), expected)


def test_a_second_tuple_target_is_renamed_with_the_inputs() -> None:
    cross = _class("Attention", ("x", "x_1", "x_2"), ("q = self.conv(x)", "k = self.conv(x_1)", "a, x_2 = x_2.chunk(2)", "return q * k + a * x_2"))
    short = _class("Attention_1", ("x", "x_1"), ("q = self.conv(x)", "k = self.conv(x)", "a, x_1 = x_1.chunk(2)", "return q * k + a * x_1"))
    (merged, _), _ = defaulted_inputs([cross, short], [], {})
    assert merged.forward_lines[-2:] == ("a, x_1 = x_1.chunk(2)", "return q * k + a * x_1")
