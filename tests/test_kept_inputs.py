"""An input a forward keeps for a residual while a child is applied to it: kept as `shortcut` first (kept_inputs.py)."""

from __future__ import annotations

import inspect
import textwrap
from types import SimpleNamespace

import pytest
import torch

from fxexport.ir import ClassIR
from fxexport.kept_inputs import as_in_source, kept_input
from tests import models

KEPT = [
    # (forward, child, the forward with the input kept)
    (("out = self.expand(x)", "out = self.dw(out)", "return out[:, 4:] + x"), "expand",
     ("shortcut = x", "x = self.expand(x)", "x = self.dw(x)", "return x[:, 4:] + shortcut")),
    # the comments quoting the call's source line stay over it; the input bound again after the call is the kept one
    (("y = x.mean()", "# m.py:3 in forward: x = self.expand(x)", "out = self.expand(x)", "x = out[:, :4] + x", "return torch.cat([x, out * y], dim=1)"), "expand",
     ("y = x.mean()", "shortcut = x", "# m.py:3 in forward: x = self.expand(x)", "x = self.expand(x)", "shortcut = x[:, :4] + shortcut",
      "return torch.cat([shortcut, x * y], dim=1)")),
    # the alias bound later, once the input is read no more (transformers' `residual = residual + self_attn_output`)
    (("h = self.expand(x)", "a = self.dw(h)", "shortcut = x.repeat(1, 2) + a", "return shortcut * 2"), "expand",
     ("shortcut = x", "x = self.expand(x)", "a = self.dw(x)", "shortcut = shortcut.repeat(1, 2) + a", "return shortcut * 2")),
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
ALIAS_BOUND_TOO_SOON = [  # kept as `residual`: the alias is in the way
    (("h = self.expand(x)", "residual = x[:, :4] + h", "return residual + x[:, :4]"), "expand"),  # the input read after the alias is bound
    (("residual = x * 2", "h = self.expand(x)", "return residual[:, :4] + h + x[:, :4]"), "expand"),  # bound before the call
    (("h = self.expand(x)", "y = residual", "residual = x[:, :4] + h", "return residual"), "expand"),  # read before it is bound
    (("h = self.expand(x)", "if h.sum() > 0:", "    residual = x[:, :4] + h", "return residual"), "expand"),  # bound in a block
    # bound reading the alias's value from before the lines (a caller's slice of a forward: helper-80's case)
    (("h = self.expand(x)", "residual = x[:, :4] * residual", "return residual + h"), "expand"),
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


@pytest.mark.parametrize(("lines", "child"), ALIAS_BOUND_TOO_SOON)
def test_an_alias_the_forward_reads_or_binds_while_the_input_lives_is_in_the_way(lines, child) -> None:
    assert kept_input(lines, ("x",), child, "residual") is None


TIMM_BLOCK = """def forward(self, x):
    \"\"\"A docstring first.\"\"\"
    shortcut = x
    x = self.conv1(x)
    x = self.bn1(x)
    if self.downsample is not None:
        shortcut = self.downsample(shortcut)
    x += shortcut
    return x
"""
TRACED_BLOCK = ("out = self.conv1(x)", "out = self.bn1(out)", "if self.downsample is not None:", "    x = self.downsample(x)", "return out + x")
ALIAS_READ_FIRST = """def forward(self, x):
    residual = x
    x = self.conv1(x)
    if self.pre:
        residual = x
        x = self.bn1(x)
        return residual + x
    h = self.bn1(x)
    residual = x * residual
    return residual + h
"""
PRE_ACT_BLOCK = """def forward(self, x):
    x_preact = self.norm1(x)
    shortcut = x
    if self.downsample is not None:
        shortcut = self.downsample(x_preact)
    x = self.conv1(x_preact)
    x = self.bn1(x)
    return x + shortcut
"""
AS_IN_SOURCE = [
    # (the source forward, the forward as traced, as the source writes it)
    (TIMM_BLOCK, TRACED_BLOCK,
     ("shortcut = x", "x = self.conv1(x)", "x = self.bn1(x)", "if self.downsample is not None:", "    shortcut = self.downsample(shortcut)",
      "return x + shortcut")),
    # the source's own name for the input kept, whatever it is
    (TIMM_BLOCK.replace("shortcut", "identity"), TRACED_BLOCK,
     ("identity = x", "x = self.conv1(x)", "x = self.bn1(x)", "if self.downsample is not None:", "    identity = self.downsample(identity)",
      "return x + identity")),
    # the input kept after statements that bind neither name (timm's tiny_vit: `B, H, W, C = x.shape` first)
    (TIMM_BLOCK.replace("    shortcut = x\n", "    B, C, H, W = x.shape\n    shortcut = x\n"), TRACED_BLOCK,
     ("shortcut = x", "x = self.conv1(x)", "x = self.bn1(x)", "if self.downsample is not None:", "    shortcut = self.downsample(shortcut)",
      "return x + shortcut")),
    # the input's name bound to a sum of the two later (timm's FocalNetBlock: `x = shortcut + self.drop_path1(...)`):
    # the sum binds `x`, and `x` after it is the sum, not the kept input
    (TIMM_BLOCK, ("out = self.conv1(x)", "out = self.bn1(out)", "x = x + out", "return x * 2"),
     ("shortcut = x", "x = self.conv1(x)", "x = self.bn1(x)", "x = shortcut + x", "return x * 2")),
    # torchvision's BasicBlock keeps the input and binds the chain to a name of its own: so does the forward, and
    # the optional child's value is bound to the alias, as the source binds it
    (TIMM_BLOCK.replace("    x = self.conv1(x)", "    out = self.conv1(x)"), TRACED_BLOCK,
     ("shortcut = x", "out = self.conv1(x)", "out = self.bn1(out)", "if self.downsample is not None:", "    shortcut = self.downsample(x)",
      "return out + shortcut")),
    # the child bound to the alias applied to another value (timm's pre-activation blocks: `shortcut =
    # self.downsample(x_preact)`); the input is not rebound to the first child applied to it (`x_preact = self.norm1(x)`)
    # the input's name then bound to the first child's value the source binds it to, the input read no more
    (PRE_ACT_BLOCK, ("x_preact = self.norm1(x)", "if self.downsample is not None:", "    x = self.downsample(x_preact)",
                     "out = self.conv1(x_preact)", "out = self.bn1(out)", "return out + x"),
     ("shortcut = x", "x_preact = self.norm1(x)", "if self.downsample is not None:", "    shortcut = self.downsample(x_preact)",
      "x = self.conv1(x_preact)", "x = self.bn1(x)", "return x + shortcut")),
    # the input kept as `residual`, but not the value the source keeps under it at once (helper-80's case): the
    # line binding the alias again reads its earlier value, which keeping that value first would overwrite
    (ALIAS_READ_FIRST, ("conv1 = self.conv1(x)", "h = self.bn1(conv1)", "residual = conv1 * x", "return residual + h"),
     ("residual = x", "x = self.conv1(x)", "h = self.bn1(x)", "residual = x * residual", "return residual + h")),
    # not where the value's name is read before (the source's names kept apart otherwise)
    (PRE_ACT_BLOCK, ("x_preact = self.norm1(x)", "out = x_preact * 2", "if self.downsample is not None:", "    x = self.downsample(out)",
                     "out = self.conv1(x_preact)", "return out + x"),
     ("shortcut = x", "x_preact = self.norm1(x)", "out = x_preact * 2", "if self.downsample is not None:", "    shortcut = self.downsample(out)",
      "out = self.conv1(x_preact)", "return out + shortcut")),
]  # fmt: skip
DECODER_LAYER = textwrap.dedent(inspect.getsource(models.KeptValueLayer.forward))  # transformers' decoder layer
TRACED_LAYER = ("out = self.input_layernorm(hidden_states)", "out = self.self_attn(out)", "hidden_states = hidden_states + out",
                "# m.py:9 in forward: hidden_states = self.post_attention_layernorm(hidden_states)",
                "out_1 = self.post_attention_layernorm(hidden_states)", "out_1 = self.mlp(out_1)", "return hidden_states + out_1")
KEPT_VALUES = [
    # (the source forward, the forward as traced, as the source writes it): the input kept first, then the
    # value the source keeps under the input's kept name at once
    (DECODER_LAYER, TRACED_LAYER,
     ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = self.self_attn(hidden_states)",
      "hidden_states = residual + hidden_states", "residual = hidden_states",
      "# m.py:9 in forward: hidden_states = self.post_attention_layernorm(hidden_states)",
      "hidden_states = self.post_attention_layernorm(hidden_states)", "hidden_states = self.mlp(hidden_states)", "return residual + hidden_states")),
    # the value kept alone (a source whose input is not kept first)
    (DECODER_LAYER.replace("    residual = hidden_states\n    hidden_states = self.input_layernorm", "    hidden_states = self.input_layernorm", 1),
     ("h = self.self_attn(hidden_states)", "residual = hidden_states + h", "out = self.post_attention_layernorm(residual)", "out = self.mlp(out)",
      "return residual + out"),
     ("h = self.self_attn(hidden_states)", "residual = hidden_states + h", "out = self.post_attention_layernorm(residual)", "out = self.mlp(out)",
      "return residual + out")),
    # the value applied to another child first than the one the source rebinds the name to: bound to the
    # source's name, not kept under the other
    (DECODER_LAYER, (*TRACED_LAYER[:4], "out_1 = self.mlp(hidden_states)", "return hidden_states + out_1"),
     ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = self.self_attn(hidden_states)",
      "hidden_states = residual + hidden_states", TRACED_LAYER[3], "out_1 = self.mlp(hidden_states)", "return hidden_states + out_1")),
    # GPT-2: the value bound to the name already (`hidden_states = attn_output + residual`), the pair after a block
    (DECODER_LAYER.replace("    hidden_states = residual + hidden_states\n\n", "    hidden_states = residual + hidden_states\n    if hidden_states is None:\n        pass\n"),
     ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = self.self_attn(hidden_states)",
      "hidden_states = residual + hidden_states", "out_1 = self.post_attention_layernorm(hidden_states)", "out_1 = self.mlp(out_1)",
      "return hidden_states + out_1"),
     ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = self.self_attn(hidden_states)",
      "hidden_states = residual + hidden_states", "residual = hidden_states", "hidden_states = self.post_attention_layernorm(hidden_states)",
      "hidden_states = self.mlp(hidden_states)", "return residual + hidden_states")),
    # the name bound again later, to another value: the input kept first, the sum binding the input's name, as the source's
    (DECODER_LAYER, (*TRACED_LAYER[:-1], "hidden_states = out_1 * 2", "return hidden_states"),
     ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = self.self_attn(hidden_states)",
      "hidden_states = residual + hidden_states", "residual = hidden_states", TRACED_LAYER[3],
      "hidden_states = self.post_attention_layernorm(hidden_states)", "hidden_states = self.mlp(hidden_states)",
      "hidden_states = hidden_states * 2", "return hidden_states")),
]  # fmt: skip
# Whisper's: the pairs first in an `if` block and after it, the value bound before the `if` (and at the end of
# its block), the name's last value deleted after the sum and the alias bound again
IF_LAYER = """\
def forward(self, hidden_states, cross=True):
    residual = hidden_states
    hidden_states = self.input_layernorm(hidden_states)
    hidden_states = residual + hidden_states
    if cross:
        residual = hidden_states
        hidden_states = self.self_attn(hidden_states)
        hidden_states = residual + hidden_states
    residual = hidden_states
    hidden_states = self.post_attention_layernorm(hidden_states)
    hidden_states = self.mlp(hidden_states)
    return residual + hidden_states
"""
KEPT_VALUES.append((
    IF_LAYER,
    ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "residual = residual + hidden_states", "del hidden_states",
     "out_1 = self.self_attn(residual)", "residual = residual + out_1", "out_2 = self.post_attention_layernorm(residual)", "out_2 = self.mlp(out_2)",
     "return residual + out_2"),
    ("residual = hidden_states", "hidden_states = self.input_layernorm(hidden_states)", "hidden_states = residual + hidden_states",
     "residual = hidden_states", "hidden_states = self.self_attn(hidden_states)", "hidden_states = residual + hidden_states",
     "residual = hidden_states", "hidden_states = self.post_attention_layernorm(hidden_states)", "hidden_states = self.mlp(hidden_states)",
     "return residual + hidden_states"),
))  # fmt: skip
NOT_KEPT_VALUES = [
    # the forward reads the name's last value after the statement: binding the value to it would lose that
    (*TRACED_LAYER[:-1], "return hidden_states + out_1 + out"),
]
NOT_AS_IN_SOURCE = [
    # the optional child's call in a loop: the input's name carries each step's value to the next
    (PRE_ACT_BLOCK, ("out = self.norm1(x)", "for _ in range(2):", "    y = x + out", "    x = self.downsample(y)", "return out + x")),
    # the input bound before the alias keeps it: the alias keeps another value
    (TIMM_BLOCK.replace("    shortcut = x\n", "    x = x * 1\n    shortcut = x\n"), TRACED_BLOCK),
    # the alias's name bound before
    (TIMM_BLOCK.replace("    shortcut = x\n", "    shortcut = None\n    shortcut = x\n"), TRACED_BLOCK),
    # the source keeps no input
    (TIMM_BLOCK.replace("    shortcut = x\n", ""), TRACED_BLOCK),
    # the forward's first call on the input is another child than the one the source rebinds the input to
    (TIMM_BLOCK.replace("x = self.conv1(x)", "x = self.conv9(x)").replace("shortcut = self.downsample(shortcut)", "x = x + 1"), TRACED_BLOCK),
    # the source binds the alias to another child than the forward's
    (TIMM_BLOCK.replace("    x = self.conv1(x)", "    out = self.conv1(x)").replace("self.downsample(shortcut)", "self.pool(shortcut)"), TRACED_BLOCK),
    # the alias's name is taken in the forward
    (TIMM_BLOCK, (*TRACED_BLOCK[:-1], "shortcut = out * 2", "return shortcut + x")),
    # no source read
    ("", TRACED_BLOCK),
    # a source that does not parse
    ("def forward(self, x):\n    shortcut = x\n    x = self.conv1(x\n", TRACED_BLOCK),
]  # fmt: skip


