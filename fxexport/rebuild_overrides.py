"""Per-class constructor facts that `rebuild` cannot read off a module's attributes.

Everything else is derived from `__init__` signatures. Each entry here is small and checked
the same way as the rest: a rebuild that does not match on the meta device is refused.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch.ao.nn.intrinsic as nni
import torch.ao.nn.quantized as nnq
import torch.ao.nn.quantized.dynamic as nnqd
import torch.ao.nn.quantized.reference as nnqr
from torch import nn
from torch.ao.nn.intrinsic.modules.fused import _FusedModule
from torch.ao.nn.quantized.dynamic.modules.rnn import RNNBase as _QuantizedRNNBase
from torch.ao.nn.quantized.modules.conv import _ConvNd as _QuantizedConv

from .quantized import reference_qparams, weight_bias

Getter = Callable[[Any], Any]

_RNN_PARAMS = [p for p in inspect.signature(nn.RNNBase.__init__).parameters.values() if p.name not in ("self", "mode")]
_RNN_NONLINEARITY = inspect.Parameter("nonlinearity", inspect.Parameter.KEYWORD_ONLY, default="tanh")

_QUANTIZED_RNN_PARAMS = [p for p in inspect.signature(_QuantizedRNNBase.__init__).parameters.values() if p.name not in ("self", "mode")]

# Constructor parameters for classes whose own __init__ only says (*args, **kwargs).
SIGNATURES: dict[type, list[inspect.Parameter]] = {
    nn.LSTM: _RNN_PARAMS,
    nn.GRU: _RNN_PARAMS,
    nn.RNN: [*_RNN_PARAMS, _RNN_NONLINEARITY],
    nnqd.LSTM: _QUANTIZED_RNN_PARAMS,
    nnqd.GRU: _QUANTIZED_RNN_PARAMS,
}

# A Transformer{Encoder,Decoder}Layer keeps its arguments in its children.
_LAYER: dict[str, Getter] = {
    "d_model": lambda m: m.self_attn.embed_dim,
    "nhead": lambda m: m.self_attn.num_heads,
    "dim_feedforward": lambda m: m.linear1.out_features,
    "dropout": lambda m: m.dropout.p,
    "layer_norm_eps": lambda m: m.norm1.eps,
    "batch_first": lambda m: m.self_attn.batch_first,
    "bias": lambda m: m.linear1.bias is not None,
}


def _in_first_encoder_layer(get: Getter) -> Getter:
    return lambda m: get(m.encoder.layers[0])


_TRANSFORMER: dict[str, Getter] = {
    **{name: _in_first_encoder_layer(_LAYER[name]) for name in ("dim_feedforward", "dropout", "bias")},
    "activation": lambda m: m.encoder.layers[0].activation,
    "norm_first": lambda m: m.encoder.layers[0].norm_first,
    "num_encoder_layers": lambda m: len(m.encoder.layers),
    "num_decoder_layers": lambda m: len(m.decoder.layers),
    "layer_norm_eps": lambda m: m.encoder.norm.eps,
}

_STACK: dict[str, Getter] = {"num_layers": lambda m: len(m.layers)}


def _child(index: int) -> Getter:
    return lambda m: m[index]


def _fused_layers() -> dict[type, dict[str, Getter]]:
    """torch.ao's fused layers (`nni.ConvReLU2d(conv, relu)`) are Sequentials: each argument is a child, in order."""
    classes = [getattr(nni, name) for name in dir(nni)]
    fused = [c for c in classes if isinstance(c, type) and issubclass(c, _FusedModule) and c is not _FusedModule]
    return {c: {p: _child(i) for i, p in enumerate(list(inspect.signature(c.__init__).parameters)[1:])} for c in fused}


def _packed_dtype(m: Any) -> Any:
    """The weight dtype a quantized Linear or Embedding keeps in its packed-weights holder."""
    return m._packed_params.dtype


_REFERENCE_LAYERS = (nnqr.Linear, nnqr.Conv1d, nnqr.Conv2d, nnqr.Conv3d, nnqr.ConvTranspose1d, nnqr.ConvTranspose2d, nnqr.ConvTranspose3d)

# Arguments whose value is not stored under the argument's own name.
ARGUMENTS: dict[type, dict[str, Getter]] = {
    **_fused_layers(),
    **{cls: {"weight_qparams": reference_qparams} for cls in _REFERENCE_LAYERS},
    nn.MultiheadAttention: {
        "bias": lambda m: m.in_proj_bias is not None,
        "add_bias_kv": lambda m: m.bias_k is not None,
        "kdim": lambda m: None if m.kdim == m.embed_dim else m.kdim,
        "vdim": lambda m: None if m.vdim == m.embed_dim else m.vdim,
    },
    nn.TransformerEncoderLayer: _LAYER,
    nn.TransformerDecoderLayer: _LAYER,
    nn.TransformerEncoder: {**_STACK, "encoder_layer": lambda m: m.layers[0]},
    nn.TransformerDecoder: {**_STACK, "decoder_layer": lambda m: m.layers[0]},
    nn.Transformer: _TRANSFORMER,
    nn.AdaptiveLogSoftmaxWithLoss: {"cutoffs": lambda m: m.cutoffs[:-1]},
    nn.PairwiseDistance: {"p": lambda m: m.norm},
    # Quantized layers keep their weights packed: `bias()` is a method, the weight only in the package.
    _QuantizedConv: {"bias": lambda m: weight_bias(m)[1] is not None},
    nnq.Linear: {"bias_": lambda m: weight_bias(m)[1] is not None, "bias": lambda m: weight_bias(m)[1] is not None, "dtype": _packed_dtype},
    nnq.Embedding: {"_weight": lambda m: None, "dtype": _packed_dtype},
    nnq.EmbeddingBag: {"_weight": lambda m: None, "dtype": _packed_dtype},
    nn.LinearCrossEntropyLoss: {
        "in_features": lambda m: m.linear.in_features,
        "bias": lambda m: m.linear.bias is not None,
    },
}
