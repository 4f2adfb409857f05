"""How a forward's values become statements: values written inside their user, indexing composed,
`del` only where memory is freed. Each case is exported, imported and run against its source:
the code must read as said and give the same bits (random draws included)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.indexing import compose
from tests.packages import imported


class Chain(nn.Module):
    """Reshapes a person writes as one chain of methods."""

    def forward(self, x):
        b = x.shape[0]
        y = x.view(b, 4, -1)
        y = y.transpose(1, 2)
        return y.softmax(-1)


class Draws(nn.Module):
    """Two random draws, the second written first in the sum: writing both inside it would swap them."""

    def forward(self, x):
        a = torch.rand_like(x)
        b = torch.rand_like(x)
        return b - a


class Layers(nn.Module):
    """Layer calls stay statements of their own in a traced graph (no source lines to follow)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class OneLine(nn.Module):
    """A torch.export graph keeps its source lines: one line of the source, one statement."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = x + self.fc(self.norm(x))
        return x * 2


class Mask(nn.Module):
    """`mask[a:b, c:d] = n`: torch.export slices twice and fills with a lifted 0-d tensor."""

    def forward(self, x):
        mask = x.new_zeros((4, 4))
        mask[:2, 2:] = 3
        mask[2:, :2] = 1.5
        return x + mask


class Views(nn.Module):
    """Views of a value that lives on: a `del` of a view alone frees nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(5, 5) for _ in range(8))

    def forward(self, x):
        y = x * 2
        first, second = y.unbind(0)
        z = self.layers[0](first)
        w = self.layers[1](second)
        for layer in self.layers[2:]:
            z = layer(z) + w
        return z


class TupleAttention(nn.Module):
    """Returns its output and its weights, as transformers' attention does."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        weights = x.softmax(-1)
        return self.proj(x * weights), weights


class DecoderLayer(nn.Module):
    """transformers' decoder layer: one item of the attention's result kept (`attn_output, _ = ...`), the input
    kept as `residual` first and that name bound again once the input is read no more."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = TupleAttention()
        self.fc = nn.Linear(8, 8)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.norm(hidden_states)
        attn_output, _ = self.attn(hidden_states)
        residual = residual + attn_output
        mlp_output = self.fc(residual)
        return residual + mlp_output


