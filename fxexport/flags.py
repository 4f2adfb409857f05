"""Two forwards of one class as one, branching on a flag the constructor takes.

torchvision's `InvertedResidual` builds the same layers in every block, and adds its input back
only where the shapes allow (`if self.use_res_connect: return x + self.conv(x)`). Traced, each
instance runs only its own side, so the blocks come out as two codes of one `__init__`. They are
one class whose forward holds both, the common lines once and the rest under `if self.<flag>:`,
and each instance is built with its side (`InvertedResidual(16, 96, residual=True)`). The flag is
named after what its side adds: `residual` for adding a forward input back, `use_<name>` for the
first function or layer only that side calls, else `variant`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .code_slots import (
    ASSIGNED,
    called_names,
    filled,
    line_tokens,
    number_slots,
    parameter_names,
    rename_variables,
    variable_names,
    variable_tokens,
)
from .regions import Segment, code_lines, indented, region_segments, regions_joined, returns, written


def flag_name(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> str:
    """What the flagged forward does that the plain one does not, as a parameter name."""
    inputs = parameter_names(params)
    if _adds_input(flagged, inputs) and not _adds_input(plain, inputs):
        return "residual"
    seen = {name for line in code_lines(plain) for name in called_names(line)}
    bound = {m[1] for line in flagged if (m := re.match(r"\s*for (\w+) in ", line))}  # a loop's variable says nothing
    for line in code_lines(flagged):
        for name in _called(line):
            if name not in seen and name not in bound and name.strip("_"):
                return f"use_{name.strip('_').lower()}"
    return "variant"


def flagged_side(a: tuple[str, ...], b: tuple[str, ...], params: tuple[str, ...]) -> bool:
    """True when `b` is the side the flag turns on (the one that adds something), else `a` is."""
    name_a, name_b = flag_name(b, a, params), flag_name(a, b, params)
    if (name_a == "residual") != (name_b == "residual"):  # a shortcut is the flag, whatever the other side calls
        return name_b == "residual"
    if (name_a == "variant") != (name_b == "variant"):
        return name_a == "variant"
    return len(b) >= len(a)


def branched(
    plain: tuple[str, ...], flagged: tuple[str, ...], condition: str, negated: str, params: tuple[str, ...] = (), regions: bool = False
) -> tuple[str, ...]:
    """The statements both forwards share once, the rest under `if <condition>:` (`if <negated>:` for
    the plain side alone). A loop and its body are one statement; a side whose own lines are only
    comments has none. Where the last statements differ only in the names of their locals, the
    flagged side's locals take the plain side's names, so they are shared too (`params`: the
    forward's parameters, never renamed). With `regions`, where one `if` would not read well
    (few_lines_apart), straight-line forwards branch in several places (regions.py)."""
    parts = _parts(plain, flagged, params)
    if regions and _in_regions(parts, plain, flagged, params):
        joined = regions_joined(plain, flagged, condition, negated, params)
        if joined is not None:
            return joined
    return _joined(parts, condition, negated) or plain


# Stands for each number literal while forwards are compared apart from their literals (a name, so
# that the lines still parse; no generated code holds it, see member_forwards).
LITERAL = "__literal__"
_LITERAL = re.compile(rf"\b{LITERAL}\b")


def literals_apart(lines: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines with each number literal (number_slots, in blocks too) written LITERAL, and the literals, in order."""
    slots = number_slots(lines, nested=True)
    return filled(lines, slots, [LITERAL] * len(slots)), tuple(s.text for s in slots)


@dataclass(frozen=True)
class Placed:
    """A forward as its part of a branched one: the lines, and the literals (their places in order)
    it takes from the other side's first forward, for lines it never runs."""

    lines: tuple[str, ...]
    borrowed: frozenset[int]


def member_forwards(
    forwards: list[tuple[str, ...]], flagged: list[bool], condition: str, negated: str, params: tuple[str, ...] = (), regions: bool = False
) -> list[Placed] | None:
    """Each forward as its part of one forward branching on `condition`, where the forwards of each side
    (`flagged`) are one code but for their number literals: the branched code of the first of each side,
    its literals written back per forward (its own side's and the shared lines' from itself, the other
    side's from that side's first forward, which it never runs). Every result has the same literals in
    the same places, so those that differ become parameters. None where a side is not one code apart
    from its literals (or has no forward), or a literal cannot be placed. With `regions`, the code may
    branch in several places (branched)."""
    if all(flagged) or not any(flagged) or any(_LITERAL.search(line) for f in forwards for line in f):
        return None
    apart = [literals_apart(f) for f in forwards]
    plain, marked = apart[flagged.index(False)], apart[flagged.index(True)]
    if any(text != (marked if side else plain)[0] for (text, _), side in zip(apart, flagged)):
        return None
    segments, template = _segments(plain[0], marked[0], condition, negated, params, regions)
    counts = [(_literal_count(shared), _literal_count(mine), _literal_count(theirs)) for shared, mine, theirs in segments]
    if (sum(s + p for s, p, _ in counts), sum(s + f for s, _, f in counts)) != (len(plain[1]), len(marked[1])):
        return None
    if _literal_count(template) != sum(s + p + f for s, p, f in counts):
        return None  # the branched code holds, in each place, the flagged side's own literals, then the plain side's
    out = []
    for (_, values), side in zip(apart, flagged):
        order, borrowed = _member_literals(values, (plain if side else marked)[1], counts, side)
        lines = _literals_written(template, order)
        if len(number_slots(lines, nested=True)) != len(order):
            return None
        out.append(Placed(lines, borrowed))
    return out


def code_counts(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...] = (), regions: bool = False) -> tuple[int, int, int]:
    """The lines of code (comments aside) of the forward branching between the two that both sides run,
    that only the plain side runs, and that only the flagged side runs."""
    segments, _ = _segments(plain, flagged, "c", "not c", params, regions)
    return tuple(sum(len(code_lines(segment[k])) for segment in segments) for k in range(3))  # type: ignore[return-value]


