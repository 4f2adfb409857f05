"""Layers whose tensors a parametrization computes: `nn.utils.parametrizations.weight_norm(nn.Conv1d(...))`.

`torch.nn.utils.parametrize` gives such a layer a class of its own, made when the parametrization is
registered (`ParametrizedConv1d`, a subclass of `nn.Conv1d`), which no import reaches, and holds the
tensors it computes the parametrized one from (`parametrizations.weight.original0`, `original1`).
symbolic_trace keeps it a leaf (its class is torch.nn's), and transformers' HuBERT and wav2vec2
positional convolutions are built so. It is written as its layer's constructor call wrapped in the
calls that register the same parametrizations, in order, so that it holds the same tensors under
the same names and computes the parametrized ones alike: weight normalization alone for now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from torch import nn
from torch.nn.utils import parametrize

_WEIGHT_NORM = "torch.nn.utils.parametrizations._WeightNorm"


@dataclass(frozen=True)
class Parametrized:
    """A parametrized layer: the class it was built as, and per parametrized tensor its weight norm's `dim`."""

    layer_class: type[nn.Module]
    weight_norms: tuple[tuple[str, int], ...]  # (tensor name, dim), in registration order


def parametrized(module: nn.Module) -> Parametrized | None:
    """What `module` is built from where a parametrization computes a tensor of it, None where none does.
    Raises ValueError for one that is no weight norm, or several on one tensor."""
    if not parametrize.is_parametrized(module):
        return None
    norms = []
    chains = cast(dict[str, nn.ModuleList], module.parametrizations)
    for name, chain in chains.items():
        kinds = [f"{type(p).__module__}.{type(p).__qualname__}" for p in chain]
        if kinds != [_WEIGHT_NORM]:
            raise ValueError(f"its {name!r} is computed by {', '.join(kinds)}, and only a weight norm alone is written as code; "
                             "trace through the layer (not a leaf) or remove the parametrization first")
        norms.append((name, int(vars(chain[0])["dim"])))
    return Parametrized(_layer_class(type(module)), tuple(norms))


def wrapped(code: str, found: Parametrized) -> str:
    """The layer's constructor `code` with its parametrizations registered around it."""
    for name, dim in found.weight_norms:
        settings = ([f"name={name!r}"] if name != "weight" else []) + ([f"dim={dim!r}"] if dim != 0 else [])  # weight_norm's defaults left out
        code = f"nn.utils.parametrizations.weight_norm({', '.join([code, *settings])})"
    return code


def same_parametrized_class(cls: type, other: type) -> bool:
    """True for two classes parametrize made for one layer class (one per registration, never the same object)."""
    layer = _layer_class(cls)
    return cls is not layer and other is not layer and _layer_class(other) is layer and cls.__name__ == other.__name__


def _layer_class(cls: type) -> type[nn.Module]:
    """The class parametrize subclassed (`nn.Conv1d` of `ParametrizedConv1d`)."""
    return cls.__bases__[0] if getattr(cls, "__module__", "") == parametrize.__name__ else cls
