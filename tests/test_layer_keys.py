"""rebuild.fingerprint: layers get one key only where their constructor calls and settings are surely
equal (collect verifies one constructor call per key); anything that tells two layers apart gives two."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.rebuild import fingerprint


def _frozen() -> nn.Module:
    layer = nn.Linear(4, 4)
    layer.weight.requires_grad_(False)
    return layer


def _flagged() -> nn.Module:
    layer = nn.Linear(4, 4)
    layer.flag = True  # set after construction, as libraries do
    return layer


def _hooked() -> nn.Module:
    layer = nn.Linear(4, 4)
    layer.register_forward_hook(lambda *_: None)
    return layer


PAIRS: list[tuple[str, Callable[[], nn.Module], Callable[[], nn.Module], bool]] = [  # (name, a, b, one key)
    ("equal layers", lambda: nn.Linear(4, 4), lambda: nn.Linear(4, 4), True),
    ("no bias", lambda: nn.Linear(4, 4), lambda: nn.Linear(4, 4, bias=False), False),
    ("a frozen weight", lambda: nn.Linear(4, 4), _frozen, False),
    ("another dtype", lambda: nn.Linear(4, 4), lambda: nn.Linear(4, 4).double(), False),
    ("another shape", lambda: nn.Linear(4, 4), lambda: nn.Linear(4, 5), False),
    ("padding", lambda: nn.Conv2d(2, 2, 3), lambda: nn.Conv2d(2, 2, 3, padding=1), False),
    ("eps", lambda: nn.LayerNorm(4), lambda: nn.LayerNorm(4, eps=1e-6), False),
    ("negative zero", lambda: nn.LeakyReLU(0.0), lambda: nn.LeakyReLU(-0.0), False),
    ("a string", lambda: nn.GELU(), lambda: nn.GELU("tanh"), False),
    ("an attribute set later", lambda: nn.Linear(4, 4), _flagged, False),
    ("children's classes", lambda: nn.Sequential(nn.Linear(4, 4), nn.ReLU()), lambda: nn.Sequential(nn.Linear(4, 4), nn.Tanh()), False),
    ("training", lambda: nn.Dropout(0.1).train(), lambda: nn.Dropout(0.1).eval(), False),
    ("a non-persistent buffer", lambda: nn.BatchNorm1d(4), lambda: nn.BatchNorm1d(4, track_running_stats=False), False),
]


@pytest.mark.parametrize("name,first,second,shared", PAIRS, ids=[p[0] for p in PAIRS])
def test_layers_share_a_key_only_when_nothing_tells_them_apart(
    name: str, first: Callable[[], nn.Module], second: Callable[[], nn.Module], shared: bool
) -> None:
    a, b = fingerprint(first()), fingerprint(second())
    assert a is not None and b is not None
    assert (a == b) is shared


def test_layers_with_hooks_get_no_key() -> None:
    assert fingerprint(_hooked()) is None


class _Settings(nn.Module):
    """Equal layers but one with an attribute set after construction: each export line says so."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))
        self.lins[2].flag = 7
        self.lins[3].flag = 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins:
            x = lin(x)
        return x


def test_an_export_keeps_each_layers_own_settings() -> None:
    torch.manual_seed(0)
    _, sources = fxexport.generate(fx.symbolic_trace(_Settings().eval()), package_name="pkg")
    code = sources["module.py"]
    assert "nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])" in code  # one call builds each, then the settings
    assert "self.lins[2].flag = 7" in code and "self.lins[3].flag = 8" in code and code.count(".flag = ") == 2
