"""Children some instances build whose output the others read as a default: one forward for all.

timm's MobileOneBlock sums its branches: `identity_out = 0`, then `if self.identity is not None:
identity_out = self.identity(x)`, and later `out += identity_out`. Traced, an instance without the
child reads the literal in the value's place (`out + 0`); dpn's DualPathBlock without a projection
reads its input where the others read the projection's output. Where a class's forward is another's
without the line `value = self.<child>(arg)`, reading one default in the value's place (a number,
None, or `arg` itself), both take the forward `value = <default>`, then `if self.<child> is not
None: value = self.<child>(arg)`, and the classes without the child build it as None; callers pass
the child (`whole_children`) and the classes are one code. A child others build in its place (dpn's
`c1x1_w_s2` where the rest build `c1x1_w_s1`) then takes an `if` of its own after the first's.
Classes reading other numbers there each keep theirs (generalize.py makes it a parameter). A child
some class still calls plainly after all is left to flags.py and optional_children.py, which take
every code of the family alike: one code written so and another not would join no more.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .child_lines import attribute, init_template
from .code_slots import (
    Slot,
    filled,
    line_tokens,
    masked,
    number_slots,
    replaced,
    variable_names,
    variable_tokens,
)
from .in_place_children import source_families
from .inlined_forms import canonical
from .ir import ClassIR
from .kept_inputs import binds
from .optional_children import reads
from .regions import INDENT, indented, returns
from .source_names import kept_input_alias

Known = dict[str, tuple[str, ...]]

_CHILD_CALL = re.compile(r"([A-Za-z_]\w*) = self\.(\w+)\(([A-Za-z_]\w*)?\)")
_SENTINEL = "7919"  # a number read in the value's place, to find where a class reads its default literal
_NAMED_DEFAULTS = ("None",)
_ROUNDS = 8


@dataclass(frozen=True)
class _Call:
    """A holder's line calling the child: the comments quoting its source from `first`, the call at `at`."""

    first: int
    at: int
    value: str
    child: str
    argument: str


@dataclass(frozen=True)
class _Defaulted:
    """A code's lines before and after where the value gets its default, the default, and the `if` blocks
    (children built in the call's place) already there."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    default: str
    blocks: tuple[str, ...]
    children: tuple[str, ...]
    literal: bool = False  # the default is a number the classes without the child read (a slot of the forward)
    as_holder: bool = False  # the classes without the child take the holder's lines as they are (its literals are theirs)


def defaulted_children(level: list[ClassIR], known: Known) -> list[ClassIR]:
    """The classes, those of a source class differing in such children given one forward."""
    out = {c.name: c for c in level}
    for family in ([c for c in found if c.init_lines] for found in source_families(level)):
        if len(family) > 1:
            out.update((c.name, c) for c in _joined(family, known))
    return [out[c.name] for c in level]


def _joined(family: list[ClassIR], known: Known) -> list[ClassIR]:
    """The family joined. A class written with a child's call under `if` that joins no class lacking the
    child after all keeps its plain call (its callers would pass the child for nothing); a child some
    class still calls plainly is left to the other joins (flags.py, optional_children.py), which take
    every class of the family alike (one code written so and one not would join no more)."""
    left: frozenset[str] = frozenset()
    kept: frozenset[tuple[str, str]] = frozenset()
    for _ in range(_ROUNDS):
        joined, written = _rounds(family, known, kept, left)
        idle = frozenset(key for key in written if not _joins_lacking(joined, *key))
        plain = frozenset(call.child for cls in joined for call in _child_calls(cls)) & _defaulted(joined)
        if not idle - kept and not plain:
            return _without_blocks(joined)
        kept, left = kept | idle, left | plain
    return family


def _without_blocks(family: list[ClassIR]) -> list[ClassIR]:
    """The family, a class joined to none given a joined code's forward where it is that code without a
    run of lines calling children it does not build, as it builds the defaulted ones: fastvit's
    MobileOneBlock of an identity norm alone (`out = 0 + x`) is the others' forward without their
    `conv_kxk` lines, read where it lacks the scale branch. The children it lacks it builds as None;
    optional_children.py then puts the run under `if`."""
    codes = [c for c in family if _defaults(c.forward_lines)]
    joined = {id(c) for c in codes}
    return [cls if id(cls) in joined else next(filter(None, (_without_run(cls, code) for code in codes)), cls) for cls in family]


def _without_run(cls: ClassIR, code: ClassIR) -> ClassIR | None:
    """`cls` running `code`'s forward without one run of lines, where that is its own code as its children go."""
    built = {attribute(line) for line in cls.init_lines if not line.endswith(" = None")}
    defaulted = {child for _, child, _ in _defaults(code.forward_lines)}
    missing = {attribute(line) for line in code.init_lines if not line.endswith(" = None")} - built - defaulted
    if code.source != cls.source or not missing or not built <= {attribute(line) for line in code.init_lines}:
        return None
    own = {canonical(c.forward_lines, renamed=True) for c in [cls, *(v[0] for v in _commuted_variants([cls]))]} - {None}
    lines = code.forward_lines
    for start, end in _runs(lines, missing):
        forward = (*lines[:start], *lines[end:])
        specialized = _specialized(forward, built)
        if specialized is not None and canonical(specialized, renamed=True) in own:
            init = list(cls.init_lines)
            lacking = sorted(defaulted - built, key=lambda child: _gap(code.init_lines, child, ()))
            for child in lacking:
                init.insert(_index(init, _gap(code.init_lines, child, (*lacking, *missing)), set()), f"self.{child} = None")
            return replace(cls, forward_lines=forward, init_lines=tuple(init), whole_children=cls.whole_children | defaulted)
    return None


