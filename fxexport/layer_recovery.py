"""The constructor arguments of a torch.nn layer, read off the ATen calls one call of it ran.

One entry per layer class: it checks that the call ran exactly what the layer's forward runs
(the ops, in order, on the layer's own tensors) and returns the constructor's keyword arguments
and the training flag the layer needs to run those ops (BatchNorm in eval runs with
`training=False`). The stage (layers.py) builds the layer from them and checks it against the
ops on sample inputs before it replaces them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx, nn

from .aten_spellings import UPSAMPLE_MODES, Call, bind, per_dimension

aten = torch.ops.aten


@dataclass(frozen=True)
class Run:
    """One call of a layer: its ATen calls in order, its inputs, and the tensors its module holds."""

    path: str
    calls: tuple[Call, ...]
    inputs: tuple[fx.Node, ...]
    state: dict[str, torch.Tensor]
    attribute: Callable[[str], Any]  # what a get_attr target reads

    def single(self, *overloads: Any) -> Call | None:
        """The one call, when the run is exactly one call of one of `overloads` on the layer's first input."""
        if len(self.calls) != 1 or self.calls[0].node.target not in overloads:
            return None
        return self.calls[0]

    def tensor(self, value: Any, name: str) -> bool:
        """`value` reads the layer's own tensor `name`, under its name or another (a tied weight is read
        under the name export kept)."""
        if not (isinstance(value, fx.Node) and value.op == "get_attr" and name in self.state):
            return False
        return value.target == f"{self.path}.{name}" or self.attribute(str(value.target)) is self.state[name]

    def optional(self, value: Any, name: str) -> bool:
        """`value` reads the layer's tensor `name`, or is None where the layer has none (`bias=False`)."""
        return (value is None and name not in self.state) or self.tensor(value, name)


@dataclass(frozen=True)
class Recovered:
    """A layer's constructor arguments, and the training flag its forward needs to run the call's ops."""
    kwargs: dict[str, Any]
    training: bool | None = None  # None: the holder's flag


Recover = Callable[[Run, Call], "Recovered | None"]


def linear(run: Run, call: Call) -> Recovered | None:
    """nn.Linear: the features from the weight's shape."""
    if not (run.tensor(call["weight"], "weight") and run.optional(call["bias"], "bias")):
        return None
    return _linear(run, call["bias"] is not None)


def _linear(run: Run, bias: bool) -> Recovered:
    out_features, in_features = run.state["weight"].shape
    return Recovered({"in_features": in_features, "out_features": out_features, "bias": bias})


def decomposed_linear(run: Run) -> Recovered | None:
    """nn.Linear as core ATen writes its call on a 2-D input (`run_decompositions()`): `addmm(bias, x,
    weight.permute(1, 0))`, or `mm(x, weight.permute(1, 0))` without a bias; aten.linear runs those."""
    if len(run.calls) != 2 or len(run.inputs) != 1:
        return None
    transpose, product = run.calls
    if transpose.node.target != aten.permute.default or list(transpose["dims"]) != [1, 0] or not run.tensor(transpose["self"], "weight"):
        return None
    if product.node.target == aten.addmm.default and product.is_default("beta") and product.is_default("alpha"):
        x, other, bias = product["mat1"], product["mat2"], product["self"]
    elif product.node.target == aten.mm.default:
        x, other, bias = product["self"], product["mat2"], None
    else:
        return None
    if x is not run.inputs[0] or other is not transpose.node or not run.optional(bias, "bias"):
        return None
    return _linear(run, bias is not None)


def pooled_to_one(run: Run, call: Call) -> Recovered | None:
    """nn.AdaptiveAvgPool2d(1) as core ATen writes it, `x.mean([-1, -2], keepdim=True)`: what
    adaptive_avg_pool2d runs for an output of 1 by 1."""
    if sorted(call["dim"] or ()) != [-2, -1] or not call["keepdim"] or call["dtype"] is not None:
        return None
    return Recovered({"output_size": 1})


def conv(run: Run, call: Call) -> Recovered | None:
    """nn.ConvNd with zero padding: channels and kernel from the weight, the rest from the call."""
    if not (run.tensor(call["weight"], "weight") and run.optional(call["bias"], "bias")):
        return None
    weight, groups = run.state["weight"], call["groups"]
    kwargs = {"in_channels": weight.shape[1] * groups, "out_channels": weight.shape[0], "kernel_size": per_dimension(list(weight.shape[2:])),
              "stride": per_dimension(call["stride"]), "padding": per_dimension(call["padding"]), "dilation": per_dimension(call["dilation"]),
              "groups": groups, "bias": call["bias"] is not None}  # fmt: skip
    return Recovered(kwargs)


