"""The flag of a loop that some modules of a source class run with every period alone.

Res2Net's blocks split their input and run a conv per split, each split added to the conv's output
before it (`if i == 0: sp = spx[i]` / `else: sp = sp + spx[i]`), but the first block of a stage runs
each split alone:

    for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
        if i == 0 or self.is_first:
            sp = spx[i]
        else:
            sp = sp + spx[i]

rolled.py writes both loops so (`first_of`'s `alone`); here each module's loop reads an attribute the
module sets to whether it runs every period alone, named as the source's forward names it. Where no
class of the other value joins a class after all (generalize.py), it runs its loop as before
(`unflagged`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace

from .ir import ClassIR
from .rolled import Rolled, first_of

FALLBACK = "alone"


def alone_flags(found: Rolled, source_forward: str, taken: Callable[[str], bool]) -> list[tuple[str, bool]]:
    """Each `first_of` choice of `found`'s loops that tells whether its module runs every period alone,
    made to read the attribute it returns with its value (rewriting the loops' bodies, which rolled.py
    made for this module alone): one per loop, the source's name for that loop's flag, else FALLBACK (the
    container's name before it where several loops have one), numbered where `taken`."""
    flagged = [(roll, [n for n in roll.body.nodes if n.target is first_of and len(n.args) == 4]) for roll in found.rolls.values()]
    flagged = [(roll, choices) for roll, choices in flagged if choices]
    flags: list[tuple[str, bool]] = []
    used: set[str] = set()
    for roll, choices in flagged:
        own = FALLBACK if len(flagged) == 1 else f"{roll.children.rpartition('.')[2]}_{FALLBACK}"
        base = flag_in_source(source_forward, roll.children) or own
        name, number = base, 0
        while taken(name) or name in used:
            number += 1
            name = f"{base}_{number}"
        used.add(name)
        for node in choices:
            flags.append((name, bool(node.args[3])))
            node.args = (*node.args[:3], name)
    return list(dict.fromkeys(flags))


def flag_in_source(source: str, children: str) -> str | None:
    """The attribute of `if <index> == 0 or self.<name>:` in a forward's source, in a loop over the
    container `children` (`self.convs`, also zipped or enumerated), if it has one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.For) or not any(ast.unparse(n) == children for n in ast.walk(loop.iter) if isinstance(n, ast.Attribute)):
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or) and len(node.test.values) == 2:
                first, flag = node.test.values
                if _is_first_index(first) and isinstance(flag, ast.Attribute) and isinstance(flag.value, ast.Name) and flag.value.id == "self":
                    return flag.attr
    return None


def _is_first_index(test: ast.expr) -> bool:
    """`<name> == 0`."""
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0 and type(test.comparators[0].value) is int
    )  # fmt: skip


_TEST = re.compile(r"( *)if (\w+) == 0 or self\.(\w+):")
_LATER = re.compile(r"( *)if (\w+) > 0 and not self\.(\w+):")


def unflagged(cls: ClassIR) -> ClassIR:
    """The class without the flags whose value all its instances share (no class of the other value joined
    it): each loop as that value runs it."""
    for line in cls.init_lines:
        found = re.fullmatch(r"self\.(\w+) = (True|False)", line)
        if found is not None and any((m := _TEST.fullmatch(t) or _LATER.fullmatch(t)) and m[3] == found[1] for t in cls.forward_lines):
            forward = _as_run(cls.forward_lines, found[1], found[2] == "True")
            init = tuple(t for t in cls.init_lines if t != line)
            return unflagged(replace(cls, init_lines=init, forward_lines=forward))
    return cls


def _as_run(lines: tuple[str, ...], name: str, alone: bool) -> tuple[str, ...]:
    """The forward with each `if` on the flag `name` as the loop runs with that value."""
    out: list[str] = []
    k = 0
    while k < len(lines):
        found = _TEST.fullmatch(lines[k]) or _LATER.fullmatch(lines[k])
        if found is None or found[3] != name:
            out.append(lines[k])
            k += 1
            continue
        indent, index = found[1], found[2]
        end = k + 1
        while end < len(lines) and (lines[end].startswith(indent + " ") or lines[end] == f"{indent}else:"):
            end += 1
        block = lines[k + 1 : end]
        split = block.index(f"{indent}else:") if f"{indent}else:" in block else len(block)
        if _LATER.fullmatch(lines[k]):
            out += [f"{indent}if {index} > 0:", *block] if not alone else []
        elif alone:
            out += [line[4:] for line in block[:split]]
        else:
            out += [f"{indent}if {index} == 0:", *block]
        k = end
    return tuple(out)