_MAX_RUN = 6


def _runs(lines: tuple[str, ...], children: set[str]) -> Iterator[tuple[int, int]]:
    """[start, end) of each run of whole top-level statements (comments quoting them before) holding every
    line that reads one of `children`, up to _MAX_RUN lines, the return left out."""
    reading = [j for j, line in enumerate(lines) if any(f"self.{child}" in line for child in children)]
    if not reading or lines[reading[0]].startswith(" "):
        return
    first = reading[0]
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    for end in range(reading[-1] + 1, min(len(lines), first + _MAX_RUN) + 1):
        if end < len(lines) and lines[end].startswith(" "):
            continue
        if not any(returns(line) for line in lines[first:end]):
            yield first, end


def _specialized(lines: tuple[str, ...], built: set[str]) -> tuple[str, ...] | None:
    """The forward as it runs where the children `built` are built and its other defaulted ones None:
    each `if self.<child> is not None:` block of a given default as its body or gone, the default read in
    the value's place; None where a class would build two of one value's children."""
    for k in reversed(range(len(lines))):
        found = _given_default(lines, k)
        if found is None:
            continue
        value, default, calls, end = found
        children = [child for child, _ in calls if child in built]
        if len(children) > 1:
            return None
        if children:
            at = [child for child, _ in calls].index(children[0])
            blocks = [j for j in range(k + 1, end) if not lines[j].startswith(" ")]
            body = lines[blocks[at] + 1 : blocks[at + 1] if at + 1 < len(blocks) else end]
            lines = (*lines[:k], *(line[len(INDENT) :] for line in body), *lines[end:])
        else:
            after, _ = _read_as(lines[end:], value, default)
            lines = (*lines[:k], *after)
    return lines


def _rounds(
    family: list[ClassIR], known: Known, kept: frozenset[tuple[str, str]], left: frozenset[str]
) -> tuple[list[ClassIR], set[tuple[str, str]]]:
    """The family joined but on the children `left`, and the (class, child) of each plain call written
    under `if` (none of `kept`)."""
    written: set[tuple[str, str]] = set()
    for _ in range(_ROUNDS):
        joined = _join_once(family, known, left)
        if joined is None:
            joined, now = _as_defaulted(family, kept | {(c.name, child) for c in family for child in left})
            written |= now
            if not now:
                break
        family = joined
    return family, written


def _defaulted(family: list[ClassIR]) -> frozenset[str]:
    """The children some class of the family calls under `if`, its value given a default first."""
    return frozenset(child for cls in family for _, child, _ in _defaults(cls.forward_lines))