def _segments(
    plain: tuple[str, ...], flagged: tuple[str, ...], condition: str, negated: str, params: tuple[str, ...], regions: bool
) -> tuple[tuple[Segment, ...], tuple[str, ...]]:
    """The branched code of the two forwards (branched) and its segments: shared lines, or each side's own."""
    parts = _parts(plain, flagged, params)
    if regions and _in_regions(parts, plain, flagged, params):
        found = region_segments(plain, flagged, params)
        if found is not None:
            return found, written(found, condition, negated)
    head, only_plain, only_flagged, tail = parts
    return ((head, (), ()), ((), only_plain, only_flagged), (tail, (), ())), branched(plain, flagged, condition, negated, params)


def _member_literals(
    own: tuple[str, ...], other: tuple[str, ...], counts: list[tuple[int, int, int]], flagged: bool
) -> tuple[tuple[str, ...], frozenset[int]]:
    """A forward's literals in the order the branched code holds them, and which of them (by place) it
    borrows from the other side's first forward: in each place the sides differ, the flagged side's
    own literals come first, then the plain side's."""
    order: list[str] = []
    borrowed: set[int] = set()
    mine = theirs = 0  # literals taken so far from `own`, and from `other`
    for shared, only_plain, only_flagged in counts:
        order += own[mine : mine + shared]
        mine, theirs = mine + shared, theirs + shared
        for count, is_own in ((only_flagged, flagged), (only_plain, not flagged)):
            if is_own:
                order += own[mine : mine + count]
                mine += count
            else:
                borrowed.update(range(len(order), len(order) + count))
                order += other[theirs : theirs + count]
                theirs += count
    return tuple(order), frozenset(borrowed)


def _literal_count(lines: tuple[str, ...]) -> int:
    return sum(len(_LITERAL.findall(line)) for line in lines)


def _literals_written(lines: tuple[str, ...], literals: tuple[str, ...]) -> tuple[str, ...]:
    """The lines with each LITERAL, in order, replaced by the next of `literals`."""
    given = iter(literals)
    return tuple(_LITERAL.sub(lambda _: next(given), line) for line in lines)


def few_lines_apart(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...] = (), regions: bool = False) -> bool:
    """True when one forward branching between the two reads well: at most SLACK lines of code longer
    than the longer of them, or each side's own code at most SHORT_BRANCH lines (comments aside). Two
    long codes apart read better as classes of their own than both under one `if`. With `regions`,
    also where straight-line forwards branching in several places read well (regions.py)."""
    parts = _parts(plain, flagged, params)
    if _reads_well(parts, plain, flagged):
        return True
    return regions and regions_joined(plain, flagged, "c", "not c", params) is not None


