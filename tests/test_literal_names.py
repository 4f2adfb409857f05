"""Names for forward literals read from the source line the statement quotes, or from the source
class's forward where no line is quoted (literal_names.py)."""

from __future__ import annotations

import pytest

from fxexport.code_slots import number_slots
from fxexport.literal_names import column_name, literal_names

_QKV = "# m.py:3 in forward: qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)"
CASES = [
    # (forward, the name of each literal)
    ((_QKV, "qkv = self.qkv(x).reshape(1, 17, 3, 4, 16).permute(2, 0, 3, 1, 4)"),
     [None, None, None, "num_heads", "head_dim", None, None, None, None, None]),
    # a local of a descriptive name; a single letter says no more than `value` (but a dimension the forward
    # unpacks from a shape: LETTER_CASES); a keyword keeps its own name
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
    # items and slices, comparisons, an item of a descriptive name, the receiver of a method
    (("# m.py:5 in forward: x_s1 = x_s[:, :self.num_1x1_c]", "x_s1 = x_s[:, :64]"), ["num_1x1_c"]),
    (("# m.py:5 in forward: x = x[:, ::self.stride, 1:]", "x = x[:, ::2, 1:]"), ["stride", None]),
    (("# m.py:5 in forward: torch._assert(n == self.num_patches, 'size')", "torch._assert(n == 196, 'size')"), ["num_patches"]),
    (("# m.py:5 in forward: x = x.view(B, C, feat_size[0], feat_size[1])", "x = x.view(1, 64, 8, 8)"), [None, None, "feat_size_0", "feat_size_1"]),
    (("# m.py:5 in forward: x = x.view(self.window_size[0], n[i], sizes[-1])", "x = x.view(7, 5, 3)"), ["window_size_0", None, "sizes"]),
    (("# m.py:5 in forward: x = x[:, :self.keep].view(-1, self.groups)", "x = x[:, :8].view(-1, 4)"), ["keep", None, "groups"]),
    (("# m.py:5 in forward: x = x[:, :self.keep].view(-1, self.groups)", "x = x[:, :8].reshape(-1, 4)"), [None, None, None]),
    (("# m.py:5 in forward: y = x[:, :self.keep].shape", "y = x[:, :8].shape"), ["keep"]),
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


_IMAGE = """def forward(self, x):
    B, C, H, W = x.size()
    x = x.reshape(B, C, H * W)
    return x.view(B, C, H, W)
"""
_REBOUND = """def forward(self, x):
    B, C, H, W = x.shape
    H = self.heads
    return x.reshape(B, -1, H, W)
"""
_TWICE = """def forward(self, x, q):
    B, C, H, W = x.shape
    B, H, N, D = q.shape
    return x.reshape(B, H, N, D)
"""
_HEADS = """def forward(self, q):
    B, H, N, D = q.shape
    L = N
    return q.transpose(1, 2).reshape(B, N, H * D)
"""
LETTER_CASES = [
    # (forward lines, the source forward, the name of each literal): a capital the forward unpacks from a
    # shape is named by convention; height and width only where one unpacking has both (H of heads is not)
    (("# m.py:4 in forward: return x.view(B, C, H, W)", "return x.view(2, 64, 7, 7)"), _IMAGE, ["batch_size", "channels", "height", "width"]),
    # not where no line is quoted (symbolic_trace): the forward's one call of that name may be another
    # statement's, and a re-trace of the export, which unpacks no shape, could not name it again
    (("return x.view(2, 64, 7, 7)",), _IMAGE, [None, None, None, None]),
    (("# m.py:4 in forward: return q.transpose(1, 2).reshape(B, N, H * D)", "return q.transpose(1, 2).reshape(2, 9, 64)"),
     _HEADS, [None, None, "batch_size", "num_tokens", None]),
    (("# m.py:4 in forward: y = q.view(L, H, D)", "y = q.view(9, 4, 16)"), _HEADS, [None, None, None]),  # L is not unpacked
    (("# m.py:9 in _attn: return x.view(B, C, H, W)", "return x.view(2, 64, 7, 7)"), _IMAGE, [None, None, None, None]),  # not forward's
    (("# m.py:4 in forward: return x.view(B, C, H, W)", "return x.view(2, 64, 7, 7)"), "", [None, None, None, None]),
    # a letter bound otherwise too, or meaning another dimension in a second unpacking: no convention (review)
    (("# m.py:4 in forward: return x.reshape(B, -1, H, W)", "return x.reshape(2, -1, 4, 7)"), _REBOUND, ["batch_size", None, None, "width"]),
    (("# m.py:4 in forward: return x.reshape(B, H, N, D)", "return x.reshape(2, 4, 9, 16)"), _TWICE, ["batch_size", None, "num_tokens", None]),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "source", "names"), LETTER_CASES)
def test_a_dimension_the_forward_unpacks_is_named_by_convention(lines, source, names) -> None:
    assert len(number_slots(lines, nested=True)) == len(names)
    assert literal_names(lines, source) == names


@pytest.mark.parametrize(
    ("names", "name"),
    [
        ([None, "channels", "num_tokens"], "channels"),  # the first the source passes
        ([None, None], None),
        (["height", None, "width"], "resolution"),  # a square map's side, not `height` for its width too
        (["height", "channels"], "height"),
        (["channels", "height", "width"], "channels"),  # not a resolution: channels too
        (["height", "width", "hw"], "resolution"),  # another name, not a dimension
        (["feat_size_0", None, "feat_size_1"], "feat_size"),  # the items of one name
        (["feat_size_0", "feat_size_0"], "feat_size_0"),
        (["stage_1", "width"], "stage_1"),
    ],
)
def test_a_column_takes_the_first_name_a_square_side_is_a_resolution_items_their_name(names, name) -> None:
    assert column_name(names) == name
