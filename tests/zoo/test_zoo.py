"""The zoo as tests: every (model, producer) pair exports, loads standalone and matches bit for bit.

A pair that makes no GraphModule fails unless tests/zoo/catalog.py lists it as unsupported;
a listed pair is an xfail whose message gives the reason, and fails once it works or fails
otherwise. Each symbolic_trace export must be a fixed point (issue 14): import it, trace it, export
that, and module.py is the same; a pair the catalog lists as none is an xfail with its reason.
Skipped, with the reason, unless torchvision, timm and transformers import (a second venv; see
README.md). `python -m tests.zoo.run` prints the same results as a table.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

from tests.zoo.catalog import ZOO, Unsupported, ZooModel
from tests.zoo.harness import Row, failure, fixed_point_failure, missing_libraries, run

MISSING = missing_libraries()
ONLY = [part for part in os.environ.get("FXEXPORT_ZOO_ONLY", "").split(",") if part]  # e.g. "tv_,hf_t5": a quicker run
SELECTED = [m for m in ZOO if not ONLY or any(part in m.name for part in ONLY)]
# Another torch's interpreter loads and checks the exports (the cross-version check), e.g. the dev venv's python.
CHECK_WITH = os.environ.get("FXEXPORT_ZOO_CHECK_WITH") or sys.executable
LISTINGS = [(m, u) for m in ZOO for u in m.unsupported]
needs_zoo = pytest.mark.skipif(bool(MISSING), reason=f"the zoo needs {', '.join(MISSING)} (a second venv, see README.md)")


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Row]:
    warnings.simplefilter("ignore")
    return {(r.model, r.producer): r for r in run(SELECTED, Path(tmp_path_factory.mktemp("zoo")), python=CHECK_WITH)}


def test_zoo_is_large_and_varied() -> None:
    assert len(ZOO) >= 40
    assert len({m.name for m in ZOO}) == len(ZOO)
    assert {m.library for m in ZOO} == {"torchvision", "timm", "transformers"}
    kinds = {m.kind for m in ZOO}
    assert {"cnn", "vit", "segmentation", "detection", "encoder", "decoder", "encoder-decoder"} <= kinds


@pytest.mark.parametrize("model, listed", LISTINGS, ids=[f"{m.name}-{u.producer}-{u.applies.__name__}" for m, u in LISTINGS])
def test_unsupported_listing_names_a_producer_a_reason_and_an_error(model: ZooModel, listed: Unsupported) -> None:
    assert listed.producer == "build" or listed.producer in model.producers, f"{model.name} does not go through {listed.producer}"
    assert listed.reason.strip() and listed.error.strip()


@needs_zoo
@pytest.mark.parametrize("model, producer", [(m.name, p) for m in SELECTED for p in m.producers])
def test_pair_exports_loads_standalone_and_matches(model: str, producer: str, rows: dict[tuple[str, str], Row]) -> None:
    row = rows[(model, producer)]
    problem = failure(row)
    assert not problem, problem
    if row.unsupported is not None:
        pytest.xfail(f"listed as unsupported in tests/zoo/catalog.py: {row.unsupported.reason} ({row.graph_error})")


@needs_zoo
@pytest.mark.parametrize("model", [m.name for m in SELECTED if "symbolic_trace" in m.producers and m.library != "transformers"])
def test_symbolic_trace_export_is_a_fixed_point(model: str, rows: dict[tuple[str, str], Row]) -> None:
    row = rows[(model, "symbolic_trace")]
    if not row.exported:
        pytest.skip(f"not exported: {row.graph_error or row.export_error}")
    problem = fixed_point_failure(row)
    assert not problem, problem
    if row.not_fixed_point:
        pytest.xfail(f"listed as not a fixed point in tests/zoo/catalog.py: {row.not_fixed_point}")
