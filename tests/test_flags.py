"""Two forwards of one class as one: the flag's name says what its side adds, and the branches keep
each side's lines exactly, the shared ones written once."""

from __future__ import annotations

import random
import re
import types
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import fx

from fxexport.code_slots import rename_variables
from fxexport.flags import LITERAL, branched, few_lines_apart, flag_name, member_forwards, same_code
from fxexport.generalize import _forward_parameters, generalize
from fxexport.ir import ClassIR
from fxexport.loops import _same_arguments
from fxexport.regions import regions_joined

NAMES = [
    # (plain forward, flagged forward, parameters, flag name)
    (("return self.conv(x)",), ("conv = self.conv(x)", "return x + conv"), ("x",), "residual"),
    (("return self.block(x)",), ("block = self.block(x)", "return block.add_(x)"), ("x",), "residual"),
    (("return self.block(x)",), ("out = self.block(x)", "out += x", "return out"), ("x",), "residual"),
    (("return self.block(x)",), ("return x.add_(self.block(x))",), ("x",), "residual"),
    (("return self.attn(x)",), ("x = torch.roll(x, 3)", "return self.attn(x)"), ("x",), "use_roll"),
    (("return self.attn(x)",), ("return self.attn(x) + y",), ("x", "y"), "residual"),  # any forward input
    (("return self.attn(x)",), ("return self.attn(x) + xs",), ("x",), "variant"),  # xs is no input
    (("for layer in self.a:", "    x = layer(x)", "return x"), ("for layer in self.b:", "    x = layer(x)", "return x"),
     ("x",), "variant"),  # a loop variable says nothing
    # an input kept under another name (kept_inputs.py) is the input; a name bound to it once it is another value is not
    (("return self.block(x)",), ("shortcut = x", "x = self.block(x)", "return x + shortcut"), ("x",), "residual"),
    (("return self.block(x)",), ("x = self.a(x)", "shortcut = x", "return self.block(x) + shortcut"), ("x",), "use_a"),
    (("return self.block(x)",), ("for x in self.xs:", "    pass", "shortcut = x", "return self.block(x) + shortcut"), ("x",), "variant"),
    # a word before a bracket in a string is no call (timm maxvit's "height ({}) must be divisible by window (2)")
    (("m = 'height {}'.format(x)", "return self.a(x)"), ("m = 'height ({}) of window (2)'.format(x)", "return self.a(x)"), ("x",), "variant"),
    (("m = 'a'", "return self.a(x)"), ('m = "it\\"s (" + str(x)', "return self.a(x)"), ("x",), "use_str"),
]


@pytest.mark.parametrize(("plain", "flagged", "params", "name"), NAMES)
def test_the_flag_is_named_after_what_its_side_adds(plain, flagged, params, name) -> None:
    assert flag_name(plain, flagged, params) == name


