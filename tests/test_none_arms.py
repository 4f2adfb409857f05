"""A branch on an attribute some instances set to None, whose arms differ only in passing it or None (none_arms.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from fxexport.none_arms import none_arms_joined

RETURNED = ("if self.bias is not None:", "    return F.linear(x, self.weight, self.bias)", "return F.linear(x, self.weight, None)")
JOINED = [
    # (forward, as joined)
    (RETURNED, ("return F.linear(x, self.weight, self.bias)",)),
    # an `else:` arm, then more lines
    (("if self.bias is not None:", "    y = F.linear(x, self.weight, self.bias)", "else:", "    y = F.linear(x, self.weight, None)", "return y.relu()"),
     ("y = F.linear(x, self.weight, self.bias)", "return y.relu()")),
    # the other arm leaves out the keyword passing it, which the function defaults to None
    (("if self.bias is not None:", "    return F.layer_norm(x, (4,), weight=self.weight, bias=self.bias)", "return F.layer_norm(x, (4,), weight=self.weight)"),
     ("return F.layer_norm(x, (4,), weight=self.weight, bias=self.bias)",)),
    # nested in a block, several lines, a note kept as it is
    (("x = x * 2", "if self.training:", "    if self.bias is not None:", "        # m.py:3 in forward: y = F.linear(x, self.weight, self.bias)",
      "        y = F.linear(x, self.weight, self.bias)", "        return y + 1", "    # m.py:3 in forward: y = F.linear(x, self.weight, self.bias)",
      "    y = F.linear(x, self.weight, None)", "    return y + 1", "return x"),
     ("x = x * 2", "if self.training:", "    # m.py:3 in forward: y = F.linear(x, self.weight, self.bias)", "    y = F.linear(x, self.weight, self.bias)",
      "    return y + 1", "return x")),
]  # fmt: skip
KEPT = [
    # the other arm does more than pass None
    ("if self.bias is not None:", "    return F.linear(x, self.weight, self.bias)", "return F.linear(x, self.weight, None) * 2"),
    # the attribute read for more than itself: `None.shape` is no value
    ("if self.bias is not None:", "    return x + self.bias.shape[0]", "return x + None.shape[0]"),
    # the first arm does not return, and there is no `else:`
    ("if self.bias is not None:", "    x = F.linear(x, self.weight, self.bias)", "x = F.linear(x, self.weight, None)", "return x"),
    # lines after the other arm's return in its block
    (*RETURNED, "return x"),
    # a keyword left out whose default is not None (`F.dropout`'s `p` is 0.5), or of a function not torch's
    ("if self.p is not None:", "    return F.dropout(x, p=self.p)", "return F.dropout(x)"),
    ("if self.bias is not None:", "    return helper(x, bias=self.bias)", "return helper(x)"),
    # another attribute
    ("if self.bias is not None:", "    return F.linear(x, self.weight, self.shift)", "return F.linear(x, self.weight, None)"),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "joined"), JOINED)
def test_a_branch_passing_the_attribute_or_none_is_its_first_arm(lines, joined) -> None:
    assert none_arms_joined(lines) == joined


@pytest.mark.parametrize("lines", KEPT)
def test_arms_that_differ_otherwise_are_kept(lines) -> None:
    assert none_arms_joined(lines) == lines


@pytest.mark.parametrize(("lines", "joined"), JOINED)
def test_the_joined_forward_computes_what_the_branch_did_with_and_without_the_attribute(lines, joined) -> None:
    x = torch.arange(8.0).reshape(2, 4) / 7
    for bias in (torch.ones(3), None):
        for training in (True, False):
            module = SimpleNamespace(weight=torch.arange(12.0).reshape(3, 4) / 11, bias=bias, training=training)
            if "layer_norm" in lines[1]:
                module.weight, module.bias = torch.arange(4.0) / 3, None if bias is None else torch.ones(4)
            assert torch.equal(_function(joined)(module, x), _function(lines)(module, x))


def _function(lines: tuple[str, ...]):
    namespace = {"F": F}
    exec("def forward(self, x):\n" + "".join(f"    {line}\n" for line in lines), namespace)
    return namespace["forward"]
