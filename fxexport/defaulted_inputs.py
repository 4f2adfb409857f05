"""Forward inputs some callers leave out: `def forward(self, x, shortcut=None)`, as timm's DlaBasic.

A block whose callers sometimes pass a second input (`block(x, shortcut)`) and sometimes not
(`block(x)`, the block then using `x` in its place) comes out of the graph as two forwards, one
taking an input more. Where the longer forward, given the shorter one's input in place of its
last input, computes exactly what the shorter one does (statement by statement, with locals named
by where they are bound), both become that forward with its last input defaulting to None and
set from the other first, as the source wrote it:

    def forward(self, x, x_1=None):
        if x_1 is None:
            x_1 = x

Callers are unchanged: those that passed the input pass it still, the others omit it. An input
left out in the middle (BART's cross-attention `attn(x, key_value_states, mask)` beside its
self-attention `attn(x, mask)`) is taken last, and the callers that pass it pass it last
(reordered_calls.py), where every one of them is a direct call of a child its holder builds.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterator
from dataclasses import replace

from .child_lines import built_child, init_template
from .code_slots import (
    ASSIGNED,
    filled,
    line_tokens,
    number_slots,
    parameter_names,
    rename_variables,
    variable_names,
    variable_tokens,
)
from .flags import code_counts, few_lines_apart, literals_apart, member_forwards
from .ir import ClassIR
from .regions import INDENT, block_end, code_lines
from .reordered_calls import Order, reorder_callers
from .spelled_calls import char_offset, parsed_line, self_attribute

Known = dict[str, tuple[str, ...]]
_GENERIC = re.compile(r"x(_\d+)?")  # the names subgraphs.py gives inputs that are no model input


def defaulted_inputs(
    level: list[ClassIR], pending: list[ClassIR], known: Known, branching: bool = False, forwards: dict[str, tuple[str, ...]] | None = None
) -> tuple[list[ClassIR], list[ClassIR]]:
    """The level with the classes of each source class whose forwards differ by an input their callers
    may leave out given one forward, that input defaulting to another (with `branching`, where none stands
    for it: to None, the forward branching on it, _branch; `forwards`: the forward parameters of the classes
    generalized so far, by name); and the pending classes, their calls of such a class passing that input
    last where it was not."""
    out = {c.name: c for c in level}
    for longer, shorter in one_input_apart(level, known):
        if merged_already(out, longer + shorter):
            continue
        found = _alias(longer[0], shorter[0])
        branch = _branch(longer, shorter, forwards or {}) if found is None and branching else None
        if found is None and branch is None:
            continue
        extra = found[0] if found is not None else branch[0]  # type: ignore[index]
        count = len(longer[0].forward_params)
        order = tuple(i for i in range(count) if i != extra) + (extra,)
        if extra != count - 1:
            callers = reorder_callers(pending, {c.name for c in longer}, order)
            if callers is None:
                continue
            pending = callers
        if branch is not None:
            for cls in longer + shorter:
                out[cls.name] = _with_default(longer[0], branch[1][cls.name], order, None, cls)
            continue
        assert found is not None
        for cls in longer:  # each with its own inputs' names
            out[cls.name] = _with_default(cls, cls.forward_lines, order, found[1])
        for cls in shorter:
            out[cls.name] = _with_default(longer[0], renumbered(longer[0].forward_lines, cls.forward_lines), order, found[1], cls)
    return [out[c.name] for c in level], pending


def merged_already(out: dict[str, ClassIR], classes: list[ClassIR]) -> bool:
    """True when a class took part in an earlier pair (forwards of three arities): it is not merged twice."""
    return any(out[c.name] is not c for c in classes)


def one_input_apart(level: list[ClassIR], known: Known) -> Iterator[tuple[list[ClassIR], list[ClassIR]]]:
    """(longer, shorter): the classes of one source class (one `__init__` but for literals and children
    passed whole) whose forwards take one input more than the others', each side one code."""
    for by_count in input_families(level, known):
        for count, longer in by_count.items():
            shorter = by_count.get(count - 1, [])
            if shorter and len(_forwards(longer)) == 1 and len(_forwards(shorter)) == 1:
                yield longer, shorter


