"""Every producer's GraphModule exports, moves, and matches in a fresh process; dynamic ones at other sizes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import fxexport
from fxexport.cli import main
from tests.packages import imported
from tests.producers import PRODUCERS, Dynamic, _seeded, _x
from tests.roundtrip import check_in_fresh_process, record

SIZED = [(p, f"{p.name}_size{i}", args) for p in PRODUCERS for i, args in enumerate(p.other_sizes, 1)]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    staging, moved, expect = (tmp_path_factory.mktemp(n) for n in ("staging", "moved", "expect"))
    names = []
    for producer in PRODUCERS:
        gm = producer.build()
        runs = [(producer.name, producer.args)] + [(name, args) for p, name, args in SIZED if p is producer]
        for name, args in runs:
            fxexport.export(gm, staging / name)
            shutil.move(str(staging / name), str(moved / name))
            record(name, gm, args(), producer.kwargs(), None, expect)
            names.append(name)
    return check_in_fresh_process(moved, expect, names)


@pytest.mark.parametrize("name", [p.name for p in PRODUCERS] + [s[1] for s in SIZED])
def test_producer_round_trip(name: str, report: dict[str, list[str]]) -> None:
    assert report[name] == []


def test_each_producer_has_three_models() -> None:
    kinds = {}
    for producer in PRODUCERS:
        kinds.setdefault(producer.name.split("_")[0], []).append(producer.name)
    assert all(len(names) >= 3 for names in kinds.values()), kinds


def test_export_input_checks_are_code_and_can_be_dropped(tmp_path: Path) -> None:
    gm = next(p for p in PRODUCERS if p.name == "export_dynamic").build()
    fxexport.export(gm, tmp_path / "checked_pkg")
    fxexport.export(gm, tmp_path / "unchecked_pkg", input_checks=False)
    assert "check_input(x, \"x\", torch.float32, ((None, 16), (None, 32), 6))" in (tmp_path / "checked_pkg" / "module.py").read_text()
    assert "check_input" not in (tmp_path / "unchecked_pkg" / "module.py").read_text()
    with imported(tmp_path / "checked_pkg") as package:
        model = package.FxModule()
    with pytest.raises(ValueError, match=r"x: expected a float32 tensor of shape \[\.\.16, \.\.32, 6\]"):
        model(_x(17, 3, 6))
    with pytest.raises(ValueError, match="x: expected"):
        model(_x(2, 3, 5))
    assert model(_x(16, 32, 6)).shape == (16, 192)
    with pytest.raises(ValueError, match=r"x: expected a float32 tensor of shape \[\.\.16, \.\.32, 6\], got int"):
        model(3)


def test_a_dynamic_size_shared_by_two_inputs_is_checked_equal(tmp_path: Path) -> None:
    class Add(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return x + y

    batch = torch.export.Dim("batch", max=8)
    program = torch.export.export(Add(), (_x(2, 3), _x(2, 3)), dynamic_shapes=({0: batch}, {0: batch}))
    fxexport.export(program, tmp_path / "pkg")
    text = (tmp_path / "pkg" / "module.py").read_text()
    assert 'check_input(y, "y", torch.float32, (None, 3))' in text and "if y.shape[0] != x.shape[0]:" in text
    with imported(tmp_path / "pkg") as package:
        model = package.FxModule()
    assert torch.equal(model(_x(4, 3), _x(4, 3)), _x(4, 3) * 2)
    with pytest.raises(ValueError, match=r"y: expected y.shape\[0\] == x.shape\[0\], got \[3, 3\]"):
        model(_x(4, 3), _x(3, 3))


def test_a_derived_size_is_checked_for_its_factor_bound_and_twin(tmp_path: Path) -> None:
    class Pool(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.mean((2, 3))

    h = torch.export.Dim("h", min=1, max=8)
    program = torch.export.export(Pool(), (_x(2, 3, 64, 64),), dynamic_shapes=({2: 32 * h, 3: 32 * h},))
    fxexport.export(program, tmp_path / "pkg")
    with imported(tmp_path / "pkg") as package:
        model = package.FxModule()
    assert torch.equal(model(_x(2, 3, 96, 96)), program.module()(_x(2, 3, 96, 96)))
    with pytest.raises(ValueError, match=r"x: expected x.shape\[2\] % 32 == 0, got \[2, 3, 80, 80\]"):
        model(_x(2, 3, 80, 80))
    with pytest.raises(ValueError, match=r"x: expected a float32 tensor of shape \[2, 3, \.\.256, \.\.\]"):
        model(_x(2, 3, 288, 288))
    with pytest.raises(ValueError, match=r"x: expected x.shape\[3\] == x.shape\[2\], got \[2, 3, 64, 96\]"):
        model(_x(2, 3, 64, 96))


def test_cli_pt2_via_export_and_missing_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = torch.export.export(_seeded(Dynamic), (_x(2, 3, 6),))
    torch.export.save(program, str(tmp_path / "model.pt2"))
    assert main(["export", str(tmp_path / "model.pt2"), "-o", str(tmp_path / "from_pt2"), "-q"]) == 0
    assert main(["export", "tests.producers:Dynamic", "-o", str(tmp_path / "via_export"), "--via", "export",
                 "--example-inputs", "tests.producers:DYNAMIC_INPUTS", "-q"]) == 0  # fmt: skip
    for name in ("from_pt2", "via_export"):
        assert "Producer: torch.export;" in (tmp_path / name / "module.py").read_text()
    assert main(["export", "tests.producers:Dynamic", "-o", str(tmp_path / "nothing"), "--via", "export"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--via export needs example inputs" in err and "--example-inputs" in err
