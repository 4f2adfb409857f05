"""Every public torch.nn module class, kept as a leaf, exported, and checked in one fresh process.

The class list comes from `dir(torch.nn)`, so a class added to torch shows up here as a
failure until it has a case (or an exclusion with its reason). Lazy modules are listed too:
they are materialised with one forward pass, as their documentation asks, and export as the
class they become.
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import fx, nn
from torch.nn.modules.lazy import LazyModuleMixin

import fxexport
from tests.roundtrip import check_in_fresh_process, record

# Containers (rebuilt child by child, not as a leaf) and bases without a forward of their own.
NOT_LEAVES = {"Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
              "RNNBase", "RNNCellBase"}  # fmt: skip
F64 = torch.float64
SEED = 0

Inputs = Callable[[], tuple[Any, ...]]


def nn_classes() -> list[str]:
    """Every public torch.nn module class that can be called as a leaf."""
    return sorted(
        name
        for name in dir(nn)
        if not name.startswith("_") and name not in NOT_LEAVES
        and isinstance(cls := getattr(nn, name), type) and issubclass(cls, nn.Module)
    )  # fmt: skip


def x(*shape: int, dtype: torch.dtype | None = None) -> Inputs:
    """One standard-normal input of `shape`."""
    return lambda: (torch.randn(*shape, dtype=dtype),)


def pair(*shape: int) -> Inputs:
    """Prediction and target of the same shape."""
    return lambda: (torch.randn(*shape), torch.randn(*shape))


def also(inputs: Inputs, *more: Callable[[], torch.Tensor]) -> Inputs:
    """`inputs`, then one tensor from each of `more`."""
    return lambda: (*inputs(), *(make() for make in more))


def classes(*shape: int, n: int = 5) -> Inputs:
    """Scores `(batch, n, *rest)` for `shape = (batch, *rest)`, and class targets `(batch, *rest)`."""
    batch, *rest = shape
    return lambda: (torch.randn(batch, n, *rest), torch.randint(0, n, (batch, *rest)))


def unpool(dims: int) -> Inputs:
    pool = [F.max_pool1d, F.max_pool2d, F.max_pool3d][dims - 1]
    return lambda: pool(torch.randn(1, 2, *[4] * dims), 2, return_indices=True)


def ctc() -> tuple[torch.Tensor, ...]:
    log_probs = torch.randn(6, 2, 4).log_softmax(2)
    return log_probs, torch.randint(1, 4, (2, 3)), torch.tensor([6, 5]), torch.tensor([3, 2])


SMALL = x(2, 3)


@dataclass(frozen=True)
class NnCase:
    """Constructor arguments and a sample input for one torch.nn class."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: Inputs = SMALL
    seed: int | None = None  # modules that draw random numbers in eval mode


def case(*args: Any, inputs: Inputs = SMALL, seed: int | None = None, **kwargs: Any) -> NnCase:
    return NnCase(args, kwargs, inputs, seed)


def _layer(cls: type[nn.Module], **kwargs: Any) -> nn.Module:
    return cls(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True, **kwargs)


V1, V2, V3 = x(2, 4, 9), x(2, 3, 6, 6), x(1, 2, 4, 4, 4)
BAG = (torch.randint(0, 10, (8,)), torch.tensor([0, 3, 5, 8]), torch.rand(8))

