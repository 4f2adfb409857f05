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

Callers are unchanged: those that passed the input pass it still, the others omit it.
"""

from __future__ import annotations

import tokenize
from dataclasses import replace

from .child_lines import init_template
from .code_slots import ASSIGNED, filled, line_tokens, number_slots, parameter_names, variable_tokens
from .flags import INDENT
from .ir import ClassIR

Known = dict[str, tuple[str, ...]]


def defaulted_inputs(level: list[ClassIR], known: Known) -> list[ClassIR]:
    """The level with the classes of each source class whose forwards differ by a last input their
    callers may leave out given one forward, that input defaulting to another."""
    families: dict[tuple[object, ...], dict[int, list[ClassIR]]] = {}
    for cls in level:
        if not (cls.is_root or cls.parent or cls.takes_children) and _plain_parameters(cls.forward_params):
            by_count = families.setdefault((*cls.source, init_template(cls, known)), {})
            by_count.setdefault(len(cls.forward_params), []).append(cls)
    out = {c.name: c for c in level}
    for by_count in families.values():
        for count, longer in by_count.items():
            shorter = by_count.get(count - 1, [])
            if not shorter or len(_forwards(longer)) != 1 or len(_forwards(shorter)) != 1:
                continue
            position = _alias(longer[0], shorter[0])
            if position is None:
                continue
            for cls in longer:  # each with its own inputs' names
                out[cls.name] = _with_default(cls, cls.forward_lines, position)
            for cls in shorter:
                out[cls.name] = _with_default(longer[0], _renumbered(longer[0].forward_lines, cls.forward_lines), position, cls)
    return [out[c.name] for c in level]


def _plain_parameters(params: tuple[str, ...]) -> bool:
    return bool(params) and not any(p.startswith("*") or "=" in p for p in params)


def _forwards(group: list[ClassIR]) -> set[tuple[str, ...]]:
    """The forwards of the group's classes, their numbers masked: one code for the group to take part."""
    return {_canonical(c.forward_lines, parameter_names(c.forward_params)) or ("\0",) for c in group}


def _alias(longer: ClassIR, shorter: ClassIR) -> int | None:
    """The position of the input of `longer` its last input stands for in `shorter`, where that makes one computation."""
    *head, last = parameter_names(longer.forward_params)
    wanted = _canonical(shorter.forward_lines, parameter_names(shorter.forward_params))
    if wanted is None or len(number_slots(longer.forward_lines)) != len(number_slots(shorter.forward_lines)):
        return None
    return next((k for k, name in enumerate(head) if _canonical(longer.forward_lines, head, {last: name}) == wanted), None)


def _canonical(lines: tuple[str, ...], params: list[str], aliases: dict[str, str] | None = None) -> tuple[str, ...] | None:
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


def _renumbered(lines: tuple[str, ...], own: tuple[str, ...]) -> tuple[str, ...]:
    """`lines` with the numbers of `own`, which computes the same with other numbers (in the same order)."""
    return filled(lines, number_slots(lines), [slot.text for slot in number_slots(own)])


def _with_default(longer: ClassIR, lines: tuple[str, ...], position: int, cls: ClassIR | None = None) -> ClassIR:
    """A class (`cls`, else `longer`) running `lines` with `longer`'s inputs, the last one defaulting to the one at `position`."""
    *head, last = parameter_names(longer.forward_params)
    prologue = (f"if {last} is None:", f"{INDENT}{last} = {head[position]}")
    return replace(cls or longer, forward_params=(*head, f"{last}=None"), forward_lines=(*prologue, *lines))