BRANCHES = [
    # the flagged side returns: no else; the call both make once, bound to the flagged side's name
    (("return self.conv(x)",), ("conv = self.conv(x)", "return x + conv"),
     ("conv = self.conv(x)", "if self.f:", "    return x + conv", "return conv")),
    (("return self.conv(x)",), ("return x + self.conv(x)",), ("if self.f:", "    return x + self.conv(x)", "return self.conv(x)")),
    # shared first and last lines once
    (("x = self.a(x)", "x = x * 2", "return self.b(x)"), ("x = self.a(x)", "x = x + 1", "return self.b(x)"),
     ("x = self.a(x)", "if self.f:", "    x = x + 1", "else:", "    x = x * 2", "return self.b(x)")),
    # only the plain side has lines of its own
    (("x = self.a(x)", "x = x * 2", "return x"), ("x = self.a(x)", "return x"),
     ("x = self.a(x)", "if not self.f:", "    x = x * 2", "return x")),
    # only the flagged side has lines of its own
    (("x = self.a(x)", "return x"), ("x = self.a(x)", "x = x * 2", "return x"),
     ("x = self.a(x)", "if self.f:", "    x = x * 2", "return x")),
    # the same code: no branch at all
    (("return x",), ("return x",), ("return x",)),
    # the same code from two source lines: the comments differ, the code does not
    (("# m.py:8 in forward: z = f(y)", "return self.a(x)"), ("# m.py:10 in forward: z = f(y)", "return self.a(x)"),
     ("# m.py:8 in forward: z = f(y)", "return self.a(x)")),
    # a side whose own lines are only a comment has none
    (("# m.py:8", "return x"), ("# m.py:9", "x = x * 2", "return x"), ("if self.f:", "    # m.py:9", "    x = x * 2", "return x")),
    # a loop and its body are one statement: never split between the shared lines and a branch
    (("for layer in self.a:", "    x = layer(x)", "return x * y"), ("for layer in self.a:", "    x = layer(x, y)", "return x"),
     ("if self.f:", "    for layer in self.a:", "        x = layer(x, y)", "    return x",
      "for layer in self.a:", "    x = layer(x)", "return x * y")),
    (("for layer in self.a:", "    x = layer(x)", "return x"), ("x = x * 2", "for layer in self.a:", "    x = layer(x)", "return x"),
     ("if self.f:", "    x = x * 2", "for layer in self.a:", "    x = layer(x)", "return x")),
    # last statements that differ only in the names of locals: the flagged side takes the plain side's names
    (("chunk = x.chunk(2)", "out = chunk[0]", "size = out.size()", "getitem_2 = size[0]", "return out.view(getitem_2, dim=1)"),
     ("out = self.b(x)", "size = out.size()", "getitem = size[0]", "return out.view(getitem, dim=1)"),
     ("if self.f:", "    out = self.b(x)", "else:", "    chunk = x.chunk(2)", "    out = chunk[0]",
      "size = out.size()", "getitem_2 = size[0]", "return out.view(getitem_2, dim=1)")),
    # ... and where the flagged side rebinds its input instead: named as the plain side's local from there on
    (("out, out_1 = x.chunk(2)", "out = torch.cat([out, self.b(out_1)])", "out = out.view(4)", "return out.sum()"),
     ("x = torch.cat([self.a(x), self.b(x)])", "x = x.view(4)", "return x.sum()"),
     ("if self.f:", "    out = torch.cat([self.a(x), self.b(x)])", "else:", "    out, out_1 = x.chunk(2)",
      "    out = torch.cat([out, self.b(out_1)])", "out = out.view(4)", "return out.sum()")),
    # ... not where the plain side's name is one the flagged side uses for something else
    (("a = x * 2", "b = a + 1", "return b"), ("b = x * 3", "a = b - 1", "return a"),
     ("if self.f:", "    b = x * 3", "    a = b - 1", "    return a", "a = x * 2", "b = a + 1", "return b")),
    # the same code but for the names of locals: no branch, the plain side's lines
    (("out = self.a(x)", "return out * 2"), ("y = self.a(x)", "return y * 2"), ("out = self.a(x)", "return out * 2")),
    # ... nor a parameter, which keeps its name
    (("y = x * 2", "return y + x"), ("x = x * 3", "return x + x"),
     ("if self.f:", "    x = x * 3", "    return x + x", "y = x * 2", "return y + x")),
    # a parameter the plain side rebinds where the flagged side binds a local: named as that local from
    # there on, and its returned call bound to the flagged side's name (timm's shortcut blocks)
    (("x = self.a(x)", "x = self.b(x)", "return self.c(x)"), ("out = self.a(x)", "out = self.b(out)", "out = self.c(out)", "return out + x"),
     ("out = self.a(x)", "out = self.b(out)", "out = self.c(out)", "if self.f:", "    return out + x", "return out")),
    # ... with the flagged side's comment on the source line of the call it binds
    (("# m.py:1", "x = self.a(x)", "return self.c(x)"), ("# m.py:1", "out = self.a(x)", "# m.py:2", "out = self.c(out)", "return out + x"),
     ("# m.py:1", "out = self.a(x)", "# m.py:2", "out = self.c(out)", "if self.f:", "    return out + x", "return out")),
    # ... not onto a name the plain side uses for something else
    (("x = self.a(x)", "out = x * 2", "return out + 1"), ("out = self.a(x)", "return out + x"),
     ("if self.f:", "    out = self.a(x)", "    return out + x", "x = self.a(x)", "out = x * 2", "return out + 1")),
    # a value the flagged side alone binds, where the plain side reads the input, named as that input once
    # nothing reads the input (timm's NormFreeBlock: `shortcut = self.downsample(out)`): one line its own
    (("out = self.a(x)", "out = self.b(out)", "return out + x"),
     ("out = self.a(x)", "shortcut = self.d(out)", "out = self.b(out)", "return out + shortcut"),
     ("out = self.a(x)", "if self.f:", "    x = self.d(out)", "out = self.b(out)", "return out + x")),
    # ... also where the flagged side rebinds the input after it and chains another name before (timm's
    # PreActBasic: `x_preact = self.norm1(x)`, `x = self.conv1(x_preact)`): the rebound input takes the plain
    # side's name for that chain, which names only its first value as the flagged side does
    (("out = self.a(x)", "out = self.b(out)", "return out + x"),
     ("x_pre = self.a(x)", "shortcut = self.d(x_pre)", "x = self.b(x_pre)", "return x + shortcut"),
     ("x_pre = self.a(x)", "if self.f:", "    x = self.d(x_pre)", "out = self.b(x_pre)", "return out + x")),
    # ... not while the input is still read
    (("out = self.a(x)", "out = self.b(out) + x", "return out + x"),
     ("out = self.a(x)", "shortcut = self.d(out)", "out = self.b(out) + x", "return out + shortcut"),
     ("out = self.a(x)", "if self.f:", "    shortcut = self.d(out)", "    out = self.b(out) + x", "    return out + shortcut",
      "out = self.b(out) + x", "return out + x")),
    # ... nor a value bound twice
    (("out = self.a(x)", "out = self.b(out)", "return out + x"),
     ("out = self.a(x)", "s = self.d(out)", "s = s + 1", "out = self.b(out)", "return out + s"),
     ("out = self.a(x)", "if self.f:", "    s = self.d(out)", "    s = s + 1", "    out = self.b(out)", "    return out + s",
      "out = self.b(out)", "return out + x")),
]  # fmt: skip


