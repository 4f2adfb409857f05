"""Container children whose instances hold only some of their elements: one class builds those under `if`.

torchvision's `InvertedResidual` puts an expansion layer first in its `conv` Sequential only where
`expand_ratio != 1`, MobileNetV3's a `SqueezeExcitation` only where `use_se`. Traced, such blocks
come out as classes whose `__init__` differ in the elements of one container call, so a class
each. `pad` lines up the element lists of the classes of one source class (the longest common
subsequence of the elements' code, literals masked) and writes each class's container call with
every element of the union, so that the classes group and merge as classes equal but for
literals; what it returns says which elements each class really lacks. The merged class builds
the elements not every instance has under `if` (`built_in_steps`):

    layers = []
    if in_channels is not None:
        layers.append(Conv2dNormActivation(nn.Conv2d(in_channels, hidden, 1, bias=False), ...))
    self.conv = nn.Sequential(*layers, Conv2dNormActivation(...), nn.Conv2d(...), nn.BatchNorm2d(...))
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .code_slots import literal_slots, masked
from .ir import ClassIR
from .spelled_calls import char_offset, named_children

Known = dict[str, tuple[str, ...]]
Element = tuple[str, int]  # (container attribute, index of the element in the padded call)
Absent = frozenset[Element]

MAX_OPTIONAL = 2  # elements only some instances hold, per container: with more, classes of their own read better

_CONTAINER = re.compile(r"^self\.(\w+) = (nn\.Sequential|nn\.ModuleList)\(")


@dataclass(frozen=True)
class Container:
    """A child built as a container call of element calls: `self.conv = nn.Sequential(a, b)`."""

    attribute: str
    func: str  # "nn.Sequential" or "nn.ModuleList"
    elements: tuple[str, ...]  # each element's code
    spans: tuple[tuple[int, int], ...]  # where each element is in the line, in characters

    @property
    def listed(self) -> bool:
        """True when the elements are one list argument: `nn.ModuleList([a, b])`."""
        return self.func == "nn.ModuleList"

    def line(self, elements: list[str] | tuple[str, ...]) -> str:
        """The line building this container of `elements`."""
        joined = ", ".join(elements)
        return f"self.{self.attribute} = {self.func}([{joined}])" if self.listed else f"self.{self.attribute} = {self.func}({joined})"


@functools.lru_cache(maxsize=4096)
def container(line: str) -> Container | None:
    """The container a `__init__` line builds from calls only, else None (parsed once: padding, merging
    and the steps that build it ask again for the same lines)."""
    match = _CONTAINER.match(line)
    if match is None:
        return None
    try:
        statement = ast.parse(line).body[0]
    except (SyntaxError, IndexError):
        return None
    value = statement.value if isinstance(statement, ast.Assign) else None
    if not isinstance(value, ast.Call) or value.keywords or named_children(value) is not None:
        return None  # named children: not a list whose elements shift
    args: list[ast.expr] = value.args
    if match[2] == "nn.ModuleList":
        if len(args) != 1 or not isinstance(args[0], ast.List):
            return None
        args = args[0].elts
    if not args or not all(isinstance(a, ast.Call) for a in args):
        return None
    spans = tuple((char_offset(line, a.col_offset), char_offset(line, a.end_col_offset)) for a in args)
    return Container(match[1], match[2], tuple(line[s:e] for s, e in spans), spans)


def pad(classes: list[ClassIR], known: Known, layered: frozenset[str] = frozenset()) -> tuple[list[ClassIR], dict[str, Absent]]:
    """The classes, those of one source class whose container calls hold some elements of a common
    list written with all of them, and for each of those the elements it lacks. `layered`: the generated
    Sequential subclasses, whose calls build layers of their own (`ConvNormAct(8, 16)`)."""
    families: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in classes:
        key = _family(cls, known, layered)
        if key is not None:
            families.setdefault(key, []).append(cls)
    padded: dict[str, ClassIR] = {}
    absent: dict[str, Absent] = {}
    for family in families.values():
        for cls, lines, lacks in _padded(family, known, layered):
            padded[cls.name] = replace(cls, init_lines=lines)
            absent[cls.name] = lacks
    return [padded.get(c.name, c) for c in classes], absent


def _family(cls: ClassIR, known: Known, layered: frozenset[str]) -> tuple[object, ...] | None:
    """What classes must share to be padded to one container call: their source class, forward
    parameters and every other `__init__` line (literals aside); None for a class with no container to pad."""
    if cls.is_root or cls.parent or cls.takes_children:
        return None
    shape: list[object] = []
    for line in cls.init_lines:
        found = container(line)
        if found is not None and _paddable(found, cls, layered):
            shape.append((found.attribute, found.func))
        else:
            shape.append(masked((line,), literal_slots((line,), known))[0])
    if all(isinstance(s, str) for s in shape):
        return None
    return (*cls.source, cls.forward_params, tuple(shape))


def _paddable(found: Container, cls: ClassIR, layered: frozenset[str]) -> bool:
    """True when the container is only called whole (its elements' indices may shift) and holds an element
    with layers of its own (a call nesting calls, or of a class in `layered`): a container of plain layers
    is passed in whole by callers (generalize.py)."""
    attribute = re.escape(found.attribute)
    if any(re.search(rf"self\.{attribute}\b(?!\()", line) for line in cls.forward_lines):
        return False
    if sum(bool(re.search(rf"self\.{attribute}\b", line)) for line in cls.init_lines) != 1:
        return False
    return any(_nests_calls(element) or element.partition("(")[0] in layered for element in found.elements)


def _nests_calls(element: str) -> bool:
    call = ast.parse(element, mode="eval").body
    return any(isinstance(n, ast.Call) and n is not call for n in ast.walk(call))


@dataclass(frozen=True)
class _Item:
    """An element of a container call: its code with literals masked (what must match) and its literals."""

    template: str
    literals: tuple[str, ...]
    text: str


def _padded(family: list[ClassIR], known: Known, layered: frozenset[str]) -> Iterator[tuple[ClassIR, tuple[str, ...], Absent]]:
    """(class, its `__init__` with every container holding the union of elements, the elements it lacks)."""
    unions: dict[int, tuple[tuple[str, ...], list[tuple[int, ...]]]] = {}  # line -> (union texts, each class's places)
    for number in range(len(family[0].init_lines)):
        found = [container(cls.init_lines[number]) for cls in family]
        if any(c is None or not _paddable(c, cls, layered) for c, cls in zip(found, family)):
            continue
        sequences = [tuple(_item(e, known) for e in c.elements) for c in found if c is not None]
        if len({tuple(i.template for i in s) for s in sequences}) < 2:
            continue
        aligned = _aligned(sequences)
        if aligned is not None:
            union, places = aligned
            unions[number] = (tuple(item.text for item in union), places)
    if not unions:
        return
    for row, cls in enumerate(family):
        lines, lacks = list(cls.init_lines), set()
        for number, (texts, places) in unions.items():
            own = container(cls.init_lines[number])
            assert own is not None
            mine = dict(zip(places[row], own.elements))
            lines[number] = own.line([mine.get(k, text) for k, text in enumerate(texts)])
            lacks |= {(own.attribute, k) for k in range(len(texts)) if k not in mine}
        yield cls, tuple(lines), frozenset(lacks)


def _item(element: str, known: Known) -> _Item:
    """The element as the container call holds it (inside a call: an activation's class is a literal there)."""
    line = f"f({element})"
    slots = literal_slots((line,), known)
    return _Item(masked((line,), slots)[0], tuple(s.text for s in slots), element)


def _aligned(sequences: list[tuple[_Item, ...]]) -> tuple[tuple[_Item, ...], list[tuple[int, ...]]] | None:
    """The union of the sequences (each aligned to it on a longest common subsequence, the one whose
    matched elements share the most literals) and where each one's elements are in it; None when more
    than MAX_OPTIONAL elements are not in all, none is in all, or a class holds an optional element
    twice (a count of repeats, not an option)."""
    union: list[_Item] = list(sequences[0])
    places: list[list[int]] = [list(range(len(union)))]
    for sequence in sequences[1:]:
        merged: list[_Item] = []
        moved: dict[int, int] = {}
        mine: list[int] = []
        i = j = 0
        for mi, mj in [*_common(union, sequence), (len(union), len(sequence))]:
            while i < mi:
                moved[i] = len(merged)
                merged.append(union[i])
                i += 1
            while j < mj:
                mine.append(len(merged))
                merged.append(sequence[j])
                j += 1
            if mi < len(union):
                moved[i] = len(merged)
                mine.append(len(merged))
                merged.append(union[i])
                i, j = i + 1, j + 1
        places = [[moved[p] for p in row] for row in places] + [mine]
        union = merged
    always = set.intersection(*(set(row) for row in places))
    optional = {k for k in range(len(union)) if k not in always}
    if not always or len(optional) > MAX_OPTIONAL:
        return None
    for sequence, row in zip(sequences, places):
        texts = [item.text for item in sequence]
        if any(k in optional and texts.count(item.text) > 1 for item, k in zip(sequence, row)):
            return None
    return tuple(union), [tuple(row) for row in places]


def _common(a: list[_Item], b: tuple[_Item, ...]) -> list[tuple[int, int]]:
    """(index in a, index in b) of a longest common subsequence of templates; of those, the one whose
    matched elements are most alike (a depthwise conv matched to a depthwise conv)."""
    best = [[(0, 0)] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1])
            if a[i].template == b[j].template:
                matches, shared = best[i + 1][j + 1]
                best[i][j] = max(best[i][j], (matches + 1, shared + _shared(a[i], b[j])))
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i].template == b[j].template and best[i][j] == (best[i + 1][j + 1][0] + 1, best[i + 1][j + 1][1] + _shared(a[i], b[j])):
            out.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _shared(a: _Item, b: _Item) -> int:
    """How alike two elements of one template are: literals equal, and literals equal to the same earlier
    one (`groups` equal to the channels: a depthwise conv, whatever its width)."""
    pattern_a, pattern_b = (tuple(item.literals.index(v) for v in item.literals) for item in (a, b))
    return sum(x == y for x, y in zip(a.literals, b.literals)) + sum(x == y for x, y in zip(pattern_a, pattern_b))