class Stacked(nn.Module):
    """Two instances of a layer applied in turn: the layer is a class of its own in the export."""

    def __init__(self, layer: Callable[[], nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList([layer(), layer()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class AliasReadLayer(nn.Module):
    """helper-80's case: the source keeps a value under `residual` at once in a branch not run, and the lines
    run bind `residual` again from its earlier value: keeping the input under it first would overwrite that."""

    def __init__(self, pre: bool = False) -> None:
        super().__init__()
        self.pre = pre
        self.pre_norm = nn.LayerNorm(8)
        self.post_attention_layernorm = nn.LayerNorm(8)
        self.mlp = nn.Linear(8, 8)

    def forward(self, hidden_states):
        residual = self.pre_norm(hidden_states)
        hidden_states = hidden_states + 1
        if self.pre:
            residual = hidden_states
            hidden_states = self.post_attention_layernorm(hidden_states)
        out = self.post_attention_layernorm(hidden_states)
        out = self.mlp(out)
        residual = residual + hidden_states + out
        return residual * 2


class ThreeTerms(nn.Module):
    """A sum of values read last, returned: no `del` could free them, so the sum is one line, as written."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        a = self.fc1(x)
        b = self.fc2(x)
        return a + b + x


class DistilledHeads(nn.Module):
    """timm's distilled heads, whose pair the first head's value cannot take the input's name of: the call
    is named after the child (`head`), not after the op torch.export cut it at (`linear_4`)."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(8, 4)
        self.head_dist = nn.Linear(8, 4)

    def forward(self, x):
        x, x_dist = self.head(x), self.head_dist(x)
        return (x + x_dist) / 2


def _trace(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> fx.GraphModule:
    return fx.symbolic_trace(model)


def _export(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> fx.GraphModule:
    return torch.export.export(model, inputs).module()


@dataclass
class Case:
    name: str
    model: Callable[[], nn.Module]
    inputs: tuple[torch.Tensor, ...]
    capture: Callable[[nn.Module, tuple[torch.Tensor, ...]], fx.GraphModule]
    has: tuple[str, ...] = ()  # lines (stripped) the forward must have
    lacks: tuple[str, ...] = ()  # text the module must not have (regular expressions)
    matches: tuple[str, ...] = ()  # text the module must have (regular expressions)
    in_class: str = "FxModule"  # the class whose forward `has` reads


CASES = [
    Case("chain", Chain, (torch.randn(2, 8, 3),), _trace, has=("x = x.view(x.shape[0], 4, -1).transpose(1, 2)", "return x.softmax(-1)")),
    Case("draws_keep_their_order", Draws, (torch.randn(3, 3),), _trace,
         has=("rand_like = torch.rand_like(x)", "return torch.rand_like(x) - rand_like"),
         lacks=(r"torch\.rand_like\(x\) - torch\.rand_like",)),
    Case("layer_calls_are_statements", Layers, (torch.randn(2, 8),), _trace,
         has=("x = self.fc1(x)", "x = torch.relu(x)", "return self.fc2(x)")),
    Case("one_source_line_one_statement", OneLine, (torch.randn(2, 8),), _export,
         has=("x = x + self.fc(self.norm(x))", "return x * 2")),
    Case("fill_with_the_number", Mask, (torch.randn(4, 4),), _export,
         has=("mask[:2, 2:].fill_(3.0)", "mask[2:, :2].fill_(1.5)"), lacks=(r"lifted_tensor", r"\]\[")),
    Case("del_where_memory_dies", Views, (torch.randn(2, 5),), _trace,
         matches=(r"self\.layers\[1\]\(.*\)\n +del [\w, ]*\bunbind\b",), lacks=(r"\n +del (?![\w, ]*\bunbind\b)",)),
    Case("kept_item_and_alias_as_in_the_source", lambda: Stacked(DecoderLayer), (torch.randn(2, 8),), _export,
         has=("residual = hidden_states", "hidden_states = self.norm(hidden_states)", "attn_output = self.attn(hidden_states)",
              "residual = residual + attn_output"), in_class="DecoderLayer"),
    Case("returned_sum_of_values_read_last", ThreeTerms, (torch.randn(2, 8),), _export, has=("return a + b + x",)),
    Case("alias_bound_from_its_earlier_value", lambda: Stacked(AliasReadLayer), (torch.randn(2, 8),), _export, in_class="AliasReadLayer",
         has=("residual = self.pre_norm(hidden_states)", "return residual * 2")),
    Case("child_call_named_after_the_child", DistilledHeads, (torch.randn(2, 8),), _export, has=("head = self.head(x)",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_statements_read_as_written_and_give_the_same_bits(case: Case, tmp_path: Path) -> None:
    torch.manual_seed(0)
    source = case.model().eval()
    gm = case.capture(source, case.inputs)
    folder = tmp_path / f"pkg_{case.name}"
    fxexport.export(gm, folder)
    text = (folder / "module.py").read_text()
    forward = [line.strip() for line in text.split(f"class {case.in_class}(")[1].split("def forward")[1].split("\nclass ")[0].splitlines()]
    assert [line for line in case.has if line not in forward] == [], text
    assert [pattern for pattern in case.lacks if re.search(pattern, text)] == [], text
    assert [pattern for pattern in case.matches if not re.search(pattern, text)] == [], text
    with imported(folder) as package:
        model = package.FxModule()
        torch.manual_seed(1)
        expected = gm(*case.inputs)
        torch.manual_seed(1)
        got = model(*case.inputs)
    assert torch.equal(got, expected)


@pytest.mark.parametrize(
    "first, second, merged",
    [
        ((slice(1, None),), (slice(None), slice(2, None)), (slice(1, None), slice(2, None))),
        (0, (slice(None), 1), (0, slice(None), 1)),
        ((Ellipsis, 1), slice(None, 2), (slice(None, 2), slice(None), 1)),
        (
            (slice(None), slice(None, None, 2)),
            (slice(None), slice(None), slice(None, None, 2)),
            (slice(None), slice(None, None, 2), slice(None, None, 2)),
        ),
        (slice(1, None), slice(2, None), None),  # a slice of a slice: not one slice as written
        ((slice(None), None), 0, None),  # a new axis: not composed
    ],
)
def test_two_indexings_compose_into_the_same_view(first: object, second: object, merged: object) -> None:
    x = torch.arange(4 * 5 * 6).reshape(4, 5, 6)
    assert compose(first, second, x.dim()) == merged
    if merged is not None:
        one, two = x[merged], x[first][second]
        assert (one.storage_offset(), one.shape, one.stride()) == (two.storage_offset(), two.shape, two.stride())
