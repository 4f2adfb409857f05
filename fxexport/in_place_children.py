"""Children instances of one source class build or not, each applied in place: one forward for all.

timm's GhostBottleneck builds `conv_dw` and `bn_dw` when its stride is 2, `se` when it has a ratio
and `shortcut` when its channels change, and applies each where it has it (`out = self.se(out)`).
Its instances are then up to eight codes. Where the instances of a source class differ only in
such children (two or more of them: one alone is optional_children.py's), every instance takes
the forward with all of them, each under `if self.<child> is not None:` (children always present
together under one), and builds `self.<child> = None` where it has none; the child lines are then
children its callers pass (or the class builds: built_children.py), and the instances one class.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import cast

from .child_lines import attribute, init_template
from .code_slots import filled, line_tokens, masked, number_slots, variable_tokens
from .flags import LITERAL
from .inlined_forms import canonical
from .ir import ClassIR
from .kept_inputs import kept_input
from .optional_children import reads
from .regions import IN_PLACE, code_lines, indented

Known = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class _Applied:
    """An in-place child of one class: where its forward applies it and where `__init__` builds it,
    counted in the lines that remain without such children (the gap before that line)."""

    child: str
    forward_gap: int
    lines: tuple[str, ...]  # its forward lines: the comments quoting its source line, then the call
    init_gap: int
    init_at: int  # its line in `__init__`: children register in their class's own order (state_dict keys)
    init_line: str


@dataclass(frozen=True)
class _Parts:
    """A class without its in-place children, and those children."""

    forward: tuple[str, ...]
    init: tuple[str, ...]
    applied: tuple[_Applied, ...]
    splits: tuple[tuple[str, str, str], ...] = ()  # a child's call taken out of a statement: (its line, the statement then, before)


def in_place_children(level: list[ClassIR], known: Known) -> list[ClassIR]:
    """The classes, those of a family differing only in in-place children given every one of them."""
    families: dict[tuple[object, ...], list[tuple[ClassIR, _Parts]]] = {}
    for cls in written_as_holders(level):
        parts = None if cls.is_root or cls.parent or cls.takes_children else _parts(cls)
        if parts is not None:
            core = replace(cls, init_lines=parts.init)
            key = (*cls.source, cls.forward_params, init_template(core, known), masked(parts.forward, number_slots(parts.forward)))
            families.setdefault(key, []).append((cls, parts))
    out = {c.name: c for c in level}
    for family in families.values():
        for cls in _padded(family) or ():
            out[cls.name] = cls
    return [out[c.name] for c in level]


def written_as_holders(level: list[ClassIR]) -> list[ClassIR]:
    """The classes, each that lacks children others of its source class apply in place and writes the
    same code as one of those without them, but with values inside the statements reading them or locals
    of other names (inlined_forms.canonical; a loop among them: Res2Net's blocks but the first of a
    stage), given that one's lines without them and with its own literals."""
    out = {c.name: c for c in level}
    for family in source_families(level):
        for cls in family:
            out[cls.name] = next((found for other in family if other is not cls and (found := _as_holder(cls, other))), cls)
    return [out[c.name] for c in level]


def _as_holder(cls: ClassIR, holder: ClassIR) -> ClassIR | None:
    """`cls` written as `holder` without the in-place children `cls` does not build, if that is its code."""
    built = {attribute(line) for line in cls.init_lines}
    applied = {m[2] for line in holder.forward_lines if (m := IN_PLACE.fullmatch(line))}
    lacking = applied - built
    parts = _applied_parts(holder, lacking) if lacking else None
    if parts is None or len(code_lines(parts.forward)) < len(code_lines(cls.forward_lines)):
        return None
    slots, own = number_slots(parts.forward), number_slots(cls.forward_lines)
    if len(slots) != len(own):
        return None
    written = filled(parts.forward, slots, [s.text for s in own])
    if written == cls.forward_lines or canonical(written, renamed=True) != canonical(cls.forward_lines, renamed=True):
        return None
    return replace(cls, forward_lines=written)


