"""Classes of one source class differing in a child whose output the others read as a default (a number,
None, or the child's input) take one forward: `value = <default>`, then the child's call under `if`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fxexport.defaulted_children import defaulted_children
from fxexport.ir import ClassIR

CORE = ("self.scale = nn.Linear(4, 4)", "self.act = nn.ReLU()")
IDENTITY = "self.identity = nn.BatchNorm1d(4)"


def _block(name: str, init: tuple[str, ...], forward: tuple[str, ...]) -> ClassIR:
    return ClassIR(name, False, init, (), ("x",), forward, "# m.py:1 Block")


ZERO_HOLDER = _block("Block", (IDENTITY, *CORE), (
    "identity_out = self.identity(x)", "out = self.scale(x)", "out = out + identity_out", "return self.act(out)",
))  # fmt: skip
ZERO_LACKING = _block("Block_1", CORE, ("out = self.scale(x)", "out = out + 0", "return self.act(out)"))
ZERO_FORWARD = (
    "identity_out = 0", "if self.identity is not None:", "    identity_out = self.identity(x)", "out = self.scale(x)",
    "out = out + identity_out", "return self.act(out)",
)  # fmt: skip

PROJ_1, PROJ_2 = "self.proj_s1 = nn.Linear(4, 4)", "self.proj_s2 = nn.Linear(4, 4, bias=False)"
BODY = ("self.body = nn.Linear(4, 4)",)
PATH = ("a = s[:, :2]", "b = s[:, 2:]", "y = self.body(x)", "return torch.cat([a + y, b], 1)")
PATH_HOLDER = _block("Path", (PROJ_1, *BODY), ("# m.py:9 in forward: s = self.proj_s1(x)", "s = self.proj_s1(x)", *PATH[:2], "del s", *PATH[2:]))
PATH_OTHER = _block("Path_1", (PROJ_2, *BODY), ("s = self.proj_s2(x)", *PATH[:2], "del s", *PATH[2:]))
PATH_LACKING = _block("Path_2", BODY, tuple(line.replace("s[", "x[") for line in PATH))
PATH_FORWARD = (
    "s = x", "if self.proj_s1 is not None:", "    # m.py:9 in forward: s = self.proj_s1(x)", "    s = self.proj_s1(x)",
    "if self.proj_s2 is not None:", "    s = self.proj_s2(x)", *PATH[:2], "del s", *PATH[2:],
)  # fmt: skip

KEEPING = "def forward(self, x):\n    s = x\n    out = self.scale(x)\n    if self.proj is not None:\n        s = self.proj(s)\n    return out + s\n"

CASES = [
    # timm's MobileOneBlock: the literal 0 in the identity's place
    ("zero_default", [ZERO_HOLDER, ZERO_LACKING], ZERO_FORWARD),
    # dpn's DualPathBlock: the input in the projection's place, and a projection others build in its place
    ("input_default_and_a_child_in_its_place", [PATH_HOLDER, PATH_LACKING, PATH_OTHER], PATH_FORWARD),
    # None in the value's place (an attention mask only some build)
    ("none_default", [
        _block("Attn", ("self.mask = Mask()", *CORE), ("m = self.mask(x)", "out = f(x, m)", "return out")),
        _block("Attn_1", CORE, ("out = f(x, None)", "return out")),
    ], ("m = None", "if self.mask is not None:", "    m = self.mask(x)", "out = f(x, m)", "return out")),
    # the lacking class writes the default inside the statement reading it (one source line `fc(x) + i + s`): as
    # the holder writes it
    ("default_written_inside", [
        _block("In", (IDENTITY, *CORE), ("i = self.identity(x)", "y = self.scale(x) + i", "out = y + x", "return self.act(out)")),
        _block("In_1", CORE, ("out = self.scale(x) + 0 + x", "return self.act(out)")),
    ], ("i = 0", "if self.identity is not None:", "    i = self.identity(x)", "y = self.scale(x) + i", "out = y + x", "return self.act(out)")),
    # two literals read in the value's places: no one default
    ("two_literals", [
        _block("Block", (IDENTITY, *CORE), ("i = self.identity(x)", "out = x + i", "return out * i")),
        _block("Block_1", CORE, ("out = x + 0", "return out * 1")),
    ], None),
    # the input rebound before the value's last read: the input there is not the value the child read
    ("input_rebound", [
        _block("Block", (IDENTITY, *CORE), ("s = self.identity(x)", "x = x * 2", "return s + x")),
        _block("Block_1", CORE, ("x = x * 2", "return x + x")),
    ], None),
    # the value bound again: not the child's alone
    ("value_bound_twice", [
        _block("Block", (IDENTITY, *CORE), ("s = self.identity(x)", "s = s + 1", "return s")),
        _block("Block_1", CORE, ("s = 0 + 1", "return s")),
    ], None),
    # the source keeps the input under the value's name first (`residual = x`): kept_inputs.as_in_source writes it so
    ("source_keeps_the_input", [
        replace(_block("Res", ("self.proj = nn.Linear(4, 4)", *CORE), ("out = self.scale(x)", "s = self.proj(x)", "return out + s")),
                source_forward=KEEPING),
        _block("Res_1", CORE, ("out = self.scale(x)", "return out + x")),
    ], None),
    # the same where the source calls the child on the input itself (an export of this module's, traced again)
    ("source_keeps_the_input_calling_the_child_on_it", [
        replace(_block("Res", ("self.proj = nn.Linear(4, 4)", *CORE), ("out = self.scale(x)", "s = self.proj(x)", "return out + s")),
                source_forward=KEEPING.replace("self.proj(s)", "self.proj(x)")),
        _block("Res_1", CORE, ("out = self.scale(x)", "return out + x")),
    ], ("out = self.scale(x)", "s = x", "if self.proj is not None:", "    s = self.proj(x)", "return out + s")),
    # the same where a loop reads the value: no other join writes the source's form then (helper-67's F3)
    ("source_keeps_the_input_read_in_a_loop", [
        replace(_block("Res", ("self.proj = nn.Linear(4, 4)", *CORE), ("s = self.proj(x)", "out = 0", "for layer in self.layers:", "    out = out + layer(s)", "return out")),
                source_forward=KEEPING),
        _block("Res_1", CORE, ("out = 0", "for layer in self.layers:", "    out = out + layer(x)", "return out")),
    ], ("s = x", "if self.proj is not None:", "    s = self.proj(x)", "out = 0", "for layer in self.layers:", "    out = out + layer(s)", "return out")),
    # the value read in a loop that binds the input again after the read: a later pass reads another input
    ("input_rebound_in_a_loop", [
        _block("Loop", (IDENTITY, *CORE), ("s = self.identity(x)", "for layer in self.layers:", "    y = s * 2", "    x = layer(x) + y", "return x")),
        _block("Loop_1", CORE, ("for layer in self.layers:", "    y = x * 2", "    x = layer(x) + y", "return x")),
    ], None),
    # other children besides: not one `__init__`
    ("other_init", [ZERO_HOLDER, _block("Block_1", (CORE[0],), ("out = self.scale(x)", "out = out + 0", "return out"))], None),
]


@pytest.mark.parametrize(("name", "classes", "forward"), CASES, ids=[c[0] for c in CASES])
def test_a_child_others_read_a_default_for_is_called_under_if(name, classes, forward) -> None:
    out = defaulted_children(classes, {})
    if forward is None:
        assert out == classes
        return
    assert [c.forward_lines for c in out] == [forward] * len(classes)
    children = {line.split(" = ")[0] for c in out for line in c.init_lines if line.endswith(" = None")}
    assert all({f"self.{name}" for name in c.whole_children} == children for c in out)


def test_classes_without_the_child_build_it_as_none_where_the_holders_build_it() -> None:
    out = defaulted_children([PATH_HOLDER, PATH_LACKING, PATH_OTHER], {})
    assert [c.init_lines for c in out] == [
        (PROJ_1, "self.proj_s2 = None", *BODY),
        ("self.proj_s1 = None", "self.proj_s2 = None", *BODY),
        ("self.proj_s1 = None", PROJ_2, *BODY),
    ]


def test_each_class_keeps_its_own_literals() -> None:
    holder = _block("Block", (IDENTITY, *CORE), ("identity_out = self.identity(x)", "out = self.scale(x)[:, :3]", "out = out + identity_out", "return out"))
    lacking = _block("Block_1", CORE, ("out = self.scale(x)[:, :2]", "out = out + 0", "return out"))
    out = defaulted_children([holder, lacking], {})
    assert out[1].forward_lines == ("identity_out = 0", "if self.identity is not None:", "    identity_out = self.identity(x)",
                                    "out = self.scale(x)[:, :2]", "out = out + identity_out", "return out")  # fmt: skip
    assert out[0].forward_lines[3] == "out = self.scale(x)[:, :3]"


SCALE = "self.scale = nn.Linear(4, 4)"
TAIL = ("self.act = nn.ReLU()",)
BOTH = _block("Mo", (IDENTITY, SCALE, *TAIL), ("i = self.identity(x)", "s = self.scale(x)", "out = s + i", "return self.act(out)"))
NO_IDENTITY = _block("Mo_1", (SCALE, *TAIL), ("s = self.scale(x)", "out = s + 0", "return self.act(out)"))
NO_SCALE = _block("Mo_2", (IDENTITY, *TAIL), ("i = self.identity(x)", "out = 0 + i", "return self.act(out)"))


def test_a_class_always_building_the_child_is_written_so_where_that_joins_it() -> None:
    """fastvit's blocks: those with a scale branch may lack the identity norm, those without always have it."""
    out = defaulted_children([BOTH, NO_IDENTITY, NO_SCALE], {})
    assert [c.forward_lines for c in out] == [(
        "i = 0", "if self.identity is not None:", "    i = self.identity(x)", "s = 0", "if self.scale is not None:",
        "    s = self.scale(x)", "out = s + i", "return self.act(out)",
    )] * 3  # fmt: skip


