"""Container subclasses whose instances hold as many children as lists they are built from.

timm's `MixedConv2d` is a ModuleDict subclass that builds one convolution per kernel size it is
given (`for idx, k in enumerate(kernel_size): self.add_module(str(idx), create_conv2d(...))`) and
splits its input by a list of channel counts (`torch.split(x, self.splits, 1)`). Its instances
hold 2, 3 or 4 children, so each number of children would be a class of its own. Where the
instances of one source container subclass build nothing but numbered children of one code, and
their forwards are one code but for lists of numbers (and numbers), the class builds its children
in a loop over the lists their literals vary in, and stores the forward's lists:

    def __init__(self, in_channels, kernel_sizes, paddings):
        super().__init__()
        for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):
            self.add_module(str(i), nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding))
        self.splits = [in_channels] * len(kernel_sizes)

A literal one instance's children differ in is a list for every instance; one that differs only
between instances is a plain parameter, as generalize.py makes it. A forward list is one item a
child repeated where it is so in every instance (as above), a list the children are built from where
it is one, else a parameter of its own.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from torch import nn

from .code_slots import Slot, filled, global_names, literal_slots, masked, number_slots
from .instances import Instances
from .ir import ClassIR
from .literal_names import literal_names
from .names import unique_identifier
from .spelled_calls import added_line, char_offset, node_text, parsed_line, without_defaults

Known = dict[str, tuple[str, ...]]
_BASES = frozenset({"ModuleDict", "Sequential", "ModuleList"})
# attributes a stored list must not take: the container's own (`self.values()`, `self.keys()`)
_RESERVED = frozenset(dir(nn.ModuleDict)) | frozenset(dir(nn.Sequential)) | frozenset(dir(nn.ModuleList)) | {"training"}
_LOOP_NAMES = frozenset({"i", "str", "range", "enumerate", "zip", "super", "self"})  # what the loop building the children reads


@dataclass(frozen=True)
class Listed:
    """One class for a group of classes, and per old class name the call that builds its instance."""

    merged: ClassIR
    calls: dict[str, str]


@dataclass(frozen=True)
class _Member:
    cls: ClassIR
    children: tuple[str, ...]  # each child's constructor call, as code
    forward_slots: tuple[Slot, ...]  # the forward's number lists and the numbers outside them, in order


def listed_children(level: list[ClassIR], known: Known, instances: Instances) -> tuple[list[ClassIR], list[Listed]]:
    """The classes left, and the groups made one class building its children from lists."""
    groups: dict[tuple[object, ...], list[_Member]] = {}
    for cls in level:
        member = _member(cls, known)
        if member is not None:
            key = (*cls.source, cls.base, cls.forward_params, masked(cls.forward_lines, list(member.forward_slots)))
            groups.setdefault(key, []).append(member)
    listed: list[Listed] = []
    for group in groups.values():
        for members in _by_children(group, known):
            if len({len(m.children) for m in members}) > 1:  # one number of children: a class with literal parameters serves
                listed.append(_listed(members, known, instances))
    gone = {name for found in listed for name in found.calls}
    return [c for c in level if c.name not in gone], listed


def _by_children(group: list[_Member], known: Known) -> list[list[_Member]]:
    """The members whose children are all of one code (literals aside), by that code: an instance
    building children of another code (`bias=True`) keeps a class of its own, the others are listed."""
    out: dict[tuple[str, ...], list[_Member]] = {}
    for member in group:
        codes = {masked((child,), literal_slots((child,), known)) for child in member.children}
        if len(codes) == 1:
            out.setdefault(codes.pop(), []).append(member)
    return list(out.values())


def _member(cls: ClassIR, known: Known) -> _Member | None:
    """`cls` as a member of a listed group: a container subclass with a forward of its own whose
    `__init__` adds only children named 0, 1, ... in order."""
    if cls.is_root or cls.parent or cls.is_sequential or cls.takes_children or cls.base not in _BASES or not cls.forward_lines:
        return None
    children = []
    for k, line in enumerate(cls.init_lines):
        added = added_line(line)
        if added is None or added[0] != str(k) or not isinstance(added[1], ast.Call):
            return None
        children.append(node_text(line, added[1]))
    if not children:
        return None
    return _Member(cls, tuple(children), tuple(forward_slots(cls.forward_lines)))


def forward_slots(lines: tuple[str, ...]) -> list[Slot]:
    """The forward's lists of numbers (`[4, 4]`, one slot each) and the number literals outside them, in order."""
    lists = [_list_slot(number, line, node) for number, line in enumerate(lines) for node in _number_lists(line)]
    inside = {(s.line, k) for s in lists for k in range(s.start, s.end)}
    numbers = [s for s in number_slots(lines, nested=True) if (s.line, s.start) not in inside]
    return sorted([*lists, *numbers], key=lambda s: (s.line, s.start))


