"""Golden files: every case's export must equal golden/<case>/, and every golden must run correctly.

Regenerate (the regenerating run still fails, so a golden never changes unnoticed):

    python -m pytest tests/test_golden.py --regen-golden
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import fxexport
from fxexport.diff import diff_exports, export_manifest
from tests.cases import CASES, OPTIONAL_CASES
from tests.roundtrip import REPO, check_in_fresh_process, record

GOLDEN = REPO / "golden"
REGEN = "python -m pytest tests/test_golden.py --regen-golden"
TORCH = torch.__version__.split("+")[0]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("exports")
    for case in CASES:
        fxexport.export(case.build(), folder / case.name, module_name=case.class_name)
    return folder


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_export_matches_golden(case, exports: Path, request: pytest.FixtureRequest) -> None:
    golden = GOLDEN / case.name
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(exports / case.name, golden, ignore=shutil.ignore_patterns("__pycache__"))
        pytest.fail(f"regenerated {golden.relative_to(REPO)}: review the change with git diff and commit it")
    if not golden.is_dir():
        pytest.fail(f"no golden folder for {case.name!r}; create it with: {REGEN}")
    golden_torch = export_manifest(golden).get("torch")
    if golden_torch != TORCH:
        pytest.skip(f"golden text was generated with torch {golden_torch}, this is torch {TORCH}; fx prints code differently between releases")
    result = diff_exports(golden, exports / case.name)  # golden is the old, expected side: `+` marks what the export adds
    assert result.equal, f"{result.report()}\n\nIf this change is intended, regenerate with: {REGEN}"


def test_no_stray_golden_folders() -> None:
    names = {case.name for case in CASES + OPTIONAL_CASES}
    stray = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and p.name not in names)
    assert not stray, f"golden folders without a case: {stray}"


def test_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 25


def test_golden_packages_run_and_match_their_sources(tmp_path: Path) -> None:
    """A golden must be correct, not just stable: import each one fresh and compare with its source."""
    for case in CASES:
        record(case.name, case.build(), case.args(), case.kwargs(), case.seed, tmp_path, case.class_name)
    report = check_in_fresh_process(GOLDEN, tmp_path, [case.name for case in CASES if (GOLDEN / case.name).is_dir()])
    assert {name: problems for name, problems in report.items() if problems} == {}


EXPORT_ALL = """
import sys
from pathlib import Path
import fxexport
from tests.cases import CASES
for case in CASES:
    fxexport.export(case.build(), Path(sys.argv[1]) / case.name, module_name=case.class_name)
"""


def test_exports_are_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-c", EXPORT_ALL, str(tmp_path / seed)], check=True, env=env, cwd=REPO)
    for case in CASES:
        result = diff_exports(tmp_path / "1" / case.name, tmp_path / "2" / case.name)
        assert result.equal, result.report()
        first = tmp_path / "1" / case.name
        files = [file.relative_to(first) for file in first.rglob("*") if file.is_file()]
        assert any(file.suffix == ".pyc" for file in files), case.name
        for file in files:
            assert (first / file).read_bytes() == (tmp_path / "2" / case.name / file).read_bytes(), file


@pytest.mark.parametrize("case", OPTIONAL_CASES, ids=lambda c: c.name)
def test_optional_cases_join_the_catalogue_when_their_package_is_installed(case) -> None:
    if case not in CASES:
        pytest.skip(f"{case.name} needs torchao, which is not installed (pip install -e '.[quant]')")
    assert (GOLDEN / case.name).is_dir()


def _unused_imports(source: str) -> list[str]:
    tree = ast.parse(source)
    imported = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                imported[alias.asname or alias.name.split(".")[0]] = alias.name
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return sorted(name for name in imported if name not in used and name != "torch")  # every module.py imports torch


@pytest.mark.parametrize("folder", sorted(p.name for p in GOLDEN.iterdir() if (p / "module.py").is_file()))
def test_a_golden_module_imports_only_what_it_uses(folder: str) -> None:
    """No import a reader would wonder about (a getitem written as `x[i]` once left `import operator`)."""
    source = (GOLDEN / folder / "module.py").read_text(encoding="utf-8")
    assert _unused_imports(source) == []
