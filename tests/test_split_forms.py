"""A forward's tail written as another forward writes the same computation split further (split_forms.py)."""

from __future__ import annotations

import pytest

from fxexport.split_forms import split_like

# (own, other, own written as other): pvt_v2's keys and values, written whole where `x` is the forward's input and
# split where a child computed it first; the tail takes the split form with its own literals
SPLIT = [
    (
        ("q = self.q(x)", "kv = self.kv(x).reshape(B, -1, 2, 8, 32)", "kv = kv.permute(2, 0, 3, 1, 4)", "k, v = kv.unbind(0)", "return q + k + v"),
        ("x = self.norm(x)", "x = self.kv(x)", "x = x.reshape(B, -1, 2, 5, 32)", "x = x.permute(2, 0, 3, 1, 4)", "k, v = x.unbind(0)", "return q + k + v"),
        ("q = self.q(x)", "x = self.kv(x)", "x = x.reshape(B, -1, 2, 8, 32)", "x = x.permute(2, 0, 3, 1, 4)", "k, v = x.unbind(0)", "return q + k + v"),
    ),
]
KEPT = [
    # other values
    (("return self.b(self.a(x))",), ("y = self.a(x)", "return self.b(x)")),
    # literals the split form holds in another order: not written back
    (("return f(3, g(4))",), ("y = g(4)", "return f(3, y)")),
    # the other forward no longer
    (("x = self.a(x)", "return self.b(x)"), ("return self.b(self.a(x))",)),
    # the split form deletes a value only the other forward binds (dpn68's `x_s`, of a child the other side has)
    (("x = self.a(x)", "return self.b(x)"), ("x_s = self.w(x)", "del x_s", "x = self.a(x)", "return self.b(x)")),
    # the split form deletes a value the own forward deleted already (edgenext's `drop_path`, deleted before the optional `pos_embd`'s lines)
    (("p = self.p(x)", "x = x + p", "del p", "d = self.d(x)", "out = x + d", "del d", "return self.b(out)"), ("d = self.d(x)", "out = x + d", "del d", "return self.b(out)")),
    (("d = self.d(x)", "out = x + d", "del d", "return self.b(out)"), ("d = self.d(x)", "out = x + d", "del d", "return self.b(out)")),
    (("d = self.d(x)", "with torch.no_grad():", "    out = x + d", "    del d", "return self.b(out)"), ("d = self.d(x)", "with torch.no_grad():", "    out = x + d", "    del d", "del d", "return self.b(out)")),
    # a tail in a block: no canonical form
    (("if c:", "    return self.b(self.a(x))"), ("if c:", "    y = self.a(x)", "    return self.b(y)")),
]


@pytest.mark.parametrize(("own", "other", "written"), SPLIT)
def test_a_tail_computing_the_same_takes_the_split_form_with_its_own_literals(own, other, written) -> None:
    assert split_like(own, other) == written


@pytest.mark.parametrize(("own", "other"), KEPT)
def test_a_tail_computing_otherwise_or_not_split_further_is_kept(own, other) -> None:
    assert split_like(own, other) == own
