"""torch.nn layers that torch.export traced into ATen calls come back as the layers (layers.py).

Each case is one layer in a model of its own, exported with torch.export: the restored
GraphModule must call it as a module of its class, built with the source layer's constructor
arguments (its repr), holding the source's tensors, and give the source's outputs bit for bit.
Layers whose ops are not exactly their forward's, and layers that do not verify, keep their ops.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch import fx, nn

from fxexport import layer_recovery
from fxexport.calls import stack_frames
from fxexport.guards import is_guards_module
from fxexport.imports import ImportTable
from fxexport.layer_recovery import LAYERS, Recovered
from fxexport.layers import restore_layers
from fxexport.names import Namespace
from fxexport.raising import is_aten
from fxexport.rebuild import constructor_code, mismatch


@dataclass(frozen=True)
class Layer:
    build: Callable[[], nn.Module]
    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    restored: bool = True
    decomposed: bool = False  # exported, then run_decompositions(): core ATen

    @property
    def id(self) -> str:
        return ("decomposed " if self.decomposed else "") + repr(self.build()).replace("\n", "")[:60]


def _eval(layer: nn.Module) -> nn.Module:
    return layer.eval()


CASES = [
    Layer(lambda: nn.Linear(4, 3), (2, 4)),
    Layer(lambda: nn.Linear(4, 3), (2, 4), decomposed=True),  # addmm(bias, x, weight.permute(1, 0))
    Layer(lambda: nn.Linear(4, 3, bias=False), (2, 4), decomposed=True),  # mm(x, weight.permute(1, 0))
    Layer(lambda: nn.Linear(4, 3), (2, 5, 4), decomposed=True, restored=False),  # views around the addmm: kept
    Layer(lambda: nn.AdaptiveAvgPool2d(1), (2, 3, 4, 4), decomposed=True),  # x.mean([-1, -2], keepdim=True)
    Layer(lambda: nn.LayerNorm(4, eps=1e-6), (2, 3, 4), decomposed=True),  # native_layer_norm(...)[0]
    Layer(lambda: nn.LayerNorm((3, 4), elementwise_affine=False), (2, 3, 4), decomposed=True),
    Layer(lambda: nn.Linear(4, 3, bias=False), (2, 5, 4)),
    Layer(lambda: nn.Conv1d(2, 4, 3, stride=2, padding=1), (1, 2, 9)),
    Layer(lambda: nn.Conv2d(4, 8, (3, 1), stride=(2, 1), padding=(1, 0), dilation=2, groups=2, bias=False), (1, 4, 9, 9)),
    Layer(lambda: nn.Conv2d(2, 4, 3, padding="same"), (1, 2, 7, 7)),
    Layer(lambda: nn.Conv3d(2, 4, 2), (1, 2, 4, 4, 4)),
    Layer(lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2), (1, 4, 5, 5)),
    Layer(lambda: nn.ConvTranspose1d(2, 3, 3), (1, 2, 5)),
    Layer(lambda: _eval(nn.BatchNorm1d(3)), (4, 3)),
    Layer(lambda: _eval(nn.BatchNorm2d(3, eps=1e-3, momentum=0.3)), (2, 3, 4, 4)),
    Layer(lambda: _eval(nn.BatchNorm2d(3, affine=False)), (2, 3, 4, 4)),
    Layer(lambda: nn.BatchNorm2d(3), (2, 3, 4, 4), restored=False),  # training: it also counts batches
    Layer(lambda: nn.LayerNorm(4, eps=1e-6), (2, 3, 4)),
    Layer(lambda: nn.LayerNorm((3, 4), elementwise_affine=False), (2, 3, 4)),
    Layer(lambda: nn.LayerNorm(4, bias=False), (2, 4)),
    Layer(lambda: nn.GroupNorm(2, 4), (2, 4, 3)),
    Layer(lambda: nn.InstanceNorm2d(3), (2, 3, 4, 4)),
    Layer(lambda: nn.InstanceNorm1d(4, eps=1e-3, affine=True), (2, 4, 5)),
    Layer(lambda: _eval(nn.InstanceNorm3d(2, affine=True, track_running_stats=True)), (1, 2, 3, 3, 3)),
    Layer(lambda: nn.InstanceNorm2d(3, momentum=0.2, track_running_stats=True), (2, 3, 4, 4), restored=False),  # training: as BatchNorm's
    Layer(lambda: nn.GroupNorm(2, 4, affine=False), (2, 4, 3)),
    Layer(lambda: nn.Embedding(10, 4), (2, 3), torch.long),
    Layer(lambda: nn.Embedding(10, 4, padding_idx=0), (2, 3), torch.long),
    Layer(lambda: nn.ReLU(), (2, 5)),
    Layer(lambda: nn.ReLU(inplace=True), (2, 5)),
    Layer(lambda: nn.ReLU6(inplace=True), (2, 5)),
    Layer(lambda: nn.SiLU(), (2, 5)),
    Layer(lambda: nn.Hardswish(inplace=True), (2, 5)),
    Layer(lambda: nn.Hardsigmoid(), (2, 5)),
    Layer(lambda: nn.Mish(), (2, 5)),
    Layer(lambda: nn.Sigmoid(), (2, 5)),
    Layer(lambda: nn.Tanh(), (2, 5)),
    Layer(lambda: nn.GELU(approximate="tanh"), (2, 5)),
    Layer(lambda: nn.LeakyReLU(0.2), (2, 5)),
    Layer(lambda: nn.Hardtanh(-2.0, 2.0), (2, 5)),
    Layer(lambda: nn.ELU(alpha=0.5), (2, 5)),
    Layer(lambda: nn.Softplus(beta=2.0, threshold=10.0), (2, 5)),
    Layer(lambda: nn.PReLU(3), (2, 3, 4)),
    Layer(lambda: nn.Softmax(dim=-1), (2, 5)),
    Layer(lambda: nn.LogSoftmax(dim=1), (2, 5)),
    Layer(lambda: _eval(nn.Dropout(0.2)), (2, 5)),
    Layer(lambda: nn.MaxPool2d(3, stride=2, padding=1), (1, 2, 9, 9)),
    Layer(lambda: nn.MaxPool2d(2), (1, 2, 8, 8)),
    Layer(lambda: nn.MaxPool1d(3, ceil_mode=True), (1, 2, 8)),
    Layer(lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (1, 2, 9, 9)),
    Layer(lambda: nn.AdaptiveAvgPool2d((1, 1)), (1, 2, 5, 5)),
    Layer(lambda: nn.AdaptiveAvgPool1d(3), (1, 2, 9)),
    Layer(lambda: nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
    Layer(lambda: nn.Upsample(size=(4, 6)), (1, 2, 3, 3)),
    Layer(lambda: nn.Upsample(scale_factor=(2.0, 1.5), mode="bilinear", align_corners=False), (1, 2, 3, 4)),
    Layer(lambda: nn.Upsample(size=5, mode="bilinear", align_corners=True), (1, 2, 3, 3)),
    Layer(lambda: nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False), (1, 2, 3, 3)),
    Layer(lambda: nn.Upsample(scale_factor=3), (1, 2, 4)),
    Layer(lambda: nn.Upsample(size=(2, 3, 4), mode="trilinear", align_corners=False), (1, 2, 2, 2, 2)),
    Layer(lambda: nn.Upsample(size=6, mode="nearest-exact"), (1, 2, 4, 4)),
    Layer(lambda: nn.Flatten(), (2, 3, 4)),
    Layer(lambda: nn.Flatten(0, -2), (2, 3, 4)),
    Layer(lambda: nn.Unflatten(1, (2, 3)), (2, 6)),
    Layer(lambda: nn.Unflatten(1, (4, 4)), (2, 16)),
    Layer(lambda: _eval(nn.BatchNorm2d(3, momentum=None)), (2, 3, 4, 4), restored=False),  # None or 0.0: the ops do not say
    Layer(lambda: nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 5), restored=False),  # a pad, then the conv
]  # fmt: skip


class _Holder(nn.Module):
    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x) * 1


def _settings(layer: nn.Module) -> dict[str, object]:
    """The layer's constructor settings, an int for all dimensions written as the tuple it stands for."""
    settings = {k: v for k, v in vars(layer).items() if not k.startswith("_") and k != "training"}
    dims = re.search(r"(\d)d$", type(layer).__name__)
    size = int(dims.group(1)) if dims else 1
    return {k: (v,) * size if type(v) is int and k in _PER_DIMENSION else v for k, v in settings.items()}


