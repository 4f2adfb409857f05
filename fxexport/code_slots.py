"""Where the literals and names of generated code lines are: the pieces generalize.py compares and fills.

A `Slot` is a number literal in a line (`64` in `nn.Conv2d(64, 128, 3)`) and the argument it
fills; lines are compared with their slots masked and rebuilt with other text in them.
Lines are parsed one by one with ast (columns in UTF-8 bytes, turned into characters) or
tokenized, never edited as free text.
"""

from __future__ import annotations

import ast
import collections
import functools
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .names import BUILTIN_NAMES, is_plain_identifier
from .spelled_calls import char_offset, layer_defaults, layer_name, layer_parameters, node_text, parsed_line

_Read = TypeVar("_Read")

# The names an assignment statement binds (`x = ...`, `a, b = ...`): its first group, at the start of the statement.
ASSIGNED = re.compile(r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)")


@dataclass(frozen=True)
class Slot:
    """A literal in the `__init__` lines: where it is and what it fills."""

    line: int
    start: int
    end: int
    text: str
    name: str  # the argument it fills: "stride", "in_channels", or "value"
    keyword: bool
    default: str | None = None  # the torch.nn layer's default for that keyword, as code


def called_names(line: str) -> list[str]:
    """Every name token of the line."""
    return [t.string for t in line_tokens(line) if t.type == tokenize.NAME]


def line_tokens(line: str) -> list[tokenize.TokenInfo]:
    """The line's tokens; none for a piece of a statement that does not tokenize alone."""
    return list(_tokens(line))


# Repeated blocks repeat their lines, and generalize.py reads each line several times: tokens and
# literal places are kept per line text during one export (forget_lines; bounded besides).
@functools.lru_cache(maxsize=1 << 14)
def _tokens(line: str) -> tuple[tokenize.TokenInfo, ...]:
    try:
        return tuple(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, SyntaxError):
        return ()


def replaced(line: str, replacements: list[tuple[int, int, str]]) -> str:
    """The line with each (start column, end column, text), in order, put in place."""
    pieces, last = [], 0
    for start, end, text in replacements:
        pieces += [line[last:start], text]
        last = end
    return "".join(pieces) + line[last:]


