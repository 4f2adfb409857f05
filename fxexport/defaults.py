"""Keyword arguments a function call repeats from the function's own defaults, left out.

symbolic_trace records a torch function that dispatches through `__torch_function__` with every
argument spelled (`F.interpolate(x, size=s, scale_factor=None, mode="bilinear",
align_corners=False, recompute_scale_factor=None, antialias=False)` where the source wrote
`F.interpolate(x, size=s, mode="bilinear", align_corners=False)`). A keyword whose value is a
plain literal equal to the Python function's default (same type, same repr: `-0.0` is not `0.0`)
says nothing the call would not do without it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

_PLAIN = (bool, int, float, str, type(None))


def without_defaults(target: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` without those equal to `target`'s defaults."""
    if not kwargs:
        return kwargs
    defaults = _defaults(target)
    return {k: v for k, v in kwargs.items() if not (k in defaults and type(v) is type(defaults[k]) and repr(v) == repr(defaults[k]))}


def _defaults(target: Callable[..., Any]) -> dict[str, Any]:
    """The plain-literal defaults of a Python function's keyword-passable parameters; none for anything else."""
    try:
        return _signature_defaults(target)
    except TypeError:  # unhashable target
        return {}


@functools.lru_cache(maxsize=512)
def _signature_defaults(target: Callable[..., Any]) -> dict[str, Any]:
    if not inspect.isfunction(target):
        return {}  # builtins and operator overloads: their defaults are not Python's to read
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and type(p.default) in _PLAIN
    }