def _block(source: str, lines: tuple[str, ...]) -> ClassIR:
    return ClassIR("Block", False, (), (), ("x",), lines, source_forward=source)


@pytest.mark.parametrize(("source", "lines", "written"), AS_IN_SOURCE)
def test_an_input_the_source_keeps_under_a_name_first_is_kept_under_it(source, lines, written) -> None:
    assert as_in_source(_block(source, lines)).forward_lines == written


@pytest.mark.parametrize(("source", "lines"), [(source, lines) for source, lines, _ in AS_IN_SOURCE])
def test_the_forward_written_as_in_the_source_computes_what_it_did(source, lines) -> None:
    layers = SimpleNamespace(conv1=lambda t: t.repeat(1, 1) * 3, bn1=lambda t: t.flip(0), downsample=lambda t: t - 1, norm1=lambda t: t * 0.5)
    x = torch.arange(8.0).reshape(2, 4) / 7
    written = as_in_source(_block(source, lines)).forward_lines
    assert torch.equal(_function(written)(layers, x.clone()), _function(lines)(layers, x.clone()))


@pytest.mark.parametrize(("source", "lines"), NOT_AS_IN_SOURCE)
def test_a_source_that_keeps_no_input_first_or_names_in_the_way_leave_the_forward_as_it_is(source, lines) -> None:
    assert as_in_source(_block(source, lines)).forward_lines == lines


