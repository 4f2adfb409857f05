"""Loading an export: shipped bytecode, the memory-mapped safetensors reader, skeleton building."""

from __future__ import annotations

import gc
import json
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.verify import verify_files

# Imports the package at argv[1] in a fresh process without fxexport or safetensors that, with
# "refuse", cannot compile Python source: it succeeds only when the interpreter takes the
# shipped bytecode. Prints the model's output.
NO_COMPILE = r"""
import importlib, importlib._bootstrap_external as external, sys
from pathlib import Path
sys.modules["fxexport"] = sys.modules["safetensors"] = None
def refuse(*args, **kwargs):
    raise RuntimeError("compiled from source")
if sys.argv[2] == "refuse":
    external.SourceLoader.source_to_code = refuse
folder = Path(sys.argv[1])
sys.path.insert(0, str(folder.parent))
import torch
model = importlib.import_module(folder.name).FxModule()
print(model(torch.ones(1, 3)).sum().item(), model.marker if hasattr(model, "marker") else "")
"""


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.proj = nn.Linear(3, 5, bias=False)
        self.proj.weight = self.embed.weight  # tied
        self.register_buffer("flags", torch.tensor([1, 0, 1], dtype=torch.uint8))
        self.register_buffer("scale", torch.full((3,), 0.5, dtype=torch.float64))

    def forward(self, x):
        return self.proj((x.double() * self.scale).float() * self.flags) + self.embed.weight.sum()


@pytest.fixture(scope="module")
def source() -> fx.GraphModule:
    torch.manual_seed(0)
    return fx.symbolic_trace(Net().eval())


@pytest.fixture
def folder(tmp_path: Path, source: fx.GraphModule) -> Path:
    fxexport.export(source, tmp_path / "load_pkg")
    return tmp_path / "load_pkg"


def _package(folder: Path) -> ModuleType:
    sys.path.insert(0, str(folder.parent))
    try:
        __import__(folder.name)
        return sys.modules[f"{folder.name}.module"]
    finally:
        sys.path.remove(str(folder.parent))
        for name in [n for n in sys.modules if n == folder.name or n.startswith(folder.name + ".")]:
            del sys.modules[name]


