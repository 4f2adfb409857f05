"""Quantized GraphModules from both flows: FX graph mode (torch.ao) and PT2E (torchao).

Each builder returns a converted GraphModule, calibrated on fixed inputs; the PT2E ones need
torchao (`pip install -e '.[quant]'`) and are left out without it.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx, nn
from torch.ao.quantization import (
    QConfigMapping,
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
    get_default_qat_qconfig_mapping,
    get_default_qconfig_mapping,
)
from torch.ao.quantization.quantize_fx import (
    _fuse_fx,
    convert_fx,
    convert_to_reference_fx,
    fuse_fx,
    prepare_fx,
    prepare_qat_fx,
)

from fxexport.examples import TinyResNet, TransformerBlock

HAS_TORCHAO = importlib.util.find_spec("torchao") is not None


def _x(*shape: int, seed: int = 1) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class ConvBnReLU(nn.Module):
    """Conv-BN-ReLU twice, pooled, then Linear+ReLU and a Linear: fused as ConvReLU2d / LinearReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        )  # fmt: skip
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.hidden = nn.Linear(8, 16)
        self.relu = nn.ReLU()
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.flatten(self.pool(self.features(x)), 1)
        return self.head(self.relu(self.hidden(y)))


class ConvGELU(nn.Module):
    """Convs and a Linear with GELU between (nothing to fuse): reference modules of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.GELU()
        self.conv2 = nn.Conv2d(8, 4, 3, stride=2)
        self.fc = nn.Linear(36, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.conv2(self.act(self.conv1(x))), 1))


class ConvNorms(nn.Module):
    """A LayerNorm and an InstanceNorm after convs (torchvision convnext's): quantized layers that take their
    weight and bias as constructor arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 1)
        self.norm1 = nn.LayerNorm(8)
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.norm2 = nn.InstanceNorm2d(8, affine=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(self.conv1(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.norm2(self.conv2(x))


class LinearReLUs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU(), nn.Linear(24, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class Tagger(nn.Module):
    """An LSTM over embedded tokens, then a Linear: dynamic quantization's usual case."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(30, 12)
        self.lstm = nn.LSTM(12, 16, num_layers=2, batch_first=True)
        self.out = nn.Linear(16, 5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(self.embed(tokens))
        return self.out(hidden)


class GRUHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(6, 8, batch_first=True)
        self.fc = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.gru(x)[0])


class FunctionalLinear(nn.Linear):
    """timm's Linear: an nn.Linear whose forward calls F.linear, so quantization traces through it and
    keeps the packed weights as a bare attribute of the model."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


class FunctionalConv(nn.Conv2d):
    """timm's Conv2dSame and StdConv2d call F.conv2d themselves."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class FunctionalDeconv(nn.ConvTranspose2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups, self.dilation)


class FunctionalLayers(nn.Module):
    """Layers calling torch.nn.functional, each packed by quantization with its settings (stride, padding, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = FunctionalConv(3, 8, 3, stride=(2, 1), padding=(1, 3), dilation=(3, 2))
        self.upsample = FunctionalDeconv(8, 4, 3, stride=(2, 3), padding=(1, 2), output_padding=(1, 0), groups=2, dilation=(1, 2))
        self.hidden = FunctionalLinear(4, 4, bias=False)  # called twice: two objects packed from one weight
        self.classifier = FunctionalLinear(4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.upsample(F.relu(self.features(x))).mean((2, 3))
        return self.classifier(self.hidden(F.relu(self.hidden(x))))


class Bag(nn.Module):
    """Embedding rows averaged, then a Linear: the embedding quantized weight-only."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(40, 16)
        self.proj = nn.Linear(16, 8)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.proj(self.embed(tokens).mean(1))


@dataclass(frozen=True)
class QuantizedModel:
    name: str
    build: Callable[[], fx.GraphModule]
    args: Callable[[], tuple[Any, ...]]
    flow: str  # "fx" or "pt2e"


def _float(cls: type[nn.Module], train: bool = False) -> nn.Module:
    torch.manual_seed(0)
    return cls().train(train)


def _quiet(build: Callable[[], fx.GraphModule]) -> Callable[[], fx.GraphModule]:
    """torch.ao warns that it is deprecated, and observers warn about reduce_range, on every call."""

    def quiet() -> fx.GraphModule:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build()

    return quiet


def fx_static(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], backend: str = "x86", reference: bool = False) -> Callable[[], fx.GraphModule]:
    """prepare_fx with the backend's default qconfig mapping, calibrated once, then convert_fx (or
    convert_to_reference_fx)."""

    def build() -> fx.GraphModule:
        prepared = prepare_fx(_float(cls).eval(), get_default_qconfig_mapping(backend), args())
        prepared(*args())
        return (convert_to_reference_fx if reference else convert_fx)(prepared)

    return _quiet(build)


def fx_mapping(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], mapping: Callable[[], QConfigMapping]) -> Callable[[], fx.GraphModule]:
    """prepare_fx with a mapping of (dynamic or weight-only) qconfigs, calibrated once, then convert_fx."""

    def build() -> fx.GraphModule:
        prepared = prepare_fx(_float(cls).eval(), mapping(), args())
        prepared(*args())
        return convert_fx(prepared)

    return _quiet(build)


def fx_qat(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]]) -> Callable[[], fx.GraphModule]:
    """prepare_qat_fx (conv-bn-relu fused as ConvBnReLU2d), three training steps, then convert_fx."""

    def build() -> fx.GraphModule:
        prepared = prepare_qat_fx(_float(cls, train=True), get_default_qat_qconfig_mapping("x86"), args())
        optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)
        for step in range(3):
            loss = prepared(*args()).square().mean() + step
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return convert_fx(prepared.eval())

    return _quiet(build)


def fx_fused(cls: type[nn.Module], qat: bool) -> Callable[[], fx.GraphModule]:
    """The float model with its layers fused as quantization prepares them: ConvReLU2d and LinearReLU
    (conv-bn folded, fuse_fx), or ConvBnReLU2d with its BatchNorm kept, as for QAT."""

    def build() -> fx.GraphModule:
        if not qat:
            return fuse_fx(_float(cls).eval())
        return _fuse_fx(fx.symbolic_trace(_float(cls, train=True)), True).eval()

    return _quiet(build)


def _dynamic_linear_lstm() -> QConfigMapping:
    return QConfigMapping().set_object_type(nn.Linear, default_dynamic_qconfig).set_object_type(nn.LSTM, default_dynamic_qconfig)


def _dynamic_fp16() -> QConfigMapping:
    return QConfigMapping().set_object_type(nn.Linear, float16_dynamic_qconfig).set_object_type(nn.GRU, float16_dynamic_qconfig)


def _dynamic_fp16_global() -> QConfigMapping:
    return QConfigMapping().set_global(float16_dynamic_qconfig)


def _weight_only_embedding() -> QConfigMapping:
    return QConfigMapping().set_object_type(nn.Embedding, float_qparams_weight_only_qconfig)


def pt2e(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], dynamic: bool = False) -> Callable[[], fx.GraphModule]:
    """torch.export, then torchao's prepare_pt2e with X86InductorQuantizer, calibrated once, then convert_pt2e."""

    def build() -> fx.GraphModule:
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as x86
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        exported = torch.export.export(_float(cls).eval(), args()).module()
        quantizer = x86.X86InductorQuantizer().set_global(x86.get_default_x86_inductor_quantization_config(is_dynamic=dynamic))
        prepared = prepare_pt2e(exported, quantizer)
        prepared(*args())
        return convert_pt2e(prepared)

    return _quiet(build)


def _image() -> tuple[torch.Tensor, ...]:
    return (_x(2, 3, 32, 32),)


def small_image() -> tuple[torch.Tensor, ...]:
    return (_x(2, 3, 8, 8),)


def _tokens(high: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(0, high, (2, 7), generator=torch.Generator().manual_seed(2)),)


FX_MODELS = [
    QuantizedModel("fx_static_resnet", fx_static(TinyResNet, _image), _image, "fx"),
    QuantizedModel("fx_static_conv_bn_relu", fx_static(ConvBnReLU, small_image), small_image, "fx"),
    QuantizedModel("fx_static_conv_norms", fx_static(ConvNorms, small_image), small_image, "fx"),
    QuantizedModel("fx_static_qnnpack_mlp", fx_static(LinearReLUs, lambda: (_x(5, 12),), backend="qnnpack"), lambda: (_x(5, 12),), "fx"),
    QuantizedModel("fx_dynamic_transformer", fx_mapping(TransformerBlock, lambda: (_x(2, 5, 32),), _dynamic_linear_lstm), lambda: (_x(2, 5, 32),), "fx"),
    QuantizedModel("fx_dynamic_lstm", fx_mapping(Tagger, _tokens(30), _dynamic_linear_lstm), _tokens(30), "fx"),
    QuantizedModel("fx_dynamic_fp16_gru", fx_mapping(GRUHead, lambda: (_x(2, 4, 6),), _dynamic_fp16), lambda: (_x(2, 4, 6),), "fx"),
    QuantizedModel("fx_static_functional", fx_static(FunctionalLayers, small_image), small_image, "fx"),
    QuantizedModel("fx_dynamic_fp16_functional", fx_mapping(FunctionalLayers, small_image, _dynamic_fp16_global), small_image, "fx"),
    QuantizedModel("fx_weight_only_embedding", fx_mapping(Bag, _tokens(40), _weight_only_embedding), _tokens(40), "fx"),
    QuantizedModel("fx_qat_conv_bn_relu", fx_qat(ConvBnReLU, small_image), small_image, "fx"),
    QuantizedModel("fx_reference_conv_gelu", fx_static(ConvGELU, small_image, reference=True), small_image, "fx"),
    QuantizedModel("fx_reference_conv_bn_relu", fx_static(ConvBnReLU, small_image, reference=True), small_image, "fx"),
]
FUSED_MODELS = [
    QuantizedModel("fx_fused_conv_relu", fx_fused(ConvBnReLU, qat=False), small_image, "fx"),
    QuantizedModel("fx_fused_conv_bn_relu", fx_fused(ConvBnReLU, qat=True), small_image, "fx"),
]
PT2E_MODELS = [
    QuantizedModel("pt2e_x86_resnet", pt2e(TinyResNet, _image), _image, "pt2e"),
    QuantizedModel("pt2e_x86_transformer", pt2e(TransformerBlock, lambda: (_x(2, 5, 32),)), lambda: (_x(2, 5, 32),), "pt2e"),
    QuantizedModel("pt2e_x86_dynamic_mlp", pt2e(LinearReLUs, lambda: (_x(5, 12),), dynamic=True), lambda: (_x(5, 12),), "pt2e"),
]
MODELS = FX_MODELS + FUSED_MODELS + (PT2E_MODELS if HAS_TORCHAO else [])



def int8_weight_only() -> fx.GraphModule:
    """torchao's `quantize_(model, Int8WeightOnlyConfig())`, then torch.export: weights are torchao tensor subclasses."""
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _float(LinearReLUs).eval()
        quantize_(model, Int8WeightOnlyConfig())
        return torch.export.export(model, (_x(5, 12),)).module()


SUBCLASS_MODEL = QuantizedModel("torchao_int8_weight_only", int8_weight_only, lambda: (_x(5, 12),), "torchao")


# Golden cases: their scales are literals in module.py, so calibration must give the same bits on every CPU.
# Weights are multiples of 1/32 in [-1/4, 1/4) and inputs multiples of 1/4 in [-1, 1): every sum a layer
# computes is then exact in float32, whatever order a kernel adds in, and min/max observers are exact too.
def _coarse(model: nn.Module) -> nn.Module:
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for tensor in model.parameters():
            tensor.copy_(torch.randint(-8, 8, tuple(tensor.shape), generator=generator) / 32)
    return model


def coarse_inputs() -> tuple[torch.Tensor, ...]:
    return (torch.randint(-4, 4, (4, 16), generator=torch.Generator().manual_seed(1)) / 4,)


class GoldenMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(16, 16)
        self.relu = nn.ReLU()
        self.out = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.relu(self.hidden(x)))


def golden_fx() -> fx.GraphModule:
    """FX static quantization with min/max observers: LinearReLU fused, then a quantized Linear."""
    from torch.ao.quantization import MinMaxObserver, QConfig, default_per_channel_weight_observer

    qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=torch.quint8), weight=default_per_channel_weight_observer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(_coarse(GoldenMLP()).eval(), QConfigMapping().set_global(qconfig), coarse_inputs())
        prepared(*coarse_inputs())
        return convert_fx(prepared)


def golden_pt2e() -> fx.GraphModule:
    """PT2E with X86InductorQuantizer's default config, its histogram observers swapped for min/max ones."""
    import dataclasses

    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as x86
    from torchao.quantization.pt2e import MinMaxObserver
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    config = x86.get_default_x86_inductor_quantization_config()
    activation = dataclasses.replace(config.input_activation, observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=2**-12))
    config = dataclasses.replace(config, input_activation=activation, output_activation=activation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = torch.export.export(_coarse(GoldenMLP()).eval(), coarse_inputs()).module()
        prepared = prepare_pt2e(exported, x86.X86InductorQuantizer().set_global(config))
        prepared(*coarse_inputs())
        return convert_pt2e(prepared)
