"""Children only some instances of a source class build, and children some build as `nn.Identity()`.

A child only some blocks have (`downsample`) is an optional argument of the shared class, built by
the caller and passed in, else None: applied in place it goes under `if self.downsample is not
None:` (`optional_child`), with code of its own the forward branches on it (`extra_child`). A
child some build as an `nn.Identity()` and others as a module called in its place is passed whole,
every instance running the calling forward (`identity_children`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .built_children import BuiltChildren
from .child_lines import attribute, attributes, init_template, names_on_self
from .code_slots import filled, masked, number_slots, rename_variables, variable_names
from .elements import Absent
from .flags import branched, code_lines, few_lines_apart, literals_apart, member_forwards
from .ir import ClassIR
from .regions import IN_PLACE, block_end
from .split_forms import split_alike

Known = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class OptionalChild:
    """A child only some instances have (`downsample`): built by the caller and passed in, else None.
    With code of its own, up to MAX_CHILDREN children the same instances have (timm's `res_scale1` and
    `res_scale2`): the forward branches on the first."""

    children: tuple[str, ...]
    init_lines: tuple[int, ...]  # where the holders' `__init__` assigns them, ascending
    holders: frozenset[str]  # the classes that have it
    forward: tuple[str, ...]  # the shared forward: the holders' code for the child under `if self.<child> is not None:`
    wrapped: tuple[int, int] | None = None  # the holders' forward lines [start, end) put under that `if`; None: forwards of their own
    literals_vary: bool = False  # with forwards of their own: each side's forwards differ in number literals (flags.member_forwards)
    params: tuple[str, ...] = ()  # with forwards of their own: the shared forward's parameters where the holders take inputs more

    @property
    def child(self) -> str:
        """The child the forward tests: `if self.<child> is not None:`."""
        return self.children[0]


MAX_CHILDREN = 2


def with_optional_children(
    groups: list[list[ClassIR]], known: Known, absent: dict[str, Absent], identities: bool = False
) -> list[tuple[list[ClassIR], OptionalChild | None]]:
    """Join a group to an earlier one of the same source class that lacks just one child it has (not a
    container padded with elements some holders lack: callers pass the child as its line builds it).
    `identities`: children that are all `nn.Identity()` may be optional too (else a flag's: every
    instance builds them)."""
    out: list[tuple[list[ClassIR], OptionalChild | None]] = []
    for group in groups:
        for i, (base, optional) in enumerate(out):
            if optional:
                continue
            for lacking_first in (True, False):
                lacking, having = (base, group) if lacking_first else (group, base)
                found = _optional_child(lacking[0], having[0], known)
                if found is None and lacking[0].source == having[0].source:  # else no child tells them apart (_added_children)
                    lacking, having = split_alike(lacking, having)  # tails apart only in what is inlined: written alike
                    found = _extra_child(lacking, having, known, identities)
                    if found is None and (named := _named_apart(lacking, having)) is not None:
                        found = _extra_child(*named, known, identities)
                        lacking, having = named if found is not None else (lacking, having)
                if found is None and (padded := with_identities(lacking, having)) is not None:
                    found = _extra_child(padded, having, known, identities)
                    lacking = padded if found is not None else lacking
                if found is not None and any(attribute in found.children for c in having for attribute, _ in absent.get(c.name, ())):
                    found = None
                if found is not None and not _tells_apart(lacking, having, found.children):
                    found = None
                if found is not None:
                    members = [*lacking, *having] if lacking_first else [*having, *lacking]
                    out[i] = (members, replace(found, holders=frozenset(c.name for c in having)))
                    break
            if out[i][1] is not None:
                break
        else:
            out.append((group, None))
    return out


def with_identities(lacking: list[ClassIR], having: list[ClassIR]) -> list[ClassIR] | None:
    """The lacking classes building the identity children the having ones build and they lack (timm's
    `drop_path1`, built beside the optional `token_mixer` and `ls1`): every instance builds those, as
    in the source. None where they lack none, or name one otherwise."""
    padded = [identities_of(c, having[0].init_lines) for c in lacking]
    if any(lines is None for lines in padded) or all(lines == c.init_lines for lines, c in zip(padded, lacking)):
        return None
    return [replace(c, init_lines=lines) for c, lines in zip(lacking, padded) if lines is not None]


FOLDED = re.compile(r"_tensor_constant[0-9]+")  # symbolic_trace's name for a tensor it folded into the root


def _named_apart(lacking: list[ClassIR], having: list[ClassIR]) -> tuple[list[ClassIR], list[ClassIR]] | None:
    """Both sides with their inputs named by position (named_like), where that renames any and each holder's
    code is then the others' with one run of lines put in (_inserted); else None."""
    params = lacking[0].forward_params
    named_lacking = named_like(lacking, params)
    named_having = named_like(having, (*params, *having[0].forward_params[len(params) :]))
    if named_lacking is None or named_having is None or (named_lacking, named_having) == (lacking, having):
        return None
    if not all(_inserted(named_lacking[0].forward_lines, c.forward_lines) for c in named_having):
        return None
    return named_lacking, named_having