def _in_regions(parts: tuple[tuple[str, ...], ...], plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> bool:
    """True where the forwards should branch in several places if they can: one `if` would not read well,
    would hold both forwards whole (no statement shared before or after it), or would be longer."""
    if not _reads_well(parts, plain, flagged) or not code_lines((*parts[0], *parts[3])):
        return True
    found = region_segments(plain, flagged, params)
    if found is None:
        return False
    places = sum(1 for shared, _, _ in found if not shared)
    # lines of all kinds (a place may add the notes quoting each side's source), each place after the first paying for itself
    return len(_joined(parts, "c", "c")) - len(written(found, "c", "c")) >= max(places - 1, 1)


def _reads_well(parts: tuple[tuple[str, ...], ...], plain: tuple[str, ...], flagged: tuple[str, ...]) -> bool:
    _, only_plain, only_flagged, _ = parts
    if max(len(code_lines(only_plain)), len(code_lines(only_flagged))) <= SHORT_BRANCH:
        return True  # lines of code: comments quoting the source (torch.export) would count twice
    return len(code_lines(_joined(parts, "c", "c"))) <= max(len(code_lines(plain)), len(code_lines(flagged))) + SLACK


def _joined(parts: tuple[tuple[str, ...], ...], condition: str, negated: str) -> tuple[str, ...]:
    """The lines of `_parts` as one forward; () when neither side has lines of its own (one code)."""
    head, only_plain, only_flagged, tail = parts
    if not only_plain and not only_flagged:
        return ()
    if not only_flagged:
        return (*head, f"if {negated}:", *indented(only_plain), *tail)
    if not only_plain:
        return (*head, f"if {condition}:", *indented(only_flagged), *tail)
    if not tail and returns(only_flagged[-1]):  # a top-level return: the plain side follows without else
        return (*head, f"if {condition}:", *indented(only_flagged), *only_plain)
    return (*head, f"if {condition}:", *indented(only_flagged), "else:", *indented(only_plain), *tail)


SLACK = 4  # lines a flag may add over the longer forward (the if, an else, a line written twice)
SHORT_BRANCH = 8  # lines of its own each side may have, however many a flag adds


def same_code(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...] = ()) -> bool:
    """True when the two forwards differ only in comments (where they sit too) or in the names of their locals."""
    _, only_plain, only_flagged, _ = _parts(code_lines(plain), code_lines(flagged), params)
    return not only_plain and not only_flagged


def _parts(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """(shared head, plain's own lines, flagged's own lines, shared tail)."""
    plain = _returned_by_name(_rebinding_renamed(_head_renamed(plain, flagged, params), flagged, params), flagged)
    flagged = _kept_as_input(_rebound_input_renamed(flagged, plain, params), plain, params)
    a, b = _statements(plain), _statements(_aligned(plain, flagged, params))
    start, end = _shared(a, b)
    only_plain, only_flagged = _lines(a[start : len(a) - end]), _lines(b[start : len(b) - end])
    only_plain = only_plain if code_lines(only_plain) else ()
    only_flagged = only_flagged if code_lines(only_flagged) else ()
    return _lines(a[:start]), only_plain, only_flagged, _lines(a[len(a) - end :])


def _aligned(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...]:
    """`flagged` with its locals renamed so that its last statements read as `plain`'s, where they differ
    only in the names of locals (one name for one name, each way); `flagged` as it is otherwise."""
    fixed = set(parameter_names(params))
    mine, theirs = _locals(flagged) - fixed, _locals(plain) - fixed
    renames: dict[str, str] = {}
    for x, y in zip(reversed(_statements(plain)), reversed(_statements(flagged))):
        found = _correspondence(x, y, mine, theirs, renames)
        if found is None:
            break
        renames = found
    renames = {k: v for k, v in renames.items() if k != v}
    names = variable_names(flagged)
    if not renames or any(v in names and v not in renames for v in renames.values()):
        return flagged  # a new name would be one the flagged side already uses for something else
    return tuple(rename_variables(line, renames) for line in flagged)


_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*) = (.*)")  # `name = value`: one local bound