_PER_DIMENSION = {"kernel_size", "stride", "padding", "dilation", "output_size", "output_padding"}


def _input(case: Layer) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    if case.dtype == torch.long:
        return torch.randint(0, 10, case.shape, generator=generator)
    return torch.randn(case.shape, generator=generator)


def _exported(case: Layer) -> tuple[nn.Module, fx.GraphModule]:
    torch.manual_seed(0)
    model = _Holder(case.build())
    for tensor in model.layer.buffers():
        if tensor.is_floating_point():
            tensor.uniform_(0.5, 1.5)  # running statistics that change the result
    exported = torch.export.export(model, (_input(case),))
    return model, (exported.run_decompositions() if case.decomposed else exported).module()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_layer_comes_back_as_its_class(case: Layer) -> None:
    model, gm = _exported(case)
    restored = restore_layers(gm)
    layer = restored.get_submodule("layer")
    calls = [str(n.target) for n in restored.graph.nodes if n.op == "call_module"]
    if not case.restored:
        assert type(layer) is nn.Module and "layer" not in calls
        return
    assert type(layer) is type(model.layer) and _settings(layer) == _settings(model.layer)
    inside = [n for n in restored.graph.nodes if is_aten(n) and [f.path for f in stack_frames(n)][-1:] == ["layer"]]
    assert calls.count("layer") == 1 and inside == []
    held = {k.removeprefix("layer."): v.data_ptr() for k, v in gm.state_dict().items() if k.startswith("layer.")}
    assert {k: v.data_ptr() for k, v in layer.state_dict().items()} == held  # the source's tensors, not copies


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_restored_graph_gives_the_same_bits(case: Layer) -> None:
    model, gm = _exported(case)
    restored = restore_layers(gm)
    assert torch.equal(restored(_input(case)), gm(_input(case)))


