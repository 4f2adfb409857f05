"""Names for forward literals that become parameters, read from the source line the statement quotes,
or from the source class's forward where no line is quoted.

torch.export bakes `self.num_heads` into `qkv.reshape(1, 17, 3, 4, 16)`; where instances differ there,
the shared class reads it from an attribute. The comment over the statement quotes the source line
(`qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)`): a literal passed where the
source passes an attribute or a local of a descriptive name, in the one call of that function or
method with as many arguments or in the statement's value of the same shape (`q * self.scale`),
takes that name (`num_heads`, `scale`), not `value`; a capital the forward unpacks from a shape takes its
conventional name (`B, C, H, W = x.shape`: `batch_size`, `channels`, `height`, `width`); items and
slices are matched too (`x_s[:, :self.num_1x1_c]`). symbolic_trace quotes no lines: there the calls of
the source forward are read, one of a name and argument count (`stochastic_depth(x, self.p, ...)`).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections import Counter
from collections.abc import Iterator, Mapping

from .annotations import NOTE
from .code_slots import number_slots, per_line
from .names import BUILTIN_NAMES
from .source_names import int_constant
from .spelled_calls import parsed_line


def literal_names(lines: tuple[str, ...], source: str = "") -> list[str | None]:
    """For each number literal of the forward (number_slots, blocks too), the name the source passes in
    its place, or None. `source`: the source class's forward, read where the quoted line names none (a
    symbolic_trace graph quotes none; a statement that reads as its source line quotes none of its own):
    there a call is matched only where the forward makes one call of that function with as many arguments
    (or, where none has, one with more). A capital the forward unpacks from a shape is named only in a
    statement that quotes its line: the one call of a name in the forward may be another statement's (a
    helper method's `reshape`), and a re-trace of the export, which unpacks no shape, could not name it
    again (issue 14's fixed point); and only in a line of `forward` (a helper method unpacks its own)."""
    out: list[str | None] = []
    quoted, in_forward, letters = "", False, shape_letters(source)
    for line in lines:
        note = NOTE.fullmatch(line)
        if note is not None:
            quoted, in_forward = note["code"], note["function"] == "forward"
            continue
        count = sum(1 for slot in number_slots((line,), nested=True) if slot.line == 0)
        if not count:
            continue
        names = _statement_names(line.strip(), quoted, True, letters if in_forward else ()) if quoted else (None,) * count
        if source and None in names:
            names = tuple(a or b for a, b in zip(names, _statement_names(line.strip(), source, False)))
        out += names
    return out


def column_name(names: list[str | None]) -> str | None:
    """The name of a parameter the source passes in these places (one per place, None where it names
    none): the first; but `resolution` where they are a height and a width (a square feature map,
    `x.view(B, C, self.resolution, self.resolution)`, not `self.height` for its width too) and no other
    dimension (channels of as many); and the name itemized where they are its items (`feat_size` for
    `feat_size_0` and `feat_size_1`, _name)."""
    known = list(dict.fromkeys(name for name in names if name is not None))
    if set(_SPATIAL.values()) <= set(known) and not set(known) & set(_DIMENSIONS.values()):
        return "resolution"
    items = [_ITEM.fullmatch(name) for name in known]
    stems = {item[1] for item in items if item is not None}
    if len(known) > 1 and len(stems) == 1 and None not in items:
        return stems.pop()
    return known[0] if known else None


_ITEM = re.compile(r"(.+)_[0-9]+")


@per_line
def _statement_names(statement: str, source: str, one_statement: bool, letters: tuple[tuple[str, str], ...] = ()) -> tuple[str | None, ...]:
    """The name for each literal of `statement` (in number_slots order) that `source` passes in its place:
    with `one_statement`, `source` is the statement a note quotes (its value too is matched with the
    generated one's: `q = q * self.scale`), else the whole forward (its calls alone). `letters`: the
    names of the dimensions the forward unpacks (shape_letters)."""
    slots = number_slots((statement,))
    names: list[str | None] = [None] * len(slots)
    generated, theirs = parsed_line(statement.strip()), parsed_line(source.strip())
    if generated is None or theirs is None:
        return tuple(names)
    starts = {slot.start: k for k, slot in enumerate(slots)}
    calls = _named_calls(source.strip())
    pairs = [(_value(generated), _value(theirs))] if one_statement else []
    for call in _named_calls(statement.strip()):
        named = [c for c in calls if _called(c) == _called(call)]
        alike = [c for c in named if len(c.args) == len(call.args)] or [c for c in named if len(c.args) > len(call.args)]
        if len(alike) == 1:
            pairs.append((call, alike[0]))
    dimensions = dict(letters)
    for mine, source_node in pairs:
        for literal, passed in _aligned(mine, source_node):
            k = starts.get(_start(literal))
            if k is not None and names[k] is None:
                names[k] = _name(passed, dimensions)
    return tuple(names)


@per_line
def _named_calls(code: str) -> tuple[ast.Call, ...]:
    """The calls of a statement or of a whole forward (parsed once an export: a forward is read for each
    statement no note names) that call a name (`_called`)."""
    tree = parsed_line(code)
    return () if tree is None else tuple(n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) is not None)


