"""The zoo as tests: every (model, producer) pair that yields a GraphModule exports, loads standalone and matches.

Skipped, with the reason, unless torchvision, timm and transformers import (a second venv;
see README.md). `python -m tests.zoo.run` prints the same results as a table.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from tests.zoo.catalog import ZOO
from tests.zoo.harness import Row, missing_libraries, run

MISSING = missing_libraries()
ONLY = [part for part in os.environ.get("FXEXPORT_ZOO_ONLY", "").split(",") if part]  # e.g. "tv_,hf_t5": a quicker run
SELECTED = [m for m in ZOO if not ONLY or any(part in m.name for part in ONLY)]
needs_zoo = pytest.mark.skipif(bool(MISSING), reason=f"the zoo needs {', '.join(MISSING)} (a second venv, see README.md)")


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Row]:
    warnings.simplefilter("ignore")
    return {(r.model, r.producer): r for r in run(SELECTED, Path(tmp_path_factory.mktemp("zoo")))}


def test_zoo_is_large_and_varied() -> None:
    assert len(ZOO) >= 40
    assert {m.library for m in ZOO} == {"torchvision", "timm", "transformers"}
    kinds = {m.kind for m in ZOO}
    assert {"cnn", "vit", "segmentation", "detection", "encoder", "decoder", "encoder-decoder"} <= kinds


@needs_zoo
@pytest.mark.parametrize("model, producer", [(m.name, p) for m in SELECTED for p in m.producers])
def test_pair_exports_loads_standalone_and_matches(model: str, producer: str, rows: dict[tuple[str, str], Row]) -> None:
    row = rows[(model, producer)]
    if not row.has_graph:
        pytest.skip(f"{producer} does not make a GraphModule of {model}: {row.graph_error}")
    assert row.exported, row.export_error
    assert row.loaded and row.matched, row.problems