def test_the_input_graph_module_is_not_changed() -> None:
    model, gm = _exported(CASES[0])
    code, layer = gm.code, gm.get_submodule("layer")
    restore_layers(gm)
    assert gm.code == code and gm.get_submodule("layer") is layer and type(layer) is nn.Module


def test_a_layer_that_does_not_verify_keeps_its_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong constructor arguments (here a stride of 2 where the op has 1) fail the check on sample inputs."""
    conv = LAYERS[nn.Conv2d][torch.ops.aten.conv2d.default]

    def wrong(run: layer_recovery.Run, call: layer_recovery.Call) -> Recovered | None:
        found = conv(run, call)
        return None if found is None else Recovered({**found.kwargs, "padding": 0})

    monkeypatch.setitem(LAYERS[nn.Conv2d], torch.ops.aten.conv2d.default, wrong)
    _, gm = _exported(Layer(lambda: nn.Conv2d(2, 4, 3, padding=1), (1, 2, 5, 5)))
    restored = restore_layers(gm)
    assert type(restored.get_submodule("layer")) is nn.Module
    assert any(n.target == torch.ops.aten.conv2d.default for n in restored.graph.nodes)


def test_a_shared_layer_is_one_module_called_twice() -> None:
    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.act = nn.ReLU()
            self.fc = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.fc(self.act(x)))

    gm = torch.export.export(Twice(), (torch.randn(2, 4),)).module()
    restored = restore_layers(gm)
    assert [str(n.target) for n in restored.graph.nodes if n.op == "call_module"].count("act") == 2
    assert isinstance(restored.get_submodule("act"), nn.ReLU) and isinstance(restored.get_submodule("fc"), nn.Linear)
    x = torch.randn(2, 4)
    assert torch.equal(restored(x), gm(x))


def test_tied_weights_restore_both_layers() -> None:
    """torch.export reads a tied weight under one name: both layers holding it come back, still tied."""

    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.head = nn.Linear(4, 10, bias=False)
            self.embed = nn.Embedding(10, 4)
            self.head.weight = self.embed.weight

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(tokens))

    tokens = torch.tensor([[1, 2, 3]])
    gm = torch.export.export(Tied(), (tokens,)).module()
    restored = restore_layers(gm)
    head, embed = restored.get_submodule("head"), restored.get_submodule("embed")
    assert isinstance(head, nn.Linear) and isinstance(embed, nn.Embedding) and head.weight is embed.weight
    assert torch.equal(restored(tokens), gm(tokens))


def test_a_model_traced_in_eval_comes_back_in_eval() -> None:
    """A BatchNorm traced in eval makes the whole export eval (one `self.eval()`); the input keeps its flags."""
    model, gm = _exported(Layer(lambda: _eval(nn.BatchNorm2d(3)), (2, 3, 4, 4)))
    before = {k: m.training for k, m in gm.named_modules()}
    restored = restore_layers(gm)
    assert not any(m.training for m in restored.modules() if not is_guards_module(m))
    assert {k: m.training for k, m in gm.named_modules()} == before and all(before.values())


def _conv_bn_relu() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()


def test_decomposed_batch_norm_feeding_another_layer() -> None:
    """After run_decompositions a BatchNorm is an op and a getitem of it, which the next layer reads."""
    x = torch.randn(1, 3, 6, 6)
    gm = torch.export.export(_conv_bn_relu(), (x,)).run_decompositions().module()
    restored = restore_layers(gm)
    assert [type(restored.get_submodule(p)) for p in ("0", "1", "2")] == [nn.Conv2d, nn.BatchNorm2d, nn.ReLU]
    assert torch.equal(restored(x), gm(x))


def test_layers_on_the_meta_device_keep_their_ops() -> None:
    """No values to check a layer with: it keeps its ops, and nothing fails."""
    with torch.device("meta"):
        model = _conv_bn_relu()
    gm = torch.export.export(model, (torch.randn(1, 3, 6, 6, device="meta"),)).module()
    restored = restore_layers(gm)
    assert type(restored.get_submodule("0")) is nn.Module


def test_a_model_traced_in_training_keeps_its_dropout_ops() -> None:
    """Traced in training, a Dropout drops whatever the flags say, as the batch norms' ops do: both stay ops."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4)).train()
    gm = torch.export.export(model, (torch.randn(8, 4),)).module()
    restored = restore_layers(gm)
    assert isinstance(restored.get_submodule("0"), nn.Linear)
    assert not isinstance(getattr(restored, "1", None), nn.Dropout) and type(restored.get_submodule("2")) is nn.Module
    assert restored.training and restored.get_submodule("0").training


