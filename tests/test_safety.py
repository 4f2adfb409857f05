"""Safety: atomic writes under SIGKILL, integrity checks, clear errors for damaged or hostile input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.cli import main
from fxexport.verify import verify_against, verify_files
from tests.roundtrip import REPO

BIG_EXPORT = """
import sys, torch
from torch import fx, nn
import fxexport
model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(6)])
fxexport.export(fx.symbolic_trace(model), sys.argv[1], overwrite=True)
"""


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_sigkill_during_weight_write_leaves_previous_export(tmp_path: Path) -> None:
    target = tmp_path / "pkg"
    fxexport.export(fx.symbolic_trace(nn.Linear(2, 2)), target)
    before = _snapshot(target)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", BIG_EXPORT, str(target)], env=env)
    deadline = time.monotonic() + 120
    partial = None
    while time.monotonic() < deadline and partial is None and child.poll() is None:
        partial = next((p for p in tmp_path.glob(".pkg.*.fxexport-tmp/weights.safetensors") if p.stat().st_size > 0), None)
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert partial is not None, "the export finished before it could be killed"
    assert _snapshot(target) == before


def test_exception_mid_write_leaves_no_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fxexport.write as write

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(write, "write_safetensors", explode)
    with pytest.raises(RuntimeError, match="^disk on fire$"):
        fxexport.export(fx.symbolic_trace(nn.Linear(2, 2)), tmp_path / "pkg")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    folder = tmp_path / "pkg"
    fxexport.export(fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU())), folder)
    return folder


DAMAGE = [
    ("truncated_weights", lambda f: (f / "weights.safetensors").write_bytes((f / "weights.safetensors").read_bytes()[:-7]), "'weights.safetensors' was altered"),
    ("altered_code", lambda f: (f / "module.py").write_text((f / "module.py").read_text() + "\n# edit\n"), "'module.py' was altered"),
    ("missing_file", lambda f: (f / "__init__.py").unlink(), "'__init__.py' is missing"),
    ("extra_file", lambda f: (f / "extra.py").write_text("x = 1\n"), "'extra.py' is not in the manifest"),
]


@pytest.mark.parametrize("name,damage,message", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_verify_names_what_is_damaged(exported: Path, capsys: pytest.CaptureFixture[str], name, damage, message) -> None:
    assert main(["verify", str(exported), "-q"]) == 0
    damage(exported)
    assert main(["verify", str(exported)]) == 1
    assert message in capsys.readouterr().out


def test_verify_names_a_tensor_missing_from_the_weights(exported: Path) -> None:
    manifest = json.loads((exported / "fxexport.json").read_text())
    manifest["tensors"]["0.extra"] = {"dtype": "float32", "shape": [1]}
    (exported / "fxexport.json").write_text(json.dumps(manifest))
    assert any("tensor '0.extra' is missing" in p for p in verify_files(exported).problems)


def test_manifest_records_the_blake3_of_every_file(exported: Path) -> None:
    import blake3

    manifest = json.loads((exported / "fxexport.json").read_text())
    assert manifest["format"] == 2
    assert manifest["files"] == {name: "blake3:" + blake3.blake3((exported / name).read_bytes()).hexdigest() for name in manifest["files"]}


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # same size: only the digest can tell
    path.write_bytes(bytes(data))


def test_verify_finds_a_changed_byte_by_its_blake3(exported: Path) -> None:
    _flip_one_byte(exported / "weights.safetensors")
    assert verify_files(exported).problems == ("file 'weights.safetensors' was altered or truncated (blake3 differs)",)


def _as_format_1(folder: Path) -> None:
    """Rewrite the manifest as fxexport wrote it before BLAKE3: format 1, bare sha256 hex digests."""
    import hashlib

    manifest = json.loads((folder / "fxexport.json").read_text())
    manifest["format"] = 1
    manifest["files"] = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in manifest["files"]}
    (folder / "fxexport.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def test_verify_checks_an_older_manifests_sha256(exported: Path) -> None:
    _as_format_1(exported)
    assert verify_files(exported).ok, verify_files(exported).report()
    _flip_one_byte(exported / "README.md")
    assert verify_files(exported).problems == ("file 'README.md' was altered or truncated (sha256 differs)",)


def test_diff_reads_an_older_manifest(exported: Path, tmp_path: Path) -> None:
    import shutil

    from fxexport.diff import diff_exports

    old = tmp_path / "old_pkg"
    shutil.copytree(exported, old)
    _as_format_1(old)
    assert [d.path for d in diff_exports(old, exported).differences] == ["fxexport.json"]


def test_verify_names_a_digest_it_does_not_know(exported: Path) -> None:
    manifest = json.loads((exported / "fxexport.json").read_text())
    manifest["files"]["module.py"] = "md5:0"
    (exported / "fxexport.json").write_text(json.dumps(manifest))
    assert verify_files(exported).problems == ("file 'module.py' has a digest of unknown algorithm 'md5' in the manifest",)


def test_verify_against_source(exported: Path) -> None:
    torch.manual_seed(0)
    source = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    result = verify_against(exported, source, (torch.randn(2, 3),), {})
    assert result.ok and result.outputs[0].max_abs == 0.0, result.report()
    other = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    assert not verify_against(exported, other, (torch.randn(2, 3),), {}).ok


def test_corrupted_weights_give_a_clear_error_on_load(exported: Path) -> None:
    data = (exported / "weights.safetensors").read_bytes()
    (exported / "weights.safetensors").write_bytes(data[:20])
    code = "import pkg\npkg.FxModule()"
    run = subprocess.run([sys.executable, "-c", code], cwd=exported.parent, capture_output=True, text=True)
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode != 0 and "cannot read weights weights.safetensors" in last and "fxexport verify" in last


def _graph_calling(target) -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(target, (x,)))
    return fx.GraphModule(nn.Module(), graph)


def _closure():
    def local_helper(x):
        return x + 1

    return local_helper


@pytest.mark.parametrize("target", [lambda x: x + 1, _closure()], ids=["lambda", "closure"])
def test_unimportable_call_target_is_a_clear_error(tmp_path: Path, target) -> None:
    with pytest.raises(fxexport.FxExportError, match=r"node '.*' calls .* no importable qualified name; define it at module level"):
        fxexport.export(_graph_calling(target), tmp_path / "pkg")
    assert not (tmp_path / "pkg").exists()


CLI_ERRORS = [
    ("output_is_a_file", lambda t: [(t / "afile").write_text("x"), "-o", str(t / "afile")][1:], "exists and is not a folder"),
    ("parent_is_a_file", lambda t: [(t / "afile").write_text("x"), "-o", str(t / "afile" / "pkg")][1:], "is a file, not a folder"),
    ("bad_package_name", lambda t: ["-o", str(t / "my-model")], "not a valid Python package name; use e.g. 'my_model'"),
    ("unwritable", lambda t: ["-o", "/proc/fxexport_pkg"], "cannot write"),
    ("bad_class_name", lambda t: ["-o", str(t / "pkg"), "--name", "class"], "class name 'class' is not a valid Python identifier"),
]


@pytest.mark.parametrize("name,args,message", CLI_ERRORS, ids=[c[0] for c in CLI_ERRORS])
def test_cli_error_catalogue(tmp_path: Path, capsys: pytest.CaptureFixture[str], name, args, message) -> None:
    assert main(["export", "fxexport.examples:mlp", *args(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fxexport: error: ") and err.count("\n") == 1 and message in err, err


USER_FILE = '''
import torch
from torch import fx, nn


class Branchy(nn.Module):
    def forward(self, x):
        return x if x.sum() > 0 else -x


class Rule:
    """A plain object a layer keeps: its class cannot be copied into module.py."""


class Custom(nn.Module):
    def __init__(self, k):
        super().__init__()
        self._twice = 2 * k
        self.rule = Rule()

    def forward(self, x):
        return x * 2 if x.sum() > 0 else x


class LeafTracer(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, Custom) or super().is_leaf_module(m, qualname)


def user_leaf():
    root = nn.Sequential(Custom(3))
    return fx.GraphModule(root, LeafTracer().trace(root))


def lambda_call():
    graph = fx.Graph()
    graph.output(graph.call_function(lambda v: v + 1, (graph.placeholder("x"),)))
    return fx.GraphModule(nn.Module(), graph)


def mutated():
    lin = nn.Linear(2, 2)
    lin.in_features = 5
    return nn.Sequential(lin)


def on_meta():
    return nn.Sequential(nn.Linear(2, 2, device="meta"))
'''

MODEL_ERRORS = [
    ("tracing_fails", "Branchy", "torch.fx.symbolic_trace failed on"),
    ("user_leaf_class", "user_leaf", "which fxexport cannot rebuild as code: module '0' (Custom) cannot be traced"),
    ("lambda_target", "lambda_call", "has no importable qualified name; define it at module level"),
    ("rebuild_does_not_verify", "mutated", "module '0' (Linear) cannot be rebuilt as code"),
    ("meta_tensor", "on_meta", "is on the meta device and has no values to export"),
]


@pytest.mark.parametrize("name,attr,message", MODEL_ERRORS, ids=[m[0] for m in MODEL_ERRORS])
def test_cli_model_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], name, attr, message) -> None:
    source = tmp_path / f"user_{name}.py"
    source.write_text(USER_FILE)
    assert main(["export", f"{source}:{attr}", "-o", str(tmp_path / "pkg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fxexport: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "pkg").exists()


def test_cli_verify_against_needs_inputs(exported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(exported), "--against", "fxexport.examples:mlp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs --example-inputs" in err


class _ListOfLayers(nn.Module):
    """Layers in a ModuleList called from the root: nothing to cut out, the graph shared by the split."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

    def forward(self, x):
        return self.layers[1](self.layers[0](x).relu()) * 2


@pytest.mark.parametrize("owned_by_another", [False, True])
def test_export_leaves_the_source_graph_module_as_it_was(owned_by_another: bool, tmp_path: Path) -> None:
    """The split shares the graph of a GraphModule nothing is cut out of: its nodes and its owner stay."""
    gm = fx.symbolic_trace(_ListOfLayers().eval())
    owner = fx.GraphModule(gm, gm.graph) if owned_by_another else gm  # a second module made on the same graph owns it
    code, nodes = gm.code, [(n.name, n.op, n.target, n.args) for n in gm.graph.nodes]
    fxexport.export(gm, tmp_path / "pkg")
    assert gm.graph.owning_module is owner
    assert (gm.code, [(n.name, n.op, n.target, n.args) for n in gm.graph.nodes]) == (code, nodes)