def _joins_lacking(family: list[ClassIR], name: str, child: str) -> bool:
    """True when the class runs the code of a class that builds the child as None."""
    code = {c.name: masked(c.forward_lines, number_slots(c.forward_lines)) for c in family}
    return any(code[c.name] == code[name] and f"self.{child} = None" in c.init_lines for c in family)


def _join_once(family: list[ClassIR], known: Known, left: frozenset[str]) -> list[ClassIR] | None:
    """The family with one holder code and one code lacking its child (none of `left`) joined; None where none joins."""
    codes: dict[tuple[str, ...], list[int]] = {}
    for i, cls in enumerate(family):
        codes.setdefault(masked(cls.forward_lines, number_slots(cls.forward_lines)), []).append(i)
    for holders in codes.values():
        for call in _child_calls(family[holders[0]]):
            if call.child in left:
                continue
            for lacking in codes.values():
                joined = _joined_pair(family, holders, lacking, call, known)
                if joined is not None:
                    return joined
    return None


def _as_defaulted(family: list[ClassIR], kept: frozenset[tuple[str, str]]) -> tuple[list[ClassIR], set[tuple[str, str]]]:
    """The family with every plain call of a child that others call under `if` (its value given a
    default first) written so too, but those `kept`, where no pair joins as they are: the same code for
    a class that always builds it (fastvit's blocks with an identity norm, beside those that may lack
    it, then join others lacking their scale branch); and the (class, child) of each."""
    defaults = {key: default for cls in family for key, default in _defaults(cls.forward_lines).items()}
    out, written = [], set()
    for cls in family:
        for call in _child_calls(cls):
            default = defaults.get((call.value, call.child, call.argument))
            if default is not None and (cls.name, call.child) not in kept:
                lines = cls.forward_lines
                forward = (*lines[: call.first], f"{call.value} = {default}", *_if_block(cls, call), *lines[call.at + 1 :])
                cls = replace(cls, forward_lines=forward, whole_children=cls.whole_children | {call.child})
                written.add((cls.name, call.child))
                break  # the calls' places have moved: one a round
        out.append(cls)
    return out, written


def _defaults(lines: tuple[str, ...]) -> dict[tuple[str, str, str], str]:
    """(value, child, argument) -> default of each `value = <default>` followed by `if` blocks calling children."""
    out = {}
    for k in range(len(lines)):
        found = _given_default(lines, k)
        if found is not None:
            value, default, calls, _ = found
            out.update({(value, child, argument): default for child, argument in calls})
    return out


def _given_default(lines: tuple[str, ...], k: int) -> tuple[str, str, list[tuple[str, str]], int] | None:
    """At line `k`, `value = <default>` and the `if self.<child> is not None:` blocks after it that call a
    child into the value: (value, default, (child, argument) of each, where they end); None for no block."""
    given = re.fullmatch(r"(\w+) = ([\w.]+)", lines[k])
    if given is None:
        return None
    end, calls = k + 1, []
    while end < len(lines) and (test := re.fullmatch(r"if self\.(\w+) is not None:", lines[end])):
        block = end + 1
        while block < len(lines) and lines[block].startswith("    "):
            block += 1
        call = _CHILD_CALL.fullmatch(lines[block - 1].strip())
        if call is None or call[1] != given[1] or call[2] != test[1]:
            break
        calls.append((call[2], call[3] or ""))
        end = block
    return (given[1], given[2], calls, end) if calls else None


def _child_calls(cls: ClassIR) -> list[_Call]:
    """The forward's lines `value = self.<child>(arg)` of a child built once and read nowhere else, the
    value bound there alone."""
    out = []
    lines = cls.forward_lines
    for j, line in enumerate(lines):
        found = _CHILD_CALL.fullmatch(line)
        if found is None or found[1] == found[3]:
            continue  # applied in place: in_place_children.py
        value, child = found[1], found[2]
        built = [text for text in cls.init_lines if attribute(text) == child]
        others = (*lines[:j], *lines[j + 1 :], *(text for text in cls.init_lines if attribute(text) != child))
        if len(built) != 1 or built[0].endswith(" = None") or reads(others, child) or _binds(lines, value) != [j]:
            continue
        first = j
        while first > 0 and lines[first - 1].startswith("#"):
            first -= 1
        out.append(_Call(first, j, value, child, found[3] or ""))
    return out


