"""The public torch spelling of each ATen overload a torch.export graph calls: one table entry per overload.

An entry turns the call's arguments, bound to the overload's schema with its defaults filled in,
into the call people write: an operator (`a + b`, `x[:, 1:]`), a tensor method (`x.view(2, -1)`)
or a `torch.*` / `F.*` function, with the arguments the public signature takes positionally
first and the rest as keywords, defaults dropped. An entry returns None where this call has no
spelling of the same meaning (`aten.add.Tensor` with an alpha that is not 1 is `torch.add`,
`aten.index.Tensor` with a 0-d index would select instead): the call then stays `torch.ops.aten`.
Every entry is checked against its ATen op on sample inputs (tests/test_aten_spellings.py).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx

aten = torch.ops.aten
# aten.slice.Tensor's `end` when the code wrote no end (`x[1:]`).
END_SENTINEL = 2**63 - 1


@dataclass(frozen=True)
class Spelling:
    """A call as fx writes it: `op` is call_function (a callable or an operator) or call_method (a name)."""

    op: str
    target: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """An ATen call: every schema argument by name (defaults filled in), and the node it is."""

    node: fx.Node
    values: dict[str, Any]
    defaults: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def is_default(self, name: str) -> bool:
        """The argument has its schema's default value."""
        return name in self.defaults and _same(self.values[name], self.defaults[name])


Rule = Callable[[Call], "Spelling | None"]


def _same(value: Any, default: Any) -> bool:
    """The value is the default: equal, and both numbers (not bools) or of one type."""
    if isinstance(value, fx.Node) or isinstance(value, bool) != isinstance(default, bool):
        return False
    numbers = isinstance(value, (int, float)) and isinstance(default, (int, float))
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return len(value) == len(default) and all(map(_same, value, default))
    return (numbers or type(value) is type(default)) and value == default


