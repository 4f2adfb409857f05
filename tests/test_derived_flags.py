"""A flag the merged class's other parameters decide in every instance is computed from them."""

from __future__ import annotations

import pytest

from fxexport.derived_flags import derived_flag

T, F = True, False
CASES = [
    # (the flag per class, the parameters' values per class, the test or None)
    pytest.param((T, F, T, F), {"stride": ("1", "2", "1", "2"), "out_channels": ("8", "8", "16", "16")}, "stride == 1", id="one int against 1"),
    pytest.param((F, T, F), {"stride": ("1", "2", "1")}, "stride != 1", id="one int against 1, negated"),
    pytest.param((T, F, F, T), {"in_channels": ("8", "8", "16", "16"), "out_channels": ("8", "16", "8", "16")},
                 "in_channels == out_channels", id="two ints equal"),
    pytest.param((T, F, F, F, T), {"stride": ("1", "2", "1", "1", "1"), "in_channels": ("8", "8", "8", "16", "16"), "out_channels": ("8", "8", "16", "8", "16")},
                 "stride == 1 and in_channels == out_channels", id="torchvision's use_res_connect"),
    pytest.param((F, F, T, T), {"in_channels": ("None", "8", "16", "24"), "out_channels": ("8", "16", "16", "24")},
                 "in_channels == out_channels", id="None is no int, and equals none"),
    pytest.param((T, F), {"stride": ("1", "2")}, None, id="two classes: too few to tell a rule from chance"),
    pytest.param((T, F, T, F), {"stride": ("1", "2", "3", "1")}, None, id="no plain test"),
    pytest.param((T, F, T), {"eps": ("1.0", "2.0", "1.0"), "flag": ("True", "False", "True")}, None, id="floats and bools are not tested"),
    pytest.param((T, T, T), {"stride": ("1", "1", "1")}, None, id="a flag on in every class is no flag"),
    pytest.param((T, F, T), {"width": ("64", "32", "64")}, None, id="an int against another value than 0 or 1: chance"),
]  # fmt: skip


@pytest.mark.parametrize(("flags", "parameters", "expected"), CASES)
def test_a_flag_the_parameters_decide_is_computed_from_them(flags, parameters, expected) -> None:
    assert derived_flag(flags, parameters) == expected
