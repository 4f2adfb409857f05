"""An input some callers leave out that the block computes itself then, as BART's positional embedding.

`BartLearnedPositionalEmbedding` makes its positions (`torch.arange(...)`) when the encoder calls
it without them and takes them from the decoder; the graph gives two forwards, one taking an input
more, that end in the same statements. Both become one forward that computes the input when it is
left out, as the source wrote it:

    def forward(self, x=None):
        if x is None:
            x = torch.arange(0, 8, dtype=torch.int64).expand(1, -1)
        else:
            x = x.unsqueeze(0)
        x = x + 2
        return F.embedding(x, self.weight)

Only where the shared ending reads one value from before it on each side (and the inputs both
take, which neither beginning rebinds): each side's beginning runs as it did, so every instance
computes exactly what it did. Callers are unchanged.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from .code_slots import (
    ASSIGNED,
    filled,
    line_tokens,
    masked_line,
    number_slots,
    parameter_names,
    rename_variables,
    variable_names,
    variable_tokens,
)
from .defaulted_inputs import Known, canonical, joined_passing_on, merged_already, one_input_apart, renumbered
from .flags import SHORT_BRANCH, SLACK, code_lines
from .ir import ClassIR
from .names import unique_identifier
from .regions import INDENT


@dataclass(frozen=True)
class _Parts:
    """A forward cut before its last `n` statements: the beginning, the ending, and the one value the ending reads from the beginning."""

    head: tuple[str, ...]
    tail: tuple[str, ...]
    value: str


def computed_inputs(level: list[ClassIR], known: Known, forwards: dict[str, tuple[str, ...]]) -> list[ClassIR]:
    """The level with the classes of each source class whose forwards differ by a last input the shorter
    one computes instead, as one forward computing it when it is None; not where the shorter one only leaves
    it out of a call of a child that defaults it to None and defaulted_inputs joins them as one call passing
    it (`forwards`: the forward parameters of the classes generalized so far, by name)."""
    out = {c.name: c for c in level}
    for longer, shorter in one_input_apart(level, known):
        if merged_already(out, longer + shorter) or joined_passing_on(longer, shorter, forwards):
            continue
        ending = _shared_ending(longer[0], shorter[0])
        if ending is None or not _reads_well(longer[0], shorter[0], ending):
            continue
        for cls in longer:  # its own code, and the shorter one's way to the value
            params, lines = _merged(cls, shorter[0], ending)
            out[cls.name] = replace(cls, forward_params=params, forward_lines=lines)
        for cls in shorter:  # the longer one's code, this one's way to the value and numbers in the shared ending
            params, lines = _merged(longer[0], cls, ending, numbers=cls)
            out[cls.name] = replace(cls, forward_params=params, forward_lines=lines)
    return [out[c.name] for c in level]


def _shared_ending(longer: ClassIR, shorter: ClassIR) -> int | None:
    """The most statements both forwards end with, computing the same from one value each, or None."""
    *inputs, extra = parameter_names(longer.forward_params)
    own = parameter_names(shorter.forward_params)
    for n in reversed(range(1, min(_code_count(longer.forward_lines), _code_count(shorter.forward_lines)) + 1)):
        mine, theirs = _parts(longer.forward_lines, n, inputs, extra), _parts(shorter.forward_lines, n, own, None)
        if mine is None or theirs is None or len(number_slots(mine.tail)) != len(number_slots(theirs.tail)):
            continue
        code = canonical(mine.tail, [*inputs, mine.value])
        if code is not None and code == canonical(theirs.tail, [*own, theirs.value]):
            return n
    return None


def _code_count(lines: tuple[str, ...]) -> int:
    return len(code_lines(lines))


def _reads_well(longer: ClassIR, shorter: ClassIR, n: int) -> bool:
    """As flags.py asks of a flag's branches: each beginning short, or few lines over the longer forward."""
    _, merged = _merged(longer, shorter, n)
    heads = (_cut(longer.forward_lines, n)[0], _cut(shorter.forward_lines, n)[0])
    if max(_code_count(head) for head in heads) <= SHORT_BRANCH:
        return True
    return _code_count(merged) <= max(_code_count(longer.forward_lines), _code_count(shorter.forward_lines)) + SLACK


