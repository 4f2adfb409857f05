"""A flag that the class's other parameters already decide is computed from them, not passed.

Instances of one source class whose forwards differ (a residual added or not) share a class that
branches on a flag (`if self.residual:`). Where the source decided that from its own arguments,
torchvision's `self.use_res_connect = stride == 1 and inp == oup`, the flag's value in every
instance is such a test of the merged class's parameters: the class computes it
(`self.residual = stride == 1 and in_channels == out_channels_2`) and its callers do not write
it (`InvertedResidual(96, 16, in_channels=16, stride=2)`, no `residual=False`). Tests are kept
plain, as a person writes them: an int parameter against 0 or 1, two int parameters equal, or
one of each joined by `and`; a test must hold for every instance, and more instances than
either side of it makes a chance match unlikely to be read as the source's rule.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping

MIN_ROWS = 3  # classes a single test must tell apart
MIN_ROWS_BOTH = 4  # classes two tests joined by `and` must tell apart

Truth = tuple[bool, ...]


def derived_flag(flags: Truth, parameters: Mapping[str, tuple[str, ...]]) -> str | None:
    """The test of `parameters` (name -> each class's value, as code) true exactly where `flags` is,
    or None where no plain test is."""
    if len(set(flags)) != 2:
        return None
    tests = _tests(parameters)
    if len(flags) >= MIN_ROWS:
        found = next((text for text, truth in tests if truth == flags), None)
        if found is not None:
            return found
    if len(flags) >= MIN_ROWS_BOTH:
        for (a, truth_a), (b, truth_b) in itertools.combinations(tests, 2):
            if tuple(x and y for x, y in zip(truth_a, truth_b)) == flags and truth_a != flags and truth_b != flags:
                return f"{a} and {b}"
    return None


def _tests(parameters: Mapping[str, tuple[str, ...]]) -> list[tuple[str, Truth]]:
    """Each plain test and its value per class: `p == 1`, `p != 0`, ... then `p == q`."""
    values = {name: parsed for name, column in parameters.items() if (parsed := _ints(column)) is not None}
    tests: list[tuple[str, Truth]] = []
    for name, column in values.items():
        if None in column:
            continue
        for value in (1, 0):
            tests.append((f"{name} == {value}", tuple(v == value for v in column)))
            tests.append((f"{name} != {value}", tuple(v != value for v in column)))
    for (p, column_p), (q, column_q) in itertools.combinations(values.items(), 2):
        tests.append((f"{p} == {q}", tuple(a == b for a, b in zip(column_p, column_q))))
    return [(text, truth) for text, truth in tests if len(set(truth)) == 2]


def _ints(column: tuple[str, ...]) -> tuple[int | None, ...] | None:
    """The column's values when each is an int literal or None (at least one an int), else None."""
    out: list[int | None] = []
    for text in column:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
        if value is not None and type(value) is not int:
            return None
        out.append(value)
    return tuple(out) if any(v is not None for v in out) else None
