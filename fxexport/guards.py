"""Input checks for torch.export graphs, as readable code instead of the opaque `_guards_fn`.

torch.export specialises a program to the shapes, dtypes and constants it was traced with
(within declared `Dim` ranges). The generated forward checks its inputs the same way and
raises a ValueError that says what was expected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import fx

from .names import is_plain_identifier, quote

Literal = Callable[[Any], str]
# loader.py's check of one tensor input; module.py imports it when a forward checks its inputs.
CHECK_INPUT = "check_input"


def is_guards_module(module: object) -> bool:
    """torch.export's `_guards_fn` child: opaque compiled checks that fxexport writes out as code."""
    return type(module).__name__ == "GuardsFn" and type(module).__module__.startswith("torch.export")


def _symbol_range(value: torch.SymInt) -> tuple[int | None, int | None]:
    shape_env = value.node.shape_env
    bounds = shape_env.var_to_range.get(value.node.expr)
    if bounds is None:
        return None, None
    lower, upper = bounds.lower, bounds.upper
    low = int(lower) if getattr(lower, "is_finite", True) and lower != -float("inf") else None
    return low, _finite_upper(upper)


def _finite_upper(upper: Any) -> int | None:
    """A shape environment's upper bound as an int; None for no bound (`oo`, `int_oo`)."""
    return int(upper) if getattr(upper, "is_finite", True) and str(upper) not in ("oo", "int_oo") else None


def _bounds(expr: str, size: Any, seen: dict[str, str], equal: list[str]) -> int | tuple[int | None, int | None] | None:
    """What the size at `expr` must be: the int; a (least, most) range of a dynamic dimension seen
    here first; or None, for any size or for one that must equal a size seen before (`equal` gets
    that condition)."""
    if isinstance(size, int):
        return size
    symbol = str(size.node.expr)
    if symbol in seen:
        equal.append(f"{expr} != {seen[symbol]}")
        return None
    seen[symbol] = expr
    if not size.node.expr.is_Symbol:
        return _derived_bounds(expr, size, equal)
    low, high = _symbol_range(size)
    if low is not None and low <= 2:
        low = None  # 2 is the shape environment's own floor for a dynamic size, not the user's minimum
    return None if low is None and high is None else (low, high)


def _derived_bounds(expr: str, size: torch.SymInt, equal: list[str]) -> tuple[None, int] | None:
    """A size derived from a dynamic dimension (`32 * h`): a multiple of its factor (`equal` gets that
    condition), at most its largest value; no least, as the shape environment keeps 2 as the floor of
    `h` whatever the user's minimum."""
    node = size.node.expr
    coefficient, rest = node.as_coeff_Mul()
    if coefficient.is_Integer and int(coefficient) > 1 and rest.is_Symbol:
        equal.append(f"{expr} % {int(coefficient)} != 0")
    try:
        high = _finite_upper(size.node.shape_env.bound_sympy(node).upper)
    except Exception:  # noqa: BLE001 - an expression the shape environment cannot bound: no range
        return None
    return None if high is None else (None, high)


def _tensor_check(name: str, value: torch.Tensor, seen: dict[str, str], literal: Literal) -> list[str]:
    """`check_input(x, "x", torch.float32, (2, None, 6))` (loader.py), then a line for each size that must
    equal one seen before (the same dynamic dimension in two inputs)."""
    entries: list[str] = []
    equal: list[str] = []
    for index, size in enumerate(value.shape):
        entries.append(repr(_bounds(f"{name}.shape[{index}]", size, seen, equal)))  # 2, None or (None, 16)
    shape = f"({', '.join(entries)}{',' if len(entries) == 1 else ''})"
    lines = [f"{CHECK_INPUT}({name}, {quote(name)}, {literal(value.dtype)}, {shape})"]
    for condition in equal:
        message = f'f"{name}: expected {condition.replace(" != ", " == ")}, got {{list({name}.shape)}}"'
        lines += [f"if {condition}:", f"    raise ValueError({message})"]
    return lines


def input_checks(placeholders: list[tuple[fx.Node, str]], literal: Literal) -> list[str]:
    """Lines that check each placeholder against the value it was traced with (`node.meta['val']`)."""
    lines: list[str] = []
    seen: dict[str, str] = {}
    for node, name in placeholders:
        if "val" not in node.meta or not is_plain_identifier(name):
            continue
        value = node.meta["val"]
        if isinstance(value, torch.Tensor):
            lines += _tensor_check(name, value, seen, literal)
        elif isinstance(value, torch.SymInt):
            conditions: list[str] = []
            bounds = _bounds(name, value, seen, conditions)
            low, high = bounds if isinstance(bounds, tuple) else (None, None)
            if low is not None:
                conditions.append(f"{name} < {low}")
            if high is not None:
                conditions.append(f"{name} > {high}")
            if conditions:
                lines += [f"if {' or '.join(conditions)}:", f'    raise ValueError(f"{name}: out of the exported range, got {{{name}}}")']
        elif value is None or isinstance(value, (bool, int, float, str)):
            code = literal(value)
            check = f"{name} is not {code}" if value is None or isinstance(value, bool) else f"{name} != {code}"
            message = quote(f"{name}: this export is specialised to {code}, got ")
            lines += [f"if {check}:", f"    raise ValueError({message} + repr({name}))"]
    return lines
