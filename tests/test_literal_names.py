"""Names for forward literals read from the source line the statement quotes, or from the source
class's forward where no line is quoted (literal_names.py)."""

from __future__ import annotations

import pytest

from fxexport.code_slots import number_slots
from fxexport.literal_names import literal_names

_QKV = "# m.py:3 in forward: qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)"
CASES = [
    # (forward, the name of each literal)
    ((_QKV, "qkv = self.qkv(x).reshape(1, 17, 3, 4, 16).permute(2, 0, 3, 1, 4)"),
     [None, None, None, "num_heads", "head_dim", None, None, None, None, None]),
    # a local of a descriptive name; a single letter says no more than `value`; a keyword keeps its own name
    (("# m.py:5 in forward: x = x.view(batch, window_size, -1).sum(dim=d)", "x = x.view(1, 7, -1).sum(dim=2)"), ["batch", "window_size", None, None]),
    (("# m.py:5 in forward: x = x.reshape(B, C, H, W)", "x = x.reshape(1, 64, 7, 7)"), [None, None, None, None]),
    # no quoted line, or two calls of the method with as many arguments: which is which is not known
    (("x = x.reshape(1, 64)",), [None, None]),
    (("# m.py:5 in forward: x = torch.add(x.view(a, heads), y.view(b, heads))", "x = x.view(1, 4) + y.view(2, 4)"), [None, None, None, None]),
    # ... unless the statement has the quoted one's shape: each side of the operator is the other's
    (("# m.py:5 in forward: x = x.view(a, heads) + y.view(b, heads)", "x = x.view(1, 4) + y.view(2, 4)"), [None, "heads", None, "heads"]),
    # an operand (`q * self.scale`), a function's argument, an item of a tuple argument; an attribute of one letter
    (("# m.py:5 in forward: q = q * self.scale", "q = q * 0.125"), ["scale"]),
    (("# m.py:5 in forward: return drop(x, self.p, self.mode)", "return drop(x, 0.1, 'row')"), ["p"]),
    (("# m.py:5 in forward: x = F.pad(x, (0, self.pad_w, 0, pad_h))", "x = F.pad(x, (0, 3, 0, 2))"), [None, "pad_w", None, "pad_h"]),
    # torch.export's method where the source called torch's function on the tensor (`torch.split(x, ...)`)
    (("# m.py:5 in forward: x_split = torch.split(x, self.splits, 1)", "x_split = x.split(4, dim=1)"), ["splits", None]),
    (("# m.py:5 in forward: y = torch.flatten(x, self.start)", "y = x.flatten(1)"), ["start"]),
    (("# m.py:5 in forward: y = torch.flatten(x, self.start)", "y = x.view(1)"), [None]),  # another name
    # a literal where the source computes a value, or the operands the other way round
    (("# m.py:5 in forward: q = q * (self.dim ** -0.5)", "q = q * 0.125"), [None]),
    (("# m.py:5 in forward: q = self.scale * q", "q = q * 0.125"), [None]),
    # a statement in a block under the quote (the `if` line's literals are compared as they are); comments quoting nothing
    (("# m.py:7 in forward: y = x.repeat(1, n_repeats)", "if x.sum() > 0:", "    y = x.repeat(1, 3)", "# a comment 12"),
     [None, "n_repeats"]),
]  # fmt: skip


_FORWARD = """def forward(self, x):
    x = self.block(x)
    x = x.view(x.shape[0], self.groups, -1)
    y = x.view(-1, self.other).view(self.rows, -1)
    return stochastic_depth(x, self.p, self.mode, self.training) + y
"""
SOURCE_CASES = [
    # (forward lines, none quoting a source line; the name of each literal, read from the source class's forward)
    # the one call of a function with as many arguments: symbolic_trace records no source lines
    (("return stochastic_depth(x, 0.1, 'row', False)",), ["p"]),
    # the one call of `view` with three arguments; two with two: which is which is not known
    (("x = x.view(2, 4, -1)", "return x.view(-1, 8)"), [None, "groups", None, None, None]),
    # the source passes more arguments by position: the trace passes its last ones by keyword
    (("return stochastic_depth(x, 0.1, mode='row', training=False)",), ["p"]),
    # a statement that quotes its line is named from that line first; what it leaves, from the forward
    (("# m.py:5 in forward: return stochastic_depth(x, rate, 'row', False)", "return stochastic_depth(x, 0.1, 'row', False)"), ["rate"]),
    (("# m.py:5 in forward: y = self.block(x) * self.scale", "y = self.block(x) * 0.5", "return stochastic_depth(y, 0.1, 'row', False)"),
     ["scale", "p"]),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "names"), CASES)
def test_a_literal_takes_the_name_the_source_passes_in_its_place(lines, names) -> None:
    assert len(number_slots(lines, nested=True)) == len(names)
    assert literal_names(lines) == names


@pytest.mark.parametrize(("lines", "names"), SOURCE_CASES)
def test_a_literal_no_line_quotes_takes_its_name_from_the_source_forward(lines, names) -> None:
    assert len(number_slots(lines, nested=True)) == len(names)
    assert literal_names(lines, _FORWARD) == names
    assert literal_names(lines) == [n if lines[0].startswith("#") and i == 0 else None for i, n in enumerate(names)]