def input_families(level: list[ClassIR], known: Known) -> list[dict[int, list[ClassIR]]]:
    """The classes of each source class (one `__init__` but for literals and children passed whole) whose
    forwards take plain inputs, by how many they take; not the root, a variant subclass or a container
    its callers pass the children of."""
    families: dict[tuple[object, ...], dict[int, list[ClassIR]]] = {}
    for cls in level:
        if not (cls.is_root or cls.parent or cls.takes_children) and _plain_parameters(cls.forward_params):
            by_count = families.setdefault((*cls.source, init_template(cls, known)), {})
            by_count.setdefault(len(cls.forward_params), []).append(cls)
    return list(families.values())


def _plain_parameters(params: tuple[str, ...]) -> bool:
    return not any(p.startswith("*") or "=" in p for p in params)


def _forwards(group: list[ClassIR]) -> set[tuple[str, ...]]:
    """The forwards of the group's classes, their numbers masked: one code for the group to take part."""
    return {canonical(c.forward_lines, parameter_names(c.forward_params)) or ("\0",) for c in group}


def _alias(longer: ClassIR, shorter: ClassIR) -> tuple[int, int] | None:
    """(the position of the input of `longer` that `shorter` lacks, the position of the input it stands
    for there) where that makes one computation; the last input is tried first."""
    names = parameter_names(longer.forward_params)
    wanted = canonical(shorter.forward_lines, parameter_names(shorter.forward_params))
    if wanted is None or len(number_slots(longer.forward_lines)) != len(number_slots(shorter.forward_lines)):
        return None
    for extra in reversed(range(len(names))):
        rest = names[:extra] + names[extra + 1 :]
        for position, name in enumerate(names):
            if position != extra and canonical(longer.forward_lines, rest, {names[extra]: name}) == wanted:
                return extra, position
    return None


def _branch(longer: list[ClassIR], shorter: list[ClassIR], forwards: dict[str, tuple[str, ...]]) -> tuple[int, dict[str, tuple[str, ...]]] | None:
    """(the position of the input the shorter forwards lack, each class's forward) where no input stands for
    it (_alias) but both read well as one forward branching on it: `if q_global is not None:` the longer
    side's code, else the shorter's (timm gcvit's WindowAttentionGlobal, with a global query or none).
    Each side one code but for its number literals (flags.member_forwards). Of the positions where the
    other inputs keep the names the source gave them, the one under which the two share the most code
    (the last, of those sharing as much). A call of a child that passes the input on where the shorter side
    leaves it out is one call, passing it, where the child's forward defaults it to None (gcvit's
    GlobalContextVitBlock: `self.attn(x, q_global)`; given None, the child runs as left out)."""
    names = parameter_names(longer[0].forward_params)
    found: list[tuple[int, int, dict[str, tuple[str, ...]]]] = []  # (shared lines, position, forwards)
    for extra in _extra_positions(names, parameter_names(shorter[0].forward_params)):
        rest = names[:extra] + names[extra + 1 :]
        renamed = [inputs_renamed(c, names) for c in longer] + [inputs_renamed(c, rest) for c in shorter]
        if any(f is None for f in renamed):
            continue  # a local of a forward would read as one of the inputs
        lines = [f if k < len(longer) else _passed_on(f, longer[0].forward_lines, names[extra], _defaults(c, forwards))
                 for k, (f, c) in enumerate(zip(renamed, longer + shorter)) if f is not None]  # fmt: skip
        # the shorter side takes the longer's names (those of its own statements, which a trace of the export
        # finds again), and the longer side's code comes first, as its `if` (_given_first)
        flagged = [False] * len(longer) + [True] * len(shorter)
        condition, negated = f"{names[extra]} is None", f"{names[extra]} is not None"
        marked, plain = literals_apart(lines[len(longer)])[0], literals_apart(lines[0])[0]
        if not few_lines_apart(plain, marked, tuple(names), regions=True):
            continue
        placed = member_forwards(lines, flagged, condition, negated, tuple(names), regions=True)
        if placed is None or _returns(plain) != _returns(marked) or _listed_only(plain, names[extra]):
            continue
        shared, only_plain, only_flagged = code_counts(plain, marked, tuple(names), regions=True)
        # forwards sharing less read the inputs both take as other things (dynamo's tensors passed in), and two
        # one-line forwards under an `if` come back split apart from a trace of the export
        if shared >= max(only_plain, only_flagged, 1):
            found.append((shared, extra, {c.name: _given_first(p.lines, condition, negated) for c, p in zip(longer + shorter, placed)}))
    if not found:
        return None
    _, extra, forward = max(found, key=lambda item: item[:2])
    return extra, forward


