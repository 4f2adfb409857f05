"""A small stand-in for a model library (torchvision, timm, transformers): the patterns their code uses.

The regression tests export models built from this module, then load them in a process where
`tests.library` cannot be imported, as a user without the library would.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
from types import FunctionType

import torch
import torch.nn.functional as F
from torch import Tensor, fx, nn

_logger = logging.getLogger(__name__)
EPSILON = 1e-5
SCALES = [1.0, 0.5]  # a mutable module constant: one object, shared by every call


class LibraryConfig:
    """A library type that only annotations mention."""


def _log_usage(fn: FunctionType) -> None:
    """A helper that needs a stdlib name imported with `from types import ...` and a logger."""
    if not isinstance(fn, FunctionType):
        _logger.warning("not a function")


def _norm(x: Tensor, eps: float = EPSILON) -> Tensor:
    # a comment the copy may drop
    variance: Tensor = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(variance + eps) * SCALES[0]


@fx.wrap
def scaled_norm(x: Tensor, scale: float | Tensor | None = None, config: LibraryConfig | None = None) -> tuple[Tensor, int]:
    """A wrapped library function: annotations, defaults, helpers and globals the export must carry."""
    _log_usage(scaled_norm)
    y = _norm(x)
    if scale is not None:
        y = y * scale
    return y * math.sqrt(2.0), x.shape[-1]


def gate(x: Tensor, *, bias: float = 0.5) -> Tensor:
    """A library function a hand-built graph calls (not wrapped)."""
    return F.gelu(x) + bias


torch.fx.wrap("gate")

PairOutputs = collections.namedtuple("PairOutputs", ["logits", "aux"])


@dataclasses.dataclass
class ModelOutput(collections.OrderedDict):
    """Like transformers' ModelOutput: a dict-like dataclass, a pytree node keyed by its non-None fields."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        torch.utils._pytree.register_pytree_node(
            cls, lambda o: (list(o.values()), list(o.keys())), lambda values, keys: cls(**dict(zip(keys, values)))
        )

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is not None:
                self[field.name] = getattr(self, field.name)

    def __getitem__(self, key):
        return super().__getitem__(key) if isinstance(key, str) else tuple(self.values())[key]


@dataclasses.dataclass
class EncoderOutput(ModelOutput):
    last_hidden_state: Tensor | None = None
    hidden_states: tuple[Tensor, ...] | None = None
    pooled: Tensor | None = None


@dataclasses.dataclass
class Detections:
    """A plain dataclass, registered as a pytree node with `register_dataclass`."""

    boxes: Tensor
    scores: Tensor
    labels: Tensor | None = None


torch.utils._pytree.register_dataclass(Detections)


class Block(nn.Module):
    """A library layer: in-place ops, an inplace activation, eval-mode dropout and batch norm, attribute reads."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.act = nn.ReLU(inplace=True)
        self.drop = nn.Dropout(0.5)
        self.norm = nn.BatchNorm1d(width)
        self.gain = 0.5  # a plain attribute the forward reads
        self.register_buffer("steps", torch.tensor(3))
        self.register_buffer("mask", torch.tensor([True, False] * (width // 2)))

    def forward(self, x: Tensor) -> Tensor:
        y = self.act(self.proj(x))
        y += 1.0
        y.mul_(self.gain)
        y = F.relu(y, inplace=True)
        y = self.norm(self.drop(y)) * self.steps
        return torch.where(self.mask, y, x) + self.proj.weight.shape[0]


class Classifier(nn.Module):
    """A root returning a namedtuple while training, whose layers are all in eval mode (as GoogLeNet's aux heads do)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = Block(4)
        self.head = nn.Linear(4, 3)
        self.aux = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> PairOutputs:
        normed = scaled_norm(self.block(x), 2.0)
        y, width = normed[0], normed[1]
        return PairOutputs(self.head(y) * width, self.aux(y))


class Encoder(nn.Module):
    """Returns a ModelOutput-like dict dataclass with a None field (as transformers' models do)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.embed._is_hf_initialized = True  # a flag the library sets on a torch layer (as transformers 4 does)
        self.block = Block(4)
        self.pool = nn.Linear(4, 4)

    def forward(self, ids: Tensor) -> EncoderOutput:
        h = self.embed(ids)
        h = self.block(h.reshape(-1, 4)).reshape(h.shape)
        return EncoderOutput(last_hidden_state=h, pooled=torch.tanh(self.pool(h[:, 0])))


class Detector(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.box = nn.Linear(4, 4)
        self.score = nn.Linear(4, 1)

    def forward(self, x: Tensor) -> Detections:
        return Detections(boxes=self.box(x), scores=self.score(x).sigmoid().squeeze(-1))


class Strided(nn.Module):
    """Non-contiguous and shared-storage weights, integer and boolean buffers."""

    def __init__(self) -> None:
        super().__init__()
        base = torch.randn(4, 6)
        self.transposed = nn.Parameter(base.t())  # a view of `base`, not contiguous
        self.first = nn.Parameter(base[:2])  # shares storage with `transposed`
        self.register_buffer("every_other", torch.arange(12).reshape(3, 4)[:, ::2])  # int64, strided
        self.register_buffer("flags", torch.tensor([[True, False, True]]).t())

    def forward(self, x: Tensor) -> Tensor:
        y = x @ self.transposed @ self.first[:, :4].t()
        return y * self.every_other.sum() + self.flags.sum()


class Scale(nn.Module):
    """A library layer that only copied code calls."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.full((1,), 2.0))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.weight


class WindowBase(nn.Module):
    PAD = 0.0  # a class constant the copy keeps

    @staticmethod
    def pad_to(length: int, window: int) -> int:
        return (window - length % window) % window


class Windowed(WindowBase):
    """Data-dependent Python in forward, so torch.fx cannot trace it: module.py copies the class instead."""

    def __init__(self, width: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.proj = nn.Linear(width, width)
        self.scale = Scale()

    @property
    def span(self) -> int:
        return self.window * 2

    def forward(self, x: Tensor) -> Tensor:
        if x.abs().sum() > 0:
            x = self.proj(x)
        pad = super().pad_to(x.shape[-1], self.span)
        return self.scale(F.pad(x, (0, pad), value=self.PAD))


class WindowedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Windowed(4, 3)
        self.head = nn.Linear(6, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.inner(x))


def spec_graph() -> fx.GraphModule:
    """TreeSpec constants, as torch.export leaves for flat_apply: one JSON-serialisable, one holding a function."""
    from torch._higher_order_ops.flat_apply import func_to_graphable

    root = nn.Module()
    root.fn_spec = func_to_graphable(F.relu)[1]
    root.args_spec = torch.utils._pytree.tree_flatten(((torch.zeros(1),), {}))[1]
    graph = fx.Graph()
    x = graph.placeholder("x")
    call = graph.call_function(torch.ops.higher_order.flat_apply, (graph.get_attr("fn_spec"), graph.get_attr("args_spec"), x))
    graph.output(call)
    return fx.GraphModule(root, graph)