def conv_transpose(run: Run, call: Call) -> Recovered | None:
    """nn.ConvTransposeNd: its weight is (in, out / groups, *kernel)."""
    if not (run.tensor(call["weight"], "weight") and run.optional(call["bias"], "bias")):
        return None
    weight, groups = run.state["weight"], call["groups"]
    kwargs = {"in_channels": weight.shape[0], "out_channels": weight.shape[1] * groups, "kernel_size": per_dimension(list(weight.shape[2:])),
              "stride": per_dimension(call["stride"]), "padding": per_dimension(call["padding"]), "output_padding": per_dimension(call["output_padding"]),
              "groups": groups, "bias": call["bias"] is not None, "dilation": per_dimension(call["dilation"])}  # fmt: skip
    return Recovered(kwargs)


def batch_norm(run: Run, call: Call) -> Recovered | None:
    """Eval mode only (a training call also counts batches, in another op)."""
    if call.values.get("training", False) or not (run.tensor(call["running_mean"], "running_mean") and run.tensor(call["running_var"], "running_var")):
        return None
    if not (run.optional(call["weight"], "weight") and run.optional(call["bias"], "bias")) or call["momentum"] == 0:
        return None  # a momentum of 0 in eval is momentum=None (a cumulative average) or 0.0: which, the ops do not say
    kwargs = {"num_features": run.state["running_mean"].shape[0], "eps": call["eps"], "momentum": call["momentum"],
              "affine": call["weight"] is not None}  # fmt: skip
    return Recovered(kwargs, training=False)


def layer_norm(run: Run, call: Call) -> Recovered | None:
    """nn.LayerNorm."""
    if not (run.optional(call["weight"], "weight") and run.optional(call["bias"], "bias")):
        return None
    kwargs = {"normalized_shape": tuple(call["normalized_shape"]), "eps": call["eps"], "elementwise_affine": call["weight"] is not None,
              "bias": call["bias"] is not None}  # fmt: skip
    return Recovered(kwargs)


def group_norm(run: Run, call: Call) -> Recovered | None:
    """nn.GroupNorm: the channels from the weight, or from the input without one."""
    if not (run.optional(call["weight"], "weight") and run.optional(call["bias"], "bias")):
        return None
    value = run.inputs[0].meta.get("val")
    channels = run.state["weight"].shape[0] if "weight" in run.state else (value.shape[1] if isinstance(value, torch.Tensor) else None)
    if channels is None:
        return None
    return Recovered({"num_groups": call["num_groups"], "num_channels": int(channels), "eps": call["eps"], "affine": call["weight"] is not None})


def instance_norm(run: Run, call: Call) -> Recovered | None:
    """nn.InstanceNormNd: running statistics where it tracks them (then the flag says whether it trains),
    the channels from its tensors or the input."""
    if not (run.optional(call["weight"], "weight") and run.optional(call["bias"], "bias")) or call["momentum"] == 0:
        return None  # a momentum of 0 is momentum=None or 0.0: which, the ops do not say
    tracks = call["running_mean"] is not None
    if tracks and not (run.tensor(call["running_mean"], "running_mean") and run.tensor(call["running_var"], "running_var")):
        return None
    if not tracks and (call["running_var"] is not None or "running_mean" in run.state or not call["use_input_stats"]):
        return None
    value = run.inputs[0].meta.get("val")
    held = run.state.get("weight", run.state.get("running_mean"))
    channels = held.shape[0] if held is not None else (value.shape[1] if isinstance(value, torch.Tensor) and value.dim() > 1 else None)
    if channels is None:
        return None
    kwargs = {"num_features": int(channels), "eps": call["eps"], "momentum": call["momentum"], "affine": call["weight"] is not None,
              "track_running_stats": tracks}  # fmt: skip
    return Recovered(kwargs, training=bool(call["use_input_stats"]) if tracks else None)


def embedding(run: Run, call: Call) -> Recovered | None:
    """nn.Embedding: -1 is no padding index."""
    if not run.tensor(call["weight"], "weight") or call["sparse"]:
        return None
    count, dim = run.state["weight"].shape
    padding = call["padding_idx"]
    kwargs = {"num_embeddings": count, "embedding_dim": dim, "padding_idx": None if padding == -1 else padding,
              "scale_grad_by_freq": call["scale_grad_by_freq"]}  # fmt: skip
    return Recovered(kwargs)


def same(**fixed: Any) -> Recover:
    """A layer whose op takes only the input, or `fixed` arguments (ReLU6 is hardtanh(0, 6))."""
    return lambda run, call: Recovered({}) if all(call[k] == v for k, v in fixed.items()) else None


def inplace(**fixed: Any) -> Recover:
    """The in-place form of `same`: `inplace=True`."""
    return lambda run, call: Recovered({"inplace": True}) if all(call[k] == v for k, v in fixed.items()) else None


