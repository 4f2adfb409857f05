"""optional_inputs.py: forwards of one source class taking other optional inputs become one forward taking
them all, only where each form, its input absent, computes exactly what the shortest one does."""

from __future__ import annotations

import pytest

from fxexport.ir import ClassIR
from fxexport.optional_inputs import optional_inputs

INIT = ("self.q = nn.Linear(4, 4)", "self.k = nn.Linear(4, 4)")
SOURCE = """def forward(self, hidden_states, key_value_states=None, attention_mask=None, scale=2.0):
    current = key_value_states if key_value_states is not None else hidden_states
    return F.scaled_dot_product_attention(self.q(hidden_states), self.k(current), self.k(current), attn_mask=attention_mask)
"""
SHORTEST = (("x",), ("q = self.q(x)", "k = self.k(x)", "out = F.scaled_dot_product_attention(q, k, k)", "return out * 0.5"))
CROSS = (("x", "x_1"), ("q = self.q(x)", "k = self.k(x_1)", "out = F.scaled_dot_product_attention(q, k, k)", "return out * 0.25"))
MASKED = (("x", "x_1"), ("q = self.q(x)", "k = self.k(x)", "out = F.scaled_dot_product_attention(q, k, k, attn_mask=x_1)", "return out * 0.25"))
HOLDER = ("self.self_attn = Attention_1()", "self.cross_attn = Attention_2()")
JOINED = ("x", "key_value_states=None", "attention_mask=None")
def _first(line: str, form: tuple) -> tuple:
    return form[0], (line, *form[1][1:])


ONE_LINE = (("x",), ("q = self.q(x)", "k = self.k(x)", "out = F.scaled_dot_product_attention(q, self.k(x), k)", "return out * 0.5"))
CASES = [  # (name, the shortest form, the two longer forms, the source forward, the joined forward's lines or None: kept apart)
    ("a mask and the encoder's states", SHORTEST, (MASKED, CROSS), SOURCE,
     ("if key_value_states is None:", "    key_value_states = x", "q = self.q(x)", "k = self.k(key_value_states)",
      "out = F.scaled_dot_product_attention(q, k, k, attn_mask=attention_mask)", "return out * 0.25")),
    ("a parameter not defaulting to None", SHORTEST, (MASKED, CROSS), SOURCE.replace("attention_mask=None", "attention_mask=0"), None),
    ("no test of the states for None", SHORTEST, (MASKED, CROSS),
     SOURCE.replace("key_value_states if key_value_states is not None else hidden_states", "hidden_states"), None),
    ("a keyword not defaulting to None", SHORTEST,
     ((("x", "x_1"), (*MASKED[1][:2], "out = F.scaled_dot_product_attention(q, k, k, dropout_p=x_1)", MASKED[1][3])), CROSS),
     SOURCE.replace("attention_mask=None", "attention_mask=None, dropout_p=None"), None),
    ("both change one line", ONE_LINE,
     ((("x", "x_1"), (*ONE_LINE[1][:2], "out = F.scaled_dot_product_attention(q, self.k(x), k, attn_mask=x_1)", "return out * 0.25")),
      (("x", "x_1"), (*ONE_LINE[1][:2], "out = F.scaled_dot_product_attention(q, self.k(x_1), k)", "return out * 0.25"))), SOURCE, None),
    ("the states read in place of another parameter", SHORTEST, (MASKED, CROSS),
     SOURCE.replace("(self, hidden_states,", "(self, x, hidden_states=None,").replace("else hidden_states", "else hidden_states"), None),
    ("a statement more", SHORTEST, (MASKED, (("x", "x_1"), (*CROSS[1][:3], "out = out + 1", CROSS[1][3]))), SOURCE, None),
    ("the input the states stand for bound anew", _first("x = self.q(x)", SHORTEST), (_first("x = self.q(x)", MASKED), _first("x = self.q(x)", CROSS)),
     SOURCE, None),
    ("the states bound anew", _first("x = self.q(x)", SHORTEST), (_first("x = self.q(x)", MASKED), _first("x_1 = self.q(x_1)", CROSS)), SOURCE, None),
    ("a local named like a parameter", SHORTEST, (MASKED, (("x", "x_1"), ("key_value_states = self.q(x)", *CROSS[1][1:]))), SOURCE, None),
]


def _class(name: str, form: tuple[tuple[str, ...], tuple[str, ...]], source: str) -> ClassIR:
    return ClassIR(name, False, INIT, (), form[0], form[1], "# m.py:1 Attention", source_forward=source)


def _level(forms: tuple, source: str, shortest: tuple = SHORTEST) -> list[ClassIR]:
    return [_class("Attention", shortest, source), _class("Attention_1", forms[0], source), _class("Attention_2", forms[1], source)]


