"""rolled.py: code traced once per child of a container is one loop, only where every period runs the
same code on its own values, the value the period before left and values made before the run."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.layers import restore_layers
from fxexport.rolled import first_of, loop_of, loop_variable, rolled
from fxexport.split import split
from tests import models
from tests.packages import imported


class _Pairs(nn.Module):
    """Each step reads the value two steps back too."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        before = x
        for lin in self.lins:
            x, before = torch.relu(lin(x)) + before, x
        return x


class _Partial(nn.Module):
    """A loop over all but the last child, called after it on its own."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins[:3]:
            x = torch.relu(lin(x)) * 0.5
        return self.lins[3](x) + 1.0


class _Calls(nn.Module):
    """Calls alone, one a child: a chain (loops.py), not a run."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins:
            x = lin(x)
        return x


class _Switching(nn.Module):
    """The first two steps call one shared module, the last two another."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))
        self.a, self.b = nn.ReLU(), nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, lin in enumerate(self.lins):
            x = (self.a if i < 2 else self.b)(lin(x)) * 0.5
        return x


class _SequentialSteps(nn.Module):
    """Code around each child of a Sequential the forward never calls whole: the export holds a ModuleList."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.seq = nn.Sequential(*(nn.Linear(4, 4) for _ in range(depth)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.seq:
            x = lin(x).relu() + x
        return x


class _FromNumber(nn.Module):
    """Sums its children's outputs from a number (MobileOne's branches where it builds no scale branch:
    `out = 0`, then `out += conv(x)` per branch)."""

    def __init__(self, start: float = 0) -> None:
        super().__init__()
        self.start = start
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.start
        for lin in self.lins:
            out = out + lin(x)
        return out


