"""jsontext.dumps writes exactly what json.dumps(value, indent=2, sort_keys=True) writes."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from fxexport import jsontext

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=30)


@given(DOCUMENTS)
def test_same_text_as_json_dumps(document: object) -> None:
    assert jsontext.dumps(document) == json.dumps(document, indent=2, sort_keys=True)


def test_tuples_and_special_floats() -> None:
    document = {"shape": (1, 2), "values": [math.nan, math.inf, -math.inf, -0.0, 1e-300], "ü": "日本", "empty": [{}, []]}
    assert jsontext.dumps(document) == json.dumps(document, indent=2, sort_keys=True)


def test_keys_that_are_not_strings() -> None:
    for document in ({2: "b", 1: "a"}, {1.5: 0, -2.0: 1}, {True: 1, False: 0}):
        assert jsontext.dumps(document) == json.dumps(document, indent=2, sort_keys=True)
