"""The number literals and tokens code_slots finds in a line: kept per line text, and found without
parsing lines that hold none (a literal may start with a point, follow an operator or a bracket)."""

from __future__ import annotations

import pytest

from fxexport.code_slots import line_tokens, literal_slots, number_slots

# (line, the number literals number_slots finds in it, in order)
NUMBERS = [
    ("x = y + 2", ["2"]),
    ("x = torch.mul(y, .5)", [".5"]),
    ("x = y if c else.5", [".5"]),  # a point right after a keyword
    ("x = y or.25", [".25"]),
    ("x = y * 1e-05", ["1e-05"]),
    ("x = y[-1]", ["-1"]),
    ("x = y.view(2, -1, 0x1F)", ["2", "-1", "0x1F"]),
    ("x = y.flatten(1_000)", ["1_000"]),
    ("x = y * 1j + 2", ["2"]),  # an imaginary literal is never a parameter
    ("x = y.permute((0, 2, 1))", ["0", "2", "1"]),
    ("x = y[:, 3:]", ["3"]),
    ("x = conv2(x1) + y_3", []),
    ('x = getattr(y, "3")', []),
    ("x = y.reshape(-1)[0]", ["-1", "0"]),
    ("for i in range(4):", []),  # a compound statement's first line does not parse alone
    ('x = "é" + y * 2', ["2"]),  # columns in characters, not UTF-8 bytes
]


@pytest.mark.parametrize(("line", "texts"), NUMBERS)
def test_number_slots_find_every_number_literal(line: str, texts: list[str]) -> None:
    slots = number_slots((line,))
    assert [s.text for s in slots] == texts
    assert [line[s.start : s.end] for s in slots] == texts


@pytest.mark.parametrize(("line", "texts"), NUMBERS)
def test_number_slots_are_the_same_in_a_block_and_on_a_repeated_line(line: str, texts: list[str]) -> None:
    lines = (line, "    " + line, line)
    slots = number_slots(lines, nested=True)
    assert [(s.line, lines[s.line][s.start : s.end]) for s in slots] == [(i, t) for i in range(3) for t in texts]


def test_cached_tokens_are_a_new_list_each_time() -> None:
    first = line_tokens("x = y + 1")
    first.clear()
    assert [t.string for t in line_tokens("x = y + 1")][:5] == ["x", "=", "y", "+", "1"]


def test_an_export_keeps_no_line_after_it(tmp_path) -> None:
    """The lines kept per text during an export are dropped at its end (a long-running process would grow)."""
    from torch import fx

    import fxexport
    from fxexport import calls, code_slots, spelled_calls
    from fxexport.examples import resnet

    fxexport.export(fx.symbolic_trace(resnet()), tmp_path / "resnet")  # blocks of one class: their lines compared
    assert [f.cache_info().currsize for f in (code_slots._tokens, code_slots._numbers, spelled_calls.parsed_line, calls._frame)] == [0, 0, 0, 0]


def test_literal_slots_of_a_repeated_line_name_their_arguments() -> None:
    line = "self.conv = nn.Conv2d(64, 128, 3, stride=2)"
    slots = literal_slots((line, line), {})
    assert [(s.line, s.text, s.name) for s in slots] == [
        (i, text, name) for i in range(2) for text, name in [("64", "in_channels"), ("128", "out_channels"), ("3", "kernel_size"), ("2", "stride")]
    ]


@pytest.mark.parametrize(("line", "texts"), [
    ("self.is_first = True", ["True"]),  # a flag instances may differ in (alone_flags.py)
    ("self.eps = 1e-05", ["1e-05"]),
    ("self.training = True", []),  # the training mode, which the export sets as the source's
    ("self.name = 'a'", []),
])  # fmt: skip
def test_attribute_values_given_by_parameters_are_numbers_and_flags(line: str, texts: list[str]) -> None:
    assert [s.text for s in literal_slots((line,), {})] == texts
