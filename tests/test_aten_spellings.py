"""Every entry of the ATen -> public torch table gives what its ATen op gives, on sample inputs.

Each sample is one ATen call in a graph of its own; the raised graph must compute equal values
(same dtype, same bits), mutate its inputs alike, alias its inputs alike, and call no ATen op
unless the sample says the call has no public spelling. Every table entry needs a sample.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from torch import fx, nn
from torch.utils import _pytree as pytree

from fxexport.aten_spellings import _ACTIVATIONS, _MATH, END_SENTINEL, FIRST_OUTPUT_ONLY, SPELLINGS
from fxexport.imports import ImportTable
from fxexport.literals import function_reference
from fxexport.names import Namespace
from fxexport.raising import is_aten, raise_aten

aten = torch.ops.aten


_SEEDS = itertools.count()


def t(*shape: int, dtype: torch.dtype = torch.float32, high: int = 5) -> torch.Tensor:
    """A tensor of its own values: no two calls give the same (an argument-order slip shows)."""
    generator = torch.Generator().manual_seed(next(_SEEDS))
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=generator).to(dtype)
    if dtype is torch.bool:
        return torch.rand(*shape, generator=generator) > 0.5
    return torch.randint(0, high, shape, generator=generator, dtype=dtype)


@dataclass(frozen=True)
class Sample:
    op: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    kept: bool = False  # no public spelling for this call: it stays an ATen op
    why: str = ""

    @property
    def id(self) -> str:
        return f"{self.op}{'-' + self.why if self.why else ''}"


def S(op: Any, *args: Any, kept: bool = False, why: str = "", **kwargs: Any) -> Sample:
    return Sample(op, args, kwargs, kept, why)


L = torch.long
SAMPLES = [
    S(aten.instance_norm.default, t(2, 3, 4, 4), t(3), t(3), None, None, True, 0.1, 1e-5, True),
    S(aten.instance_norm.default, t(2, 3, 4, 4), None, None, t(3), t(3).abs(), False, 0.2, 1e-3, False, why="running_stats"),
    S(aten.grid_sampler.default, t(1, 2, 4, 4), t(1, 3, 3, 2), 0, 0, False),
    S(aten.grid_sampler.default, t(1, 2, 4, 4), t(1, 3, 3, 2), 1, 2, True, why="nearest_reflection"),
    S(aten.grid_sampler.default, t(1, 2, 4, 4), t(1, 3, 3, 2), 2, 1, True, why="bicubic_border"),
    S(aten.linspace.default, -3, 3, 7),
    S(aten.linspace.default, 0.0, 1.0, 5, dtype=torch.float64, why="dtype"),
    S(aten.meshgrid.default, [t(3), t(4)]),
    S(aten.meshgrid.indexing, [t(3), t(4)], indexing="xy"),
    S(aten.add.Tensor, t(2, 3), t(2, 3)),
    S(aten.add.Tensor, t(2, 3), t(2, 3), alpha=2, why="alpha"),
    S(aten.add.Tensor, t(2, 3), 1.5, why="scalar"),
    S(aten.add.Scalar, t(2, 3), 2),
    S(aten.sub.Tensor, t(2, 3), t(3)),
    S(aten.sub.Tensor, t(2, 3), t(3), alpha=0.5, why="alpha"),
    S(aten.rsub.Scalar, t(2, 3), 1.0),
    S(aten.rsub.Scalar, t(2, 3), 1.0, alpha=3, why="alpha"),
    S(aten.mul.Tensor, t(2, 3), t(2, 1)),
    S(aten.div.Tensor, t(2, 3, dtype=L), 2, why="int_true_division"),
    S(aten.div.Tensor_mode, t(2, 3), t(2, 3), rounding_mode="floor"),
    S(aten.div.Tensor_mode, t(2, 3), t(2, 3), rounding_mode=None, why="no_rounding"),
    S(aten.pow.Tensor_Scalar, t(2, 3), 2),
    S(aten.pow.Tensor_Tensor, t(2, 3).abs(), t(2, 3)),
    S(aten.pow.Scalar, 2.0, t(2, 3)),
    S(aten.matmul.default, t(2, 3, 4), t(4, 5)),
    S(aten.neg.default, t(2, 3)),
    S(aten.bitwise_not.default, t(2, 3, dtype=torch.bool)),
    S(aten.__and__.Tensor, t(2, 3, dtype=torch.bool), t(2, 3, dtype=torch.bool)),
    S(aten.bitwise_and.Tensor, t(2, 3, dtype=L), t(2, 3, dtype=L)),
    S(aten.bitwise_or.Tensor, t(2, 3, dtype=L), t(2, 3, dtype=L)),
    S(aten.__or__.Tensor, t(2, 3, dtype=torch.bool), t(2, 3, dtype=torch.bool)),
    S(aten.multiply.Tensor, t(2, 3), t(2, 3)),
    *[S(getattr(aten, name).Tensor, t(2, 3), t(2, 3)) for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[S(getattr(aten, name).Scalar, t(2, 3), 0.0) for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    S(aten.slice.Tensor, t(4, 5), 1, 1, END_SENTINEL, why="end_sentinel"),
    S(aten.slice.Tensor, t(4, 5), 0, 0, 2),
    S(aten.slice.Tensor, t(4, 5, 6), -1, -3, END_SENTINEL, 2, why="negative_dim_step"),
    S(aten.slice.Tensor, t(4, 5), 1, None, None, why="full"),
    S(aten.select.int, t(4, 5, 6), 1, 2),
    S(aten.select.int, t(4, 5, 6), -2, -1, why="negative_dim"),
    S(aten.index.Tensor, t(4, 5), [None, t(3, dtype=L, high=5)]),
    S(aten.index.Tensor, t(4, 5), [t(2, 2, dtype=L, high=4)], why="first_dim"),
    S(aten.index.Tensor, t(4, 5), [t(4, 5, dtype=torch.bool)], why="mask"),
    S(aten.index.Tensor, t(4, 5), [torch.tensor(1)], kept=True, why="zero_dim_index_selects"),
    S(aten.alias.default, t(2, 3)),
    S(aten.add_.Tensor, t(2, 3), t(2, 3), alpha=2),
    S(aten.mul_.Tensor, t(2, 3), t(2, 3)),
    S(aten.div_.Tensor, t(2, 3), t(2, 3)),
    S(aten.index_put_.default, t(4, 3), [t(2, dtype=L, high=4)], t(2, 3)),
    S(aten.index_put_.default, t(4, 3), [t(2, dtype=L, high=4)], t(2, 3), True, why="accumulate"),
    S(aten.fill_.Tensor, t(2, 3), torch.tensor(2.5)),
    S(aten.fill_.Scalar, t(2, 3), 2.5),
    S(aten.copy_.default, t(2, 3), t(2, 3)),
    S(aten.zero_.default, t(2, 3)),
    S(aten.view.default, t(2, 6), [3, -1]),
    S(aten.view.default, t(1), [], why="empty_size"),
    S(aten.reshape.default, t(2, 6), [4, 3]),
    S(aten.reshape_as.default, t(2, 6), t(3, 4)),
    S(aten.expand.default, t(3, 1), [2, 3, 4]),
    S(aten.expand.default, t(3, 1), [-1, 4], why="minus_one"),
    S(aten.expand_as.default, t(3, 1), t(3, 4)),
    S(aten.permute.default, t(2, 3, 4), [2, 0, 1]),
    S(aten.repeat.default, t(2, 3), [2, 1, 2]),
    S(aten.transpose.int, t(2, 3, 4), 1, -1),
    S(aten.unsqueeze.default, t(2, 3), -1),
    S(aten.squeeze.dim, t(2, 1, 3), 1),
    S(aten.squeeze.default, t(2, 1, 3, 1)),
    S(aten.flatten.using_ints, t(2, 3, 4, 5), 1),
    S(aten.flatten.using_ints, t(2, 3, 4, 5), 1, 2, why="end_dim"),
    S(aten.unflatten.int, t(2, 12), 1, [3, 4]),
    S(aten.contiguous.default, t(3, 4).t()),
    S(aten.clone.default, t(3, 4).t()),
    S(aten.clone.default, t(2, 3, 4, 5), memory_format=torch.channels_last, why="memory_format"),
    S(aten.lift_fresh_copy.default, t(3)),
    S(aten.type_as.default, t(2, 3), t(1, dtype=torch.float64)),
    S(aten.split.Tensor, t(5, 4), 2),
    S(aten.split.Tensor, t(5, 4), 3, 1, why="dim"),
    S(aten.split_with_sizes.default, t(5, 4), [1, 3], 1),
    S(aten.chunk.default, t(5, 4), 2),
    S(aten.tensor_split.sections, t(5, 4), 2),
    S(aten.tensor_split.sections, t(5, 4), 3, 1, why="dim"),
    S(aten.tensor_split.indices, t(5, 4), [1, 3]),
    S(aten.tensor_split.indices, t(2, 3, 9), [8], 2, why="dim"),
    S(aten.unfold.default, t(2, 7, 3), 1, 3, 2),
    S(aten.unbind.int, t(3, 4), 1),
    S(aten.roll.default, t(3, 4), [1], [1]),
    S(aten.flip.default, t(3, 4), [0]),
    S(aten.gather.default, t(3, 4), 1, t(3, 2, dtype=L, high=4)),
    S(aten.swapaxes.default, t(2, 3, 4), 0, 2),
    S(aten.repeat_interleave.self_int, t(2, 3), 2, 1),
    S(aten.repeat_interleave.self_int, t(2, 3), 2, why="flattened"),
    S(aten.addcmul.default, t(2, 3), t(2, 3), t(2, 3), value=0.5),
    S(aten.floor_divide.default, t(2, 3), t(2, 3)),
    S(aten.masked_fill.Scalar, t(3, 4), t(3, 4, dtype=torch.bool), -1.0),
    S(aten.masked_fill.Tensor, t(3, 4), t(3, 4, dtype=torch.bool), torch.tensor(-2.0)),
    S(aten.new_ones.default, t(3, 4), [2, 2]),
    S(aten.new_zeros.default, t(3, 4), [2], dtype=torch.int32),
    S(aten.sym_size.int, t(3, 4), 1),
    S(aten._local_scalar_dense.default, t(1)),
    S(aten.to.dtype, t(3, 4), torch.float16),
    S(aten.to.dtype, t(3, 4), torch.float32, why="same_dtype_aliases"),
    S(aten.to.device, t(3, 4), torch.device("cpu"), torch.float64),
    S(aten.to.dtype_layout, t(3, 4), dtype=torch.float64, layout=torch.strided, device=torch.device("cpu")),
    S(aten.to.dtype_layout, t(3, 4), dtype=torch.float16, why="dtype_only"),
    S(aten.to.dtype_layout, t(3, 4).to(torch.float16), device=torch.device("cpu"), why="device_only"),
    S(aten._to_copy.default, t(3, 4), dtype=torch.float16),
    S(aten._assert_tensor_metadata.default, t(3, 4), dtype=torch.float32, why="dropped"),
    S(aten._assert_tensor_metadata.default, t(3, 4), [3, 4], dtype=torch.float32, kept=True, why="size"),
    S(aten.sum.default, t(3, 4)),
    S(aten.sum.dim_IntList, t(3, 4), [1]),
    S(aten.sum.dim_IntList, t(3, 4, 5), [0, 2], True, why="keepdim"),
    S(aten.sum.dim_IntList, t(3, 4, dtype=L), [1], dtype=torch.float64, why="dtype"),
    S(aten.mean.default, t(3, 4)),
    S(aten.mean.dim, t(3, 4), [-1], True),
    S(aten.var.dim, t(3, 4), [1]),
    S(aten.var.dim, t(3, 4, 5), [0, 2], False, True, why="biased_keepdim"),
    S(aten.var.dim, t(3, 4), None, why="every_dim"),
    S(aten.var.correction, t(3, 4), [1], correction=0),
    S(aten.var.correction, t(3, 4), None, keepdim=True, why="every_dim"),
    S(aten.amax.default, t(3, 4), [1]),
    S(aten.amin.default, t(3, 4), [0], True),
    S(aten.max.dim, t(3, 4), 1),
    S(aten.max.default, t(3, 4)),
    S(aten.min.other, t(3, 4), t(3, 4)),
    S(aten.max.other, t(3, 4), t(3, 4)),
    S(aten.maximum.default, t(3, 4), t(3, 4)),
    S(aten.minimum.default, t(3, 4), t(3, 4)),
    S(aten.argmax.default, t(3, 4), 1),
    S(aten.cumsum.default, t(3, 4), 1),
    S(aten.topk.default, t(3, 6), 2),
    S(aten.topk.default, t(3, 6), 2, 0, False, why="smallest_along_0"),
    S(aten.sort.default, t(3, 6)),
    S(aten.sort.default, t(3, 6), 0, True, why="descending_along_0"),
    S(aten.histc.default, t(20), 5, -1.0, 1.0),
    S(aten.all.default, t(3, 4, dtype=torch.bool)),
    S(aten.any.default, t(3, 4, dtype=torch.bool)),
    S(aten.linalg_vector_norm.default, t(3, 4), 2, [-1], True),
    S(aten.diff.default, t(3, 4)),
    S(aten.clamp.default, t(3, 4), -0.5, 0.5),
    S(aten.clamp_min.default, t(3, 4), 0.1),
    S(aten.clamp_max.default, t(3, 4), 0.1),
    S(aten.where.self, t(3, 4, dtype=torch.bool), t(3, 4), t(3, 4)),
    S(aten.where.ScalarOther, t(3, 4, dtype=torch.bool), t(3, 4), 0.0),
    S(aten.where.ScalarSelf, t(3, 4, dtype=torch.bool), 1.0, t(3, 4)),
    S(aten.triu.default, t(4, 4), 1),
    S(aten.tril.default, t(4, 4)),
    S(aten.arange.default, 5),
    S(aten.arange.start, 2, 7, dtype=torch.float32, device=torch.device("cpu"), pin_memory=False),
    S(aten.arange.start_step, 0, 10, 3),
    S(aten.full.default, [2, 3], 1.5, dtype=torch.float32, layout=torch.strided, device=torch.device("cpu"), pin_memory=False),
    S(aten.zeros.default, [2, 3], dtype=torch.int64),
    S(aten.ones.default, [2, 3]),
    S(aten.zeros_like.default, t(2, 3)),
    S(aten.ones_like.default, t(2, 3), dtype=torch.float64),
    S(aten.full_like.default, t(2, 3), 7),
    S(aten.scalar_tensor.default, 3.0, dtype=torch.float64),
    S(aten.cat.default, [t(2, 3), t(1, 3)]),
    S(aten.cat.default, [t(2, 3), t(2, 1)], 1, why="dim"),
    S(aten.stack.default, [t(2, 3), t(2, 3)], -1),
    S(aten.mm.default, t(2, 3), t(3, 4)),
    S(aten.bmm.default, t(2, 2, 3), t(2, 3, 4)),
    S(aten.addmm.default, t(4), t(2, 3), t(3, 4)),
    S(aten.addmm.default, t(4), t(2, 3), t(3, 4), beta=0.5, alpha=2, why="beta_alpha"),
    S(aten.baddbmm.default, t(2, 2, 4), t(2, 2, 3), t(2, 3, 4), alpha=0.5),
    S(aten.einsum.default, "bij,bjk->bik", [t(2, 2, 3), t(2, 3, 4)]),
    S(aten.einsum.default, "ij,jk,kl->il", [t(2, 3), t(3, 4), t(4, 2)], kept=True, why="order_of_three_is_torch.einsum's"),
    S(aten.linear.default, t(2, 3), t(4, 3), t(4)),
    S(aten.linear.default, t(2, 3), t(4, 3), why="no_bias"),
    S(aten.conv1d.default, t(1, 2, 9), t(4, 2, 3), t(4), [2], [1]),
    S(aten.conv2d.default, t(1, 4, 9, 9), t(8, 2, 3, 3), None, [2, 1], [1, 1], [1, 1], 2),
    S(aten.conv3d.default, t(1, 2, 5, 5, 5), t(4, 2, 3, 3, 3), t(4)),
    S(aten.conv1d.padding, t(1, 2, 9), t(4, 2, 3), t(4), [1], "same"),
    S(aten.conv2d.padding, t(1, 2, 7, 7), t(4, 2, 3, 3), None, [1, 1], "valid", [2, 2]),
    S(aten.conv3d.padding, t(1, 2, 5, 5, 5), t(4, 2, 3, 3, 3), None, [1], "same"),
    S(aten.convolution.default, t(1, 4, 9, 9), t(8, 2, 3, 3), t(8), [2, 1], [1, 1], [1, 1], False, [0, 0], 2),
    S(aten.convolution.default, t(1, 4, 5), t(4, 3, 3), None, [2], [1], [1], True, [1], 1, why="transposed"),
    S(aten.conv_transpose1d.default, t(1, 2, 5), t(2, 3, 3), t(3), [2], [1], [1]),
    S(aten.conv_transpose2d.input, t(1, 4, 5, 5), t(4, 2, 3, 3), None, [2, 2], [1, 1], [1, 1], 2),
    S(aten.conv_transpose3d.input, t(1, 2, 3, 3, 3), t(2, 2, 2, 2, 2)),
    S(aten.batch_norm.default, t(2, 3, 4), t(3), t(3), t(3), t(3).abs(), False, 0.1, 1e-5, False),
    S(aten.batch_norm.default, t(4, 3, 5), t(3), t(3), t(3), t(3).abs(), True, 0.3, 1e-3, False, why="training_updates_stats"),
    S(aten.batch_norm.default, t(1, 3), t(3), t(3), t(3), t(3).abs(), True, 0.1, 1e-5, False, why="training_batch_of_one"),
    S(aten._native_batch_norm_legit_no_training.default, t(2, 3, 4, 4), t(3), t(3), t(3), t(3).abs(), 0.1, 1e-5),
    S(aten.layer_norm.default, t(2, 3, 4), [4], t(4), t(4), 1e-6),
    S(aten.layer_norm.default, t(2, 3, 4), [3, 4], why="no_affine"),
    S(aten.group_norm.default, t(2, 4, 3), 2, t(4), t(4), 1e-5, False),
    S(aten.group_norm.default, t(1, 4), 4, t(4), t(4), 1e-5, False, why="one_value_per_group"),
    S(aten.embedding.default, t(10, 4), t(2, 3, dtype=L, high=10)),
    S(aten.embedding.default, t(10, 4), t(2, 3, dtype=L, high=10), 0, why="padding_idx"),
    S(aten.embedding.default, t(10, 4), t(2, 3, dtype=L, high=10), 12, kept=True, why="padding_idx_not_a_row"),
    S(aten.dropout.default, t(4, 5), 0.3, False),
    S(aten.dropout.default, t(40, 50), 0.3, True, why="training"),
    S(aten.dropout_.default, t(4, 5), 0.3, False),
    S(aten.scaled_dot_product_attention.default, t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8)),
    S(aten.scaled_dot_product_attention.default, t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8), is_causal=True, scale=0.5,
      why="causal_scale"),
    S(aten.scaled_dot_product_attention.default, t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8), t(4, 4, dtype=torch.bool),
      why="mask"),
    S(aten.softmax.int, t(2, 5), -1),
    S(aten.softmax.int, t(2, 5), 0, torch.float64, why="dtype"),
    S(aten._softmax.default, t(2, 5), 1, False),
    S(aten.log_softmax.int, t(2, 5), -1),
    S(aten._log_softmax.default, t(2, 5), 1, False),
    S(aten.gelu.default, t(2, 5)),
    S(aten.gelu.default, t(2, 5), approximate="tanh", why="tanh"),
    S(aten.sigmoid.default, t(2, 5)),
    S(aten.tanh.default, t(2, 5)),
    S(aten.hardtanh.default, t(2, 5), 0.0, 6.0),
    S(aten.hardtanh_.default, t(2, 5), 0.0, 6.0),
    S(aten.hardtanh.default, t(2, 5), 1.0, -1.0, kept=True, why="min_above_max"),
    S(aten.leaky_relu.default, t(2, 5), 0.2),
    S(aten.leaky_relu_.default, t(2, 5)),
    S(aten.elu.default, t(2, 5), 0.5),
    S(aten.elu.default, t(2, 5), 1.0, 2.0, kept=True, why="scale"),
    S(aten.softplus.default, t(2, 5), 2, 10),
    S(aten.prelu.default, t(2, 3, 4), t(3)),
    S(aten.glu.default, t(2, 6)),
    S(aten.max_pool1d.default, t(1, 2, 9), [3], [2]),
    S(aten.max_pool2d.default, t(1, 2, 9, 9), [3, 3], [2, 2], [1, 1]),
    S(aten.max_pool2d.default, t(1, 2, 9, 9), [2, 2], why="stride_is_kernel"),
    S(aten.max_pool2d.default, t(1, 2, 9, 9), [3, 2], [2, 1], [1, 0], [1, 1], True, why="ceil_mode"),
    S(aten.max_pool3d.default, t(1, 2, 5, 5, 5), [2, 2, 2]),
    S(aten.max_pool2d_with_indices.default, t(1, 2, 9, 9), [3, 3], [2, 2]),
    S(aten.avg_pool1d.default, t(1, 2, 9), [3]),
    S(aten.avg_pool1d.default, t(1, 2, 9), [3], [2], (0,), why="default_as_tuple"),
    S(aten.avg_pool2d.default, t(1, 2, 9, 9), [3, 3], [2, 2], [1, 1], False, False),
    S(aten.avg_pool3d.default, t(1, 2, 6, 6, 6), [2, 2, 2], [], [0, 0, 0], False, True, 3),
    S(aten.adaptive_avg_pool1d.default, t(1, 2, 9), [3]),
    S(aten.adaptive_avg_pool2d.default, t(1, 2, 9, 9), [1, 1]),
    S(aten.adaptive_avg_pool2d.default, t(1, 2, 9, 9), [3, 2], why="uneven"),
    S(aten.adaptive_avg_pool3d.default, t(1, 2, 4, 4, 4), [2, 2, 2]),
    S(aten.upsample_nearest2d.vec, t(1, 2, 3, 3), None, [2.0, 2.0]),
    S(aten.upsample_nearest2d.vec, t(1, 2, 3, 3), [5, 7], None, why="size"),
    S(aten.upsample_bilinear2d.vec, t(1, 2, 3, 3), [5, 5], False, None),
    S(aten.upsample_bilinear2d.vec, t(1, 2, 3, 3), None, True, [1.5, 2.0], why="align_corners_scale"),
    S(aten.upsample_nearest1d.vec, t(1, 2, 3), None, [2.0]),
    S(aten.upsample_nearest3d.vec, t(1, 2, 2, 3, 3), [3, 4, 5], None),
    S(aten._upsample_nearest_exact1d.vec, t(1, 2, 3), [5], None),
    S(aten._upsample_nearest_exact2d.vec, t(1, 2, 3, 3), None, [1.5, 2.0]),
    S(aten._upsample_nearest_exact3d.vec, t(1, 2, 2, 3, 3), None, [2.0, 1.5, 2.0]),
    S(aten.upsample_linear1d.vec, t(1, 2, 3), [7], True, None),
    S(aten.upsample_bicubic2d.vec, t(1, 2, 3, 3), None, False, [2.0, 2.0]),
    S(aten.upsample_bicubic2d.vec, t(1, 2, 3, 3), [5, 4], True, None, why="size_align_corners"),
    S(aten.upsample_trilinear3d.vec, t(1, 2, 2, 3, 3), None, False, [2.0, 2.0, 1.5]),
    S(aten._upsample_bilinear2d_aa.vec, t(1, 2, 6, 6), [3, 4], False, None),
    S(aten._upsample_bicubic2d_aa.vec, t(1, 2, 6, 6), None, False, [0.5, 0.5]),
    S(aten.im2col.default, t(1, 2, 5, 5), [2, 2], [1, 1], [0, 0], [1, 1]),
    S(aten.im2col.default, t(1, 2, 6, 6), [3, 2], [1, 2], [1, 0], [2, 1], why="every_setting"),
    S(aten.col2im.default, t(1, 8, 16), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
    S(aten.col2im.default, t(1, 8, 6), [6, 6], [2, 2], [2, 1], [1, 1], [3, 3], why="every_setting"),
    S(aten.pad.default, t(1, 2, 3, 3), [1, 1, 2, 0]),
    S(aten.pad.default, t(1, 2, 3, 3), [1, 1, 1, 1], "reflect", why="reflect"),
    S(aten.constant_pad_nd.default, t(1, 2, 3), [1, 2], 0.5),
    *[S(getattr(aten, name).default, t(2, 5)) for name in _ACTIVATIONS],
    *[S(getattr(aten, f"{name}_").default, t(2, 5)) for name in _ACTIVATIONS],
    *[S(getattr(aten, name).default, t(1, 1).abs() + 0.5 if name in ("item",) else t(3, 4).abs() + 0.5)
      for name in _MATH if name not in ("detach_",)],
    S(aten.detach_.default, t(3, 4)),
]  # fmt: skip


def _graph_module(sample: Sample) -> tuple[fx.GraphModule, list[Any]]:
    """One call of the sample's op on placeholders (one per tensor), returning its value and every input."""
    graph = fx.Graph()
    inputs: list[torch.Tensor] = []

    def place(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            node = graph.placeholder(f"t{len(inputs)}")
            node.meta["val"] = value
            inputs.append(value)
            return node
        return value

    args, kwargs = pytree.tree_map(place, (sample.args, sample.kwargs))
    call = graph.call_function(sample.op, args, kwargs)
    call.meta["val"] = sample.op(*sample.args, **sample.kwargs)
    result: Any = call
    if sample.op in FIRST_OUTPUT_ONLY:
        result = graph.call_function(operator.getitem, (call, 0))
    elif isinstance(call.meta["val"], (list, tuple)):  # indexed, as graphs use a list or tuple result
        result = tuple(graph.call_function(operator.getitem, (call, i)) for i in range(len(call.meta["val"])))
    placeholders = list(graph.find_nodes(op="placeholder"))
    graph.output(((result,) if not (sample.why == "dropped" or sample.kept and "assert" in str(sample.op)) else ()) + tuple(placeholders))
    return fx.GraphModule(nn.Module(), graph), inputs


def _run(gm: fx.GraphModule, inputs: list[torch.Tensor]) -> tuple[Any, list[torch.Tensor]]:
    fresh = [x.clone() for x in inputs]
    torch.manual_seed(0)
    return gm(*fresh), fresh


def _equal(a: Any, b: Any) -> bool:
    leaves_a, spec_a = pytree.tree_flatten(a)
    leaves_b, spec_b = pytree.tree_flatten(b)
    if spec_a != spec_b:
        return False
    for x, y in zip(leaves_a, leaves_b):
        if isinstance(x, torch.Tensor):
            if not isinstance(y, torch.Tensor) or x.dtype != y.dtype or x.shape != y.shape:
                return False
            if not torch.equal(x, y) and not (x.is_floating_point() and bool(((x == y) | (x.isnan() & y.isnan())).all())):
                return False  # NaN where the op gives NaN (a running variance over one value) is equal
        elif type(x) is not type(y) or x != y:
            return False
    return True


def _aliases(outputs: Any, inputs: list[torch.Tensor]) -> list[bool]:
    storages = {x.untyped_storage().data_ptr() for x in inputs}
    return [isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() in storages for x in pytree.tree_leaves(outputs)[: -len(inputs) or None]]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_raised_call_equals_aten_call(sample: Sample) -> None:
    gm, inputs = _graph_module(sample)
    raised = raise_aten(gm)
    expected, expected_inputs = _run(gm, inputs)
    actual, actual_inputs = _run(raised, inputs)
    assert _equal(actual, expected), raised.code
    assert _equal(actual_inputs, expected_inputs), f"inputs mutated differently:\n{raised.code}"
    assert _aliases(actual, actual_inputs) == _aliases(expected, expected_inputs), f"aliasing differs:\n{raised.code}"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_raised_call_is_public_torch(sample: Sample) -> None:
    raised = raise_aten(_graph_module(sample)[0])
    left = [str(n.target) for n in raised.graph.nodes if is_aten(n)]
    assert left == ([str(sample.op)] if sample.kept else []), raised.code


def test_every_table_entry_has_a_sample() -> None:
    sampled = {s.op for s in SAMPLES}
    assert [str(op) for op in SPELLINGS if op not in sampled] == []


def test_graphs_of_higher_order_ops_are_raised() -> None:
    class Branches(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cond(x.sum() > 0, lambda v: v.relu() + 1, lambda v: v - 1, (x,))

    gm = torch.export.export(Branches(), (torch.randn(3),)).module()
    raised = raise_aten(gm)
    graphs = [m for m in raised.modules() if isinstance(m, fx.GraphModule)]
    assert len(graphs) == 3 and not [n for g in graphs for n in g.graph.nodes if is_aten(n)]
    for x in (torch.randn(3), -torch.ones(3), torch.ones(3)):
        assert torch.equal(raised(x), gm(x))


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.why == "default_as_tuple"] + [s for s in SAMPLES if s.why == "no_rounding"], ids=lambda s: s.id)
def test_defaults_are_left_out(sample: Sample) -> None:
    raised = raise_aten(_graph_module(sample)[0])
    assert "padding" not in raised.code and "rounding_mode" not in raised.code, raised.code