def _binds(lines: tuple[str, ...], name: str) -> list[int]:
    """The lines (top level or nested) that bind `name` (kept_inputs.binds)."""
    return [j for j, line in enumerate(lines) if binds(line.strip(), name)]


def _joined_pair(family: list[ClassIR], holders: list[int], lacking: list[int], call: _Call, known: Known) -> list[ClassIR] | None:
    holder, other = family[holders[0]], family[lacking[0]]
    if holder.source != other.source or call.child in {attribute(line) for line in other.init_lines}:
        return None
    lacking_classes = [family[i] for i in lacking]
    defaulted = _defaulted_block(holder, call, other) or _default_read(holder, call, lacking_classes)
    for commuted in [] if defaulted is not None else _commuted_variants(lacking_classes):
        defaulted = _default_read(holder, call, commuted)
        if defaulted is not None:
            family = [*family]
            for i, cls in zip(lacking, commuted):
                family[i] = cls
            break
    if defaulted is None:
        return None
    core = tuple(line for line in holder.init_lines if attribute(line) != call.child)
    other_core = tuple(line for line in other.init_lines if attribute(line) not in defaulted.children)
    if init_template(replace(holder, init_lines=core), known) != init_template(replace(other, init_lines=other_core), known):
        return None
    if any(attribute(line) in defaulted.children for line in holder.init_lines):
        return None
    out = list(family)
    for i in holders:
        out[i] = _holder_joined(family[i], call, defaulted, other)
    for i in lacking:
        out[i] = _lacking_joined(family[i], holder, call, defaulted)
    return out


def _commuted_variants(classes: list[ClassIR]) -> Iterator[list[ClassIR]]:
    """The classes with one line's `value + <number>` written `<number> + value` (or `*`), line by line:
    torch.export records the source's `0 + identity_out` so (`add(identity_out, 0)`), the same sum."""
    lines = classes[0].forward_lines
    for j in range(len(lines)):
        if _commuted(lines[j]) is None:
            continue
        variant = []
        for cls in classes:
            line = _commuted(cls.forward_lines[j]) if j < len(cls.forward_lines) else None
            if line is None:
                break
            variant.append(replace(cls, forward_lines=(*cls.forward_lines[:j], line, *cls.forward_lines[j + 1 :])))
        else:
            yield variant


def _commuted(line: str) -> str | None:
    """`y = x + 2` written `y = 2 + x` (a name and a number, added or multiplied: the same bits either
    way), the return alike; None for any other line."""
    found = re.fullmatch(r"( *(?:\w+ = |return ))([A-Za-z_]\w*) ([+*]) (\d+(?:\.\d*)?(?:e-?\d+)?)", line)
    return None if found is None else f"{found[1]}{found[4]} {found[3]} {found[2]}"


def _if_block(holder: ClassIR, call: _Call) -> tuple[str, ...]:
    lines = holder.forward_lines[call.first : call.at + 1]
    return (f"if self.{call.child} is not None:", *indented(lines))


def _defaulted_block(holder: ClassIR, call: _Call, other: ClassIR) -> _Defaulted | None:
    """Where `other` already gives the value its default and calls children of its own in the call's place
    (`x_s = x`, `if self.c1x1_w_s1 is not None: x_s = self.c1x1_w_s1(x)`), on the call's argument: those,
    where the rest is the holder's."""
    lines = other.forward_lines
    start = call.first
    found = _given_default(lines, start) if start < len(lines) else None
    if found is None:
        return None
    value, default, calls, end = found
    if value != call.value or any(argument != call.argument for _, argument in calls):
        return None
    before, after = holder.forward_lines[: call.first], holder.forward_lines[call.at + 1 :]
    if masked(lines[:start], number_slots(lines[:start])) != masked(before, number_slots(before)):
        return None
    if masked(lines[end:], number_slots(lines[end:])) != masked(after, number_slots(after)):
        return None
    return _Defaulted(lines[:start], lines[end:], default, lines[start + 1 : end], tuple(child for child, _ in calls))


