"""Build the wheel, install it into a fresh venv, and export from there (templates ship inside)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_installs_and_exports(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(REPO)],
                   check=True, capture_output=True)  # fmt: skip
    wheel = next((tmp_path / "dist").glob("fxexport-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "fxexport/templates/module.py.jinja" in names and "fxexport/cli.py" in names
    assert "fxexport/py.typed" in names  # PEP 561: type checkers use fxexport's annotations
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    # torch and the other dependencies come from this environment, after the wheel's own files.
    (Path(site) / "zz_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.run(
        [str(python), "-c", "import fxexport, sys; print(fxexport.__file__); from fxexport.cli import main; sys.exit(main(sys.argv[1:]))",
         "export", "fxexport.examples:resnet", "-o", "resnet_pkg"],
        cwd=work, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].startswith(site)
    assert (work / "resnet_pkg" / "weights.safetensors").is_file() and (work / "resnet_pkg" / "loader.py").is_file()