def _parts(cls: ClassIR, shared: frozenset[str] = frozenset()) -> _Parts | None:
    """The class's in-place children taken out, but those `shared`, and those it reads elsewhere too (its
    activation, applied in a loop and at the end), which no class could lack; None where one is built twice."""
    forward, synthetic = _calls_apart(cls, shared)
    applied_at = []
    for j, line in enumerate(forward):
        found = IN_PLACE.fullmatch(line)
        if found is None or found[2] in shared:
            continue
        child = found[2]
        built = [k for k, text in enumerate(cls.init_lines) if attribute(text) == child]
        others = [text for k, text in enumerate(forward) if k != j] + [t for k, t in enumerate(cls.init_lines) if k not in built]
        if len(built) != 1:
            return None
        if reads(tuple(others), child):
            return _parts(cls, shared | {child})  # its line as it was: no statement of its own
        first = j
        while first > 0 and j not in synthetic and forward[first - 1].startswith("#"):
            first -= 1
        applied_at.append((child, first, j, built[0]))
    splits = tuple((forward[j], *synthetic[j]) for _, _, j, _ in applied_at if j in synthetic)
    return replace(_taken_apart(tuple(forward), cls.init_lines, applied_at), splits=splits)


def _taken_apart(forward: tuple[str, ...], init: tuple[str, ...], applied_at: list[tuple[str, int, int, int]]) -> _Parts:
    """The forward and `__init__` without each child's lines: (child, its first forward line (a comment
    quoting its source), its call's line, its `__init__` line)."""
    taken_forward = {k for _, first, j, _ in applied_at for k in range(first, j + 1)}
    taken_init = {k for *_, k in applied_at}
    kept_forward = [k for k in range(len(forward)) if k not in taken_forward]
    kept_init = [k for k in range(len(init)) if k not in taken_init]
    applied = tuple(
        _Applied(child, sum(k < first for k in kept_forward), tuple(forward[first : j + 1]), sum(k < i for k in kept_init), i, init[i])
        for child, first, j, i in applied_at
    )
    return _Parts(tuple(forward[k] for k in kept_forward), tuple(init[k] for k in kept_init), applied)


def _calls_apart(cls: ClassIR, shared: frozenset[str] = frozenset()) -> tuple[list[str], dict[int, tuple[str, str]]]:
    """The forward with a child called inside a statement on a name read nowhere after it (`return
    out.add_(self.shortcut(x))`, as torch.export records `x += self.shortcut(x)`) called in a statement of its
    own before it (`x = self.shortcut(x)`, before the comments quoting the statement's source), and the
    indices of those statements, each with the statement as rewritten and as it was. Only where no call of
    the statement ends before it: calls run in the order they did (a random draw in each would draw otherwise)."""
    out: list[str] = []
    synthetic: dict[int, tuple[str, str]] = {}
    lines = cls.forward_lines
    found = [[] if line.startswith(("#", " ")) or IN_PLACE.fullmatch(line) else list(_CALL.finditer(line)) for line in lines]
    if not any(len(calls) == 1 for calls in found):
        return list(lines), synthetic
    reads = [[t.string for t in variable_tokens(line_tokens(line))] for line in lines]
    last_read = {name: j for j, names in enumerate(reads) for name in names}
    for j, (line, calls) in enumerate(zip(lines, found)):
        if len(calls) == 1 and calls[0][1] not in shared and reads[j].count(calls[0][2]) == 1 and last_read[calls[0][2]] == j and ")" not in line[: calls[0].start()]:
            call = calls[0]
            comments = len(out) - next((k + 1 for k in range(len(out) - 1, -1, -1) if not out[k].startswith("#")), 0)
            original = line
            line = line[: call.start()] + call[2] + line[call.end() :]
            synthetic[len(out) - comments] = (line, original)
            out.insert(len(out) - comments, f"{call[2]} = {call[0]}")
        out.append(line)
    return out, synthetic


_CALL = re.compile(r"self\.(\w+)\(([A-Za-z_]\w*)\)")


