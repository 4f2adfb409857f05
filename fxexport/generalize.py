"""Classes that differ only in constructor literals become one class with `__init__` parameters.

Two BasicBlocks built with other channel counts and strides come out of collect as two classes
whose `__init__` lines differ only in numbers. They are merged into one class whose differing
literals are parameters named after the argument they fill (`in_channels`, `stride`), and each
instance is built with its own values (`BasicBlock(64, 128, stride=2)`), as the source wrote it.
A keyword argument's parameter defaults to its most common value. A variant whose code really
differs keeps a class of its own, named after what it adds (`BasicBlockWithDownsample`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from torch import nn

from .alone_flags import unflagged
from .built_children import Parameter, built_children
from .call_defaults import with_shared_keywords
from .child_lines import attribute, attributes, init_template, is_child, names_on_self
from .code_slots import (
    Slot,
    called_names,
    filled,
    global_names,
    line_tokens,
    literal_slots,
    masked,
    number_slots,
    positional,
    rename_names,
    rename_variables,
    rewrite_calls,
    variable_tokens,
)
from .computed_inputs import computed_inputs
from .defaulted_children import defaulted_children
from .defaulted_inputs import defaulted_inputs
from .derived_flags import derived_flag
from .elements import Absent, Element, built_in_steps, element_of, element_text, flag_base, pad
from .flags import (
    Placed,
    branched,
    few_lines_apart,
    flag_name,
    flagged_side,
    literals_apart,
    member_forwards,
    same_code,
)
from .ignored_inputs import given_ignored_inputs
from .in_place_children import across_codes, in_place_children
from .instances import Instances
from .ir import ClassIR
from .listed_children import listed_children
from .literal_names import column_name, literal_names
from .names import camel_case, unique_identifier, without_number
from .optional_children import (
    FOLDED,
    OptionalChild,
    core_forward,
    core_lines,
    identities_of,
    identity_children,
    is_identity,
    named_like,
    one_code,
    with_child,
    with_identities,
    with_optional_children,
)
from .optional_inputs import optional_inputs
from .optional_layers import added_back, set_aside
from .passed_children import chained_children_passed_in, children_passed_in
from .regions import IN_PLACE, code_lines
from .runs import with_runs
from .spelled_calls import with_defaults, without_defaults
from .super_calls import with_super_calls

Create = Callable[[str], str]  # the namespace: a free name like the one given


def generalize(
    classes: tuple[ClassIR, ...], create: Create, counts: Mapping[str, int] | None = None
) -> tuple[tuple[ClassIR, ...], dict[str, str]]:
    """Merged classes (children first, as given) and the new name of every old class name; `counts`:
    the instances of each class (one where not given), which keyword defaults go by (instances.py)."""
    instances = Instances(counts or {}, {c.name: i for i, c in enumerate(classes)})
    calls: dict[str, str] = {}  # old class name -> the constructor call that replaces `Old()`
    names: dict[str, str] = {}
    params: dict[str, tuple[str, ...]] = {}  # new class name -> its parameter names, in order
    out: list[ClassIR] = []
    pending = list(with_shared_keywords(classes))
    # old class name -> how many inputs its instances read where the class it merged into takes more, and the classes merged so
    ignoring: dict[str, tuple[int, frozenset[str]]] = {}
    while pending:
        level = given_ignored_inputs(_level(pending), ignoring)
        level = [replace(c, init_lines=tuple(_respell(rewrite_calls(line, calls), c, params) for line in c.init_lines)) for c in level]
        pending = [c for c in pending if c.name not in {c.name for c in level}]
        level, aside = set_aside(level, params)
        level, passed = children_passed_in(level, params)
        level, chained = chained_children_passed_in(level, params)
        passed.update(chained)
        level, listed = listed_children(level, params, instances)
        for found in listed:
            params[found.merged.name] = found.merged.init_params
            out.append(found.merged)  # its child's defaults left out already, its other lines build nothing
            calls.update(found.calls)
            names.update(dict.fromkeys(found.calls, found.merged.name))
        level, pending = optional_inputs(level, pending, params)
        level, pending = defaulted_inputs(level, pending, params)
        forwards = {c.name: c.forward_params for c in out}
        level = computed_inputs(level, params, forwards)
        level, pending = defaulted_inputs(level, pending, params, branching=True, forwards=forwards)  # what neither form above joins
        unpadded = in_place_children(across_codes(defaulted_children(identity_children(level), params), params), params)
        level, lacking = pad(unpadded, params, frozenset(c.name for c in out if c.is_sequential and not c.takes_children))
        before_padding = {c.name: c for c in unpadded}
        for group, optional, flag in _joined(_groups([c for c in level if not c.is_root], params), params, lacking):
            if optional is not None and optional.params:  # the holders take inputs more: the others default them
                merged_names = frozenset(c.name for c in group)
                ignoring.update({c.name: (len(c.forward_params), merged_names) for c in group if c.name not in optional.holders})
                group = [replace(c, forward_params=optional.params) for c in group]
            unpadded_group = {c.name: _identities_like(before_padding[c.name], c) for c in group if c.name in before_padding}
            merged, instance_calls = _merge(group, params, instances, optional, flag, lacking, unpadded_group)
            merged, instance_calls = added_back(merged, group, instance_calls, aside, instances, params)
            params[merged.name] = merged.init_params
            out.append(replace(merged, init_lines=tuple(without_defaults(line, params) for line in merged.init_lines)))
            for cls in group:
                calls[cls.name] = instance_calls[cls.name] if cls.name not in passed else f"{merged.name}({passed[cls.name]})"
                names[cls.name] = merged.name
        out += [c for c in level if c.is_root]
    named, names = _name_variants(tuple(out), names, create)
    sequentials = frozenset(c.name for c in named if (c.is_sequential and not c.init_lines) or c.takes_children)
    named = tuple(unflagged(c) for c in named)  # a loop's flag no class of the other value joined: as it runs (before subclassing)
    named = tuple(replace(c, init_lines=tuple(with_runs(line, sequentials) for line in c.init_lines)) for c in named)
    return with_super_calls(_shared_inits(named)), names


def _level(pending: list[ClassIR]) -> list[ClassIR]:
    """The pending classes that use no other pending class; those of one source class wait for each
    other (a block holding a squeeze-excite child is ready after one that holds none), so that they
    meet in one level, unless that leaves none."""
    names = {c.name for c in pending}
    ready = [c for c in pending if not _uses(c, names - {c.name})]
    waiting = {c.source for c in pending if c not in ready}
    return [c for c in ready if c.source not in waiting] or ready


def _shared_inits(classes: tuple[ClassIR, ...]) -> tuple[ClassIR, ...]:
    """A variant whose `__init__` is that of an earlier class of its source (the same code, a forward
    of its own) subclasses it and keeps only its forward: `class Attention_1(Attention)`."""
    first: dict[tuple[object, ...], str] = {}
    out = []
    for cls in classes:
        key = (*cls.source, cls.base, cls.init_params, cls.init_lines)
        if cls.is_root or cls.is_sequential or not cls.init_lines:
            out.append(cls)
        elif key in first:
            out.append(replace(cls, parent=first[key], init_lines=(), init_params=()))
        else:
            first[key] = cls.name
            out.append(cls)
    return tuple(out)


def _respell(line: str, cls: ClassIR, known: dict[str, tuple[str, ...]]) -> str:
    """Every numeric default written out, so that classes compare by their literals (not the root's lines)."""
    return line if cls.is_root else with_defaults(line, known)


def _uses(cls: ClassIR, others: set[str]) -> bool:
    lines = [line for line in cls.init_lines if any(name in line for name in others)]  # only these can call one
    return any(name in others for line in lines for name in called_names(line))


def _groups(classes: list[ClassIR], known: dict[str, tuple[str, ...]]) -> list[list[ClassIR]]:
    """Classes equal but for `__init__` literals, in first-seen order."""
    groups: dict[tuple[object, ...], list[ClassIR]] = {}
    for cls in classes:
        forward = positional(cls.forward_params, tuple(_TRACED_PROXY.sub("Proxy()", line) for line in cls.forward_lines))
        shape = tuple(p.startswith("*") or "=" in p for p in cls.forward_params)
        # a class its callers pass the children of keeps no `__init__` to store a literal in: one forward each
        code = forward if cls.takes_children else masked(forward, number_slots(forward, nested=True))
        key = (*cls.source, init_template(cls, known), shape, code, cls.takes_children)
        groups.setdefault(key, []).append(cls)
    return list(groups.values())


@dataclass(frozen=True)
class _Flag:
    """Two codes of one `__init__`: the classes whose instances run the flagged one, and both forwards."""

    name: str
    holders: frozenset[str]
    plain: tuple[str, ...]
    flagged: tuple[str, ...]
    literals_vary: bool = False  # each side's forwards differ in number literals (flags.member_forwards)


def _with_flags(
    pairs: list[tuple[list[ClassIR], OptionalChild | None]], known: dict[str, tuple[str, ...]]
) -> list[tuple[list[ClassIR], OptionalChild | None, _Flag | None]]:
    """Join the two groups of a source class that build the same children (their literals aside) and
    take the same forward parameters, but whose forwards differ: one class, its forward branching on a flag."""
    keys: dict[tuple[object, ...], list[int]] = {}
    for i, (group, optional) in enumerate(pairs):
        first = group[0]
        if (optional is None or one_code(group, optional)) and first.init_lines:
            core = replace(first, init_lines=core_lines(first, optional))
            keys.setdefault((*first.source, _folded_apart(first.forward_params), init_template(core, known)), []).append(i)
    given = pairs  # a pair padded with identities that does not join keeps none
    pairs, padded = _identities_added(pairs, [members[0] for members in keys.values() if len(members) == 1], known)
    keys.update({("identities", *members): list(members) for members in padded})
    joined: dict[int, tuple[list[ClassIR], OptionalChild | None, _Flag | None]] = {}
    for members in keys.values():
        joined.update(_paired(members, pairs))
    out = [joined.get(i, (group, optional, None)) for i, (group, optional) in enumerate(given)]
    return [item for item in out if item[0]]


def _paired(
    members: list[int], pairs: list[tuple[list[ClassIR], OptionalChild | None]]
) -> dict[int, tuple[list[ClassIR], OptionalChild | None, _Flag | None]]:
    """The groups of one key joined two by two on flags, the best joins first (_join_cost), where that pairs
    every one of them: a code left over means more than one flag tells the codes apart (three modes of one
    block), and each keeps a class of its own. Four codes that are two layouts with and without a residual
    add (torchvision's InvertedResidual, passed folded constants) make two classes."""
    candidates = [(i, j, item) for i, j in itertools.combinations(members, 2) if (item := _flag_joined(pairs[i], pairs[j])) is not None]
    out: dict[int, tuple[list[ClassIR], OptionalChild | None, _Flag | None]] = {}
    for i, j, item in sorted(candidates, key=lambda c: _join_cost(c[2])):  # in order among equals
        if i not in out and j not in out:
            out[i], out[j] = item, ([], None, None)
    return out if len(out) == len(members) else {}


def _join_cost(item: tuple[list[ClassIR], OptionalChild | None, _Flag | None]) -> tuple[int, int]:
    """How a join of two codes reads, least first: one code, a flag named after what it adds (`residual`),
    a `variant`; then by how many lines the two sides differ in."""
    flag = item[2]
    if flag is None:
        return 0, 0
    return 1 if flag.name != "variant" else 2, len(set(flag.plain) ^ set(flag.flagged))


def _flag_joined(
    side_a: tuple[list[ClassIR], OptionalChild | None], side_b: tuple[list[ClassIR], OptionalChild | None]
) -> tuple[list[ClassIR], OptionalChild | None, _Flag | None] | None:
    """The two groups as one: one code, or two on a flag; None where they do not join."""
    (a, optional_a), (b, optional_b) = side_a, side_b
    if any(c.forward_params != a[0].forward_params for c in (*a, *b)):  # folded constants named apart: passed by position
        named_a, named_b = (named_like(a, a[0].forward_params), named_like(b, a[0].forward_params)) if optional_a is optional_b is None else (None, None)
        if named_a is None or named_b is None:
            return None
        a, b = named_a, named_b
    forward_a, forward_b = _forward(a, optional_a), _forward(b, optional_b)
    literals_vary = not (one_code(a, optional_a) and one_code(b, optional_b))
    if literals_vary:
        if optional_a is not None or optional_b is not None:
            return None
        forward_a, forward_b = literals_apart(forward_a)[0], literals_apart(forward_b)[0]
    optional = optional_a or optional_b  # a child only some build, in one group or both
    if optional_a is not None and optional_b is not None:
        if (optional_a.children, optional_a.init_lines, optional_a.wrapped) != (optional_b.children, optional_b.init_lines, optional_b.wrapped):
            return None
        optional = replace(optional_a, holders=optional_a.holders | optional_b.holders)
    params = a[0].forward_params
    if same_code(forward_a, forward_b, params):  # one code: two source lines, or other names
        return [*a, *b], optional, None
    code_a, code_b = (a, forward_a), (b, forward_b)
    (plain, plain_forward), (flagged, flagged_forward) = (code_a, code_b) if flagged_side(forward_a, forward_b, params) else (code_b, code_a)
    if not few_lines_apart(plain_forward, flagged_forward, params, regions=True):
        return None
    flag = _Flag(flag_name(plain_forward, flagged_forward, params), frozenset(c.name for c in flagged), plain_forward, flagged_forward, literals_vary)
    if literals_vary and _member_forwards([*a, *b], flag.holders, "c", "not c", regions=True) is None:
        return None
    return [*a, *b], optional, flag


def _folded_apart(params: tuple[str, ...]) -> tuple[str, ...]:
    """The forward parameters with those named after a constant symbolic_trace folded into the root blanked:
    each block is passed its own (`_tensor_constant18` in one, `_tensor_constant24` in the next), by position."""
    return tuple("\0" if FOLDED.fullmatch(p) else p for p in params)


def _identities_added(
    pairs: list[tuple[list[ClassIR], OptionalChild | None]], singles: list[int], known: dict[str, tuple[str, ...]]
) -> tuple[list[tuple[list[ClassIR], OptionalChild | None]], list[tuple[int, int]]]:
    """Two groups of one source class left unpaired whose `__init__`s differ only in children one builds
    as `nn.Identity()` and the other lacks: the other builds them too, where the one does, so that they
    join on a flag. timm's hgnet calls `self.drop_path` only `if self.residual:`, so symbolic_trace's
    GraphModule holds it only in the residual blocks; every block builds it in the source. An identity
    holds no state: the state_dict is the same. The pairs, padded, and which indices now pair."""
    by_key: dict[tuple[object, ...], list[int]] = {}
    for i in singles:
        group, optional = pairs[i]
        first = group[0]
        if optional is None:
            kept = replace(first, init_lines=tuple(line for line in first.init_lines if not is_identity(line)))
            by_key.setdefault((*first.source, first.forward_params, init_template(kept, known)), []).append(i)
    out, padded = list(pairs), []
    for members in by_key.values():
        if len(members) != 2:
            continue
        a, b = (pairs[i][0] for i in members)
        new_a, new_b = with_identities(a, b) or a, with_identities(b, a) or b
        if init_template(new_a[0], known) != init_template(new_b[0], known):
            continue  # one names an identity of the other's otherwise: apart they stay
        out[members[0]], out[members[1]] = (new_a, None), (new_b, None)
        padded.append((members[0], members[1]))
    return out, padded


def _identities_like(unpadded: ClassIR, cls: ClassIR) -> ClassIR:
    """The class as it was before its elements were padded, with the identity children added since."""
    return replace(unpadded, init_lines=identities_of(unpadded, cls.init_lines) or unpadded.init_lines)


Joined = list[tuple[list[ClassIR], OptionalChild | None, _Flag | None]]


def _joined(grouped: list[list[ClassIR]], known: dict[str, tuple[str, ...]], lacking: dict[str, Absent]) -> Joined:
    """The groups joined where one has optional children (optional_children.py) or two branch on a flag;
    an identity child only some build taken either way, whichever leaves a source class fewer classes."""
    joined = _with_flags(with_optional_children(grouped, known, lacking), known)
    if any(is_identity(line) for group in grouped for line in group[0].init_lines):
        joined = _fewest_per_source(joined, _with_flags(with_optional_children(grouped, known, lacking, identities=True), known))
    return joined


def _fewest_per_source(joined: Joined, other: Joined) -> Joined:
    """`joined`, but the classes of a source class `other` joins into fewer, as `other` joins them: an
    identity only some build is a flag's (every instance builds it, generalize._identities_added) where
    two codes pair, else an optional child (optional_children._extra_child), as where a third code of the
    class pairs with one of them."""
    def source(item: tuple[list[ClassIR], OptionalChild | None, _Flag | None]) -> tuple[object, ...]:
        return tuple(item[0][0].source)

    mine, theirs = Counter(map(source, joined)), Counter(map(source, other))
    better = {key for key, count in theirs.items() if count < mine[key]}
    out: Joined = []
    placed: set[tuple[object, ...]] = set()  # source classes `other`'s items stand for, where the first of joined's stood
    for item in joined:
        if source(item) not in better:
            out.append(item)
        elif source(item) not in placed:
            placed.add(source(item))
            out += [i for i in other if source(i) == source(item)]
    return out


def _member_forwards(group: list[ClassIR], holders: frozenset[str], condition: str, negated: str, regions: bool = False) -> list[Placed] | None:
    """Each class's forward as its part of the one that branches on `condition` (on for `holders`; with
    `regions`, in several places where that reads better: a flag's, not an optional child's)."""
    forwards = [c.forward_lines for c in group]
    return member_forwards(forwards, [c.name in holders for c in group], condition, negated, group[0].forward_params, regions)


def _branched_parameters(
    group: list[ClassIR],
    holders: frozenset[str],
    branch: tuple[str, str],
    reserved: set[str],
    parameters: dict[tuple[str, ...], str],
    values: dict[str, tuple[str, ...]],
    positional: list[str],
    taken: set[str],
    regions: bool = False,
) -> tuple[tuple[str, ...], list[str]]:
    """The forward branching on `branch` (its condition, on for `holders`, and the negation) whose sides
    differ in literals, those that differ read from attributes (`_forward_parameters`)."""
    placed = _member_forwards(group, holders, *branch, regions=regions)
    assert placed is not None, "placed when the groups were joined"
    lines, lent = [p.lines for p in placed], [p.borrowed for p in placed]
    return _forward_parameters(lines, lines[0], reserved, parameters, values, positional, taken, lent, group[0].source_forward)


def _forward(group: list[ClassIR], optional: OptionalChild | None) -> tuple[str, ...]:
    """The one forward the group runs: the shared one where some hold an optional child."""
    return group[0].forward_lines if optional is None else optional.forward


_CHILD_ARGUMENT = "\0child"


# symbolic_trace bakes a proxy's node name into messages built from it (`f"expected 4D input (got
# {x.ndim}D input)"` becomes "...(got Proxy(getattr_4)D input)"): instances differing only there are one class.
_TRACED_PROXY = re.compile(r"Proxy\([A-Za-z_][A-Za-z0-9_]*\)")


def _merge(
    group: list[ClassIR],
    known: dict[str, tuple[str, ...]],
    instances: Instances,
    optional: OptionalChild | None = None,
    flag: _Flag | None = None,
    absent: dict[str, Absent] | None = None,
    unpadded: Mapping[str, ClassIR] | None = None,
) -> tuple[ClassIR, dict[str, str]]:
    """One class for the group and, per old class name, the call that builds an instance of it. `absent`:
    the elements each class's container calls lack, padded to align (elements.pad); `unpadded`: each class
    as it was before, whose children a caller passes as built."""
    first = group[0]
    names = [c.name for c in group]
    weights = instances.weights(names)
    cores = [core_lines(c, optional) for c in group]
    whole = frozenset().union(*(c.whole_children for c in group))
    children = _child_arguments(cores, known, whole)  # line -> attribute, for children passed in
    cores = [tuple(f"self.{children[j]} = {_CHILD_ARGUMENT}" if j in children else line for j, line in enumerate(core)) for core in cores]
    slots = [literal_slots(core, known) for core in cores]
    passed_whole = set(children.values())  # a container each caller builds: its own elements, none lacking
    lacks = [frozenset(e for e in (absent or {}).get(c.name, frozenset()) if e[0] not in passed_whole) for c in group]
    elements: list[Element | None] = [element_of(cores[0], s.line, s.start) if any(lacks) else None for s in slots[0]]
    columns = _columns(slots, elements, lacks)
    texts = [column[0] if column[0] != _MISSING else s.text for column, s in zip(columns, slots[0])]
    varying = [i for i, column in enumerate(columns) if len(set(column)) > 1]
    parameters: dict[tuple[str, ...], str] = {}  # a column of values -> its parameter name
    taken: set[str] = set(optional.children if optional else ()) | global_names(cores[0])  # a parameter must not shadow `nn`
    child_params = {j: _parameter_name(name, taken) for j, name in children.items()}
    for i in varying:
        column = columns[i]
        if column not in parameters:
            parameters[column] = _parameter_name(slots[0][i].name, taken)
        texts[i] = parameters[column]
    element_only = {parameters[columns[i]] for i in varying if _MISSING in columns[i]}  # None where the element is not built
    keyword_params = {parameters[columns[i]] for i in varying} - {parameters[columns[i]] for i in varying if not slots[0][i].keyword}
    keyword_params |= element_only
    positional = [p for p in dict.fromkeys(parameters[columns[i]] for i in varying) if p not in keyword_params]
    keywords = [p for p in dict.fromkeys(parameters[columns[i]] for i in varying) if p in keyword_params]
    values = {name: tuple("None" if v == _MISSING else v for v in column) for column, name in parameters.items()}
    layer_default = {parameters[columns[i]]: slots[0][i].default for i in varying}
    defaults = {name: layer_default[name] if layer_default[name] in values[name] else instances.most_common(values[name], names)
                for name in keywords}  # fmt: skip
    defaults.update({name: "None" for name in element_only})
    conditions = _conditions(lacks, [(elements[i], columns[i], parameters[columns[i]]) for i in varying if _MISSING in columns[i]], cores[0], taken)
    for condition, held in conditions.values():
        if condition is not None and condition not in element_only and condition not in keywords:
            keywords.append(condition)
            values[condition] = tuple(repr(row in held) for row in range(len(group)))
            defaults[condition] = repr(instances.most(held, names))  # off unless most instances build it
    keyed = tuple(Parameter(name, defaults.get(name) or "", values[name]) for name in (*positional, *keywords))
    flag_name_of = functools.partial(_parameter_name, taken=taken)  # a flag a built child adds
    built = None
    if optional is not None:
        held = frozenset(r for r, c in enumerate(group) if c.name in optional.holders)
        found = tuple(zip(optional.children, optional.init_lines))
        built = built_children([c.init_lines for c in group], held, found, known, keyed, flag_name_of, weights)
    some = _children_some_build(
        [core_lines(c, optional) for c in group], children, child_params, known, (*keyed, *(built.parameters if built else ())), flag_name_of, weights
    )
    for parameter in (*(built.parameters if built else ()), *some.flags):
        keywords.append(parameter.name)
        values[parameter.name], defaults[parameter.name] = parameter.values, parameter.default
    init_lines = filled(cores[0], slots[0], texts)
    forward_lines = _forward(group, optional)
    if flag is None and (optional is None or optional.wrapped is not None):  # else: one code, literals too
        forwards = [core_forward(c, optional) for c in group]
        reserved = set(optional.children if optional is not None else ())
        forward_lines, stored = _forward_parameters(
            forwards, forward_lines, reserved | names_on_self(first), parameters, values, positional, taken, source=first.source_forward
        )
        init_lines += tuple(stored)
    elif flag is None and optional is not None and optional.literals_vary:  # an extra child; each side's literals their own
        child, reserved = optional.child, set(optional.children) | names_on_self(first)
        on, off = f"self.{child} is not None", f"self.{child} is None"
        forward_lines, stored = _branched_parameters(group, optional.holders, (on, off), reserved, parameters, values, positional, taken)
        init_lines += tuple(stored)
    init_lines = tuple(f"self.{children[j]} = {child_params[j]}" if j in children else line for j, line in enumerate(init_lines))
    if flag is not None:
        flag_param = _parameter_name(flag.name, taken)
        flag_attribute = _parameter_name(flag_param, names_on_self(first))
        flag_default = instances.most_common([repr(c.name in flag.holders) for c in group], names)
        on, off = f"self.{flag_attribute}", f"not self.{flag_attribute}"
        if flag.literals_vary:
            reserved = names_on_self(first) | {flag_attribute}
            forward_lines, stored = _branched_parameters(group, flag.holders, (on, off), reserved, parameters, values, positional, taken, regions=True)
            init_lines += tuple(stored)
        else:
            forward_lines = branched(flag.plain, flag.flagged, on, off, first.forward_params, regions=True)
        derived = derived_flag(tuple(c.name in flag.holders for c in group), {name: values[name] for name in (*positional, *keywords)})
        if derived is not None:  # the class computes it from its parameters, as the source did
            init_lines += (f"self.{flag_attribute} = {derived}",)
            taken.discard(flag_param)  # no parameter of that name: free for a later one
        else:
            init_lines += (f"self.{flag_attribute} = {flag_param}",)
            keywords.append(flag_param)
            defaults[flag_param] = flag_default
            values[flag_param] = tuple(repr(c.name in flag.holders) for c in group)
    blocks = tuple(p for p in first.init_params if p.startswith("*"))  # the blocks callers pass (passed_children.py)
    built_here = {j for j in children if f"self.{children[j]} = {child_params[j]}" in some.expansions}
    passed = [child_params[j] for j in children if j not in built_here]
    optional_params = [f"{name}=None" for name in passed if name in some.absent or name in some.identities]
    passed = [name for name in passed if name not in some.absent and name not in some.identities]
    init_params = (*positional, *passed, *blocks, *(f"{name}={defaults[name]}" for name in keywords), *optional_params)
    merged = replace(first, init_lines=init_lines, forward_lines=forward_lines, init_params=init_params, whole_children=whole)
    if optional is not None:
        merged = with_child(merged, optional, merged.forward_lines, built)
    if some.expansions:
        merged = replace(merged, init_lines=tuple(out for line in merged.init_lines for out in some.expansions.get(line, (line,))))
    if some.identities:
        merged = replace(merged, init_lines=tuple(_identity_default(line, some.identities) for line in merged.init_lines))
    if conditions:
        steps = {element: _condition_code(condition, element_only) for element, (condition, _) in conditions.items()}
        lines = built_in_steps(tuple(without_defaults(line, known) for line in merged.init_lines), steps, _parameter_name("layers", taken))
        merged = replace(merged, init_lines=lines)
    calls = {}
    skipped = {name for j, name in child_params.items() if name in some.absent and _applied_if_present(merged.forward_lines, children[j])}
    for row, cls in enumerate(group):
        args = [values[name][row] for name in positional]
        args += [f"{name}={values[name][row]}" for name in keywords if values[name][row] != defaults[name]]
        core = core_lines((unpadded or {}).get(cls.name, cls), optional)
        args += [f"{name}={without_defaults(core[j], known).split(' = ', 1)[1]}" for j, name in child_params.items()
                 if j not in built_here and core[j] != f"self.{children[j]} = None"  # None: the default
                 and not (name in some.identities | skipped and core[j] == f"self.{children[j]} = {_IDENTITY}")]
        if optional is not None and built is None and cls.name in optional.holders:
            args += [f"{child}={without_defaults(cls.init_lines[i], known).split(' = ', 1)[1]}" for child, i in zip(optional.children, optional.init_lines)]
        calls[cls.name] = f"{first.name}({', '.join(args)})"
    return merged, calls


@dataclass(frozen=True)
class _SomeBuild:
    """Children passed in that some instances set to None (in_place_children.py)."""

    absent: frozenset[str]  # their parameters: None by default
    expansions: dict[str, tuple[str, ...]]  # `self.<child> = <parameter>` -> the lines that build it in the class
    flags: tuple[Parameter, ...]  # the flags those lines test
    identities: frozenset[str] = frozenset()  # parameters of children passed in or else an nn.Identity: None by default


def _children_some_build(
    cores: list[tuple[str, ...]],
    children: dict[int, str],
    child_params: dict[int, str],
    known: dict[str, tuple[str, ...]],
    parameters: tuple[Parameter, ...],
    flag_name_of: Callable[[str], str],
    weights: tuple[int, ...],
) -> _SomeBuild:
    """Which child parameters default to None, and which children the class builds instead where it can
    (built_children.py; adjacent children of the same holders under one `if`): those some instances set to
    None, and those some build as an nn.Identity (`self.act = nn.ReLU() if use_act else nn.Identity()`)."""
    absent = {j for j in children if any(core[j] == f"self.{children[j]} = None" for core in cores)}
    identities = {j for j in children if j not in absent and any(core[j] == f"self.{children[j]} = {_IDENTITY}" for core in cores)}
    expansions: dict[str, tuple[str, ...]] = {}
    flags: list[Parameter] = []
    for otherwise, lines in (("None", absent), (_IDENTITY, identities)):
        for run in _runs(cores, children, sorted(lines), otherwise):
            found = tuple((children[j], j) for j in run)
            held = _held(cores, children, run[0], otherwise)
            built = built_children(cores, held, found, known, (*parameters, *flags), flag_name_of, weights, otherwise, tuple(flags))
            if built is not None:
                flags += built.parameters
                built_lines = [f"self.{children[j]} = {child_params[j]}" for j in run]
                expansions.update({built_lines[0]: built.lines, **{line: () for line in built_lines[1:]}})
    passed = frozenset(child_params[j] for j in identities if f"self.{children[j]} = {child_params[j]}" not in expansions)
    return _SomeBuild(frozenset(child_params[j] for j in absent), expansions, tuple(flags), passed)


def _applied_if_present(forward: tuple[str, ...], child: str) -> bool:
    """True when the forward reads `self.<child>` only in `if self.<child> is not None:` over one line
    applying it in place (`shortcut = self.shortcut(shortcut)`), with no `else`: there an identity does
    what None does, and a caller whose instance has one passes nothing (ghostnet's `shortcut`, an empty
    nn.Sequential in some blocks, which torch.export records no call of in the others)."""
    lines = code_lines(forward)
    reads = [k for k, line in enumerate(lines) if re.search(rf"self\.{re.escape(child)}\b", line)]
    if len(reads) != 2 or reads[1] != reads[0] + 1 or lines[reads[0]].strip() != f"if self.{child} is not None:":
        return False
    indent = len(lines[reads[0]]) - len(lines[reads[0]].lstrip())
    body = lines[reads[1]]
    applied = IN_PLACE.fullmatch(body.strip())
    after = lines[reads[1] + 1] if reads[1] + 1 < len(lines) else ""
    more = len(after) - len(after.lstrip()) > indent or after.strip() == "else:" or after.strip().startswith("elif ")
    return applied is not None and applied[2] == child and len(body) - len(body.lstrip()) == indent + 4 and not more


def _identity_default(line: str, parameters: frozenset[str]) -> str:
    """`self.se = se if se is not None else nn.Identity()` for `self.se = se` of such a parameter: callers
    whose instance has an identity there pass nothing (timm's `self.se = se_layer(...) if se_layer else nn.Identity()`)."""
    target, _, value = line.partition(" = ")
    return f"{target} = {value} if {value} is not None else {_IDENTITY}" if value in parameters and target.startswith("self.") else line


_IDENTITY = "nn.Identity()"


def _runs(cores: list[tuple[str, ...]], children: dict[int, str], lines: list[int], otherwise: str) -> list[list[int]]:
    """The lines, in runs of adjacent ones the same rows build."""
    runs: list[list[int]] = []
    for j in lines:
        if runs and runs[-1][-1] == j - 1 and _held(cores, children, runs[-1][0], otherwise) == _held(cores, children, j, otherwise):
            runs[-1].append(j)
        else:
            runs.append([j])
    return runs


def _held(cores: list[tuple[str, ...]], children: dict[int, str], j: int, otherwise: str = "None") -> frozenset[int]:
    """The rows that build the child of line j (the others set it to `otherwise`)."""
    return frozenset(r for r, core in enumerate(cores) if core[j] != f"self.{children[j]} = {otherwise}")


_MISSING = "\0missing"  # a literal of an element the instance does not build


def _columns(slots: list[list[Slot]], elements: list[Element | None], lacks: list[Absent]) -> list[tuple[str, ...]]:
    """Each literal's values across the group (_MISSING where its element is not built). A column missing
    somewhere is filled with its one value, or takes the values of a column that agrees with it wherever
    it is built (one parameter)."""
    columns = [tuple(_MISSING if elements[i] in lack else row[i].text for row, lack in zip(slots, lacks)) for i in range(len(slots[0]))]
    full = [c for c in columns if _MISSING not in c and len(set(c)) > 1]
    for i, column in enumerate(columns):
        present = {v for v in column if v != _MISSING}
        if _MISSING in column and len(present) == 1:
            columns[i] = (present.pop(),) * len(column)  # a literal all the element's builders share
        elif _MISSING in column and present:
            columns[i] = next((c for c in full if all(v == _MISSING or v == w for v, w in zip(column, c))), column)
    return columns


def _conditions(
    lacks: list[Absent], element_columns: list[tuple[Element | None, tuple[str, ...], str]], lines: tuple[str, ...], taken: set[str]
) -> dict[Element, tuple[str | None, frozenset[int]]]:
    """For each element some instance does not build: (its condition, the rows that build it); the
    condition is a parameter only its builders pass (`in_channels`, None elsewhere), else a new flag
    (`use_squeeze_excitation`); None for an element no instance of the group builds."""
    rows = range(len(lacks))
    lacked = {element for lack in lacks for element in lack}
    out: dict[Element, tuple[str | None, frozenset[int]]] = {}
    flags: dict[frozenset[int], str] = {}
    for element in sorted(lacked):
        held = frozenset(r for r in rows if element not in lacks[r])
        if not held:
            out[element] = (None, held)
            continue
        own = [name for e, column, name in element_columns if e == element and frozenset(r for r in rows if column[r] != _MISSING) == held]
        if own:
            out[element] = (own[0], held)
            continue
        if held not in flags:
            flags[held] = _parameter_name(flag_base(element_text(lines, element)), taken)
        out[element] = (flags[held], held)
    return out


def _condition_code(condition: str | None, element_only: set[str]) -> str | None:
    if condition is None:
        return None
    return f"{condition} is not None" if condition in element_only else condition


def _forward_parameters(
    forwards: list[tuple[str, ...]],
    shared: tuple[str, ...],
    reserved: set[str],
    parameters: dict[tuple[str, ...], str],
    values: dict[str, tuple[str, ...]],
    positional: list[str],
    taken: set[str],
    borrowed: list[frozenset[int]] | None = None,
    source: str = "",
) -> tuple[tuple[str, ...], list[str]]:
    """Forward literals that differ between instances (`forwards`, one per class, their literals in the
    order of `shared`'s, those in blocks too: a loop's body) read `self.<parameter>` in `shared`, an
    attribute named apart from every name in `reserved` (the class's attributes, buffers and children):
    (forward lines, parameters to store). With `borrowed` (branched forwards, flags.member_forwards: per
    class, the literals of lines it never runs), a borrowed literal takes the value that makes its column
    one parameter with another where one agrees with the rest. `source`: the source class's forward, where
    literals no note quotes are named (literal_names)."""
    rows = [number_slots(f, nested=True) for f in forwards]
    targets = number_slots(shared, nested=True)
    texts = [s.text for s in targets]
    stored: dict[str, str] = {}  # parameter -> the attribute that keeps it
    attributes = set(reserved) | _MODULE_NAMES  # `self.training = training` would be the module's flag
    columns = [tuple(column) for column in zip(*[[s.text for s in row] for row in rows])]
    if borrowed is not None:
        columns = _lent(columns, borrowed, list(parameters), _literal_places(shared, targets))
    quoted: list[str | None] | None = None  # the names the source passes in the literals' places, once asked
    for i, column in enumerate(columns):
        if len(set(column)) == 1:
            continue
        if column not in parameters:
            quoted = literal_names(forwards[0], source) if quoted is None else quoted
            named = None
            if rows[0][i].name == "value" and len(quoted) == len(rows[0]):  # the first name any place of the column has
                named = column_name([quoted[j] for j, other in enumerate(columns) if other == column])
            parameters[column] = _parameter_name(named or rows[0][i].name, taken)
            values[parameters[column]] = column
            positional.append(parameters[column])
        name = parameters[column]
        if name not in stored:
            stored[name] = _parameter_name(name if name not in attributes else f"{name}_value", attributes)
        texts[i] = f"self.{stored[name]}"
    return filled(shared, targets, texts), [f"self.{attribute} = {name}" for name, attribute in stored.items()]


def _lent(
    columns: list[tuple[str, ...]], borrowed: list[frozenset[int]], known: list[tuple[str, ...]], places: list[tuple[str, int]]
) -> list[tuple[str, ...]]:
    """Each column with its borrowed entries (`borrowed[row]` holds the columns that row borrows) filled
    in: with the one value the other rows hold (no parameter); else, with the other side's literal in the
    same place (`places`: its line, literals and locals masked, and its place there: one parameter for
    both, `x.view(1, 2, self.channels)` on each side); else from a column, known or of these, that agrees
    with it on every other row (of those, the one that so agrees with the most such columns)."""
    rows = range(len(columns[0])) if columns else range(0)
    own = [frozenset(row for row in rows if i not in borrowed[row]) for i in range(len(columns))]
    partial = [i for i in range(len(columns)) if own[i] != frozenset(rows)]

    def agrees(candidate: tuple[str, ...], i: int) -> bool:
        return all(candidate[row] == columns[i][row] for row in own[i])

    candidates = [*known, *(c for i, c in enumerate(columns) if i not in partial)]
    out = list(columns)
    for i in partial:
        values = {columns[i][row] for row in own[i]}
        partners = [j for j in partial if places[j] == places[i] and own[j] == frozenset(rows) - own[i]]
        matches = [c for c in candidates if agrees(c, i)]
        if len(values) == 1:
            out[i] = (values.pop(),) * len(rows)
        elif len(partners) == 1:
            out[i] = tuple(columns[i][row] if row in own[i] else columns[partners[0]][row] for row in rows)
        elif matches:
            out[i] = max(matches, key=lambda c: sum(agrees(c, j) for j in partial))
    return out


def _literal_places(lines: tuple[str, ...], slots: list[Slot]) -> list[tuple[str, int]]:
    """For each literal, its line with every literal and local written alike, and its place among the
    line's literals: where the two sides of a branched forward have one literal."""
    by_line: dict[int, list[Slot]] = {}
    for slot in slots:
        by_line.setdefault(slot.line, []).append(slot)
    out = []
    for slot in slots:
        same = by_line[slot.line]
        text = filled((lines[slot.line],), [replace(t, line=0) for t in same], ["0"] * len(same))[0].strip()
        out.append((rename_variables(text, {t.string: "_" for t in variable_tokens(line_tokens(text))}), same.index(slot)))
    return out


def _child_arguments(cores: list[tuple[str, ...]], known: dict[str, tuple[str, ...]], whole: frozenset[str]) -> dict[int, str]:
    """Lines building a child that differs between instances in more than literals: line -> attribute."""
    out = {}
    for j, line in enumerate(cores[0]):
        if not is_child(line) and attribute(line) not in whole:
            continue
        templates = {masked((core[j],), literal_slots((core[j],), known)) for core in cores}
        if len(templates) > 1:
            out[j] = attribute(line)
    return out


def _parameter_name(base: str, taken: set[str]) -> str:
    """`base`, else `base_2`, `base_3`...; a numbered base that is taken is numbered afresh from its stem
    (`size_2` taken: `size` where free, else the next free `size_<n>`; never `size_2_2`)."""
    numbered = _NUMBERED.fullmatch(base)
    if base in taken and numbered is not None:
        base = numbered[1]
    return unique_identifier(base, taken, "value", start=2)


_NUMBERED = re.compile(r"(.*[^_0-9])_[0-9]+")


def _name_variants(
    classes: tuple[ClassIR, ...], names: dict[str, str], create: Create
) -> tuple[tuple[ClassIR, ...], dict[str, str]]:
    """A variant that holds a child the first class of its source lacks is named after it
    (`BlockWithDownsample`); the others are numbered afresh (`Block`, `Block_1`, ...: merged classes
    left gaps), with names the namespace gave classes of that source. A class asked to be named apart
    from them (`BlockWithDownsample_1`, `Block_1`: a class an earlier export named, exported again) keeps
    its name."""
    members: dict[str, list[ClassIR]] = {}
    for cls in classes:
        if not cls.is_root and cls.source_name in ("", without_number(cls.name)):
            members.setdefault(without_number(cls.name), []).append(cls)
    renames: dict[str, str] = {}
    for base, group in members.items():
        first, numbered = group[0], [group[0]]
        for cls in group[1:]:
            extra = sorted(_children(cls) - attributes(first))
            if extra:
                renames[cls.name] = create(base + "With" + "".join(camel_case(e) for e in extra[:2]))
            else:
                numbered.append(cls)
        wanted = [base, *(f"{base}_{k}" for k in range(1, len(numbered)))]
        own = {cls.name for cls in group}  # names of classes kept apart are theirs
        if all(names.get(name) in own for name in wanted):
            renames.update({cls.name: name for cls, name in zip(numbered, wanted) if cls.name != name})
    if not renames:
        return classes, names
    out = []
    for cls in classes:
        lines = tuple(rename_names(line, renames) for line in cls.init_lines)
        out.append(replace(cls, name=renames.get(cls.name, cls.name), init_lines=lines))
    return tuple(out), {old: renames.get(new, new) for old, new in names.items()}


# What nn.Module itself has on every instance: a forward literal stored under one of these names
# would shadow it.
_MODULE_NAMES = frozenset(dir(nn.Module)) | {"training", "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set"}


def _children(cls: ClassIR) -> set[str]:
    """Attributes `__init__` builds a module or tensor for (`self.downsample = nn.Sequential(...)`)."""
    return {m[1] for line in cls.init_lines if (m := re.match(r"self\.(\w+) = [\w.]+\(", line))}