class _TwoNumbers(nn.Module):
    """The first step reads two numbers where the later read the value the step before left twice."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor | None = None
        for lin in self.lins:
            out = torch.add(lin(x) * (0 if out is None else out), 1 if out is None else out)
        assert out is not None
        return out


class _SumMany(nn.Module):
    """Its children's outputs summed from 0 (`sum`), then an identity branch's or 0 (review-v's v_sum_many)."""

    def __init__(self, identity: bool) -> None:
        super().__init__()
        self.identity = nn.Linear(4, 4) if identity else None
        self.fcs = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        i: torch.Tensor | int = 0
        if self.identity is not None:
            i = self.identity(x)
        return sum(f(x) for f in self.fcs) + i + x


def _sum_blocks() -> nn.Module:
    """Blocks with and without their identity branch (helper-67's F5: the loop's value named otherwise again)."""
    return nn.Sequential(_SumMany(True), _SumMany(False))


def _split(model: nn.Module) -> fx.GraphModule:
    """The root as collect sees it: its containers known again (a GraphModule holds plain modules)."""
    return split(restore_layers(fx.symbolic_trace(model))).root


def _two() -> nn.Module:
    return models.LoopedLinears(depth=2)


CASES: list[tuple[str, Callable[[], nn.Module], int, int]] = [  # (name, model, loops, body nodes)
    ("code around each call", models.LoopedLinears, 1, 4),
    ("the call inside the code", models.LoopedPreNorm, 1, 5),
    ("an unpacked result", models.LoopedGates, 1, 7),
    ("a number per step", models.NumberedSteps, 0, 0),
    ("every step kept", models.KeptSteps, 1, 3),
    ("two steps back", _Pairs, 0, 0),
    ("not every child", _Partial, 0, 0),
    ("two children of a ModuleList", _two, 1, 4),  # its source loops over it: blocks of 2 and 3 are one code
    ("two children of a Sequential never called whole", lambda: _SequentialSteps(2), 1, 3),  # held as a ModuleList
    ("calls alone", _Calls, 0, 0),
    ("from zero", _FromNumber, 1, 2),
    ("from a float", lambda: _FromNumber(0.5), 1, 2),
    ("from two numbers", _TwoNumbers, 0, 0),
    ("a shared module that changes", _Switching, 0, 0),
]


@pytest.mark.parametrize("name,model,count,length", CASES, ids=[c[0] for c in CASES])
def test_only_runs_of_one_code_over_a_whole_container_are_rolled(name: str, model: Callable[[], nn.Module], count: int, length: int) -> None:
    gm = _split(model())
    found = rolled(gm)
    assert len(found.rolls) == count
    if not count:
        assert found.graph is gm.graph
        return
    (node, roll), = found.rolls.items()
    assert node.target is loop_of
    body = [n for n in roll.body.nodes if n.op not in ("placeholder", "output")]
    assert len(body) == length
    assert sum(n.op == "call_module" and str(n.target) == roll.call for n in body) == 1


class _SomeSteps(nn.Module):
    """Reads the input at the index in the first two steps, then at 1 again: not the index throughout."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x[:, 0]
        for i, lin in enumerate(self.lins):
            h = torch.tanh(lin(h) + x.select(1, min(i, 1)))
        return h


class _OddFirst(nn.Module):
    """The first step doubles its split where the others add the one before: more than the combining
    node differs."""

    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(2, 2, 1) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx, spo = x.chunk(4, 1), []
        for i, conv in enumerate(self.convs):
            sp = spx[i] * 2.0 if i == 0 else sp + spx[i]  # noqa: F821
            sp = conv(sp)
            spo.append(sp)
        return torch.cat(spo, 1)


class _Kept(nn.Module):
    """Every step's value kept, read as `order` says: in order, backwards, twice, or the last read again."""

    def __init__(self, order: str) -> None:
        super().__init__()
        self.order = order
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept, first = [], x * 0.5
        for lin in self.lins:
            x = torch.relu(lin(x))
            kept.append(x)
        if self.order == "backwards":
            return torch.cat(kept[::-1], -1)
        if self.order == "twice":
            return torch.cat(kept + kept, -1)
        if self.order == "last again":
            return torch.cat(kept, -1).sum(-1, keepdim=True) + x
        return torch.cat([first] + kept, -1)


class _Zipped(nn.Module):
    """Steps zipped over two ModuleLists, the second longer (zip stops at the first's end, and a
    GraphModule holds only the children its graph calls, in the order it calls them), or one of its
    children called twice (`repeating`)."""

    def __init__(self, repeating: bool) -> None:
        super().__init__()
        self.repeating = repeating
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.norms = nn.ModuleList(nn.LayerNorm(4) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept = []
        for lin, norm in zip(self.lins, [self.norms[0], self.norms[1], self.norms[0]] if self.repeating else self.norms):
            x = norm(lin(x))
            kept.append(x)
        return torch.cat(kept, -1)


def _split_scales() -> nn.Module:
    return models.SplitScales()


def _first_split_scales() -> nn.Module:
    return models.SplitScales(first=True)


KINDS: list[tuple[str, Callable[[], nn.Module], tuple[bool, bool, int, bool] | None]] = [  # (collected, indexed, zipped, headed)
    ("kept", models.KeptSteps, (True, False, 0, False)),
    ("kept, the input before them", models.StageFeatures, (True, False, 0, False)),
    ("the index as a number", models.SelectedSteps, (False, True, 0, False)),
    ("zipped, indexed, kept, the first alone", _split_scales, (True, True, 1, True)),
    ("zipped, indexed, kept, each alone", _first_split_scales, (True, True, 1, False)),
    ("chunks, the first alone", lambda: models.ChunkedConvs(3), (True, True, 0, True)),
    ("the index at some steps", _SomeSteps, None),
    ("a first step of its own", _OddFirst, None),
    ("kept backwards", lambda: _Kept("backwards"), None),
    ("kept twice", lambda: _Kept("twice"), None),
    ("the last read again", lambda: _Kept("last again"), None),
    ("kept after another", lambda: _Kept("after another"), (True, False, 0, False)),
    ("zipped with a longer list", lambda: _Zipped(False), (True, False, 1, False)),
    ("zipped with a child twice", lambda: _Zipped(True), None),
]


@pytest.mark.parametrize("name,model,kind", KINDS, ids=[k[0] for k in KINDS])
def test_runs_that_keep_their_values_or_read_their_index(name: str, model: Callable[[], nn.Module], kind: tuple[bool, bool, int, bool] | None) -> None:
    found = rolled(_split(model()))
    if kind is None:
        assert not found.rolls
        return
    (node, roll), = found.rolls.items()
    headed = any(n.target is first_of for n in roll.body.nodes)
    assert (roll.collected, roll.indexed, len(roll.zipped), headed) == kind
    assert (node.args[0] is None) == (headed or name.endswith("each alone"))  # no value carried into the first step


def test_the_loop_reads_its_start_and_the_values_made_before_it() -> None:
    gm = _split(models.LoopedPreNorm())
    (node, roll), = rolled(gm).rolls.items()
    x, bias = (n for n in gm.graph.nodes if n.op == "placeholder")
    assert [a.name for a in node.args] == [x.name, bias.name]
    assert [n.target for n in roll.body.find_nodes(op="placeholder")] == ["carried", "invariant_0"]
    assert roll.children == "self.blocks" and roll.variable == "block"


@pytest.mark.parametrize("start", [0, 0.5, -0.0])
def test_a_loop_from_a_number_starts_from_that_number(start: float) -> None:
    (node, _), = rolled(_split(_FromNumber(start))).rolls.items()
    assert type(node.args[0]) is type(start) and repr(node.args[0]) == repr(start)


class _Accumulating(nn.Module):
    """Adds each child's output to the input (`carried`), or to the carried value each child reads
    (`read`), or multiplies them (`products`)."""

    def __init__(self, children: int, kind: str = "carried") -> None:
        super().__init__()
        self.kind = kind
        self.scale = nn.Linear(4, 4)
        self.convs = nn.ModuleList(nn.Linear(4, 4) for _ in range(children))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.scale(x) if self.kind != "read" else x
        for conv in self.convs:
            out = out * conv(x) if self.kind == "products" else out + conv(x)
        return out


class _Chunks(nn.Module):
    """EdgeNeXt's split block (models.ChunkedConvs) with its items taken `before` the loop, or each conv's
    output activated (`act`)."""

    def __init__(self, count: int, before: bool = False, act: bool = False, tail: str = "") -> None:
        super().__init__()
        self.before, self.act, self.tail = before, act, tail
        width = 8 // (count + 1)  # of 8 channels
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(count))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = x.chunk(len(self.convs) + 1, dim=1)
        if self.before:
            spx = tuple(spx[i] for i in range(len(self.convs) + 1))
        spo = []
        for i, conv in enumerate(self.convs):
            sp = spx[i] if i == 0 else sp + spx[i]  # noqa: F821
            sp = conv(sp).relu() if self.act else conv(sp)
            spo.append(sp)
        if self.tail == "stacked":
            return torch.stack(spo).sum(0)
        if self.tail == "last first":
            return torch.cat([spx[-1]] + spo, 1)
        out = torch.cat(spo + [spx[-1]], 1)
        return out.relu() if self.tail == "relu" else out


SINGLE = [  # (name, the module whose loop is given, the module of one child, the loop's start: None where none is rolled)
    ("the same body", lambda: _Accumulating(4), lambda: _Accumulating(1), "a value"),
    ("the same body, a ModuleList of two given", lambda: _Accumulating(2), lambda: _Accumulating(1), "a value"),
    ("another body", lambda: _Accumulating(4, "products"), lambda: _Accumulating(1), None),
    ("the start read as itself too", lambda: _Accumulating(4, "read"), lambda: _Accumulating(1, "read"), None),
    ("MobileOne's branches", lambda: models.BranchBlock(4, 4), lambda: models.BranchBlock(4, 1), "a value"),
    ("MobileOne's branches from zero", lambda: models.BranchBlock(4, 4, scale=False), lambda: models.BranchBlock(4, 1), "a value"),
    ("EdgeNeXt's chunks: the first step of a headed loop, kept", lambda: models.ChunkedConvs(3), lambda: models.ChunkedConvs(1), "none"),
    ("the chunks taken before the step", lambda: _Chunks(3), lambda: _Chunks(1, before=True), "none"),
    ("the chunks of another body", lambda: _Chunks(3), lambda: _Chunks(1, act=True), None),
    ("the chunks, the loop of another body", lambda: _Chunks(3, act=True), lambda: _Chunks(1), None),
]


@pytest.mark.parametrize("name,looping,single,start", SINGLE, ids=[s[0] for s in SINGLE])
def test_a_container_of_one_child_runs_the_loop_another_module_runs_where_its_step_is_that_body(
    name: str, looping: Callable[[], nn.Module], single: Callable[[], nn.Module], start: str | None
) -> None:
    loops = {roll.children: (roll,) for roll in rolled(_split(looping())).rolls.values()}
    assert len(loops) == 1
    gm = _split(single())
    assert not rolled(gm).rolls  # a step alone is no loop by itself
    found = rolled(gm, loops)
    assert bool(found.rolls) == (start is not None)
    if start is not None:
        (node, roll), = found.rolls.items()
        given = next(iter(loops.values()))[0]
        if start == "a value":
            assert isinstance(node.args[0], fx.Node) and node.args[0].op == "call_module"  # from the scale branch's value
        else:
            assert node.args[0] is None  # a headed loop's first step reads no value carried in
        assert roll.call.endswith(".0") and roll.children in loops
        assert (roll.collected, roll.indexed) == (given.collected, given.indexed)
        assert [n.target for n in roll.body.find_nodes(op="placeholder")] == [n.target for n in given.body.find_nodes(op="placeholder")]
        assert [(n.op, n.target) for n in roll.body.nodes if n.op != "call_module"] == [(n.op, n.target) for n in given.body.nodes if n.op != "call_module"]
    assert not rolled(gm, {"self.others": next(iter(loops.values()))}).rolls  # another container's loop


class _Splits(nn.Module):
    """Res2Net's loop over splits, each added to the conv's output before it but where every split goes
    in `alone`; `act`: the conv's output activated."""

    def __init__(self, alone: bool, act: bool = False) -> None:
        super().__init__()
        self.alone, self.act = alone, act
        self.convs = nn.ModuleList(nn.Conv2d(2, 2, 1) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx, spo = x.chunk(4, 1), []
        for i, conv in enumerate(self.convs):
            sp = spx[i] if i == 0 or self.alone else sp + spx[i]  # noqa: F821
            sp = conv(sp).relu() if self.act else conv(sp)
            spo.append(sp)
        return torch.cat(spo + [spx[-1]], 1)


ALONE = [  # (name, the module's loop, the other module's loop, the flag the module's loop reads)
    ("headed, another alone", _Splits(False), _Splits(True), False),
    ("alone, another headed", _Splits(True), _Splits(False), True),
    ("alone, another headed of another body", _Splits(True), _Splits(False, act=True), None),
    ("headed, another headed", _Splits(False), _Splits(False), None),
]


@pytest.mark.parametrize("name,module,other,flag", ALONE, ids=[a[0] for a in ALONE])
def test_a_loop_run_alone_and_one_run_headed_are_one_loop_reading_the_modules_flag(name: str, module: nn.Module, other: nn.Module, flag: bool | None) -> None:
    loops = {roll.children: (roll,) for roll in rolled(_split(other)).rolls.values()}
    (_, roll), = rolled(_split(module), loops).rolls.items()
    choices = [n for n in roll.body.nodes if n.target is first_of]
    assert [c.args[3] if len(c.args) == 4 else None for c in choices] == ([flag] if flag is not None or module.alone is False else [])


@pytest.mark.parametrize("alone", [True, False])
def test_a_loop_reading_the_modules_flag_gives_the_same_bits_and_the_same_code_again(alone: bool, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = nn.Sequential(_Splits(True), _Splits(False), _Splits(False)).eval() if alone else nn.Sequential(_Splits(False), _Splits(True)).eval()
    x = torch.randn(2, 8, 3, 3, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source)
    fxexport.export(gm, tmp_path / "first")
    text = (tmp_path / "first" / "module.py").read_text()
    assert "if i == 0 or self.alone:" in text and text.count("class Splits") == 1, text
    with imported(tmp_path / "first") as package, torch.no_grad():
        ours = package.FxModule()
        assert torch.equal(ours(x), gm(x))
        fxexport.export(fx.symbolic_trace(ours), tmp_path / "again")
    assert (tmp_path / "again" / "module.py").read_text().split("\n", 4)[4] == text.split("\n", 4)[4]


class _TwoFlags(nn.Module):
    """Two loops over splits, each alone or headed by a flag of its own (helper-67's F1: one attribute for
    both gave the second loop the first's flag)."""

    def __init__(self, f1: bool, f2: bool) -> None:
        super().__init__()
        self.f1, self.f2 = f1, f2
        self.conv1 = nn.Conv2d(8, 8, 1)
        self.ca = nn.ModuleList([nn.Conv2d(2, 2, 1) for _ in range(3)])
        self.cb = nn.ModuleList([nn.Conv2d(2, 2, 1) for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = torch.split(self.conv1(x), 2, 1)
        oa, ob = [], []
        for i, conv in enumerate(self.ca):
            if i == 0 or self.f1:
                sp = spx[i]
            else:
                sp = sp + spx[i]
            sp = conv(sp)
            oa.append(sp)
        for i, conv in enumerate(self.cb):
            if i == 0 or self.f2:
                sq = spx[i]
            else:
                sq = sq + spx[i]
            sq = conv(sq)
            ob.append(sq)
        return torch.cat(oa + ob, 1)


class _Combined(nn.Module):
    """Res2Net's loop, alone or headed, its later steps adding or multiplying (helper-67's F2: the headed
    classes, one `__init__`, became a class and its subclass, and the flag was taken out of the first only)."""

    def __init__(self, first: bool, mul: bool) -> None:
        super().__init__()
        self.first, self.mul = first, mul
        self.conv1 = nn.Conv2d(8, 8, 1)
        self.convs = nn.ModuleList([nn.Conv2d(2, 2, 1) for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = torch.split(self.conv1(x), 2, 1)
        spo = []
        for i, conv in enumerate(self.convs):
            if i == 0 or self.first:
                sp = spx[i]
            else:
                sp = sp * spx[i] if self.mul else sp + spx[i]
            sp = conv(sp)
            spo.append(sp)
        return torch.cat(spo + [spx[3]], 1)


class _Each(nn.Module):
    """Each block on the input, their outputs side by side."""

    def __init__(self, *blocks: nn.Module) -> None:
        super().__init__()
        self.a, self.b, self.c = (*blocks, nn.Identity())[:3]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.a(x), self.b(x), self.c(x)], 1)


FLAGGED = [("two loops, two flags", lambda: _Each(_TwoFlags(True, False), _TwoFlags(False, True)), ("self.f1 = f1", "self.f2 = f2")),
           ("a flag taken out of a class another subclasses", lambda: _Each(_Combined(True, False), _Combined(False, True), _Combined(False, False)), ())]  # fmt: skip


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
@pytest.mark.parametrize("name,model,lines", FLAGGED, ids=[f[0] for f in FLAGGED])
def test_loops_reading_flags_give_the_same_bits(name: str, model: Callable[[], nn.Module], lines: tuple[str, ...], producer: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = model().eval()
    x = torch.randn(2, 8, 3, 3, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "out")
    text = (tmp_path / "out" / "module.py").read_text()
    assert all(line in text for line in lines)
    with imported(tmp_path / "out") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(x), gm(x))


ONE_STEP = [  # (name, blocks of one conv and of three, producer, their classes)
    ("joined", lambda: _Each(_Chunks(1), _Chunks(3), _Chunks(1)), "symbolic_trace", 1),
    ("joined, by torch.export", lambda: _Each(_Chunks(1), _Chunks(3), _Chunks(1)), "export", 1),
    # no class of the loop joins the one-conv block: a trace of the export finds no module of its class looping,
    # so its step stays unrolled (helper-70's finding 1)
    ("its output activated", lambda: _Each(_Chunks(3), _Chunks(1, tail="relu")), "symbolic_trace", 2),
    ("its outputs stacked", lambda: _Each(_Chunks(3), _Chunks(1, tail="stacked")), "symbolic_trace", 2),
    ("the last split first", lambda: _Each(_Chunks(3), _Chunks(1, tail="last first")), "symbolic_trace", 2),
]


@pytest.mark.parametrize("name,model,producer,classes", ONE_STEP, ids=[x[0] for x in ONE_STEP])
def test_a_one_step_loop_gives_the_same_bits_and_the_same_code_again(
    name: str, model: Callable[[], nn.Module], producer: str, classes: int, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    source = model().eval()
    x = torch.randn(2, 8, 3, 3, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "first")
    text = (tmp_path / "first" / "module.py").read_text()
    assert text.count("class Chunks") == classes and text.count("for i, conv in enumerate(self.convs):") == 1, text
    with imported(tmp_path / "first") as package, torch.no_grad():
        ours = package.FxModule()
        assert torch.equal(ours(x), gm(x))
        again = fx.symbolic_trace(ours) if producer == "symbolic_trace" else torch.export.export(ours, (x,)).module()
        fxexport.export(again, tmp_path / "again")
    if producer == "symbolic_trace":  # an export's notes name the lines they came from: module.py's, again
        assert (tmp_path / "again" / "module.py").read_text().split("\n", 4)[4] == text.split("\n", 4)[4]


class _Summed(nn.Module):
    """A sum over branches from 0 or from a scale branch, added in place as the source wrote it (`out += conv(x)`):
    torch.export records `conv(x) + 0` for the first branch from 0, then `out.add_(...)`."""

    def __init__(self, count: int, scale: bool) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(8, 8, 1) for _ in range(count))
        self.scale = nn.Conv2d(8, 8, 1) if scale else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.scale(x) if self.scale is not None else 0
        for conv in self.convs:
            out += conv(x)
        return out  # type: ignore[return-value]


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
def test_branches_added_in_place_from_zero_are_the_loop_of_those_from_a_branch(producer: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = _Each(_Summed(3, True), _Summed(3, False), _Summed(1, False)).eval()
    x = torch.randn(2, 8, 3, 3, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "out")
    text = (tmp_path / "out" / "module.py").read_text()
    assert text.count("class Summed") == 1 and text.count("for conv in self.convs:") == 1 and "out = 0" in text, text
    assert ("out += conv(x)" in text) == (producer == "export") and "+ 0" not in text and "[0]" not in text
    with imported(tmp_path / "out") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(x), gm(x))


class _AddedThen(nn.Module):
    """Branches added in place from 0 with more done to the sum in each step (helper-71's finding 1: `then`
    "mul", a loop whose step `out = out.add_(conv(x)) * 2` from `out = 0` failed) or a first branch activated
    and the sum activated per step (finding 2, `then` "relu")."""

    def __init__(self, then: str) -> None:
        super().__init__()
        self.then = then
        self.convs = nn.ModuleList(nn.Conv2d(8, 8, 1) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.then == "relu":
            out = (self.convs[0](x) + 0).relu()
            for conv in self.convs[1:]:
                out = out.add_(conv(x)).relu()
            return out
        total = 0
        for conv in self.convs:
            total += conv(x)
            total = total * 2
        return total  # type: ignore[return-value]


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
@pytest.mark.parametrize("then", ["mul", "relu"])
def test_a_sum_added_in_place_with_more_done_in_each_step_gives_the_same_bits(then: str, producer: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = _AddedThen(then).eval()
    x = torch.randn(2, 8, 3, 3, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "out")
    text = (tmp_path / "out" / "module.py").read_text()
    assert not ("= 0\n" in text and ".add_(" in text), text  # no loop from 0 adding in place by the method: 0 has none
    with imported(tmp_path / "out") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(x), gm(x))


def test_the_rolled_graph_runs_everything_else_as_before() -> None:
    gm = _split(models.LoopedPreNorm())
    graph = rolled(gm).graph
    ops = [n.op for n in graph.nodes]
    assert ops == ["placeholder", "placeholder", "call_function", "call_function", "output"]  # the loop, then `out - x`
    assert gm.graph.nodes.__len__() == 3 * 5 + 4  # the source graph is left as it was


class _Returning(nn.Module):
    """Returns `count` values."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.lin(x)
        return tuple(y * (i + 1) for i in range(self.count))


class _Arities(nn.Module):
    """A loop over generated blocks that return two, three and four values, the first two read."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([fx.symbolic_trace(_Returning(k)) for k in (2, 3, 4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            outs = block(x)
            x = torch.tanh(outs[0] - outs[1])
        return x


class _KeepingBlocks(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualified_name: str) -> bool:
        return isinstance(m, fx.GraphModule) or super().is_leaf_module(m, qualified_name)


def test_a_loop_does_not_unpack_results_its_children_give_in_other_lengths(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = _Arities().eval()
    gm = fx.GraphModule(model, _KeepingBlocks().trace(model))
    fxexport.export(gm, tmp_path / "arities")
    assert "for block in self.blocks:" in (tmp_path / "arities" / "module.py").read_text()
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    with imported(tmp_path / "arities") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(x), gm(x))


VARIABLES = [("lins", "lin"), ("blocks", "block"), ("branches", "branch"), ("boxes", "box"), ("bias", "layer"),
             ("class_", "layer"), ("glass", "layer"), ("status", "layer"), ("inner", "layer"), ("res", "layer"),
             ("bns", "bn"), ("fcs", "fc"), ("ops", "layer"), ("xs", "layer")]  # fmt: skip


@pytest.mark.parametrize("container,variable", VARIABLES)
def test_the_loop_variable_is_the_container_in_the_singular(container: str, variable: str) -> None:
    assert loop_variable(container) == variable


def _swap_halves(h: torch.Tensor) -> torch.Tensor:
    a, b = h.chunk(2, dim=-1)
    return torch.cat([b, a], -1)


STEPS: list[Callable[..., torch.Tensor]] = [  # (module, value, input, bias) -> value: code around each call
    lambda m, h, x, bias: torch.relu(h), lambda m, h, x, bias: h * 0.5, lambda m, h, x, bias: h - x,
    lambda m, h, x, bias: h + bias, lambda m, h, x, bias: _swap_halves(h), lambda m, h, x, bias: torch.tanh(h) * h,
    lambda m, h, x, bias: h + m.norm(h), lambda m, h, x, bias: h.transpose(0, 1).contiguous().transpose(0, 1),
    lambda m, h, x, bias: -h, lambda m, h, x, bias: torch.clamp(h, -2.0, 2.0), lambda m, h, x, bias: h.add_(0.25),
]  # fmt: skip


class _Drawn(nn.Module):
    """A loop over Linears with code drawn from STEPS before and after each call."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        draw = random.Random(seed)
        self.before = draw.sample(STEPS, draw.randint(0, 2))
        self.after = draw.sample(STEPS, draw.randint(1, 3))
        self.norm = nn.LayerNorm(8)
        self.lins = nn.ModuleList(nn.Linear(8, 8) for _ in range(draw.randint(3, 5)))
        self.reads_input_after = draw.random() < 0.5

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        h = x * 2.0
        for lin in self.lins:
            for step in self.before:
                h = step(self, h, x, bias)
            h = lin(h)
            for step in self.after:
                h = step(self, h, x, bias)
        return h - x if self.reads_input_after else h


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
def test_drawn_loops_are_rolled_and_give_the_same_bits(seed: int, producer: str, tmp_path: Path) -> None:
    torch.manual_seed(seed)
    model = _Drawn(seed).eval()
    args = (torch.randn(4, 8, generator=torch.Generator().manual_seed(seed)), torch.randn(8, generator=torch.Generator().manual_seed(seed + 1)))
    gm = fx.symbolic_trace(model) if producer == "symbolic_trace" else torch.export.export(model, args).module()
    fxexport.export(gm, tmp_path / "drawn")
    assert "for lin in self.lins:" in (tmp_path / "drawn" / "module.py").read_text()
    with imported(tmp_path / "drawn") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(*args), gm(*args))


class _DrawnScan(nn.Module):
    """A loop over Linears (zipped with LayerNorms or not) over the input's slices by the loop's index
    (`parts[i]`), with code drawn from STEPS after each call; each step's value kept in a list or not, the
    first step taking its slice alone (Res2Net's) or adding it to a start."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        draw = random.Random(seed)
        self.count = draw.randint(2, 4)
        self.keep = draw.random() < 0.6
        self.alone_first = draw.random() < 0.5
        self.after = draw.sample(STEPS, draw.randint(0, 2))
        self.norm = nn.LayerNorm(8)
        self.lins = nn.ModuleList(nn.Linear(8, 8) for _ in range(self.count))
        self.norms = nn.ModuleList(nn.LayerNorm(8) for _ in range(self.count)) if draw.random() < 0.5 else None

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        parts = x.unbind(0)
        base = parts[-1]
        kept, h = [], base * 2.0
        for i, lin in enumerate(self.lins):
            h = parts[i] if self.alone_first and i == 0 else h + parts[i]
            h = lin(h)
            h = self.norms[i](h) if self.norms is not None else h
            for step in self.after:
                h = step(self, h, base, bias)
            if self.keep:
                kept.append(h)
        return torch.cat(kept + [base], -1) if self.keep else h


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
def test_drawn_loops_keeping_values_by_the_index_are_rolled_and_give_the_same_bits(seed: int, producer: str, tmp_path: Path) -> None:
    torch.manual_seed(seed)
    model = _DrawnScan(seed).eval()
    generator = torch.Generator().manual_seed(seed)
    args = (torch.randn(model.count + 1, 4, 8, generator=generator), torch.randn(8, generator=generator))
    gm = fx.symbolic_trace(model) if producer == "symbolic_trace" else torch.export.export(model, args).module()
    fxexport.export(gm, tmp_path / "drawn")
    text = (tmp_path / "drawn" / "module.py").read_text()
    if model.keep or model.count >= 3:
        assert "enumerate(" in text and ("if i == 0:" in text) == model.alone_first and ("outs.append(" in text) == model.keep
    with imported(tmp_path / "drawn") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(*args), gm(*args))


class _TwoKeptLoops(nn.Module):
    """Two loops keeping their values in one list, read once."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.b = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs, y = [], x * 2.0
        for lin in self.a:
            x = lin(x)
            outs.append(x)
        for lin in self.b:
            y = lin(y)
            outs.append(y)
        return torch.cat(outs, 1)


class _SharedOther(nn.Module):
    """The first step takes alone a value the step reads again after its combining node: computed once."""

    def __init__(self, draw: bool) -> None:
        super().__init__()
        self.draw = draw
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, lin in enumerate(self.lins):
            t = torch.rand_like(x) if self.draw else self.proj(x)
            h = t if i == 0 else h + t  # noqa: F821
            h = lin(h) * t
        return h


class _CatFirst(nn.Module):
    """The combining node reads the split's item inside a list."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(4, 4), nn.Linear(8, 4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx, outs = torch.split(x, 4, 1), []
        for i, lin in enumerate(self.lins):
            h = spx[i] if i == 0 else torch.cat([h, spx[i]], 1)  # noqa: F821
            h = lin(h)
            outs.append(h)
        return torch.cat(outs, 1)


class _FixedChild(nn.Module):
    """A child of a zipped container called at the same index in every step (not the loop's)."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.norms = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin, norm in zip(self.lins, self.norms):
            x = torch.relu(norm(lin(x))) + self.norms[1](x * 0.5)
        return x


class _FixedFirst(nn.Module):
    """Each step calls the container's first child, then its own: two calls over the whole container
    in the body, no loop over it inside the loop."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for lin in self.lins:
            x = lin(self.lins[0](x))
            outs.append(x)
        return torch.cat(outs, 1)


class _NamedLikeBuiltins(nn.Module):
    """Inputs named like the builtins a loop calls."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.b = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor, enumerate: torch.Tensor, zip: torch.Tensor, tuple: torch.Tensor) -> torch.Tensor:
        outs = []
        for k in range(3):
            x = self.b[k](self.a[k](x)) * k + enumerate * zip - tuple
            outs.append(x)
        return torch.cat(outs, 1)

    def inputs(self) -> tuple[torch.Tensor, ...]:
        generator = torch.Generator().manual_seed(1)
        return tuple(torch.randn(2, 4, generator=generator) for _ in range(4))


class _DeadReader(nn.Module):
    """A value nothing uses reads the last step's (symbolic_trace keeps it; no export writes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for lin in self.lins:
            x = lin(x)
            outs.append(x)
        unused = x * 2  # noqa: F841
        return torch.cat(outs, 1)


REVIEWED = [("two loops, one list", _TwoKeptLoops), ("drawn once", lambda: _SharedOther(True)), ("a layer run once", lambda: _SharedOther(False)),
            ("inside a list", _CatFirst), ("a fixed child", _FixedChild), ("a fixed first child", _FixedFirst),
            ("inputs named like builtins", _NamedLikeBuiltins), ("a dead reader", _DeadReader), ("from zero", _FromNumber),
            ("from a float", lambda: _FromNumber(-0.0)), ("from zero, then a default", _sum_blocks)]  # fmt: skip


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
@pytest.mark.parametrize("name,model", REVIEWED, ids=[r[0] for r in REVIEWED])
def test_reviewed_loops_give_the_same_bits_and_the_same_code_again(name: str, model: Callable[[], nn.Module], producer: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = model().eval()
    args = (torch.randn(2, 8 if name == "inside a list" else 4, generator=torch.Generator().manual_seed(1)),)
    args = source.inputs() if isinstance(source, _NamedLikeBuiltins) else args
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, args).module()
    fxexport.export(gm, tmp_path / "first")
    with imported(tmp_path / "first") as package, torch.no_grad():
        ours = package.FxModule()
        torch.manual_seed(2)
        expected = gm(*args)
        torch.manual_seed(2)
        assert torch.equal(ours(*args), expected)
        if producer == "symbolic_trace":
            fxexport.export(fx.symbolic_trace(ours), tmp_path / "again")
            first, again = ((tmp_path / f / "module.py").read_text().split("\n", 4)[4] for f in ("first", "again"))
            assert again == first


class _Returned(nn.Module):
    """Returns every step's value, as a tuple, a list or after the input."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...] | list[torch.Tensor]:
        outs, first = [], x
        for lin in self.lins:
            x = torch.relu(lin(x))
            outs.append(x)
        return tuple(outs) if self.kind == "tuple" else outs if self.kind == "list" else (first, *outs)


RETURNED = [("tuple", "return tuple(outs)"), ("list", "return outs"), ("input first", "return tuple([x] + outs)")]


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
@pytest.mark.parametrize("kind,line", RETURNED, ids=[r[0] for r in RETURNED])
def test_a_returned_sequence_of_kept_values_keeps_its_type(kind: str, line: str, producer: str, tmp_path: Path) -> None:
    source = _Returned(kind).eval()
    args = (torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),)
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, args).module()
    fxexport.export(gm, tmp_path / "returned")
    assert line in (tmp_path / "returned" / "module.py").read_text()
    with imported(tmp_path / "returned") as package, torch.no_grad():
        ours, expected = package.FxModule()(*args), gm(*args)
    assert type(ours) is type(expected) and len(ours) == len(expected) and all(map(torch.equal, ours, expected))


class _ProjectedFirst(nn.Module):
    """The first step takes a layer's output alone, the others add it to the step before's."""

    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.proj = nn.Linear(4, 4)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        outs = []
        for i, conv in enumerate(self.convs):
            t = self.proj(y)
            sp = t if i == 0 else sp + t  # noqa: F821
            sp = conv(sp)
            outs.append(sp)
        return torch.cat(outs, 1)


def test_a_first_step_whose_value_has_its_name_already_writes_only_the_later_steps(tmp_path: Path) -> None:
    gm = fx.symbolic_trace(_ProjectedFirst().eval())
    fxexport.export(gm, tmp_path / "first")
    text = (tmp_path / "first" / "module.py").read_text()
    assert re.search(r"^ +(\w+) = self\.proj\(y\)\n +if i > 0:\n +\1 = out \+ \1\n", text, re.MULTILINE), text
    args = (torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),)
    with imported(tmp_path / "first") as package, torch.no_grad():
        assert torch.equal(package.FxModule()(*args), gm(*args))