def named_like(classes: list[ClassIR], params: tuple[str, ...]) -> list[ClassIR] | None:
    """The classes, each taking inputs `params` and maybe more, those first inputs named `params` (callers
    pass them by position, as generalize._groups compares them: the constants symbolic_trace folded into
    the root that each block is passed, `_tensor_constant8` for `_tensor_constant0`, FOLDED); None where a
    class takes fewer, or a new name is taken."""
    if len(set(params)) != len(params):
        return None
    out = []
    for cls in classes:
        theirs = cls.forward_params
        if len(theirs) < len(params) or any(p.startswith("*") or "=" in p for p in (*params, *theirs)):
            return None
        renames = {old: new for old, new in zip(theirs, params) if old != new}
        taken = variable_names(cls.forward_lines) | set(theirs[len(params) :])
        if any(new in taken and new not in renames for new in renames.values()):
            return None
        lines = tuple(rename_variables(line, renames) for line in cls.forward_lines)
        out.append(replace(cls, forward_params=(*params, *theirs[len(params) :]), forward_lines=lines) if renames else cls)
    return out


def _inserted(lacking: tuple[str, ...], having: tuple[str, ...]) -> bool:
    """True when `having` is `lacking` with one run of lines put in (numbers aside): inputs named by position
    then mean the same in both (a block reading its optional child's inputs first would read the others'
    under their names: no join)."""
    a, b = _masked_forward(lacking), _masked_forward(having)
    head = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
    return len(b) > len(a) and b[: head] == a[:head] and b[len(b) - (len(a) - head) :] == a[head:]


def _tells_apart(lacking: list[ClassIR], having: list[ClassIR], children: tuple[str, ...]) -> bool:
    """True when every class of `having` builds each child (not `None`: in_place_children pads with it) and
    no class of `lacking` sets it: then `if self.<child> is not None:` runs each class's own code."""
    def built(cls: ClassIR, child: str) -> list[str]:
        return [line.split(" = ", 1)[1] for line in cls.init_lines if attribute(line) == child]

    return all(len(b := built(c, child)) == 1 and b[0] != "None" for c in having for child in children) and not any(
        built(c, child) for c in lacking for child in children
    )


def one_code(group: list[ClassIR], optional: OptionalChild | None) -> bool:
    """True when the group runs one forward, literals too (a holder of an optional child with its line)."""
    if optional is not None and optional.wrapped is None:
        return not optional.literals_vary  # an extra child of its own code: one code where each side's forwards are the same
    return len({core_forward(c, optional) for c in group}) == 1


def _same_forward(group: list[ClassIR]) -> bool:
    """True when the group's forwards are the same (their literals too)."""
    return all(c.forward_lines == group[0].forward_lines for c in group)


