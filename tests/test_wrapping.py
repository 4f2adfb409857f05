"""wrapping.py wraps a long constructor statement, call, display or def line exactly as black does, and declines what it does not know."""

from __future__ import annotations

import random

import black
import pytest

from fxexport import formatting
from fxexport.wrapping import wrap

CALLS = ["nn.Conv2d", "BasicBlock", "torch.nn.Linear", "nn.Sequential", "a.b.c.Deep", "f", "nn.ModuleList"]
LEAVES = ["()", "64", "-1", "0.5", "1e-05", "True", "None", '"reflect"', '"a, (b)"', "in_channels", "nn.ReLU", "torch.float32"]
TARGETS = ["self.conv1", "self.stages", "x", "self.a_long_attribute_name.sub", "self.stages[1][0].shortcut", 'self.blocks["q"][12]']


def _expression(rng: random.Random, depth: int) -> str:
    kind = rng.random()
    if depth <= 0 or kind < 0.35:
        return rng.choice(LEAVES)
    items = [_expression(rng, depth - 1) for _ in range(rng.choice([0, 1, 1, 2, 3, 4, 6, 12]))]
    if kind < 0.75:
        args = [_argument(rng, item, depth) for item in items]
        return f"{rng.choice(CALLS)}({', '.join(args)})"
    if kind < 0.85:
        return f"[{', '.join(items)}]"
    if kind < 0.92 and len(items) >= 2:
        return f"({', '.join(items)})"
    return "{" + ", ".join(f'"k{i}": {item}' for i, item in enumerate(items)) + "}"


def _argument(rng: random.Random, item: str, depth: int) -> str:
    """A call's argument: the item, by keyword, or a run of children built alike unpacked (`*[Block(64) for _ in range(3)]`)."""
    kind = rng.random()
    if kind < 0.25:
        return f"{rng.choice(['stride', 'bias', 'kw'])}={item}"
    if kind < 0.4:
        return f"*[{_expression(rng, depth - 1)} for {rng.choice(['_', 'i'])} in range({rng.choice([2, 16])})]"
    return item


def _statement(rng: random.Random) -> str:
    """`target = expression` (a call or a display), a call on its own, or a def line with defaults."""
    kind = rng.random()
    if kind < 0.6:
        return f"{rng.choice(TARGETS)} = {_expression(rng, rng.choice([1, 2, 3, 4]))}"
    if kind < 0.8:
        return _call(rng)
    names = ["self", *(f"p{i}" for i in range(rng.choice([0, 1, 2, 4, 8])))]
    defaults = [f"{rng.choice(['kw', 'scale', 'stride'])}_{i}={_expression(rng, 1)}" for i in range(rng.choice([0, 1, 3, 6, 10]))]
    return f"def {rng.choice(['__init__', 'forward', 'f'])}({', '.join(names + defaults)}){rng.choice(['', ' -> None', ' -> torch.Tensor'])}:"


def _call(rng: random.Random) -> str:
    expression = _expression(rng, rng.choice([2, 3, 4]))
    return expression if "(" in expression.partition("[")[0].partition("{")[0] else f"self.register_buffer({expression})"


def _statements(seed: int, count: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(_statement(rng), rng.choice([0, 4, 8, 12, 16])) for _ in range(count)]


def _black(line: str, indent: int) -> list[str]:
    """The statement as black writes it `indent` columns deep (formatting's own wrapper and markers)."""
    pad = " " * indent
    body = [f"{pad}    pass"] if line.startswith("def ") else []
    source = "\n".join([*formatting._wrapper(indent), f"{pad}# fxexport: split", pad + line, *body, f"{pad}# fxexport: end"]) + "\n"
    lines = formatting._chunks(black.format_str(source, mode=formatting._mode()).split("\n"))[0]
    return lines[:-1] if body else lines


@pytest.mark.parametrize("seed", range(3))
def test_wrapped_as_black_wraps(seed: int) -> None:
    accepted = [(line, indent, lines) for line, indent in _statements(seed, 1500) if (lines := wrap(line, indent)) is not None]
    for kind in ("= [", "= {", "def ", "self.register_buffer(", " for "):  # every kind of statement is wrapped, not only accepted short
        assert sum(len(lines) > 1 for line, _, lines in accepted if kind in line) > 10, kind
    assert sum(len(lines) > 1 for _, _, lines in accepted) > 200  # the cases exercise the wrapping, not only short lines
    assert [(line, indent, lines) for line, indent, lines in accepted if lines != _black(line, indent)] == []


@pytest.mark.parametrize(
    "line",
    [
        "x = a + f(" + ", ".join(["1"] * 40) + ")",  # an operator
        "x = f(" + ", ".join(["'single'"] * 20) + ")",  # quotes black would change
        "x = f(" + ", ".join(["1"] * 40) + ",)",  # a magic trailing comma
        "x[i] = f(" + ", ".join(["1"] * 40) + ")",  # a subscript by a name on the left
        "x[0:1] = f(" + ", ".join(["1"] * 40) + ")",  # a slice on the left
        "x = f(" + ", ".join(["1"] * 40) + ").y",  # an attribute of the call
        "x = f(" + ", ".join(["g(1)[0]"] * 20) + ")",  # a subscript
        "x = f(" + ", ".join(["日本"] * 40) + ")",  # wide characters
        "x = f(" + ", ".join(['"\\n"'] * 30) + ")",  # an escape
        "x = f(" + ", ".join(["-3.4028234663852886e+38"] * 4) + ")",  # black writes e38
        "x = f(" + ", ".join(["1E5", "0xFF", "10j"] * 8) + ")",  # black writes 1e5, 0xFF, 10j its way
        "x = f(" + ", ".join(["**kwargs"] * 20) + ")",  # unpacking a mapping
        "x = [" + ", ".join(["*args"] * 20) + "]",  # unpacking in a display
        "x = f(*[g(" + ", ".join(["1"] * 30) + ") for _ in range(3) if _])",  # a comprehension with a condition
        "x = f(*[g(" + ", ".join(["1"] * 30) + ") for _ in range(3) for i in y])",  # two for clauses
        "x = f(*[g(" + ", ".join(["1"] * 30) + ") for a, b in y])",  # a tuple target
        "x = f(" + "1,  2" * 20 + ")",  # spaced otherwise than black spaces it
        "x = " + '"' + "s" * 100 + '"',  # no bracket to split at
        "[" + ", ".join(["1"] * 40) + "]",  # a display on its own
        "def f(" + ", ".join(f"a{i}: int" for i in range(20)) + "):",  # annotated parameters
        "def f(" + ", ".join(["*args"] + [f"a{i}=1" for i in range(20)]) + "):",  # a star parameter
        "def f(" + ", ".join(["1"] * 40) + "):",  # a parameter that is no name
        "def f(" + ", ".join(f"a{i}=1" for i in range(20)) + ") -> Tuple[int, int]:",  # a subscripted return annotation
        "return f(" + ", ".join(["1"] * 40) + ")",  # a keyword before the call
        "def f(a_parameter_name_long_enough_to_need_a_line_of_its_own_xxxxxx='x') -> None:".replace("'", '"'),  # one parameter: black adds a comma
    ],
)
def test_declines_what_black_must_decide(line: str) -> None:
    assert wrap(line, 8) is None