@pytest.mark.parametrize(("plain", "flagged", "lines"), BRANCHES)
def test_branches_keep_each_sides_lines_and_share_the_common_ones(plain, flagged, lines) -> None:
    assert branched(plain, flagged, "self.f", "not self.f", ("x",)) == lines
    namespace: dict[str, object] = {}
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward(self, x):\n{body}\n", "<branched>", "exec"), namespace)  # it is Python


# Straight-line forwards whose sides differ in several places (torchvision's shifted windows): each
# place its own `if`, the flagged side's locals named as the plain side's where their statements match.
_SHIFT_PLAIN = ("x = self.qkv(x)", "q, k = x.chunk(2, dim=-1)", "x = q @ k", "x = x * 0.5", "x = x.softmax(dim=-1)",
                "x = self.proj(x)", "x = x.transpose(0, 1)", "return x.sigmoid()")
_SHIFT_FLAGGED = ("x = x.roll(1, dims=0)", "out = self.qkv(x)", "q, k = out.chunk(2, dim=-1)", "out = q @ k", "out = out * 0.5",
                  "mask = x.new_ones(4, 4)", "mask = mask.tril()", "mask = mask * -100.0", "out = out + mask", "out = out.softmax(dim=-1)",
                  "out = self.proj(out)", "out = out.transpose(0, 1)", "out = out.sigmoid()", "return out.roll(-1, dims=0)")
_PARTITION_PLAIN = ("x = x * 1.5", "m = 'height ({}) must be divisible by window (2)'.format(x.shape[1])", "x = x + len(m) / 100",
                    "x = x.view(2, 2, 2, 2).permute(0, 1, 3, 2)", "x = x.reshape(4, 4)", "x = self.qkv(x)", "x = x * 2", "x = x + 1",
                    "x = x.relu()", "x = x.reshape(2, 2, 2, 4)", "x = x.permute(0, 1, 3, 2)", "x = x.reshape(4, 8)", "x = self.proj(x)",
                    "return x.sigmoid()")
_PARTITION_FLAGGED = tuple(line.replace("x.permute(0, 1, 3, 2)", "x.permute(0, 2, 1, 3)").replace("2).permute(0, 1, 3, 2)", "2).permute(0, 2, 1, 3)")
                           .replace("'height ({}) must be divisible by window (2)'", "'height {} must be divisible by grid 2'") for line in _PARTITION_PLAIN)
