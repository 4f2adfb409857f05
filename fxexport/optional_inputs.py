"""Forwards taking other optional inputs of one source forward: `forward(self, x, key_value_states=None, attention_mask=None)`.

Whisper's attention runs as three codes: the encoder's self-attention given its input only, the
decoder's given an attention mask too, and its cross-attention given the encoder's states, which
the keys and values are computed from in place of the input. defaulted_inputs.py joins one form
taking an input more; here several forms each take one input more than a shortest form, another
input each. Where each longer form, its input made absent, computes exactly what the shortest does,
line by line, and each such input is named after a parameter of the source forward that defaults
to None, all become one forward taking them all, in the source's order, each defaulting to None:

    def forward(self, x, key_value_states=None, attention_mask=None):
        if key_value_states is None:
            key_value_states = x
        ...
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)

An input is absent two ways: it stands for another input (the source's `current_states =
key_value_states if key_value_states is not None else hidden_states`), or it is passed by a keyword
that the function called defaults to None (`attn_mask=`), which a call leaves out or passes None.
Callers pass an input by keyword where one before it is left out (reordered_calls.respell_callers).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .call_defaults import none_defaults
from .code_slots import masked_line, parameter_names, rename_variables, variable_names
from .defaulted_inputs import Known, canonical, input_families, inputs_renamed, merged_already, renumbered
from .ir import ClassIR
from .regions import INDENT
from .reordered_calls import Spelled, respell_callers
from .source_names import none_test
from .spelled_calls import char_offset, node_text, parsed_line


@dataclass(frozen=True)
class _Form:
    """Classes of one code taking one input more than the shortest form: where it is, and what it is."""

    classes: tuple[ClassIR, ...]
    extra: int  # the position of the input the shortest form lacks
    name: str  # the source forward's parameter it is
    alias: str | None  # the input it stands for where absent, else None (passed where None is the default)
    lines: tuple[str, ...]  # the forward, its inputs named as the shortest form's and the extra one `name`


def optional_inputs(level: list[ClassIR], pending: list[ClassIR], known: Known) -> tuple[list[ClassIR], list[ClassIR]]:
    """The level with the classes of each source class whose forwards take other optional inputs joined (see
    the module's docstring); the pending classes, their calls of the longer forms spelled for the union."""
    out = {c.name: c for c in level}
    for shortest, longer in _families(level, known):
        if merged_already(out, [*shortest, *longer]):
            continue
        found = _shortest_and_forms(shortest, longer)
        if found is None:
            continue
        base, forms = found
        params, lines = _union(base, forms)
        if lines is None:
            continue
        callers: list[ClassIR] | None = pending
        for form in forms:
            spelled = _spelled(params, len(base.forward_params), form)
            if spelled is not None and callers is not None:
                callers = respell_callers(callers, {c.name for c in form.classes}, spelled)
        if callers is None:
            continue
        pending = callers
        for cls in [*shortest, *(c for form in forms for c in form.classes)]:
            out[cls.name] = replace(cls, forward_params=params, forward_lines=renumbered(lines, cls.forward_lines))
    return [out[c.name] for c in level], pending


def _families(level: list[ClassIR], known: Known) -> Iterator[tuple[list[ClassIR], list[ClassIR]]]:
    """(shortest, longer): the classes of one source class (one `__init__` but for literals) whose forwards
    take n inputs, one code, and n + 1, two codes or more; no other counts."""
    for family in input_families(level, known):  # those given inputs, whose source forward is known
        by_count = {n: read for n, group in family.items() if n and (read := [c for c in group if c.source_forward])}
        if len(by_count) == 1:  # no class given the fewest inputs (a decoder's attentions only): [] as the shortest
            (count, longer), = by_count.items()
            if count >= 2 and len(_codes(longer)) >= 2:
                yield [], longer
            continue
        if len(by_count) != 2:
            continue
        low, high = sorted(by_count)
        if high == low + 1 and len(_codes(by_count[low])) == 1 and len(_codes(by_count[high])) >= 2:
            yield by_count[low], by_count[high]


def _shortest_and_forms(shortest: list[ClassIR], longer: list[ClassIR]) -> tuple[ClassIR, list[_Form]] | None:
    """The shortest form (one class of it, or, where no class is given the fewest inputs, a form's forward
    with its input absent) and the longer forms; None where they do not join."""
    if shortest:
        forms = _forms(shortest[0], longer)
        return None if forms is None else (shortest[0], forms)
    for candidate in _absent_forms(next(iter(_codes(longer).values()))[0]):
        forms = _forms(candidate, longer)
        if forms is not None:
            return candidate, forms
    return None


def _absent_forms(cls: ClassIR) -> Iterator[ClassIR]:
    """The class's forward with one of its inputs but the first absent: read as another input (none bound
    anew), given None, or left out where a known function's keyword defaults to None."""
    names = parameter_names(cls.forward_params)
    for extra in reversed(range(1, len(names))):
        name, params = names[extra], cls.forward_params[:extra] + cls.forward_params[extra + 1 :]
        for alias in names[:extra] + names[extra + 1 :]:
            if not _binds(cls.forward_lines, names=(name, alias)):
                yield replace(cls, forward_params=params, forward_lines=tuple(rename_variables(line, {name: alias}) for line in cls.forward_lines))
        for keyword_left_out in (False, True):
            lines = [_absent_line(line, name, keyword_left_out) if _reads(line, name) else line for line in cls.forward_lines]
            if all(line is not None for line in lines):
                yield replace(cls, forward_params=params, forward_lines=tuple(line for line in lines if line is not None))


def _absent_line(line: str, name: str, keyword_left_out: bool) -> str | None:
    """The line passing None in place of `name`, or leaving out the keyword passing it (None where none does)."""
    return _without_keyword(line, name) if keyword_left_out else rename_variables(line, {name: "None"})


def _codes(group: list[ClassIR]) -> dict[tuple[str, ...], list[ClassIR]]:
    """The group's classes by their forward's code, numbers masked and inputs named by position."""
    out: dict[tuple[str, ...], list[ClassIR]] = {}
    for cls in group:
        out.setdefault(canonical(cls.forward_lines, parameter_names(cls.forward_params)) or ("\0", cls.name), []).append(cls)
    return out


def _forms(shortest: ClassIR, longer: list[ClassIR]) -> list[_Form] | None:
    """Each code of the longer forwards as a form, in the order first seen; None where one is none (_form),
    or two take the same parameter."""
    parameters = _source_parameters(shortest.source_forward)
    forms = [_form(shortest, tuple(group), parameters) for group in _codes(longer).values()]
    if any(f is None for f in forms):
        return None
    found = [f for f in forms if f is not None]
    return found if len({f.name for f in found}) == len(found) else None


def _form(shortest: ClassIR, group: tuple[ClassIR, ...], parameters: dict[str, bool]) -> _Form | None:
    """The group as a form, where one of its inputs, named after a source parameter defaulting to None and
    no input of the shortest form, is absent (aliased or left None) in the shortest form's lines."""
    own = shortest.forward_params
    first = group[0]
    names = parameter_names(first.forward_params)
    for extra in reversed(range(1, len(names))):
        for alias in (*own, None):
            name = _name(first, names[extra], alias, parameters, own)
            # its inputs named as the shortest form's, that one `name`; None where a local of it has one of those names
            lines = None if name is None else inputs_renamed(first, [*own[:extra], name, *own[extra:]])
            if name is None or lines is None:
                continue
            if alias is not None and _binds(lines, shortest.forward_lines, names=(name, alias)):
                continue  # the input or the one it stands for bound anew: a line reading one reads another value
            if _absent_reads_as(lines, shortest.forward_lines, name, alias):
                return _Form(group, extra, name, alias, lines)
    return None


def _name(cls: ClassIR, extra: str, alias: str | None, parameters: dict[str, bool], own: tuple[str, ...]) -> str | None:
    """The source parameter defaulting to None that the input `extra` is: the one the source tests for None
    and else reads the input `alias` stands for in (`k if k is not None else hidden_states`: `alias` is that
    parameter, or the first input where it has no parameter's name); or, passed where None is the default,
    the one the source passes by the keyword it is passed by (`attn_mask=attention_mask`), else, where the
    source passes nothing by it (a helper does), the one sharing a word with it."""
    if alias is not None:
        first = next(iter(parameters), None)
        wanted = alias if alias in parameters else first if alias == own[0] else None
        tested = {p for p, other in _tested(cls.source_forward) if parameters.get(p) and p not in own and other == wanted}
        return tested.pop() if len(tested) == 1 else None
    keywords = {k for line in cls.forward_lines for k in _keywords_of(line, extra)}
    if len(keywords) != 1:
        return None
    keyword = keywords.pop()
    passed = _passed_by(cls.source_forward, keyword)
    if passed:
        found = [p for p in passed if parameters.get(p) and p not in own]
        return found[0] if len(found) == len(passed) == 1 else None
    words = {w for w in keyword.split("_") if len(w) > 2}
    found = [p for p, none in parameters.items() if none and p not in own and words & set(p.split("_"))]
    return found[0] if len(found) == 1 else None


def _passed_by(source: str, keyword: str) -> set[str]:
    """What the source passes by `keyword` to any call: a name, or "" for anything else."""
    tree = parsed_line(source)
    return {k.value.id if isinstance(k.value, ast.Name) else "" for node in ast.walk(tree) if isinstance(node, ast.Call)
            for k in node.keywords if k.arg == keyword} if tree is not None and keyword else set()  # fmt: skip


def _source_parameters(source: str) -> dict[str, bool]:
    """The source forward's parameters (not `self`, `*args`, `**kwargs`): does each default to None."""
    tree = parsed_line(source)
    function = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args][1:]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return {a.arg: isinstance(d, ast.Constant) and d.value is None for a, d in pairs}


