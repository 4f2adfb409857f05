"""Two straight-line forwards as one that branches on a flag in several places.

torchvision's ShiftedWindowAttention rolls its input, masks the attention and rolls back only where
it shifts windows. Traced, each instance runs its own side, and the code both sides run lies between
the places where one side has lines of its own: the one `if` of flags.branched would hold most of the
forward twice. Here the two sides are aligned statement by statement. The flagged side's locals are
renamed, one value at a time (a name bound again is another value), to the plain side's names where
their statements match, and each place where the sides still differ goes under an `if <flag>:` of
its own (with `else:` where the plain side has lines there too). Each side of the result runs exactly
its own statements, its locals renamed without changing what any of them reads.
"""

from __future__ import annotations

import difflib
import keyword
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from .code_slots import ASSIGNED, line_tokens, parameter_names, per_line, replaced, variable_tokens

INDENT = "    "
MAX_REGIONS = 4  # places a forward may branch on one flag before two classes read better
SLACK = 4  # lines of code the branches may add over the longer side, besides PER_PLACE per place
PER_PLACE = 3  # an `if`, an `else` and a line of the other side's own (timm maxvit's window or grid partition)

_COMPOUND = re.compile(r"(if|elif|else|for|while|with|try|except|finally|def|class|async|match)\b")
# An optional child's block (in_place_children.py): a value rebound or not, as one statement that rebinds it.
OPTIONAL_TEST = re.compile(r"if self\.(\w+) is not None:")  # a child only some instances build applied under it
IN_PLACE = re.compile(r"(\w+(?:, \w+)*) = self\.(\w+)\(\1\)")  # a child applied in place: `x = self.downsample(x)`, `x, tokens = self.pool(x, tokens)`
_REBINDING = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=", "^=", ">>=", "<<=", "**=", ":="})


@dataclass(frozen=True)
class _Value:
    """One binding of a local: its name, the statement that binds it (-1: a forward input) and the last that reads it."""

    name: str
    bound: int
    last: int


@dataclass(frozen=True)
class _Flow:
    """A straight-line forward's values, and for each statement the value of each local token in it, in order."""

    values: tuple[_Value, ...]
    tokens: tuple[tuple[tuple[int, int, int], ...], ...]  # per line: (start column, end column, value index)
    fixed: frozenset[str]  # the names it reads that are not locals (F, torch, self, module constants)


Segment = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # (shared lines, plain's own, flagged's own)


def regions_joined(plain: tuple[str, ...], flagged: tuple[str, ...], condition: str, negated: str, params: tuple[str, ...]) -> tuple[str, ...] | None:
    """One forward running `flagged` where `condition` holds and `plain` where it does not, branching in
    two to MAX_REGIONS places; None where the forwards are not straight-line code, or the result would
    not read better than two classes."""
    segments = region_segments(plain, flagged, params)
    return None if segments is None else written(segments, condition, negated)