def joined_passing_on(longer: list[ClassIR], shorter: list[ClassIR], forwards: dict[str, tuple[str, ...]]) -> bool:
    """True when the shorter forwards are the longer ones but for leaving out the input they lack where the
    longer ones pass it on to a child whose forward defaults it to None (timm twins' `self.attn(out)`
    beside `self.attn(out, size)`), and _branch joins them so: one call passing it, no branch computing it."""
    return _passes_on_left_out(longer[0], shorter[0], forwards) and _branch(longer, shorter, forwards) is not None


def _passes_on_left_out(longer: ClassIR, shorter: ClassIR, forwards: dict[str, tuple[str, ...]]) -> bool:
    names = parameter_names(longer.forward_params)
    mine = inputs_renamed(longer, names)
    for extra in _extra_positions(names, parameter_names(shorter.forward_params)):
        theirs = inputs_renamed(shorter, names[:extra] + names[extra + 1 :])
        if mine is None or theirs is None:
            continue
        given = _passed_on(theirs, mine, names[extra], _defaults(shorter, forwards))
        if given != theirs and canonical(given, names) == canonical(mine, names) is not None:
            return True
    return False


def _defaults(cls: ClassIR, forwards: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """The children the class builds as generalized classes whose forward has a parameter defaulting to None:
    attribute -> how many inputs come before the first such."""
    out = {}
    for attribute, name in filter(None, map(built_child, cls.init_lines)):
        defaulted = [k for k, p in enumerate(forwards.get(name, ())) if p.endswith("=None")]
        if defaulted:
            out[attribute] = defaulted[0]
    return out


def _passed_on(lines: tuple[str, ...], longer: tuple[str, ...], extra: str, defaults: dict[str, int]) -> tuple[str, ...]:
    """`lines` with each call of a child in `defaults` written as the longer forward's line passing `extra` on
    in the first defaulted place, where that line is the same call with it."""
    out = []
    for line in lines:
        for given in _calls_given(line, extra, defaults):
            if given in longer:
                line = given
                break
        out.append(line)
    return tuple(out)


def _calls_given(line: str, extra: str, defaults: dict[str, int]) -> list[str]:
    """The line with `extra` passed last to one call of a child in `defaults` given exactly the inputs before
    its first defaulted one, for each such call."""
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    tree = parsed_line(text)
    if tree is None:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (child := self_attribute(node.func)) is None:
            continue
        if child not in defaults or len(node.args) != defaults[child] or node.keywords or node.end_lineno != 1:
            continue
        close = char_offset(text, node.end_col_offset) - 1
        out.append(f"{indent}{text[:close]}{', ' if node.args else ''}{extra}{text[close:]}")
    return out


def _extra_positions(names: list[str], own: list[str]) -> list[int]:
    """Where the input the shorter forward lacks may be: after the first (the block's own input, which every
    caller passes), where no other input the source named has another name."""
    def apart(a: str, b: str) -> bool:
        return a != b and not _GENERIC.fullmatch(a) and not _GENERIC.fullmatch(b)

    return [k for k in range(1, len(names)) if not any(apart(a, b) for a, b in zip(names[:k] + names[k + 1 :], own))]


def _given_first(lines: tuple[str, ...], condition: str, negated: str) -> tuple[str, ...]:
    """The lines with each `if <condition>: A else: B` written `if <negated>: B else: A`."""
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        indent = line[: len(line) - len(line.lstrip())]
        if line.strip() != f"if {condition}:":
            out.append(line)
            k += 1
            continue
        end = block_end(lines, k)
        if end < len(lines) and lines[end] == f"{indent}else:":
            after = block_end(lines, end)
            out += [f"{indent}if {negated}:", *lines[end + 1 : after], f"{indent}else:", *lines[k + 1 : end]]
            k = after
        else:
            out += lines[k:end]
            k = end
    return tuple(out)


def _returns(lines: tuple[str, ...]) -> set[int]:
    """How many values each `return` of the forward returns: a forward returning more given an input more is a
    list of branches growing from caller to caller (HRNet's), not one forward given an input or not."""
    counts = set()
    for line in code_lines(lines):
        tree = parsed_line(line.strip()) if line.strip().startswith("return") else None
        statement = tree.body[0] if tree is not None and tree.body else None
        if isinstance(statement, ast.Return):
            counts.add(len(statement.value.elts) if isinstance(statement.value, ast.Tuple) else 1)
    return counts


def _listed_only(lines: tuple[str, ...], name: str) -> bool:
    """True when the forward reads its input `name` only as an item of a list or tuple it writes
    (`torch.cat([x, x_1])`): an input of a list that grows by one from caller to caller (DenseNet's
    features), not one given or not. Reads after `name` is bound anew are another value's."""
    tree = parsed_line("\n".join(line.strip() for line in code_lines(lines) if not line.rstrip().endswith(":")))
    if tree is None:
        return False
    reads: list[bool] = []  # per read of the input: an item of a list or tuple
    for statement in tree.body:
        parents = {id(child): node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
        names = [n for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name]
        reads += [isinstance(parents.get(id(n)), (ast.List, ast.Tuple)) for n in names if isinstance(n.ctx, ast.Load)]
        if any(isinstance(n.ctx, ast.Store) for n in names):
            break
    return bool(reads) and all(reads)


def inputs_renamed(cls: ClassIR, names: list[str]) -> tuple[str, ...] | None:
    """The class's forward lines with its inputs named `names`, in order; None where one of those names is a local of it."""
    own = parameter_names(cls.forward_params)
    bound = variable_names(cls.forward_lines) - set(own)
    if bound & set(names):
        return None
    return tuple(rename_variables(line, dict(zip(own, names))) for line in cls.forward_lines)


def canonical(lines: tuple[str, ...], params: list[str], aliases: dict[str, str] | None = None) -> tuple[str, ...] | None:
    """The code lines with every variable named by where it is bound (inputs by position, an alias as the
    input it stands for), numbers masked; None for code this does not read (blocks, compound statements)."""
    names = {name: f"\0in{i}" for i, name in enumerate(params)}
    names.update({extra: names[target] for extra, target in (aliases or {}).items()})
    bound = 0
    out = []
    for line in lines:
        if line.lstrip().startswith("#"):
            continue
        tokens = line_tokens(line)
        if not tokens or line.startswith((" ", "\t")) or line.rstrip().endswith(":"):
            return None
        targets = ASSIGNED.match(line)
        split = targets.end() if targets else 0
        variables = {id(t) for t in variable_tokens(tokens)}
        uses = [
            "\0n" if _masked(t) else names.get(t.string, t.string) if id(t) in variables else t.string
            for t in tokens
            if t.start[1] >= split and t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)
        ]
        for target in targets[1].replace(" ", "").split(",") if targets else []:
            names[target] = f"\0local{bound}"
            bound += 1
        out.append(repr((targets[1].count(",") + 1 if targets else 0, uses)))
    return tuple(out)


def _masked(token: tokenize.TokenInfo) -> bool:
    """A number literal generalize.py makes a parameter (code_slots.number_slots): not an imaginary one."""
    return token.type == tokenize.NUMBER and not token.string.lower().endswith("j")


def renumbered(lines: tuple[str, ...], own: tuple[str, ...]) -> tuple[str, ...]:
    """`lines` with the numbers of `own`, which computes the same with other numbers (in the same order)."""
    return filled(lines, number_slots(lines), [slot.text for slot in number_slots(own)])


def _with_default(longer: ClassIR, lines: tuple[str, ...], order: Order, position: int | None, cls: ClassIR | None = None) -> ClassIR:
    """A class (`cls`, else `longer`) running `lines` with `longer`'s inputs in `order`, the last one
    defaulting to the one at `position` (to None where `position` is None: the lines test it);
    generic names (`x`, `x_1`, ...) renamed to read in order again."""
    names = parameter_names(longer.forward_params)
    *head, last = [names[i] for i in order]
    if position is not None:
        lines = (f"if {last} is None:", f"{INDENT}{last} = {names[position]}", *lines)
    if all(_GENERIC.fullmatch(n) for n in names):
        renames = {new: old for new, old in zip((*head, last), names) if new != old}
        lines = tuple(rename_variables(line, renames) for line in lines)
        *head, last = names
    return replace(cls or longer, forward_params=(*head, f"{last}=None"), forward_lines=lines)