def _value(tree: ast.AST | None) -> ast.AST | None:
    """The expression a one-statement line computes (an assignment's or a return's value), or None."""
    body = tree.body if isinstance(tree, ast.Module) else []
    if len(body) != 1:
        return None
    statement = body[0]
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
        return statement.value
    return None


def _called(call: ast.Call) -> str | None:
    """The name a call calls: `view` of `x.view(...)`, `stochastic_depth`, `layer_norm` of `F.layer_norm`."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _aligned(mine: ast.AST | None, theirs: ast.AST | None) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(a literal of `mine`, what `theirs` has in its place) where the two trees have one shape down to it:
    calls of one name and as many positional arguments (or the source more: the trace passes its last
    ones by keyword) on receivers of one shape, one operator or comparison, tuples and lists of one
    length, items and slices of values of one shape, one attribute."""
    if mine is None or theirs is None:
        return
    if isinstance(mine, ast.expr) and _is_literal(mine):
        yield mine, theirs  # type: ignore[misc]
    elif isinstance(mine, ast.Call) and isinstance(theirs, ast.Call):
        receivers = isinstance(mine.func, ast.Attribute) and isinstance(theirs.func, ast.Attribute)
        if _method_of_function(mine, theirs):  # `x.split(4)` where the source wrote `torch.split(x, n)`
            yield from _aligned(mine.func.value, theirs.args[0])  # type: ignore[attr-defined]
            theirs, receivers = ast.Call(theirs.func, theirs.args[1:], theirs.keywords), False
        if _called(mine) != _called(theirs) or len(mine.args) > len(theirs.args):
            return  # (fewer arguments: the trace passes the source's last ones by keyword, `training=False`)
        if any(isinstance(a, ast.Starred) for a in (*mine.args, *theirs.args)):
            return
        if receivers:
            yield from _aligned(mine.func.value, theirs.func.value)  # type: ignore[attr-defined]  # `x[:, :8].view(...)`
        for a, b in zip(mine.args, theirs.args):
            yield from _aligned(a, b)
        passed = {k.arg: k.value for k in theirs.keywords if k.arg is not None}
        for keyword in mine.keywords:
            yield from _aligned(keyword.value, passed.get(keyword.arg or ""))
    elif isinstance(mine, ast.BinOp) and isinstance(theirs, ast.BinOp) and type(mine.op) is type(theirs.op):
        yield from _aligned(mine.left, theirs.left)
        yield from _aligned(mine.right, theirs.right)
    elif isinstance(mine, (ast.Tuple, ast.List)) and isinstance(theirs, (ast.Tuple, ast.List)) and len(mine.elts) == len(theirs.elts):
        if not any(isinstance(e, ast.Starred) for e in theirs.elts):
            for a, b in zip(mine.elts, theirs.elts):
                yield from _aligned(a, b)
    elif isinstance(mine, ast.Subscript) and isinstance(theirs, ast.Subscript):
        yield from _aligned(mine.value, theirs.value)
        yield from _aligned(mine.slice, theirs.slice)
    elif isinstance(mine, ast.Slice) and isinstance(theirs, ast.Slice):
        for bound, theirs_bound in zip([mine.lower, mine.upper, mine.step], [theirs.lower, theirs.upper, theirs.step]):
            yield from _aligned(bound, theirs_bound)
    elif isinstance(mine, ast.Compare) and isinstance(theirs, ast.Compare) and list(map(type, mine.ops)) == list(map(type, theirs.ops)):
        for a, b in zip([mine.left, *mine.comparators], [theirs.left, *theirs.comparators]):
            yield from _aligned(a, b)
    elif isinstance(mine, ast.Attribute) and isinstance(theirs, ast.Attribute) and mine.attr == theirs.attr:
        yield from _aligned(mine.value, theirs.value)  # `x[:, :8].shape`


