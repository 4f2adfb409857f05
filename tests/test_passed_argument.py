"""An input a module only passes on to a child is named after what the caller's source statement passes for
that child's parameter: `self.attn(h, mask=encoder_mask)` or `self.attn(h, encoder_mask)` names it
`encoder_mask`. Only a call of the child read off `self`, the parameter found where the child's source forward
takes it, and a name not bound before the statement: otherwise the input keeps a name for want of one (`x_1`).
Each case is a layer passing its inputs to an attention (`Attn(hidden, mask)`), captured by torch.export and
by symbolic_trace; asked of the layer's forward."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport


class Attn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(4, 4)

    def forward(self, hidden, mask):
        return self.q(hidden) * mask


class ByKeyword(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attn()

    def forward(self, h, encoder_mask):
        return self.attn(h, mask=encoder_mask)


class ByPosition(ByKeyword):
    def forward(self, h, encoder_mask):
        return self.attn(h, encoder_mask)


def run_scaled(fn, scale, a, b):
    return fn(a, b) * scale


class ThroughAHelper(ByKeyword):
    """The child passed to a helper, which calls it: the helper's arguments are no child's."""

    def forward(self, h, encoder_mask, scale: float = 2.0):
        return run_scaled(self.attn, scale, h, encoder_mask)


def halved(value: float) -> float:
    return value / 2


class Holder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attn()


class ThroughALocal(nn.Module):
    """The child read off a local (`holder.attn`), beside a helper's call: no call of `self.<child>`."""

    def __init__(self) -> None:
        super().__init__()
        self.holders = nn.ModuleList([Holder()])

    def forward(self, h, encoder_mask, scale: float = 2.0):
        for holder in self.holders:
            h = holder.attn(h, mask=encoder_mask) * halved(scale)
        return h


class StarredAttn(Attn):
    def forward(self, hidden, *extra, mask=None):
        return self.q(hidden) * mask + extra[0]


class AfterStarred(nn.Module):
    """The mask reaches the child by `**kwargs`, after its `*extra`: the second positional argument is no mask."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = StarredAttn()

    def forward(self, h, bias, scale: float = 2.0, **kwargs):
        return self.attn(h, scale, **kwargs) + bias


class BoundBefore(ByKeyword):
    """The names swapped before the call, under an `if`: what it passes as `mask` is the layer's `h`."""

    swapped = True

    def forward(self, h, encoder_mask):
        if self.swapped:
            h, encoder_mask = encoder_mask, h
        return self.attn(h * 2, mask=encoder_mask) + h


class Model(nn.Module):
    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x, mask):
        return self.layer(x + 1, mask * 2)


class KwargsModel(Model):
    def forward(self, x, mask):
        return self.layer(x + 1, mask * 2, mask=mask * 3)


CASES = [  # name, layer, the layer's forward as exported
    ("passed_by_keyword", lambda: Model(ByKeyword()), "def forward(self, h, encoder_mask):"),
    ("passed_by_position", lambda: Model(ByPosition()), "def forward(self, h, encoder_mask):"),
    ("passed_through_a_helper", lambda: Model(ThroughAHelper()), "def forward(self, x, x_1):"),
    ("passed_to_a_locals_child", lambda: Model(ThroughALocal()), "def forward(self, x, x_1):"),
    ("passed_after_starred_parameters", lambda: KwargsModel(AfterStarred()), "def forward(self, h, x_1, x_2):"),
    ("bound_before_the_call", lambda: Model(BoundBefore()), "def forward(self, x, x_1):"),
]


def _capture(name: str, model: nn.Module, args: tuple[torch.Tensor, ...]) -> fx.GraphModule:
    return torch.export.export(model, args).module() if name == "export" else fx.symbolic_trace(model)


@pytest.mark.parametrize("producer", ["export", "symbolic_trace"])
@pytest.mark.parametrize(("name", "build", "forward"), CASES, ids=[c[0] for c in CASES])
def test_an_input_passed_on_is_named_after_what_the_call_passes(
    name: str, build: Callable[[], nn.Module], forward: str, producer: str, tmp_path: Path
) -> None:
    model = build().eval()
    args = (torch.randn(2, 4, generator=torch.Generator().manual_seed(0)), torch.randn(2, 4))
    fxexport.export(_capture(producer, model, args), tmp_path / "pkg")
    text = (tmp_path / "pkg" / "module.py").read_text()
    layer = type(model.layer).__name__
    found = re.search(rf"^class {layer}\(.*?^    (def forward\(.*?\):)", text, re.MULTILINE | re.DOTALL)
    assert found is not None and found[1] == forward