def _head_renamed(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...]:
    """`plain` with the values its first statements bind named as the flagged side names them, where
    they compute the same: one side writes `layers_0 = self.layers[0](x)`, ..., `x = torch.cat([x,
    layers_0, ...])`, `return self.aggregation(x)`; the other, which adds `x` back, `out = self.layers[0](x)`,
    ..., `out = torch.cat([x, out, ...])`, `out = self.aggregation(out)` (timm's hgnet). A value is renamed
    from its binding to the statement binding its name again (_value_renamed), where the name it takes
    is not read or bound again in `plain` after it."""
    statements, theirs = _statements(plain), _statements(flagged)
    for k in range(min(len(statements), len(theirs))):
        if statements[k] == theirs[k] and not returns(statements[k][0]):
            continue
        mine, other = _one_binding(statements[k]), _one_binding(theirs[k])
        if mine is None or other is None or mine[1] != other[1]:
            break
        later = _lines(statements[k + 1 :])
        if other[0] in variable_names(later):
            break
        statements = [*statements[:k], (f"{other[0]} = {mine[1]}",), *_value_renamed(statements[k + 1 :], mine[0], other[0])]
    renamed = _lines(statements)
    return renamed if _common_statements(renamed, flagged, params) > _common_statements(plain, flagged, params) else plain