def _padded(family: list[tuple[ClassIR, _Parts]]) -> list[ClassIR] | None:
    """Each class of the family with every child any of them applies; None where they differ in no
    more than one child, apply one in other places, or in orders no one forward keeps."""
    holders: dict[str, set[int]] = {}
    for i, (_, parts) in enumerate(family):
        for a in parts.applied:
            holders.setdefault(a.child, set()).add(i)
    optional = [c for c, held in holders.items() if len(held) < len(family)]
    if len(optional) < 2:
        return None
    places: dict[str, tuple[int, int, str]] = {}  # child -> its forward gap, init gap and call (one in every holder)
    for _, parts in family:
        for a in parts.applied:
            if places.setdefault(a.child, (a.forward_gap, a.init_gap, a.lines[-1])) != (a.forward_gap, a.init_gap, a.lines[-1]):
                return None
    order = _order([[a.child for a in parts.applied] for _, parts in family])
    built = _order([[a.child for a in sorted(parts.applied, key=lambda a: a.init_at)] for _, parts in family])
    if order is None or built is None:
        return None
    lines = {a.child: a.lines for _, parts in reversed(family) for a in parts.applied}  # the first holder's comments
    return [_with_all(cls, parts, (order, built), places, lines, frozenset(optional), holders) for cls, parts in family]


def _order(sequences: list[list[str]]) -> list[str] | None:
    """One order of all the children that keeps each class's, children no class orders first seen first
    (None where two classes disagree)."""
    seen = list(dict.fromkeys(child for sequence in sequences for child in sequence))
    after = {child: {b for sequence in sequences for a, b in zip(sequence, sequence[1:]) if a == child} for child in seen}
    waiting = {child: sum(child in later for later in after.values()) for child in seen}
    order: list[str] = []
    while len(order) < len(seen):
        ready = next((child for child in seen if child not in order and waiting[child] == 0), None)
        if ready is None:
            return None
        order.append(ready)
        for child in after[ready]:
            waiting[child] -= 1
    return order


def _with_all(
    cls: ClassIR,
    parts: _Parts,
    orders: tuple[list[str], list[str]],
    places: dict[str, tuple[int, int, str]],
    lines: dict[str, tuple[str, ...]],
    optional: frozenset[str],
    holders: dict[str, set[int]],
) -> ClassIR:
    """The class's forward applying every child (the optional ones under `if`) and `__init__` building each
    (None where it has none); children always present together go under one `if`."""
    order, built = orders  # the forward's order of the children, and `__init__`'s
    own = {a.child: a.init_line for a in parts.applied}
    forward: list[str] = []
    init: list[str] = []
    for gap in range(len(parts.forward) + 1):
        run: list[str] = []
        for child in (c for c in order if places[c][0] == gap):
            if run and holders[child] != holders[run[0]]:
                forward += _applied(run, lines, optional)
                run = []
            run.append(child)
        forward += _applied(run, lines, optional)
        forward += parts.forward[gap : gap + 1]
    for gap in range(len(parts.init) + 1):
        init += [own.get(child, f"self.{child} = None") for child in built if places[child][1] == gap]
        init += parts.init[gap : gap + 1]
    forward = _joined_back(forward, parts.splits)
    return replace(cls, forward_lines=tuple(forward), init_lines=tuple(init), whole_children=cls.whole_children | optional)


def _joined_back(forward: list[str], splits: tuple[tuple[str, str, str], ...]) -> list[str]:
    """The forward with each call taken out of a statement that stands right before it again (not under
    `if`: a child every class applies) written back inside it (`return self.proj(out)`)."""
    for call, rewritten, original in splits:
        at = next((k for k, line in enumerate(forward) if line == call), None)
        if at is None:
            continue
        after = next((k for k in range(at + 1, len(forward)) if not forward[k].startswith("#")), None)
        if after is not None and forward[after] == rewritten:
            forward = [*forward[:at], *forward[at + 1 : after], original, *forward[after + 1 :]]
    return forward