def element_text(lines: tuple[str, ...], element: Element) -> str:
    """The code of one element of a container call in `lines`."""
    name, k = element
    return next(found.elements[k] for line in lines if (found := container(line)) is not None and found.attribute == name)


def element_of(lines: tuple[str, ...], line: int, column: int) -> Element | None:
    """The container element of `lines` that holds the character at (line, column), if any."""
    found = container(lines[line])
    if found is None:
        return None
    return next(((found.attribute, k) for k, (start, end) in enumerate(found.spans) if start <= column < end), None)


def built_in_steps(lines: tuple[str, ...], conditions: dict[Element, str | None], name: str) -> tuple[str, ...]:
    """The `__init__` lines with each container call holding an element under a condition (None: never
    built) built as a list in steps: `layers = [a]`, `if cond:` `layers.append(b)`, `nn.Sequential(*layers, c)`."""
    out: list[str] = []
    for line in lines:
        found = container(line)
        if found is None or not any((found.attribute, k) in conditions for k in range(len(found.elements))):
            out.append(line)
            continue
        kept = [(e, c) for k, e in enumerate(found.elements) if (c := conditions.get((found.attribute, k), "")) is not None]  # "": always
        out += _steps(found, kept, name)
    return tuple(out)


def _steps(found: Container, kept: list[tuple[str, str]], name: str) -> list[str]:
    conditional = [k for k, (_, condition) in enumerate(kept) if condition]
    if not conditional:
        return [found.line([e for e, _ in kept])]
    first, last = conditional[0], conditional[-1]
    lines = [f"{name} = [{', '.join(e for e, _ in kept[:first])}]"]
    k = first
    while k <= last:
        condition = kept[k][1]
        run = [kept[k][0]]
        while k + len(run) <= last and kept[k + len(run)][1] == condition:
            run.append(kept[k + len(run)][0])
        if condition:
            lines.append(f"if {condition}:")
            lines += [f"    {name}.append({e})" for e in run]
        else:
            lines.append(f"{name}.append({run[0]})" if len(run) == 1 else f"{name} += [{', '.join(run)}]")
        k += len(run)
    tail = [e for e, _ in kept[last + 1 :]]
    if found.listed:
        return [*lines, f"self.{found.attribute} = {found.func}({name})" if not tail else found.line([f"*{name}", *tail])]
    return [*lines, found.line([f"*{name}", *tail])]


def flag_base(element: str) -> str:
    """`use_squeeze_excitation` for an element `SqueezeExcitation(...)`: the name of a flag that builds it."""
    called = element.split("(", 1)[0].rpartition(".")[2]
    return "use_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", called).lower().strip("_")