TV_BLOCK = """def forward(self, x):
    identity = x
    out = self.conv1(x)
    if self.downsample is not None:
        identity = self.downsample(x)
    out += identity
    return out
"""
TV_TRACED = ("out = self.conv1(x)", "if self.downsample is not None:", "    x = self.downsample(x)", "return out + x")
ALIAS_REBOUND = [
    # (the forward as traced, as torchvision writes it): the input kept as `identity` first, the optional
    # child's value bound to it
    (TV_TRACED, ("identity = x", "out = self.conv1(x)", "if self.downsample is not None:", "    identity = self.downsample(x)", "return out + identity")),
    # a child every instance has: its value bound to the alias, nothing kept under it first (the source's
    # `identity = x` is for instances without one; here it would be a dead store)
    (("out = self.conv1(x)", "x = self.downsample(x)", "return out + x"),
     ("out = self.conv1(x)", "identity = self.downsample(x)", "return out + identity")),
]  # fmt: skip
NOT_ALIAS_REBOUND = [
    ("x = x * 2", *TV_TRACED),  # the input bound again before: `identity = x` first would keep the other value
    (*TV_TRACED[:-1], "x = out + x", "return x"),  # bound again after
    ("identity = self.conv1(x)", *TV_TRACED[1:-1], "return identity + x"),  # the alias's name taken
    ("out = self.conv1(x)", "if self.downsample is not None:", "    x = self.other(x)", "return out + x"),  # another child
    (*TV_TRACED[:-1], "return out"),  # the child's value read by nothing
    (*TV_TRACED[:-1], 'out = out + len(f"{x}")', "return out + x"),  # an f-string's names would not be renamed
]