def variable_tokens(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    """Name tokens read or bound as variables: not a Python keyword, an attribute (`x.name`) or a
    call's keyword argument (`f(dim=1)`; inside brackets: `a, b = ...` binds `b`)."""
    out = []
    depth = 0
    for i, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if token.type != tokenize.NAME or keyword.iskeyword(token.string) or (i > 0 and tokens[i - 1].string == "."):
            continue
        if depth and i + 1 < len(tokens) and tokens[i + 1].string == "=" and i > 0 and tokens[i - 1].string in ("(", ","):
            continue
        out.append(token)
    return out


def rename_variables(line: str, renames: dict[str, str]) -> str:
    """The line with each variable (variable_tokens) in `renames` renamed, all at once."""
    return replaced(line, [(t.start[1], t.end[1], renames[t.string]) for t in variable_tokens(line_tokens(line)) if t.string in renames])


def _free_names(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    """The variables (variable_tokens) but those followed by `=`: an assignment's target keeps its name."""
    targets = {id(token) for token, after in zip(tokens, tokens[1:]) if after.string == "="}
    return [t for t in variable_tokens(tokens) if id(t) not in targets]


def rewrite_calls(line: str, calls: dict[str, str]) -> str:
    """`Block()` -> `Block(64, 128, stride=2)`: only a class name token called with no arguments."""
    if not any(name in line for name in calls):
        return line  # nothing to rewrite: no need to tokenize (a line of 2,000 constructor calls takes 0.1 s)
    tokens = line_tokens(line)
    return replaced(line, [
        (token.start[1], tokens[i + 2].end[1], calls[token.string])
        for i, token in enumerate(tokens[:-2])
        if token.type == tokenize.NAME and token.string in calls and tokens[i + 1].string + tokens[i + 2].string == "()"
    ])  # fmt: skip


def parameter_names(params: tuple[str, ...]) -> list[str]:
    """The names of parameters written as code: `x` for `*x` or `x=None`."""
    return [p.lstrip("*").split("=")[0] for p in params]


def positional(params: tuple[str, ...], lines: tuple[str, ...]) -> tuple[str, ...]:
    """Forward lines with each parameter named by its position: callers pass arguments by position,
    so `forward(self, weight, input_ids)` and `forward(self, weight, decoder_input_ids)` are one code."""
    by_position = {name: f"_{i}" for i, name in enumerate(parameter_names(params))}
    return tuple(
        replaced(line, [(t.start[1], t.end[1], by_position[t.string]) for t in _free_names(line_tokens(line)) if t.string in by_position])
        for line in lines
    )


def masked(lines: tuple[str, ...], slots: list[Slot]) -> tuple[str, ...]:
    """The lines with every slot blanked: lines equal but for those literals compare equal."""
    return filled(lines, slots, ["\0"] * len(slots))


def masked_line(line: str) -> str:
    """The line with its number literals blanked (number_slots): lines equal but for those compare equal."""
    return masked((line,), number_slots((line,)))[0]


def filled(lines: tuple[str, ...], slots: list[Slot], texts: list[str]) -> tuple[str, ...]:
    """The lines with each slot's text replaced by the matching one of `texts`."""
    out = list(lines)
    for slot, text in sorted(zip(slots, texts), key=lambda pair: (pair[0].line, -pair[0].start)):
        line = out[slot.line]
        out[slot.line] = line[: slot.start] + text + line[slot.end :]
    return tuple(out)


_PER_LINE: list[functools._lru_cache_wrapper] = []


def per_line(read: Callable[..., _Read]) -> Callable[..., _Read]:
    """`read` of a line (and other hashable arguments) kept per line text during one export (forget_lines;
    bounded besides): repeated blocks repeat their lines, and generalizing reads each several times.
    Callers never change a result."""
    kept = functools.lru_cache(maxsize=1 << 14)(read)
    _PER_LINE.append(kept)
    return kept


def literal_slots(lines: tuple[str, ...], known: dict[str, tuple[str, ...]]) -> list[Slot]:
    """Number literals (and tuples of them) in constructor arguments and attribute values, and the class of
    an activation built inside a call (ACTIVATIONS), in order."""
    slots: list[Slot] = []
    for number, line in enumerate(lines):
        called = _called_classes(line)
        read = tuple((name, known[name]) for name in called if name in known)
        slots += [Slot(number, *place) for place in _line_slots(line, read)]
    return sorted(slots, key=lambda s: (s.line, s.start))


@per_line
def _called_classes(line: str) -> tuple[str, ...]:
    """The plain names the line's calls call (`Block` of `Block(64)`): whose signatures literal_slots reads."""
    return tuple(dict.fromkeys(call.func.id for call in _walked(line)[1] if isinstance(call.func, ast.Name)))


@per_line
def _line_slots(line: str, known: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[tuple[Any, ...], ...]:
    """literal_slots of one line, each a Slot's fields after its line number, given the signatures of the
    plain names the line calls."""
    signatures = dict(known)
    slots: list[tuple[Any, ...]] = []
    assigned, calls, nested = _walked(line)
    for target, value in assigned:
        start, end, text = _segment(line, value)
        slots.append((start, end, text, target, True))
    for call in calls:
        if call in nested and layer_name(call) in ACTIVATIONS:
            start, end, text = _segment(line, call.func)
            slots.append((start, end, text, "activation", True))
        arguments = [(a, _argument_name(call, i, signatures), False) for i, a in enumerate(call.args)]
        arguments += [(k.value, k.arg or "value", True) for k in call.keywords]
        defaults = layer_defaults(call)
        for value, name, is_keyword in arguments:
            if _is_number(value):
                start, end, text = _segment(line, value)
                slots.append((start, end, text, name, is_keyword, defaults.get(name) if is_keyword else None))
    return tuple(slots)


@functools.lru_cache(maxsize=1 << 14)
def _walked(line: str) -> tuple[tuple[tuple[str, ast.expr], ...], tuple[ast.Call, ...], frozenset[ast.Call]]:
    """A line's `self.<name> = <number>` assignments (name, value), its calls, and the calls inside another's
    arguments: read once per line text during an export (forget_lines)."""
    tree = parsed_line(line)
    if tree is None:
        return (), (), frozenset()
    assigned: list[tuple[str, ast.expr]] = []
    calls: list[ast.Call] = []
    nested: set[ast.Call] = set()
    # one walk, breadth first as ast.walk, knowing of each node whether a call's argument holds it
    queue: collections.deque[tuple[ast.AST, bool]] = collections.deque([(tree, False)])
    while queue:
        node, inside = queue.popleft()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) and _is_assigned(node):
            assigned.append((node.targets[0].attr, node.value))
        if isinstance(node, ast.Call):
            calls.append(node)
            if inside:
                nested.add(node)
            queue.extend((child, inside or child is not node.func) for child in ast.iter_child_nodes(node))
        else:
            queue.extend((child, inside) for child in ast.iter_child_nodes(node))
    return tuple(assigned), tuple(calls), frozenset(nested)


# Elementwise torch.nn activations with no tensors: blocks built with one or another (a ReLU or a
# Hardswish inside a conv-norm-act element) are one class taking the activation's class, as the
# source's `activation_layer`. Only inside a call: a child that is the activation alone is passed whole.
ACTIVATIONS = frozenset(
    f"nn.{name}"
    for name in ("ReLU", "ReLU6", "SiLU", "GELU", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh", "Mish", "ELU", "SELU", "CELU",
                 "LeakyReLU", "Softplus", "Hardtanh", "Softsign", "Tanhshrink", "LogSigmoid")
)  # fmt: skip


def number_slots(lines: tuple[str, ...], nested: bool = False) -> list[Slot]:
    """Every number literal in forward lines, one by one (inside tuples too), in order; with `nested`,
    in the statements of a block too (the indented lines under an `if` or a loop)."""
    slots: list[Slot] = []
    for number, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" ")) if nested else 0
        for start, end, text, name in _numbers(line[indent:]):
            slots.append(Slot(number, indent + start, indent + end, text, name, False))
    return slots


