"""Calls leaving out inputs their child never reads, given them as the calls of the class's other instances.

timm pvt_v2's Attention reads the feature map's height and width only in its `sr` branch; the
attention of the last stage has no `sr`, so the trace calls it with the tokens alone, and the
class holding it (`Block`) comes out as two codes, `self.attn(x)` and `self.attn(x, H, W)`. Once
the attentions are one class whose holders of `sr` take those inputs more (optional_children.py,
the others defaulting them to None), a child of the others never reads them: its caller may pass
them as the other callers do, and the blocks are one code again, as the source wrote it.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from .child_lines import built_child
from .ir import ClassIR
from .spelled_calls import self_attribute


def given_ignored_inputs(level: list[ClassIR], ignoring: dict[str, tuple[int, frozenset[str]]]) -> list[ClassIR]:
    """The level with each call of a child built as a class in `ignoring` (old class name -> how many inputs
    its instances read, those after, defaulted, they never read; and the classes merged with it) that passes
    only those, given the inputs more another class of its source class passes there to a child of one of
    those classes: names, which the lines before, the same in both, bound alike."""
    out = []
    for cls in level:
        children = _built(cls, set(ignoring))
        siblings = [c for c in level if c.source == cls.source and c is not cls and len(c.forward_lines) == len(cls.forward_lines)]
        given = next((lines for c in siblings if (lines := _given(cls, c, children, ignoring)) is not None), None) if children else None
        out.append(cls if given is None else replace(cls, forward_lines=given))
    return out


def _built(cls: ClassIR, names: set[str]) -> dict[str, str]:
    """The children `__init__` builds as an instance of a class in `names`: attribute -> class name (a line
    `self.attn = Attention_1()`, before generalize fills its arguments)."""
    return {attribute: name for attribute, name in filter(None, map(built_child, cls.init_lines)) if name in names}


def _given(cls: ClassIR, sibling: ClassIR, children: dict[str, str], ignoring: dict[str, tuple[int, frozenset[str]]]) -> tuple[str, ...] | None:
    """`cls`'s forward lines taking `sibling`'s where the two differ only in a call of such a child passing
    inputs more, the sibling's child there one of the classes merged with it; None where they differ
    otherwise, or nowhere."""
    if cls.forward_params != sibling.forward_params:
        return None
    held = _built(sibling, set().union(*(merged for _, merged in ignoring.values())))
    children = {attribute: name for attribute, name in children.items() if held.get(attribute) in ignoring[name][1]}
    if not children:
        return None
    lines = []
    for mine, theirs in zip(cls.forward_lines, sibling.forward_lines):
        if mine != theirs and not _passes_more(mine, theirs, children, ignoring):
            return None
        lines.append(theirs)
    return tuple(lines) if tuple(lines) != cls.forward_lines else None


def _passes_more(mine: str, theirs: str, children: dict[str, str], ignoring: dict[str, tuple[int, frozenset[str]]]) -> bool:
    """True when `theirs` is `mine` but for one call of a child (`self.attn(x)`) passing names more
    (`self.attn(x, H, W)`), where `mine` passes the child's class exactly the inputs its instances read."""
    indent = len(mine) - len(mine.lstrip())
    if indent != len(theirs) - len(theirs.lstrip()) or mine.rstrip().endswith(":"):
        return False
    try:
        a, b = ast.parse(mine.strip()), ast.parse(theirs.strip())
    except SyntaxError:
        return False
    calls = [n for n in ast.walk(b) if isinstance(n, ast.Call) and self_attribute(n.func) in children and not n.keywords]
    for call in calls:
        read = ignoring[children[self_attribute(call.func)]][0]  # type: ignore[index]
        extra = call.args[read:]
        if not extra or not all(isinstance(e, ast.Name) for e in extra):
            continue
        call.args = call.args[:read]
        same = ast.dump(a) == ast.dump(b)
        call.args = [*call.args, *extra]
        if same:
            return True
    return False
