"""Grad and autocast regions of torch.export graphs written as `with` blocks (with_blocks.py, scopes.py):
the export computes what the graph computes, bits and `requires_grad` alike, and exporting its torch.export gives it again."""

from __future__ import annotations

import importlib
import operator
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import torch
from torch import fx, nn
from torch.utils import _pytree as pytree

import fxexport


class Frozen(nn.Module):
    """A no_grad block between two layers run in the mode of the caller's autocast."""

    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 4)
        self.lin2 = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin1(x)
        with torch.no_grad():
            s = y.abs().mean()
        return self.lin2(y) * s


class CastAroundFrozen(nn.Module):
    """torch.export cuts the root's autocast block in three where the child's no_grad block starts and
    ends: one block around the call, the child's layers run in bfloat16."""

    def __init__(self) -> None:
        super().__init__()
        self.child = Frozen()

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.child(x)
        return y.float()


class CastBlocks(nn.Module):
    """The same around a loop of three such children: one class for them, the block around the loop."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Frozen(), Frozen(), Frozen()])

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for block in self.blocks:
                x = block(x)
        return x.float()


class Thawed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 4)
        self.lin2 = nn.Linear(4, 4)

    def forward(self, x):
        a = self.lin1(x)
        with torch.enable_grad():
            b = self.lin2(a)
        return b, a


class FrozenAroundThawed(nn.Module):
    """enable_grad inside the root's no_grad: torch.export keeps a no_grad block around the first layer
    only, which the child's forward writes (its call is not all inside it)."""

    def __init__(self) -> None:
        super().__init__()
        self.child = Thawed()

    def forward(self, x):
        with torch.no_grad():
            b, a = self.child(x)
        return b, a


class CastSequential(nn.Module):
    """Layers whose input is bfloat16 inside the block: restored (checked in the block's mode), called as one Sequential."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):
            y = self.seq(x)
        return y.float() + x


class DeadInBlock(nn.Module):
    """A value computed in a block that nothing reads: left out, as torch.export leaves it out elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            unused = self.lin(x) * 3  # noqa: F841
        return self.out(x)


class CastInCast(nn.Module):
    """A child's autocast block, cut in two by a no_grad inside it, called in the root's block of the same mode."""

    def __init__(self) -> None:
        super().__init__()
        self.child = CastChild()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            a = self.lin(x)
            b = self.child(x)
        return a.float() + b


class CastChild(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.lin(x)
            with torch.no_grad():
                z = y * 2 + 1
        return z.float() + y.float()


@dataclass(frozen=True)
class Case:
    name: str
    model: Callable[[], nn.Module]
    counts: dict[str, int] = field(default_factory=dict)  # text -> times module.py's code has it


_CAST = 'with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):'
CASES = [
    Case("cast_around_frozen", CastAroundFrozen, {_CAST: 1, "with torch.no_grad():": 0, "self.lin2 = nn.Linear(4, 4)": 1}),
    Case("cast_blocks", CastBlocks, {_CAST: 1, "class Frozen(": 1, "class Frozen_1": 0, "for block in self.blocks:": 1}),
    Case("frozen_around_thawed", FrozenAroundThawed, {"with torch.no_grad():": 1, "with torch.enable_grad():": 0}),
    Case("cast_sequential", CastSequential, {'with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):': 1, "nn.Sequential(": 1, "F.linear": 0}),
    Case("dead_in_block", DeadInBlock, {"with torch.no_grad():": 0, "self.lin(": 0}),
    Case("cast_in_cast", CastInCast, {_CAST: 2}),
]


def _export(model: nn.Module, args: tuple[torch.Tensor, ...]) -> fx.GraphModule:
    return torch.export.export(model.eval(), args).module()


def _code(text: str) -> str:
    """module.py without its comments (re-exports quote the export's own lines)."""
    return re.sub(r"^ *#.*\n", "", text, flags=re.MULTILINE)


@dataclass
class Exported:
    gm: fx.GraphModule
    text: str
    model: nn.Module
    again: str  # module.py of the torch.export of the export


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Exported]]:
    root = tmp_path_factory.mktemp("with_blocks")
    sys.path.insert(0, str(root))
    out = {}
    for case in CASES:
        torch.manual_seed(0)
        gm = _export(case.model(), (_input(),))
        fxexport.export(gm, root / case.name)
        model = importlib.import_module(case.name).FxModule()
        fxexport.export(_export(model, (_input(),)), root / f"{case.name}_again")
        texts = [(root / folder / "module.py").read_text() for folder in (case.name, f"{case.name}_again")]
        out[case.name] = Exported(gm, texts[0], model, texts[1])
    yield out
    sys.path.remove(str(root))


