"""Modules a model holds and hands to blocks that run them (shared_modules.py), under hostile names.

Each block runs the model's module as an attribute named after the module's last name without its
number, set without registering a child; a name that is no plain ASCII identifier, a keyword, or
taken by the block keeps the blocks inline, with the reason.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import fx

import fxexport
from tests import models


@dataclass(frozen=True)
class Case:
    held_as: str  # the model's name for the module its blocks run
    attribute: str | None  # the blocks' name for it, None where they stay inline


CASES = [
    Case("pos1", "pos"),
    Case("x12", "x"),  # the forward's input is a local: `self.x(x)` reads the attribute
    Case("pos", "pos"),
    Case("_1", "_"),
    Case("class1", None),  # a keyword
    Case("pös1", None),  # not ASCII
    Case("forward1", None),  # nn.Module's own
    Case("fc1", None),  # the block's child
    Case("meta1", None),  # a GraphModule's own attribute (fx sets `meta` on each)
    Case("graph1", None),
    Case("sp ace1", None),
    Case("1", None),
    Case("a'b1", None),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[fx.GraphModule, Path]]:
    root = tmp_path_factory.mktemp("shared")
    sys.path.insert(0, str(root))
    out = {}
    for number, case in enumerate(CASES):
        torch.manual_seed(0)
        gm = fx.symbolic_trace(models.NamedShared(case.held_as).eval())
        fxexport.export(gm, root / f"shared_{number}")
        out[case.held_as] = (gm, root / f"shared_{number}")
    yield out
    sys.path.remove(str(root))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.held_as)
def test_blocks_run_the_models_module_under_a_safe_name(case: Case, exported: dict[str, tuple[fx.GraphModule, Path]]) -> None:
    gm, folder = exported[case.held_as]
    text = (folder / "module.py").read_text()
    ast.parse(text)
    model = importlib.import_module(folder.name).FxModule()
    x = torch.randn(2, 5, 4, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(model(x), gm(x))
    assert list(model.state_dict()) == list(gm.state_dict())
    inline = {entry["path"]: entry["reason"] for entry in json.loads((folder / "fxexport.json").read_text())["inline_modules"]}
    if case.attribute is None:
        assert set(inline) == {"blocks.0", "blocks.1"} and "object.__setattr__" not in text
        assert all("held outside it" in why or "not one of its submodules" in why for why in inline.values())
    else:
        assert not inline and getattr(model.blocks[1], case.attribute) is model.get_submodule(case.held_as)
        assert f"object.__setattr__(self.blocks[1], {case.attribute!r}, " in text.replace('"', "'")