REGIONS = [
    # (plain, flagged, the joined forward)
    (_SHIFT_PLAIN, _SHIFT_FLAGGED,
     ("if self.f:", "    x = x.roll(1, dims=0)", "out = self.qkv(x)", "q, k = out.chunk(2, dim=-1)", "out = q @ k", "out = out * 0.5",
      "if self.f:", "    mask = x.new_ones(4, 4)", "    mask = mask.tril()", "    mask = mask * -100.0", "    out = out + mask",
      "out = out.softmax(dim=-1)", "out = self.proj(out)", "out = out.transpose(0, 1)", "out = out.sigmoid()",
      "if self.f:", "    return out.roll(-1, dims=0)", "return out")),
    # each side its own lines in the same places (timm maxvit's window and grid partitions): `if` and `else` in each
    (_PARTITION_PLAIN, _PARTITION_FLAGGED,
     ("x = x * 1.5", "if self.f:", "    m = 'height {} must be divisible by grid 2'.format(x.shape[1])", "else:",
      "    m = 'height ({}) must be divisible by window (2)'.format(x.shape[1])", "x = x + len(m) / 100",
      "if self.f:", "    x = x.view(2, 2, 2, 2).permute(0, 2, 1, 3)", "else:", "    x = x.view(2, 2, 2, 2).permute(0, 1, 3, 2)",
      "x = x.reshape(4, 4)", "x = self.qkv(x)", "x = x * 2", "x = x + 1", "x = x.relu()", "x = x.reshape(2, 2, 2, 4)",
      "if self.f:", "    x = x.permute(0, 2, 1, 3)", "else:", "    x = x.permute(0, 1, 3, 2)", "x = x.reshape(4, 8)", "x = self.proj(x)",
      "return x.sigmoid()")),
    # ... but not where it saves fewer lines than it has places after the first (three places, a line saved)
    (("a = x * 2", "b = a + 1", "c = b * 3", "return c"),
     ("a = x * 2", "a = a.exp()", "b = a + 1", "b = b.exp()", "c = b * 3", "c = c.exp()", "return c"),
     ("a = x * 2", "if self.f:", "    a = a.exp()", "    b = a + 1", "    b = b.exp()", "    c = b * 3", "    c = c.exp()", "else:",
      "    b = a + 1", "    c = b * 3", "return c")),
    # a note one side ends its own lines with (its source's line for the shared statement after them) goes after the branch
    (("a = x * 2", "b = a.view(8, 2)", "c = b.relu()", "d = c + 1", "e = d * 2", "f = e - 1",
      "f = f * 3", "f = f + 2", "f = f.exp()", "f = f - 4", "g = f.view(4, 4)", "return g.sigmoid()"),
     ("a = x * 2", "b = a.view(2, 8)", "# m.py:5 in forward: c = b.relu()  # as the source", "c = b.relu()", "d = c + 1", "e = d * 2", "f = e - 1",
      "f = f * 3", "f = f + 2", "f = f.exp()", "f = f - 4", "g = f.view(16)", "return g.sigmoid()"),
     ("a = x * 2", "if self.f:", "    b = a.view(2, 8)", "else:", "    b = a.view(8, 2)", "# m.py:5 in forward: c = b.relu()  # as the source",
      "c = b.relu()", "d = c + 1", "e = d * 2", "f = e - 1", "f = f * 3", "f = f + 2", "f = f.exp()", "f = f - 4", "if self.f:",
      "    g = f.view(16)", "else:", "    g = f.view(4, 4)", "return g.sigmoid()")),
    # sides of few lines of their own, apart in two places: branching in each is shorter than one `if` holding the lines between twice
    (("a = x * 2", "b = a + 1", "c = b * 3", "c = c - 1", "c = c.exp()", "d = c - 1", "return d"),
     ("a = x * 2", "b = a - 1", "c = b * 3", "c = c - 1", "c = c.exp()", "d = c - 1", "return d.relu()"),
     ("a = x * 2", "if self.f:", "    b = a - 1", "else:", "    b = a + 1", "c = b * 3", "c = c - 1", "c = c.exp()", "d = c - 1",
      "if self.f:", "    return d.relu()", "return d")),
    # a `del` of values the plain side holds unread is run by both sides: no `if` for it
    (("a = x * 2", "b = a + 1", "c = b * b", "d = c - 1", "e = d * 3", "return e"),
     ("x = x.roll(1, dims=0)", "a = x * 2", "b = a + 1", "del x", "c = b * b", "del a", "d = c - 1", "e = d * 3", "return e.roll(-1, dims=0)"),
     ("if self.f:", "    x = x.roll(1, dims=0)", "a = x * 2", "b = a + 1", "del x", "c = b * b", "del a", "d = c - 1", "e = d * 3",
      "if self.f:", "    return e.roll(-1, dims=0)", "return e")),
    # an optional child applied in place (in_place_children.py) is one statement both sides run; the input kept for a residual
    (("if self.qkv is not None:", "    x = self.qkv(x)", "x = x * 2", "x = self.proj(x)", "return x"),
     ("shortcut = x", "if self.qkv is not None:", "    x = self.qkv(x)", "x = x * 2", "x = self.proj(x)", "return x + shortcut.repeat(1, 2)"),
     ("if self.f:", "    shortcut = x", "if self.qkv is not None:", "    x = self.qkv(x)", "x = x * 2", "x = self.proj(x)",
      "if self.f:", "    return x + shortcut.repeat(1, 2)", "return x")),
]  # fmt: skip
NOT_REGIONS = [
    # a statement both run after notes quoting two source lines (torch.export): the sources wrote it twice, its text matched by chance
    (("a = x * 2", "b = a.view(8, 2)", "# m.py:3 in forward: c = b.relu()", "c = b.relu()", "d = c + 1", "e = d * 2", "f = e - 1",
      "f = f * 3", "f = f + 2", "f = f.exp()", "f = f - 4", "g = f.view(4, 4)", "return g.sigmoid()"),
     ("a = x * 2", "b = a.view(2, 8)", "# m.py:5 in forward: c = b.relu()", "c = b.relu()", "d = c + 1", "e = d * 2", "f = e - 1",
      "f = f * 3", "f = f + 2", "f = f.exp()", "f = f - 4", "g = f.view(16)", "return g.sigmoid()")),
    # each side its own lines in three places, more than the lines both run
    (_PARTITION_PLAIN[:4] + ("return x",), ("x = x * 1.5", "x = x * 3", "x = x.relu()", "x = x + 1", "x = x.view(4, 4)", "x = x.exp()", "return x")),
    # one place apart: the one `if` of branched
    (("x = self.a(x)", "return x"), ("x = self.a(x)", "x = x * 2", "return x")),
    # not straight-line code: a loop
    (_SHIFT_PLAIN, ("for layer in self.layers:", "    x = layer(x)", *_SHIFT_FLAGGED)),
    # more lines of their own than lines both run
    (("a = x * 2", "return a"), ("x = x.roll(1, dims=0)", "a = x * 3", "b = a * a", "c = b - a", "return c.roll(-1, dims=0)")),
    # a place apart would hold an optional child's `if` without its body
    (("x = x * 2", "if self.qkv is not None:", "    x = self.qkv(x)", "x = x + 1", "x = x * 5", "return x"),
     ("x = x.roll(1, dims=0)", "x = x * 2", "if self.proj is not None:", "    x = self.qkv(x)", "x = x + 1", "x = x * 5", "return x.roll(-1, dims=0)")),
    # a block's body that is no child applied in place
    (("if self.qkv is not None:", "    y = self.qkv(x)", "x = x * 2", "x = self.proj(x)", "return x"),
     ("shortcut = x", "if self.qkv is not None:", "    y = self.qkv(x)", "x = x * 2", "x = self.proj(x)", "return x + shortcut")),
]  # fmt: skip


