"""Which name a source statement gives the value a node computes (source_names.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.source_names import forget_statements, statement, statement_name, unpacked_parameters
from tests.packages import imported

SOURCE = '''\
def forward(self, x):
    y = torch.cat(
        [x, x],
        dim=pick(
            k=bar(2),
        ),
    )
    a, b = y.chunk(2)
    c: int = a + 1
    c += b
    self.total = c
    d = e = c
    *f, g = c.unbind()
    parts[0] = c
    for h in range(2):
        pass
    return c
z = 1
def other(self, x):
    a = f(x); b = g(x)
    return a
'''

# (line of SOURCE, first line of its statement, the names it assigns)
CASES = [
    (2, 2, ("y",)),
    (5, 2, ("y",)),  # `k=bar(2),` inside the call reads as an assignment on its own: the statement is `y = ...`
    (8, 8, ("a", "b")),
    (9, 9, ("c",)),
    (10, 10, ("c",)),
    (11, 11, None),  # an attribute
    (12, 12, None),  # two targets
    (13, 13, None),  # a starred target
    (14, 14, None),  # an item
    (15, 15, None),  # a loop's header
    (17, 17, None),  # not an assignment
]
OUTSIDE_FUNCTIONS = 18  # `z = 1`: no function's statement
TWO_ON_A_LINE = 20  # `a = f(x); b = g(x)`: which one a node ran in is not known


def _node(path: Path, line: int, *, users: int = 0, code: str | None = None) -> fx.Node:
    graph = fx.Graph()
    node = graph.call_function(torch.neg, (graph.placeholder("x"),))
    code = SOURCE.splitlines()[line - 1].strip() if code is None else code
    node.meta["stack_trace"] = f'  File "{path}", line {line}, in forward\n    {code}\n'
    for _ in range(users):
        graph.call_function(torch.neg, (node,)).meta["stack_trace"] = node.meta["stack_trace"]
    return node


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    yield path
    forget_statements()


@pytest.mark.parametrize("line,start,names", CASES, ids=[str(c[0]) for c in CASES])
def test_a_node_is_named_by_the_whole_statement_it_ran_in(source: Path, line: int, start: int, names: tuple[str, ...] | None) -> None:
    assert statement(_node(source, line)) == ((str(source), start), names)


def test_a_value_its_statement_reads_again_is_not_what_it_assigned(source: Path) -> None:
    assert statement_name(_node(source, 2)) == "y"
    assert statement_name(_node(source, 2, users=1)) is None  # a part of `y = ...`, not y


def test_a_statement_outside_functions_names_nothing(source: Path) -> None:
    assert statement(_node(source, OUTSIDE_FUNCTIONS)) is None


def test_statements_sharing_a_line_name_nothing(source: Path) -> None:
    assert statement(_node(source, TWO_ON_A_LINE)) == ((str(source), TWO_ON_A_LINE), None)


def test_a_file_changed_since_the_trace_names_nothing(source: Path) -> None:
    assert statement(_node(source, 2, code="x = torch.cat(")) is None  # the trace ran another line there


class _TwoOnALine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x); z = y.relu()  # noqa: E702
        scaled = z * 2
        return scaled + y


def test_a_model_with_statements_sharing_a_line_exports_and_names_the_others(tmp_path: Path) -> None:
    model = _TwoOnALine().eval()
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(0))
    gm = torch.export.export(model, (x,)).module()
    fxexport.export(gm, tmp_path / "two")
    code = re.sub(r"^ *#.*$", "", (tmp_path / "two" / "module.py").read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert "scaled = " in code and "y = " not in code and "z = " not in code
    with imported(tmp_path / "two") as package:
        assert torch.equal(package.FxModule()(x), gm(x))


def test_a_file_that_cannot_be_read_names_nothing(tmp_path: Path) -> None:
    assert statement(_node(tmp_path / "gone.py", 2)) is None


class _Unpacking(nn.Module):
    def forward(self, x, position_embeddings):
        """A docstring comes before the first statement."""
        x, cls_tokens = x
        cos, sin = position_embeddings
        return x * cos + cls_tokens * sin


class _LateUnpacking(nn.Module):
    def forward(self, x):
        y = x[0] * 2
        x, cls_tokens = x
        return y + x + cls_tokens


UNPACKED = [
    # (class, what unpacked_parameters finds)
    (_Unpacking, (("x", ("x", "cls_tokens")), ("position_embeddings", ("cos", "sin")))),
    # unpacked into its own name after a statement that read the tuple: `x` is not the item everywhere
    (_LateUnpacking, ()),
]


@pytest.mark.parametrize(("cls", "found"), UNPACKED)
def test_a_parameter_unpacked_into_its_own_name_counts_as_the_first_statement_only(cls, found) -> None:
    forget_statements()
    assert set(unpacked_parameters(cls)) == set(found)