def arguments(names: str, inplace: bool = False, **training: str) -> Recover:
    """`schema_name:constructor_name` pairs copied over; `training` names the op's training argument."""

    def recover(run: Run, call: Call) -> Recovered:
        pairs = [item.partition(":") for item in names.split()]
        kwargs = {public or schema: per_dimension(call[schema]) for schema, _, public in pairs}
        flag = call[training["flag"]] if training else None
        return Recovered({**kwargs, **({"inplace": True} if inplace else {})}, training=flag)

    return recover


def pool(names: str) -> Recover:
    """An empty stride is the kernel size, the layer's `stride=None`."""

    def recover(run: Run, call: Call) -> Recovered:
        kwargs = {name: per_dimension(call[name]) for name in names.split()}
        if kwargs.get("stride") == ():
            kwargs["stride"] = None
        return Recovered(kwargs)

    return recover


def prelu(run: Run, call: Call) -> Recovered | None:
    """nn.PReLU: one weight per channel, or one for all."""
    return Recovered({"num_parameters": run.state["weight"].numel()}) if run.tensor(call["weight"], "weight") else None


def softmax(run: Run, call: Call) -> Recovered | None:
    """nn.Softmax / nn.LogSoftmax: the dim, without a dtype conversion."""
    if call.values.get("dtype") is not None or call.values.get("half_to_float"):
        return None
    return Recovered({"dim": call["dim"]})


def elu(run: Run, call: Call) -> Recovered | None:
    """nn.ELU: its op with scale and input scale 1."""
    if call["scale"] != 1 or call["input_scale"] != 1:
        return None
    return Recovered({"alpha": call["alpha"], **({"inplace": True} if call.node.target == aten.elu_.default else {})})


def upsample(mode: str, align: bool) -> Recover:
    """nn.Upsample: a size or a scale factor per dimension (one for all where they are equal), as the
    op F.interpolate calls for its mode records them."""

    def recover(run: Run, call: Call) -> Recovered | None:
        size, scales = call["output_size"], call["scale_factors"]
        if (size is None) == (scales is None):
            return None
        if size is not None:
            kwargs: dict[str, Any] = {"size": per_dimension(size)}
        else:
            kwargs = {"scale_factor": scales[0] if len(set(scales)) == 1 else tuple(scales)}
        kwargs["mode"] = mode
        if align:
            kwargs["align_corners"] = call["align_corners"]
        return Recovered(kwargs)

    return recover


_CONV = {1: (aten.conv1d.default, aten.conv1d.padding), 2: (aten.conv2d.default, aten.conv2d.padding), 3: (aten.conv3d.default, aten.conv3d.padding)}
_CONV_T = {1: aten.conv_transpose1d.default, 2: aten.conv_transpose2d.input, 3: aten.conv_transpose3d.input}


def convolution(transposed: bool) -> Recover:
    """A decomposed graph's `aten.convolution`, read as ConvNd or ConvTransposeNd when its `transposed` flag is the layer's."""
    read = conv_transpose if transposed else conv

    def recover(run: Run, call: Call) -> Recovered | None:
        if call["transposed"] != transposed or (not transposed and any(call["output_padding"])):
            return None
        return read(run, call)

    return recover


_MAX_POOL = {1: aten.max_pool1d.default, 2: aten.max_pool2d.default, 3: aten.max_pool3d.default}
_AVG_POOL = {1: aten.avg_pool1d.default, 2: aten.avg_pool2d.default, 3: aten.avg_pool3d.default}
_ADAPTIVE = {1: aten.adaptive_avg_pool1d.default, 2: aten.adaptive_avg_pool2d.default, 3: aten.adaptive_avg_pool3d.default}
_AVG_NAMES = {1: "kernel_size stride padding ceil_mode count_include_pad", 2: "kernel_size stride padding ceil_mode count_include_pad divisor_override"}
_NORMS = (aten.batch_norm.default, aten._native_batch_norm_legit_no_training.default)
_POOLED_TO_ONE: dict[int, dict[Any, Recover]] = {2: {aten.mean.dim: pooled_to_one}}  # core ATen's form of an output of 1
# Ops whose first output the layer returns, read by a getitem (core ATen's forms of the norms).
_FIRST_OUTPUT = (aten._native_batch_norm_legit_no_training.default, aten.native_layer_norm.default)

