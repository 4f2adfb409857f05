"""Forwards emitted once per equal module graph (emitted.py): the same package, fewer emissions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import torch
from torch import fx, nn

import fxexport
import fxexport.collect as collect_stage
from fxexport.emitted import Emissions, _Speller
from fxexport.names import Namespace
from tests import models
from tests.cases import CASES_BY_NAME, traced
from tests.producers import exported


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], fx.GraphModule]
    emitted: int  # forwards emitted but the root's
    without: int  # forwards emitted without the memo: one per module cut out


def _encoder_inputs() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),)


CASES = [
    # six equal Layers: the first's input made by another statement than the others' (a Layer's return)
    Case("traced_chain", CASES_BY_NAME.chain_of_blocks.build, 2, 6),
    # torch.export's graph: the first of `pair` called from another line too
    Case("exported_chain", exported(models.Encoder, _encoder_inputs), 3, 6),
    Case("resnet_like", CASES_BY_NAME.resnet_like.build, 4, 4),
    Case("numbered_blocks", CASES_BY_NAME.numbered_blocks.build, 7, 9),
    # equal blocks whose inputs were made by other statements (an item, a plain value): named apart
    Case("inputs_from_other_statements", exported(models.PairedCallers, lambda: (torch.randn(4, 4, generator=torch.Generator().manual_seed(1)),)), 2, 2),
    # stages whose blocks share a class but not a graph: one rolls its blocks into a loop, the other not
    Case("children_of_one_class_apart", traced(models.ProbedStages), 5, 8),
]


class _EveryTime:
    """No memo: every module's forward emitted."""

    def forward(self, gm: fx.GraphModule, path: str, version: object, classes: object, names: object, emit: Callable[[], object]) -> object:
        return emit()


def _export(case: Case, memo: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], int]:
    """The package's sources and how many forwards were emitted for modules other than the root."""
    emitted: list[str] = []
    real = collect_stage.emit_forward

    def counting(gm: fx.GraphModule, *args: object, **kwargs: object) -> object:
        emitted.append(type(gm).__name__)
        return real(gm, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(collect_stage, "emit_forward", counting)
        if not memo:
            patch.setattr(collect_stage, "Emissions", _EveryTime)
        _, sources = fxexport.generate(case.build(), package_name="pkg")
    return sources, len(emitted) - 1


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_module_graph_is_emitted_once(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _export(case, True, monkeypatch)[1] == case.emitted


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_without_the_memo_every_module_is_emitted(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _export(case, False, monkeypatch)[1] == case.without


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_memo_leaves_the_package_as_it_was(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _export(case, True, monkeypatch)[0] == _export(case, False, monkeypatch)[0]


@dataclass(frozen=True)
class Spelling:
    name: str
    first: object
    second: object
    equal: bool


class _Unknown:
    pass


_ONE_UNKNOWN = _Unknown()


def _spellings() -> Iterator[Spelling]:
    yield Spelling("int_float_bool_apart", (1, 1.0), (True, 1), False)
    yield Spelling("signed_zeros_apart", 0.0, -0.0, False)
    yield Spelling("zero_apart_from_one", 0.0, 1.0, False)
    yield Spelling("strings_apart_from_spelled_values", "x", ("x",), False)
    yield Spelling("nan_equal", float("nan"), float("nan"), True)
    yield Spelling("unknown_objects_by_identity", _Unknown(), _Unknown(), False)
    yield Spelling("one_unknown_object_equal", _ONE_UNKNOWN, _ONE_UNKNOWN, True)
    yield Spelling("tensors_by_what_a_graph_records", torch.zeros(2, 3), torch.ones(2, 3), True)
    yield Spelling("tensor_shapes_apart", torch.zeros(2, 3), torch.zeros(3, 2), False)
    yield Spelling("tensor_dtypes_apart", torch.zeros(2), torch.zeros(2, dtype=torch.float64), False)
    yield Spelling("parameters_apart_from_tensors", nn.Parameter(torch.zeros(2)), torch.zeros(2, requires_grad=True), False)
    yield Spelling("lists_apart_from_tuples", [1, 2], (1, 2), False)
    yield Spelling("slices", slice(1, None), slice(1, None), True)
    yield Spelling("functions_by_identity", torch.relu, torch.sigmoid, False)


@pytest.mark.parametrize("spelling", list(_spellings()), ids=lambda s: s.name)
def test_values_are_spelled_by_what_the_emission_reads(spelling: Spelling) -> None:
    spell = _Speller("blocks.1", {})
    assert (spell(spelling.first) == spell(spelling.second)) is spelling.equal


@pytest.mark.parametrize(
    ("own", "path", "spelled"),
    [
        ("blocks.1.attn", "blocks.1.attn", ("self",)),
        ("blocks.1.attn", "blocks.1.attn.qkv", ("in", "qkv")),
        ("blocks.1.attn", "blocks.1", ("up", 1)),
        ("blocks.1.attn", "blocks", ("up", 2)),
        ("blocks.1.attn", "", ("up", 3)),
        ("blocks.1.attn", "blocks.1.attention", ("at", "blocks.1.attention")),  # a sibling whose name starts alike
        ("blocks.1.attn", "head", ("at", "head")),
        ("", "blocks.1", ("in", "blocks.1")),  # the root's module: every path is inside it
    ],
)
def test_module_paths_are_spelled_from_the_module_own(own: str, path: str, spelled: tuple[object, ...]) -> None:
    assert _Speller(own, {}).relative(path) == spelled


@pytest.mark.parametrize(
    ("taken", "emitted"),
    [
        ((), 1),  # nothing taken since: the forward holds
        (("other",), 1),  # a name the emission never asked about
        (("out",), 2),  # the name its local took: emitted again, the local named apart
        (("out_1",), 1),
    ],
)
def test_a_forward_holds_while_no_name_it_asked_about_is_taken(taken: tuple[str, ...], emitted: int) -> None:
    names, emissions, locals_named = Namespace(), Emissions(), []
    gm = fx.symbolic_trace(models.Layer())

    def emit() -> object:
        locals_named.append(names.child().create("out"))
        return locals_named[-1]

    first = emissions.forward(gm, "layers.0", 0, {}, names, emit)  # type: ignore[arg-type]
    for name in taken:
        names.reserve(name)
    second = emissions.forward(gm, "layers.1", 0, {}, names, emit)  # type: ignore[arg-type]
    assert (len(locals_named), first) == (emitted, "out")
    assert second == ("out" if emitted == 1 else "out_1")