def _method_of_function(mine: ast.Call, theirs: ast.Call) -> bool:
    """`mine` calls a tensor method (`x.split(...)`) where `theirs` calls torch's function of that name on
    its first argument (`torch.split(x, ...)`): torch.export writes the one for the other."""
    function = theirs.func
    return (
        isinstance(mine.func, ast.Attribute) and not (isinstance(mine.func.value, ast.Name) and mine.func.value.id in _MODULES)
        and isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id in _MODULES
        and mine.func.attr == function.attr and len(theirs.args) > len(mine.args)
    )  # fmt: skip


_MODULES = frozenset({"torch", "F"})


def _start(node: ast.expr) -> int:
    return node.col_offset


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _name(node: ast.expr, letters: Mapping[str, str] | None = None) -> str | None:
    """A descriptive name the source passes: `self.num_heads`, `self.p`, `head_dim`, an item of one
    numbered (`feat_size[1]`: `feat_size_1`; the last, `[-1]`: `feat_size`), a dimension the forward
    unpacks (`letters`: `H` for `height`); not another local of a single letter (`C`, `h`)."""
    if isinstance(node, ast.Subscript) and (index := int_constant(node.slice)) is not None:
        name = _name(node.value)
        return None if name is None else name if index < 0 else f"{name}_{index}"
    if isinstance(node, ast.Name) and letters and node.id in letters:
        return letters[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        name, shortest = node.attr, 1
    elif isinstance(node, ast.Name):
        name, shortest = node.id, 2
    else:
        return None
    name = name.lower() if name.isupper() else name
    plain = name.isidentifier() and name == name.lower() and not name.startswith("_")
    return name if plain and len(name) >= shortest and not keyword.iskeyword(name) and name not in BUILTIN_NAMES and name != "self" else None


# What a capital a forward unpacks from a shape stands for by convention (`B, N, C = x.shape`): height
# and width only where the one unpacking has both (`B, H, N, D = q.shape` unpacks heads).
_DIMENSIONS = {"B": "batch_size", "C": "channels", "N": "num_tokens", "L": "seq_len"}
_SPATIAL = {"H": "height", "W": "width"}


@per_line
def shape_letters(source: str) -> tuple[tuple[str, str], ...]:
    """(letter, name) for each capital `source` (a forward) binds only by unpacking a tensor's shape
    (`B, C, H, W = x.shape`, `x.size()`, `x.shape[:2]`), each unpacking naming it alike by _DIMENSIONS
    and _SPATIAL: not one bound otherwise too (`H = self.heads`, a parameter), nor `H` of a second
    unpacking without `W` (`B, H, N, D = q.shape`)."""
    tree = parsed_line(source.strip()) if source else None
    if tree is None:
        return ()
    named: dict[str, set[str | None]] = {}
    unpacked: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) and _is_shape(node.value):
            letters = {e.id for e in node.targets[0].elts if isinstance(e, ast.Name)}
            conventions = {**_DIMENSIONS, **(_SPATIAL if set(_SPATIAL) <= letters else {})}
            for letter in letters:
                named.setdefault(letter, set()).add(conventions.get(letter))
                unpacked[letter] += 1
    bound = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))
    bound.update(a.arg for a in ast.walk(tree) if isinstance(a, ast.arg))
    agreed = {letter: next(iter(names)) for letter, names in named.items() if len(names) == 1 and bound[letter] == unpacked[letter]}
    return tuple(sorted((letter, name) for letter, name in agreed.items() if name is not None))


def _is_shape(node: ast.expr) -> bool:
    """`x.shape`, `x.size()`, or a slice of either."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
        return isinstance(node, ast.Attribute) and node.attr == "size"
    return isinstance(node, ast.Attribute) and node.attr == "shape"