@pytest.mark.parametrize("name,shortest,forms,source,lines", CASES, ids=[c[0] for c in CASES])
def test_forms_join_only_where_each_input_absent_reads_as_the_shortest(
    name: str, shortest: tuple, forms: tuple, source: str, lines: tuple[str, ...] | None
) -> None:
    level = _level(forms, source, shortest)
    joined, _ = optional_inputs(level, [], {})
    if lines is None:
        assert joined == level
        return
    assert {c.forward_params for c in joined} == {JOINED}
    assert joined[2].forward_lines == lines
    assert joined[0].forward_lines[-1] == "return out * 0.5"  # each class keeps its numbers


CALLERS = [  # (name, the holder's forward, after the join or None: nothing joined)
    ("direct calls", ("x = self.self_attn(x, m)", "return self.cross_attn(x, enc)"),
     ("x = self.self_attn(x, attention_mask=m)", "return self.cross_attn(x, enc)")),
    ("a computed mask", ("x = self.self_attn(x, m.float())", "return self.cross_attn(x, enc)"),
     ("x = self.self_attn(x, attention_mask=m.float())", "return self.cross_attn(x, enc)")),
    ("a keyword already", ("x = self.self_attn(x, attn=m)", "return self.cross_attn(x, enc)"), None),
    ("no call", ("f = self.self_attn", "return f(x, m)"), None),
]


@pytest.mark.parametrize("name,forward,after", CALLERS, ids=[c[0] for c in CALLERS])
def test_callers_pass_an_input_by_keyword_where_one_before_it_is_left_out(name: str, forward: tuple[str, ...], after: tuple[str, ...] | None) -> None:
    level = _level((MASKED, CROSS), SOURCE)
    holder = ClassIR("Layer", False, HOLDER, (), ("x", "m", "enc"), forward, "# m.py:9 Layer")
    joined, (caller,) = optional_inputs(level, [holder], {})
    if after is None:
        assert (joined, caller) == (level, holder)
        return
    assert caller.forward_lines == after


def test_forms_passing_none_join_as_forms_leaving_it_out() -> None:
    """symbolic_trace records a keyword given None: `attn_mask=None` in the forms not given a mask."""
    def spelled(form: tuple) -> tuple:
        return form[0], tuple(line.replace("(q, k, k)", "(q, k, k, attn_mask=None)") for line in form[1])

    joined, _ = optional_inputs(_level((MASKED, spelled(CROSS)), SOURCE, spelled(SHORTEST)), [], {})
    assert {c.forward_lines[4] for c in joined} == {"out = F.scaled_dot_product_attention(q, k, k, attn_mask=attention_mask)"}


@pytest.mark.parametrize("source,name", [
    (SOURCE, "attention_mask"),
    # the source passes another parameter by the keyword than the one sharing a word with it (helper-59)
    (SOURCE.replace("attention_mask=None", "padding=None, extra_mask=None").replace("attn_mask=attention_mask", "attn_mask=padding"), "padding"),
    # the source passes something else by it: no parameter is taken to be the input
    (SOURCE.replace("attn_mask=attention_mask", "attn_mask=attention_mask.float()"), None),
    # a helper passes it (transformers' attention interfaces): the parameter sharing a word with the keyword
    (SOURCE.replace("attn_mask=attention_mask", "mask=attention_mask"), "attention_mask"),
], ids=["passed by it", "another passed by it", "an expression passed by it", "passed by a helper"])
def test_an_input_passed_by_keyword_is_the_parameter_the_source_passes_by_it(source: str, name: str | None) -> None:
    level = _level((MASKED, CROSS), source)
    joined, _ = optional_inputs(level, [], {})
    if name is None:
        assert joined == level
        return
    assert joined[0].forward_params[-1] == f"{name}=None"


def test_without_a_shortest_form_one_is_read_off_a_longer_form() -> None:
    """A decoder's attentions only, given a mask or the encoder's states: one forward all the same."""
    level = [_class("Attention_1", MASKED, SOURCE), _class("Attention_2", CROSS, SOURCE)]
    joined, _ = optional_inputs(level, [], {})
    assert {c.forward_params for c in joined} == {JOINED}
    assert joined[1].forward_lines == CASES[0][4]


@pytest.mark.parametrize("forms", [
    (MASKED, (("x", "x_1"), (*CROSS[1][:3], "out = out + 1", CROSS[1][3]))),  # a statement more
    (MASKED, (("x", "x_1"), ("q = self.q(x)", "k = self.k(x_1)", "out = F.scaled_dot_product_attention(q, k, k, attn_mask=x_1)", "return out * 0.25"))),
], ids=["a statement more", "the states used as a mask too"])
def test_without_a_shortest_form_forms_apart_stay_apart(forms: tuple) -> None:
    level = [_class("Attention_1", forms[0], SOURCE), _class("Attention_2", forms[1], SOURCE)]
    assert optional_inputs(level, [], {})[0] == level