def _optional_child(a: ClassIR, b: ClassIR, known: Known) -> OptionalChild | None:
    """The child (its holders not yet known) when `b` is `a` plus one child, applied to a value in place
    (with the comment naming its source line, if any): `if self.downsample is not None:` around that
    line. The forwards may differ in number literals (parameters of the merged class)."""
    if len(b.forward_lines) - len(a.forward_lines) not in (1, 2):
        return None
    for (child,), (i,) in _added_children(a, b, known, r"self\.(\w+) = .+", 1):
        for j, text in enumerate(b.forward_lines):
            first = j - (len(b.forward_lines) - len(a.forward_lines)) + 1  # the call, after the comment on its source line
            if not ((m := IN_PLACE.fullmatch(text)) and m[2] == child) or first < 0 or not all(line.startswith("#") for line in b.forward_lines[first:j]):
                continue
            core = b.forward_lines[:first] + b.forward_lines[j + 1 :]
            if _masked_forward(core) == _masked_forward(a.forward_lines) and not number_slots(b.forward_lines[first : j + 1]):
                forward = b.forward_lines
                shared = (*forward[:j], f"if self.{child} is not None:", f"    {forward[j]}", *forward[j + 1 :])
                return OptionalChild((child,), (i,), frozenset(), shared, (first, j + 1))
    return None


def _masked_forward(lines: tuple[str, ...]) -> tuple[str, ...]:
    return masked(lines, number_slots(lines))


def core_forward(cls: ClassIR, optional: OptionalChild | None) -> tuple[str, ...]:
    """The class's forward without the lines of an optional child the shared forward puts under `if`."""
    if optional is None or optional.wrapped is None or cls.name not in optional.holders:
        return cls.forward_lines
    start, end = optional.wrapped
    return cls.forward_lines[:start] + cls.forward_lines[end:]


def _extra_child(lacking: list[ClassIR], having: list[ClassIR], known: Known, identities: bool = False) -> OptionalChild | None:
    """The children (their holders not yet known) when the `having` classes build what the `lacking` ones
    build (literals aside) plus up to MAX_CHILDREN children, which the latter's code never reads, and all
    take the same forward parameters: their forwards may differ in any way that branching on
    `if self.<child> is not None:` writes in a few lines. Forwards of one side may differ in their number
    literals (parameters of the merged class) where `member_forwards` places them."""
    a, b = lacking[0], having[0]
    found = next(_added_children(a, b, known, r"self\.(\w+) = [\w.]+\(.*", len(b.init_lines) - len(a.init_lines), inputs_more=True), None)
    if found is None:
        return None
    children, lines = found
    if not identities and all(is_identity(b.init_lines[i]) for i in lines):
        return None  # no state to test for: every instance builds it, and a flag tells the codes apart (generalize._identities_added)
    condition, negated = f"self.{children[0]} is not None", f"self.{children[0]} is None"
    names = b.forward_params  # the lacking side's, and any the holders take more (read in their own code alone)
    params = () if a.forward_params == b.forward_params else (*a.forward_params, *(f"{p}=None" for p in b.forward_params[len(a.forward_params) :]))
    if _same_forward(lacking) and _same_forward(having):
        if not few_lines_apart(a.forward_lines, b.forward_lines, names, regions=True):
            return None
        forward = branched(a.forward_lines, b.forward_lines, condition, negated, names, regions=True)
        return OptionalChild(children, lines, frozenset(), _tests_applied(forward, condition, children[1:]), params=params)
    members = [*lacking, *having]
    forwards = member_forwards([c.forward_lines for c in members], [k >= len(lacking) for k in range(len(members))], condition, negated, names)
    if forwards is None or not few_lines_apart(literals_apart(a.forward_lines)[0], literals_apart(b.forward_lines)[0], names):
        return None
    return OptionalChild(children, lines, frozenset(), forwards[0].lines, literals_vary=True, params=params)


