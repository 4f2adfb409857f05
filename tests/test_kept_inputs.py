"""An input a forward keeps for a residual while a child is applied to it: kept as `shortcut` first (kept_inputs.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from fxexport.kept_inputs import kept_input

KEPT = [
    # (forward, child, the forward with the input kept)
    (("out = self.expand(x)", "out = self.dw(out)", "return out[:, 4:] + x"), "expand",
     ("shortcut = x", "x = self.expand(x)", "x = self.dw(x)", "return x[:, 4:] + shortcut")),
    # the comments quoting the call's source line stay over it; the input bound again after the call is the kept one
    (("y = x.mean()", "# m.py:3 in forward: x = self.expand(x)", "out = self.expand(x)", "x = out[:, :4] + x", "return torch.cat([x, out * y], dim=1)"), "expand",
     ("y = x.mean()", "shortcut = x", "# m.py:3 in forward: x = self.expand(x)", "x = self.expand(x)", "shortcut = x[:, :4] + shortcut",
      "return torch.cat([shortcut, x * y], dim=1)")),
]  # fmt: skip
NOT_KEPT = [
    (("x = self.expand(x)", "return x"), "expand"),  # applied in place already
    (("out = self.expand(x)", "return out"), "expand"),  # the input is not read again
    (("out = x * 2", "out = self.expand(x)", "return out + x"), "expand"),  # the call's name is used before it
    (("shortcut = x * 2", "out = self.expand(x)", "return out + shortcut"), "expand"),  # `shortcut` is taken
    (("out = self.expand(y)", "return out + y"), "expand"),  # not a parameter
    (("out = self.expand(x)", "out = self.expand(out)", "return out + x"), "expand"),  # called twice
    (("out = self.expand(x)", 'print(f"{x}")', "return out + x"), "expand"),  # an f-string's names are not renamed
]  # fmt: skip


@pytest.mark.parametrize(("lines", "child", "kept"), KEPT)
def test_the_input_a_residual_reads_is_kept_and_the_child_applied_in_place(lines, child, kept) -> None:
    assert kept_input(lines, ("x",), child) == kept


@pytest.mark.parametrize(("lines", "child"), [(lines, child) for lines, child, _ in KEPT])
def test_the_forward_with_the_input_kept_computes_what_it_did(lines, child) -> None:
    kept = kept_input(lines, ("x",), child)
    assert kept is not None
    layers = SimpleNamespace(expand=lambda t: t.repeat(1, 2) * 3, dw=lambda t: t.flip(0))
    x = torch.arange(8.0).reshape(2, 4) / 7
    assert torch.equal(_function(kept)(layers, x.clone()), _function(lines)(layers, x.clone()))


@pytest.mark.parametrize(("lines", "child"), NOT_KEPT)
def test_an_input_not_kept_for_later_or_names_in_the_way_leave_the_forward_as_it_is(lines, child) -> None:
    assert kept_input(lines, ("x",), child) is None


def _function(lines: tuple[str, ...]):
    namespace: dict[str, object] = {"torch": torch}
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward(self, x):\n{body}\n", "<kept>", "exec"), namespace)  # the test's own lines
    return namespace["forward"]