def _default_read(holder: ClassIR, call: _Call, lacking: list[ClassIR]) -> _Defaulted | None:
    """Where the lacking classes are the holder without the call, reading one default in the value's
    place: the holder's lines with that default (a number each reads there, its own where they differ,
    None, or the call's argument while it still holds the value the call read)."""
    before, after = holder.forward_lines[: call.first], holder.forward_lines[call.at + 1 :]
    reading = [j for j, line in enumerate(after) if call.value in variable_names((line,))]
    if not reading:
        return None
    candidates = [_SENTINEL, *_NAMED_DEFAULTS]
    nested = any(after[j].startswith(" ") for j in reading)  # read in a loop: no other join keeps the source's form
    if call.argument and _argument_holds(after, reading, call.argument) and (nested or not _kept_first(holder, call)):
        candidates.insert(0, call.argument)
    target = masked(lacking[0].forward_lines, number_slots(lacking[0].forward_lines))
    for default in candidates:
        expected, places = _read_as(after, call.value, default)
        if masked((*before, *expected), number_slots((*before, *expected))) != target:
            continue
        if default != _SENTINEL:
            return _Defaulted(before, after, default, (), ())
        read = [_literal_read(cls, number_slots((*before, *expected)), len(before), places) for cls in lacking]
        if all(read):
            return _Defaulted(before, after, read[0] or "", (), (), literal=True)
    return _inlined_alike(before, after, call, [c for c in candidates if c != _SENTINEL], lacking)


def _inlined_alike(
    before: tuple[str, ...], after: tuple[str, ...], call: _Call, names: list[str], lacking: list[ClassIR]
) -> _Defaulted | None:
    """Where the lacking classes write a default inside the statement that reads it, which the holder writes
    as statements of its own (`out = self.fc(x) + 0 + s` for `out = self.fc(x) + i`, `out = out + s`): the
    same computation, literals and all (inlined_forms.canonical), read as the holder writes it."""
    numbers = {slot.text for slot in number_slots(lacking[0].forward_lines)}
    for default in (*names, *sorted(numbers)):
        expected, _ = _read_as(after, call.value, default)
        key = canonical((*before, *expected))
        if key is not None and all(canonical(cls.forward_lines) == key for cls in lacking):
            return _Defaulted(before, after, default, (), (), as_holder=True)
    return None


def _argument_holds(after: tuple[str, ...], reading: list[int], argument: str) -> bool:
    """True when the argument still holds the value the call read wherever the value is read: not bound
    again before the last read, nor at all where a read is in a block (a loop may read it after a bind)."""
    binds = _binds(after, argument)
    nested = any(after[j].startswith(" ") for j in reading)
    return not (binds and (nested or binds[0] <= reading[-1]))


def _literal_read(cls: ClassIR, slots: list[Slot], start: int, places: set[tuple[int, int]]) -> str | None:
    """The one number a class lacking the child reads in the value's places (`slots`: those of the holder's
    lines, the value read as a number at `places`, counted from line `start`); None where it reads several."""
    own = [s.text for s in number_slots(cls.forward_lines)]
    texts = {text for text, slot in zip(own, slots) if (slot.line - start, slot.start) in places}
    return texts.pop() if len(texts) == 1 else None


def _kept_first(holder: ClassIR, call: _Call) -> bool:
    """True when the source keeps the argument under the value's name first and calls the child on that
    (`residual = hidden_state`, ..., `residual = self.shortcut(residual)`): kept_inputs.as_in_source writes
    that form. Not where it calls the child on the argument itself (`x_s = x`, ..., `x_s = self.proj(x)`, as
    this module writes it); the caller joins anyway where a loop reads the value, which no other join
    writes in the source's form (the export, traced again, is this module's form then)."""
    kept = kept_input_alias(holder.source_forward)
    return kept is not None and kept[:2] == (call.value, call.argument) and call.child not in kept[3]


