"""Names for forward literals read from the source line the statement quotes (literal_names.py)."""

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
    (("# m.py:5 in forward: x = x.view(a, heads) + y.view(b, heads)", "x = x.view(1, 4) + y.view(2, 4)"), [None, None, None, None]),
    # a statement in a block under the quote (the `if` line's literals are compared as they are); comments quoting nothing
    (("# m.py:7 in forward: y = x.repeat(1, n_repeats)", "if x.sum() > 0:", "    y = x.repeat(1, 3)", "# a comment 12"),
     [None, "n_repeats"]),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "names"), CASES)
def test_a_literal_takes_the_name_the_source_passes_in_its_place(lines, names) -> None:
    assert len(number_slots(lines, nested=True)) == len(names)
    assert literal_names(lines) == names