def _fresh(folder: Path, mode: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", NO_COMPILE, str(folder), mode], capture_output=True, text=True, env=env)


def test_shipped_bytecode_is_hash_checked_and_used_wherever_the_folder_goes(folder: Path, tmp_path: Path) -> None:
    pyc = folder / "__pycache__" / f"module.{sys.implementation.cache_tag}.pyc"
    assert struct.unpack("<I", pyc.read_bytes()[4:8])[0] == 0b11  # hash-based, checked against the source
    moved = tmp_path / "elsewhere" / "moved_pkg"
    shutil.copytree(folder, moved)
    run = _fresh(moved, "refuse")
    assert run.returncode == 0, run.stderr
    module = moved / "module.py"
    module.write_text(module.read_text().replace("        super().__init__()\n", "        super().__init__()\n        self.marker = 'edited'\n", 1))
    assert "compiled from source" in _fresh(moved, "refuse").stderr  # an edited source is never run stale
    assert _fresh(moved, "allow").stdout.split()[-1] == "edited"


def test_no_bytecode_option(tmp_path: Path, source: fx.GraphModule) -> None:
    fxexport.export(source, tmp_path / "plain_pkg", bytecode=False)
    assert not (tmp_path / "plain_pkg" / "__pycache__").exists()
    assert verify_files(tmp_path / "plain_pkg").ok


def test_altered_bytecode_is_reported_by_verify(folder: Path) -> None:
    assert verify_files(folder).ok
    pyc = folder / "__pycache__" / f"module.{sys.implementation.cache_tag}.pyc"
    data = bytearray(pyc.read_bytes())
    data[-20] ^= 1
    pyc.write_bytes(bytes(data))
    assert any("is not what module.py compiles to" in p for p in verify_files(folder).problems)


def test_loaded_tensors_are_mapped_views_with_their_own_storage(folder: Path, source: fx.GraphModule) -> None:
    model = _package(folder).FxModule()
    weight = model.embed.weight
    assert model.proj.weight is weight and isinstance(weight, nn.Parameter)
    assert weight.untyped_storage().nbytes() == weight.numel() * weight.element_size()
    assert model.scale.dtype == torch.float64 and model.flags.dtype == torch.uint8
    assert list(model.state_dict()) == list(source.state_dict())
    x = torch.randn(2, 3)
    assert torch.equal(model(x), source(x))


def _safetensors_in_order(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    """A valid safetensors file with the tensors in the given order (offsets not aligned)."""
    names = {torch.float32: "F32", torch.uint8: "U8", torch.float64: "F64"}
    header, offset, blobs = {}, 0, []
    for key, tensor in tensors.items():
        data = tensor.contiguous().view(torch.uint8).numpy().tobytes()
        header[key] = {"dtype": names[tensor.dtype], "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_weights_from_another_writer_load_even_when_unaligned(folder: Path, source: fx.GraphModule, tmp_path: Path) -> None:
    tensors = {"flags": source.flags, "embed.weight": source.embed.weight.detach(), "scale": source.scale}
    _safetensors_in_order(tmp_path / "odd.safetensors", tensors)  # 3 bytes of uint8 first: the floats are unaligned
    from safetensors.torch import load_file

    assert torch.equal(load_file(tmp_path / "odd.safetensors")["embed.weight"], source.embed.weight)
    model = _package(folder).FxModule(weights=tmp_path / "odd.safetensors")
    x = torch.randn(2, 3)
    assert torch.equal(model(x), source(x))


LOAD_ERRORS = [
    ("missing", lambda s: {k: v for k, v in s.items() if k != "scale"}, "no saved values for scale"),
    ("unknown", lambda s: {**s, "extra.weight": torch.ones(1)}, "the weights hold 'extra.weight', which this model does not have"),
]


@pytest.mark.parametrize("name,change,message", LOAD_ERRORS, ids=[e[0] for e in LOAD_ERRORS])
def test_weights_that_do_not_fit_are_named(folder: Path, source: fx.GraphModule, name, change, message) -> None:
    tensors = {**source.state_dict(), "scale": source.scale}
    with pytest.raises(RuntimeError, match=message):
        _package(folder).FxModule(weights=change(tensors))


HEADER_DAMAGE = [
    ("beyond_file", lambda h: h["proj.weight"].update(data_offsets=[0, 10**9]), "does not fit its offsets"),
    ("wrong_size", lambda h: h["proj.weight"].update(shape=[5, 4]), "does not fit its offsets"),
    ("unknown_dtype", lambda h: h["proj.weight"].update(dtype="F4"), "has dtype 'F4', which this loader cannot read"),
    ("negative", lambda h: h["proj.weight"].update(shape=[-5, -3]), "has a bad shape or offsets"),
]


@pytest.mark.parametrize("name,damage,message", HEADER_DAMAGE, ids=[d[0] for d in HEADER_DAMAGE])
def test_damaged_headers_are_clear_errors(folder: Path, name, damage, message) -> None:
    path = folder / "weights.safetensors"
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    damage(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length :])
    with pytest.raises(RuntimeError, match=f"cannot read weights weights.safetensors in .*{message}.*fxexport verify"):
        _package(folder).FxModule()


def test_skip_init_leaves_other_threads_and_the_garbage_collector_alone(folder: Path) -> None:
    module = _package(folder)
    def initialisers() -> dict[str, object]:
        return {name: fn for name, fn in vars(nn.init).items() if not name.startswith("_")}

    originals = initialisers()
    ours, theirs = torch.zeros(3), torch.zeros(3)
    with module.skip_init():
        assert not gc.isenabled()
        nn.init.constant_(ours, 3.0)
        worker = threading.Thread(target=nn.init.constant_, args=(theirs, 3.0))
        worker.start()
        worker.join()
    assert gc.isenabled() and initialisers() == originals
    assert torch.equal(ours, torch.zeros(3)) and torch.equal(theirs, torch.full((3,), 3.0))
    gc.disable()
    try:
        module.FxModule()
        assert not gc.isenabled()  # a caller's choice to keep it off is kept
    finally:
        gc.enable()