def _input() -> torch.Tensor:
    return torch.randn(3, 4, generator=torch.Generator().manual_seed(1), requires_grad=True)


def _leaves(value: object) -> list[torch.Tensor]:
    return [v for v in pytree.tree_leaves(value) if isinstance(v, torch.Tensor)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_outputs_are_the_graphs_bit_for_bit_with_their_grad_flags(case: Case, exported: dict[str, Exported]) -> None:
    item = exported[case.name]
    ours, theirs = _leaves(item.model(_input())), _leaves(item.gm(_input()))
    assert [(t.dtype, t.requires_grad) for t in ours] == [(t.dtype, t.requires_grad) for t in theirs]
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_regions_are_with_blocks(case: Case, exported: dict[str, Exported]) -> None:
    code = _code(exported[case.name].text)
    assert "torch.ops" not in code and "submod" not in code
    assert {t: code.count(t) for t in case.counts} == case.counts


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_exporting_the_export_gives_it_again(case: Case, exported: dict[str, Exported]) -> None:
    assert _code(exported[case.name].again) == _code(exported[case.name].text)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_state_dict_keys_are_the_graphs(case: Case, exported: dict[str, Exported]) -> None:
    assert list(exported[case.name].model.state_dict()) == list(exported[case.name].gm.state_dict())


def _marked(*steps: str) -> fx.GraphModule:
    """A graph of `x * 2` steps between mode changes as dynamo records them: "off"/"on" set the grad
    mode, "enter" enters an autocast, "exit" exits the last entered."""
    graph = fx.Graph()
    value = graph.placeholder("x")
    entered: list[fx.Node] = []
    for step in steps:
        if step in ("off", "on"):
            graph.call_function(torch._C._set_grad_enabled, (step == "on",))
        elif step == "enter":
            entered.append(graph.call_function(torch.amp.autocast_mode._enter_autocast, ("cpu", None, False, None)))
        elif step == "exit":
            graph.call_function(torch.amp.autocast_mode._exit_autocast, (entered.pop(),))
        else:
            value = graph.call_function(operator.mul, (value, 2))
    graph.output(value)
    return fx.GraphModule(nn.Module(), graph)


MARKED = [
    # steps, the blocks of each `x * 2` (by code), markers left
    (("off", "mul", "on", "mul"), [("torch.no_grad()",), ()], 0),
    (("off", "mul", "on", "mul", "off", "mul", "on"), [("torch.no_grad()",), (), ("torch.no_grad()",)], 0),
    (("enter", "off", "mul", "on", "mul", "exit"), [('torch.autocast("cpu", enabled=False)', "torch.no_grad()"), ('torch.autocast("cpu", enabled=False)',)], 0),
    (("off", "mul"), [()], 1),  # never restored: a call, not a block
    (("off", "mul", "off", "on"), [()], 3),  # setting the mode it has: not a block
    (("enter", "off", "mul", "exit", "on"), [()], 4),  # crossed, not nested
]


@pytest.mark.parametrize(("steps", "blocks", "left"), MARKED, ids=["no_grad", "two_blocks", "nested", "never_restored", "same_mode", "crossed"])
def test_dynamo_mode_calls_are_blocks_only_where_they_pair_up_nested(steps: tuple[str, ...], blocks: list[tuple[str, ...]], left: int) -> None:
    from fxexport.scopes import scopes_of
    from fxexport.with_blocks import inline_with_blocks

    graph = inline_with_blocks(_marked(*steps)).graph
    muls = graph.find_nodes(op="call_function", target=operator.mul)
    assert [tuple(s.code for s in scopes_of(n)) for n in muls] == blocks
    assert sum(n.op == "call_function" and n.target is not operator.mul for n in graph.nodes) == left