@pytest.mark.parametrize(("lines", "written"), ALIAS_REBOUND)
def test_an_input_kept_under_an_alias_the_source_binds_a_child_to_is_kept_so(lines, written) -> None:
    assert as_in_source(_block(TV_BLOCK, lines)).forward_lines == written


@pytest.mark.parametrize("lines", [lines for lines, _ in ALIAS_REBOUND] + NOT_ALIAS_REBOUND)
def test_the_forward_with_the_alias_bound_computes_what_it_did(lines) -> None:
    layers = SimpleNamespace(conv1=lambda t: t * 3, downsample=lambda t: t - 1, other=lambda t: t.flip(0))
    for downsample in (layers.downsample, None) if "if self.downsample is not None:" in lines else (layers.downsample,):
        layers.downsample = downsample
        x = torch.arange(8.0).reshape(2, 4) / 7
        written = as_in_source(_block(TV_BLOCK, lines)).forward_lines
        assert torch.equal(_function(written)(layers, x.clone()), _function(lines)(layers, x.clone()))


@pytest.mark.parametrize("lines", NOT_ALIAS_REBOUND)
def test_an_input_bound_again_or_a_name_in_the_way_leaves_the_forward_as_it_is(lines) -> None:
    assert as_in_source(_block(TV_BLOCK, lines)).forward_lines == lines


