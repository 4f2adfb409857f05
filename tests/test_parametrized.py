"""Parametrized layers written as their constructor wrapped in the registering calls (parametrized.py)."""

from __future__ import annotations

import pytest
from torch import fx, nn

import fxexport
from fxexport.errors import FxExportError
from fxexport.parametrized import Parametrized, parametrized, wrapped

weight_norm = nn.utils.parametrizations.weight_norm

# (layer, what it is built from, as written)
WRITTEN = [
    (lambda: weight_norm(nn.Linear(4, 2)), Parametrized(nn.Linear, (("weight", 0),)), "nn.utils.parametrizations.weight_norm(CODE)"),
    (lambda: weight_norm(nn.Conv1d(4, 4, 3), dim=2), Parametrized(nn.Conv1d, (("weight", 2),)),
     "nn.utils.parametrizations.weight_norm(CODE, dim=2)"),
    (lambda: weight_norm(weight_norm(nn.Linear(4, 2)), name="bias", dim=None), Parametrized(nn.Linear, (("weight", 0), ("bias", -1))),
     "nn.utils.parametrizations.weight_norm(nn.utils.parametrizations.weight_norm(CODE), name='bias', dim=-1)"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "found", "code"), WRITTEN)
def test_a_weight_normed_layer_is_its_layer_with_the_norms_registered_in_order(make, found, code) -> None:
    assert parametrized(make()) == found
    assert wrapped("CODE", found) == code


def test_a_layer_without_parametrizations_is_none() -> None:
    assert parametrized(nn.Linear(4, 2)) is None


class _Spectral(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 2))

    def forward(self, x):
        return self.fc(x)


def test_another_parametrization_is_a_one_line_error_naming_the_layer() -> None:
    with pytest.raises(FxExportError) as error:
        fxexport.generate(fx.symbolic_trace(_Spectral().eval()), package_name="spectral")
    message = str(error.value)
    assert "\n" not in message and "'fc'" in message and "_SpectralNorm" in message and "only a weight norm" in message
