"""Runs of children a container builds alike, written once as a comprehension.

collect writes a run of MIN_REPEATED or more equal constructor calls in an `nn.Sequential` or
`nn.ModuleList` as one starred comprehension (`nn.Sequential(a, *[b for _ in range(7)])`): each call
builds its own child. Instances of other classes in collect can be built alike once generalize
has merged their classes (`BottleneckBlock_1()`, `BottleneckBlock_2()` both become
`BottleneckBlock(128, 64)`): `with_runs` writes those runs as collect would have, so that the
export of a re-trace, where they were one class from the start, reads the same (issue 14's fixed
point).
"""

from __future__ import annotations

import ast
import itertools
import re

from .spelled_calls import named_children, node_text, parsed_line

MIN_REPEATED = 3  # children built by one call written as a comprehension
_UNDERSCORE = re.compile(r"(?<![\w.])_(?!\w)")  # the comprehension's variable, if the call reads a name `_`
CONTAINERS = frozenset({"nn.Sequential", "nn.ModuleList"})


def repeated(codes: list[str]) -> list[str]:
    """The items of a list of constructor calls, each run of MIN_REPEATED or more equal calls one starred
    comprehension (unless the call reads a name `_`, the comprehension's variable)."""
    items: list[str] = []
    for code, run in itertools.groupby(codes):
        count = len(list(run))
        if count >= MIN_REPEATED and not _UNDERSCORE.search(code):
            items.append(f"*[{code} for _ in range({count})]")
        else:
            items += [code] * count
    return items


def with_runs(line: str, sequentials: frozenset[str] = frozenset()) -> str:
    """The line with each container call's runs of equal children (those already comprehensions
    included, and their neighbours) written as `repeated` writes them, innermost first; `sequentials`:
    the generated subclasses of nn.Sequential, whose callers pass their children (`Stage(a, b)`).
    An indented line (under an `if` of `__init__`) is read without its indent."""
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    containers = CONTAINERS | sequentials
    if not any(f"{name}(" in body for name in containers):
        return line  # no container call: nothing to parse
    for _ in range(body.count("(")):  # each pass rewrites one call
        found = _first_change(body, containers)
        if found is None:
            break
        start, end, text = found
        data = body.encode()
        body = (data[:start] + text.encode() + data[end:]).decode()
    return indent + body


def _first_change(line: str, containers: frozenset[str]) -> tuple[int, int, str] | None:
    """(start, end, text) of the arguments of the innermost container call whose runs read otherwise,
    the offsets in the line's UTF-8 bytes (as `ast` counts columns)."""
    tree = parsed_line(line)
    if tree is None:
        return None
    offsets = _line_offsets(line.encode())
    for node in _innermost_first(tree):
        func = ast.unparse(node.func) if isinstance(node, ast.Call) else ""
        if not (isinstance(node, ast.Call) and func in containers and node.args and not node.keywords):
            continue
        items = _items(node, func == "nn.ModuleList", line)
        if items is None:
            continue
        codes, written = items
        runs = repeated(codes)
        if runs == written:
            continue
        first, last = node.args[0], node.args[-1]
        start = offsets[first.lineno - 1] + first.col_offset
        end = offsets[last.end_lineno - 1] + last.end_col_offset  # type: ignore[operator]
        if func == "nn.ModuleList":
            whole = len(runs) == 1 and runs[0].startswith("*")
            return start, end, runs[0][1:] if whole else f"[{', '.join(runs)}]"
        return start, end, ", ".join(runs)
    return None


def _innermost_first(node: ast.AST) -> list[ast.AST]:
    """The tree's nodes, each after every node inside it."""
    out: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        out += _innermost_first(child)
    out.append(node)
    return out


def _items(call: ast.Call, listed: bool, line: str) -> tuple[list[str], list[str]] | None:
    """(each child's code, a run's comprehension expanded; the items as written), or None where the
    call's arguments are not a list of children (`nn.Sequential(OrderedDict(...))`, `nn.ModuleList(blocks)`);
    `listed`: the call takes them as one list (nn.ModuleList)."""
    if listed:
        if len(call.args) != 1:
            return None
        argument = call.args[0]
        if isinstance(argument, ast.ListComp):
            elements: list[ast.expr] = [ast.Starred(argument)]
            written = [f"*{node_text(line, argument)}"]
        elif isinstance(argument, ast.List):
            elements = list(argument.elts)
            written = [node_text(line, e) for e in elements]
        else:
            return None
    elif named_children(call) is not None:
        return None
    else:
        elements = list(call.args)
        written = [node_text(line, e) for e in elements]
    codes: list[str] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            run = element.value
            if not isinstance(run, ast.ListComp) or (count := repeat_count(run)) is None or _reads_underscore(run.elt):
                return None
            codes += [node_text(line, run.elt)] * count
        elif isinstance(element, ast.Call):
            codes.append(node_text(line, element))
        else:
            return None
    return codes, written


def repeat_count(node: ast.ListComp) -> int | None:
    """n of `[... for _ in range(n)]` (n an int literal), else None."""
    if len(node.generators) != 1:
        return None
    loop = node.generators[0]
    count = loop.iter
    if not (isinstance(loop.target, ast.Name) and loop.target.id == "_" and not loop.ifs and isinstance(count, ast.Call)):
        return None
    if ast.unparse(count.func) != "range" or len(count.args) != 1 or count.keywords:
        return None
    value = count.args[0]
    return value.value if isinstance(value, ast.Constant) and type(value.value) is int else None


def _reads_underscore(node: ast.expr) -> bool:
    """True when the comprehension's item reads its variable `_` (its copies are not alike)."""
    return any(isinstance(n, ast.Name) and n.id == "_" for n in ast.walk(node))


def _line_offsets(line: bytes) -> list[int]:
    offsets = [0]
    for text in line.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(text))
    return offsets