def _applied(run: list[str], lines: dict[str, tuple[str, ...]], optional: frozenset[str]) -> list[str]:
    """The lines applying a run of children one class always has together: under `if` where optional."""
    body = [line for child in run for line in lines[child]]
    if not run or run[0] not in optional:
        return body
    return [f"if self.{run[0]} is not None:", *indented(body)]


def across_codes(level: list[ClassIR], known: Known) -> list[ClassIR]:
    """The classes, those of a source class running two codes besides the children some build (a
    residual only some add: ReXNet's LinearBottleneck, a MobileNetV2-style block) given every such child,
    each applied under `if self.<child> is not None:`. Each code is then one class, and generalize joins
    the two on a flag. A child applied to an input the forward keeps for later is first applied in place
    (kept_inputs.py)."""
    out = {c.name: c for c in level}
    for family in source_families(level):
        for cls in _across(family, known) or ():
            out[cls.name] = cls
    return [out[c.name] for c in level]


def source_families(level: list[ClassIR]) -> list[list[ClassIR]]:
    """The classes of each source class and forward parameters (roots, classes defined inside others and
    containers taking their children aside)."""
    families: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in level:
        if not (cls.is_root or cls.parent or cls.takes_children):
            families.setdefault((*cls.source, cls.forward_params), []).append(cls)
    return list(families.values())


def _across(family: list[ClassIR], known: Known) -> list[ClassIR] | None:
    """The family with every child some build and each applies in place, where the classes run two codes
    without those children, and in one of them some build a child and others do not; else None."""
    built: list[set[str]] = [{attribute(line) for line in cls.init_lines} - {""} for cls in family]
    some = set[str]().union(*built) - built[0].intersection(*built[1:])
    if len(family) < 3 or not some:
        return None  # two classes running two codes: optional_children branches on the child
    family = [_kept(cls, some & held) for cls, held in zip(family, built)]
    parts = [_applied_parts(cls, some) for cls in family]
    if any(p is None for p in parts):
        return None
    found = cast(list[_Parts], parts)
    optional = frozenset(a.child for p in found for a in p.applied)
    cores = {init_template(replace(cls, init_lines=p.init), known) for cls, p in zip(family, found)}
    if not optional or len(cores) != 1:
        return None
    codes = _codes(found)
    if len(codes) > 2:  # some may write a source line whole where others write it as statements
        found = _statements_alike(found)
        codes = _codes(found)
    holders = {child: {i for i, p in enumerate(found) for a in p.applied if a.child == child} for child in optional}
    if len(codes) != 2 or not any(0 < len(held & set(rows)) < len(rows) for held in holders.values() for rows in codes.values()):
        return None
    built_order = _order([[a.child for a in sorted(p.applied, key=lambda a: a.init_at)] for p in found])
    init_gaps = {(a.child, a.init_gap) for p in found for a in p.applied}
    if built_order is None or len(init_gaps) != len(optional):
        return None
    out: list[ClassIR] = list(family)
    code_places: list[dict[str, tuple[int, int, str]]] = []
    for rows in codes.values():
        places: dict[str, tuple[int, int, str]] = {}
        for i in rows:
            for a in found[i].applied:
                if places.setdefault(a.child, (a.forward_gap, a.init_gap, a.lines[-1])) != (a.forward_gap, a.init_gap, a.lines[-1]):
                    return None
        code_places.append(places)
    any_lines = {a.child: a.lines for p in reversed(found) for a in p.applied}
    for (code, rows), places in zip(codes.items(), code_places):
        lines = any_lines | {a.child: a.lines for i in reversed(rows) for a in found[i].applied}
        for other, other_places in zip(codes, code_places):  # a child none of the code's classes builds
            for child in set(other_places) - set(places):
                gap, init_gap, call = other_places[child]
                if (mapped := _gap_in(code, other, gap)) is not None:
                    places[child] = (mapped, init_gap, call)
        order = _order([[a.child for a in found[i].applied] for i in rows] + [[a.child for a in p.applied] for p in found])
        if order is None or set(places) != optional:
            return None
        for i in rows:
            out[i] = _with_all(family[i], found[i], (order, built_order), places, lines, optional, holders)
    return out


