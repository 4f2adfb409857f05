"""Operators `import torch` alone does not define: module.py imports the module that does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import fxexport
from fxexport import oplibs
from fxexport.api import generate
from tests.custom_ops import CustomOpNet, LibraryOpNet

REPO = Path(__file__).resolve().parent.parent


CASES = [  # (name, model, the import line module.py must have)
    # transformers' MoE layers call torch.ops.transformers.grouped_mm_fallback, which only importing
    # transformers.integrations.moe defines: the export imports the module the op's function is in
    ("custom_op", CustomOpNet, "import tests.custom_ops  # defines torch.ops.fxexport_tests.scaled_twice\n"),
    # a namespace a torch.library.Library defines (as torchvision's extension defines torch.ops.torchvision):
    # the module holding that library
    ("library", LibraryOpNet, "import tests.custom_ops  # defines torch.ops.fxexport_tests_lib\n"),
]


@pytest.mark.parametrize(("name", "model", "line"), CASES, ids=[c[0] for c in CASES])
def test_an_operator_is_called_after_importing_the_module_defining_it(name: str, model: type[nn.Module], line: str, tmp_path: Path) -> None:
    module = model().eval()
    x = torch.randn(2, 4)
    fxexport.export(torch.export.export(module, (x,)).module(), tmp_path / name)
    code = (tmp_path / name / "module.py").read_text()
    assert line in code
    torch.save({"x": x, "y": module(x)}, tmp_path / "io.pt")
    check = (
        "import sys, torch; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        f"from {name} import FxModule\n"
        "io = torch.load(sys.argv[3])\n"
        "assert torch.equal(FxModule()(io['x']), io['y'])\n"
        "assert 'fxexport' not in sys.modules\n"
    )
    run = subprocess.run([sys.executable, "-c", check, str(tmp_path), str(REPO), str(tmp_path / "io.pt")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


class TwoLibraryOps(nn.Module):
    def forward(self, x):
        return torch.ops.fxexport_tests_lib.tripled(x) * torch.ops.fxexport_tests_lib.halved(x)


def test_a_namespace_is_looked_up_once_an_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the module that defines a namespace reads every module imported: once per namespace and
    export (a flat core-ATen export asks of `aten` once per operator), asked again by the next export."""
    asked: list[str] = []
    look_up = oplibs._library_module_of
    monkeypatch.setattr(oplibs, "_library_module_of", lambda namespace: asked.append(namespace) or look_up(namespace))
    gm = torch.export.export(TwoLibraryOps(), (torch.randn(2, 4),)).module()
    for _ in range(2):
        _, sources = generate(gm, package_name="pkg", structure="flat")
        assert "import tests.custom_ops  # defines torch.ops.fxexport_tests_lib\n" in sources["module.py"]
        assert not oplibs._FOUND
    assert asked.count("fxexport_tests_lib") == 2  # two operators of it, two exports
    assert all(asked.count(namespace) == 2 for namespace in asked)
