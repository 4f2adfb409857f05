"""`fxexport show`: a summary read from the manifest and the safetensors headers, never by importing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.cli import main
from fxexport.show import show
from tests.cases import CASES

BY_NAME = {case.name: case for case in CASES}
# (case, module path, class, parameters, buffers) rows that `show` must report.
ROWS = [
    ("mlp", "", "FxModule", 736, 0),
    ("mlp", "fc1", "Linear", 544, 0),
    ("mlp", "act", "GELU", 0, 0),
    ("conv_bn", "bn", "BatchNorm2d", 16, 3),
    ("tied_weights", "", "FxModule", 11 * 8 + 8 * 8 + 8, 0),  # the tied head.weight is counted once, where it is stored
    ("tied_weights", "head", "Linear", 0, 0),
    ("nested_graph_module", "inner", "Inner", 20, 1),
    ("dict_root", "", "DictRoot", 15, 0),
    ("adversarial_names", "holder.0.import", "Module", 0, 0),
]


def _every_kind() -> fx.GraphModule:
    """A frozen parameter, a non-persistent buffer and a plain tensor attribute (a constant)."""
    gm = fx.symbolic_trace(nn.Linear(2, 2))
    gm.register_buffer("running", torch.zeros(2), persistent=False)
    gm.table = torch.ones(3)
    gm.weight.requires_grad_(False)
    return gm


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("show")
    for name in sorted({row[0] for row in ROWS}):
        fxexport.export(BY_NAME[name].build(), folder / name, module_name=BY_NAME[name].class_name)
    fxexport.export(_every_kind(), folder / "every_kind")
    return folder


@pytest.mark.parametrize("case,path,class_name,parameters,buffers", ROWS)
def test_module_rows(exports: Path, case: str, path: str, class_name: str, parameters: int, buffers: int) -> None:
    modules = {m.path: m for m in show(exports / case).modules}
    assert (modules[path].class_name, modules[path].parameters, modules[path].buffers) == (
        class_name,
        parameters,
        buffers,
    )


@pytest.mark.parametrize("case", sorted({row[0] for row in ROWS}))
def test_totals_match_the_export(exports: Path, case: str) -> None:
    result = show(exports / case)
    root = result.modules[0]
    manifest = json.loads((exports / case / "fxexport.json").read_text())
    data = sum(w.data_bytes for w in result.weight_files)
    assert result.ok and root.path == "" and root.nbytes == data == sum(t.nbytes for t in result.tensors)
    assert len(result.tensors) == len(manifest["tensors"])


REPORTS = [
    ("mlp", ["mlp: FxModule, exported by fxexport", "(root)     FxModule", "  fc1      Linear", "warnings: none",
             "weights:\n  weights.safetensors: 5 tensors, 2,944 bytes of data"]),
    ("every_kind", ["buffers (1):\n  running: float32 [2] (not persistent)", "constants (1):\n  table: float32 [3]",
                    "parameters with requires_grad=False:\n  - weight"]),
    ("adversarial_names", ["  holder.0.q\"uote\\: float32 [1]", "    0 ", "      import "]),
]  # fmt: skip


@pytest.mark.parametrize("case,expected", REPORTS, ids=[r[0] for r in REPORTS])
def test_report_text(exports: Path, case: str, expected: list[str]) -> None:
    report = show(exports / case).report()
    assert [text for text in expected if text not in report] == [], report


def test_depth_limits_the_tree(exports: Path) -> None:
    result = show(exports / "adversarial_names")
    assert "import" in result.report() and "import" not in result.report(depth=2) and "holder" in result.report(depth=1)


def _copy(exports: Path, case: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(exports / case, tmp_path / case))


def test_show_never_imports_the_package(exports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, marker = _copy(exports, "mlp", tmp_path), tmp_path / "imported"
    for name in ("__init__.py", "module.py", "loader.py"):
        (folder / name).write_text(f"open({str(marker)!r}, 'w').close()\n")
    assert main(["show", str(folder)]) == 0
    assert "fc1" in capsys.readouterr().out and not marker.exists()


def test_older_manifest_without_modules(exports: Path, tmp_path: Path) -> None:
    folder = _copy(exports, "conv_bn", tmp_path)
    manifest = json.loads((folder / "fxexport.json").read_text())
    del manifest["modules"]
    (folder / "fxexport.json").write_text(json.dumps(manifest))
    modules = {m.path: m for m in show(folder).modules}
    assert modules["bn"].class_name == "" and modules["bn"].parameters == 16 and modules[""].parameters > 16


DAMAGED = [
    ("short_file", b"\x01\x02", "shorter than a safetensors header"),
    ("huge_header", (10**12).to_bytes(8, "little") + b"{}", "does not fit in the file"),
    ("not_json", (4).to_bytes(8, "little") + b"nope", "cannot read the safetensors header"),
]


@pytest.mark.parametrize("name,data,message", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_weights_are_problems(exports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: bytes,
                                     message: str) -> None:  # fmt: skip
    folder = _copy(exports, "mlp", tmp_path)
    (folder / "weights.safetensors").write_bytes(data)
    assert main(["show", str(folder), "-q"]) == 1
    out = capsys.readouterr().out
    assert message in out and "fxexport verify" in out and "in no weight file" in out


def test_not_an_export_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(tmp_path)]) == 2
    assert "is not an fxexport export folder" in capsys.readouterr().err


@pytest.mark.parametrize("field,value", [("modules", [["only a path"]]), ("tensors", {"w": {"shape": "2x2"}})])
def test_invalid_manifest_is_one_line_error(exports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
                                            value: object) -> None:  # fmt: skip
    folder = _copy(exports, "mlp", tmp_path)
    manifest = json.loads((folder / "fxexport.json").read_text())
    manifest[field] = value
    (folder / "fxexport.json").write_text(json.dumps(manifest))
    assert main(["show", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a valid manifest" in err