CASES: dict[str, NnCase] = {
    # pooling
    "AdaptiveAvgPool1d": case(3, inputs=V1),
    "AdaptiveAvgPool2d": case((3, None), inputs=V2),
    "AdaptiveAvgPool3d": case(2, inputs=V3),
    "AdaptiveMaxPool1d": case(3, return_indices=True, inputs=V1),
    "AdaptiveMaxPool2d": case((2, 3), return_indices=True, inputs=V2),
    "AdaptiveMaxPool3d": case(2, inputs=V3),
    "AvgPool1d": case(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, inputs=V1),
    "AvgPool2d": case(3, stride=(2, 1), divisor_override=2, inputs=V2),
    "AvgPool3d": case(2, inputs=V3),
    "FractionalMaxPool2d": case(2, output_size=(3, 3), return_indices=True, inputs=V2, seed=SEED),
    "FractionalMaxPool3d": case(2, output_ratio=(0.5, 0.5, 0.5), inputs=x(1, 2, 6, 6, 6), seed=SEED),
    "LPPool1d": case(2, 3, stride=2, inputs=V1),
    "LPPool2d": case(1.5, 2, ceil_mode=True, inputs=lambda: (torch.rand(2, 3, 6, 6),)),  # no NaN from x ** 1.5
    "LPPool3d": case(2, 2, inputs=V3),
    "MaxPool1d": case(3, stride=2, padding=1, dilation=2, return_indices=True, ceil_mode=True, inputs=V1),
    "MaxPool2d": case(2, return_indices=True, inputs=V2),
    "MaxPool3d": case(2, stride=1, inputs=V3),
    "MaxUnpool1d": case(2, inputs=unpool(1)),
    "MaxUnpool2d": case(2, stride=2, padding=0, inputs=unpool(2)),
    "MaxUnpool3d": case(2, inputs=unpool(3)),
    # activations
    "CELU": case(alpha=0.5, inplace=True),
    "ELU": case(alpha=0.7, inplace=True),
    "GELU": case(approximate="tanh"),
    "GLU": case(dim=0, inputs=x(4, 3)),
    "Hardshrink": case(lambd=0.3),
    "Hardsigmoid": case(inplace=True),
    "Hardswish": case(inplace=True),
    "Hardtanh": case(-0.5, 0.5, inplace=True),
    "LeakyReLU": case(0.2, inplace=True),
    "LogSigmoid": case(),
    "LogSoftmax": case(dim=1),
    "Mish": case(inplace=True),
    "MultiheadAttention": case(
        8, 2, bias=False, add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=5, batch_first=True,
        inputs=lambda: (torch.randn(2, 3, 8), torch.randn(2, 4, 6), torch.randn(2, 4, 5)),
    ),
    "PReLU": case(num_parameters=4, init=0.1, dtype=F64, inputs=x(2, 4, 3, dtype=F64)),
    "RReLU": case(0.1, 0.2, inplace=True),
    "ReLU": case(inplace=True),
    "ReLU6": case(inplace=True),
    "SELU": case(inplace=True),
    "SiLU": case(inplace=True),
    "Sigmoid": case(),
    "Softmax": case(dim=0),
    "Softmax2d": case(inputs=x(2, 3, 4, 4)),
    "Softmin": case(dim=1),
    "Softplus": case(beta=2.0, threshold=10.0),
    "Softshrink": case(0.2),
    "Softsign": case(),
    "Tanh": case(),
    "Tanhshrink": case(),
    "Threshold": case(0.1, 20.0, inplace=True),
    # dropout (identity in eval mode)
    "AlphaDropout": case(0.2),
    "Dropout": case(0.3, inplace=True),
    "Dropout1d": case(0.3, inputs=V1),
    "Dropout2d": case(0.3, inputs=V2),
    "Dropout3d": case(0.3, inputs=V3),
    "FeatureAlphaDropout": case(0.1, inputs=V2),
    # normalization
    "BatchNorm1d": case(4, eps=1e-3, momentum=None, affine=False, inputs=x(3, 4)),
    "BatchNorm2d": case(3, track_running_stats=False, dtype=F64, inputs=x(2, 3, 4, 4, dtype=F64)),
    "BatchNorm3d": case(2, momentum=0.3, inputs=V3),
    "CrossMapLRN2d": case(3, alpha=1e-3, beta=0.5, k=2.0, inputs=V2),
    "GroupNorm": case(2, 4, affine=False, inputs=x(2, 4, 3)),
    "InstanceNorm1d": case(4, affine=True, track_running_stats=True, inputs=x(2, 4, 5)),
    "InstanceNorm2d": case(3, eps=1e-3, inputs=V2),
    "InstanceNorm3d": case(2, affine=True, inputs=V3),
    "LayerNorm": case((4, 5), bias=False, inputs=x(2, 4, 5)),
    "LocalResponseNorm": case(2, alpha=1e-3, inputs=V2),
    "RMSNorm": case([5], eps=1e-5, dtype=F64, inputs=x(2, 5, dtype=F64)),
    "SyncBatchNorm": case(4, momentum=0.2, inputs=x(2, 4, 3)),
    # convolution and patches
    "Conv1d": case(4, 6, 3, stride=2, padding=1, bias=False, padding_mode="circular", inputs=V1),
    "Conv2d": case(3, 4, (3, 2), padding="same", dilation=2, dtype=F64, inputs=x(2, 3, 6, 6, dtype=F64)),
    "Conv3d": case(2, 4, 2, groups=2, padding_mode="replicate", padding=1, inputs=V3),
    "ConvTranspose1d": case(4, 2, 3, stride=2, output_padding=1, bias=False, inputs=V1),
    "ConvTranspose2d": case(3, 4, 3, stride=2, padding=1, dilation=2, inputs=V2),
    "ConvTranspose3d": case(2, 2, 2, groups=2, inputs=V3),
    "Fold": case((4, 5), (2, 2), inputs=x(1, 12, 12)),
    "Unfold": case((2, 3), padding=1, stride=2, inputs=V2),
    # linear, embedding, distance, shape
    "Bilinear": case(3, 4, 5, bias=False, inputs=lambda: (torch.randn(2, 3), torch.randn(2, 4))),
    "Identity": case(),
    "Linear": case(3, 4, bias=False, dtype=F64, inputs=x(2, 3, dtype=F64)),
    "Embedding": case(10, 4, padding_idx=-1, scale_grad_by_freq=True, inputs=lambda: (torch.randint(0, 10, (2, 5)),)),
    "EmbeddingBag": case(10, 4, mode="sum", include_last_offset=True, padding_idx=0, inputs=lambda: BAG),
    "CosineSimilarity": case(dim=0, eps=1e-6, inputs=pair(4, 3)),
    "PairwiseDistance": case(p=1.0, keepdim=True, inputs=pair(4, 3)),
    "ChannelShuffle": case(2, inputs=x(1, 4, 2, 2)),
    "Flatten": case(0, 1, inputs=x(2, 3, 4)),
    "Unflatten": case(1, (2, 3), inputs=x(2, 6)),
    "PixelShuffle": case(2, inputs=x(1, 8, 2, 2)),
    "PixelUnshuffle": case(2, inputs=x(1, 2, 4, 4)),
    "Upsample": case(scale_factor=2, mode="bilinear", align_corners=True, inputs=x(1, 2, 3, 3)),
    "UpsamplingBilinear2d": case(size=(5, 4), inputs=x(1, 2, 3, 3)),
    "UpsamplingNearest2d": case(scale_factor=2, inputs=x(1, 2, 3, 3)),
    # padding
    "CircularPad1d": case(2, inputs=V1),
    "CircularPad2d": case((1, 2, 0, 1), inputs=V2),
    "CircularPad3d": case(1, inputs=V3),
    "ConstantPad1d": case((1, 2), 0.5, inputs=V1),
    "ConstantPad2d": case(1, -1.0, inputs=V2),
    "ConstantPad3d": case((1, 0, 1, 0, 0, 1), 2.0, inputs=V3),
    "ReflectionPad1d": case(2, inputs=V1),
    "ReflectionPad2d": case((1, 1, 2, 0), inputs=V2),
    "ReflectionPad3d": case(1, inputs=V3),
    "ReplicationPad1d": case((0, 3), inputs=V1),
    "ReplicationPad2d": case(2, inputs=V2),
    "ReplicationPad3d": case((1, 1, 0, 0, 2, 2), inputs=V3),
    "ZeroPad1d": case((1, 2), inputs=V1),
    "ZeroPad2d": case(1, inputs=V2),
    "ZeroPad3d": case((0, 1, 0, 1, 1, 0), inputs=V3),
    # losses
    "AdaptiveLogSoftmaxWithLoss": case(
        8, 10, [4, 8], div_value=2.0, head_bias=True, inputs=lambda: (torch.randn(3, 8), torch.tensor([1, 5, 9]))
    ),
    "BCELoss": case(weight=torch.rand(4), reduction="sum", inputs=lambda: (torch.rand(3, 4), torch.rand(3, 4))),
    "BCEWithLogitsLoss": case(pos_weight=torch.rand(4), inputs=lambda: (torch.randn(3, 4), torch.rand(3, 4))),
    "CTCLoss": case(blank=0, reduction="sum", zero_infinity=True, inputs=ctc),
    "CosineEmbeddingLoss": case(margin=0.1, inputs=also(pair(3, 4), lambda: torch.tensor([1, -1, 1]))),
    "CrossEntropyLoss": case(weight=torch.rand(5), ignore_index=1, label_smoothing=0.1, inputs=classes(3)),
    "GaussianNLLLoss": case(full=True, eps=1e-4, inputs=also(pair(3, 4), lambda: torch.rand(3, 4))),
    "HingeEmbeddingLoss": case(margin=0.5, inputs=lambda: (torch.randn(3, 4), torch.randint(0, 2, (3, 4)) * 2 - 1)),
    "HuberLoss": case(reduction="none", delta=0.5, inputs=pair(3, 4)),
    "KLDivLoss": case(reduction="batchmean", log_target=True, inputs=pair(3, 4)),
    "L1Loss": case(reduction="sum", inputs=pair(3, 4)),
    "LinearCrossEntropyLoss": case(
        6, 5, bias=True, label_smoothing=0.1, inputs=also(x(3, 6), lambda: torch.tensor([0, 4, 2]))
    ),
    "MSELoss": case(inputs=pair(3, 4)),
    "MarginRankingLoss": case(margin=0.2, inputs=also(pair(4), lambda: torch.tensor([1.0, -1.0, 1.0, 1.0]))),
    "MultiLabelMarginLoss": case(inputs=lambda: (torch.randn(2, 4), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]]))),
    "MultiLabelSoftMarginLoss": case(weight=torch.rand(4), inputs=also(x(3, 4), lambda: torch.randint(0, 2, (3, 4)))),
    "MultiMarginLoss": case(p=2, margin=0.5, weight=torch.rand(5), inputs=classes(3)),
    "NLLLoss": case(weight=torch.rand(5), ignore_index=2, reduction="sum", inputs=classes(3)),
    "NLLLoss2d": case(inputs=classes(2, 3, 3, n=3)),
    "PoissonNLLLoss": case(log_input=False, full=True, inputs=lambda: (torch.rand(3, 4) + 0.1, torch.rand(3, 4) * 3)),
    "SmoothL1Loss": case(beta=0.5, inputs=pair(3, 4)),
    "SoftMarginLoss": case(inputs=lambda: (torch.randn(3, 4), torch.randint(0, 2, (3, 4)) * 2.0 - 1)),
    "TripletMarginLoss": case(margin=0.5, p=1.0, swap=True, inputs=also(pair(3, 4), lambda: torch.randn(3, 4))),
    "TripletMarginWithDistanceLoss": case(
        distance_function=nn.PairwiseDistance(p=1.0), margin=0.3, inputs=also(pair(3, 4), lambda: torch.randn(3, 4))
    ),
    # recurrent
    "GRU": case(4, 5, num_layers=2, batch_first=True, bidirectional=True, bias=False, inputs=x(2, 3, 4)),
    "GRUCell": case(4, 5, bias=False, inputs=lambda: (torch.randn(3, 4), torch.randn(3, 5))),
    "LSTM": case(4, 6, proj_size=3, dtype=F64, inputs=x(3, 2, 4, dtype=F64)),
    "LSTMCell": case(4, 5, inputs=x(3, 4)),
    "RNN": case(4, 5, num_layers=2, nonlinearity="relu", inputs=x(3, 2, 4)),
    "RNNCell": case(4, 5, nonlinearity="relu", inputs=lambda: (torch.randn(3, 4), torch.randn(3, 5))),
    # transformer
    "Transformer": case(
        d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=16, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True, inputs=also(x(2, 5, 8), lambda: torch.randn(2, 4, 8)),
    ),
    "TransformerDecoder": case(
        _layer(nn.TransformerDecoderLayer), 2, norm=nn.LayerNorm(8),
        inputs=lambda: (torch.randn(2, 4, 8), torch.randn(2, 5, 8)),
    ),
    "TransformerDecoderLayer": case(
        8, 2, dim_feedforward=12, activation=F.gelu, layer_norm_eps=1e-6, bias=False,
        inputs=lambda: (torch.randn(4, 2, 8), torch.randn(5, 2, 8)),
    ),
    "TransformerEncoder": case(_layer(nn.TransformerEncoderLayer), 2, enable_nested_tensor=False, inputs=x(2, 5, 8)),
    "TransformerEncoderLayer": case(
        8, 2, 16, activation="gelu", batch_first=True, norm_first=True, dtype=F64, inputs=x(2, 5, 8, dtype=F64)
    ),
    # wrappers
    "DataParallel": case(nn.Linear(3, 2)),
    # lazy modules, materialised by one forward pass before tracing
    "LazyBatchNorm1d": case(inputs=x(3, 4)),
    "LazyBatchNorm2d": case(eps=1e-3, inputs=V2),
    "LazyBatchNorm3d": case(affine=False, inputs=V3),
    "LazyConv1d": case(4, 3, bias=False, inputs=V1),
    "LazyConv2d": case(4, 3, padding=1, inputs=V2),
    "LazyConv3d": case(2, 2, inputs=V3),
    "LazyConvTranspose1d": case(2, 3, stride=2, inputs=V1),
    "LazyConvTranspose2d": case(2, 3, inputs=V2),
    "LazyConvTranspose3d": case(2, 2, inputs=V3),
    "LazyInstanceNorm1d": case(affine=True, inputs=x(2, 4, 5)),
    "LazyInstanceNorm2d": case(track_running_stats=True, inputs=V2),
    "LazyInstanceNorm3d": case(inputs=V3),
    "LazyLinear": case(5, dtype=F64, inputs=x(2, 3, dtype=F64)),
}

