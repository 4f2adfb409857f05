"""packed_inputs.py: a parameter the source unpacks (`cos, sin = position_embeddings`) is one parameter of the
cut-out method, a caller only passing it on takes it whole, and each call passes one value for it: the split
graphs compute what the flat one does."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.source_names import indexed_parameters, starred_parameters
from fxexport.split import split
from fxexport.unpacking import PACKED_ITEMS
from tests import models


def _trace(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return fxexport.trace(model)  # symbolic_trace, each node recording its line: the statements name the inputs


def _export(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return torch.export.export(model, args).module()


PAIR = lambda: (torch.randn(2, 8), torch.randn(2, 8))  # noqa: E731
ONE = lambda: (torch.randn(2, 8),)  # noqa: E731
CASES = [  # (name, model, inputs, {class: its method's parameters, a packed one as `name=(items)`, `?` any other one})
    ("unpacked and passed on whole", models.PassedPairs, PAIR,
     {"LateRotaryAttention": ("hidden_states", "attention_mask", "position_embeddings=(cos, sin)"),
      "LateRotaryLayer": ("hidden_states", "attention_mask", "position_embeddings=(cos, sin)")}),
    ("passed on whole to two children", models.UnpackingLayers, ONE,
     {"UnpackingAttention": ("hidden_states", "position_embeddings=(cos, sin)"),
      "UnpackingLayer": ("?", "position_embeddings=(cos, sin)")}),
    ("an item read by index: not packed there", models.IndexingLayers, ONE,
     {"UnpackingAttention": ("hidden_states", "position_embeddings=(cos, sin)"), "IndexingLayer": ("hidden_states", "?", "?")}),
    ("two of three results passed", models.PartlyPassedTriple, ONE,
     {"RotaryAttention": ("hidden_states", "position_embeddings=(cos, sin)", "attention_mask")}),
    ("a tuple unpacked into its own name", models.TokenStages, lambda: (torch.randn(2, 3, 8, 8),), {"TokenStage": ("x=(x, cls_tokens)",)}),
    ("items read the other way round", models.CountedTokenStages, lambda: (torch.randn(2, 3, 8, 8),), {"CountedTokenStage": ("x=(x, cls_tokens)",)}),
    ("items read in one statement the other way round: names unknown", models.SwappedUses, ONE, {"SwappedUse": ("hidden_states", "x_1", "x_2")}),
    # from a review: a caller passing a tuple display of its items, not its parameter whole, keeps them apart
    # (its parameter would hold them in another order than the source's); one passing another parameter of its
    # own whole takes that one's name; passing on is followed however deep
    ("items passed on the other way round: not packed there", models.SwappingLayers, ONE,
     {"UnpackingAttention": ("hidden_states", "position_embeddings=(cos, sin)"), "SwappingLayer": ("?", "?", "?")}),
    ("passed on under another name", models.RenamingLayers, ONE, {"RenamingLayer": ("hidden_states", "rope=(cos, sin)")}),
    ("passed on five levels deep", models.DeepPassing, ONE,
     {f"PassingLevel{n}": ("hidden_states", "position_embeddings=(cos, sin)") for n in ("", "2", "3", "4", "5")}),
]
PRODUCERS = {"trace": _trace, "export": _export}


def _parameters(placeholder: fx.Node) -> str:
    items = placeholder.meta.get(PACKED_ITEMS)
    return str(placeholder.target) if items is None else f"{placeholder.target}=({', '.join(items)})"


def _methods(root: nn.Module) -> dict[str, set[tuple[str, ...]]]:
    out: dict[str, set[tuple[str, ...]]] = {}
    for module in root.modules():
        if isinstance(module, fx.GraphModule) and module is not root:
            out.setdefault(type(module).__name__.split("_")[0], set()).add(tuple(_parameters(p) for p in module.graph.find_nodes(op="placeholder")))
    return out


@pytest.fixture(scope="module")
def structures() -> dict[tuple[str, str], tuple[fx.GraphModule, fx.GraphModule, tuple[Any, ...]]]:
    out = {}
    for name, model, inputs, _ in CASES:
        for producer, capture in PRODUCERS.items():
            torch.manual_seed(0)
            args = inputs()
            gm = capture(model().eval(), args)
            out[name, producer] = (gm, split(gm).root, args)
    return out


@pytest.mark.parametrize("producer", PRODUCERS)
@pytest.mark.parametrize(("name", "expected"), [(c[0], c[3]) for c in CASES], ids=[c[0] for c in CASES])
def test_a_parameter_the_source_unpacks_is_one_parameter(name: str, expected: dict[str, tuple[str, ...]], producer: str, structures) -> None:
    methods = _methods(structures[name, producer][1])
    found = {cls: {tuple("?" if want == "?" and "=" not in got else got for got, want in zip(params, expected[cls])) for params in methods.get(cls, ())} for cls in expected}
    assert found == {cls: {params} for cls, params in expected.items()}


@pytest.mark.parametrize("producer", PRODUCERS)
@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_the_split_graphs_compute_what_the_flat_one_does(name: str, producer: str, structures) -> None:
    gm, root, args = structures[name, producer]
    expected, got = gm(*args), root(*args)
    assert all(torch.equal(a, b) for a, b in zip(torch.utils._pytree.tree_leaves(expected), torch.utils._pytree.tree_leaves(got), strict=True))


def test_a_packed_parameter_is_unpacked_with_shape_comments_too(tmp_path) -> None:
    """`shapes=True` writes a statement per value, but a parameter's items are still unpacked and named."""
    model = models.UnpackingLayers().eval()
    sources = fxexport.generate(torch.export.export(model, ONE()).module(), package_name="pkg", shapes=True)[1]
    assert "cos, sin = position_embeddings\n" in sources["module.py"]