def _gap_in(code: tuple[str, ...], other: tuple[str, ...], gap: int) -> int | None:
    """Where in `code` (a forward none of whose classes builds a child) the child goes that `other` applies
    at `gap`: before the statement matching the one it precedes there (and the comments quoting its source),
    or after the one matching the one it follows (gcvit's last stage norms after its blocks, whatever their
    number); None where neither matches. Statements anchor it, not comments, which may sit elsewhere. The
    code's classes build it as None: the place only has to read well."""
    mine = [k for k, line in enumerate(code) if not line.startswith("#")]
    theirs = [k for k, line in enumerate(other) if not line.startswith("#")]
    following = sum(k < gap for k in theirs)  # the statement after the gap, counted in statements
    opcodes = difflib.SequenceMatcher(None, [other[k] for k in theirs], [code[k] for k in mine], autojunk=False).get_opcodes()
    for tag, i1, i2, j1, _ in opcodes:
        if tag == "equal" and i1 <= following < i2:
            at = mine[j1 + following - i1]
            while at > 0 and code[at - 1].startswith("#"):
                at -= 1
            return at
    for tag, i1, i2, j1, _ in opcodes:
        if tag == "equal" and i1 < following == i2:
            return mine[j1 + following - i1 - 1] + 1
    return len(code) if following == len(theirs) else None


def _codes(found: list[_Parts]) -> dict[tuple[str, ...], list[int]]:
    """The classes (by index) of each forward without the optional children, literals aside."""
    codes: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(found):
        codes.setdefault(masked(p.forward, number_slots(p.forward)), []).append(i)
    return codes


def _statements_alike(found: list[_Parts]) -> list[_Parts]:
    """The parts, a class holding no child whose forward is another's with values written inside the
    statements reading them (inlined_forms.py) given that other forward, the one with more statements."""
    keys = [canonical(filled(p.forward, slots, [LITERAL] * len(slots)), renamed=True) for p in found for slots in [number_slots(p.forward)]]
    out = list(found)
    for key in {k for k in keys if k is not None}:
        rows = [i for i, k in enumerate(keys) if k == key]
        template = found[max(rows, key=lambda i: len(code_lines(found[i].forward)))].forward
        exact = canonical(template, renamed=True)
        for i in rows:
            if found[i].forward != template and not found[i].applied and canonical(found[i].forward, renamed=True) == exact:
                out[i] = _Parts(template, found[i].init, ())
    return out


def _kept(cls: ClassIR, children: set[str]) -> ClassIR:
    """The class with the input a child is applied to kept for later first applied in place (kept_inputs.py)."""
    for child in sorted(children):
        if not any((m := IN_PLACE.fullmatch(line)) and m[2] == child for line in cls.forward_lines):
            kept = kept_input(cls.forward_lines, cls.forward_params, child)
            if kept is not None:
                return replace(cls, forward_lines=kept)
    return cls


def _applied_parts(cls: ClassIR, children: set[str]) -> _Parts | None:
    """The class without the lines building and applying in place those of `children` it builds; None where
    one is built twice, read elsewhere or not applied in place once."""
    forward = cls.forward_lines
    applied_at = []
    for child in sorted(children, key=lambda c: next((k for k, t in enumerate(cls.init_lines) if attribute(t) == c), -1)):
        built = [k for k, text in enumerate(cls.init_lines) if attribute(text) == child]
        if not built:
            continue
        calls = [j for j, line in enumerate(forward) if (m := IN_PLACE.fullmatch(line)) and m[2] == child]
        if len(built) != 1 or len(calls) != 1:
            return None
        j = calls[0]
        others = [text for k, text in enumerate(forward) if k != j] + [t for k, t in enumerate(cls.init_lines) if k != built[0]]
        if reads(tuple(others), child):
            return None
        first = j
        while first > 0 and forward[first - 1].startswith("#"):
            first -= 1
        applied_at.append((child, first, j, built[0]))
    applied_at.sort(key=lambda found: found[1])
    return _taken_apart(tuple(forward), cls.init_lines, applied_at)
