"""wrapping.py wraps a long constructor statement exactly as black does, and declines what it does not know."""

from __future__ import annotations

import random

import black
import pytest

from fxexport import formatting
from fxexport.wrapping import wrap

CALLS = ["nn.Conv2d", "BasicBlock", "torch.nn.Linear", "nn.Sequential", "a.b.c.Deep", "f", "nn.ModuleList"]
LEAVES = ["64", "-1", "0.5", "1e-05", "True", "None", '"reflect"', '"a, (b)"', "in_channels", "nn.ReLU", "torch.float32"]
TARGETS = ["self.conv1", "self.stages", "x", "self.a_long_attribute_name.sub"]


def _expression(rng: random.Random, depth: int) -> str:
    kind = rng.random()
    if depth <= 0 or kind < 0.35:
        return rng.choice(LEAVES)
    items = [_expression(rng, depth - 1) for _ in range(rng.choice([0, 1, 1, 2, 3, 4, 6, 12]))]
    if kind < 0.75:
        args = [f"{rng.choice(['stride', 'bias', 'kw'])}={item}" if rng.random() < 0.3 else item for item in items]
        return f"{rng.choice(CALLS)}({', '.join(args)})"
    if kind < 0.85:
        return f"[{', '.join(items)}]"
    if kind < 0.92 and len(items) >= 2:
        return f"({', '.join(items)})"
    return "{" + ", ".join(f'"k{i}": {item}' for i, item in enumerate(items)) + "}"


def _statements(seed: int, count: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(f"{rng.choice(TARGETS)} = {_expression(rng, rng.choice([1, 2, 3, 4]))}", rng.choice([4, 8, 12, 16])) for _ in range(count)]


def _black(line: str, indent: int) -> list[str]:
    """The statement as black writes it `indent` columns deep (formatting's own wrapper and markers)."""
    pad = " " * indent
    source = "\n".join([*formatting._wrapper(indent), f"{pad}# fxexport: split", pad + line, f"{pad}# fxexport: end"]) + "\n"
    return formatting._chunks(black.format_str(source, mode=formatting._mode()).split("\n"))[0]


@pytest.mark.parametrize("seed", range(3))
def test_wrapped_as_black_wraps(seed: int) -> None:
    accepted = [(line, indent, lines) for line, indent in _statements(seed, 1500) if (lines := wrap(line, indent)) is not None]
    assert sum(len(lines) > 1 for _, _, lines in accepted) > 200  # the cases exercise the wrapping, not only short lines
    assert [(line, indent, lines) for line, indent, lines in accepted if lines != _black(line, indent)] == []


@pytest.mark.parametrize(
    "line",
    [
        "x = a + f(" + ", ".join(["1"] * 40) + ")",  # an operator
        "x = f(" + ", ".join(["'single'"] * 20) + ")",  # quotes black would change
        "x = f(" + ", ".join(["1"] * 40) + ",)",  # a magic trailing comma
        "x[0] = f(" + ", ".join(["1"] * 40) + ")",  # brackets on the left
        "x = f(" + ", ".join(["1"] * 40) + ").y",  # an attribute of the call
        "x = f(" + ", ".join(["g(1)[0]"] * 20) + ")",  # a subscript
        "x = f(" + ", ".join(["日本"] * 40) + ")",  # wide characters
        "x = f(" + ", ".join(['"\\n"'] * 30) + ")",  # an escape
        "x = f(" + ", ".join(["-3.4028234663852886e+38"] * 4) + ")",  # black writes e38
        "x = f(" + ", ".join(["1E5", "0xFF", "10j"] * 8) + ")",  # black writes 1e5, 0xFF, 10j its way
        "x = f(" + ", ".join(["*args"] * 20) + ")",  # unpacking
        "x = f(" + "1,  2" * 20 + ")",  # spaced otherwise than black spaces it
        "x = " + '"' + "s" * 100 + '"',  # no bracket to split at
    ],
)
def test_declines_what_black_must_decide(line: str) -> None:
    assert wrap(line, 8) is None
