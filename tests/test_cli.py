"""The command line: exports, and one clear line with exit code 2 for each user error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fxexport.cli import main

REPO = Path(__file__).resolve().parent.parent

BAD_SPECS = [
    ("no_colon", "fxexport.examples", "bad spec"),
    ("missing_module", "no_such_module_xyz:model", "cannot import module"),
    ("missing_attr", "fxexport.examples:nope", "has no attribute"),
    ("not_a_module", "fxexport.examples:torch", "not a GraphModule"),
    ("missing_file", "does/not/exist.py:model", "no such file"),
]


@pytest.mark.parametrize("name,spec,message", BAD_SPECS, ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, spec: str, message: str) -> None:
    assert main(["export", spec, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fxexport: error: ") and message in err
    assert not (tmp_path / "out").exists()


def test_existing_folder_needs_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pkg"
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "-q"]) == 0
    before = (out / "module.py").read_bytes()
    assert main(["export", "fxexport.examples:mlp", "-o", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "--overwrite", "-q"]) == 0
    assert (out / "module.py").read_bytes() == before


def test_foreign_folder_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "--overwrite"]) == 2
    assert "not written by fxexport" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "keep me" and len(list(out.iterdir())) == 1


def test_file_spec_and_debug_traceback(tmp_path: Path) -> None:
    source = tmp_path / "user_model.py"
    source.write_text("import torch\nmodel = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run([sys.executable, "-m", "fxexport", "export", f"{source}:model", "-o", str(tmp_path / "pkg")],
                        capture_output=True, text=True, env=env)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "pkg" / "module.py").is_file()
    bad = [sys.executable, "-m", "fxexport", "export", f"{source}:nothing", "-o", str(tmp_path / "x")]
    quiet = subprocess.run(bad, capture_output=True, text=True, env=env)
    loud = subprocess.run([*bad, "--debug"], capture_output=True, text=True, env=env)
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr and quiet.stderr.count("\n") == 1
    assert "Traceback" in loud.stderr


def test_diff_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, actual = tmp_path / "golden" / "mlp_pkg", tmp_path / "actual" / "mlp_pkg"  # README.md names the package
    assert main(["export", "fxexport.examples:mlp", "-o", str(golden), "-q"]) == 0
    assert main(["export", "fxexport.examples:mlp", "-o", str(actual), "-q", "--check", str(golden)]) == 0
    assert main(["diff", str(actual), str(golden), "-q"]) == 0
    from safetensors.torch import load_file, save_file

    weights = load_file(str(actual / "weights.safetensors"))
    weights["layers.0.bias"] = weights["layers.0.bias"] + 1
    save_file(weights, str(actual / "weights.safetensors"))
    (actual / "module.py").write_text((actual / "module.py").read_text().replace("nn.GELU()", "nn.ReLU()"))
    (actual / "extra.txt").write_text("x")
    capsys.readouterr()
    assert main(["diff", str(actual), str(golden)]) == 1
    out = capsys.readouterr().out
    assert "tensor 'layers.0.bias': values differ" in out and "-            self.act = nn.GELU()" in out
    assert "+++ actual/module.py" in out and "not in" in out and "extra.txt" in out
    assert main(["diff", str(actual), str(tmp_path)]) == 2
    assert "is not an fxexport export folder" in capsys.readouterr().err


STANDALONE_CASES = [
    ("imported_function", "module.py would import configured_scale from tests.models"),
    ("user_leaves", "module.py would import Limiter from tests.models"),
]


@pytest.mark.parametrize("case_name,message", STANDALONE_CASES, ids=[c[0] for c in STANDALONE_CASES])
def test_standalone_refuses_non_torch_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str], case_name: str, message: str) -> None:
    spec = f"tests.cases:CASES_BY_NAME.{case_name}.build"
    assert main(["export", spec, "-o", str(tmp_path / "strict"), "--standalone"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "standalone" in err
    assert not (tmp_path / "strict").exists()
    assert main(["export", spec, "-o", str(tmp_path / "lenient"), "-q"]) == 0
    assert "fxexport: warning: module.py imports" in capsys.readouterr().err


def test_standalone_accepts_torch_only_models(tmp_path: Path) -> None:
    assert main(["export", "fxexport.examples:transformer_block", "-o", str(tmp_path / "pkg"), "--standalone", "-q"]) == 0
