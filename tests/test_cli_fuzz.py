"""Random command lines for every command: exit 0, 1 or 2, never a traceback, never an internal error.

Everything runs in this process (`fxexport.cli.main`), from a temporary folder holding the user's files
(tests/user_files.py) and two exports. Every `-o` names a path inside a fresh scratch folder of that
temporary folder; nothing outside the scratch folder may change. FUZZ_EXAMPLES=2000 runs longer.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fxexport
from fxexport import examples
from fxexport.cli import parser
from tests.user_files import forget_user_modules, run_cli, torch_logs_to, write_user_files

# Module names and paths are drawn from these lists, or from alphabets that spell no real module or
# file: a random spec must never import (and so run) anything but the user's files of the test.
MODULES = ["fxexport.examples", "userpkg", "userpkg.broken", ".broken", "zz_missing", "fxexport.examples.nope", "math"]
FILES = ["user_model.py", "broken.py", "syntax_error.py", "exits.py", "somedir/", "somedir", "nothere.py", "garbage.pt2"]
# Never inputs that fit a model here: a passing `verify --against` would start a fresh process (seconds).
ATTRS = ["model", "lazy.model", "branchy", "mlp", "MLP", "raising_inputs", "wrong_inputs", "not_inputs", "exiting", "nope", "x.y", "__name__", "sqrt"]
WHOLE_SPECS = ["garbage.pt2", "nothere.pt2", "somedir.pt2", "somedir", "fxexport.examples", ":", "a:", ":b", ""]
# Export folders whose manifest (and weight file) were damaged.
DAMAGED = {
    "damaged": '{"files": {"weights.safetensors": "0"}, "tensors": {"a": {"shape": "2x2", "file": 5}}, "modules": [[1, 2]]}',
    "damaged_maps": '{"files": [], "tensors": {"a": 1}}',
    "damaged_json": '{"files": ',
}
FOLDERS = [*DAMAGED, "pkg", "mlp_pkg", "somedir", "user_model.py", "nothere", ".", "/", ""]
OUTPUTS = ["pkg", "my-model", "class", "a/b/pkg", "afile", "afile/pkg", "notes", "old_export", "é", "_", "..", "x/.."]
SIZES = ["0", "1", "0.5MB", "1MB", "2GB", "1.5 gib", "lots", "-1", "", "9" * 30, "1e9", "10KB"]
TEMPLATES = ["templates_ok", "templates_bad", "nothere", "user_model.py", "somedir", ""]

NAME = st.from_regex(r"[xyz_é0-9-]{1,6}", fullmatch=True)
# Mostly well-formed, so that most examples get past the option checks to import the spec.
SPEC = st.one_of(
    st.sampled_from(["fxexport.examples:mlp", "fxexport.examples:MLP", "user_model.py:model", "broken.py:model"]),
    st.builds("{}:{}".format, st.sampled_from(MODULES + FILES), st.sampled_from(ATTRS)),
    st.builds("{}:{}".format, st.sampled_from(MODULES + FILES) | NAME | NAME.map("{}.py".format), st.sampled_from(ATTRS) | NAME),
    st.sampled_from(WHOLE_SPECS),
    st.text(alphabet="xyz_:./- é0", max_size=12),
)
INPUTS = st.sampled_from([f"user_model.py:{attr}" for attr in ("raising_inputs", "wrong_inputs", "not_inputs", "exiting", "nope")]) | SPEC
FOLDER = st.sampled_from(["pkg", "mlp_pkg"]) | st.sampled_from(FOLDERS) | NAME
OUTPUT = st.sampled_from(OUTPUTS) | st.from_regex(r"[a-z_][a-z_0-9]{0,5}(/[a-z_0-9é-]{1,4})?", fullmatch=True)
FLAGS = ["-q", "--overwrite", "--standalone", "--no-annotate", "--shapes", "--no-input-checks", "--no-bytecode", "--bogus"]


def _option(flag: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), values.map(lambda value: [flag, value]))


EXPORT_OPTIONS = {
    "--via": st.sampled_from(["trace", "export", "bogus"]),
    "--example-inputs": INPUTS,
    "--name": st.sampled_from(["FxModule", "class", "", "my-name", "Net", "é"]) | NAME,
    "--max-shard-size": st.sampled_from(SIZES) | st.text(alphabet="0123456789.kKmMgGiBb -", max_size=8),
    "--templates": st.sampled_from(TEMPLATES),
    "--check": FOLDER,
    "--weights": st.sampled_from(["safetensors", "none", "bogus"]),
}


@st.composite
def export_argv(draw: st.DrawFn) -> list[str]:
    argv = ["export", draw(SPEC), "-o", "{scratch}/" + draw(OUTPUT)]
    for flag in draw(st.lists(st.sampled_from(sorted(EXPORT_OPTIONS)), max_size=2, unique=True)):  # so SPEC is reached
        argv += [flag, draw(EXPORT_OPTIONS[flag])]
    return argv + draw(st.lists(st.sampled_from(FLAGS), max_size=3, unique=True))


@st.composite
def verify_argv(draw: st.DrawFn) -> list[str]:
    return ["verify", draw(FOLDER), *draw(_option("--against", SPEC)), *draw(_option("--example-inputs", INPUTS)),
            *draw(st.lists(st.sampled_from(["-q", "--bogus"]), max_size=1))]  # fmt: skip


@st.composite
def show_argv(draw: st.DrawFn) -> list[str]:
    depth = st.integers(-3, 5).map(str) | st.sampled_from(["x", ""])
    return ["show", draw(FOLDER), *draw(_option("--depth", depth)), *draw(st.lists(st.sampled_from(["-q"]), max_size=1))]


@st.composite
def diff_argv(draw: st.DrawFn) -> list[str]:
    return ["diff", draw(FOLDER), draw(FOLDER), *draw(st.lists(st.sampled_from(["-q", "extra"]), max_size=1))]


COMMANDS = {"export": export_argv(), "verify": verify_argv(), "show": show_argv(), "diff": diff_argv()}
OTHERS = st.sampled_from([[], ["--version"], ["--help"], ["bogus"], ["export", "--help"], ["-q", "show"]])


def test_every_command_is_fuzzed() -> None:
    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(COMMANDS) == set(commands.choices)


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = write_user_files(tmp_path_factory.mktemp("fuzz"))
    fxexport.export(torch.fx.symbolic_trace(torch.nn.Linear(3, 4)), folder / "pkg", bytecode=False)
    fxexport.export(torch.fx.symbolic_trace(examples.mlp()), folder / "mlp_pkg", bytecode=False)
    for name, manifest in DAMAGED.items():
        (folder / name).mkdir()
        (folder / name / "fxexport.json").write_text(manifest)
        (folder / name / "weights.safetensors").write_bytes(b"\xff" * 12)
    (folder / "scratch").mkdir()
    yield folder
    forget_user_modules(folder)


def _scratch(user_folder: Path) -> Path:
    """A fresh folder for one example's output, with what an output path can collide with."""
    scratch = Path(tempfile.mkdtemp(dir=user_folder / "scratch"))
    (scratch / "afile").write_text("a file, not a folder\n")
    (scratch / "notes").mkdir()
    (scratch / "notes" / "keep.txt").write_text("not an export\n")
    shutil.copytree(user_folder / "pkg", scratch / "old_export")
    return scratch


