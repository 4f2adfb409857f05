"""The benchmark models as data: name, size (full or --quick) and example input.

Importing this module does not import torch (run.py reads it without paying for torch); the
networks themselves are in nets.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from torch import nn


@dataclass(frozen=True)
class Model:
    """A benchmark model: its network and input shape, each given `quick`."""

    name: str
    description: str
    network: Callable[[bool], nn.Module]
    input_shape: Callable[[bool], tuple[int, ...]]
    forward_bench: bool = False  # also time the exported forward against the source GraphModule
    memory_bench: bool = False  # also compare the exported forward's peak memory with the source GraphModule's


def _weight_heavy(quick: bool) -> nn.Module:
    from nets import WideStack

    return WideStack(256, 4) if quick else WideStack(4096, 16)


def _node_heavy(quick: bool) -> nn.Module:
    from nets import ManyNodes

    return ManyNodes(5, 16) if quick else ManyNodes(2000, 16)


def _cnn(quick: bool) -> nn.Module:
    from nets import ResNet

    return ResNet((8, 16, 32, 64), (1, 1, 1, 1), 10) if quick else ResNet((64, 128, 256, 512), (2, 2, 2, 2), 1000)


def _quantized_cnn(quick: bool) -> nn.Module:
    """The `cnn`, int8: FX graph mode static quantization (x86 qconfig), calibrated on one seeded batch."""
    import warnings

    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    example = (torch.randn(*_cnn_input(quick), generator=torch.Generator().manual_seed(1)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notice
        prepared = prepare_fx(_cnn(quick).eval(), get_default_qconfig_mapping("x86"), example)
        prepared(*example)
        return convert_fx(prepared)


def _cnn_input(quick: bool) -> tuple[int, ...]:
    return (1, 3, 32, 32) if quick else (2, 3, 64, 64)


def _transformer(quick: bool) -> nn.Module:
    from nets import Transformer

    return Transformer(32, 4, 64, 2, 16, 10) if quick else Transformer(256, 8, 1024, 6, 196, 1000)


MODELS: tuple[Model, ...] = (
    Model(
        "weight_heavy",
        "16 x (Linear(4096) + LayerNorm + GELU), 1.07 GB of fp32 weights",
        _weight_heavy,
        lambda quick: (2, 256) if quick else (2, 4096),
    ),
    Model(
        "node_heavy",
        "2,000 x (Linear(16) + 9 elementwise ops): 20,002 graph nodes, 2,000 modules",
        _node_heavy,
        lambda quick: (4, 16),
    ),
    Model(
        "cnn",
        "ResNet-18-style CNN from torch.nn: 11.7M parameters, input 2x3x64x64",
        _cnn,
        _cnn_input,
        forward_bench=True,
        memory_bench=True,
    ),
    Model(
        "quantized_cnn",
        "the cnn quantized to int8 (FX graph mode, x86 qconfig): packed int8 weights, fp32 biases",
        _quantized_cnn,
        _cnn_input,
    ),
    Model(
        "transformer",
        "ViT-style encoder from torch.nn: 6 pre-norm blocks (attention written out), 5.0M parameters, input 2x196x256",
        _transformer,
        lambda quick: (1, 16, 32) if quick else (2, 196, 256),
        memory_bench=True,
    ),
)


def model(name: str) -> Model:
    return next(m for m in MODELS if m.name == name)


def build(spec: Model, quick: bool) -> nn.Module:
    """The network in eval mode with seeded weights: the same values in every process."""
    import torch

    torch.manual_seed(0)
    return spec.network(quick).eval()


def inputs(spec: Model, quick: bool) -> tuple[torch.Tensor, ...]:
    """The example input: seeded, the same in every process."""
    import torch

    return (torch.randn(*spec.input_shape(quick), generator=torch.Generator().manual_seed(1)),)
