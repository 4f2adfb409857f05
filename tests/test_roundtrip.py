"""Export every case, move the folder, and check it in one fresh process that forbids pickle."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import fxexport
from tests.cases import CASES
from tests.roundtrip import check_in_fresh_process, record


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    staging = tmp_path_factory.mktemp("staging")
    moved = tmp_path_factory.mktemp("moved")
    expect = tmp_path_factory.mktemp("expect")
    for case in CASES:
        gm = case.build()
        fxexport.export(gm, staging / case.name, module_name=case.class_name)
        shutil.move(str(staging / case.name), str(moved / case.name))
        record(case.name, gm, case.args(), case.kwargs(), case.seed, expect, case.class_name)
    assert not any(staging.iterdir())
    return check_in_fresh_process(moved, expect, [case.name for case in CASES])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_roundtrip(case, report: dict[str, list[str]]) -> None:
    assert report[case.name] == []


def test_case_list_covers_enough_models() -> None:
    assert len(CASES) >= 15


def test_no_absolute_paths_or_pickle(tmp_path: Path) -> None:
    for case in CASES:
        folder = tmp_path / case.name
        fxexport.export(case.build(), folder)
        files = [file for file in folder.rglob("*") if file.is_file()]
        assert any(file.suffix == ".pyc" for file in files), case.name
        for file in files:
            data = file.read_bytes()
            assert str(tmp_path).encode() not in data, file
            if file.suffix == ".py":
                text = data.decode()
                for word in ("pickle", "torch.load", "weights_only", str(Path.cwd())):
                    assert word not in text, (file, word)