def _tests_applied(forward: tuple[str, ...], condition: str, others: tuple[str, ...]) -> tuple[str, ...]:
    """The forward with an `if <condition>:` whose one line of code applies another of the children in
    place testing that child: `if self.upsample is not None: out = self.upsample(out)` (the same instances
    hold both; the test names the one applied)."""
    out = list(forward)
    for k, line in enumerate(forward):
        if line.strip() != f"if {condition}:":
            continue
        code = code_lines(tuple(text.strip() for text in forward[k + 1 : block_end(forward, k)]))
        applied = IN_PLACE.fullmatch(code[0]) if len(code) == 1 else None
        if applied and applied[2] in others:
            out[k] = line.replace(condition, f"self.{applied[2]} is not None")
    return tuple(out)


def _added_children(
    a: ClassIR, b: ClassIR, known: Known, line_pattern: str, count: int, inputs_more: bool = False
) -> Iterator[tuple[tuple[str, ...], tuple[int, ...]]]:
    """(children, init lines) for each set of `count` (at most MAX_CHILDREN) lines of `b` matching
    `line_pattern` without which `b` builds what `a` builds (literals and children passed in aside),
    the children read nowhere else, when both come from one source class and take the same forward
    parameters (`inputs_more`: or `b` some more after them, which `a`'s code then never reads: timm
    pvt_v2's Attention takes H and W for its `sr` alone)."""
    if a.source != b.source or not (a.forward_params == b.forward_params or (inputs_more and _inputs_more(a, b))):
        return
    if not 1 <= count <= MAX_CHILDREN or len(b.init_lines) != len(a.init_lines) + count:
        return
    template = init_template(a, known)
    for lines in itertools.combinations(range(len(b.init_lines)), count):
        matches = [re.fullmatch(line_pattern, b.init_lines[i]) for i in lines]
        core = tuple(line for i, line in enumerate(b.init_lines) if i not in lines)
        if any(m is None for m in matches) or init_template(replace(b, init_lines=core), known) != template:
            continue
        children = tuple(m[1] for m in matches if m is not None)
        if not any(f"self.{child}" in text for child in children for text in (*core, *a.init_lines, *code_lines(a.forward_lines))):
            yield children, lines


def _inputs_more(a: ClassIR, b: ClassIR) -> bool:
    """True when `b`'s forward takes `a`'s plain inputs, then more, none of them a name `a`'s code reads."""
    count = len(a.forward_params)
    if len(b.forward_params) <= count or b.forward_params[:count] != a.forward_params:
        return False
    if any(p.startswith("*") or "=" in p for p in b.forward_params):
        return False
    return not variable_names(code_lines(a.forward_lines)) & set(b.forward_params[count:])


def core_lines(cls: ClassIR, optional: OptionalChild | None) -> tuple[str, ...]:
    """The class's `__init__` without the line building an optional child."""
    if optional is None or cls.name not in optional.holders:
        return cls.init_lines
    return tuple(line for i, line in enumerate(cls.init_lines) if i not in optional.init_lines)


def with_child(merged: ClassIR, optional: OptionalChild, forward: tuple[str, ...], built: BuiltChildren | None = None) -> ClassIR:
    """`self.downsample = downsample` in `__init__` (the lines that build it, where the class can), and
    the forward (that reads `if self.downsample is not None:`)."""
    init = list(merged.init_lines)
    if built is not None:
        init[built.at : built.at] = built.lines
        return replace(merged, init_lines=tuple(init), forward_lines=forward)
    for child, line in zip(optional.children, optional.init_lines):
        init.insert(line, f"self.{child} = {child}")
    params = (*merged.init_params, *(f"{child}=None" for child in optional.children))
    return replace(merged, init_lines=tuple(init), forward_lines=forward, init_params=params)