def _number_lists(line: str) -> list[ast.List]:
    indent = len(line) - len(line.lstrip(" "))
    tree = parsed_line(line[indent:])
    if tree is None:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.List) and n.elts and all(_is_number(e) for e in n.elts)]


def _list_slot(number: int, line: str, node: ast.List) -> Slot:
    indent = len(line) - len(line.lstrip(" "))
    statement = line[indent:]
    start, end = char_offset(statement, node.col_offset), char_offset(statement, node.end_col_offset)
    return Slot(number, indent + start, indent + end, statement[start:end], "list", False)


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_is_number(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


@dataclass
class _Naming:
    """The names of one merged class: its parameters, loop variables and stored attributes."""

    taken: set[str]
    by_column: dict[tuple[str, ...], str]
    keyword: dict[str, bool]
    values: dict[str, tuple[str, ...]]
    defaults: dict[str, str | None]

    def parameter(self, column: tuple[str, ...], base: str, keyword: bool, default: str | None = None, shared: bool = True) -> str:
        """The parameter taking `column` (a value per member): the one already taking it, where `shared`."""
        if shared and column in self.by_column:
            name = self.by_column[column]
        else:
            name = unique_identifier(base, self.taken, "value", start=2)
            self.values[name], self.defaults[name] = column, default
            if shared:
                self.by_column[column] = name
        self.keyword[name] = self.keyword.get(name, True) and keyword
        return name


def _listed(members: list[_Member], known: Known, instances: Instances) -> Listed:
    """One class building each member's children (all of one code, literals aside) from lists."""
    template = members[0].children[0]
    slots = literal_slots((template,), known)
    # per member, per child, the text of each slot
    rows = [[[s.text for s in literal_slots((child,), known)] for child in member.children] for member in members]
    first = members[0].cls
    naming = _Naming(global_names((template, *first.forward_lines)) | _LOOP_NAMES, {}, {}, {}, {})
    texts = [s.text for s in slots]
    lists: list[tuple[str, str]] = []  # (list parameter, loop variable)
    for j, slot in enumerate(slots):
        per_member = [[child[j] for child in row] for row in rows]
        if all(len(set(values)) == 1 for values in per_member):
            column = tuple(values[0] for values in per_member)
            if len(set(column)) > 1:
                texts[j] = naming.parameter(column, slot.name, slot.keyword, slot.default)
        else:
            column = tuple("[" + ", ".join(values) + "]" for values in per_member)
            known_list = column in naming.by_column
            name = naming.parameter(column, _plural(slot.name), False)
            if not known_list:
                lists.append((name, unique_identifier(slot.name, naming.taken, "value", start=2)))
            texts[j] = dict(lists)[name]
    length = _Length(naming, tuple(str(len(m.children)) for m in members), f"len({lists[0][0]})" if lists else "")
    stored, forward = _forward(members, naming, first, length)
    if not length.code:  # the forward's own list, one item a child, where it stores one (`len(splits)`)
        length.code = _list_length(members, naming)
    child = without_defaults(f"self.child = {filled((template,), slots, texts)[0]}", known).split(" = ", 1)[1]
    init = (_loop(lists, length()), f"    self.add_module(str(i), {child})", *stored)
    positional = [p for p in naming.values if not naming.keyword[p]]
    keywords = [p for p in naming.values if naming.keyword[p]]
    names = [m.cls.name for m in members]
    defaults = {p: _default(naming, p, names, instances) for p in keywords}
    params = (*positional, *(f"{p}={defaults[p]}" for p in keywords))
    merged = replace(first, init_lines=init, init_params=params, forward_lines=forward)
    calls = {}
    for row, member in enumerate(members):
        args = [naming.values[p][row] for p in positional]
        args += [f"{p}={naming.values[p][row]}" for p in keywords if naming.values[p][row] != defaults[p]]
        calls[member.cls.name] = f"{first.name}({', '.join(args)})"
    return Listed(merged, calls)


def _plural(name: str) -> str:
    """The name of a list of `name`s: `kernel_sizes`, `in_channels_list`, `values_2` for `value_2`."""
    stem, numbered, number = name.rpartition("_") if re.fullmatch(r".*[^_0-9]_[0-9]+", name) else (name, "", "")
    return (stem + ("_list" if stem.endswith("s") else "s")) + numbered + number


@dataclass
class _Length:
    """The code for the number of children an instance builds: `len(kernel_sizes)` where the children
    are built from lists, else a parameter of its own made when first asked for (never one a literal of
    the same values fills: `range(in_features)` would say what it is not)."""

    naming: _Naming
    counts: tuple[str, ...]
    code: str = ""

    def __call__(self) -> str:
        if not self.code:
            self.code = self.naming.parameter(self.counts, "count", False, shared=False)
        return self.code


def _list_length(members: list[_Member], naming: _Naming) -> str:
    """`len(<parameter>)` for a list parameter each instance passes one item a child of, else ""."""
    counts = [len(m.children) for m in members]
    for name, column in naming.values.items():
        if all(_length(text) == count for text, count in zip(column, counts)):
            return f"len({name})"
    return ""


def _length(text: str) -> int:
    items = _items(text)
    return -1 if items is None else len(items)


def _items(text: str) -> list[str] | None:
    """The items of a list display, as code; None for any other code."""
    tree = parsed_line(text)
    value = tree.body[0].value if tree is not None and isinstance(tree.body[0], ast.Expr) else None
    return [ast.unparse(e) for e in value.elts] if isinstance(value, ast.List) else None


def _loop(lists: list[tuple[str, str]], count: str) -> str:
    """The loop's header over the lists (zipped where several), or over the count where there are none."""
    if not lists:
        return f"for i in range({count}):"
    if len(lists) == 1:
        return f"for i, {lists[0][1]} in enumerate({lists[0][0]}):"
    variables = ", ".join(v for _, v in lists)
    zipped = ", ".join(p for p, _ in lists)
    return f"for i, ({variables}) in enumerate(zip({zipped})):"


def _forward(members: list[_Member], naming: _Naming, first: ClassIR, length: _Length) -> tuple[list[str], tuple[str, ...]]:
    """The lines storing the forward's varying literals, and the forward reading them from `self`: a
    list of one item a child, the same in each instance's, that item repeated (`[in_channels] * len(kernel_sizes)`)."""
    slots = list(members[0].forward_slots)
    texts = [s.text for s in slots]
    names = _literal_names(first, slots)
    stored: dict[str, str] = {}  # attribute -> the code it stores
    reserved = set(_RESERVED) | {s for line in first.forward_lines for s in _self_names(line)}
    for j, slot in enumerate(slots):
        column = tuple(m.forward_slots[j].text for m in members)
        if len(set(column)) == 1:
            continue
        if slot.name != "list" and column == length.counts and names[j] is None:  # the number of children, where the source names nothing else
            texts[j] = "len(self)"
            continue
        repeated = _repeated(column, [len(m.children) for m in members], naming)
        code = f"[{repeated}] * {length()}" if repeated is not None else None
        if code is None:
            code = naming.parameter(column, names[j] or ("sizes" if slot.name == "list" else slot.name), False)
        attribute = next((a for a, c in stored.items() if c == code), None)
        if attribute is None:  # named as the source reads it where it reads a parameter of another name
            attribute = unique_identifier(names[j] or (code if code.isidentifier() else "sizes"), reserved, "value", start=2)
            stored[attribute] = code
        texts[j] = f"self.{attribute}"
    return [f"self.{attribute} = {code}" for attribute, code in stored.items()], filled(first.forward_lines, slots, texts)


def _repeated(column: tuple[str, ...], counts: list[int], naming: _Naming) -> str | None:
    """The code of the item each instance's list repeats once per child (`in_channels` for `[48, 48, 48]`
    of three children), where one literal or parameter gives it in every instance; else None."""
    items = [_items(text) for text in column]
    if any(i is None or len(i) != count or len(set(i)) != 1 for i, count in zip(items, counts)):
        return None
    values = tuple(i[0] for i in items if i is not None)
    if len(set(values)) == 1:
        return values[0]
    return naming.by_column.get(values)


def _literal_names(cls: ClassIR, slots: list[Slot]) -> list[str | None]:
    """The source's name for each forward slot (literal_names), a list read as one literal in its place."""
    lists = [s for s in slots if s.name == "list"]
    lines = filled(cls.forward_lines, lists, ["0"] * len(lists))
    names = literal_names(lines, cls.source_forward)
    return names if len(names) == len(slots) else [None] * len(slots)


def _self_names(line: str) -> set[str]:
    tree = parsed_line(line.strip())
    return set() if tree is None else {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def _default(naming: _Naming, name: str, names: list[str], instances: Instances) -> str:
    values = naming.values[name]
    layer_default = naming.defaults.get(name)
    return layer_default if layer_default in values else instances.most_common(values, names)