def _cut(lines: tuple[str, ...], n: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines before the last `n` statements and from there (comments go with the statement they precede)."""
    start = len(lines)
    for _ in range(n):
        start -= 1
        while lines[start].lstrip().startswith("#"):
            start -= 1
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return lines[:start], lines[start:]


def _parts(lines: tuple[str, ...], n: int, inputs: list[str], extra: str | None) -> _Parts | None:
    """The forward cut before its last `n` statements, where its beginning is plain statements that rebind
    none of `inputs` and its ending reads one value of it (or `extra`)."""
    head, tail = _cut(lines, n)
    if canonical(head, inputs) is None:  # a block or a line that does not parse alone
        return None
    bound = _bound(head)
    read = [name for name in _reads(tail) if name in bound or name == extra]
    if bound & set(inputs) or len(read) != 1 or (extra is None and not bound):
        return None
    return _Parts(head, tail, read[0])


def _bound(lines: tuple[str, ...]) -> set[str]:
    """The names the statements assign."""
    return {name.strip() for line in lines if (found := ASSIGNED.match(line)) for name in found[1].split(",")}


def _reads(lines: tuple[str, ...]) -> list[str]:
    """The variables the statements read before binding them, in order."""
    bound: set[str] = set()
    read: list[str] = []
    for line in lines:
        found = ASSIGNED.match(line)
        split = found.end() if found else 0
        read += [t.string for t in variable_tokens(line_tokens(line)) if t.start[1] >= split and t.string not in bound and t.string not in read]
        bound |= _bound((line,))
    return read


def _merged(longer: ClassIR, shorter: ClassIR, n: int, numbers: ClassIR | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The forward parameters and lines of `longer`, its last input defaulting to None and then computed as
    `shorter` computes it; the shared ending with the numbers of `numbers` when given (`shorter` is then the
    class's own side, else `longer` is). The side the class never runs takes its own side's numbers."""
    *inputs, extra = parameter_names(longer.forward_params)
    mine = _parts(longer.forward_lines, n, inputs, extra)
    theirs = _parts(shorter.forward_lines, n, parameter_names(shorter.forward_params), None)
    assert mine is not None and theirs is not None  # _shared_ending found both
    exclusive = bool(_code_count(mine.head))  # `if ... else:`: a local of one side may have a name the other binds
    scope = mine.tail if exclusive else longer.forward_lines
    taken = variable_names(scope) | set(inputs) | {extra}
    taken |= set(_reads(mine.head))  # a global the other side reads (binding it would make it a local there too)
    renames = dict(zip(parameter_names(shorter.forward_params), inputs)) | {theirs.value: mine.value}
    renames |= {name: unique_identifier(name, taken, "x") for name in sorted(_bound(theirs.head) - set(renames))}
    head = mine.head if numbers is None else _numbered_like(mine.head, theirs.head)
    their_head = theirs.head if numbers is not None else _numbered_like(theirs.head, mine.head)
    computed = tuple(INDENT + rename_variables(line, renames) for line in their_head)
    tail = mine.tail if numbers is None else renumbered(mine.tail, _cut(numbers.forward_lines, n)[1])
    if exclusive:
        branch = (f"if {extra} is None:", *computed, "else:", *(INDENT + line for line in head))
    else:
        branch = (*mine.head, f"if {extra} is None:", *computed)
    return (*longer.forward_params[:-1], f"{extra}=None"), (*branch, *tail)


def _numbered_like(unrun: tuple[str, ...], run: tuple[str, ...]) -> tuple[str, ...]:
    """The beginning a class never runs with the numbers of the one it runs where they stand alike: the
    instances of a class then differ in those numbers as in their own (one parameter each, not two classes
    apart for numbers of another instance's). Lines are paired as difflib matches them with their numbers
    masked, and those it replaces one for one where one adds tokens to the other that are not numbers
    (`self.attn(out.view(-1, 4, 64))` beside `self.attn(out.view(-1, 4, 64), q_global)`); other numbers
    stay as they are (they change nothing)."""
    masked_unrun, masked_run = [masked_line(line) for line in unrun], [masked_line(line) for line in run]
    out = list(unrun)
    matcher = difflib.SequenceMatcher(None, masked_unrun, masked_run, autojunk=False)
    for tag, a, a_end, b, b_end in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for i, j in zip(range(a, a_end), range(b, b_end)):
                out[i] = _line_numbered_like(unrun[i], run[j])
    return tuple(out)


def _line_numbered_like(unrun: str, run: str) -> str:
    """`unrun` with the numbers of `run`, where one is the other with tokens added that are not numbers
    (an argument more: `self.attn(out.view(-1, 4, 64), q_global)`); else as it is."""
    mine, theirs = number_slots((unrun,)), number_slots((run,))
    if len(mine) != len(theirs) or not mine:
        return unrun
    tokens_mine, tokens_theirs = _TOKEN.findall(masked_line(unrun)), _TOKEN.findall(masked_line(run))
    if tokens_mine.count("\0") != len(mine) or tokens_theirs.count("\0") != len(theirs):
        return unrun  # a number the tokens do not show alone: leave the line
    matcher = difflib.SequenceMatcher(None, tokens_mine, tokens_theirs, autojunk=False)
    for tag, a, a_end, b, b_end in matcher.get_opcodes():
        if tag == "replace" or (tag != "equal" and "\0" in (*tokens_mine[a:a_end], *tokens_theirs[b:b_end])):
            return unrun  # other tokens in a place, or a number only one has: another computation
    return filled((unrun,), mine, [slot.text for slot in theirs])[0]


_TOKEN = re.compile(r"\0|\w+|[^\w\s]")
