"""Quantized GraphModules from both flows export, move, and give the same bits in a fresh process with only torch."""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import fx, nn
from torch.utils._python_dispatch import return_and_correct_aliasing

import fxexport
from fxexport import packed_objects
from fxexport.show import show
from fxexport.verify import verify_against, verify_files
from tests.packages import imported
from tests.quantized import (
    FX_MODELS,
    HAS_TORCHAO,
    MODELS,
    PT2E_MODELS,
    SUBCLASS_MODEL,
    QuantizedModel,
    small_image,
)
from tests.roundtrip import check_in_fresh_process, record

needs_torchao = pytest.mark.skipif(not HAS_TORCHAO, reason="torchao is not installed (pip install -e '.[quant]')")
BY_NAME = {m.name: m for m in MODELS}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, fx.GraphModule]]:
    """Every model exported and moved; its GraphModule by name."""
    staging, moved = tmp_path_factory.mktemp("staging"), tmp_path_factory.mktemp("moved")
    models = {}
    for model in MODELS:
        models[model.name] = model.build()
        fxexport.export(models[model.name], staging / model.name)
        shutil.move(str(staging / model.name), str(moved / model.name))
    return moved, models


@pytest.fixture(scope="module")
def report(exported: tuple[Path, dict[str, fx.GraphModule]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    moved, models = exported
    expect = tmp_path_factory.mktemp("expect")
    for model in MODELS:
        record(model.name, models[model.name], model.args(), {}, None, expect)
    return check_in_fresh_process(moved, expect, [m.name for m in MODELS], block=("torchao",))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_quantized_round_trip_is_bitwise_with_only_torch(model: QuantizedModel, report: dict[str, list[str]]) -> None:
    assert report[model.name] == []


def test_both_flows_have_models() -> None:
    assert len(FX_MODELS) >= 8 and len(PT2E_MODELS) >= 3
    if not HAS_TORCHAO:
        pytest.skip("torchao is not installed: the PT2E models are left out (pip install -e '.[quant]')")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_a_package_loads_its_source_state_dict(model: QuantizedModel, exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    """`weights=` the source's own state_dict: quantized layers' entries (packed, `dtype`, `scale`) read by the layers."""
    moved, models = exported
    with imported(moved / model.name) as package:
        loaded = package.FxModule(weights=models[model.name].state_dict())
        assert torch.equal(loaded(*model.args()), models[model.name](*model.args()))


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "fxexport.json").read_text())


def test_quantized_tensors_are_integers_with_scales_in_the_manifest(exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    tensors = _manifest(exported[0] / "fx_static_resnet")["tensors"]
    weight = tensors["stem.0.weight"]
    assert (weight["dtype"], weight["kind"]) == ("int8", "packed")
    assert weight["quantized"] == {"dtype": "qint8", "qscheme": "per_channel_affine", "axis": 0,
                                   "scale": "stem.0.weight.q_scale", "zero_point": "stem.0.weight.q_zero_point"}  # fmt: skip
    assert (tensors["stem.0.weight.q_scale"]["dtype"], tensors["stem.0.weight.q_scale"]["shape"]) == ("float64", [16])
    per_tensor = _manifest(exported[0] / "fx_static_qnnpack_mlp")["tensors"]["layers.0.weight"]["quantized"]
    assert (per_tensor["qscheme"], per_tensor["axis"]) == ("per_tensor_affine", None)


def test_packed_layers_are_set_through_their_setter(exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    packed = _manifest(exported[0] / "fx_static_resnet")["packed_weights"]
    assert packed["stem.0"] == {"setter": "set_weight_bias", "tensors": ["weight", "bias"]}
    lstm = _manifest(exported[0] / "fx_dynamic_lstm")["packed_weights"]["lstm"]
    assert lstm["setter"] == "set_weight_bias" and "weight_ih_l1" in lstm["tensors"]
    assert _manifest(exported[0] / "fx_weight_only_embedding")["packed_weights"]["embed"]["setter"] == "set_weight"


def test_quantized_layers_are_constructor_calls_with_their_output_qparams(exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    code = (exported[0] / "fx_static_resnet" / "module.py").read_text()
    assert "import torch.ao.nn.intrinsic.quantized as nniq" in code and "import torch.ao.nn.quantized as nnq" in code
    assert "nniq.ConvReLU2d(3, 16, 3, padding=1)" in code and "self.fc = nnq.Linear(64, 10)" in code
    assert f"self.fc.scale = {exported[1]['fx_static_resnet'].fc.scale!r}" in code
    assert 'with torch.device("cpu"), skip_init():' in code  # quantized kernels cannot pack on the meta device
    dynamic = (exported[0] / "fx_dynamic_transformer" / "module.py").read_text()
    assert "nnqd.Linear(32, 64)" in dynamic
    fp16 = (exported[0] / "fx_dynamic_fp16_gru" / "module.py").read_text()
    assert "nnqd.GRU(6, 8, batch_first=True, dtype=torch.float16)" in fp16 and "nnqd.Linear(8, 3, dtype=torch.float16)" in fp16
    reference = (exported[0] / "fx_reference_conv_bn_relu" / "module.py").read_text()  # fused layers take float layers only
    assert "self.hidden = nni.LinearReLU(nn.Linear(8, 16), nn.ReLU())" in reference and 'self.hidden.add_module(\n                "0",\n                nnqr.Linear(' in reference


@needs_torchao
def test_pt2e_packages_import_torchs_own_decomposed_ops(exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    for model in PT2E_MODELS:
        code = (exported[0] / model.name / "module.py").read_text()
        assert "import torch.ao.quantization.fx._decomposed  # defines torch.ops.quantized_decomposed" in code
        assert "torchao" not in code and _manifest(exported[0] / model.name)["warnings"] == []


@pytest.mark.parametrize("name", ["fx_static_resnet", "fx_dynamic_lstm", "fx_static_functional", *(["pt2e_x86_resnet"] if HAS_TORCHAO else [])])
def test_verify_against_the_source_finds_no_difference(name: str, exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    result = verify_against(exported[0] / name, exported[1][name], BY_NAME[name].args(), {}, rtol=0.0, atol=0.0)
    assert result.ok and all(o.max_abs == 0.0 for o in result.outputs), result.report()


@needs_torchao
def test_tensor_subclass_weights_are_stored_as_their_parts_and_need_torchao(tmp_path: Path) -> None:
    gm = SUBCLASS_MODEL.build()
    fxexport.export(gm, tmp_path / "staging" / SUBCLASS_MODEL.name)
    shutil.move(str(tmp_path / "staging" / SUBCLASS_MODEL.name), str(tmp_path / SUBCLASS_MODEL.name))
    record(SUBCLASS_MODEL.name, gm, SUBCLASS_MODEL.args(), {}, None, tmp_path / "expect")
    assert check_in_fresh_process(tmp_path, tmp_path / "expect", [SUBCLASS_MODEL.name]) == {SUBCLASS_MODEL.name: []}
    manifest = _manifest(tmp_path / SUBCLASS_MODEL.name)
    assert manifest["tensors"]["layers.0.weight"]["subclass"] == {
        "class": "torchao.quantization.Int8Tensor", "parts": [f"layers.0.weight.{n}" for n in ("qdata", "scale", "zero_point")]}  # fmt: skip
    assert any("torchao" in warning for warning in manifest["warnings"])
    assert "torchao" in (tmp_path / SUBCLASS_MODEL.name / "README.md").read_text()
    shown = show(tmp_path / SUBCLASS_MODEL.name)
    assert "torchao" in shown.report() and not shown.problems  # the subclass's bytes are its parts'
    assert verify_files(tmp_path / SUBCLASS_MODEL.name).ok
    without = check_in_fresh_process(tmp_path, tmp_path / "expect", [SUBCLASS_MODEL.name], block=("torchao",))
    assert [p for p in without[SUBCLASS_MODEL.name] if "torchao" in p], without  # the import error names the package


class Opaque(torch.Tensor):
    """A wrapper subclass whose flatten context holds an object with no code form."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Opaque:
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    def __tensor_flatten__(self) -> tuple[list[str], object]:
        return ["inner"], object()

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, torch.Tensor], context: object, size: object, stride: object) -> Opaque:
        return Opaque(inner["inner"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrapped = [a.inner if isinstance(a, Opaque) else a for a in args]
        return return_and_correct_aliasing(func, args, kwargs or {}, func(*unwrapped, **(kwargs or {})))


def test_a_tensor_subclass_that_cannot_be_stored_is_a_one_line_error(tmp_path: Path) -> None:
    root = nn.Module()
    root.register_buffer("weight", Opaque(torch.ones(2, 2)))
    graph = fx.Graph()
    graph.output(graph.get_attr("weight"))
    with pytest.raises(fxexport.FxExportError) as error:
        fxexport.export(fx.GraphModule(root, graph), tmp_path / "opaque")
    message = str(error.value)
    assert "\n" not in message and "buffer 'weight'" in message and "Opaque (a tensor subclass)" in message
    assert not (tmp_path / "opaque").exists()



def test_a_qnnpack_model_runs_on_the_qnnpack_engine(tmp_path: Path) -> None:
    """Packed weights are packed for the engine in use: built, exported, loaded and run under qnnpack, the bits match."""
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    try:
        model = BY_NAME["fx_static_qnnpack_mlp"]
        gm = model.build()
        fxexport.export(gm, tmp_path / "qnnpack_pkg")
        with imported(tmp_path / "qnnpack_pkg") as package:
            assert torch.equal(package.FxModule()(*model.args()), gm(*model.args()))
    finally:
        torch.backends.quantized.engine = previous


def _packed_conv(edit: str) -> nn.Module:
    """A quantized conv (packed weights) in a holder, edited after construction as a library might."""
    import torch.ao.nn.quantized as nnq

    conv = nnq.Conv2d(2, 4, 3, padding=1)
    conv.scale, conv.zero_point = 0.25, 3
    if edit == "setting":
        conv.groups_note = "kept"
    elif edit == "hook":
        conv.register_forward_hook(lambda *_: None)
    elif edit == "attribute":
        conv.transposed = True  # no constructor argument of nnq.Conv2d says so
    return conv


PACKED_EDITS = [  # (edit, a line module.py must have, or the error's words)
    ("setting", "self.conv.groups_note = 'kept'", None),
    ("hook", None, "has hooks that a constructor call does not register"),
    ("attribute", None, "attribute 'transposed' is False, expected True"),
]


@pytest.mark.parametrize("edit,line,error", PACKED_EDITS, ids=[e[0] for e in PACKED_EDITS])
def test_packed_layers_are_verified_without_their_weights(edit: str, line: str | None, error: str | None) -> None:
    root = nn.Module()
    root.conv = _packed_conv(edit)
    graph = fx.Graph()
    graph.output(graph.call_module("conv", (graph.placeholder("x"),)))
    gm = fx.GraphModule(root, graph)
    if error is not None:
        with pytest.raises(fxexport.FxExportError, match=error):
            fxexport.generate(gm, package_name="pkg")
        return
    _, sources = fxexport.generate(gm, package_name="pkg")
    assert line in sources["module.py"].replace('"', "'")
    assert "self.conv.scale = 0.25" in sources["module.py"] and "self.conv.zero_point = 3" in sources["module.py"]


class _CountPacking(torch.overrides.TorchFunctionMode):
    """Counts the quantized ops that pack weights, run under it."""

    def __init__(self) -> None:
        super().__init__()
        self.packed: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if str(getattr(func, "_qualified_op_name", "")).endswith("_prepack"):
            self.packed.append(func._qualified_op_name)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name", ["fx_static_resnet", "fx_static_conv_bn_relu"])
def test_packed_convs_are_verified_without_packing_weights(name: str) -> None:
    """Packing a conv's (zero) weights took most of a quantized export; the package sets them through the setter."""
    gm = BY_NAME[name].build()
    with _CountPacking() as counted:
        fxexport.generate(gm, package_name="pkg")
    assert [op for op in counted.packed if "conv" in op] == []


class _OddlyStridedQuantized(nn.Module):
    """A quantized buffer laid out as fbgemm on AVX2 unpacks a 1x1 conv's weight: strides of its own on
    its size-1 dimensions ([16, 1, 16, 16]), which `contiguous()` keeps."""

    def __init__(self) -> None:
        super().__init__()
        values = torch.quantize_per_tensor(torch.randn(32, 16, 1, 1, generator=torch.Generator().manual_seed(0)), 0.05, 3, torch.qint8)
        self.register_buffer("q", values.as_strided((32, 16, 1, 1), (16, 1, 16, 16)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q, x * 2  # symbolic_trace would fold an op on the buffer alone into a constant


def test_a_quantized_tensor_strided_on_its_size_one_dimensions_loads(tmp_path: Path) -> None:
    gm = fx.symbolic_trace(_OddlyStridedQuantized())
    assert gm.q.stride() == (16, 1, 16, 16)
    fxexport.export(gm, tmp_path / "odd")
    x = torch.randn(32, 16, 1, 1)
    with imported(tmp_path / "odd") as package:
        loaded = package.FxModule()
        assert torch.equal(loaded.q.int_repr(), gm.q.int_repr())
        assert (loaded.q.q_scale(), loaded.q.q_zero_point()) == (gm.q.q_scale(), gm.q.q_zero_point())
        (mine, _), (theirs, _) = loaded(x), gm(x)
        assert torch.equal(mine.dequantize(), theirs.dequantize())


def _quantized(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    return torch.quantize_per_tensor(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), 0.05, 3, dtype)


class _SharedQuantized(nn.Module):
    """Quantized buffers that share memory: one tensor under two names, a reshape of another (the whole
    storage, laid out plainly) and a slice of it, beside per-channel and 32-bit ones."""

    def __init__(self) -> None:
        super().__init__()
        tied, whole = _quantized((8, 4), torch.qint8, 0), _quantized((10, 4), torch.quint8, 1)
        per_channel = torch.quantize_per_channel(torch.randn(6, 3), torch.rand(6, dtype=torch.double) + 0.01, torch.arange(6), 0, torch.qint8)
        for name, value in [("a", tied), ("b", tied), ("whole", whole), ("flat", whole.reshape(40)), ("part", whole[2:6]),
                            ("per_channel", per_channel), ("wide", _quantized((5,), torch.qint32, 2))]:  # fmt: skip
            self.register_buffer(name, value)


def _returning_buffers(module: nn.Module) -> fx.GraphModule:
    """A graph returning each buffer by its own name (symbolic_trace reads a tied one by its first)."""
    graph = fx.Graph()
    graph.output(tuple(graph.get_attr(name) for name, _ in module.named_buffers(remove_duplicate=False)))
    return fx.GraphModule(module, graph)


def test_quantized_tensors_sharing_memory_load_as_they_were(tmp_path: Path) -> None:
    gm = _returning_buffers(_SharedQuantized())
    fxexport.export(gm, tmp_path / "shared")
    with imported(tmp_path / "shared") as package:
        loaded = package.FxModule()
        assert loaded.a is loaded.b
        for name, theirs in gm.named_buffers(remove_duplicate=False):
            mine = getattr(loaded, name)
            assert (mine.dtype, mine.shape, mine.qscheme()) == (theirs.dtype, theirs.shape, theirs.qscheme()), name
            assert torch.equal(mine.int_repr(), theirs.int_repr()), name
        for mine, theirs in zip(loaded(), gm()):
            assert torch.equal(mine.dequantize(), theirs.dequantize())


@pytest.mark.parametrize("dtype", [torch.qint8, torch.quint8, torch.qint32])
def test_integer_values_of_a_quantized_tensor_are_a_view_of_its_memory(dtype: torch.dtype) -> None:
    from fxexport.quantized import integer_values

    tensor = _quantized((4, 6), dtype, 0)[1:3]
    values = integer_values(tensor)
    assert values.data_ptr() == tensor.data_ptr() and values.stride() == tensor.stride()
    assert torch.equal(values, tensor.int_repr())


def test_integer_values_of_a_packed_sub_byte_tensor_are_unpacked() -> None:
    from fxexport.quantized import integer_values

    tensor = torch.quantize_per_tensor(torch.rand(4, 6), 0.1, 0, torch.quint4x2)
    assert torch.equal(integer_values(tensor), tensor.int_repr())


def test_packed_objects_are_packed_again_with_their_settings_and_kept_in_the_state_dict(exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    moved, models = exported
    linear = {"op": "linear_prepack", "tensors": ["weight", "bias"], "settings": []}
    assert _manifest(moved / "fx_static_functional")["packed_objects"] == {
        "classifier_packed_weight_0": linear,
        "hidden_packed_weight_0": linear,  # a layer called twice: two objects, each packed again
        "hidden_packed_weight_1": linear,
        "features_packed_weight_0": {"op": "conv2d_prepack", "tensors": ["weight", "bias"], "settings": [[2, 1], [1, 3], [3, 2], 1]},
        "upsample_packed_weight_0": {"op": "conv_transpose2d_prepack", "tensors": ["weight", "bias"],
                                     "settings": [[2, 3], [1, 2], [1, 0], [1, 2], 2]},
    }  # fmt: skip
    fp16 = _manifest(moved / "fx_dynamic_fp16_functional")["packed_objects"]
    assert {k: v["op"] for k, v in fp16.items()} == dict.fromkeys(["classifier_packed_weight_0", "hidden_packed_weight_0", "hidden_packed_weight_1"], "linear_prepack_fp16")
    for name in ("fx_static_functional", "fx_dynamic_fp16_functional"):
        source = models[name]
        with imported(moved / name) as package:
            assert list(package.FxModule().state_dict()) == list(source.state_dict())  # the objects last, as the source lists them
            empty = package.FxModule(load_weights=False)
            assert list(empty.state_dict()) == list(source.state_dict())  # None where no object is packed yet
            empty.load_state_dict(source.state_dict(), assign=True)  # the objects taken back from a state_dict
            given = package.FxModule(weights=source.state_dict())  # read through load_state_dict
            pickled = pickle.loads(pickle.dumps(package.FxModule()))  # the state_dict hooks are functions of loader.py
            for model in (empty, given, pickled):
                assert torch.equal(model(*small_image()), source(*small_image()))


def test_packed_objects_in_a_flat_export_are_packed_again(tmp_path: Path, exported: tuple[Path, dict[str, fx.GraphModule]]) -> None:
    source = exported[1]["fx_static_functional"]
    fxexport.export(source, tmp_path / "flat_functional", structure="flat")
    with imported(tmp_path / "flat_functional") as package:
        assert torch.equal(package.FxModule()(*small_image()), source(*small_image()))


def test_a_packed_object_that_would_not_come_back_the_same_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packed_objects, "_same", lambda a, b: False)
    with pytest.raises(fxexport.FxExportError, match=r"^attribute 'features_packed_weight_0': its Conv2dPackedParamsBase does not come back the same from conv2d_prepack") as error:
        fxexport.export(BY_NAME["fx_static_functional"].build(), tmp_path / "pkg")
    assert "\n" not in str(error.value) and not (tmp_path / "pkg").exists()


def _embedding_table() -> torch.ScriptObject:
    return torch.ao.nn.quantized.Embedding(10, 4)._packed_params._packed_weight


def _qnnpack_conv3d() -> torch.ScriptObject:
    weight = torch.quantize_per_tensor(torch.randn(4, 3, 3, 3, 3), 0.1, 0, torch.qint8)
    return torch.ops.quantized.conv3d_prepack(weight, None, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)


UNSTORABLE_OBJECTS = [  # (name, engine, the object, the op reading it, the error)
    ("embedding", None, _embedding_table, torch.ops.quantized.embedding_byte, "a packed EmbeddingPackedParamsBase, which fxexport cannot store"),
    ("qnnpack conv3d", "qnnpack", _qnnpack_conv3d, torch.ops.quantized.conv3d, r"its Conv3dPackedParamsBase cannot be unpacked \(QNNPACK only"),
]  # fmt: skip


@pytest.mark.parametrize("name,engine,value,op,error", UNSTORABLE_OBJECTS, ids=[c[0] for c in UNSTORABLE_OBJECTS])
def test_a_packed_object_that_cannot_be_stored_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, engine: str | None, value: Callable[[], torch.ScriptObject], op: Any, error: str
) -> None:
    if engine is not None:
        if engine not in torch.backends.quantized.supported_engines:
            pytest.skip(f"this torch build has no {engine} engine")
        monkeypatch.setattr(torch.backends.quantized, "engine", engine)
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(op, (graph.get_attr("table"), x)))
    root = nn.Module()
    root.table = value()
    with pytest.raises(fxexport.FxExportError, match=rf"^attribute 'table': {error}") as raised:
        fxexport.export(fx.GraphModule(root, graph), tmp_path / "pkg")
    assert "\n" not in str(raised.value) and not (tmp_path / "pkg").exists()


@pytest.mark.parametrize("structure", ["structured", "flat"])
@pytest.mark.parametrize("where", [("a_packed_weight_0", "b_packed_weight_0"), ("sub.a_packed_weight_0", "sub.b_packed_weight_0")], ids=["root", "submodule"])
def test_one_packed_object_at_two_attributes_loads_at_both(tmp_path: Path, where: tuple[str, str], structure: str) -> None:
    weight = torch.quantize_per_channel(torch.randn(5, 4), torch.rand(5) / 10 + 0.01, torch.zeros(5, dtype=torch.long), 0, torch.qint8)
    packed = torch.ops.quantized.linear_prepack(weight, torch.randn(5))
    graph = fx.Graph()
    x = graph.call_function(torch.quantize_per_tensor, (graph.placeholder("x"), 0.05, 64, torch.quint8))
    a, b = (graph.call_function(torch.ops.quantized.linear, (x, graph.get_attr(target), 0.1, 64)) for target in where)
    graph.output(graph.call_method("dequantize", (graph.call_function(torch.ops.quantized.add, (a, b, 0.2, 64)),)))
    root = nn.Module()
    root.sub = nn.Module()
    for target in where:
        owner, _, name = target.rpartition(".")
        setattr(root.get_submodule(owner), name, packed)
    source = fx.GraphModule(root, graph)
    fxexport.export(source, tmp_path / "two_attributes", structure=structure)
    inputs = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    with imported(tmp_path / "two_attributes") as package:
        assert torch.equal(package.FxModule()(inputs), source(inputs))