# Listed classes with no case, and why. Every listed class has one on torch 2.13.
EXCLUDED: dict[str, str] = {}


def _hooked() -> nn.Module:
    module = nn.Linear(2, 2)
    module.register_forward_hook(lambda *_: None)
    return module


def _changed_after_init() -> nn.Module:
    module = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, enable_nested_tensor=False)
    module.layers[1].dropout.p = 0.5
    return module


def _custom_encoder() -> nn.Module:
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1, enable_nested_tensor=False)
    return nn.Transformer(8, 2, custom_encoder=encoder, num_decoder_layers=1, dim_feedforward=16)


# More configurations of some classes: label -> (constructor or factory, case).
VARIANTS: dict[str, tuple[Callable[..., nn.Module], NnCase]] = {
    "encoder_layer_module_activation": (
        nn.TransformerEncoderLayer,
        case(8, 2, 16, dropout=0.0, activation=nn.GELU(approximate="tanh"), batch_first=True, inputs=x(2, 5, 8)),
    ),
    "decoder_norm_first": (
        nn.TransformerDecoder,
        case(
            nn.TransformerDecoderLayer(8, 2, 16, norm_first=True), 3, norm=nn.LayerNorm(8, eps=1e-3),
            inputs=lambda: (torch.randn(4, 2, 8), torch.randn(5, 2, 8)),
        ),
    ),
    "fractional_pool_fixed_samples": (
        nn.FractionalMaxPool2d, case(2, output_size=3, _random_samples=torch.rand(2, 3, 2), inputs=V2)
    ),
    "frozen_embedding": (
        nn.Embedding.from_pretrained, case(torch.rand(5, 3), padding_idx=2, inputs=lambda: (torch.tensor([[0, 2, 4]]),))
    ),
    "gru_float64_two_layers": (nn.GRU, case(3, 4, num_layers=2, dropout=0.2, dtype=F64, inputs=x(2, 5, 3, dtype=F64))),
    "rnn_positional_nonlinearity": (nn.RNN, case(3, 4, 1, "relu", inputs=x(2, 5, 3))),
    "upsample_size": (nn.Upsample, case(size=(3, 4), mode="nearest-exact", inputs=x(1, 2, 2, 2))),
    "triplet_distance_function": (
        nn.TripletMarginWithDistanceLoss,
        case(distance_function=F.pairwise_distance, swap=True, inputs=also(pair(3, 4), lambda: torch.randn(3, 4))),
    ),
}