def test_a_class_always_building_the_child_keeps_its_call_where_that_joins_nothing() -> None:
    """Written under `if`, it would join no class lacking the child: it keeps its plain call, and the child is
    left to the other joins for every class (flags.py, optional_children.py take them alike)."""
    other = _block("Mo_3", (IDENTITY, SCALE, "self.act = nn.GELU()", "self.fc = nn.Linear(4, 4)"), ("i = self.identity(x)", "return self.fc(i)"))
    classes = [BOTH, NO_IDENTITY, other]
    assert defaulted_children(classes, {}) == classes


def test_a_child_one_code_cannot_default_is_left_to_the_other_joins() -> None:
    """Two codes (a source `if`): one reads the default as such, the other's trace folded it (`0 * 2`).
    Writing only the first so would keep the two codes from joining on a flag."""
    minus = _block("Br", (IDENTITY, *CORE), ("i = self.identity(x)", "out = self.scale(x)", "out = out - i", "return out"))
    minus_lacking = _block("Br_1", CORE, ("out = self.scale(x)", "out = out - 0", "return out"))
    twice = _block("Br_2", (IDENTITY, *CORE), ("i = self.identity(x)", "out = self.scale(x)", "mul = i * 2", "out = out + mul", "return out"))
    twice_lacking = _block("Br_3", CORE, ("out = self.scale(x)", "out = out + 0", "return out"))
    classes = [minus, minus_lacking, twice, twice_lacking]
    assert defaulted_children(classes, {}) == classes
    assert defaulted_children(classes[:2], {})[1].forward_lines[0] == "i = 0"


