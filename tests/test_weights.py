"""Weight files: shards with an index, code-only exports, load options, progress, torch.compile."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.cli import ProgressBar, main
from fxexport.ir import TensorIR
from fxexport.verify import verify_files
from fxexport.weights import header, layout


def _model(width: int = 64) -> fx.GraphModule:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.Linear(width, width), nn.BatchNorm1d(width)).eval()
    return fx.symbolic_trace(model)


def _load(folder: Path, **options):
    sys.path.insert(0, str(folder.parent))
    try:
        module = __import__(folder.name)
    finally:
        sys.path.remove(str(folder.parent))
    return module.FxModule(**options)


def test_shards_with_index_load_transparently(tmp_path: Path) -> None:
    gm = _model(512)  # each weight is 1MiB, over the smallest shard size (1MB)
    result = fxexport.export(gm, tmp_path / "sharded_pkg", max_shard_size="1MB")
    shards = sorted(f for f in result.files if f.endswith(".safetensors"))
    assert len(shards) > 1 and shards[0] == f"weights-00001-of-{len(shards):05d}.safetensors"
    index = json.loads((tmp_path / "sharded_pkg" / "weights.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(gm.state_dict()) and set(index["weight_map"].values()) == set(shards)
    model = _load(tmp_path / "sharded_pkg")
    x = torch.randn(4, 512)
    assert torch.equal(model(x), gm(x))
    assert verify_files(tmp_path / "sharded_pkg").ok


def test_code_only_export_takes_weights_from_a_path_or_state_dict(tmp_path: Path) -> None:
    gm = _model()
    fxexport.export(gm, tmp_path / "full_pkg")
    result = fxexport.export(gm, tmp_path / "code_pkg", weights="none")
    assert not any(f.endswith(".safetensors") for f in result.files)
    with pytest.raises(RuntimeError, match="written without weights: pass weights="):
        _load(tmp_path / "code_pkg")
    x = torch.randn(4, 64)
    from_file = _load(tmp_path / "code_pkg", weights=tmp_path / "full_pkg" / "weights.safetensors")
    from_folder = _load(tmp_path / "code_pkg", weights=tmp_path / "full_pkg")
    from_state = _load(tmp_path / "code_pkg", weights=gm.state_dict())
    for model in (from_file, from_folder, from_state):
        assert torch.equal(model(x), gm(x))
    skeleton = _load(tmp_path / "code_pkg", load_weights=False)
    assert all(p.is_meta for p in skeleton.parameters())


def test_meta_device_models_export_code_only(tmp_path: Path) -> None:
    with torch.device("meta"):
        gm = fx.symbolic_trace(nn.Sequential(nn.Linear(8, 8), nn.ReLU()))
    with pytest.raises(fxexport.FxExportError, match="is on the meta device .* use --weights none"):
        fxexport.export(gm, tmp_path / "meta_pkg")
    fxexport.export(gm, tmp_path / "meta_pkg", weights="none")
    weights = {"0.weight": torch.eye(8), "0.bias": torch.zeros(8)}
    model = _load(tmp_path / "meta_pkg", weights=weights)
    assert torch.equal(model(torch.ones(2, 8)), torch.ones(2, 8))


def test_dtype_and_device_options_cast_floating_tensors_only(tmp_path: Path) -> None:
    gm = _model()
    fxexport.export(gm, tmp_path / "cast_pkg")
    model = _load(tmp_path / "cast_pkg", dtype=torch.float64, device="cpu")
    assert model.get_submodule("0").weight.dtype == torch.float64
    assert model.get_submodule("3").num_batches_tracked.dtype == torch.int64
    x = torch.randn(4, 64)
    assert torch.allclose(model(x.double()).float(), gm(x), atol=1e-5)


def test_progress_reports_every_byte(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    result = fxexport.export(_model(), tmp_path / "progress_pkg", progress=lambda done, total: seen.append((done, total)))
    total = sum(p.numel() * p.element_size() for p in _model().state_dict().values())
    assert seen and seen[-1] == (total, total) and all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert result.parameter_count > 0


class _FakeTerminal:
    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_bar_only_for_large_exports_on_a_terminal() -> None:
    big = ProgressBar.THRESHOLD * 2
    for tty, total, shown in [(True, big, True), (False, big, False), (True, 1000, False)]:
        terminal = _FakeTerminal(tty)
        bar = ProgressBar(terminal)  # type: ignore[arg-type]
        for done in (0, total // 2, total):
            bar(done, total)
        assert ("100%" in terminal.text) == shown


def test_cli_weights_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "fxexport.examples:mlp", "-o", str(tmp_path / "cli_code"), "--weights", "none", "-q"]) == 0
    assert not (tmp_path / "cli_code" / "weights.safetensors").exists()
    (tmp_path / "wide.py").write_text("from torch import nn\nmodel = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512))\n")
    assert main(["export", f"{tmp_path / 'wide.py'}:model", "-o", str(tmp_path / "cli_sharded"), "--max-shard-size", "1MB", "-q"]) == 0
    assert (tmp_path / "cli_sharded" / "weights.safetensors.index.json").is_file()
    for size, message in [("lots", "bad size 'lots'"), ("10KB", "max shard size '10KB' is under the 1MB minimum")]:
        assert main(["export", "fxexport.examples:mlp", "-o", str(tmp_path / "cli_bad"), "--max-shard-size", size]) == 2
        assert message in capsys.readouterr().err


def test_generated_module_works_under_torch_compile(tmp_path: Path) -> None:
    gm = _model()
    fxexport.export(gm, tmp_path / "compiled_pkg")
    model = _load(tmp_path / "compiled_pkg")
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    x = torch.randn(4, 64)
    assert torch.equal(compiled(x), gm(x))


def _tensor_ir(key: str, tensor: torch.Tensor) -> TensorIR:
    return TensorIR(key, "buffer", tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."), False, True, tensor)


LAYOUTS = [
    # (name, tensors as (key, dtype, numel), keys that must start on a 64-byte place)
    ("multiples_first", [("a", torch.float32, 3), ("b", torch.float32, 16), ("c", torch.float64, 8)], {"b", "c", "a"}),
    # 52 + 12 and 40 + 24 bytes make 64: each pair starts aligned, and so does what follows (in key order, 2)
    ("pairs_close_the_gap", [("a", torch.float32, 3), ("b", torch.float32, 10), ("c", torch.float32, 13),
                             ("d", torch.float32, 6), ("e", torch.uint8, 5)], {"b", "c", "e"}),  # fmt: skip
    # widest dtype first, so each is aligned for its dtype: 12 + 30 + 3 bytes, only the first on 64
    ("no_pair_fits", [("a", torch.float32, 3), ("b", torch.float16, 15), ("c", torch.uint8, 3)], {"a"}),
]


@pytest.mark.parametrize("name,specs,aligned", LAYOUTS, ids=[case[0] for case in LAYOUTS])
def test_layout_aligns_what_it_can_and_every_tensor_for_its_dtype(name, specs, aligned) -> None:
    items = [_tensor_ir(key, torch.zeros(numel, dtype=dtype)) for key, dtype, numel in specs]
    position, starts = 0, {}
    for item in layout(items):
        assert position % item.tensor.element_size() == 0, item.key
        starts[item.key] = position
        position += item.nbytes
    assert sorted(starts) == sorted(key for key, _, _ in specs)
    assert {key for key, start in starts.items() if start % 64 == 0} == aligned
    assert len(header(layout(items))) % 64 == 0  # the data after the 8-byte length and the header starts aligned


PIECE_TENSORS = [
    ("float32", lambda: torch.arange(12.0).reshape(3, 4)),
    ("bfloat16", lambda: torch.arange(12.0).to(torch.bfloat16)),
    ("bool", lambda: torch.arange(5) % 2 == 0),
    ("int64_scalar", lambda: torch.tensor(7)),
    ("empty", lambda: torch.zeros(3, 0)),
    ("transposed", lambda: torch.arange(12.0).reshape(3, 4).t()),
    ("offset_view", lambda: torch.arange(12.0)[5:9]),
    ("parameter", lambda: nn.Parameter(torch.arange(6.0))),
]


@pytest.mark.parametrize("name,make", PIECE_TENSORS, ids=[p[0] for p in PIECE_TENSORS])
def test_weight_bytes_are_the_tensors_bytes_in_order(name: str, make) -> None:
    from fxexport.weights import _tensor_pieces

    tensor = make()
    expected = tensor.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    assert b"".join(bytes(piece) for piece in _tensor_pieces(tensor)) == expected


class _Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.b.weight = self.a.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


class _Views(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        whole = torch.arange(32.0)
        self.register_buffer("low", whole[:16].view(4, 4))
        self.register_buffer("high", whole[16:].view(4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.low + x @ self.high


@pytest.mark.parametrize("build", [lambda: nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)), _Tied, _Views], ids=["plain", "tied", "views"])
def test_a_weight_file_hashed_on_a_thread_has_the_files_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build) -> None:
    import blake3

    from fxexport import hashes

    monkeypatch.setattr(hashes, "THREAD_BYTES", 0)  # a thread however small the weights
    monkeypatch.setattr(hashes, "THREAD_MEAN_BYTES", 0)
    computed: list[int] = []
    real = hashes.safetensors_digest
    monkeypatch.setattr(hashes, "safetensors_digest", lambda *args: computed.append(1) or real(*args))
    fxexport.export(fx.symbolic_trace(build()), tmp_path / "pkg")
    manifest = json.loads((tmp_path / "pkg" / "fxexport.json").read_text())
    assert manifest["files"]["weights.safetensors"] == "blake3:" + blake3.blake3((tmp_path / "pkg" / "weights.safetensors").read_bytes()).hexdigest()
    assert len(computed) == 1  # hashed once, from memory, beside the writing


HASHED_ON_A_THREAD = [
    # (id, layers of (in, out), max_shard_size, THREAD_BYTES, weight files hashed on the thread)
    ("under_thread_bytes", [(256, 256)] * 6, None, 8 << 20, 0),  # 1.5 MB
    ("under_thread_bytes_sharded", [(256, 256)] * 6, "1MB", 8 << 20, 0),
    ("large_tensors", [(256, 512)] * 6, None, 1 << 20, 1),  # 257 KiB on average
    ("large_tensors_sharded", [(256, 512)] * 6, "2MB", 1 << 20, 2),
    ("small_tensors", [(64, 64)] * 200, None, 1 << 20, 0),  # 8.4 KiB on average
]


@pytest.mark.parametrize(("layers", "shards", "thread_bytes", "threads"), [c[1:] for c in HASHED_ON_A_THREAD], ids=[c[0] for c in HASHED_ON_A_THREAD])
def test_weight_files_of_small_or_few_bytes_are_hashed_as_they_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layers: list[tuple[int, int]], shards: str | None, thread_bytes: int, threads: int
) -> None:
    """A file under THREAD_BYTES, or of tensors under THREAD_MEAN_BYTES on average, gets no hashing thread (which
    would wait for the interpreter beside the writing): its digest comes from the bytes as they are written.
    Either way the digest is the file's."""
    import blake3

    from fxexport import hashes

    monkeypatch.setattr(hashes, "THREAD_BYTES", thread_bytes)
    computed: list[int] = []
    real = hashes.safetensors_digest
    monkeypatch.setattr(hashes, "safetensors_digest", lambda *args: computed.append(1) or real(*args))
    model = nn.Sequential(*(nn.Linear(n, m) for n, m in layers))
    fxexport.export(fx.symbolic_trace(model), tmp_path / "pkg", max_shard_size=shards)
    files = json.loads((tmp_path / "pkg" / "fxexport.json").read_text())["files"]
    weights = sorted(name for name in files if name.endswith(".safetensors"))
    assert len(weights) == (1 if shards is None else 2)
    for name in weights:
        assert files[name] == "blake3:" + blake3.blake3((tmp_path / "pkg" / name).read_bytes()).hexdigest()
    assert len(computed) == threads