def _layer(source: str, lines: tuple[str, ...]) -> ClassIR:
    return ClassIR("Layer", False, (), (), ("hidden_states",), lines, source_forward=source)


@pytest.mark.parametrize(("source", "lines", "written"), KEPT_VALUES)
def test_a_value_the_source_keeps_under_another_name_at_once_is_kept_so(source, lines, written) -> None:
    assert as_in_source(_layer(source, lines)).forward_lines == written


@pytest.mark.parametrize(("source", "lines"), [(source, lines) for source, lines, _ in KEPT_VALUES] + [(DECODER_LAYER, lines) for lines in NOT_KEPT_VALUES])
def test_the_forward_with_values_kept_as_in_the_source_computes_what_it_did(source, lines) -> None:
    layers = SimpleNamespace(input_layernorm=lambda t: t * 2, self_attn=lambda t: t.flip(0) + 1, post_attention_layernorm=lambda t: t - 1,
                             mlp=lambda t: t.exp())  # fmt: skip
    x = torch.arange(8.0).reshape(2, 4) / 7
    written = as_in_source(_layer(source, lines)).forward_lines
    assert torch.equal(_layer_function(written)(layers, x), _layer_function(lines)(layers, x))


@pytest.mark.parametrize("lines", NOT_KEPT_VALUES)
def test_a_value_read_or_bound_again_under_those_names_is_left_as_it_is(lines) -> None:
    written = as_in_source(_layer(DECODER_LAYER, lines)).forward_lines  # the input kept first, as the source keeps it
    assert written[0] == "residual = hidden_states" and "residual = residual + hidden_states" in written


def _layer_function(lines: tuple[str, ...]):
    namespace: dict[str, object] = {"torch": torch}
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward(self, hidden_states):\n{body}\n", "<kept>", "exec"), namespace)  # the test's own lines
    return namespace["forward"]


def _function(lines: tuple[str, ...]):
    namespace: dict[str, object] = {"torch": torch}
    body = "\n".join("    " + line for line in lines)
    exec(compile(f"def forward(self, x):\n{body}\n", "<kept>", "exec"), namespace)  # the test's own lines
    return namespace["forward"]
