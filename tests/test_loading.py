"""Loading an export: shipped bytecode, the memory-mapped safetensors reader, skeleton building."""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import json
import marshal
import os
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import fx, nn

import fxexport
from fxexport import bytecode, user_cache
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


# Compiles each source given as py_compile does, into argv[1], and as the export does, into argv[1]/*.fresh.
FRESH_COMPILE = r"""
import py_compile, sys
from pathlib import Path
from fxexport.bytecode import pyc
for source in map(Path, sys.argv[2:]):
    target = Path(sys.argv[1]) / (source.stem + ".pyc")
    py_compile.compile(str(source), cfile=str(target), dfile=source.name, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    Path(str(target) + ".fresh").write_bytes(pyc(source.read_bytes(), source.name))
"""


def test_shipped_bytecode_is_py_compiles_code_in_bytes_any_interpreter_writes(folder: Path, tmp_path: Path) -> None:
    """The export compiles in its own busy process (a fresh interpreter beside each export cost up to 30 ms):
    the pycs carry py_compile's header and code, in bytes a fresh interpreter with another hash seed writes too."""
    tag = sys.implementation.cache_tag
    sources = sorted(folder.glob("*.py"))
    assert len(sources) == 3
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", FRESH_COMPILE, str(tmp_path), *map(str, sources)], check=True, env=env)
    for source in sources:
        shipped = (folder / "__pycache__" / f"{source.stem}.{tag}.pyc").read_bytes()
        expected = (tmp_path / f"{source.stem}.pyc").read_bytes()
        assert shipped == (tmp_path / f"{source.stem}.pyc.fresh").read_bytes(), source.name
        assert shipped[:16] == expected[:16], source.name
        assert marshal.loads(shipped[16:]) == marshal.loads(expected[16:]), source.name


def _with_digest(data: bytes) -> bytes:
    return data + hashlib.sha256(data).digest()


