"""Code hygiene as tests: `ruff check fxexport tests bench` and `mypy fxexport` pass, and fxexport has no import cycle.

Both read their settings from pyproject.toml; each is skipped (with the reason) where the tool is
not installed. They are pinned in constraints.txt, so a new release cannot fail the suite.
"""

from __future__ import annotations

import ast
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


def _module_imports(path: Path, modules: set[str]) -> set[str]:
    """The fxexport modules one file imports, anywhere: top level, in functions, under TYPE_CHECKING."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level <= 1:
            source = ".".join(filter(None, ["fxexport" if node.level else "", node.module or ""]))
            dotted = [f"{source}.{alias.name}" for alias in node.names] if source == "fxexport" else [source]
        else:
            continue
        found |= {name.split(".")[1] for name in dotted if name.startswith("fxexport.")}
    return found & modules


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (`[a, b, a]`) through each back edge a depth-first search meets, in a stable order."""
    cycles, done, path = [], set(), []

    def visit(module: str) -> None:
        path.append(module)
        for target in sorted(edges.get(module, ())):
            if target in path:
                cycles.append([*path[path.index(target) :], target])
            elif target not in done:
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(edges):
        if module not in done:
            visit(module)
    return cycles


def package_imports() -> dict[str, set[str]]:
    files = {path.stem: path for path in (REPO / "fxexport").glob("*.py")}
    return {name: _module_imports(path, set(files)) for name, path in files.items()}


def test_no_import_cycle() -> None:
    """fxexport's modules import one another one way only: a function-level import hides a cycle, it does not end it."""
    cycles = import_cycles(package_imports())
    assert not cycles, "import cycles among fxexport modules:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    ("source", "module"),
    [("from .names import quote", "names"), ("from . import names", "names"), ("import fxexport.names", "names"),
     ("from fxexport.names import quote", "names"), ("from fxexport import names", "names"),
     ("def f():\n    from .names import quote", "names"), ("from .. import names", None), ("import names", None)],
)  # fmt: skip
def test_import_edges_are_found(tmp_path: Path, source: str, module: str | None) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source)
    assert _module_imports(path, {"names", "mod"}) == ({module} if module else set())


def test_cycles_are_named() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert import_cycles(edges) == [["a", "b", "c", "a"], ["e", "e"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