@pytest.mark.parametrize("width", [1, 1000, 1 << 20, (1 << 20) + 3, 3 << 20])  # bytes: several pieces to a write, pieces cut
def test_weights_written_in_calls_of_a_megabyte_are_the_tensors_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """Each system call writes at most 1 MB (ten times faster than larger calls on the kernel here); the
    file is the tensors' bytes in order, and progress counts each tensor byte once."""
    import os

    from fxexport import weights

    sizes: list[int] = []
    real = os.writev
    monkeypatch.setattr(weights.os, "writev", lambda fd, views: sizes.append(sum(map(len, views))) or real(fd, views))
    tensors = [torch.arange(width, dtype=torch.uint8), *(torch.full((3,), float(i)) for i in range(5)), torch.arange(width // 4 + 1, dtype=torch.int32)]
    items = [_tensor_ir(f"t{i}", t) for i, t in enumerate(tensors)]
    counted: list[int] = []
    weights.write_safetensors(tmp_path / "w.safetensors", items, counted.append)
    assert max(sizes) <= 1 << 20
    assert sum(counted) == sum(t.nbytes for t in tensors)
    from safetensors.torch import load_file

    loaded = load_file(str(tmp_path / "w.safetensors"))
    assert all(torch.equal(loaded[f"t{i}"], t) for i, t in enumerate(tensors))


def test_a_tensor_of_another_layout_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    """An MKLDNN tensor (onednn lowering's prepacked weights) cannot be saved: an error before anything is written."""
    root = nn.Module()
    root.register_buffer("packed", torch.randn(4, 4).to_mkldnn())
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.add, (x, graph.call_method("to_dense", (graph.get_attr("packed"),)))))
    with pytest.raises(fxexport.FxExportError, match=r"^tensor 'packed' has the _mkldnn layout .*\.to_dense\(\)\)$"):
        fxexport.export(fx.GraphModule(root, graph), tmp_path / "pkg")
    assert not (tmp_path / "pkg").exists()