def _read_as(lines: tuple[str, ...], name: str, text: str) -> tuple[tuple[str, ...], set[tuple[int, int]]]:
    """The lines with each read of the variable `name` written `text` (and no `del` of it: a class without
    the child never bound it), and where each now starts."""
    out: list[str] = []
    places = set()
    for line in lines:
        if (deleted := re.fullmatch(r"( *)del (\w+(?:, \w+)*)", line)) and name in deleted[2].split(", "):
            kept = [n for n in deleted[2].split(", ") if n != name]
            out += [f"{deleted[1]}del {', '.join(kept)}"] if kept else []
            continue
        j = len(out)
        found = [t for t in variable_tokens(line_tokens(line)) if t.string == name]
        shift = 0
        for token in found:
            places.add((j, token.start[1] + shift))
            shift += len(text) - len(name)
        out.append(replaced(line, [(t.start[1], t.end[1], text) for t in found]))
    return tuple(out), places


def _holder_joined(cls: ClassIR, call: _Call, defaulted: _Defaulted, other: ClassIR) -> ClassIR:
    lines = cls.forward_lines
    forward = (*lines[: call.first], f"{call.value} = {defaulted.default}", *defaulted.blocks, *_if_block(cls, call), *lines[call.at + 1 :])
    init = list(cls.init_lines)
    for child in defaulted.children:
        at = _gap(other.init_lines, child, defaulted.children)
        init.insert(_index(init, at, {call.child}), f"self.{child} = None")
    return replace(cls, forward_lines=forward, init_lines=tuple(init), whole_children=cls.whole_children | {call.child, *defaulted.children})


def _lacking_joined(cls: ClassIR, holder: ClassIR, call: _Call, defaulted: _Defaulted) -> ClassIR:
    """A class without the child: the holder's forward, its own literals, or its own with the `if` added."""
    block = (f"{call.value} = {defaulted.default}", *defaulted.blocks, *_if_block(holder, call))
    if defaulted.as_holder:
        forward = (*defaulted.before, *block, *defaulted.after)
    elif defaulted.children:
        own = cls.forward_lines
        start = len(defaulted.before)
        end = start + 1 + len(defaulted.blocks)
        forward = (*own[:start], *own[start:end], *_if_block(holder, call), *own[end:])
    else:
        template = (*defaulted.before, *block, *defaulted.after)
        mine = number_slots(template)
        values = [s.text for s in number_slots(cls.forward_lines)]
        expected, places = _read_as(defaulted.after, call.value, _SENTINEL if defaulted.literal else defaulted.default)
        theirs = number_slots((*defaulted.before, *expected))
        kept = [text for text, slot in zip(values, theirs) if (slot.line - len(defaulted.before), slot.start) not in places]
        default = [_literal_read(cls, theirs, len(defaulted.before), places) or defaulted.default] if defaulted.literal else []  # its own
        before_count = len(number_slots(defaulted.before))
        texts = [*kept[:before_count], *default, *kept[before_count:]]
        if len(texts) != len(mine):
            return cls
        forward = filled(template, mine, texts)
    init = list(cls.init_lines)
    at = _gap(holder.init_lines, call.child, ())
    init.insert(_index(init, at, set(defaulted.children), after=True), f"self.{call.child} = None")
    return replace(cls, forward_lines=forward, init_lines=tuple(init), whole_children=cls.whole_children | {call.child, *defaulted.children})


def _gap(init: tuple[str, ...], child: str, others: tuple[str, ...]) -> int:
    """How many lines of `init` (other than the children in `others`) come before the child's."""
    at = next(k for k, line in enumerate(init) if attribute(line) == child)
    return sum(attribute(line) not in {child, *others} for line in init[:at])


def _index(init: list[str], gap: int, children: set[str], after: bool = False) -> int:
    """Where a line goes after `gap` of the lines not building one of `children` (after those children
    at that place too, with `after`)."""
    count = 0
    for k, line in enumerate(init):
        own = attribute(line) in children
        if count == gap and not (after and own):
            return k
        count += not own
    return len(init)