@pytest.mark.parametrize(("plain", "flagged", "lines"), REGIONS)
def test_sides_apart_in_several_places_branch_in_each(plain, flagged, lines) -> None:
    assert branched(plain, flagged, "self.f", "not self.f", ("x",), regions=True) == lines
    assert few_lines_apart(plain, flagged, ("x",), regions=True)


@pytest.mark.parametrize(("plain", "flagged", "lines"), REGIONS)
def test_each_side_of_a_forward_branching_in_several_places_computes_its_own(plain, flagged, lines) -> None:
    joined, x = _function(lines, "self"), torch.arange(16.0).reshape(4, 4) / 7
    layers = SimpleNamespace(qkv=lambda t: t.repeat(1, 2), proj=lambda t: t * 3)
    for on, side in ((True, flagged), (False, plain)):
        assert torch.equal(joined(SimpleNamespace(f=on, **vars(layers)), x.clone()), _function(side, "self")(layers, x.clone()))


@pytest.mark.parametrize(("plain", "flagged"), NOT_REGIONS)
def test_sides_apart_in_one_place_or_not_straight_line_code_do_not_branch_in_several(plain, flagged) -> None:
    assert branched(plain, flagged, "self.f", "not self.f", ("x",), regions=True) == branched(plain, flagged, "self.f", "not self.f", ("x",))


def test_a_name_one_side_binds_and_the_other_reads_as_a_global_stays_a_global() -> None:
    """One forward would make it a local of both sides: the side binding it binds another name."""
    plain, flagged = ("scale = x * 2", *_SHIFT_PLAIN), (*_SHIFT_FLAGGED[:4], "out = out * scale", *_SHIFT_FLAGGED[4:])
    lines = branched(plain, flagged, "self.f", "not self.f", ("x",), regions=True)
    assert not any(line.strip().startswith("scale =") for line in lines)
    joined, x = _function(lines, "self", scale=3.0), torch.arange(16.0).reshape(4, 4) / 7
    layers = SimpleNamespace(qkv=lambda t: t.repeat(1, 2), proj=lambda t: t * 3)
    for on, side in ((True, flagged), (False, plain)):
        assert torch.equal(joined(SimpleNamespace(f=on, **vars(layers)), x.clone()), _function(side, "self", scale=3.0)(layers, x.clone()))


def _function(lines: tuple[str, ...], owner: str, **names: Any) -> Any:
    namespace: dict[str, Any] = dict(names)
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward({owner}, x):\n{body}\n", "<joined>", "exec"), namespace)
    return namespace["forward"]


# Forwards of two sides, each side one code but for its literals (a stage's width), and what each
# becomes: its side's lines with its own literals, the other side's with that side's first forward's.
_PLAIN = ("a, b = x.chunk(2, dim=1)", "out = torch.cat((a, self.b2(b)), dim=1)", "return out.view(-1, 2, {w})")
_FLAGGED = ("out = torch.cat((self.b1(x), self.b2(x)), dim=1)", "out = out * {s}", "return out.view(-1, 2, {w})")
_HEAD = ("if self.b1 is not None:", "    out = torch.cat((self.b1(x), self.b2(x)), dim=1)", "    out = out * {s}", "else:",
         "    a, b = x.chunk(2, dim=1)", "    out = torch.cat((a, self.b2(b)), dim=1)", "return out.view(-1, 2, {w})")
MEMBERS = [
    # (forwards, flagged, each one's part of the branched forward)
    ([_PLAIN, _FLAGGED, _PLAIN, _FLAGGED], [False, True, False, True],
     [{"w": 4, "s": 0.5}, {"w": 4, "s": 0.5}, {"w": 8, "s": 0.5}, {"w": 8, "s": -1.5}]),
    ([_FLAGGED, _PLAIN, _PLAIN], [True, False, False], [{"w": 2, "s": 3}, {"w": 16, "s": 3}, {"w": 32, "s": 3}]),
]


@pytest.mark.parametrize(("forwards", "flagged", "values"), MEMBERS)
def test_each_forward_keeps_its_own_literals_in_the_branched_forward(forwards, flagged, values) -> None:
    own = [tuple(line.format(**v) for line in f) for f, v in zip(forwards, values)]
    got = member_forwards(own, flagged, "self.b1 is not None", "self.b1 is None", ("x",))
    assert got is not None
    first_flagged = values[flagged.index(True)]
    for result, value, side in zip(got, values, flagged):
        # the flagged side's own literal `s` is its own where it runs that side, the first flagged forward's elsewhere
        expected = {"w": value["w"], "s": value["s"] if side else first_flagged["s"]}
        assert result.lines == tuple(line.format(**expected) for line in _HEAD)
        assert result.borrowed == ({2, 3, 4} if side else {0, 1})  # in order: the flagged side's 1, s; the plain side's 2, 1, 1; -1, 2, w