def _tested(source: str) -> list[tuple[str, str]]:
    """(a, b) for each name `a` the source reads `b` in place of where None: `a if a is not None else b`,
    `b if a is None else a`, `if a is None: a = b`."""
    tree = parsed_line(source)
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree) if tree is not None else ():
        tested = none_test(node.test) if isinstance(node, (ast.IfExp, ast.If)) else None
        if tested is None:
            continue
        name, is_none = tested
        if isinstance(node, ast.IfExp):
            kept, other = (node.orelse, node.body) if is_none else (node.body, node.orelse)
            if isinstance(kept, ast.Name) and kept.id == name and isinstance(other, ast.Name):
                found.append((name, other.id))
        elif isinstance(node, ast.If) and is_none and isinstance(first := node.body[0], ast.Assign) and isinstance(first.value, ast.Name):
            if [t.id for t in first.targets if isinstance(t, ast.Name)] == [name]:
                found.append((name, first.value.id))
    return list(dict.fromkeys(found))


def _keywords_of(line: str, name: str) -> list[str]:
    """The keywords the line passes the variable `name` by, to any call; a keyword "" where it passes it otherwise."""
    tree = parsed_line(line.strip() + (" pass" if line.rstrip().endswith(":") else ""))
    if tree is None:
        return [""]
    by_keyword = [k.arg or "" for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords
                  if isinstance(k.value, ast.Name) and k.value.id == name]  # fmt: skip
    reads = sum(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree))
    return by_keyword if len(by_keyword) == reads else [*by_keyword, ""]