class _Spreads(nn.Module):
    def forward(self, x, size):
        B, N, C = x.shape
        return x.permute(0, 2, 1).reshape(B, C, *size)


class _SpreadsTwice(nn.Module):
    def forward(self, x, size):
        return torch.cat([x.view(-1, *size), x.view(*size, -1)])


class _AlsoIndexes(nn.Module):
    def forward(self, x, size):
        return x.reshape(-1, *size) * size[0]


class _Rebinds(nn.Module):
    def forward(self, x, size):
        size = (size[1], size[0])
        return x.reshape(-1, *size)


class _TwoStars(nn.Module):
    def forward(self, x, size):
        return torch.broadcast_shapes(*size, *size)


SPREADS = [  # (forward, the parameters it spreads with (called name, arguments before the star, after it))
    (_Spreads, (("size", (("reshape", 2, 0),)),)),
    (_SpreadsTwice, (("size", (("view", 0, 1), ("view", 1, 0))),)),
    (_AlsoIndexes, ()),  # read otherwise too
    (_Rebinds, ()),  # bound anew
    (_TwoStars, ()),  # a call spreading twice: which items go where is not told
]


@pytest.mark.parametrize(("cls", "expected"), SPREADS, ids=[c[0].__name__ for c in SPREADS])
def test_a_parameter_read_only_spread_is_found_with_where_each_call_spreads_it(cls: type[nn.Module], expected: tuple[object, ...]) -> None:
    assert starred_parameters(cls) == expected


@pytest.mark.parametrize("producer", ["recorded calls", "inferred calls"])
def test_a_tuple_passed_whole_to_a_leaf_or_spread_is_one_parameter(producer: str) -> None:
    """timm twins: the block passes its size tuple whole to its leaf attention or to one spreading it; the
    split graphs compute what the flat one does."""
    gm = models.twins_like_blocks(stackless=producer == "inferred calls")
    root = split(gm).root
    x = torch.randn(2, 8, 4, 4)
    assert torch.equal(gm(x), root(x))
    if producer == "recorded calls":
        methods = _methods(root)
        assert methods["TwinsLikeBlock"] == {("x", "size=(H, W)"), ("x",)}  # the last block reads no size
        assert methods["SpreadAttention"] == {("x", "size=(x_1, x_2)"), ("x",)}  # the one that does not reduce reads no size


class _Indexes(nn.Module):
    def forward(self, x, feat_size):
        B, N, C = x.shape
        return x.transpose(1, 2).view(B, C, feat_size[0], feat_size[1])


class _IndexesAndSpreads(nn.Module):
    def forward(self, x, feat_size):
        return x.view(feat_size[0], -1) + x.view(*feat_size)


@pytest.mark.parametrize(
    ("cls", "expected"),
    [(_Indexes, (("feat_size", (("view", 2, 1, 0), ("view", 3, 0, 1))),)), (_IndexesAndSpreads, ()), (_Spreads, ())],
    ids=["indexed", "indexed and spread", "spread"],
)
def test_a_parameter_read_only_by_index_is_found_with_where_each_call_reads_each_item(cls: type[nn.Module], expected: tuple[object, ...]) -> None:
    assert indexed_parameters(cls) == expected