@pytest.mark.parametrize("sample", [s for s in SAMPLES if not s.kept], ids=lambda s: s.id)
def test_raised_functions_are_spelled_by_their_public_names(sample: Sample) -> None:
    """`torch.linalg.vector_norm`, not `torch._C._linalg.linalg_vector_norm`: no private module in the way."""
    raised = raise_aten(_graph_module(sample)[0])
    imports = ImportTable(Namespace(set()))
    spelled = [function_reference(n.target, imports, n.name) for n in raised.graph.nodes
               if n.op == "call_function" and n.target.__module__ != "_operator"]  # fmt: skip
    assert not [s for s in spelled if any(part.startswith("_") for part in s.split("."))]


def test_a_rule_that_fails_leaves_the_aten_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(call: object) -> None:
        raise RuntimeError("unforeseen")

    monkeypatch.setitem(SPELLINGS, aten.neg.default, broken)
    raised = raise_aten(_graph_module(S(aten.neg.default, t(2, 3)))[0])
    assert [n.target for n in raised.graph.nodes if is_aten(n)] == [aten.neg.default]


# A device alone is left out: torch.export writes in the dtype it traced with, which the export must not
# (the graph runs with whatever dtype it is given).
TO_OVERLOADS = [s for s in SAMPLES if s.op in (aten.to.dtype, aten.to.device, aten.to.dtype_layout) and s.why not in ("same_dtype_aliases", "device_only")]