def _damaged(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


KEPT_BYTECODE_DAMAGE = [
    ("kept", lambda entry: None),
    ("truncated", lambda entry: entry.write_bytes(entry.read_bytes()[:40])),
    ("garbage code", lambda entry: entry.write_bytes(entry.read_bytes()[:16] + b"\xe3" + bytes(64))),
    ("another source's", lambda entry: entry.write_bytes(_with_digest(bytecode.pyc(b"x = 1\n", "loader.py")))),
    # a list of 1.5 billion items, then lists in lists: marshal would take minutes and gigabytes reading it
    ("marshal bomb, damaged", lambda entry: entry.write_bytes(_damaged(_with_digest(entry.read_bytes()[:16] + b"[" * 5000)))),
    ("gone", lambda entry: shutil.rmtree(entry.parent)),  # nothing to read, nowhere to write
]


@pytest.mark.parametrize("name,damage", KEPT_BYTECODE_DAMAGE, ids=[d[0] for d in KEPT_BYTECODE_DAMAGE])
def test_loader_bytecode_kept_between_processes_is_the_bytecode_compiled_afresh(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, damage
) -> None:
    """The loader, the same text in every export, is compiled once and kept in the per-user cache: a later
    process reads it instead of compiling (3-4 ms of its first export); an entry not whole or not of this
    source is compiled afresh and replaced."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(user_cache, "cache_folder", lambda: cache)
    source = (folder / "loader.py").read_bytes()
    fresh = bytecode.pyc(source, "loader.py")
    bytecode.kept_pyc.cache_clear()
    assert bytecode.kept_pyc(source, "loader.py") == fresh
    [entry] = cache.iterdir()
    damage(entry)
    bytecode.kept_pyc.cache_clear()  # as in the next process
    compiled: list[bytes] = []
    monkeypatch.setattr(bytecode, "pyc", lambda data, relative: compiled.append(data) or fresh)
    assert bytecode.kept_pyc(source, "loader.py") == fresh
    assert compiled == ([] if name == "kept" else [source])
    assert name == "gone" or entry.read_bytes() == _with_digest(fresh)
    bytecode.kept_pyc.cache_clear()


# Keeps argv[1]'s bytecode in the per-user cache under the temporary folder (TMPDIR), in this process's settings.
KEEP_BYTECODE = r"""
import sys
from pathlib import Path
from fxexport import bytecode, user_cache
bytecode.kept_pyc(Path(sys.argv[1]).read_bytes(), "loader.py")
print(user_cache.cache_folder())
"""


def test_loader_bytecode_kept_by_an_interpreter_of_other_settings_is_not_used(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-X no_debug_ranges` compiles the same source into other bytes: its kept entry is its own."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-X", "no_debug_ranges", "-c", KEEP_BYTECODE, str(folder / "loader.py")],
                         check=True, env=env, capture_output=True, text=True)  # fmt: skip
    cache = Path(run.stdout.split()[-1])
    assert len(list(cache.glob("fxexport-*.pyc"))) == 1
    monkeypatch.setattr(user_cache, "cache_folder", lambda: cache)
    bytecode.kept_pyc.cache_clear()
    source = (folder / "loader.py").read_bytes()
    assert bytecode.kept_pyc(source, "loader.py") == bytecode.pyc(source, "loader.py")
    assert len(list(cache.glob("fxexport-*.pyc"))) == 2
    bytecode.kept_pyc.cache_clear()


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


def test_loaded_tensors_have_their_own_storage_and_ties_are_kept(folder: Path, source: fx.GraphModule) -> None:
    model = _package(folder).FxModule()
    weight = model.embed.weight
    assert model.proj.weight is weight and isinstance(weight, nn.Parameter)
    assert weight.untyped_storage().nbytes() == weight.numel() * weight.element_size()
    assert model.scale.dtype == torch.float64 and model.flags.dtype == torch.uint8
    assert list(model.state_dict()) == list(source.state_dict())
    x = torch.randn(2, 3)
    assert torch.equal(model(x), source(x))


class Wide(nn.Module):
    """A 4 MiB weight, and small tensors of odd sizes whose places in the file cannot all be aligned."""

    def __init__(self) -> None:
        super().__init__()
        self.big = nn.Linear(1024, 1024)
        self.odd = nn.Linear(1024, 3)
        self.low = nn.Linear(3, 5).half()
        self.register_buffer("flags", torch.tensor([1, 0, 1], dtype=torch.uint8))
        self.register_buffer("steps", torch.tensor(7))

    def forward(self, x):
        y = self.odd(self.big(x)) * self.flags + self.steps
        return y + self.low(y.half()).float().sum()


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[fx.GraphModule, Path]:
    torch.manual_seed(0)
    source = fx.symbolic_trace(Wide().eval())
    folder = tmp_path_factory.mktemp("wide") / "wide_pkg"
    fxexport.export(source, folder)
    return source, folder


def _present_pages(tensor: torch.Tensor) -> tuple[int, int]:
    """(present, all) of the pages inside a tensor, from /proc/self/pagemap (bit 63: present).

    The 16 pages at each end are left out: a page fault maps its neighbours too (fault-around).
    """
    page = os.sysconf("SC_PAGE_SIZE")
    first = tensor.data_ptr() // page + 16
    last = (tensor.data_ptr() + tensor.numel() * tensor.element_size()) // page - 16
    with open("/proc/self/pagemap", "rb") as pagemap:
        pagemap.seek(first * 8)
        entries = struct.unpack(f"<{last - first}Q", pagemap.read((last - first) * 8))
    return sum(entry >> 63 for entry in entries), len(entries)


def _mapped_ranges(file: Path) -> list[tuple[int, int]]:
    """The address ranges where this process has `file` mapped (/proc/self/maps)."""
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] == os.path.realpath(file):
            start, end = fields[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    return ranges


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="needs Linux's /proc/self/pagemap")
def test_weights_are_mapped_from_the_file_and_read_on_first_use(wide: tuple[fx.GraphModule, Path]) -> None:
    source, folder = wide
    model = _package(folder).FxModule()
    weight = model.big.weight
    ranges = _mapped_ranges(folder / "weights.safetensors")
    assert any(start <= weight.data_ptr() < end for start, end in ranges), "the weight is not a view of the mapped file"
    present, pages = _present_pages(weight)
    assert pages > 900 and present == 0, f"{present} of {pages} pages read before first use"
    x = torch.randn(2, 1024)
    assert torch.equal(model(x), source(x))
    assert _present_pages(weight) == (pages, pages)


def test_every_loaded_tensor_is_64_byte_aligned(wide: tuple[fx.GraphModule, Path]) -> None:
    source, folder = wide
    model = _package(folder).FxModule()
    assert {k: t.data_ptr() % 64 for k, t in model.state_dict().items()} == dict.fromkeys(source.state_dict(), 0)
    data = (folder / "weights.safetensors").read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    assert (8 + length) % 64 == 0  # the data starts on a 64-byte boundary
    header = json.loads(data[8 : 8 + length])
    starts = {k: v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"}
    # The large tensors sit on 64-byte places in the file (mapped); of the odd-sized rest (63 bytes,
    # no two of which add up to 64) only the first can: the int64 scalar, widest dtype first.
    assert [k for k, start in starts.items() if start % 64 == 0] == ["big.bias", "big.weight", "odd.weight", "steps"]


class Views(nn.Module):
    """Parameters and buffers that view one storage, with strides, offsets and a dtype of their own."""

    def __init__(self) -> None:
        super().__init__()
        base = torch.randn(4, 6)
        self.transposed = nn.Parameter(base.t())
        self.rows = nn.Parameter(base[1:3])  # storage offset 6
        self.register_buffer("column", base[:, 1])  # stride 6
        self.register_buffer("every_other", torch.arange(12.0).reshape(3, 4)[:, ::2])
        self.register_buffer("bits", base.view(torch.int32)[3])  # the same bytes as another dtype

    def forward(self, x):
        y = x @ self.transposed @ self.rows[:, :4].t()
        return y * self.every_other.sum() + self.column.sum() + self.bits.float().sum()


def test_views_keep_their_strides_offsets_and_shared_storage(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 6)
    source = torch.export.export(Views().eval(), (x,)).module()  # symbolic_trace would fold the buffers away
    fxexport.export(source, tmp_path / "views_pkg")
    model = _package(tmp_path / "views_pkg").FxModule()
    assert list(model.state_dict()) == list(source.state_dict())
    for key, want in source.state_dict().items():
        got = model.state_dict()[key]
        assert (got.stride(), got.storage_offset(), got.dtype) == (want.stride(), want.storage_offset(), want.dtype), key
        assert torch.equal(got, want), key
    storages = {key: t.untyped_storage().data_ptr() for key, t in model.state_dict().items()}
    assert storages["transposed"] == storages["rows"] == storages["column"] == storages["bits"] != storages["every_other"]
    with torch.no_grad():
        model.rows[0, 0] = 42.0  # writes through the shared storage, as in the source
    assert model.transposed[0, 1] == 42.0 and model.column[1] == model.rows[0, 1]
    assert torch.equal(model(x), source(x)) is False  # the write changed the model
    assert torch.equal(_package(tmp_path / "views_pkg").FxModule()(x), source(x))
    same = _package(tmp_path / "views_pkg").FxModule(weights=source.state_dict())
    assert torch.equal(same(x), source(x))


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
    from_file = _package(folder).FxModule(weights=tmp_path / "odd.safetensors")
    from_dict = _package(folder).FxModule(weights=load_file(tmp_path / "odd.safetensors"))
    x = torch.randn(2, 3)
    for model in (from_file, from_dict):
        assert [k for k, t in model.state_dict().items() if t.data_ptr() % 64] == []  # the unaligned ones were copied
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


def _entry(key: str, **change: object):
    """A damage: the header's entry `key` with `change`."""
    def damage(text: str) -> str:
        header = json.loads(text)
        header[key].update(change)
        return json.dumps(header)

    return damage


def _true_first(text: str) -> str:
    """proj.weight's shape with `true` in front: the same number of bytes, were true a 1."""
    header = json.loads(text)
    header["proj.weight"]["shape"] = [True, *header["proj.weight"]["shape"]]
    return json.dumps(header)


def _listed_twice(text: str) -> str:
    return text.rstrip()[:-1] + ', "scale": ' + json.dumps(json.loads(text)["scale"]) + "}"


HEADER_DAMAGE = [
    ("beyond_file", _entry("proj.weight", data_offsets=[0, 10**9]), "does not fit its offsets"),
    ("wrong_size", _entry("proj.weight", shape=[5, 4]), "does not fit its offsets"),
    ("unknown_dtype", _entry("proj.weight", dtype="F4"), "has dtype 'F4', which this loader cannot read"),
    ("negative", _entry("proj.weight", shape=[-5, -3]), "has a bad shape or offsets"),
    ("size_true", _true_first, "has a bad shape or offsets"),  # JSON's true is no size, though isinstance(True, int)
    ("not_an_object", lambda text: f"[{text}]", "its header is not a JSON object"),
    ("truncated", lambda text: text.rstrip()[:-40], "(Expecting|Unterminated)"),
    ("listed_twice", _listed_twice, "its header lists 'scale' twice"),
    ("trailing_comma", lambda text: text.rstrip()[:-1] + ",}", "Expecting value"),
    ("more_after", lambda text: text.rstrip() + " {}", "its header has more after its JSON object"),
    ("key_not_text", lambda text: "{1: 2, " + text.lstrip()[1:], "its header is not a JSON object"),
    ("nested_deeper_than_json_loads_goes", lambda text: "[" * 5000, "its header is not a JSON object"),
]


@pytest.mark.parametrize("name,damage,message", HEADER_DAMAGE, ids=[d[0] for d in HEADER_DAMAGE])
def test_damaged_headers_are_clear_errors(folder: Path, name, damage, message) -> None:
    path = folder / "weights.safetensors"
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    text = damage(data[8 : 8 + length].decode()).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length :])
    with pytest.raises(RuntimeError, match=f"cannot read weights weights.safetensors in .*{message}.*fxexport verify"):
        _package(folder).FxModule()