def identity_children(level: list[ClassIR]) -> list[ClassIR]:
    """Where instances of one source class build a child as `nn.Identity()` and others a module they
    call (`out + self.downsample(x)`), callers pass the child whole: `Bottleneck(..., downsample=nn.Identity())`,
    as timm writes it. Where the graph has no call of the identity, the former run the latter's
    forward (an identity call returns its input); where it kept the call, the forwards must agree."""
    families: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in level:
        if not (cls.is_root or cls.parent or cls.takes_children):
            key = (*cls.source, cls.forward_params, tuple(attribute(line) for line in cls.init_lines))
            families.setdefault(key, []).append(cls)
    out = {c.name: c for c in level}
    for family in families.values():
        for k, line in enumerate(family[0].init_lines):
            name = attribute(line)
            if not name:
                continue
            called = [c for c in family if _called_only(c.forward_lines, name) and c.init_lines[k] != f"self.{name} = nn.Identity()"]
            for cls in family:
                if cls.init_lines[k] != f"self.{name} = nn.Identity()" or not called:
                    continue
                holder = out[called[0].name]
                if _called_only(cls.forward_lines, name):  # a graph that kept the identity call (symbolic_trace)
                    forward = cls.forward_lines if _masked_forward(cls.forward_lines) == _masked_forward(holder.forward_lines) else None
                elif reads(cls.forward_lines, name):
                    continue
                else:
                    forward = _identity_forward(holder.forward_lines, out[cls.name].forward_lines, name)
                if forward is not None:
                    out[cls.name] = replace(out[cls.name], forward_lines=forward, whole_children=out[cls.name].whole_children | {name})
                    for other in called:
                        out[other.name] = replace(out[other.name], whole_children=out[other.name].whole_children | {name})
    return [out[c.name] for c in level]


def _identity_forward(holder: tuple[str, ...], own: tuple[str, ...], name: str) -> tuple[str, ...] | None:
    """The holder's forward with `own`'s literals, when `own` is it with each `self.<name>(value)` read as `value`."""
    call = re.compile(rf"self\.{re.escape(name)}\(([A-Za-z_]\w*)\)")
    expected = tuple(line if line.lstrip().startswith("#") else call.sub(r"\1", line) for line in holder)
    mine, theirs = number_slots(own), number_slots(holder)
    if _masked_forward(expected) != _masked_forward(own) or len(mine) != len(theirs) or len(number_slots(expected)) != len(theirs):
        return None
    return filled(holder, theirs, [s.text for s in mine])


def _called_only(lines: tuple[str, ...], name: str) -> bool:
    """True when the forward reads `self.<name>` and only calls it."""
    return reads(lines, name) and not any(re.search(rf"self\.{re.escape(name)}\b(?!\()", line) for line in code_lines(lines))


def reads(lines: tuple[str, ...], name: str) -> bool:
    """True when a line of code (not a comment quoting the source) reads `self.<name>`."""
    return any(re.search(rf"self\.{re.escape(name)}\b", line) for line in code_lines(lines))


def identities_of(cls: ClassIR, donor: tuple[str, ...]) -> tuple[str, ...] | None:
    """The class's `__init__` with the identity children of `donor` it lacks, each after the attribute it
    follows there (first where none); None where the class names one of them otherwise."""
    lines = list(cls.init_lines)
    own, names = attributes(cls), names_on_self(cls)
    after = ""
    for line in donor:
        name = attribute(line)
        if is_identity(line) and name not in own:
            if name in names:
                return None
            at = next((k + 1 for k, mine in enumerate(lines) if after and attribute(mine) == after), 0)
            lines.insert(at, line)
            own.add(name)
        if name in own:
            after = name
    return tuple(lines)


def is_identity(line: str) -> bool:
    """True when the line builds a child as `nn.Identity()`."""
    return bool(attribute(line)) and line.endswith(" = nn.Identity()")