def test_classes_lacking_the_child_each_read_their_own_default() -> None:
    forward = ("i = self.identity(x)", "out = self.scale(x) + i", "return out")
    lacking = [_block(f"Own_{k}", CORE, ("out = self.scale(x) + " + str(k), "return out")) for k in (1, 0)]
    out = defaulted_children([_block("Own", (IDENTITY, *CORE), forward), *lacking], {})
    assert [c.forward_lines[0] for c in out] == ["i = 1", "i = 1", "i = 0"]
    assert all(c.forward_lines[1:] == out[0].forward_lines[1:] for c in out)


BRANCH = "self.branch = nn.ModuleList([nn.Linear(4, 4)])"
BRANCHED = ("b = self.branch[0](x)", "out = out + b")
JOINED = (
    "i = 0", "if self.identity is not None:", "    i = self.identity(x)", "s = 0", "if self.scale is not None:",
    "    s = self.scale(x)", "out = s + i", *BRANCHED, "return self.act(out)",
)  # fmt: skip
WITH_BRANCH = [
    _block(c.name, (*c.init_lines[:-1], BRANCH, *TAIL), (*c.forward_lines[:-1], *BRANCHED, c.forward_lines[-1]))
    for c in (BOTH, NO_IDENTITY, NO_SCALE)
]  # fmt: skip
RUNS = [
    # fastvit's token mixer norm: the identity norm alone, its value named after the input
    ("identity_alone", ("x = self.identity(x)", "out = 0 + x", "return self.act(out)"),
     (*JOINED[:7], JOINED[-1]), (IDENTITY, "self.scale = None", *TAIL)),
    # another number where the default's 0 is read: another code
    ("other_number", ("x = self.identity(x)", "out = 1 + x", "return self.act(out)"), None, None),
    # the run's lines left out and more: another code
    ("more_left_out", ("x = self.identity(x)", "return self.act(x)"), None, None),
]