def test_forwards_that_are_not_one_code_per_side_are_not_placed() -> None:
    other = ("return x.view(-1, 4)",)
    plain = tuple(line.format(w=4) for line in _PLAIN)
    flagged = tuple(line.format(w=4, s=2) for line in _FLAGGED)
    assert member_forwards([plain, flagged, other], [False, True, False], "c", "not c") is None  # a side of two codes
    assert member_forwards([plain, plain], [False, False], "c", "not c") is None  # no flagged side
    marked = (f"return x.view(-1, {LITERAL})",)
    assert member_forwards([marked, flagged], [False, True], "c", "not c") is None  # code that holds the marker itself


def _run(lines: tuple[str, ...], flag: bool, x: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
    """The forward `lines` of `def forward(self, x, p=None)` run on a module whose `self.f` is `flag`."""
    namespace: dict[str, object] = {"torch": torch}
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward(self, x, p=None):\n{body}\n", "<forward>", "exec"), namespace)
    return namespace["forward"](type("Holder", (), {"f": flag})(), x, p)  # type: ignore[operator]


def test_an_if_keeps_its_else_where_the_sides_differ_only_inside_it() -> None:
    """`else:` goes with its `if`: never an `if` in the shared lines and its `else` in a branch."""
    def code(value: int, other: str, last: int) -> tuple[str, ...]:
        return ("if p is None:", f"    p = x * {value}", "else:", f"    p = {other}", f"return p * {last}")

    forwards = [code(2, "p + 1", 3), code(4, "p.relu()", 5), code(6, "p + 1", 7)]
    flagged = [False, True, False]
    placed = member_forwards(forwards, flagged, "self.f", "not self.f", ("x", "p=None"))
    assert placed is not None
    x = torch.tensor([1.0, -2.0])
    for own, side, result in zip(forwards, flagged, placed):
        for p in (None, torch.tensor([-1.0, 2.0])):
            assert torch.equal(_run(result.lines, side, x, p), _run(own, side, x, p))


def _block(name: str, in_loop: int, size: int) -> ClassIR:
    init = (f"self.lin = nn.Linear({size}, {size})", "self.layers = nn.ModuleList([Inner(), Inner()])")
    forward = ("x = self.lin(x)", "for layer in self.layers:", f"    x = layer(x, {in_loop})", f"return x.view(-1, {size})")
    return ClassIR(name, False, init, (), ("x",), forward, "# m.py:1 Block")


def test_literals_in_a_loop_are_parameters_when_classes_join() -> None:
    """Two groups of one source class, the second's loop calling with another number: each instance keeps its own."""
    inner = ClassIR("Inner", False, (), (), ("x", "k"), ("return x * k",), "# m.py:9 Inner")
    root = ClassIR("Net", True, ("self.a = Block()", "self.b = Block_1()", "self.c = Block_2()"), (), ("x",), ("return self.c(self.b(self.a(x)))",))
    classes, names = generalize((inner, _block("Block", 3, 4), _block("Block_1", 3, 8), _block("Block_2", 5, 4), root), lambda name: name)
    (block,) = [c for c in classes if c.name == "Block"]
    assert names["Block_2"] == "Block" and "for layer in self.layers:" in block.forward_lines
    assert any(re.fullmatch(r"    x = layer\(x, self\.\w+\)", line) for line in block.forward_lines)
    assert classes[-1].init_lines == ("self.a = Block(4, 3)", "self.b = Block(8, 3)", "self.c = Block(4, 5)")


def test_a_chain_keeps_apart_literals_that_compare_equal() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    calls = [graph.call_module(f"layers.{i}", (x, value)) for i, value in enumerate((0.0, -0.0, 0.0))]
    assert _same_arguments(calls[0], calls[2])
    assert not _same_arguments(calls[0], calls[1])  # 0.0 == -0.0, but not to a layer that reads its sign


_LOCALS = ("x", "y", "out", "z")


def _statements(draw: random.Random, count: int) -> list[str]:
    """Statements of plain Python on numbers, each literal written `{}` (filled per instance), some a
    loop with a body, some after a comment quoting a source line."""
    lines: list[str] = []
    for _ in range(count):
        target, value = draw.choice(_LOCALS), draw.choice(_LOCALS)
        kind = draw.random()
        if kind < 0.15:
            lines += ["for i in range({}):", f"    {target} = {target} + i * {{}}"]
        elif kind < 0.3:
            lines += ["# m.py:7 in forward: y = f(x)", f"{target} = {value} * {{}} - {{}}"]
        else:
            lines.append(f"{target} = {value} % 7 * {{}} + {{}}")
    return lines


def _filled(draw: random.Random, lines: list[str]) -> tuple[str, ...]:
    """The lines with each `{}` a literal; a loop's count stays small."""
    out = []
    for line in lines:
        while "{}" in line:
            literal = draw.choice(["1", "2", "3"]) if line.startswith("for ") else draw.choice(["1", "2", "3", "-1", "0.5", "4"])
            line = line.replace("{}", literal, 1)
        out.append(line)
    return tuple(out)


def _run_numbers(lines: tuple[str, ...], holder: object, flag: bool, x: int) -> object:
    namespace: dict[str, object] = {}
    body = "".join(f"    {line}\n" for line in lines)
    exec(compile(f"def forward(self, x, c):\n{body}", "<forward>", "exec"), namespace)
    return namespace["forward"](holder, x, flag)  # type: ignore[operator]


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=150, deadline=None)
def test_branched_forwards_with_their_own_literals_compute_each_instance(seed: int) -> None:
    """Drawn forwards of two sides (shared first and last statements, each side's own, loops, a side
    that rebinds its input): each instance's placed forward, and the one forward with the literals
    that differ as attributes, compute what that instance's own forward does."""
    draw = random.Random(seed)
    start = ["y = x + 1", "out = x + 2", "z = x + 3"]
    head, tail = _statements(draw, draw.randint(0, 2)), _statements(draw, draw.randint(0, 2))
    ending = [f"return {draw.choice(_LOCALS)} * {{}}"]
    plain = start + head + _statements(draw, draw.randint(0, 3)) + tail + ending
    flagged = start + head + _statements(draw, draw.randint(0, 3)) + tail + ending
    if draw.random() < 0.3:  # the flagged side rebinds its input where the plain side binds `out`
        flagged = [line.replace("out", "x") for line in flagged if line != "out = x + 2"]
    sides = [draw.random() < 0.5 for _ in range(draw.randint(2, 5))]
    sides[0], sides[1] = False, True
    forwards = [_filled(draw, flagged if side else plain) for side in sides]
    placed = member_forwards(forwards, sides, "c", "not c", ("x", "c"))
    if placed is None:
        return
    for result, own, side in zip(placed, forwards, sides):
        for x in (3, 8):
            assert _run_numbers(result.lines, None, side, x) == _run_numbers(own, None, side, x)
    parameters: dict[tuple[str, ...], str] = {}
    values: dict[str, tuple[str, ...]] = {}
    lines, stored = _forward_parameters(
        [p.lines for p in placed], placed[0].lines, set(), parameters, values, [], set(), [p.borrowed for p in placed]
    )
    for row, (own, side) in enumerate(zip(forwards, sides)):
        holder = types.SimpleNamespace()
        for line in stored:
            attribute, name = line.removeprefix("self.").split(" = ")
            setattr(holder, attribute, float(values[name][row]) if "." in values[name][row] else int(values[name][row]))
        for x in (3, 8):
            assert _run_numbers(lines, holder, side, x) == _run_numbers(own, None, side, x)


