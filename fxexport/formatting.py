"""format: black, in memory, with a pinned mode, so tests compare exactly what is written.

black costs about a millisecond per line, so for large graphs the forward bodies are held out
of the file black sees: fxexport emits them in black's style already (quotes, spacing, `**`),
and only the statements too long for a line go through black, in one batch.
"""

from __future__ import annotations

import dataclasses
import re

import black
from black.strings import str_width

from .errors import FxExportError
from .ir import PackageIR

MODE = black.Mode(target_versions={black.TargetVersion.PY39}, line_length=88)
FAST_PATH_LINES = 1500  # forward lines in a package above which bodies skip whole-file black
BODY_INDENT = 8
_PLACEHOLDER = "__fxexport_body_{}__"
_PLACEHOLDER_LINE = re.compile(r"^( *)__fxexport_body_(\d+)__$", re.MULTILINE)
_SPLIT = "# fxexport: split"


def format_source(path: str, source: str) -> str:
    """`source` formatted by black with MODE; FxExportError (a bug of ours) if it is not valid Python."""
    try:
        return black.format_str(source, mode=MODE)
    except Exception as error:  # black raises several types for invalid input
        raise FxExportError(f"generated {path} is not valid Python ({error}); please report this as a bug") from error


def hold_out_bodies(package: PackageIR, threshold: int | None = None) -> tuple[PackageIR, list[tuple[str, ...]]]:
    """Replace each block of generated statements by a placeholder line in a large package; returns the blocks."""
    limit = FAST_PATH_LINES if threshold is None else threshold
    if sum(len(c.forward_lines) + len(c.init_lines) for c in package.classes) <= limit:
        return package, []
    bodies: list[tuple[str, ...]] = []

    def hold(lines: tuple[str, ...]) -> tuple[str, ...]:
        if not lines:
            return lines
        bodies.append(lines)
        return (_PLACEHOLDER.format(len(bodies) - 1),)

    classes = tuple(
        dataclasses.replace(c, init_lines=hold(c.init_lines), fixup_lines=hold(c.fixup_lines), forward_lines=hold(c.forward_lines))
        for c in package.classes
    )
    return dataclasses.replace(package, classes=classes), bodies


def _statements(lines: tuple[str, ...]) -> list[list[str]]:
    """Group lines into statements: a line ending in ':' takes the indented lines after it."""
    groups: list[list[str]] = []
    for line in lines:
        if line.startswith(" ") and groups and groups[-1][0].endswith(":"):
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def _fits(group: list[str], indent: int) -> bool:
    """True when black would leave the statement as it is: short lines, or a comment (never wrapped).

    Short as black measures: in columns, where a double-width character (`日`) takes two.
    """
    return group[0].startswith("#") or all(str_width(line) + indent <= MODE.line_length for line in group)


def _black_batch(groups: list[list[str]], indent: int) -> list[list[str]]:
    """Format many statements in one black call, nested as deep as `indent` (a multiple of 4)."""
    if not groups:
        return []
    pad = " " * indent
    header = ["class _Body:", "    def _body(self):"] + [f"{' ' * level}if True:" for level in range(8, indent, 4)]
    parts = [f"{pad}{_SPLIT}\n" + "".join(f"{pad}{line}\n" for line in group) for group in groups]
    formatted = format_source("module.py", "\n".join(header) + "\n" + "".join(parts)).splitlines()[len(header) :]
    chunks: list[list[str]] = []
    for line in formatted:
        if line.strip() == _SPLIT:
            chunks.append([])
        elif line.strip():
            chunks[-1].append(line[indent:])
    return chunks


def format_body(lines: tuple[str, ...], indent: int = BODY_INDENT) -> list[str]:
    """Statements in black's style: short ones as emitted (already black's style), long ones through black."""
    groups = _statements(lines)
    long_ones = [g for g in groups if not _fits(g, indent)]
    formatted = iter(_black_batch(long_ones, indent))
    result: list[str] = []
    for group in groups:
        result += group if _fits(group, indent) else next(formatted)
    return result


def _splice(source: str, bodies: list[tuple[str, ...]]) -> str:
    def body(match: re.Match[str]) -> str:
        indent = match.group(1)
        return "\n".join(f"{indent}{line}" for line in format_body(bodies[int(match.group(2))], len(indent)))

    return _PLACEHOLDER_LINE.sub(body, source)


def format_sources(files: dict[str, str], bodies: list[tuple[str, ...]] = ()) -> dict[str, str]:  # type: ignore[assignment]
    """black every Python file; then put back the held-out forward bodies."""
    formatted = {path: format_source(path, text) if path.endswith(".py") else text for path, text in files.items()}
    return {path: _splice(text, list(bodies)) if bodies and path.endswith(".py") else text for path, text in formatted.items()}