def _outside_scratch(user_folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(user_folder)): p.read_bytes()
        for p in user_folder.rglob("*")
        if p.is_file() and "scratch" not in p.relative_to(user_folder).parts and "__pycache__" not in p.parts
    }


@pytest.fixture
def in_user_folder(user_folder: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the user's folder (relative specs and folders resolve there), seeing what torch logs."""
    monkeypatch.chdir(user_folder)
    monkeypatch.syspath_prepend(str(user_folder))  # also undoes what importing a file spec adds to sys.path
    torch_logs_to(sys.stderr, monkeypatch)
    return user_folder


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 150)), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(argv=st.one_of(*COMMANDS.values(), OTHERS))
def test_random_command_lines(in_user_folder: Path, capfd: pytest.CaptureFixture[str], argv: list[str]) -> None:
    user_folder = in_user_folder
    before = _outside_scratch(user_folder)
    scratch = _scratch(user_folder)
    code, out, err = run_cli([arg.replace("{scratch}", str(scratch)) for arg in argv], capfd)
    event(f"{(argv or ['-'])[0]} exit {code}")  # see: pytest --hypothesis-show-statistics
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if code == 2:
        assert err.startswith("fxexport: error: ") and err.count("\n") == 1, (argv, err)
    assert _outside_scratch(user_folder) == before, argv
