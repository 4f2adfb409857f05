"""GraphModules from every producer: torch.export, unflatten, make_fx, dynamo, symbolic_trace variants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import fx, nn
from torch.export import Dim

from fxexport.examples import TransformerBlock
from tests.models import OffsetBlocks, ResNetLike


class Mixed(nn.Module):
    """Keyword and default inputs, a dict input, nested outputs, a constant and a non-persistent buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("offset", torch.full((4,), 0.5), persistent=False)
        self.register_buffer("running", torch.zeros(4))

    def forward(self, x, extra, *, scale=2.0):
        y = self.lin(x) * scale + self.offset + torch.tensor([1.0, 2.0, 3.0, 4.0])
        return {"y": y, "rest": (extra["a"].sum(), [x.relu(), self.running + 1])}


class Branch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(4, 4)
        self.down = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.up(t).relu(), lambda t: self.down(t) - 1, (x,))


class Loop(nn.Module):
    def forward(self, x):
        def cond(i, acc):
            return i < 3

        def body(i, acc):
            return i + 1, acc * 2 + 1

        return torch._higher_order_ops.while_loop(cond, body, (torch.tensor(0), x))[1]


class Scoped(nn.Module):
    """Activation checkpointing, no_grad and autocast regions: wrap higher-order ops under torch.export."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        y = checkpoint(lambda t: self.a(t).relu(), x, use_reentrant=False)
        with torch.no_grad():
            z = self.b(y)
        with torch.autocast("cpu", enabled=False):
            w = z * 2
        return w + y


class VmapMask(nn.Module):
    """A mask made by vmap over tensor indexing, as transformers 4's `sdpa_mask` makes it: torch.export holds
    constants that are not tensors (the indexing's TreeSpecs) and reads them by get_attr."""

    def forward(self, x, idx):
        from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

        with TransformGetItemToIndex():
            return torch.vmap(torch.vmap(lambda i, j: x[i, j], in_dims=(None, 0)), in_dims=(0, None))(idx, idx)


class VmapMasked(nn.Module):
    """The mask read inside a child's call (a layer restored around it) and an autocast region (inlined)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.mask = VmapMask()

    def forward(self, x, idx):
        with torch.autocast("cpu", enabled=False):
            y = self.lin(x.float()).cos()
        return y, self.mask(y, idx)


class Shapes(nn.Module):
    def forward(self, x):
        return (x * x.shape[0]).reshape(x.shape[0] * x.shape[1], -1).sum(0) / x.shape[1]


class Dynamic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        batch, tokens = x.shape[0], x.shape[1]
        return self.proj(x).reshape(batch * tokens, 6).softmax(-1).view(batch, tokens * 6)


class Flagged(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, use_relu: bool = True, bias=None):
        y = self.lin(x)
        return y.relu() if use_relu else y


class DropoutHead(nn.Module):
    """Its only mode-dependent layer is a stateless Dropout, which the GraphModule of an export does not hold."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc(x).relu())


@dataclass(frozen=True)
class Producer:
    name: str
    build: Callable[[], fx.GraphModule]
    args: Callable[[], tuple[Any, ...]]
    kwargs: Callable[[], dict[str, Any]] = field(default=dict)
    other_sizes: tuple[Callable[[], tuple[Any, ...]], ...] = ()


def _seeded(cls: type[nn.Module]) -> nn.Module:
    torch.manual_seed(0)
    return cls().eval()


def _x(*shape: int, seed: int = 1) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def exported(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], kwargs: Callable[[], dict[str, Any]] = dict, dynamic: Any = None) -> Callable[[], fx.GraphModule]:
    return lambda: torch.export.export(_seeded(cls), args(), kwargs(), dynamic_shapes=dynamic).module()


def decomposed(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], kwargs: Callable[[], dict[str, Any]] = dict) -> Callable[[], fx.GraphModule]:
    """torch.export's graph decomposed to core ATen (`run_decompositions()`), as ExecuTorch and compilers take it."""
    return lambda: torch.export.export(_seeded(cls), args(), kwargs()).run_decompositions().module()


def make_fx_graph(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], mode: str = "real") -> Callable[[], fx.GraphModule]:
    from torch.fx.experimental.proxy_tensor import make_fx

    def build() -> fx.GraphModule:
        module = _seeded(cls)
        return make_fx(lambda *a: module(*a), tracing_mode=mode)(*args())

    return build


