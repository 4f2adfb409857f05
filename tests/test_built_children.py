"""A child only some instances of a shared class build is built by the class under a test of what its
callers pass, where that test holds for exactly those instances, else under a flag."""

from __future__ import annotations

import pytest

from fxexport.built_children import Parameter, built_children


def _rows(*children: str) -> list[tuple[str, ...]]:
    """Each instance's `__init__`: a core line, then its child (None where it builds none)."""
    return [("self.lin = nn.Linear(4, 4)", f"self.down = {child}") for child in children]



CASES = [
    # (name, instances' children, class parameters, the test, the flag it adds)
    ("int_others_one", _rows("nn.Conv2d(4, 8, 1, stride=2)", "None", "nn.Conv2d(4, 8, 1, stride=2)"),
     (Parameter("stride", "1", ("2", "1", "2")),), "stride != 1", None),
    ("int_holders_one", _rows("nn.Conv2d(4, 8, 1, stride=1)", "None", "nn.Conv2d(4, 8, 1, stride=1)"),
     (Parameter("stride", "2", ("1", "2", "1")),), "stride == 1", None),
    # `1.0 != 1` is False in Python: a float parameter is no test, or the holders would build nothing
    ("float_is_no_test", _rows("nn.LeakyReLU(1.0)", "None", "nn.LeakyReLU(1.0)"),
     (Parameter("negative_slope", "1", ("1.0", "1", "1.0")),), "use_down", ("True", "False", "True")),
    ("bool_is_no_test", _rows("nn.Tanh()", "None"), (Parameter("residual", "False", ("True", "False")),), "use_down", ("True", "False")),
    # a parameter the child does not read tells the holders apart only by chance
    ("unread_int_is_no_test", _rows("nn.Tanh()", "None", "nn.Tanh()"), (Parameter("stride", "1", ("2", "1", "2")),),
     "use_down", ("True", "False", "True")),
    ("parameter_only_holders_pass", _rows("nn.Linear(4, 3)", "None", "nn.Linear(4, 5)"),
     (Parameter("out_features", "None", ("3", "None", "5")),), "out_features is not None", None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "rows", "parameters", "test", "flag"), CASES, ids=[c[0] for c in CASES])
def test_the_class_builds_the_child_under_a_test_true_for_its_holders_alone(name, rows, parameters, test, flag) -> None:
    held = frozenset(r for r, row in enumerate(rows) if row[1] != "self.down = None")
    built = built_children(rows, held, (("down", 1),), {}, parameters, lambda base: base)
    assert built is not None
    assert built.lines[0] == f"if {test}:"
    assert built.lines[-2:] == ("else:", "    self.down = None")
    assert tuple(p.values for p in built.parameters) == ((flag,) if flag else ())


def test_a_child_with_a_literal_no_parameter_carries_is_passed_in() -> None:
    rows = _rows("nn.Linear(4, 3)", "None", "nn.Linear(4, 5)")
    assert built_children(rows, frozenset({0, 2}), (("down", 1),), {}, (), lambda base: base) is None
