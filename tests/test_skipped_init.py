"""skipped_init.initialisers_skipped: rebuilds are built as the package's loader builds its skeleton."""

from __future__ import annotations

import threading

import pytest
import torch
from torch import nn

from fxexport.skipped_init import initialisers_skipped

INITIALISERS = sorted(name for name, fn in vars(nn.init).items() if name.endswith("_") and not name.startswith("_") and callable(fn))


def test_every_initialiser_is_restored_after() -> None:
    before = {name: getattr(nn.init, name) for name in INITIALISERS}
    with initialisers_skipped():
        assert all(getattr(nn.init, name) is not before[name] for name in INITIALISERS)
    assert {name: getattr(nn.init, name) for name in INITIALISERS} == before


def test_restored_when_the_build_raises() -> None:
    before = nn.init.uniform_
    with pytest.raises(RuntimeError), initialisers_skipped():
        raise RuntimeError("a constructor failed")
    assert nn.init.uniform_ is before


@pytest.mark.parametrize("name", ["uniform_", "normal_", "kaiming_uniform_", "xavier_normal_", "trunc_normal_", "zeros_", "ones_", "orthogonal_"])
def test_this_thread_skips_and_others_initialise(name: str) -> None:
    tensor = torch.full((4, 4), 7.0)
    seen: list[torch.Tensor] = []
    with initialisers_skipped():
        assert getattr(nn.init, name)(tensor) is tensor
        assert torch.equal(tensor, torch.full((4, 4), 7.0))
        other = threading.Thread(target=lambda: seen.append(getattr(nn.init, name)(torch.full((4, 4), 7.0))))
        other.start()
        other.join()
    assert not torch.equal(seen[0], torch.full((4, 4), 7.0))


def test_a_layer_built_so_has_the_same_structure() -> None:
    with torch.device("meta"):
        plain = nn.Conv2d(3, 8, 3, bias=True)
        with initialisers_skipped():
            skipped = nn.Conv2d(3, 8, 3, bias=True)
    assert [(k, v.shape, v.dtype, v.requires_grad) for k, v in plain.state_dict(keep_vars=True).items()] == [
        (k, v.shape, v.dtype, v.requires_grad) for k, v in skipped.state_dict(keep_vars=True).items()
    ]
    assert plain.extra_repr() == skipped.extra_repr()


def test_a_wrapper_taken_inside_the_block_initialises_after_it() -> None:
    """A module imported while the block runs (`from torch.nn.init import normal_`) keeps the wrapper it found."""
    with initialisers_skipped():
        taken = nn.init.normal_
    tensor = torch.zeros(64)
    taken(tensor)
    assert tensor.abs().sum() > 0
