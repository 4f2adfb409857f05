"""Operators `import torch` alone does not define: module.py imports the module that does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

import fxexport
from tests.custom_ops import CustomOpNet

REPO = Path(__file__).resolve().parent.parent


def test_a_custom_op_is_called_after_importing_the_module_defining_it(tmp_path: Path) -> None:
    """transformers' MoE layers call torch.ops.transformers.grouped_mm_fallback, which only importing
    transformers.integrations.moe defines: the export imports the module the op's function is in."""
    model = CustomOpNet().eval()
    x = torch.randn(2, 4)
    fxexport.export(torch.export.export(model, (x,)).module(), tmp_path / "custom")
    code = (tmp_path / "custom" / "module.py").read_text()
    assert "import tests.custom_ops  # defines torch.ops.fxexport_tests.scaled_twice\n" in code
    torch.save({"x": x, "y": model(x)}, tmp_path / "io.pt")
    check = (
        "import sys, torch; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "from custom import FxModule\n"
        "io = torch.load(sys.argv[3])\n"
        "assert torch.equal(FxModule()(io['x']), io['y'])\n"
        "assert 'fxexport' not in sys.modules\n"
    )
    run = subprocess.run([sys.executable, "-c", check, str(tmp_path), str(REPO), str(tmp_path / "io.pt")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
