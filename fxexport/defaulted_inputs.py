"""Forward inputs some callers leave out: `def forward(self, x, shortcut=None)`, as timm's DlaBasic.

A block whose callers sometimes pass a second input (`block(x, shortcut)`) and sometimes not
(`block(x)`, the block then using `x` in its place) comes out of the graph as two forwards, one
taking an input more. Where the longer forward, given the shorter one's input in place of its
last input, computes exactly what the shorter one does (statement by statement, with locals named
by where they are bound), both become that forward with its last input defaulting to None and
set from the other first, as the source wrote it:

    def forward(self, x, x_1=None):
        if x_1 is None:
            x_1 = x

Callers are unchanged: those that passed the input pass it still, the others omit it. An input
left out in the middle (BART's cross-attention `attn(x, key_value_states, mask)` beside its
self-attention `attn(x, mask)`) is taken last, and the callers that pass it pass it last
(reordered_calls.py), where every one of them is a direct call of a child its holder builds.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Iterator
from dataclasses import replace

from .child_lines import init_template
from .code_slots import ASSIGNED, filled, line_tokens, number_slots, parameter_names, rename_variables, variable_tokens
from .ir import ClassIR
from .regions import INDENT
from .reordered_calls import Order, reorder_callers

Known = dict[str, tuple[str, ...]]
_GENERIC = re.compile(r"x(_\d+)?")  # the names subgraphs.py gives inputs that are no model input


def defaulted_inputs(level: list[ClassIR], pending: list[ClassIR], known: Known) -> tuple[list[ClassIR], list[ClassIR]]:
    """The level with the classes of each source class whose forwards differ by an input their callers
    may leave out given one forward, that input defaulting to another; and the pending classes, their
    calls of such a class passing that input last where it was not."""
    out = {c.name: c for c in level}
    for longer, shorter in one_input_apart(level, known):
        found = None if merged_already(out, longer + shorter) else _alias(longer[0], shorter[0])
        if found is None:
            continue
        extra, position = found
        count = len(longer[0].forward_params)
        order = tuple(i for i in range(count) if i != extra) + (extra,)
        if extra != count - 1:
            callers = reorder_callers(pending, {c.name for c in longer}, order)
            if callers is None:
                continue
            pending = callers
        for cls in longer:  # each with its own inputs' names
            out[cls.name] = _with_default(cls, cls.forward_lines, order, position)
        for cls in shorter:
            out[cls.name] = _with_default(longer[0], renumbered(longer[0].forward_lines, cls.forward_lines), order, position, cls)
    return [out[c.name] for c in level], pending


def merged_already(out: dict[str, ClassIR], classes: list[ClassIR]) -> bool:
    """True when a class took part in an earlier pair (forwards of three arities): it is not merged twice."""
    return any(out[c.name] is not c for c in classes)


def one_input_apart(level: list[ClassIR], known: Known) -> Iterator[tuple[list[ClassIR], list[ClassIR]]]:
    """(longer, shorter): the classes of one source class (one `__init__` but for literals and children
    passed whole) whose forwards take one input more than the others', each side one code."""
    families: dict[tuple[object, ...], dict[int, list[ClassIR]]] = {}
    for cls in level:
        if not (cls.is_root or cls.parent or cls.takes_children) and _plain_parameters(cls.forward_params):
            by_count = families.setdefault((*cls.source, init_template(cls, known)), {})
            by_count.setdefault(len(cls.forward_params), []).append(cls)
    for by_count in families.values():
        for count, longer in by_count.items():
            shorter = by_count.get(count - 1, [])
            if shorter and len(_forwards(longer)) == 1 and len(_forwards(shorter)) == 1:
                yield longer, shorter


def _plain_parameters(params: tuple[str, ...]) -> bool:
    return not any(p.startswith("*") or "=" in p for p in params)


def _forwards(group: list[ClassIR]) -> set[tuple[str, ...]]:
    """The forwards of the group's classes, their numbers masked: one code for the group to take part."""
    return {canonical(c.forward_lines, parameter_names(c.forward_params)) or ("\0",) for c in group}


def _alias(longer: ClassIR, shorter: ClassIR) -> tuple[int, int] | None:
    """(the position of the input of `longer` that `shorter` lacks, the position of the input it stands
    for there) where that makes one computation; the last input is tried first."""
    names = parameter_names(longer.forward_params)
    wanted = canonical(shorter.forward_lines, parameter_names(shorter.forward_params))
    if wanted is None or len(number_slots(longer.forward_lines)) != len(number_slots(shorter.forward_lines)):
        return None
    for extra in reversed(range(len(names))):
        rest = names[:extra] + names[extra + 1 :]
        for position, name in enumerate(names):
            if position != extra and canonical(longer.forward_lines, rest, {names[extra]: name}) == wanted:
                return extra, position
    return None


def canonical(lines: tuple[str, ...], params: list[str], aliases: dict[str, str] | None = None) -> tuple[str, ...] | None:
    """The code lines with every variable named by where it is bound (inputs by position, an alias as the
    input it stands for), numbers masked; None for code this does not read (blocks, compound statements)."""
    names = {name: f"\0in{i}" for i, name in enumerate(params)}
    names.update({extra: names[target] for extra, target in (aliases or {}).items()})
    bound = 0
    out = []
    for line in lines:
        if line.lstrip().startswith("#"):
            continue
        tokens = line_tokens(line)
        if not tokens or line.startswith((" ", "\t")) or line.rstrip().endswith(":"):
            return None
        targets = ASSIGNED.match(line)
        split = targets.end() if targets else 0
        variables = {id(t) for t in variable_tokens(tokens)}
        uses = [
            "\0n" if _masked(t) else names.get(t.string, t.string) if id(t) in variables else t.string
            for t in tokens
            if t.start[1] >= split and t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)
        ]
        for target in targets[1].replace(" ", "").split(",") if targets else []:
            names[target] = f"\0local{bound}"
            bound += 1
        out.append(repr((targets[1].count(",") + 1 if targets else 0, uses)))
    return tuple(out)


def _masked(token: tokenize.TokenInfo) -> bool:
    """A number literal generalize.py makes a parameter (code_slots.number_slots): not an imaginary one."""
    return token.type == tokenize.NUMBER and not token.string.lower().endswith("j")


def renumbered(lines: tuple[str, ...], own: tuple[str, ...]) -> tuple[str, ...]:
    """`lines` with the numbers of `own`, which computes the same with other numbers (in the same order)."""
    return filled(lines, number_slots(lines), [slot.text for slot in number_slots(own)])


def _with_default(longer: ClassIR, lines: tuple[str, ...], order: Order, position: int, cls: ClassIR | None = None) -> ClassIR:
    """A class (`cls`, else `longer`) running `lines` with `longer`'s inputs in `order`, the last one
    defaulting to the one at `position`; generic names (`x`, `x_1`, ...) renamed to read in order again."""
    names = parameter_names(longer.forward_params)
    *head, last = [names[i] for i in order]
    lines = (f"if {last} is None:", f"{INDENT}{last} = {names[position]}", *lines)
    if all(_GENERIC.fullmatch(n) for n in names):
        renames = {new: old for new, old in zip((*head, last), names) if new != old}
        lines = tuple(rename_variables(line, renames) for line in lines)
        *head, last = names
    return replace(cls or longer, forward_params=(*head, f"{last}=None"), forward_lines=lines)