def _args(call: Call, positional: str, optional: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`positional` names passed in order (a `*name` list unpacked); `optional` ones as keywords unless
    default; `schema:public` renames a keyword."""
    args: list[Any] = []
    for name in positional.split():
        if name.startswith("*"):
            args += list(call[name[1:]])
        else:
            args.append(_compact(name, call[name]))
    kwargs = {}
    for item in optional.split():
        schema, _, public = item.partition(":")
        leave_out = call[schema] is None and schema not in call.defaults  # an optional argument without a default: None
        if not leave_out and not call.is_default(schema) and not (schema in ("layout", "pin_memory") and call[schema] in (None, False, torch.strided)):
            kwargs[public or schema] = _compact(schema, call[schema])
    return tuple(args), kwargs


# Arguments of one int per spatial dimension, which F's functions also take as one int for all (`stride=2`).
_PER_DIMENSION = frozenset({"stride", "padding", "dilation", "kernel_size", "output_padding", "output_size"})


def per_dimension(value: Any) -> Any:
    """`[3, 3]` as `3`, `[3, 1]` as `(3, 1)`: ints per dimension as F's functions and torch.nn's
    constructors take them; anything else as it is."""
    if isinstance(value, (list, tuple)) and all(type(v) is int for v in value):
        return value[0] if value and len(set(value)) == 1 else tuple(value)
    return value


def _compact(name: str, value: Any) -> Any:
    """`[2, 2]` as `2` for a per-dimension argument (an empty list stays: `stride=[]` is the kernel's)."""
    return per_dimension(value) if name in _PER_DIMENSION and value else value


@dataclass(frozen=True)
class FunctionRule:
    """`target(positional..., keyword=...)`: a torch or F function, its keywords left out where default."""

    target: Callable[..., Any]
    positional: str
    optional: str = ""

    def __call__(self, call: Call) -> Spelling:
        """The call spelled."""
        args, kwargs = _args(call, self.positional, self.optional)
        return Spelling("call_function", self.target, args, kwargs)


def fn(target: Callable[..., Any], positional: str, optional: str = "") -> Rule:
    """`target(positional..., keyword=...)`: a torch or F function."""
    return FunctionRule(target, positional, optional)


def method(name: str, positional: str = "self", optional: str = "") -> Rule:
    """`self.name(positional..., keyword=...)`; a `*size` list is unpacked (`x.view(2, -1)`) unless empty."""

    def rule(call: Call) -> Spelling | None:
        lists = [call[p[1:]] for p in positional.split() if p.startswith("*")]
        if not all(isinstance(v, (list, tuple)) for v in lists):
            return None
        args, kwargs = _args(call, positional if all(lists) else positional.replace("*", ""), optional)
        return Spelling("call_method", name, args, kwargs)

    return rule


def when(condition: Callable[[Call], bool], rule: Rule) -> Rule:
    """`rule` where `condition` holds; elsewhere the call has no spelling here."""
    return lambda call: rule(call) if condition(call) else None


def binary(symbol: Callable[[Any, Any], Any], left: str = "self", right: str = "other", *, alpha: bool = False) -> Rule:
    """`left <op> right`; with `alpha`, only when alpha is 1 (else None, and the alpha entry applies)."""

    def rule(call: Call) -> Spelling | None:
        if alpha and not _same(call["alpha"], 1):
            return None
        return Spelling("call_function", symbol, (call[left], call[right]))

    return rule


def first_of(rule: Rule, fallback: Rule) -> Rule:
    """`rule`, or `fallback` where it gives no spelling."""
    return lambda call: rule(call) or fallback(call)


def unary(symbol: Callable[[Any], Any]) -> Rule:
    """`-x`, `~x`."""
    return lambda call: Spelling("call_function", symbol, (call["self"],))


def _index(dim: int, item: Any) -> tuple[Any, ...]:
    """The index of `item` at `dim`: `:, :, item` from the front, `..., item, :` from the back."""
    if dim >= 0:
        return (*[slice(None)] * dim, item)
    return (Ellipsis, item, *[slice(None)] * (-dim - 1))


def _getitem(tensor: Any, index: tuple[Any, ...]) -> Spelling:
    return Spelling("call_function", operator.getitem, (tensor, index[0] if len(index) == 1 else index))


def slice_rule(call: Call) -> Spelling | None:
    """`x[:, start:end:step]`: a missing start (0 or None), end (None or the sentinel) and step (1) are left out."""
    start, end, step = call["start"], call["end"], call["step"]
    start = None if _same(start, 0) else start
    end = None if end is None or _same(end, END_SENTINEL) else end
    step = None if _same(step, 1) else step
    if isinstance(step, fx.Node) or not isinstance(call["dim"], int):
        return None
    return _getitem(call["self"], _index(call["dim"], slice(start, end, step)))


def select_rule(call: Call) -> Spelling | None:
    """`x[:, index]` (`x[..., index]` from the back)."""
    if not isinstance(call["dim"], int):
        return None
    return _getitem(call["self"], _index(call["dim"], call["index"]))


def index_rule(call: Call) -> Spelling | None:
    """`x[:, idx]`: advanced indexing with tensors; a 0-d integer index would select (a view) instead: kept."""
    indices = call["indices"]
    for index in indices:
        value = index.meta.get("val") if isinstance(index, fx.Node) else None
        if index is not None and (not isinstance(value, torch.Tensor) or value.dim() == 0):
            return None
    return _getitem(call["self"], tuple(slice(None) if i is None else i for i in indices))


def alias_rule(call: Call) -> Spelling:
    """`x[...]`: indexing with an ellipsis is what makes an alias (a view of the whole tensor)."""
    return _getitem(call["self"], (Ellipsis,))


def assert_metadata_rule(call: Call) -> Spelling | None:
    """Dropped (None target) where the metadata it checks is what export recorded for the tensor."""
    value = call["a"].meta.get("val") if isinstance(call["a"], fx.Node) else None
    if not isinstance(value, torch.Tensor) or call["size"] is not None or call["stride"] is not None:
        return None
    checks = {"dtype": value.dtype, "device": value.device, "layout": value.layout}
    if all(call[k] is None or call[k] == v for k, v in checks.items()):
        return Spelling("drop", None)
    return None


def reduction(name: str, optional: str = "keepdim dtype") -> Rule:
    """`x.sum(1, keepdim=True)`: a one-element dim list is written as the int."""

    def rule(call: Call) -> Spelling:
        args, kwargs = _args(call, "self", optional)
        dim = call["dim"]
        dims = dim[0] if isinstance(dim, (list, tuple)) and len(dim) == 1 else dim
        return Spelling("call_method", name, (*args, dims), kwargs)

    return rule


_BATCH_NORM_DEFAULTS = {"training": False, "momentum": 0.1, "eps": 1e-05}


def batch_norm_rule(call: Call) -> Spelling:
    """F.batch_norm takes the running statistics before weight and bias (the eval-only overload has no
    `training`); in training it refuses a batch of one value per channel, which the op computes: torch.batch_norm."""
    if call.values.get("training"):
        args = tuple(call[k] for k in ("input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps"))
        return Spelling("call_function", torch.batch_norm, (*args, call["cudnn_enabled"]))
    args = (call["input"], call["running_mean"], call["running_var"], call["weight"], call["bias"])
    kwargs = {k: call.values.get(k, False) for k in _BATCH_NORM_DEFAULTS}
    return Spelling("call_function", F.batch_norm, args, {k: v for k, v in kwargs.items() if not _same(v, _BATCH_NORM_DEFAULTS[k])})


_INSTANCE_NORM_DEFAULTS = {"use_input_stats": True, "momentum": 0.1, "eps": 1e-5}  # F.instance_norm's


def instance_norm_rule(call: Call) -> Spelling:
    """F.instance_norm takes the running statistics before weight and bias, those left out where None,
    and its flags as keywords where they are not its defaults."""
    kwargs = {k: call[k] for k in ("running_mean", "running_var", "weight", "bias") if call[k] is not None}
    kwargs.update({k: call[k] for k, default in _INSTANCE_NORM_DEFAULTS.items() if not _same(call[k], default)})
    return Spelling("call_function", F.instance_norm, (call["input"],), kwargs)


# grid_sampler's interpolation and padding codes -> F.grid_sample's names for them
_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sample_rule(call: Call) -> Spelling | None:
    """F.grid_sample with the mode and padding by name, `align_corners` always written (F's None warns)."""
    mode, padding = _GRID_MODES.get(call["interpolation_mode"]), _GRID_PADDINGS.get(call["padding_mode"])
    if mode is None or padding is None or isinstance(call["align_corners"], fx.Node):
        return None
    kwargs: dict[str, Any] = {} if mode == "bilinear" else {"mode": mode}
    if padding != "zeros":
        kwargs["padding_mode"] = padding
    kwargs["align_corners"] = call["align_corners"]
    return Spelling("call_function", F.grid_sample, (call["input"], call["grid"]), kwargs)


def meshgrid_rule(call: Call) -> Spelling:
    """torch.meshgrid of the tensors, the indexing written (its absence warns; the overload without it is "ij")."""
    return Spelling("call_function", torch.meshgrid, tuple(call["tensors"]), {"indexing": call.values.get("indexing", "ij")})


def embedding_rule(call: Call) -> Spelling | None:
    """F.embedding takes the indices first; it normalises a negative padding index, -1 being none."""
    if call["scale_grad_by_freq"] or call["sparse"]:
        return None
    padding, rows = call["padding_idx"], _size(call["weight"], 0)
    if not _same(padding, -1) and (rows is None or not -rows <= padding < rows):
        return None  # F.embedding asserts the index is a row, where the op ignores it
    kwargs = {} if _same(padding, -1) else {"padding_idx": padding}
    return Spelling("call_function", F.embedding, (call["indices"], call["weight"]), kwargs)


def pool_rule(target: Callable[..., Any], optional: str) -> Rule:
    """F.max_pool2d / F.avg_pool2d: an empty stride means the kernel size, F's None."""

    def rule(call: Call) -> Spelling:
        args, kwargs = _args(call, "self kernel_size", optional)
        if "stride" in kwargs and not kwargs["stride"]:
            del kwargs["stride"]
        return Spelling("call_function", target, args, kwargs)

    return rule


# upsample op -> the mode F.interpolate (and nn.Upsample) calls it for, and whether it records align_corners
UPSAMPLE_MODES = {
    **dict.fromkeys(("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"), ("nearest", False)),
    **dict.fromkeys(("_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"), ("nearest-exact", False)),
    "upsample_linear1d": ("linear", True),
    "upsample_bilinear2d": ("bilinear", True),
    "upsample_bicubic2d": ("bicubic", True),
    "upsample_trilinear3d": ("trilinear", True),
}


def interpolate_rule(mode: str, align: bool, antialias: bool = False) -> Rule:
    """F.interpolate with `size` or `scale_factor`, as it calls the upsample op."""

    def rule(call: Call) -> Spelling | None:
        size, scales = call["output_size"], call["scale_factors"]
        if (size is None) == (scales is None):
            return None
        kwargs: dict[str, Any] = {"size": size} if size is not None else {"scale_factor": scales}
        kwargs["mode"] = mode
        if align:
            kwargs["align_corners"] = call["align_corners"]
        if antialias:
            kwargs["antialias"] = True
        return Spelling("call_function", F.interpolate, (call["input"],), kwargs)

    return rule


def softmax_rule(target: Callable[..., Any]) -> Rule:
    """`F.softmax(x, dim=-1)`; `_softmax` only without its half-to-float conversion."""
    def rule(call: Call) -> Spelling | None:
        if "half_to_float" in call.values and call["half_to_float"]:
            return None
        kwargs = {"dtype": call["dtype"]} if call.values.get("dtype") is not None else {}
        return Spelling("call_function", target, (call["self"],), {"dim": call["dim"], **kwargs})

    return rule


def _strided(call: Call) -> bool:
    """Tensor.to takes no layout nor pin_memory: only the defaults can be left out."""
    return call["layout"] in (None, torch.strided) and not call["pin_memory"]


def _to_overload(call: Call) -> Spelling | None:
    """`to.dtype_layout` as the overload Tensor.to would pick for its arguments: `x.to(device=d, dtype=t)`
    is recorded as `to.device` and `x.to(dtype=t)` as `to.dtype`, so it is spelled as those are
    (`x.to(d, t)`, `x.to(t)`), which a torch.export of the export records and spells alike (issue 14's
    fixed point). A device alone stays a keyword (`x.to(device=d)`): the tensor keeps whatever dtype it
    has when the graph runs, which no dtype written out would."""
    optional = "non_blocking copy memory_format"
    if call["device"] is not None and call["dtype"] is not None:
        return method("to", "self device dtype", optional)(call)
    if call["dtype"] is not None:
        return method("to", "self dtype", optional)(call)
    return method("to", "self", f"device dtype {optional}")(call)


def to_copy_rule(call: Call) -> Spelling | None:
    """`x.to(dtype=..., copy=True)`: _to_copy always copies."""
    if not _strided(call):
        return None
    _, kwargs = _args(call, "", "dtype device non_blocking memory_format")
    return Spelling("call_method", "to", (call["self"],), {**kwargs, "copy": True})


def elu_rule(call: Call) -> Spelling | None:
    """F.elu has no scale nor input_scale: only where both are 1."""
    if not (_same(call["scale"], 1) and _same(call["input_scale"], 1)):
        return None
    return Spelling("call_function", F.elu, (call["self"],), {} if _same(call["alpha"], 1) else {"alpha": call["alpha"]})


def sym_size_rule(call: Call) -> Spelling:
    """`x.size(1)`."""
    return Spelling("call_method", "size", (call["self"], call["dim"]))


def _size(value: Any, dim: int) -> int | None:
    """A dimension of the tensor a node gives, when recorded and static."""
    recorded = value.meta.get("val") if isinstance(value, fx.Node) else None
    size = recorded.shape[dim] if isinstance(recorded, torch.Tensor) and recorded.dim() > dim else None
    return size if isinstance(size, int) else None


def hardtanh_rule(inplace: bool) -> Rule:
    """F.hardtanh refuses min_val > max_val, where the op computes."""

    def rule(call: Call) -> Spelling | None:
        if call["min_val"] > call["max_val"]:
            return None
        args, kwargs = _args(call, "self", "min_val max_val")
        return Spelling("call_function", F.hardtanh, args, {**kwargs, **({"inplace": True} if inplace else {})})

    return rule


def convolution_rule(call: Call) -> Spelling | None:
    """`aten.convolution` (a decomposed graph's) as the F function of its kind and dimensions."""
    dims = len(call["stride"])
    if dims not in (1, 2, 3):
        return None
    if call["transposed"]:
        optional = "stride padding output_padding groups dilation"
        target = getattr(F, f"conv_transpose{dims}d")
    else:
        if any(call["output_padding"]):
            return None
        optional, target = "stride padding dilation groups", getattr(F, f"conv{dims}d")
    args, _ = _args(call, "input weight bias", "")
    defaults = {"stride": [1] * dims, "padding": [0] * dims, "output_padding": [0] * dims, "dilation": [1] * dims, "groups": 1}
    kwargs = {k: _compact(k, call[k]) for k in optional.split() if not _same(call[k], defaults[k])}
    return Spelling("call_function", target, args, kwargs)


def einsum_rule(call: Call) -> Spelling | None:
    """`torch.einsum(equation, a, b)`: with no contraction path and at most two operands (torch.einsum
    picks its own order for more when opt_einsum is installed, which changes the bits)."""
    if call["path"] is not None or len(call["tensors"]) > 2:
        return None
    return Spelling("call_function", torch.einsum, (call["equation"], *call["tensors"]))


def dropout_rule(inplace: bool) -> Rule:
    """`F.dropout(x, p, training=...)`."""
    def rule(call: Call) -> Spelling:
        kwargs = {"training": call["train"], **({"inplace": True} if inplace else {})}
        return Spelling("call_function", F.dropout, (call["self" if inplace else "input"], call["p"]), kwargs)

    return rule


def inplace(target: Callable[..., Any], positional: str = "self", optional: str = "") -> Rule:
    """`F.relu(x, inplace=True)`: F's in-place form of an activation."""

    def rule(call: Call) -> Spelling:
        args, kwargs = _args(call, positional, optional)
        return Spelling("call_function", target, args, {**kwargs, "inplace": True})

    return rule


_CREATE = "dtype layout device pin_memory"
_ACTIVATIONS = {"relu": F.relu, "silu": F.silu, "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid, "mish": F.mish}
_MATH = ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "abs", "erf", "reciprocal", "floor", "ceil", "sign", "log1p",
         "expm1", "isnan", "isinf", "t", "detach", "detach_", "item", "numel", "square")  # fmt: skip

SPELLINGS: dict[Any, Rule] = {
    # operators
    aten.add.Tensor: first_of(binary(operator.add, alpha=True), fn(torch.add, "self other", "alpha")),
    aten.add.Scalar: first_of(binary(operator.add, alpha=True), fn(torch.add, "self other", "alpha")),
    aten.sub.Tensor: first_of(binary(operator.sub, alpha=True), fn(torch.sub, "self other", "alpha")),
    aten.rsub.Scalar: first_of(binary(operator.sub, "other", "self", alpha=True), fn(torch.rsub, "self other", "alpha")),
    aten.mul.Tensor: binary(operator.mul),
    aten.multiply.Tensor: binary(operator.mul),
    aten.div.Tensor: binary(operator.truediv),
    aten.div.Tensor_mode: fn(torch.div, "self other", "rounding_mode"),
    aten.pow.Tensor_Scalar: binary(operator.pow, "self", "exponent"),
    aten.pow.Tensor_Tensor: binary(operator.pow, "self", "exponent"),
    aten.pow.Scalar: fn(torch.pow, "self exponent"),
    aten.matmul.default: binary(operator.matmul),
    aten.neg.default: unary(operator.neg),
    aten.bitwise_not.default: unary(operator.invert),
    aten.__and__.Tensor: binary(operator.and_),
    aten.bitwise_and.Tensor: binary(operator.and_),
    aten.bitwise_or.Tensor: binary(operator.or_),
    aten.__or__.Tensor: binary(operator.or_),
    aten.eq.Tensor: binary(operator.eq),
    aten.eq.Scalar: binary(operator.eq),
    aten.ne.Tensor: binary(operator.ne),
    aten.ne.Scalar: binary(operator.ne),
    aten.lt.Tensor: binary(operator.lt),
    aten.lt.Scalar: binary(operator.lt),
    aten.le.Tensor: binary(operator.le),
    aten.le.Scalar: binary(operator.le),
    aten.gt.Tensor: binary(operator.gt),
    aten.gt.Scalar: binary(operator.gt),
    aten.ge.Tensor: binary(operator.ge),
    aten.ge.Scalar: binary(operator.ge),
    aten.slice.Tensor: slice_rule,
    aten.select.int: select_rule,
    aten.index.Tensor: index_rule,
    aten.alias.default: alias_rule,
    # in-place tensor methods
    aten.add_.Tensor: method("add_", "self other", "alpha"),
    aten.mul_.Tensor: method("mul_", "self other"),
    aten.div_.Tensor: method("div_", "self other"),
    aten.index_put_.default: method("index_put_", "self indices values", "accumulate"),
    aten.fill_.Tensor: method("fill_", "self value"),
    aten.fill_.Scalar: method("fill_", "self value"),
    aten.copy_.default: method("copy_", "self src", "non_blocking"),
    aten.zero_.default: method("zero_"),
    # shapes and views
    aten.view.default: method("view", "self *size"),
    aten.reshape.default: method("reshape", "self *shape"),
    aten.reshape_as.default: method("reshape_as", "self other"),
    aten.expand.default: when(lambda call: not call["implicit"], method("expand", "self *size")),
    aten.expand_as.default: method("expand_as", "self other"),
    aten.permute.default: method("permute", "self *dims"),
    aten.repeat.default: method("repeat", "self *repeats"),
    aten.transpose.int: method("transpose", "self dim0 dim1"),
    aten.unsqueeze.default: method("unsqueeze", "self dim"),
    aten.squeeze.dim: method("squeeze", "self dim"),
    aten.squeeze.default: method("squeeze"),
    aten.flatten.using_ints: method("flatten", "self start_dim", "end_dim"),
    aten.unflatten.int: method("unflatten", "self dim sizes"),
    aten.contiguous.default: method("contiguous", "self", "memory_format"),
    aten.clone.default: method("clone", "self", "memory_format"),
    aten.lift_fresh_copy.default: method("clone"),
    aten.type_as.default: method("type_as", "self other"),
    aten.split.Tensor: method("split", "self split_size", "dim"),
    aten.split_with_sizes.default: method("split", "self split_sizes", "dim"),
    aten.chunk.default: method("chunk", "self chunks", "dim"),
    aten.tensor_split.sections: method("tensor_split", "self sections", "dim"),
    aten.tensor_split.indices: method("tensor_split", "self indices", "dim"),
    aten.unfold.default: method("unfold", "self dimension size step"),
    aten.unbind.int: method("unbind", "self", "dim"),
    aten.roll.default: method("roll", "self shifts", "dims"),
    aten.flip.default: method("flip", "self dims"),
    aten.gather.default: method("gather", "self dim index", "sparse_grad"),
    aten.swapaxes.default: method("swapaxes", "self axis0 axis1"),
    aten.repeat_interleave.self_int: method("repeat_interleave", "self repeats", "dim output_size"),
    aten.addcmul.default: fn(torch.addcmul, "self tensor1 tensor2", "value"),
    aten.floor_divide.default: fn(torch.floor_divide, "self other"),
    aten.masked_fill.Scalar: method("masked_fill", "self mask value"),
    aten.masked_fill.Tensor: method("masked_fill", "self mask value"),
    aten.new_ones.default: method("new_ones", "self size", _CREATE),
    aten.new_zeros.default: method("new_zeros", "self size", _CREATE),
    aten.sym_size.int: sym_size_rule,
    aten._local_scalar_dense.default: method("item"),
    aten.to.dtype: method("to", "self dtype", "non_blocking copy memory_format"),
    aten.to.device: method("to", "self device dtype", "non_blocking copy memory_format"),
    aten.to.dtype_layout: when(_strided, _to_overload),
    aten._to_copy.default: to_copy_rule,
    aten._assert_tensor_metadata.default: assert_metadata_rule,
    # reductions
    aten.sum.default: method("sum", "self", "dtype"),
    aten.sum.dim_IntList: reduction("sum"),
    aten.mean.default: method("mean", "self", "dtype"),
    aten.mean.dim: reduction("mean"),
    aten.var.dim: method("var", "self dim", "unbiased keepdim"),
    aten.var.correction: first_of(when(lambda call: call["dim"] is None, method("var", "self", "correction keepdim")),
                                  method("var", "self dim", "correction keepdim")),  # fmt: skip
    aten.amax.default: reduction("amax", "keepdim"),
    aten.amin.default: reduction("amin", "keepdim"),
    aten.max.dim: method("max", "self dim", "keepdim"),
    aten.max.default: method("max"),
    aten.min.other: fn(torch.min, "self other"),
    aten.max.other: fn(torch.max, "self other"),
    aten.maximum.default: fn(torch.maximum, "self other"),
    aten.minimum.default: fn(torch.minimum, "self other"),
    aten.argmax.default: method("argmax", "self", "dim keepdim"),
    aten.cumsum.default: method("cumsum", "self dim", "dtype"),
    aten.topk.default: method("topk", "self k", "dim largest sorted"),
    aten.sort.default: method("sort", "self", "dim descending"),
    aten.histc.default: fn(torch.histc, "self", "bins min max"),
    aten.all.default: method("all"),
    aten.any.default: method("any"),
    aten.linalg_vector_norm.default: fn(torch.linalg.vector_norm, "self", "ord dim keepdim dtype"),
    aten.diff.default: fn(torch.diff, "self", "n dim prepend append"),
    aten.clamp.default: method("clamp", "self", "min max"),
    aten.clamp_min.default: method("clamp_min", "self min"),
    aten.clamp_max.default: method("clamp_max", "self max"),
    aten.where.self: fn(torch.where, "condition self other"),
    aten.where.ScalarOther: fn(torch.where, "condition self other"),
    aten.where.ScalarSelf: fn(torch.where, "condition self other"),
    aten.triu.default: method("triu", "self", "diagonal"),
    aten.tril.default: method("tril", "self", "diagonal"),
    # creation
    aten.arange.default: fn(torch.arange, "end", _CREATE),
    aten.arange.start: fn(torch.arange, "start end", _CREATE),
    aten.arange.start_step: fn(torch.arange, "start end step", _CREATE),
    aten.full.default: fn(torch.full, "size fill_value", _CREATE),
    aten.zeros.default: fn(torch.zeros, "size", _CREATE),
    aten.ones.default: fn(torch.ones, "size", _CREATE),
    aten.zeros_like.default: fn(torch.zeros_like, "self", _CREATE + " memory_format"),
    aten.ones_like.default: fn(torch.ones_like, "self", _CREATE + " memory_format"),
    aten.full_like.default: fn(torch.full_like, "self fill_value", _CREATE + " memory_format"),
    aten.scalar_tensor.default: fn(torch.scalar_tensor, "s", _CREATE),
    aten.linspace.default: fn(torch.linspace, "start end steps", _CREATE),
    aten.meshgrid.default: meshgrid_rule,
    aten.meshgrid.indexing: meshgrid_rule,
    aten.cat.default: fn(torch.cat, "tensors", "dim"),
    aten.stack.default: fn(torch.stack, "tensors", "dim"),
    # linear algebra
    aten.mm.default: fn(torch.mm, "self mat2"),
    aten.bmm.default: fn(torch.bmm, "self mat2"),
    aten.addmm.default: fn(torch.addmm, "self mat1 mat2", "beta alpha"),
    aten.baddbmm.default: fn(torch.baddbmm, "self batch1 batch2", "beta alpha"),
    aten.einsum.default: einsum_rule,
    # torch.nn.functional
    aten.linear.default: fn(F.linear, "input weight bias"),
    aten.conv1d.default: fn(F.conv1d, "input weight bias", "stride padding dilation groups"),
    aten.conv2d.default: fn(F.conv2d, "input weight bias", "stride padding dilation groups"),
    aten.conv3d.default: fn(F.conv3d, "input weight bias", "stride padding dilation groups"),
    aten.conv1d.padding: fn(F.conv1d, "input weight bias", "stride padding dilation groups"),
    aten.conv2d.padding: fn(F.conv2d, "input weight bias", "stride padding dilation groups"),
    aten.conv3d.padding: fn(F.conv3d, "input weight bias", "stride padding dilation groups"),
    aten.convolution.default: convolution_rule,
    aten.conv_transpose1d.default: fn(F.conv_transpose1d, "input weight bias", "stride padding output_padding groups dilation"),
    aten.conv_transpose2d.input: fn(F.conv_transpose2d, "input weight bias", "stride padding output_padding groups dilation"),
    aten.conv_transpose3d.input: fn(F.conv_transpose3d, "input weight bias", "stride padding output_padding groups dilation"),
    aten.batch_norm.default: batch_norm_rule,
    aten._native_batch_norm_legit_no_training.default: batch_norm_rule,  # its first output only
    aten.layer_norm.default: fn(F.layer_norm, "input normalized_shape weight bias", "eps"),
    aten.instance_norm.default: instance_norm_rule,
    aten.grid_sampler.default: grid_sample_rule,
    aten.group_norm.default: fn(torch.group_norm, "input num_groups weight bias", "eps"),  # F's refuses one value per group
    aten.embedding.default: embedding_rule,
    aten.dropout.default: dropout_rule(inplace=False),
    aten.dropout_.default: dropout_rule(inplace=True),
    aten.scaled_dot_product_attention.default: fn(F.scaled_dot_product_attention, "query key value",
                                                  "attn_mask dropout_p is_causal scale enable_gqa"),  # fmt: skip
    aten.softmax.int: softmax_rule(F.softmax),
    aten._softmax.default: softmax_rule(F.softmax),
    aten.log_softmax.int: softmax_rule(F.log_softmax),
    aten._log_softmax.default: softmax_rule(F.log_softmax),
    aten.gelu.default: fn(F.gelu, "self", "approximate"),
    aten.sigmoid.default: fn(torch.sigmoid, "self"),
    aten.tanh.default: fn(torch.tanh, "self"),
    aten.hardtanh.default: hardtanh_rule(inplace=False),
    aten.hardtanh_.default: hardtanh_rule(inplace=True),
    aten.leaky_relu.default: fn(F.leaky_relu, "self", "negative_slope"),
    aten.leaky_relu_.default: inplace(F.leaky_relu, "self", "negative_slope"),
    aten.elu.default: elu_rule,
    aten.softplus.default: fn(F.softplus, "self", "beta threshold"),
    aten.prelu.default: fn(F.prelu, "self weight"),
    aten.glu.default: fn(F.glu, "self", "dim"),
    aten.max_pool1d.default: pool_rule(F.max_pool1d, "stride padding dilation ceil_mode"),
    aten.max_pool2d.default: pool_rule(F.max_pool2d, "stride padding dilation ceil_mode"),
    aten.max_pool3d.default: pool_rule(F.max_pool3d, "stride padding dilation ceil_mode"),
    aten.max_pool2d_with_indices.default: pool_rule(F.max_pool2d, "stride padding dilation ceil_mode"),  # first output only
    aten.avg_pool1d.default: pool_rule(F.avg_pool1d, "stride padding ceil_mode count_include_pad"),
    aten.avg_pool2d.default: pool_rule(F.avg_pool2d, "stride padding ceil_mode count_include_pad divisor_override"),
    aten.avg_pool3d.default: pool_rule(F.avg_pool3d, "stride padding ceil_mode count_include_pad divisor_override"),
    aten.adaptive_avg_pool1d.default: fn(F.adaptive_avg_pool1d, "self output_size"),
    aten.adaptive_avg_pool2d.default: fn(F.adaptive_avg_pool2d, "self output_size"),
    aten.adaptive_avg_pool3d.default: fn(F.adaptive_avg_pool3d, "self output_size"),
    **{getattr(aten, op).vec: interpolate_rule(mode, align) for op, (mode, align) in UPSAMPLE_MODES.items()},
    aten._upsample_bilinear2d_aa.vec: interpolate_rule("bilinear", align=True, antialias=True),
    aten._upsample_bicubic2d_aa.vec: interpolate_rule("bicubic", align=True, antialias=True),
    aten.im2col.default: fn(F.unfold, "self kernel_size", "dilation padding stride"),
    aten.col2im.default: fn(F.fold, "self output_size kernel_size", "dilation padding stride"),
    aten.pad.default: fn(F.pad, "self pad", "mode value"),
    aten.constant_pad_nd.default: fn(F.pad, "self pad", "value"),
}
SPELLINGS.update({getattr(aten, name).default: fn(target, "self") for name, target in _ACTIVATIONS.items()})
SPELLINGS.update({getattr(aten, f"{name}_").default: inplace(target) for name, target in _ACTIVATIONS.items()})
SPELLINGS.update({getattr(aten, name).default: method(name) for name in _MATH})
# Values named after the public call, as a new capture of the exported code names them.
RENAMES = {
    aten.lift_fresh_copy.default: "clone",
    aten._native_batch_norm_legit_no_training.default: "batch_norm",
    aten.max_pool2d_with_indices.default: "max_pool2d",
    aten._softmax.default: "softmax",
    aten._log_softmax.default: "log_softmax",
    aten.constant_pad_nd.default: "pad",
    aten._local_scalar_dense.default: "item",
    aten._to_copy.default: "to",
}
# Overloads whose other outputs (saved statistics, pooling indices) the public function does not return.
FIRST_OUTPUT_ONLY = frozenset({aten._native_batch_norm_legit_no_training.default, aten.max_pool2d_with_indices.default})


def bind(node: fx.Node) -> Call:
    """The node's ATen call with every schema argument by name, defaults filled in."""
    schema = node.target._schema  # type: ignore[union-attr]
    values: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for position, argument in enumerate(schema.arguments):
        if argument.has_default_value():
            defaults[argument.name] = argument.default_value
        if position < len(node.args) and not argument.kwarg_only:
            values[argument.name] = node.args[position]
        elif argument.name in node.kwargs:
            values[argument.name] = node.kwargs[argument.name]
        else:
            values[argument.name] = defaults.get(argument.name)
    return Call(node, values, defaults)


def spelling(node: fx.Node) -> Spelling | None:
    """The public spelling of an ATen call node, or None where it has none."""
    rule = SPELLINGS.get(node.target)
    if rule is None:
        return None
    return rule(bind(node))


@dataclass(frozen=True)
class Keywords:
    """How the spellings call a function: its positional arguments, its keywords in order, and the
    keywords' numeric defaults as the spelling would write them (where it leaves them out)."""

    positional: int
    order: tuple[str, ...]
    defaults: dict[str, Any]


@functools.cache
def keyword_targets() -> dict[Callable[..., Any], tuple[tuple[Any, FunctionRule], ...]]:
    """Each function the spellings call with keywords, with its overloads and their rules."""
    found: dict[Callable[..., Any], list[tuple[Any, FunctionRule]]] = {}
    for overload, rule in SPELLINGS.items():
        if isinstance(rule, FunctionRule) and rule.optional and hasattr(overload, "_schema"):
            found.setdefault(rule.target, []).append((overload, rule))
    return {target: tuple(rules) for target, rules in found.items()}


@functools.cache
def keyword_defaults(target: Callable[..., Any]) -> Keywords | None:
    """How the spellings call `target` with keywords, None where they do not. A keyword whose overloads
    have other defaults has none here. Read off its overloads' schemas only when asked (all of them take
    most of a millisecond, in every first export)."""
    known: Keywords | None = None
    clashing: set[str] = set()
    for overload, rule in keyword_targets().get(target, ()):
        schema = {a.name: a.default_value for a in overload._schema.arguments if a.has_default_value()}
        names = [item.partition(":") for item in rule.optional.split()]
        order = tuple(public or name for name, _, public in names)
        defaults = {public or name: _compact(name, schema[name]) for name, _, public in names if name in schema}
        defaults = {k: v for k, v in defaults.items() if type(v) in (int, float)}
        if known is not None:
            clashing |= {k for k in defaults.keys() & known.defaults.keys() if known.defaults[k] != defaults[k]}
            order = known.order if len(known.order) >= len(order) else order
            defaults = {**known.defaults, **defaults}
        known = Keywords(len(rule.positional.split()), order, defaults)
    return None if known is None else Keywords(known.positional, known.order, {n: v for n, v in known.defaults.items() if n not in clashing})


@functools.cache
def none_keywords(target: Callable[..., Any]) -> frozenset[str]:
    """The keywords the spellings pass `target` by that every overload defaults to None (`attn_mask`):
    a call passing None there computes what one leaving it out does."""
    found: set[str] | None = None
    for overload, rule in keyword_targets().get(target, ()):
        schema = {a.name: a for a in overload._schema.arguments}
        names = {public or name for name, _, public in (item.partition(":") for item in rule.optional.split())
                 if name in schema and schema[name].has_default_value() and schema[name].default_value is None}  # fmt: skip
        found = names if found is None else found & names
    return frozenset(found or ())
