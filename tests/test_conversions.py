"""An export follows the conversions its source follows: `.to(torch.bfloat16)`, `.to("meta")`, `to_empty`
and a `load_state_dict(assign=True)` change what its forward reads as they change what the source's reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from torch import fx
from torch.utils._pytree import tree_leaves

import fxexport
from tests.cases import CASES_BY_NAME
from tests.packages import imported

# folded constants (root buffers read inside blocks), tied weights, buffers, inferred calls
NAMES = ["folded_constants", "tied_weights", "buffers", "feature_extractor"]


@contextmanager
def _exported(name: str, folder: Path) -> Iterator[tuple[fx.GraphModule, tuple[Any, ...], ModuleType]]:
    """The case's source, its inputs and its export, imported."""
    case = getattr(CASES_BY_NAME, name)
    source = case.build()
    fxexport.export(source, folder / name)
    with imported(folder / name) as package:
        yield source, case.args(), package


def _assert_same(expected: Any, got: Any) -> None:
    for want, have in zip(tree_leaves(expected), tree_leaves(got), strict=True):
        assert have.dtype == want.dtype and torch.equal(have, want)


@pytest.mark.parametrize("name", NAMES)
def test_a_dtype_conversion_reaches_every_tensor_the_forward_reads(name: str, tmp_path: Path) -> None:
    with _exported(name, tmp_path) as (source, args, package):
        inputs = [a.to(torch.bfloat16) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        _assert_same(source.to(torch.bfloat16)(*inputs), package.FxModule().to(torch.bfloat16)(*inputs))


@pytest.mark.parametrize("name", NAMES)
def test_loading_by_assignment_reaches_every_tensor_the_forward_reads(name: str, tmp_path: Path) -> None:
    with _exported(name, tmp_path) as (source, args, package):
        model = package.FxModule(load_weights=False).to_empty(device="cpu")
        model.load_state_dict({k: v.clone() for k, v in source.state_dict().items()}, assign=True)
        _assert_same(source(*args), model(*args))
        assert all(t.device.type == "meta" for t in package.FxModule(load_weights=False).to("meta").state_dict().values())