class Dynamo:
    """The GraphModule torch.compile hands to a custom backend, and the inputs it passed."""

    def __init__(self, cls: type[nn.Module], args: Callable[[], tuple[Any, ...]]) -> None:
        self.cls, self.model_args = cls, args
        self.example_inputs: tuple[Any, ...] = ()

    def build(self) -> fx.GraphModule:
        import torch._dynamo

        captured: list[fx.GraphModule] = []

        def backend(gm: fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
            captured.append(gm)
            self.example_inputs = tuple(example_inputs)
            return gm.forward

        torch._dynamo.reset()
        torch.compile(_seeded(self.cls), backend=backend, dynamic=False)(*self.model_args())
        return captured[0]

    def args(self) -> tuple[Any, ...]:
        return tuple(t.detach().clone() if isinstance(t, torch.Tensor) else t for t in self.example_inputs)


def dynamo(name: str, cls: type[nn.Module], args: Callable[[], tuple[Any, ...]]) -> Producer:
    """On torch 2.13 dynamo passes parameters and buffers as graph inputs (named L_self_...)."""
    capture = Dynamo(cls, args)
    return Producer(name, capture.build, capture.args)


def concrete(cls: type[nn.Module], concrete_args: dict[str, Any]) -> Callable[[], fx.GraphModule]:
    return lambda: fx.symbolic_trace(_seeded(cls), concrete_args=concrete_args)


MIXED_ARGS = lambda: (_x(2, 4), {"a": _x(3, seed=2)})  # noqa: E731


def _vmap_args() -> tuple[torch.Tensor, ...]:
    return (_x(4, 3), torch.tensor([2, 0, 1]))
DYNAMIC_SHAPES = ({0: Dim("batch", min=1, max=16), 1: Dim("tokens", min=2, max=32)},)
PRODUCERS = [
    Producer("export_mixed", exported(Mixed, MIXED_ARGS, lambda: {"scale": 2.0}), MIXED_ARGS, lambda: {"scale": 2.0}),
    Producer("export_transformer", exported(TransformerBlock, lambda: (_x(2, 5, 32),)), lambda: (_x(2, 5, 32),)),
    Producer("export_resnet", exported(ResNetLike, lambda: (_x(2, 3, 8, 8),)), lambda: (_x(2, 3, 8, 8),)),
    Producer("export_dropout", exported(DropoutHead, lambda: (_x(2, 4),)), lambda: (_x(2, 4),)),
    Producer("export_cond", exported(Branch, lambda: (_x(3, 4),)), lambda: (_x(3, 4),), other_sizes=(lambda: (-_x(3, 4).abs(),),)),
    Producer("export_scoped_regions", exported(Scoped, lambda: (_x(2, 4),)), lambda: (_x(2, 4),)),
    Producer("export_while_loop", exported(Loop, lambda: (_x(3),)), lambda: (_x(3),)),
    Producer("export_vmap_index", exported(VmapMasked, _vmap_args), _vmap_args),
    Producer(
        "export_dynamic",
        exported(Dynamic, lambda: (_x(2, 3, 6),), dynamic=DYNAMIC_SHAPES),
        lambda: (_x(2, 3, 6),),
        other_sizes=(lambda: (_x(5, 7, 6, seed=3),), lambda: (_x(1, 2, 6, seed=4),)),
    ),
    Producer("decomposed_mixed", decomposed(Mixed, MIXED_ARGS, lambda: {"scale": 2.0}), MIXED_ARGS, lambda: {"scale": 2.0}),
    Producer("decomposed_transformer", decomposed(TransformerBlock, lambda: (_x(2, 5, 32),)), lambda: (_x(2, 5, 32),)),
    Producer("decomposed_resnet", decomposed(ResNetLike, lambda: (_x(2, 3, 8, 8),)), lambda: (_x(2, 3, 8, 8),)),
    Producer("make_fx_mlp", make_fx_graph(Mixed, MIXED_ARGS), MIXED_ARGS),
    Producer("make_fx_cond", make_fx_graph(Branch, lambda: (_x(3, 4),)), lambda: (_x(3, 4),)),
    Producer("make_fx_transformer", make_fx_graph(TransformerBlock, lambda: (_x(2, 5, 32),)), lambda: (_x(2, 5, 32),)),
    Producer(
        "make_fx_symbolic",
        make_fx_graph(Shapes, lambda: (_x(2, 3, 6),), mode="symbolic"),
        lambda: (_x(2, 3, 6),),
        other_sizes=(lambda: (_x(4, 5, 6, seed=3),), lambda: (_x(7, 2, 9, seed=4),)),
    ),
    dynamo("dynamo_mixed", Mixed, MIXED_ARGS),
    dynamo("dynamo_transformer", TransformerBlock, lambda: (_x(2, 5, 32),)),
    dynamo("dynamo_dynamic", Dynamic, lambda: (_x(2, 3, 6),)),
    dynamo("dynamo_cond", Branch, lambda: (_x(3, 4),)),
    dynamo("dynamo_resnet", ResNetLike, lambda: (_x(2, 3, 8, 8),)),  # nested calls recorded from `L['self']`
    Producer("concrete_args", concrete(Flagged, {"use_relu": False, "bias": None}), lambda: (_x(2, 3), False)),
    Producer("concrete_transformer", concrete(TransformerBlock, {}), lambda: (_x(2, 5, 32),)),
    Producer("concrete_relu", concrete(Flagged, {"use_relu": True}), lambda: (_x(2, 3), True)),
]


class Outer(nn.Module):
    """A hierarchy for torch.export.unflatten to restore."""

    def __init__(self) -> None:
        super().__init__()
        self.block = TransformerBlock()
        self.head = nn.Linear(32, 3)

    def forward(self, x, *, scale=1.0):
        return {"out": self.head(self.block(x)) * scale}


def unflattened(cls: type[nn.Module], args: Callable[[], tuple[Any, ...]], kwargs: Callable[[], dict[str, Any]] = dict) -> Callable[[], Any]:
    return lambda: torch.export.unflatten(torch.export.export(_seeded(cls), args(), kwargs()))


UNFLATTENED = [
    Producer("unflatten_outer", unflattened(Outer, lambda: (_x(2, 5, 32),), lambda: {"scale": 1.0}), lambda: (_x(2, 5, 32),), lambda: {"scale": 1.0}),
    Producer("unflatten_mixed", unflattened(Mixed, MIXED_ARGS, lambda: {"scale": 2.0}), MIXED_ARGS, lambda: {"scale": 2.0}),
    Producer("unflatten_cond", unflattened(Branch, lambda: (_x(3, 4),)), lambda: (_x(3, 4),)),
    # a ModuleList: unflatten holds its blocks in a module it never calls, with an empty graph
    Producer("unflatten_list", unflattened(OffsetBlocks, lambda: (_x(2, 4),)), lambda: (_x(2, 4),)),
]
PRODUCERS += UNFLATTENED

DYNAMIC_INPUTS = {"args": (_x(2, 3, 6),)}
