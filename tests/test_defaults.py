"""defaults.py leaves out keyword arguments equal to a Python function's defaults, and nothing else."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fxexport.defaults import without_defaults


def _f(x, scale=0.0, flag=False, mode="a", size=None, *, kw=1):
    return x


CASES = [  # (target, kwargs, the kwargs kept)
    (_f, {"scale": 0.0, "flag": False, "mode": "a", "size": None, "kw": 1}, {}),
    (_f, {"scale": -0.0}, {"scale": -0.0}),  # -0.0 is not the default 0.0
    (_f, {"flag": 0, "kw": True}, {"flag": 0, "kw": True}),  # another type: kept
    (_f, {"mode": "b", "size": 3}, {"mode": "b", "size": 3}),
    (F.interpolate, {"size": 4, "scale_factor": None, "mode": "nearest", "antialias": False}, {"size": 4}),
    (torch.cat, {"dim": 0}, {"dim": 0}),  # a builtin: its defaults are not read
]


@pytest.mark.parametrize("target,kwargs,kept", CASES)
def test_only_default_literals_are_left_out(target: object, kwargs: dict[str, object], kept: dict[str, object]) -> None:
    assert without_defaults(target, kwargs) == kept  # type: ignore[arg-type]
