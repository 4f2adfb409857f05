"""format: black's style, in memory, with a pinned mode, so tests compare exactly what is written.

black costs about a millisecond per line (and a tenth of a second to import), so it runs only
where it would change something. fxexport emits code in black's style already (quotes,
spacing, blank lines; the fixed loader text is kept formatted, see tests/test_formatting.py):
a statement too long for a line is wrapped as black wraps it by wrapping.py when it is a
constructor call (nearly all are), before rendering where fxexport's own templates place the
lines (no parsing of the file); black sees the other statements with a line too long for it,
in one batch, and library code copied into module.py (formatted once per text). The result is
what black writes for the whole file, which the tests check on every case.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from typing import TYPE_CHECKING

from .errors import FxExportError
from .ir import ClassIR, PackageIR
from .wrapping import wrap

if TYPE_CHECKING:
    import black

LINE_LENGTH = 88
_SPLIT = "# fxexport: split"
_END = "# fxexport: end"
_COMPOUND_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_HEADED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)  # one header, then one body


@functools.cache
def _mode() -> black.Mode:
    import black

    return black.Mode(target_versions={black.TargetVersion.PY39}, line_length=LINE_LENGTH)


def format_source(path: str, source: str) -> str:
    """`source` formatted by black with the pinned mode; FxExportError (a bug of ours) if it is not valid Python."""
    import black

    try:
        return black.format_str(source, mode=_mode())
    except Exception as error:  # black raises several types for invalid input
        raise _not_python(path, error) from error


def _not_python(path: str, error: Exception) -> FxExportError:
    return FxExportError(f"generated {path} is not valid Python ({error}); please report this as a bug")


@functools.lru_cache(maxsize=256)
def _formatted_definition(code: str) -> str:
    return format_source("module.py", code).rstrip("\n")


def format_definitions(package: PackageIR) -> PackageIR:
    """Library code copied into module.py, as black writes it (its source may have any style)."""
    return dataclasses.replace(package, definitions=tuple(map(_formatted_definition, package.definitions)))


def wrap_statements(package: PackageIR) -> PackageIR:
    """Each class's long statements wrapped where templates/module.py.jinja puts them: the root's
    __init__ lines inside a `with` block (12 columns), every other line of a method at 8."""
    return dataclasses.replace(package, classes=tuple(map(_wrapped_class, package.classes)))


def _wrapped_class(cls: ClassIR) -> ClassIR:
    return dataclasses.replace(
        cls,
        init_lines=_wrapped(cls.init_lines, 12 if cls.is_root else 8),
        fixup_lines=_wrapped(cls.fixup_lines, 8),
        forward_lines=_wrapped(cls.forward_lines, 8),
    )


def _wrapped(lines: tuple[str, ...], indent: int) -> tuple[str, ...]:
    """Lines placed `indent` columns deep; a long one becomes its wrapped lines, those after the
    first carrying their whole indentation (the template indents only the first)."""
    return tuple(line if indent + len(line) <= LINE_LENGTH else _wrapped_line(line, indent) for line in lines)


def _wrapped_line(line: str, indent: int) -> str:
    code = line.lstrip(" ")
    lines = wrap(code, indent + len(line) - len(code))
    return line if lines is None else "\n".join([line[: len(line) - len(code)] + lines[0].lstrip(" "), *lines[1:]])


@dataclasses.dataclass(frozen=True)
class _Span:
    """Lines `start`..`end` (1-based, inclusive) of one statement, or of a compound statement's header."""

    start: int
    end: int
    indent: int
    header: bool  # a `def`/`class`/`with` line without its body: black sees it with a `pass` body


def format_python(path: str, source: str) -> str:
    """`source` as black would write it, given that every statement whose lines fit is in black's style already."""
    lines = source.split("\n")
    if not _needs_black(lines, 1, len(lines)):
        return source  # nothing for black to do: no need to parse (a second for a 40,000-line file)
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise _not_python(path, error) from error
    spans = list(_long_spans(tree.body, lines))
    wrapped = {span: wrap(lines[span.start - 1].lstrip(" "), span.indent) for span in spans if span.start == span.end}
    rest = [span for span in spans if wrapped.get(span) is None]
    formatted = {**wrapped, **dict(zip(rest, _black_spans(path, rest, lines) if rest else []))}
    for span in reversed(spans):
        lines[span.start - 1 : span.end] = formatted[span]
    return "\n".join(lines)


def _needs_black(lines: list[str], start: int, end: int) -> bool:
    """True when a line of code (not a comment: black never wraps those) is longer than black allows, or
    has a slice bound black would space (`x[:, :self.size]`, made when a literal became an attribute)."""
    return any((_width(line) > LINE_LENGTH or _UNSPACED_SLICE.search(line)) and not line.lstrip().startswith("#")
               for line in lines[start - 1 : end])  # fmt: skip