def _absent_reads_as(lines: tuple[str, ...], shortest: tuple[str, ...], name: str, alias: str | None) -> bool:
    """True when the lines, `name` absent, are the shortest form's, line by line, numbers masked: every line
    reading `name` reads `alias` in its place, or passes None (or nothing) where it passes `name`."""
    if len(lines) != len(shortest):
        return False
    read = False
    for line, other in zip(lines, shortest):
        if not _reads(line, name):
            if masked_line(line) != masked_line(other):
                return False
            continue
        read = True
        if alias is not None:
            absent = [rename_variables(line, {name: alias})]
        else:
            absent = [rename_variables(line, {name: "None"}), *filter(None, [_without_keyword(line, name)])]
        if masked_line(other) not in map(masked_line, absent):
            return False
    return read


def _binds(*forwards: tuple[str, ...], names: tuple[str, ...]) -> bool:
    """True when a line of the forwards binds one of `names` (an assignment, a loop, `with ... as`)."""
    for line in (line for lines in forwards for line in lines):
        text = line.strip()
        tree = parsed_line(text + " pass" if text.endswith(":") else text)
        if tree is None:
            return True  # not read: taken to bind
        if any(isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load) for n in ast.walk(tree)):
            return True
    return False


def _reads(line: str, name: str) -> bool:
    return name in variable_names((line,))


def _without_keyword(line: str, name: str) -> str | None:
    """The line without the keyword argument passing `name` to a known function defaulting it to None."""
    tree = parsed_line(line.strip())
    if tree is None:
        return None
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for k, keyword in enumerate(node.keywords):
            if isinstance(keyword.value, ast.Name) and keyword.value.id == name and keyword.arg in none_defaults(node_text(text, node.func)):
                start = char_offset(text, keyword.col_offset)
                end = char_offset(text, keyword.end_col_offset)
                if k + 1 < len(node.keywords):
                    end = char_offset(text, node.keywords[k + 1].col_offset)
                else:
                    start = _comma_before(text, start)
                return indent + text[:start] + text[end:]
    return None


def _comma_before(text: str, start: int) -> int:
    """Where the `, ` before the argument at `start` begins."""
    match = re.search(r",\s*$", text[:start])
    return match.start() if match else start


def _union(shortest: ClassIR, forms: list[_Form]) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The joined forward's parameters (the shortest's, then each form's input in the source's order,
    defaulting to None) and lines; None for lines where two forms change one line."""
    order = list(_source_parameters(shortest.source_forward))
    ordered = sorted(forms, key=lambda f: order.index(f.name))
    params = (*shortest.forward_params, *(f"{f.name}=None" for f in ordered))
    lines = list(shortest.forward_lines)
    changed: set[int] = set()
    for form in forms:
        for t, line in enumerate(form.lines):
            if _reads(line, form.name):
                if t in changed:
                    return params, None
                changed.add(t)
                lines[t] = line
    heads = [(f"if {f.name} is None:", f"{INDENT}{f.name} = {f.alias}") for f in ordered if f.alias is not None]
    return params, (*(line for head in heads for line in head), *lines)


def _spelled(params: tuple[str, ...], count: int, form: _Form) -> Spelled | None:
    """How a call of the form's instances passes its arguments to the joined forward: the shortest form's
    inputs in their places and its own input by position where it comes next, else by keyword; None where
    the calls stay as they are."""
    rest = [i for i in range(count + 1) if i != form.extra]
    position = parameter_names(params).index(form.name)
    keyword = None if position == count else form.name
    spelled = tuple((None, i) for i in rest) + ((keyword, form.extra),)
    return None if spelled == tuple((None, i) for i in range(count + 1)) else spelled