@per_line  # asked once when the classes are joined and again when their forward is written
def region_segments(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[Segment, ...] | None:
    """The joined forward as segments: lines both sides run, else each side's own lines (one of them
    may be empty); in the order they run. A flagged side's literals are its own; the shared lines and
    the plain side's own lines are the plain side's (its last `return` maybe bound to a name first)."""
    best: tuple[Segment, ...] | None = None
    for side in _plain_forms(plain, flagged, params):
        # the flagged side's locals named as the plain side's, or the other way round
        for mine, theirs in ((side, _aligned(side, flagged, params)), (_aligned(flagged, side, params), flagged)):
            segments = None if mine is None or theirs is None else _segments(mine, theirs, params)
            if segments is not None and (best is None or _length(segments) < _length(best)):
                best = segments
    return best


def _length(segments: tuple[Segment, ...]) -> tuple[int, int]:
    """Lines of code of the joined forward, then lines each side has of its own: the fewer the better."""
    return len(code_lines(written(segments, "c", "c"))), sum(len(code_lines(mine)) + len(code_lines(theirs)) for _, mine, theirs in segments)


def written(segments: tuple[Segment, ...], condition: str, negated: str) -> tuple[str, ...]:
    """The segments as one forward. In each place the sides differ, the flagged side's lines come
    before the plain side's (member_forwards places literals in that order)."""
    lines: list[str] = []
    for k, (shared, mine, theirs) in enumerate(segments):
        if shared:
            lines += shared
        elif not theirs:
            lines += [f"if {negated}:", *indented(mine)]
        elif not mine:
            lines += [f"if {condition}:", *indented(theirs)]
        elif k == len(segments) - 1 and returns(theirs[-1]):
            lines += [f"if {condition}:", *indented(theirs), *mine]
        else:
            lines += [f"if {condition}:", *indented(theirs), "else:", *indented(mine)]
    return tuple(lines)


def _plain_forms(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> list[tuple[str, ...]]:
    """`plain` as it is, and, where the sides return otherwise, ending `out = out.reshape(...)`, `return
    out` for `return out.reshape(...)`: the form in which a flagged side that goes on from that value
    matches it."""
    out = [plain]
    flow = _flow(plain, params)
    code = [i for i, line in enumerate(plain) if not _comment(line)]
    if flow is None or not code or not plain[code[-1]].startswith("return ") or plain[code[-1]] in code_lines(flagged)[-1:]:
        return out
    last = code[-1]
    expression = plain[last][len("return ") :]
    reads = [flow.values[v].name for _, _, v in flow.tokens[last]]
    if reads and not re.fullmatch(r"[A-Za-z_]\w*", expression):
        out.append((*plain[:last], f"{reads[0]} = {expression}", f"return {reads[0]}", *plain[last + 1 :]))
    return out


def _segments(plain: tuple[str, ...], renamed: tuple[str, ...], params: tuple[str, ...]) -> tuple[Segment, ...] | None:
    """The segments of two sides whose locals are named alike; None where they do not read well as one."""
    segments: list[Segment] = []
    shared = own_plain = own_flagged = 0
    mine_flow, theirs_flow = _flow(plain, params), _flow(renamed, params)
    if mine_flow is None or theirs_flow is None or _bound_and_fixed(mine_flow, theirs_flow):
        return None
    flows = (mine_flow, theirs_flow)
    added: tuple[list[tuple[int, str]], list[tuple[int, str]]] = ([], [])  # per side: (place, name) of a `del` both run
    notes: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # the comments each side's lines apart ended with
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, plain, renamed, autojunk=False).get_opcodes():
        mine, theirs = plain[i1:i2], renamed[j1:j2]
        if tag == "equal":
            if _by_chance(notes, mine):
                return None
            notes = ((), ())
            segments.append((mine, (), ()))
            shared += len(code_lines(mine))
            continue
        notes = (_last_comments(mine), _last_comments(theirs))
        mine, theirs = (mine if code_lines(mine) else ()), (theirs if code_lines(theirs) else ())
        if not mine and not theirs:
            if plain[i1:i2]:
                segments.append((plain[i1:i2], (), ()))  # comments only: the plain side's
            continue
        if _deletes_for_both(mine, theirs, (plain, i1), (renamed, j1), flows, added):
            segments.append((mine or theirs, (), ()))  # `del a, b` of values the other side holds unread: both run it
            continue
        own_plain, own_flagged = own_plain + len(code_lines(mine)), own_flagged + len(code_lines(theirs))
        segments.append(((), mine, theirs))
    segments = _notes_after(segments)
    if not all(_closed(part) for segment in segments for part in segment):
        return None  # an optional child's `if` apart from its body
    places = sum(1 for shared_lines, _, _ in segments if not shared_lines)
    longer = max(len(code_lines(plain)), len(code_lines(renamed)))
    joined = written(tuple(segments), "c", "c")
    if not 2 <= places <= MAX_REGIONS or len(code_lines(joined)) > longer + SLACK + PER_PLACE * places or shared < max(own_plain, own_flagged):
        return None
    return tuple(segments)


def _by_chance(notes: tuple[tuple[str, ...], tuple[str, ...]], shared: tuple[str, ...]) -> bool:
    """True where the statement both sides run comes, on each side, after a note quoting another source
    line (torch.export, `notes`): the sides' sources wrote it in two places, and its text matched by chance."""
    return all(notes) and notes[0] != notes[1] and not _comment(shared[0])


def _last_comments(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The comment lines the lines end with (all of them, where they are all comments)."""
    end = len(lines)
    while end > 0 and _comment(lines[end - 1]):
        end -= 1
    return lines[end:]


def _notes_after(segments: list[Segment]) -> list[Segment]:
    """The segments with the comments a side ends its own lines with (the note quoting the source line
    of the shared statement after them, which only one side has: `_by_chance` refuses two) before that
    statement: a note never ends a branch."""
    out = list(segments)
    for k in range(len(out) - 1):
        shared, mine, theirs = out[k]
        following = out[k + 1][0]
        if shared or not following:
            continue
        mine_notes, theirs_notes = _last_comments(mine), _last_comments(theirs)  # own lines hold code: never all
        if not (mine_notes or theirs_notes):
            continue
        out[k] = (shared, mine[: len(mine) - len(mine_notes)], theirs[: len(theirs) - len(theirs_notes)])
        out[k + 1] = ((*(mine_notes or theirs_notes), *following), (), ())
    return out


def _closed(lines: tuple[str, ...]) -> bool:
    """True when the lines hold each optional child's block whole: none starts in its body or ends on its `if`."""
    code = code_lines(lines)
    return not code or (not code[0][:1].isspace() and not OPTIONAL_TEST.fullmatch(code[-1]))


def _bound_and_fixed(a: _Flow, b: _Flow) -> bool:
    """True when a name one side binds is one the other reads from outside (a global): in one forward it
    would be a local on both sides."""
    return bool({v.name for v in a.values} & b.fixed or {v.name for v in b.values} & a.fixed)


_DEL = re.compile(r"del ([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*)$")


def _deletes_for_both(
    mine: tuple[str, ...],
    theirs: tuple[str, ...],
    plain_at: tuple[tuple[str, ...], int],
    flagged_at: tuple[tuple[str, ...], int],
    flows: tuple[_Flow, _Flow],
    added: tuple[list[tuple[int, str]], list[tuple[int, str]]],
) -> bool:
    """True where one side's own lines are only `del` statements and the other side, at that place,
    holds each name they delete, bound and never read or deleted again (by its own lines or by a `del`
    both run, `added`, which grows by these): deleting it there too frees it early and changes nothing
    else (so no `if` for a `del`)."""
    if bool(mine) == bool(theirs):
        return False
    own = mine or theirs
    side = 1 if mine else 0
    (lines, at), flow = (flagged_at, flows[1]) if mine else (plain_at, flows[0])
    matches = [_DEL.fullmatch(line) for line in code_lines(own)]
    if not all(matches):
        return False
    names = [name for m in matches if m for name in m[1].split(", ")]
    if len(set(names)) != len(names) or not all(_held_unread(lines, flow, at, name, added[side]) for name in names):
        return False
    added[side].extend((at, name) for name in names)
    return True


def _held_unread(lines: tuple[str, ...], flow: _Flow, at: int, name: str, added: list[tuple[int, str]]) -> bool:
    """True when `name` holds a value before line `at` that no line from `at` on reads (or deletes), and
    no line between its binding and `at` deleted it, nor a `del` both run (`added`)."""
    held = [v for v in flow.values if v.name == name and v.bound < at]
    if not held:
        return False
    value = held[-1]
    deleted = any((m := _DEL.fullmatch(line)) and name in m[1].split(", ") for line in lines[max(value.bound, 0) : at])
    deleted = deleted or any(n == name and value.bound < place <= at for place, n in added)
    return value.last < at and not deleted


def _aligned(plain: tuple[str, ...], flagged: tuple[str, ...], params: tuple[str, ...]) -> tuple[str, ...] | None:
    """`flagged` with each of its values named as the `plain` value its statement matches (statements
    compared with their locals masked), else as it was, else a free name: None where no renaming keeps
    every read reading the value it read. (Either side may be renamed after the other.)"""
    mine, theirs = _flow(plain, params), _flow(flagged, params)
    if mine is None or theirs is None:
        return None
    matched = _matched_values(plain, flagged, mine, theirs)
    taken = mine.fixed | theirs.fixed
    used = {v.name for v in mine.values} | {v.name for v in theirs.values} | taken
    names: list[str] = []
    for k, value in enumerate(theirs.values):
        if value.bound < 0:
            names.append(value.name)  # an input keeps its name
            continue
        candidates = [mine.values[matched[k]].name] if k in matched else []
        candidates += [value.name, *(f"{value.name}_{n}" for n in range(1, len(theirs.values) + 2) if f"{value.name}_{n}" not in used)]
        name = next((c for c in candidates if c not in taken and not _overlaps(value, c, theirs.values[:k], names)), None)
        if name is None:
            return None
        names.append(name)
    renamed = tuple(_renamed(line, spots, names) for line, spots in zip(flagged, theirs.tokens))
    check = _flow(renamed, params)
    if check is None or [[theirs.values[v].bound for *_, v in spots] for spots in theirs.tokens] != [
        [check.values[v].bound for *_, v in spots] for spots in check.tokens
    ]:
        return None
    return renamed


def _matched_values(plain: tuple[str, ...], flagged: tuple[str, ...], mine: _Flow, theirs: _Flow) -> dict[int, int]:
    """flagged value -> plain value, from the statements that match with their locals masked (one to one)."""
    keys_a = [_masked(line, spots) for line, spots in zip(plain, mine.tokens)]
    keys_b = [_masked(line, spots) for line, spots in zip(flagged, theirs.tokens)]
    out: dict[int, int] = {}
    claimed: set[int] = set()
    for block in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_matching_blocks():
        for n in range(block.size):
            for (*_, a), (*_, b) in zip(mine.tokens[block.a + n], theirs.tokens[block.b + n]):
                if b not in out and a not in claimed and (mine.values[a].bound < 0) == (theirs.values[b].bound < 0):
                    out[b] = a
                    claimed.add(a)
    return out


def _overlaps(value: _Value, name: str, earlier: tuple[_Value, ...], names: list[str]) -> bool:
    """True when an earlier value given `name` is still read after `value` is bound (or bound with it)."""
    return any(n == name and (other.bound == value.bound or other.last > value.bound) for other, n in zip(earlier, names))


def _flow(lines: tuple[str, ...], params: tuple[str, ...]) -> _Flow | None:
    """The values of a straight-line forward (one statement a line, no compound statement, no rebinding
    operator or scope of its own); None for any other code."""
    inputs = parameter_names(params)
    values = [_Value(name, -1, -1) for name in inputs]
    current = {name: k for k, name in enumerate(inputs)}
    bound_names = set(inputs)
    parsed: list[tuple[list[tokenize.TokenInfo], int] | None] = []
    in_block = False  # in the body of an optional child's `if self.<child> is not None:`
    for line in lines:
        if _comment(line):
            parsed.append(None)
            continue
        tokens = line_tokens(line)
        in_block = in_block and line.startswith(INDENT) if line[:1].isspace() else False
        if in_block and not IN_PLACE.fullmatch(line[len(INDENT) :]):
            return None
        if OPTIONAL_TEST.fullmatch(line):
            in_block = True
        elif not tokens or (line[:1].isspace() and not in_block) or _COMPOUND.match(line):
            return None
        if any(t.string in _REBINDING or t.string == "lambda" or f_string(t) for t in tokens):
            return None
        variables = variable_tokens(tokens)
        if any(t.string == "for" for t in tokens) or any(t.start[0] != 1 for t in variables):
            return None  # a comprehension binds names of its own; a statement on several lines
        target = ASSIGNED.match(line)
        end = target.end() if target else 0
        parsed.append((variables, end))
        if target:
            bound_names.update(name.strip() for name in target[1].split(","))
    tokens_per_line: list[tuple[tuple[int, int, int], ...]] = []
    fixed: set[str] = set()
    for i, entry in enumerate(parsed):
        if entry is None:
            tokens_per_line.append(())
            continue
        variables, end = entry
        spots: list[tuple[int, int, int]] = []
        for t in (t for t in variables if t.start[1] >= end):  # reads, before the statement binds
            if t.string not in bound_names:
                fixed.add(t.string)
            elif t.string not in current:
                return None  # read before it is bound
            else:
                k = current[t.string]
                values[k] = _Value(values[k].name, values[k].bound, i)
                spots.append((t.start[1], t.end[1], k))
        for t in (t for t in variables if t.start[1] < end):
            current[t.string] = len(values)
            values.append(_Value(t.string, i, i))
            spots.append((t.start[1], t.end[1], current[t.string]))
        tokens_per_line.append(tuple(sorted(spots)))
    if any(keyword.iskeyword(name) for name in bound_names):
        return None
    return _Flow(tuple(values), tuple(tokens_per_line), frozenset(fixed))


def f_string(token: tokenize.TokenInfo) -> bool:
    """An f-string, whose names are no tokens of their own before Python 3.12: refused."""
    return token.type == getattr(tokenize, "FSTRING_START", -1) or (token.type == tokenize.STRING and "f" in token.string.split("'")[0].split('"')[0].lower())


def _masked(line: str, spots: tuple[tuple[int, int, int], ...]) -> str:
    return replaced(line, [(start, end, "_") for start, end, _ in spots])


def _renamed(line: str, spots: tuple[tuple[int, int, int], ...], names: list[str]) -> str:
    return replaced(line, [(start, end, names[v]) for start, end, v in spots])


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def code_lines(lines: Sequence[str]) -> tuple[str, ...]:
    """The lines that are code, not comments."""
    return tuple(line for line in lines if not _comment(line))


def block_end(lines: Sequence[str], start: int) -> int:
    """Where the block under the line at `start` (its lines indented deeper) ends."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    return next((j for j in range(start + 1, len(lines)) if len(lines[j]) - len(lines[j].lstrip()) <= indent), len(lines))


def indented(lines: Sequence[str]) -> tuple[str, ...]:
    """The lines one level deeper (a branch's body)."""
    return tuple(INDENT + line for line in lines)


def returns(line: str) -> bool:
    """True for a `return` statement."""
    return line.startswith("return ") or line == "return"