@pytest.mark.parametrize("sample", TO_OVERLOADS, ids=lambda s: s.id)
def test_a_to_call_is_spelled_as_the_overload_its_export_records(sample: Sample) -> None:
    """Tensor.to picks its overload by the arguments given: a torch.export of the spelled call records an
    overload that is spelled the same, so an export of the export reads the same (issue 14's fixed point)."""
    raised, inputs = raise_aten(_graph_module(sample)[0]), _graph_module(sample)[1]
    again = raise_aten(torch.export.export(raised, tuple(inputs)).module())
    spelled = _to_calls(raised.code)
    assert spelled and _to_calls(again.code) == spelled, (raised.code, again.code)


def _to_calls(code: str) -> list[str]:
    """The arguments of each `.to(...)` call in the code, its receiver's name left out (`arg0_1.to(...)` and
    `x.to(...)` alike)."""
    return [line.split(".to(", 1)[1].split(";")[0] for line in code.splitlines() if ".to(" in line]


def test_a_to_call_with_a_device_alone_keeps_the_dtype_it_is_given() -> None:
    """`to.dtype_layout` with only a device converts no dtype: traced with float32, run with float64."""
    sample = next(s for s in SAMPLES if s.why == "device_only")
    raised = raise_aten(_graph_module(sample)[0])
    given = torch.randn(3, 4, dtype=torch.float64)
    assert raised(given)[0].dtype == torch.float64, raised.code