# Where a number literal can start: a digit not inside a name or after a point, or a point before a
# digit (`.5`, also right after a keyword: `x if c else.5`).
_NUMBER_START = re.compile(r"(?<![\w.])\d|\.\d")


@functools.lru_cache(maxsize=1 << 14)
def _numbers(statement: str) -> tuple[tuple[int, int, str, str], ...]:
    """The number literals of one statement (number_slots), in order: start and end column, text, and
    the keyword it is passed as (`stride` in `F.conv3d(x, w, stride=2)`), else "value"."""
    if _NUMBER_START.search(statement) is None:
        return ()
    try:
        tree = ast.parse(statement)
    except SyntaxError:
        return ()  # a line of a compound statement: compared as it is
    nodes = list(ast.walk(tree))
    negated = {id(n.operand) for n in nodes if isinstance(n, ast.UnaryOp)}  # the `1` of `-1`: the whole `-1` is the literal
    keywords = {id(k.value): k.arg for n in nodes if isinstance(n, ast.Call) for k in n.keywords if k.arg and is_plain_identifier(k.arg) and k.arg not in BUILTIN_NAMES}
    found = [
        (*_segment(statement, node), keywords.get(id(node), "value"))
        for node in nodes
        if isinstance(node, ast.expr) and _is_number(node) and not isinstance(node, ast.Tuple) and id(node) not in negated
    ]
    return tuple(sorted(found))


def forget_lines() -> None:
    """Drop the lines kept during an export (their tokens, parses and literals): a long-running process
    that exports many models keeps none of them."""
    _tokens.cache_clear()
    _numbers.cache_clear()
    _walked.cache_clear()
    parsed_line.cache_clear()
    for kept in _PER_LINE:
        kept.cache_clear()


def _segment(line: str, node: ast.expr) -> tuple[int, int, str]:
    """Where `node` is in the line, in characters, and its text."""
    return char_offset(line, node.col_offset), char_offset(line, node.end_col_offset), node_text(line, node)


def _is_assigned(node: ast.Assign) -> bool:
    """An attribute's value a parameter may give: a number, or a flag (`self.is_first = True`, alone_flags.py;
    not the training mode, which the export sets as the source's)."""
    value, target = node.value, cast(ast.Attribute, node.targets[0])
    flag = isinstance(value, ast.Constant) and type(value.value) is bool and target.attr != "training"
    return flag or _is_number(value)


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_number(node.operand)
    return isinstance(node, ast.Tuple) and bool(node.elts) and all(_is_number(e) for e in node.elts)


def _argument_name(call: ast.Call, position: int, known: dict[str, tuple[str, ...]]) -> str:
    """The parameter a positional argument fills: from the torch.nn or generated class's signature, else `size` or `value`."""
    func = call.func
    if isinstance(func, ast.Name) and position < len(known.get(func.id, ())):
        return known[func.id][position].split("=")[0]
    if (layer := layer_name(call)) is not None:
        names = layer_parameters(layer)
        if position < len(names):
            return names[position]
    if isinstance(func, ast.Attribute) and func.attr in ("empty", "zeros", "ones"):
        return "size"
    return "value"


def variable_names(lines: Iterable[str]) -> set[str]:
    """Names the lines read or bind as variables (variable_tokens): not attributes, keywords or keyword arguments."""
    return {token.string for line in lines for token in variable_tokens(line_tokens(line))}


def global_names(lines: tuple[str, ...]) -> set[str]:
    """Names the lines read from outside (`nn`, `torch`, `BasicBlock`): not attributes or keywords."""
    return {token.string for line in lines for token in _free_names(line_tokens(line))}


def rename_names(line: str, renames: dict[str, str]) -> str:
    """The line with each name token in `renames` replaced."""
    names = [t for t in line_tokens(line) if t.type == tokenize.NAME and t.string in renames]
    return replaced(line, [(t.start[1], t.end[1], renames[t.string]) for t in names])
