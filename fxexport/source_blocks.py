"""Where a `def` or `class` block of a source file ends, found without tokenizing it.

inspect.getblock tokenizes a block in Python, about 40 us a line here: a good share of an export's
first use of a model's source (1.5 ms of the bench transformer's 40 ms export, and more for the long
classes of real models). The indentation tells the same end for code as it is written: the block ends
before its first line of code indented no deeper than its header. A line inside a string or brackets
may be indented less and stop the scan early, so the block it finds is kept only where its text parses
(a block cut inside a string, brackets or a continued line does not: then the line the scan stopped at
begins a statement, and ends the block as the tokenizer would); anything else goes to inspect.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any

_HEADER = re.compile(r"( *)(?:async\s+def|def|class)\s")
_DECORATOR = re.compile(r"( *)@")
# How inspect.findsource finds a function's first line from its code's.
_FIRST_LINE = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def block(lines: Sequence[str], start: int) -> list[str] | None:
    """`inspect.getblock(lines[start - 1:])` for the decorated or plain `def` or `class` at line `start` (from
    1), read off the indentation; None where the header is not one, a line is indented with tabs or form
    feeds, or the header holds the body too. Unchecked: see the module's docstring for when it ends too early."""
    header = _header_line(lines, start)
    if header is None:
        return None
    indent = len(_HEADER.match(lines[header - 1])[1])  # type: ignore[index]
    body_start = _body_start(lines, header)
    if body_start is None:
        return None
    last, body = body_start - 1, None
    for number in range(body_start, len(lines) + 1):
        text = lines[number - 1]
        stripped = text.lstrip(" ")
        if not stripped.strip():
            continue
        if stripped[0] in "\t\f":
            return None  # the tokenizer counts columns there otherwise (a form feed restarts them)
        column = len(text) - len(stripped)
        if stripped[0] == "#":
            if body is not None and column >= body:
                last = number  # as inspect: a comment counts where indented as deep as the body
            continue
        if column <= indent and stripped[0] not in ")]}":
            break
        if body is None:
            body = column
        last = number
    return list(lines[start - 1 : last]) if body is not None else None


def _header_line(lines: Sequence[str], start: int) -> int | None:
    """The line of the `def` or `class` at `start`, past its decorators."""
    if not 1 <= start <= len(lines):
        return None
    first = _DECORATOR.match(lines[start - 1]) or _HEADER.match(lines[start - 1])
    if first is None:
        return None
    for number in range(start, min(len(lines), start + 50) + 1):
        found = _HEADER.match(lines[number - 1])
        if found is not None and found[1] == first[1]:
            return number
    return None


def _body_start(lines: Sequence[str], header: int) -> int | None:
    """The line after the header's colon: the header may run over lines, inside its brackets. None where the
    body is on the header's line, or the colon is not found plainly (a bracket in a string)."""
    depth = 0
    for number in range(header, min(len(lines), header + 100) + 1):
        code = lines[number - 1].split("#", 1)[0] if "'" not in lines[number - 1] and '"' not in lines[number - 1] else None
        if code is None:
            return None
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        if depth == 0:
            return number + 1 if code.rstrip().endswith(":") else None
    return None


def source_lines(function: Callable[..., Any]) -> tuple[list[str], int]:
    """`inspect.getsourcelines(function)`, read off the indentation where the block found so parses (else
    inspect's own)."""
    found = _quick_source_lines(inspect.unwrap(function))
    return found if found is not None else inspect.getsourcelines(function)


def _quick_source_lines(function: Any) -> tuple[list[str], int] | None:
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if not isinstance(code, CodeType):
        return None
    try:
        file = inspect.getsourcefile(function)
    except TypeError:
        return None
    if not file:
        return None
    linecache.checkcache(file)
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    lines = linecache.getlines(file, module.__dict__) if module is not None else linecache.getlines(file)
    start = code.co_firstlineno
    if not 1 <= start <= len(lines) or not _FIRST_LINE.match(lines[start - 1]):
        return None
    found = block(lines, start)
    return (found, start) if found is not None and parsed(found) is not None else None


def parsed(lines: list[str]) -> ast.Module | None:
    """The lines parsed, dedented; None where they are not whole statements (a block cut inside a string,
    brackets or a continued line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the model's own code may warn as it is parsed (invalid escapes)
            return ast.parse(textwrap.dedent("".join(lines)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