# layer class -> {overload its forward runs: how to read its constructor arguments off the call}
LAYERS: dict[type[nn.Module], dict[Any, Recover]] = {
    nn.Linear: {aten.linear.default: linear},
    **{getattr(nn, f"Conv{d}d"): {**dict.fromkeys(ops, conv), aten.convolution.default: convolution(transposed=False)} for d, ops in _CONV.items()},
    **{getattr(nn, f"ConvTranspose{d}d"): {op: conv_transpose, aten.convolution.default: convolution(transposed=True)} for d, op in _CONV_T.items()},
    **{getattr(nn, f"BatchNorm{d}d"): dict.fromkeys(_NORMS, batch_norm) for d in (1, 2, 3)},
    nn.LayerNorm: {aten.layer_norm.default: layer_norm, aten.native_layer_norm.default: layer_norm},
    nn.GroupNorm: {aten.group_norm.default: group_norm},
    **{getattr(nn, f"InstanceNorm{d}d"): {aten.instance_norm.default: instance_norm} for d in (1, 2, 3)},
    nn.Embedding: {aten.embedding.default: embedding},
    nn.ReLU: {aten.relu.default: same(), aten.relu_.default: inplace()},
    nn.ReLU6: {aten.hardtanh.default: same(min_val=0.0, max_val=6.0), aten.hardtanh_.default: inplace(min_val=0.0, max_val=6.0)},
    nn.SiLU: {aten.silu.default: same(), aten.silu_.default: inplace()},
    nn.Hardswish: {aten.hardswish.default: same(), aten.hardswish_.default: inplace()},
    nn.Hardsigmoid: {aten.hardsigmoid.default: same(), aten.hardsigmoid_.default: inplace()},
    nn.Mish: {aten.mish.default: same(), aten.mish_.default: inplace()},
    nn.Sigmoid: {aten.sigmoid.default: same()},
    nn.Tanh: {aten.tanh.default: same()},
    nn.GELU: {aten.gelu.default: arguments("approximate")},
    nn.LeakyReLU: {aten.leaky_relu.default: arguments("negative_slope"), aten.leaky_relu_.default: arguments("negative_slope", inplace=True)},
    nn.Hardtanh: {aten.hardtanh.default: arguments("min_val max_val"), aten.hardtanh_.default: arguments("min_val max_val", inplace=True)},
    nn.ELU: {aten.elu.default: elu, aten.elu_.default: elu},
    nn.Softplus: {aten.softplus.default: arguments("beta threshold")},
    nn.PReLU: {aten.prelu.default: prelu},
    nn.Softmax: {aten.softmax.int: softmax, aten._softmax.default: softmax},
    nn.LogSoftmax: {aten.log_softmax.int: softmax, aten._log_softmax.default: softmax},
    nn.Dropout: {aten.dropout.default: arguments("p", flag="train"), aten.dropout_.default: arguments("p", inplace=True, flag="train")},
    **{getattr(nn, f"MaxPool{d}d"): {op: pool("kernel_size stride padding dilation ceil_mode")} for d, op in _MAX_POOL.items()},
    **{getattr(nn, f"AvgPool{d}d"): {op: pool(_AVG_NAMES.get(d, _AVG_NAMES[2]))} for d, op in _AVG_POOL.items()},
    **{getattr(nn, f"AdaptiveAvgPool{d}d"): {op: pool("output_size"), **_POOLED_TO_ONE.get(d, {})} for d, op in _ADAPTIVE.items()},
    nn.Upsample: {getattr(aten, op).vec: upsample(mode, align) for op, (mode, align) in UPSAMPLE_MODES.items()},
    nn.Flatten: {aten.flatten.using_ints: arguments("start_dim end_dim")},
    nn.Unflatten: {aten.unflatten.int: lambda run, call: Recovered({"dim": call["dim"], "unflattened_size": tuple(call["sizes"])})},
}


# layer class -> how to read its constructor arguments off a run of several calls (core ATen's forms)
SEQUENCES: dict[type[nn.Module], Callable[[Run], Recovered | None]] = {nn.Linear: decomposed_linear}


def recover(cls: type[nn.Module], run: Run) -> Recovered | None:
    """The layer's constructor arguments, when the run is exactly one call its forward makes on its first
    input, or a sequence of calls that forward runs (SEQUENCES)."""
    if (read := SEQUENCES.get(cls)) is not None and (found := read(run)) is not None:
        return found
    entries = LAYERS.get(cls, {})
    call = run.single(*entries)
    if call is None or len(run.inputs) != 1 or _first_tensor(call) is not run.inputs[0]:
        return None
    return entries[call.node.target](run, call)


def _first_tensor(call: Call) -> Any:
    """The call's input: its first argument, but embedding's indices."""
    return call["indices"] if call.node.target == aten.embedding.default else next(iter(call.values.values()))


def bound_calls(nodes: list[fx.Node]) -> tuple[Call, ...] | None:
    """The run's nodes as ATen calls; None if any is not one (a getitem of a norm's first output aside)."""
    calls = []
    for node in nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            calls.append(bind(node))
        elif not (node.op == "call_function" and node.args and getattr(node.args[0], "target", None) in _FIRST_OUTPUT and node.args[1] == 0):
            return None
    return tuple(calls)