@pytest.fixture(scope="module")
def loader(tmp_path_factory: pytest.TempPathFactory, source: fx.GraphModule) -> ModuleType:
    folder = tmp_path_factory.mktemp("loader") / "loader_pkg"
    fxexport.export(source, folder)
    spec = importlib.util.spec_from_file_location("loader_under_test", folder / "loader.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@given(
    header=st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=6),
    indent=st.sampled_from([None, 0, 2, "\t"]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" ,\r\n", " :\t")]),
    cut=st.integers(min_value=-1, max_value=200),
    insert=st.sampled_from(["", ",", "}", "{", '"', ":", " ", "1", "]"]),
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("whole_header_chars", [1 << 16, -1], ids=["parsed whole", "member by member"])
def test_header_read_one_entry_at_a_time_is_json(
    loader: ModuleType, monkeypatch: pytest.MonkeyPatch, whole_header_chars: int, header, indent, separators, cut, insert
) -> None:
    """The loader's header reader gives exactly json.loads' members, or a ValueError where json.loads
    fails, gives no object, or gives a key twice; the text is a dump, perhaps edited at one place.
    Both ways of reading it: a small header parsed whole, a large one member by member."""
    monkeypatch.setattr(loader, "WHOLE_HEADER_CHARS", whole_header_chars)
    text = " " + json.dumps(header, indent=indent, separators=separators) + "  "
    if cut >= 0:
        cut = min(cut, len(text))
        text = text[:cut] + insert + text[cut + 1 :]
    objects: list[list[tuple[str, object]]] = []  # each object's members, the outermost last
    try:
        value = json.loads(text, object_pairs_hook=lambda pairs: objects.append(pairs) or dict(pairs))
    except ValueError:
        value = None
    members = objects[-1] if isinstance(value, dict) else None
    if members is None or len({key for key, _ in members}) != len(members):
        with pytest.raises(ValueError):
            list(loader.header_members(text))
    else:
        assert list(loader.header_members(text)) == members


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
    with module.skip_init():
        taken = nn.init.constant_  # as a module imported during the build would keep it
    taken(ours, 3.0)
    assert torch.equal(ours, torch.full((3,), 3.0))  # the wrapper it kept initialises once the build is over
    gc.disable()
    try:
        module.FxModule()
        assert not gc.isenabled()  # a caller's choice to keep it off is kept
    finally:
        gc.enable()
