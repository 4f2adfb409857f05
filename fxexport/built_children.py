"""An optional child the shared class builds itself, as the source did: `if stride != 1: self.downsample = ...`.
The same for a child some instances build as an nn.Identity (`else: self.downsample = nn.Identity()`).

An optional child (optional_children.py) is passed in by the caller where the class cannot build
it: `Block(64, 128, stride=2, downsample=nn.Sequential(...))`. Where every holder builds it with one
code whose literals are the class's own parameters (or the same in every holder), and something
the callers already pass tells the holders apart (a parameter only holders pass, or an int one
the child reads), the class builds it under that condition (`if stride != 1:`, `if out_channels_2
is not None:`), else under a new flag (`use_downsample`).
A child with a literal of its own (a width only it has) is passed in: `downsample=Downsampling(64,
128)` reads better than its arguments as parameters of the class.
ShuffleNet's blocks build their `branch1` when their stride is 2: its callers no longer write a
dozen lines of it per stage.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from .code_slots import filled, literal_slots, masked
from .instances import majority
from .spelled_calls import with_defaults, without_defaults

Known = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Parameter:
    """An `__init__` keyword parameter: its name, default, and value per instance of the group, as code."""

    name: str
    default: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class BuiltChildren:
    """The `__init__` lines that build the optional children in place of `self.<child> = <child>`, at the
    first child's line, and the keyword parameters they add."""

    at: int
    lines: tuple[str, ...]
    parameters: tuple[Parameter, ...]


def built_children(
    inits: list[tuple[str, ...]],
    held: frozenset[int],
    children: tuple[tuple[str, int], ...],
    known: Known,
    parameters: tuple[Parameter, ...],
    name: Callable[[str], str],
    weights: tuple[int, ...] | None = None,
    otherwise: str = "None",
    flags: tuple[Parameter, ...] = (),
) -> BuiltChildren | None:
    """How the class of a group of instances (their `__init__` lines) builds the optional children that the
    `held` ones build (name, line), adjacent lines one after another; None where it cannot: the holders
    build them with different code, or with literals of their own. `parameters` are the class's keyword
    parameters, the positional ones with no default; `name` gives a new flag an unused name; `weights`: the
    instances of each row (one each where not given), a new flag on by default where most build the children;
    `otherwise`: what the others set them to (`nn.Identity()` where they build an identity in their place);
    `flags`: those earlier children of the class added, one of which serves where it is true for the same holders."""
    rows = sorted(held)
    lines = [k for _, k in children]
    if not rows or lines != list(range(lines[0], lines[0] + len(lines))):
        return None
    built: list[tuple[str, str]] = []
    used: set[str] = set()
    for child, k in children:
        found = _child_code([inits[r][k] for r in rows], rows, known, parameters)
        if found is None:
            return None
        built.append((child, found[0]))
        used |= found[1]
    test, flag = _condition(held, weights or (1,) * len(inits), parameters, name, children[0][0], used, flags)
    code = [f"if {test}:", *(f"    self.{child} = {text}" for child, text in built), "else:"]
    code += [f"    self.{child} = {otherwise}" for child, _ in built]
    return BuiltChildren(lines[0], tuple(code), (flag,) if flag else ())


def _child_code(lines: list[str], rows: list[int], known: Known, parameters: tuple[Parameter, ...]) -> tuple[str, set[str]] | None:
    """The holders' constructor code for the child their lines build, each literal a parameter whose values
    it has in every holder, or the literal every holder writes, and the parameters it reads; None where
    neither serves."""
    texts = [with_defaults(line, known) for line in lines]  # `stride=1` written where others write `stride=2`
    slots = [literal_slots((text,), known) for text in texts]
    if len({masked((text,), s) for text, s in zip(texts, slots)}) != 1:
        return None
    filling = []
    for i, slot in enumerate(slots[0]):
        column = tuple(s[i].text for s in slots)
        found = _carrying(column, rows, parameters, slot.name)
        if len(set(column)) == 1 and found != slot.name and (len(rows) > 1 or column[0] in _PLAIN or column[0] == slot.default):
            found = None  # a literal every holder writes stays one, unless a parameter of its name carries it
        elif found is None:
            return None  # the holders' own literal: `downsample=Downsampling(64, 128)` reads better than its arguments apart
        filling.append(found if found is not None else column[0])
    code = without_defaults(filled((texts[0],), slots[0], filling)[0], known).split(" = ", 1)[1]
    return code, {p.name for p in parameters} & set(filling)


_PLAIN = frozenset({"0", "1", "-1", "True", "False", "None"})  # a kernel size of 1, not the width some parameter has


def _carrying(column: tuple[str, ...], rows: list[int], parameters: tuple[Parameter, ...], slot_name: str) -> str | None:
    """The parameter whose values in the holders are the column's, the one named as the slot first."""
    matching = [p.name for p in parameters if tuple(p.values[r] for r in rows) == column]
    return next((p for p in matching if p == slot_name), matching[0] if matching else None)


def _condition(
    held: frozenset[int],
    weights: tuple[int, ...],
    parameters: tuple[Parameter, ...],
    name: Callable[[str], str],
    child: str,
    used: set[str],
    flags: tuple[Parameter, ...] = (),
) -> tuple[str, Parameter | None]:
    """The test true for the holders alone, and the flag it adds (None where a parameter serves): a
    parameter only holders pass, one the child's code reads whose int value sets the holders apart
    (`if stride != 1:`), a flag an earlier child of the same holders added (`if use_partition_swap:` for
    `departition_swap` too), or a new flag."""
    rows = range(len(weights))
    for p in flags:
        if p.values == tuple(repr(r in held) for r in rows):
            return p.name, None
    for p in parameters:
        if p.default == "None" and frozenset(r for r in rows if p.values[r] != "None") == held:
            return f"{p.name} is not None", None
    tests = [test for p in parameters if p.name in used and (test := _telling(p, held)) is not None]
    if tests:
        return min(tests)[1], None
    flag = Parameter(name(f"use_{child}"), repr(majority(held, weights)), tuple(repr(r in held) for r in rows))
    return flag.name, flag


def _telling(p: Parameter, held: frozenset[int]) -> tuple[int, str] | None:
    """A test of an int parameter true for the holders alone, and its rank: `stride != 1` (the others
    have 1, or 0), then `stride == 1` (the holders have it). Values compare as numbers: `1.0` is no
    other value than `1`, so a float or bool parameter is never tested (a flag says it plainly), nor one
    whose values differ only by chance (`out_channels == 6`)."""
    values = [_int(v) for v in p.values]
    if any(v is None for v in values):
        return None
    mine = {v for r, v in enumerate(values) if r in held}
    others = {v for r, v in enumerate(values) if r not in held}
    if mine & others:
        return None
    if len(others) == 1 and others <= {0, 1}:
        return 1, f"{p.name} != {next(iter(others))}"
    if len(mine) == 1 and mine <= {0, 1}:
        return 2, f"{p.name} == {next(iter(mine))}"
    return None


def _int(text: str) -> int | None:
    """The value of an int literal (`1`, `-2`), else None (a float, a bool, anything else)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if type(value) is int else None
