"""Property test: random module trees with hostile names export, parse, import fresh and match.

Names reach the generated code only as repr() string literals or sanitised ASCII identifiers.
"""

from __future__ import annotations

import ast
import functools
import io
import itertools
import keyword
import tokenize
from pathlib import Path

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import fx, nn

import fxexport
import fxexport.formatting as formatting
from tests.roundtrip import check_in_fresh_process, record

EXAMPLES = 500
HOSTILE = [
    "class", "import", "None", "self", "torch", "nn", "F", "math", "operator", "Path", "getattr",
    "setattr", "super", "load_tensors", "WEIGHT_FILES", "device", "dtype", "x", "0", "12", "_", "__",
    "a'b", 'q"uote', "back\\slash", "new\nline", "tab\tx", "sp ace", "é", "ﬁ", "日本", "x-y", "T",
    "weight", "__dunder__", "del", "lambda", "L['self']", "G['m']",  # dynamo's roots: plain names elsewhere
]  # fmt: skip
NAMES = st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(blacklist_characters=".", blacklist_categories=("Cs",)), min_size=1, max_size=5))
KINDS = st.sampled_from(["linear", "holder", "parameter", "buffer", "hidden_buffer"])
# Attributes fx.GraphModule sets on itself (`graph`, `meta`, ...): fx cannot build a root that
# has a member of the same name, so no source could have one.
GRAPH_MODULE_ATTRIBUTES = set(dir(fx.GraphModule(nn.Module(), fx.Graph())))


def fx_can_print(name: str) -> bool:
    """fx itself prints these names validly (pytorch#188538: quotes, backslashes, keywords break it)."""
    if not name.isprintable() or '"' in name or "\\" in name:
        return False
    return not name.isidentifier() or (name.isascii() and not keyword.iskeyword(name))


@st.composite
def trees(draw) -> tuple[nn.Module, list[tuple[tuple[str, ...], str]]]:
    root = nn.Module()
    items: list[tuple[tuple[str, ...], str]] = []

    def fill(module: nn.Module, path: tuple[str, ...], depth: int) -> None:
        for index in range(draw(st.integers(0, 3 if depth < 2 else 1))):
            kind, name = draw(KINDS), draw(NAMES)
            if name in module._modules or name in module._parameters or name in module._buffers:
                continue
            if not path and name in GRAPH_MODULE_ATTRIBUTES:
                continue
            try:
                if kind == "linear":
                    module.add_module(name, nn.Linear(3, 3))
                elif kind == "holder":
                    module.add_module(name, nn.Module())
                elif kind == "parameter":
                    module.register_parameter(name, nn.Parameter(torch.arange(3.0) * (index + 1)))
                else:
                    module.register_buffer(name, torch.arange(3.0) + index, persistent=kind == "buffer")
            except (KeyError, AttributeError, TypeError):
                continue
            items.append(((*path, name), kind))
            if kind == "holder":
                fill(getattr(module, name), (*path, name), depth + 1)

    torch.manual_seed(0)
    fill(root, (), 0)
    return root, items


def build(root: nn.Module, items: list[tuple[tuple[str, ...], str]]) -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    for path, kind in items:
        # fx names a node after its target; one named `self` shadows the module in fx's own forward
        if kind != "holder" and all(fx_can_print(p) for p in path) and path != ("self",):
            op = graph.call_module if kind == "linear" else graph.get_attr
            value = op(".".join(path), (x,)) if kind == "linear" else op(".".join(path))
            x = value if kind == "linear" else graph.call_function(torch.add, (x, value))
    graph.output(x)
    gm = fx.GraphModule(root, graph)
    for path, kind in items:  # add what the graph does not reference, exactly as the source has it
        owner = gm
        for atom in path[:-1]:
            if atom not in owner._modules:
                owner.add_module(atom, nn.Module())
            owner = owner._modules[atom]
        source = root
        for atom in path[:-1]:
            source = source._modules[atom]
        name = path[-1]
        if kind in ("linear", "holder") and name not in owner._modules:
            owner.add_module(name, source._modules[name])
        elif kind == "parameter" and name not in owner._parameters:
            owner.register_parameter(name, source._parameters[name])
        elif kind.endswith("buffer") and name not in owner._buffers:
            owner.register_buffer(name, source._buffers[name], persistent=kind == "buffer")
    return gm


@functools.cache
def template_comments() -> frozenset[str]:
    """The comments our templates write whatever the model: the only comments allowed."""
    _, sources = fxexport.generate(fx.symbolic_trace(nn.Linear(2, 2)), package_name="reference")
    tokens = tokenize.generate_tokens(io.StringIO(sources["module.py"]).readline)
    return frozenset(t.string for t in tokens if t.type == tokenize.COMMENT)


def assert_names_only_as_literals_or_identifiers(source: str, items: list[tuple[tuple[str, ...], str]]) -> None:
    ast.parse(source)
    strings, identifiers = set(), set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            assert token.string.isascii() and token.string.isidentifier(), token
            identifiers.add(token.string)
        elif token.type == tokenize.STRING and not token.string.lstrip("rbRB").startswith(("f", "F")):
            strings.add(ast.literal_eval(token.string))
        elif token.type == tokenize.COMMENT:
            assert token.string in template_comments(), token  # no comment carries a name from the model
    for path, _ in items:
        for atom in path:
            plain = atom.isascii() and atom.isidentifier() and not keyword.iskeyword(atom)
            assert atom in strings or (plain and atom in identifiers), atom


def test_hostile_names_round_trip(tmp_path: Path) -> None:
    packages, expect = tmp_path / "packages", tmp_path / "expect"
    names: list[str] = []
    attempts = itertools.count()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(trees())
    def export_one(tree: tuple[nn.Module, list[tuple[tuple[str, ...], str]]]) -> None:
        root, items = tree
        gm = build(root, items)
        name = f"case_{next(attempts)}"
        fxexport.export(gm, packages / name)
        source = (packages / name / "module.py").read_text()
        assert_names_only_as_literals_or_identifiers(source, items)
        assert formatting.format_source("module.py", source) == source  # what black writes
        record(name, gm, (torch.ones(2, 3),), {}, None, expect)
        names.append(name)

    export_one()
    assert len(names) >= EXAMPLES
    report = check_in_fresh_process(packages, expect, names)
    failures = {name: problems for name, problems in report.items() if problems}
    assert not failures, list(failures.items())[:5]
