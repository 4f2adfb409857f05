"""Quantized GraphModules from both flows export, move, and give the same bits in a fresh process with only torch."""

from __future__ import annotations

import shutil

import pytest

import fxexport
from tests.quantized import FX_MODELS, HAS_TORCHAO, MODELS, PT2E_MODELS, QuantizedModel
from tests.roundtrip import check_in_fresh_process, record


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    staging, moved, expect = (tmp_path_factory.mktemp(n) for n in ("staging", "moved", "expect"))
    for model in MODELS:
        gm = model.build()
        fxexport.export(gm, staging / model.name)
        shutil.move(str(staging / model.name), str(moved / model.name))
        record(model.name, gm, model.args(), {}, None, expect)
    return check_in_fresh_process(moved, expect, [m.name for m in MODELS], block=("torchao",))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_quantized_round_trip_is_bitwise_with_only_torch(model: QuantizedModel, report: dict[str, list[str]]) -> None:
    assert report[model.name] == []


def test_both_flows_have_models() -> None:
    assert len(FX_MODELS) >= 8 and len(PT2E_MODELS) >= 3
    if not HAS_TORCHAO:
        pytest.skip("torchao is not installed: the PT2E models are left out (pip install -e '.[quant]')")
