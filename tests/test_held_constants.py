"""Tensor constants a trace folded into the root, held by the module whose calls alone read them (held_constants.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch import fx

from fxexport.held_constants import held_constants
from tests import models
from tests.cases import traced


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], fx.GraphModule]
    held: dict[str, str]  # the root's constant -> where the graph reads it now
    kept: tuple[str, ...]  # constants the root still reads


CASES = [
    # every frozen norm's scale and bias, numbered within the norm; the root's own `+ 0.5` stays the root's
    Case("frozen_norms", traced(models.FrozenNet),
         held={"_tensor_constant0": "stem.1._tensor_constant0", "_tensor_constant1": "stem.1._tensor_constant1",
               "_tensor_constant2": "blocks.0.bn1._tensor_constant0", "_tensor_constant9": "blocks.1.bn2._tensor_constant1"},
         kept=("_tensor_constant10",)),  # fmt: skip
    # read by two modules' calls: held by neither
    Case("read_by_two_modules", traced(models.SharedConstant), held={}, kept=("_tensor_constant0",)),
]


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


def _targets(gm: fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.find_nodes(op="get_attr")]


def test_a_constant_read_inside_one_module_call_is_read_from_that_module(case: Case) -> None:
    gm = case.build()
    moved = held_constants(gm)
    renames = dict(zip(_targets(gm), _targets(moved)))
    assert {old: new for old, new in renames.items() if old in case.held} == case.held
    assert [old for old, new in renames.items() if old == new and old.startswith("_tensor_constant")] == list(case.kept)


def test_the_module_holds_the_root_buffer_itself_and_the_state_dict_keys_stay(case: Case) -> None:
    gm = case.build()
    moved = held_constants(gm)
    assert list(moved.state_dict()) == list(gm.state_dict())
    for old, new in case.held.items():
        assert moved.get_submodule(new.rpartition(".")[0]).__dict__[new.rpartition(".")[2]] is gm.get_buffer(old)


def test_the_input_graph_module_is_not_changed(case: Case) -> None:
    gm = case.build()
    before = (_targets(gm), dict(gm.named_modules()).keys(), list(gm.state_dict()))
    held_constants(gm)
    assert (_targets(gm), dict(gm.named_modules()).keys(), list(gm.state_dict())) == before


def test_a_norm_made_again_stands_in_its_place_in_a_sequential() -> None:
    """The stem's norm, traced through and not kept by the GraphModule, is made again between its conv and
    its ReLU: a Sequential runs its children in the order it holds them."""
    moved = held_constants(traced(models.FrozenNet)())
    assert list(moved.get_submodule("stem")._modules) == ["0", "1", "2"]
    x = torch.randn(1, 3, 8, 8)
    assert torch.equal(moved(x), traced(models.FrozenNet)()(x))