def _value_renamed(statements: list[tuple[str, ...]], old: str, new: str) -> list[tuple[str, ...]]:
    """`statements` reading the value `old` names as `new`, up to the one statement of one line that binds
    `old` again (its value reads the old one; the chain it starts keeps its name: `out =
    self.conv1(x_preact)`, not `x_preact = self.conv1(x_preact)`). A compound statement binding it (a
    loop's `out = layer(out)`: which value a read reads is not known line by line) and all after it
    take `new` throughout, the name then naming every value it names."""

    def renamed(statement: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(rename_variables(line, {old: new}) for line in statement)

    for k, statement in enumerate(statements):
        bound = _ASSIGNMENT.fullmatch(statement[0]) if len(statement) == 1 else None
        if bound is not None and bound[1] == old:
            return [*map(renamed, statements[:k]), (f"{old} = {rename_variables(bound[2], {old: new})}",), *statements[k + 1 :]]
        if _binds(statement, old):
            break
    return [*map(renamed, statements)]


def _one_binding(statement: tuple[str, ...]) -> tuple[str, str] | None:
    """(name, value) of a statement `name = value` of one line, else None."""
    bound = _ASSIGNMENT.fullmatch(statement[0]) if len(statement) == 1 else None
    return (bound[1], bound[2]) if bound else None


def _rebinding_renamed(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...]:
    """`plain` with a parameter it rebinds named as the local the flagged side binds there instead, from
    that statement on: the side that adds `x` back keeps `x` and writes `out = self.conv(x)`, the other
    `x = self.conv(x)`; both then read `out = self.conv(x)`, `out = self.bn(out)`."""
    code_a, code_b = _code_statements(plain), _code_statements(flagged)
    names_a = variable_names(plain)
    for param in parameter_names(params):
        if any(re.match(rf"{re.escape(param)}\s*=(?!=)", line) for line in flagged):
            continue
        k = next((k for k, (_, s) in enumerate(code_a) if len(s) == 1 and re.match(rf"{re.escape(param)} = ", s[0])), None)
        if k is None or k >= len(code_b) or len(code_b[k][1]) != 1:
            continue
        local = _ASSIGNMENT.fullmatch(code_b[k][1][0])
        if local is None or local[1] in names_a or local[2] != code_a[k][1][0].split(" = ", 1)[1]:
            continue
        start = code_a[k][0]
        statements = _statements(plain)
        renamed = [f"{local[1]} = {local[2]}", *(rename_variables(line, {param: local[1]}) for line in _lines(statements[start + 1 :]))]
        return (*_lines(statements[:start]), *renamed)
    return plain


def _rebound_input_renamed(flagged: tuple[str, ...], plain: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...]:
    """`flagged` with an input it rebinds named, from that statement on, as a local of `plain` it does not
    use, where that makes more of their statements the same: one side writes `x = torch.cat(...)`,
    `x = x.view(...)`, the other `out = torch.cat(...)`, `out = out.view(...)`; both then end alike.

    Failing that, where the rebinding statement reads a local of `plain` that no later one does: as that
    local or one it does not use, whichever makes more of them the same once a value the flagged side
    alone binds is named as the input (_kept_as_input), those it does not use first. timm's PreActBasic:
    `x_preact = self.norm1(x)`, `shortcut = self.downsample(x_preact)`, `x = self.conv1(x_preact)`, ...,
    `return x + shortcut`, where the other side returns `out + x`; then `x = self.downsample(x_preact)`,
    `out = self.conv1(x_preact)` and one return."""
    unused, read_by_it = _input_renames(flagged, plain, params)
    best = _most_shared(flagged, unused, lambda lines: _common_statements(plain, lines, params))
    if best is not flagged or not read_by_it:
        return best
    return _most_shared(flagged, [*unused, *read_by_it], lambda lines: _common_statements(plain, _kept_as_input(lines, plain, params), params))


def _most_shared(flagged: tuple[str, ...], renames: list[tuple[str, ...]], shared: Callable[[tuple[str, ...]], int]) -> tuple[str, ...]:
    """The first of `renames` that shares the most statements (`shared`), where it shares more than
    `flagged` itself does; `flagged` otherwise."""
    best, most = flagged, shared(flagged)
    for renamed in renames:
        common = shared(renamed)
        if common > most:
            best, most = renamed, common
    return best


def _input_renames(
    flagged: tuple[str, ...], plain: tuple[str, ...], params: tuple[str, ...]
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """`flagged` with the first rebinding of an input and what follows naming it as a local of `plain`
    that nothing after that statement reads or binds: (those naming it as a local `flagged` does not
    use, those as one it uses that the rebinding statement reads)."""
    inputs = parameter_names(params)
    used = variable_names(flagged)
    statements = _statements(flagged)
    unused: list[tuple[str, ...]] = []
    read_by_it: list[tuple[str, ...]] = []
    for param in inputs:
        bound = ((k, m) for k, s in enumerate(statements) if len(s) == 1 and (m := _ASSIGNMENT.fullmatch(s[0])) and m[1] == param)
        found = next(bound, None)
        if found is None:
            continue
        k, rebinding = found
        before, later = _lines(statements[:k]), _lines(statements[k + 1 :])
        for local in sorted(_locals(plain) - set(inputs) - variable_names(later)):
            renamed = (*before, f"{local} = {rebinding[2]}", *(rename_variables(line, {param: local}) for line in later))
            if local not in used:
                unused.append(renamed)
            elif local in variable_names((rebinding[2],)):
                read_by_it.append(renamed)
    return unused, read_by_it


def _kept_as_input(flagged: tuple[str, ...], plain: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...]:
    """`flagged` with a local it alone binds, once, named as an input it neither reads nor binds after
    that, where that makes more of their statements the same than the one reading it: one side writes
    `downsample = self.downsample(out)`, ..., `return out + downsample` where the other returns `out + x`;
    both then end alike, the first with `x = self.downsample(out)` of its own (timm's NormFreeBlock:
    `shortcut = x`, `if self.downsample is not None: shortcut = self.downsample(out)`). A shared return
    alone is not worth it: the locals before it would take the other side's names, whatever they hold."""
    best, most = flagged, _common_statements(plain, flagged, params) + 1
    inputs = parameter_names(params)
    statements = _statements(flagged)
    for local in sorted(_locals(flagged) - _locals(plain) - set(inputs)):
        bound = [k for k, statement in enumerate(statements) if _binds(statement, local)]
        if len(bound) != 1 or len(statements[bound[0]]) != 1:
            continue
        k = bound[0]
        later = _lines(statements[k + 1 :])
        for param in inputs:
            if param in variable_names(later):  # read or bound after it
                continue
            renamed = (*_lines(statements[:k]), *(rename_variables(line, {local: param}) for line in _lines(statements[k:])))
            common = _common_statements(plain, renamed, params)
            if common > most:
                best, most = renamed, common
    return best


def _common_statements(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> int:
    """How many first and last statements the two have the same (the flagged side's locals named as the plain side's)."""
    return sum(_shared(_statements(plain), _statements(_aligned(plain, flagged, params))))


def _shared(a: list[tuple[str, ...]], b: list[tuple[str, ...]]) -> tuple[int, int]:
    """How many first statements (up to a return) and how many of the rest's last statements `a` and `b` have the same."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start] and not returns(a[start][0]):
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, end


def _returned_by_name(plain: tuple[str, ...], flagged: tuple[str, ...]) -> tuple[str, ...]:
    """`plain` ending `return self.bn(out)` written `out = self.bn(out)`, `return out` where the flagged
    side binds that value to a name before returning (its comment on the source line with it)."""
    code_a, code_b = _code_statements(plain), _code_statements(flagged)
    if not code_a or len(code_b) < len(code_a) + 1:
        return plain
    k = len(code_a) - 1
    last = code_a[k][1]
    bound = _ASSIGNMENT.fullmatch(code_b[k][1][0]) if len(code_b[k][1]) == 1 else None
    if len(last) != 1 or not last[0].startswith("return ") or bound is None or bound[2] != last[0][len("return ") :]:
        return plain
    statements = _statements(plain)
    before = _statements(flagged)[: code_b[k][0]]
    comments: list[str] = []
    while before and code_lines(before[-1]) == () and not (code_a[k][0] and statements[code_a[k][0] - 1] == before[-1]):
        comments.insert(0, before.pop()[0])
    return (*_lines(statements[: code_a[k][0]]), *comments, bound[0], f"return {bound[1]}")


def _code_statements(lines: tuple[str, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """(index among all statements, statement) of each statement that is code, not a comment."""
    return [(i, s) for i, s in enumerate(_statements(lines)) if code_lines(s)]


def _correspondence(x: tuple[str, ...], y: tuple[str, ...], mine: set[str], theirs: set[str], known: dict[str, str]) -> dict[str, str] | None:
    """`known` grown by the renames that make statement `y` read as `x`, or None when no renaming of locals does."""
    out = dict(known)
    if len(x) != len(y):
        return None
    for line_x, line_y in zip(x, y):
        tokens_x, tokens_y = line_tokens(line_x), line_tokens(line_y)
        if not tokens_x or len(tokens_x) != len(tokens_y):
            return None
        variables_y = {id(t) for t in variable_tokens(tokens_y)}
        for tx, ty in zip(tokens_x, tokens_y):
            if id(ty) in variables_y and ty.string in mine and tx.string in theirs:
                if out.get(ty.string, tx.string) != tx.string or (tx.string in out.values() and out.get(ty.string) != tx.string):
                    return None
                out[ty.string] = tx.string
            elif (tx.type, tx.string) != (ty.type, ty.string):
                return None
    return out


def _locals(lines: tuple[str, ...]) -> set[str]:
    """Names the lines bind: assignment targets and loop variables."""
    out: set[str] = set()
    for line in lines:
        if (m := re.match(r"\s*for ([A-Za-z_]\w*) in ", line)) or (m := ASSIGNED.match(line.lstrip())):
            out.update(name.strip() for name in m[1].split(","))
    return out


def _statements(lines: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Top-level statements: a line and the indented lines after it (a loop's body), an `if` with its
    `elif` and `else` parts."""
    out: list[tuple[str, ...]] = []
    for line in lines:
        if (line.startswith((" ", "\t")) or line == "else:" or line.startswith("elif ")) and out:
            out[-1] = (*out[-1], line)
        else:
            out.append((line,))
    return out


def _lines(statements: list[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(line for statement in statements for line in statement)


def _adds_input(lines: tuple[str, ...], inputs: list[str]) -> bool:
    """True when a line adds a forward input to something (`x + out`, `out + x`, `out += x`, `out.add_(x)`),
    up to the line that binds its name again (`x = x + self.attn(x)` adds it; a line after it adds another value).
    An input kept under another name (`shortcut = x`, kept_inputs.py) counts as the input."""
    code = code_lines(lines)
    kept = [(m[1], k + 1) for k, line in enumerate(code) if (m := re.fullmatch(r"(\w+) = (\w+)", line)) and m[2] in inputs and not _binds(code[:k], m[2])]
    for name, start in ((name, start) for name, start in (*((name, 0) for name in inputs), *kept) if name):
        n = re.escape(name)
        pattern = re.compile(rf"(?<![\w.]){n}\s*\+(?!=)|\+=?\s*{n}(?![\w.(\[])|\.add_?\({n}[,)]|(?<![\w.]){n}\.add_?\(")
        for line in code[start:]:
            if pattern.search(line):
                return True
            if _binds((line,), name):
                break
    return False


def _binds(lines: Sequence[str], name: str) -> bool:
    """True when one of the lines assigns `name` (a loop's variable too)."""
    return any(
        (bound := ASSIGNED.match(line.lstrip()) or re.match(r"\s*for (.+?) in ", line)) and name in (part.strip(" ()") for part in bound[1].split(","))
        for line in lines
    )


_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")  # a literal's words are no calls: "height ({})"


def _called(line: str) -> list[str]:
    """The last part of each called name in the line, in order: `roll` for `torch.roll(`, `proj` for `self.proj(`."""
    return [match[1].rpartition(".")[2] for match in _CALLED.finditer(_STRING.sub('""', line))]