def test_numbered_children_stay_in_order_beside_other_names() -> None:
    """A root Sequential: a created stateless layer takes its number's place, `_guards_fn` stays."""
    x = torch.randn(1, 3, 6, 6)
    gm = torch.export.export(_conv_bn_relu(), (x,)).module()
    names = [n for n in restore_layers(gm)._modules if n != "_guards_fn"]
    assert names == ["0", "1", "2"]


def test_a_recoverer_that_fails_leaves_the_ops_and_the_export_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(run: layer_recovery.Run, call: layer_recovery.Call) -> Recovered | None:
        raise RuntimeError("unforeseen")

    monkeypatch.setitem(LAYERS[nn.Linear], torch.ops.aten.linear.default, broken)
    model, gm = _exported(CASES[0])
    restored = restore_layers(gm)
    assert type(restored.get_submodule("layer")) is nn.Module and torch.equal(restored(_input(CASES[0])), gm(_input(CASES[0])))


@pytest.mark.parametrize("make", [lambda: nn.MaxPool3d((2, 2, 2), (2, 2, 2), padding=(0, 0, 0)), lambda: nn.MaxPool2d(2, 2, padding=(0, 0)),
                                  lambda: nn.AvgPool3d(2, 2, padding=(0, 0, 0)), lambda: nn.MaxPool3d(2, 2, dilation=(1, 1, 1))])
def test_a_layer_keeping_a_tuple_of_its_default_is_rebuilt_with_it(make: Callable[[], nn.Module]) -> None:
    """Pooling layers keep a tuple equal to the default as given (torchvision's S3D: `padding=(0, 0, 0)`), so
    it is written out, where a convolution's is dropped (it stores `padding=0` as a tuple itself)."""
    layer = make()
    code = constructor_code(layer, ImportTable(Namespace(set())), "pool")
    assert mismatch(layer, eval(code, {"nn": nn})) is None
