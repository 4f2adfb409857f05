"""A generated nn.Sequential subclass builds its children in its `super().__init__(...)` call.

collect writes the `__init__` of a source Sequential subclass (torchvision's Conv2dNormActivation)
child by child, `self.add_module("0", nn.Conv2d(...))`, so that generalize reads its literals as it
reads any class's. The source passes the children to nn.Sequential's constructor, and so does the
class written: `super().__init__(nn.Conv2d(in_channels, out_channels, 3), nn.BatchNorm2d(out_channels))`.
"""

from __future__ import annotations

from dataclasses import replace

from .ir import ClassIR
from .runs import repeated
from .spelled_calls import added_line, node_text


def with_super_calls(classes: tuple[ClassIR, ...]) -> tuple[ClassIR, ...]:
    """The classes, each Sequential subclass whose `__init__` first adds its numbered children in order
    building them in its `super().__init__` call; its other lines (tensors of its own) follow that call."""
    out = []
    for cls in classes:
        lines = cls.init_lines
        start = children_end(lines) if cls.is_sequential and not cls.takes_children else 0
        if not start:
            out.append(cls)
        elif (children := numbered_children(lines[:start])) is not None:
            out.append(replace(cls, init_lines=lines[start:], super_args=", ".join(repeated(children))))
        elif (flagged := _flagged_last(lines[:start])) is not None:
            out.append(replace(cls, init_lines=lines[start:], layer_lines=flagged, super_args=f"*{_LAYERS}"))
        else:
            out.append(cls)
    return tuple(out)


def children_end(lines: tuple[str, ...]) -> int:
    """The index of the first line after the last that adds a child (or its flag's `if`), or 0 where none adds one."""
    adds = [i for i, line in enumerate(lines) if added_line(line.strip()) is not None]
    return adds[-1] + 1 if adds else 0


_LAYERS = "layers"


def _flagged_last(lines: tuple[str, ...]) -> tuple[str, ...] | None:
    """The lines that build the list of layers, where the last is added under a flag (optional_layers.py):
    `layers = [a, b]`, `if activation:`, `    layers.append(c)`; else None."""
    if len(lines) < 3 or not lines[-2].startswith("if ") or not lines[-2].endswith(":"):
        return None
    children = numbered_children(lines[:-2])
    last = numbered_children((lines[-1].strip(),), start=len(children or ()))
    if children is None or last is None or _LAYERS in lines[-2]:
        return None
    return (f"{_LAYERS} = [{', '.join(repeated(children))}]", lines[-2], f"    {_LAYERS}.append({last[0]})")


def numbered_children(lines: tuple[str, ...], start: int = 0) -> list[str] | None:
    """The code of each child `self.add_module("0", ...)`, `self.add_module("1", ...)`, ... adds (numbered
    from `start`), or None where a line does anything else or there is none."""
    children = []
    for position, line in enumerate(lines, start):
        added = added_line(line)
        if added is None or added[0] != str(position):
            return None
        children.append(node_text(line, added[1]))
    return children or None