def _straight(draw: random.Random, count: int) -> list[str]:
    """Straight-line statements on numbers, each literal written `{}`; some quote a source line."""
    lines: list[str] = []
    for _ in range(count):
        target, value, other = draw.choice(_LOCALS), draw.choice(_LOCALS), draw.choice(_LOCALS)
        if draw.random() < 0.2:
            lines.append("# m.py:7 in forward: y = f(x)")
        lines.append(f"{target} = {value} % 7 * {{}} + {other}")
    return lines


def _two_sides(draw: random.Random) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Two forwards sharing most statements, each with lines of its own in up to three places, the
    flagged side's locals maybe named otherwise throughout: (plain, flagged) as templates (`{}` for
    each literal), then filled, the shared statements with the same literals."""
    shared = [["y = x + 1", "out = x + 2", "z = x + 3"], *(_straight(draw, draw.randint(2, 7)) for _ in range(3))]
    ending = f"return {draw.choice(_LOCALS)} * {{}} + {draw.choice(_LOCALS)}"
    other_ending = f"return {draw.choice(_LOCALS)} * {{}}" if draw.random() < 0.5 else ending
    sides: list[tuple[list[str], list[str]]] = [([], []), ([], [])]  # per side: (template, filled)
    for k, part in enumerate([*shared, [ending]]):
        filled = _filled(draw, part)
        for template, lines in sides:
            template += part
            lines += filled
        if 0 < k < len(shared):
            for (template, lines), most in zip(sides, (1, 3)):
                own = _straight(draw, draw.choice(range(most + 1)))
                template += own
                lines += _filled(draw, own)
    if other_ending != ending:
        sides[1] = (sides[1][0][:-1] + [other_ending], sides[1][1][:-1] + list(_filled(draw, [other_ending])))
    (plain, plain_lines), (flagged, flagged_lines) = sides
    if draw.random() < 0.5:  # the flagged side's locals named otherwise (one to one)
        names = list(_LOCALS[1:])
        renames = dict(zip(names, draw.sample(names, len(names))))
        flagged, flagged_lines = ([line if line.startswith("#") else rename_variables(line, renames) for line in f] for f in (flagged, flagged_lines))
    return tuple(plain), tuple(flagged), tuple(plain_lines), tuple(flagged_lines)


def test_forwards_branching_in_several_places_compute_each_side() -> None:
    """Drawn straight-line forwards of two sides, apart in several places: the one forward branching
    on `c` computes each side's result, as does each instance's placed forward, its literals its own;
    and places of their own are found (not every drawn pair falls back to one `if`)."""
    several = 0
    for seed in range(300):
        draw = random.Random(seed)
        plain, flagged, plain_lines, flagged_lines = _two_sides(draw)
        joined = branched(plain_lines, flagged_lines, "c", "not c", ("x", "c"), regions=True)
        several += joined != branched(plain_lines, flagged_lines, "c", "not c", ("x", "c"))
        for x in (3, 8):
            assert _run_numbers(joined, None, True, x) == _run_numbers(flagged_lines, None, True, x), seed
            assert _run_numbers(joined, None, False, x) == _run_numbers(plain_lines, None, False, x), seed
        sides = [False, True, *(draw.random() < 0.5 for _ in range(draw.randint(0, 3)))]
        forwards = [plain_lines, flagged_lines, *(_filled(draw, list(flagged if side else plain)) for side in sides[2:])]
        placed = member_forwards(forwards, sides, "c", "not c", ("x", "c"), regions=True)
        for result, own, side in zip(placed or (), forwards, sides):
            for x in (3, 8):
                assert _run_numbers(result.lines, None, side, x) == _run_numbers(own, None, side, x), seed
    assert several >= 100


_MIDDLE = tuple(f"m{i} = m{i - 1} * a" for i in range(1, 10))
REVIEWED = [
    # a name deleted twice by one side, held unread by the other: the second `del` is that side's own
    (("a = x + 1", "b = a * 2", "d = b - 1", "e = d * 3", "p1 = e + 1", "m0 = e + d", *_MIDDLE, "return m9 + a"),
     ("a = x + 1", "b = a * 2", "d = b - 1", "del b", "e = d * 3", "b = e + 5", "m0 = e + d", "del b", *_MIDDLE, "return m9 * a")),
    # one place apart, both returning alike: no second place made by binding the plain side's return
    (("a = x + 1", "u = a * 5", "b = a * 2", "p1 = b + u", "d = b - 1", "e = d * 3", "p2 = e + 1", "f = e + d", "return f + a"),
     ("a = x + 1", "u = a * 5", "b = a * 2", "q1 = b * u", "d = b - 1", "del u", "e = d * 3", "q2 = e + 1", "f = e + d", "return f + a")),
    # a value standing for the input, bound where the input is read no more (named as it)
    (("out = x + 1", "out = out * 2", "out = out - 3", "out = out * 7", "out = out + 2", "out = out * 3", "out = out - 5", "out = out * 11",
      "out = out + 4", "out = out * 13", "return out + x"),
     ("out = x + 1", "s = out * 5", "out = out * 2", "out = out - 3", "out = out * 7", "out = out + 2", "out = out * 3", "out = out - 5",
      "out = out * 11", "out = out + 4", "out = out * 13", "return out + s")),
    # the input rebound as a local its rebinding reads (timm's PreActBasic), a value the flagged side alone
    # binds then named as the input
    (("out = x + 1", "out = out * 2", "out = out - 3", "return out + x"),
     ("x_pre = x + 1", "s = x_pre * 5", "x = x_pre * 2", "x = x - 3", "return x + s")),
]  # fmt: skip


@pytest.mark.parametrize(("plain", "flagged"), REVIEWED)
def test_reviewed_pairs_compute_each_side(plain, flagged) -> None:
    """Pairs a review found: each side of the joined forward computes that side's result."""
    joined = branched(plain, flagged, "c", "not c", ("x", "c"), regions=True)
    for x in (3, 8):
        assert _run_numbers(joined, None, True, x) == _run_numbers(flagged, None, True, x)
        assert _run_numbers(joined, None, False, x) == _run_numbers(plain, None, False, x)
    if plain[-1] == flagged[-1]:  # one place apart: not several
        assert regions_joined(plain, flagged, "c", "not c", ("x", "c")) is None


SAME = [
    # (one forward, another, one code)
    (("y = x", "# m.py:5: y = b(y)", "for b in self.blocks:", "    y = b(y)", "return y"),
     ("# m.py:5: y = b(y)", "y = x", "for b in self.blocks:", "    y = b(y)", "return y"), True),  # a comment elsewhere
    (("y = x", "# m.py:5: y = b(y)", "return y"), ("y = x", "# m.py:6: z = y", "return y"), True),  # another comment
    (("out = self.a(x)", "return out"), ("y = self.a(x)", "return y"), True),  # another local's name
    (("y = x", "return y"), ("y = x * 2", "return y"), False),
]


@pytest.mark.parametrize(("a", "b", "same"), SAME)
def test_forwards_apart_only_in_comments_or_local_names_are_one_code(a, b, same) -> None:
    """Not a flag whose branches would differ only in where a note sits (stages of 2 and 4 blocks, rolled alike)."""
    assert same_code(a, b, ("x",)) == same