# A colon next to an attribute bound, or a container's length (listed_children.py): black treats `:` in a
# slice with a complex bound as an operator.
_UNSPACED_SLICE = re.compile(r":(?:self\.|len\(self\))|(?:self\.[\w.]+|len\(self\)):(?=\S)")


def _width(line: str) -> int:
    """Columns, as black counts them: a double-width character (`日`) takes two, a combining one none."""
    if line.isascii():
        return len(line)
    from black.strings import str_width

    return int(str_width(line))


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _has_body(node: ast.stmt) -> bool:
    return any(isinstance(getattr(node, name, None), list) and getattr(node, name) for name in _COMPOUND_BODIES)


def _header_end(node: ast.stmt, lines: list[str]) -> int:
    """The last line of a compound statement's header: before its body, skipping comments and blank lines."""
    end = node.body[0].lineno - 1  # type: ignore[attr-defined]
    while end > node.lineno and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _long_spans(body: list[ast.stmt], lines: list[str]):  # type: ignore[no-untyped-def]
    """The statements (and compound headers) that have a line too long, in order."""
    for node in body:
        start, indent = _first_line(node), node.col_offset
        # A simple statement whole; so too if/for/while/try, for their `else:`/`except:` lines (small in generated code).
        if not _has_body(node) or not isinstance(node, _HEADED):
            if not _kept_by_black(node, lines) and _needs_black(lines, start, node.end_lineno or node.lineno):
                yield _Span(start, node.end_lineno or node.lineno, indent, False)
            continue
        end = _header_end(node, lines)
        if _needs_black(lines, start, end):
            yield _Span(start, end, indent, True)
        yield from _long_spans(node.body, lines)


def _kept_by_black(node: ast.stmt, lines: list[str]) -> bool:
    """A string on its own (a docstring) whose closing quotes stand alone on its last line: black never
    splits a string, and its docstring rules look at a line's length only to move closing quotes that
    follow text, so such a statement is in black's style at any length if it is when short."""
    return (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        and node.end_lineno is not None and lines[node.end_lineno - 1].strip() in ('"""', "'''")
    )  # fmt: skip


def _black_spans(path: str, spans: list[_Span], lines: list[str]) -> list[list[str]]:
    """Each span as black writes it, in one black call (black costs most per call, not per line).

    Spans of one indentation go under a wrapper that puts them as deep as in the file (a class,
    a method, `if True:` blocks), each between marker comments, so black's output can be cut
    back into spans whose lines are exactly as deep as the file's.
    """
    order = sorted(range(len(spans)), key=lambda i: spans[i].indent)
    source: list[str] = []
    for position, index in enumerate(order):
        span = spans[index]
        if position == 0 or spans[order[position - 1]].indent != span.indent:
            source += _wrapper(span.indent)
        pad = " " * span.indent
        source += [f"{pad}{_SPLIT}", *lines[span.start - 1 : span.end]]
        source += [f"{pad}    pass"] if span.header else []
        source.append(f"{pad}{_END}")
    chunks = iter(_chunks(format_source(path, "\n".join(source) + "\n").split("\n")))
    result: list[list[str]] = [[] for _ in spans]
    for index in order:
        chunk = next(chunks)
        result[index] = chunk[:-1] if spans[index].header else chunk  # without the `pass` body
    return result


def _chunks(formatted: list[str]) -> list[list[str]]:
    """The lines between each split marker and the end marker after it, without blank lines at the end."""
    chunks: list[list[str]] = []
    inside = False
    for line in formatted:
        marker = line.strip()
        if marker == _SPLIT:
            chunks.append([])
            inside = True
        elif marker == _END:
            while chunks[-1] and not chunks[-1][-1].strip():
                chunks[-1].pop()
            inside = False
        elif inside:
            chunks[-1].append(line)
    return chunks


def _wrapper(indent: int) -> list[str]:
    """Lines that put what follows `indent` spaces deep: a class, a method, then `if True:` blocks."""
    shells = [f"class _Shell{indent}:", "    def _shell(self):"] + [f"{' ' * level}if True:" for level in range(8, indent, 4)]
    return shells[: indent // 4] if indent < 8 else shells


def check_python(files: dict[str, str]) -> None:
    """FxExportError for a Python file that does not compile."""
    for path, text in files.items():
        if path.endswith(".py"):
            try:
                compile(text, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError) as error:
                raise _not_python(path, error) from error


def format_sources(files: dict[str, str]) -> dict[str, str]:
    """Every Python file in black's style (see format_python); other files as they are."""
    return {path: format_python(path, text) if path.endswith(".py") else text for path, text in files.items()}


def black_everything(files: dict[str, str]) -> dict[str, str]:
    """Every Python file through black whole: what format_sources must equal (the tests' reference)."""
    return {path: format_source(path, text) if path.endswith(".py") else text for path, text in files.items()}
