"""An export follows the conversions its source follows: `.to(torch.bfloat16)`, `.to("meta")`, `to_empty` and a
`load_state_dict(assign=True)` change what its forward reads as they change what the source's reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import fxexport
from tests.cases import CASES_BY_NAME
from tests.packages import imported

# folded constants (root buffers read inside blocks), tied weights, buffers, inferred calls
NAMES = ["folded_constants", "tied_weights", "buffers", "feature_extractor"]


@pytest.mark.parametrize("name", NAMES)
def test_a_dtype_conversion_reaches_every_tensor_the_forward_reads(name: str, tmp_path: Path) -> None:
    case = getattr(CASES_BY_NAME, name)
    source = case.build()
    fxexport.export(source, tmp_path / name)
    with imported(tmp_path / name) as package:
        model = package.FxModule().to(torch.bfloat16)
        source = source.to(torch.bfloat16)
        args = [a.to(torch.bfloat16) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in case.args()]
        expected, got = source(*args), model(*args)
        for want, have in zip(torch.utils._pytree.tree_leaves(expected), torch.utils._pytree.tree_leaves(got)):
            assert have.dtype == want.dtype and torch.equal(have, want)


@pytest.mark.parametrize("name", NAMES)
def test_loading_by_assignment_reaches_every_tensor_the_forward_reads(name: str, tmp_path: Path) -> None:
    case = getattr(CASES_BY_NAME, name)
    source = case.build()
    fxexport.export(source, tmp_path / name)
    with imported(tmp_path / name) as package:
        model = package.FxModule(load_weights=False).to_empty(device="cpu")
        model.load_state_dict({k: v.clone() for k, v in source.state_dict().items()}, assign=True)
        for want, have in zip(torch.utils._pytree.tree_leaves(source(*case.args())), torch.utils._pytree.tree_leaves(model(*case.args()))):
            assert torch.equal(have, want)
        assert all(t.device.type == "meta" for t in package.FxModule(load_weights=False).to("meta").state_dict().values())