@pytest.mark.parametrize(("name", "forward", "joined", "init"), RUNS, ids=[r[0] for r in RUNS])
def test_a_class_lacking_a_run_of_children_too_runs_the_joined_code_without_it(name, forward, joined, init) -> None:
    """It builds the defaulted children it lacks as None; optional_children.py puts the run under `if` later."""
    lacking = _block("Mo_9", (IDENTITY, *TAIL), forward)
    out = defaulted_children([*WITH_BRANCH, lacking], {})
    assert [c.forward_lines for c in out[:3]] == [JOINED] * 3
    if joined is None:
        assert out[3] == lacking
        return
    assert out[3].forward_lines == joined
    assert out[3].init_lines == init
    assert out[3].whole_children >= {"identity", "scale"}


def test_a_run_holding_the_return_is_not_left_out() -> None:
    ending = [_block(c.name, c.init_lines, (*c.forward_lines[:-3], "b = self.branch[0](x)", "return self.act(out + b)")) for c in WITH_BRANCH]
    lacking = _block("Mo_9", (IDENTITY, *TAIL), ("x = self.identity(x)", "return self.act(0 + x)"))
    assert defaulted_children([*ending, lacking], {})[3] == lacking


@pytest.mark.parametrize(("line", "joins"), [
    ("out = i + 0", True),  # torch.export's `add(i, 0)` for the source's `0 + i`: the same sum
    ("out = i * 0", False),  # another operation
    ("out = i - 0", False),  # not the same either way round
])  # fmt: skip
def test_a_default_added_the_other_way_round_is_read_as_the_holder_writes_it(line: str, joins: bool) -> None:
    lacking = _block("Mo_2", (IDENTITY, *TAIL), ("i = self.identity(x)", line, "return self.act(out)"))
    out = defaulted_children([BOTH, NO_IDENTITY, lacking], {})
    assert (out[2].forward_lines == out[0].forward_lines) is joins
    assert (out[0].forward_lines[3:] == ("s = 0", "if self.scale is not None:", "    s = self.scale(x)", "out = s + i", "return self.act(out)")) is joins
