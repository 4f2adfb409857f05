"""Lint and type checks as tests: `ruff check fxexport tests bench` and `mypy fxexport` must pass.

Both read their settings from pyproject.toml; each is skipped (with the reason) where the tool is
not installed. They are pinned in constraints.txt, so a new release cannot fail the suite.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CHECKS = [
    pytest.param("ruff", ["check", "fxexport", "tests", "bench"], id="ruff"),
    pytest.param("mypy", ["fxexport"], id="mypy"),
]


@pytest.mark.parametrize(("tool", "args"), CHECKS)
def test_tool_passes(tool: str, args: list[str]) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install -c constraints.txt -e '.[test]')")
    run = subprocess.run([sys.executable, "-m", tool, *args], cwd=REPO, capture_output=True, text=True, check=False)
    assert run.returncode == 0, f"{tool} {' '.join(args)} failed:\n{run.stdout}{run.stderr}"