# Modules a constructor call cannot reproduce: the export must refuse them, naming the module.
REFUSED: dict[str, tuple[Callable[[], nn.Module], str]] = {
    "uninitialized_lazy": (lambda: nn.LazyLinear(3), "uninitialized lazy parameters"),
    "forward_hook": (_hooked, "hooks"),
    "lambda_activation": (lambda: nn.TransformerEncoderLayer(8, 2, activation=lambda t: t), "'activation'"),
    "changed_after_init": (_changed_after_init, "layers.1.dropout"),
    "custom_encoder": (_custom_encoder, "cannot recover constructor argument"),
}


class Call(nn.Module):
    """Calls one torch.nn module; symbolic_trace keeps it as a leaf."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.m = module


class Call1(Call):
    def forward(self, a):
        return self.m(a)


class Call2(Call):
    def forward(self, a, b):
        return self.m(a, b)


class Call3(Call):
    def forward(self, a, b, c):
        return self.m(a, b, c)


class Call4(Call):
    def forward(self, a, b, c, d):
        return self.m(a, b, c, d)


class CallOnCopy(Call):
    """In-place modules work on a copy, so the recorded input stays what was passed."""

    def forward(self, a):
        return self.m(a.clone())


def build(make: Callable[..., nn.Module], spec: NnCase) -> tuple[fx.GraphModule, tuple[Any, ...]]:
    torch.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices about the sample modules themselves
        module = make(*spec.args, **spec.kwargs)
    inputs = spec.inputs()
    if isinstance(module, LazyModuleMixin):
        module(*inputs)
    wrapper = CallOnCopy if spec.kwargs.get("inplace") else [Call1, Call2, Call3, Call4][len(inputs) - 1]
    return fx.symbolic_trace(wrapper(module).eval()), inputs


LISTED = nn_classes()
TESTED = [name for name in LISTED if name not in EXCLUDED]
# package name -> (constructor, case): every listed class, then the variants
PACKAGES = {
    **{f"nn_{name.lower()}": (getattr(nn, name), CASES[name]) for name in TESTED if name in CASES},
    **{f"variant_{label}": entry for label, entry in VARIANTS.items()},
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    packages, expect = tmp_path_factory.mktemp("packages"), tmp_path_factory.mktemp("expect")
    problems: dict[str, list[str]] = {}
    for package, (make, spec) in PACKAGES.items():
        try:
            gm, inputs = build(make, spec)
            fxexport.export(gm, packages / package)
        except Exception as error:  # noqa: BLE001 - reported per package below
            problems[package] = [f"export: {type(error).__name__}: {error}"]
            continue
        record(package, gm, inputs, {}, spec.seed, expect)
    problems.update(check_in_fresh_process(packages, expect, [p for p in PACKAGES if p not in problems]))
    shutil.rmtree(packages)
    return problems


def test_every_listed_class_has_a_case_or_a_reason() -> None:
    assert len(LISTED) >= 150
    assert sorted(set(LISTED) - set(CASES) - set(EXCLUDED)) == []
    assert sorted((set(CASES) | set(EXCLUDED)) - set(LISTED)) == []
    assert not set(CASES) & set(EXCLUDED)


@pytest.mark.parametrize("package", list(PACKAGES))
def test_round_trip(package: str, report: dict[str, list[str]]) -> None:
    assert report[package] == []


def test_coverage(report: dict[str, list[str]]) -> None:
    passed = [name for name in TESTED if report.get(f"nn_{name.lower()}") == []]
    print(f"\ntorch.nn coverage: {len(passed)} of {len(LISTED)} classes export, reload and match")
    assert len(passed) >= 0.95 * len(LISTED)
    assert passed == TESTED


@pytest.mark.parametrize("label", list(REFUSED))
def test_unreproducible_module_is_refused(label: str) -> None:
    make, message = REFUSED[label]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = fx.symbolic_trace(Call1(make()))
    with pytest.raises(fxexport.FxExportError, match="module 'm") as error:
        fxexport.generate(gm, package_name="refused")
    assert message in str(error.value)
