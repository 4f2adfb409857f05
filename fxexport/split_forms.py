"""A forward's last statements written as another forward writes the same computation, split as that one is.

timm pvt_v2's attention computes its keys and values in one source line, `kv = self.kv(x).reshape(...)`.
An instance that reduces `x` first (its optional `sr`) writes that line as three statements, so that the
reduced `x` is freed before the next runs (inlining.py); one that does not writes it whole. Joined as one
class branching on the child, the two tails would sit apart, each under its side of the `if`, though they
compute the same; and a trace of that export, finding the split statements in its source, writes them
split for both. Written split on both sides first, the tails are shared, and the export is a fixed point.
"""

from __future__ import annotations

from dataclasses import replace

from .code_slots import ASSIGNED, filled, number_slots, parameter_names
from .flags import literals_apart
from .inlined_forms import canonical
from .ir import ClassIR

MAX_SPLIT = 6  # statements more the split tail may have


def split_alike(a: list[ClassIR], b: list[ClassIR]) -> tuple[list[ClassIR], list[ClassIR]]:
    """Both sides' classes, each with its last statements written as the other side's first class writes
    them where those are split further and compute the same."""
    return [_split(c, b[0].forward_lines) for c in a], [_split(c, a[0].forward_lines) for c in b]


def _split(cls: ClassIR, other: tuple[str, ...]) -> ClassIR:
    lines = split_like(cls.forward_lines, other, parameter_names(cls.forward_params))
    return cls if lines == cls.forward_lines else replace(cls, forward_lines=lines)


def split_like(own: tuple[str, ...], other: tuple[str, ...], inputs: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
    """`own` with its longest tail that computes what a longer tail of `other` does, but for which values
    are written inside the statement reading them (inlined_forms.canonical) and for number literals,
    written as `other`'s tail with `own`'s literals; `own` where there is none, or where that tail deletes
    a name `own` never binds there (`inputs`: its forward's)."""
    best = None
    for n in range(1, len(own) + 1):
        mine = canonical(literals_apart(own[-n:])[0])
        if mine is None:
            break
        m = next((m for m in range(n + 1, min(len(other), n + MAX_SPLIT) + 1) if canonical(literals_apart(other[-m:])[0]) == mine), None)
        if m is not None:
            best = (n, m)
    if best is None:
        return own
    n, m = best
    tail, slots = other[-m:], number_slots(other[-m:], nested=True)
    literals = [s.text for s in number_slots(own[-n:], nested=True)]
    if len(slots) != len(literals):
        return own
    written = filled(tail, slots, literals)
    if canonical(written) != canonical(own[-n:]) or not _deletes_bound((*own[:-n], *written), len(own) - n, inputs):
        return own  # the literals in other places, or a `del` of the other side's value
    return (*own[:-n], *written)


def _deletes_bound(lines: tuple[str, ...], start: int, inputs: list[str] | tuple[str, ...]) -> bool:
    """True when every name a `del` from line `start` on deletes is an input or bound on an earlier line,
    and not deleted since (the other side's tail may start with a `del` this side ran before it)."""
    bound = set(inputs)
    for k, line in enumerate(lines):
        text = line.strip()
        if text.startswith("del "):
            names = set(text[4:].replace(" ", "").split(","))
            if k >= start and not names <= bound:
                return False
            bound -= names  # deleted, or (in a block) maybe: deleting it again could fail
        if (assigned := ASSIGNED.match(text)) is not None:
            bound.update(assigned[1].replace(" ", "").split(","))
    return True
