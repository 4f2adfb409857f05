"""Which name a source statement gives the value a node computes (source_names.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.annotations import source_frames
from fxexport.source_names import (
    called_always,
    chosen_aliases,
    forget_statements,
    statement,
    statement_name,
    unpacked_parameters,
)
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
def called(self, x, cos):
    q = rotate(x, cos)
    k = rotate(x, cos)
    return q + k
def rotate(x, cos):
    cos = cos.unsqueeze(1)
    return x * cos
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
CALLS = (23, 24)  # `q = rotate(x, cos)`, `k = rotate(x, cos)`
ROTATE = (27, 28)  # `cos = cos.unsqueeze(1)`, `return x * cos`


def _node(path: Path, line: int, *, users: int = 0, code: str | None = None) -> fx.Node:
    graph = fx.Graph()
    node = graph.call_function(torch.neg, (graph.placeholder("x"),))
    code = SOURCE.splitlines()[line - 1].strip() if code is None else code
    node.meta["stack_trace"] = f'  File "{path}", line {line}, in forward\n    {code}\n'
    for _ in range(users):
        graph.call_function(torch.neg, (node,)).meta["stack_trace"] = node.meta["stack_trace"]
    return node


def _trace(path: Path, *lines: int) -> str:
    """A stack trace through `lines` of SOURCE, the outermost first."""
    return "".join(f'  File "{path}", line {line}, in f\n    {SOURCE.splitlines()[line - 1].strip()}\n' for line in lines)


def _called(path: Path, call: int) -> tuple[fx.Node, fx.Node]:
    """The nodes of `rotate` called from line `call`: `cos.unsqueeze(1)` and `x * cos`, which reads it."""
    graph = fx.Graph()
    unsqueezed = graph.call_method("unsqueeze", (graph.placeholder("cos"), 1))
    product = graph.call_function(torch.mul, (graph.placeholder("x"), unsqueezed))
    unsqueezed.meta["stack_trace"], product.meta["stack_trace"] = _trace(path, call, ROTATE[0]), _trace(path, call, ROTATE[1])
    return unsqueezed, product


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    yield path
    forget_statements()


@pytest.mark.parametrize("line,start,names", CASES, ids=[str(c[0]) for c in CASES])
def test_a_node_is_named_by_the_whole_statement_it_ran_in(source: Path, line: int, start: int, names: tuple[str, ...] | None) -> None:
    assert statement(_node(source, line)) == (((str(source), start),), names)


def test_a_value_its_statement_reads_again_is_not_what_it_assigned(source: Path) -> None:
    assert statement_name(_node(source, 2)) == "y"
    assert statement_name(_node(source, 2, users=1)) is None  # a part of `y = ...`, not y


def test_a_statement_outside_functions_names_nothing(source: Path) -> None:
    assert statement(_node(source, OUTSIDE_FUNCTIONS)) is None


def test_statements_sharing_a_line_name_nothing(source: Path) -> None:
    assert statement(_node(source, TWO_ON_A_LINE)) == (((str(source), TWO_ON_A_LINE),), None)


def test_a_value_made_inside_a_function_the_forward_calls_is_named_by_that_functions_statement(source: Path) -> None:
    unsqueezed, product = _called(source, CALLS[0])
    # read again by the forward's `q = rotate(x, cos)`: not what it assigns, but what rotate's `cos = ...` does
    assert statement(unsqueezed) == (((str(source), CALLS[0]), (str(source), ROTATE[0])), ("cos",))
    assert statement_name(unsqueezed) == "cos"
    assert statement(product) == (((str(source), CALLS[0]),), ("q",))  # the forward's statement assigns it
    assert statement_name(product) == "q"


def test_one_statement_of_a_function_called_twice_is_two_statements(source: Path) -> None:
    first, second = _called(source, CALLS[0])[0], _called(source, CALLS[1])[0]
    assert statement(first) != statement(second)
    assert statement(first)[1] == statement(second)[1] == ("cos",)  # type: ignore[index]


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


class _Returning(nn.Module):
    def forward(self, x):
        if self.fused is not None:
            return self.act(self.fused(x))
        y = self.norm(x)
        return self.act(self.pool(y))


class _ReturningOtherwise(nn.Module):
    def forward(self, x):
        if self.fused is not None:
            y = self.fused(x)
            return y
        return self.act(self.norm(x))


class _ReturningInALoop(nn.Module):
    def forward(self, x):
        for layer in self.layers:
            if layer is None:
                return self.act(x)
        return self.act(self.norm(x))


class _ReturningWithElse(nn.Module):
    def forward(self, x):
        if self.fused is not None:
            return self.act(self.fused(x))
        else:
            x = self.norm(x)
        return self.act(x)


CALLED = [
    # (class, the children its forward calls whenever it runs)
    (_Returning, {"act"}),  # an early return calling `act` too: `norm` and `pool` only after it
    (_ReturningOtherwise, set()),  # the early return calls `fused` alone
    (_ReturningInALoop, set()),  # a return in a loop: not a block that returns at its end
    (_ReturningWithElse, set()),  # an `else:` runs only where the `if` does not
]


@pytest.mark.parametrize(("cls", "called"), CALLED)
def test_children_called_on_every_way_out_of_the_forward_are_called_always(cls, called) -> None:
    assert called_always(cls) == called


CHOSEN = [
    # (a forward's statements, the locals a statement reading them reads either of two names through)
    ("current = key_value_states if key_value_states is not None else hidden_states", {"current": {"key_value_states", "hidden_states"}}),
    ("current_states = key_value_states if is_cross_attention else hidden_states", {"current_states": {"key_value_states", "hidden_states"}}),
    ("current = hidden_states if not is_cross_attention else key_value_states", {"current": {"key_value_states", "hidden_states"}}),
    ("current = key_value_states if flags[0] else hidden_states", {}),  # a test of no name
    ("current = key_value_states * 2 if is_cross_attention else hidden_states", {}),  # not two names
    # fxexport's spelling of the first: the parameter itself, after the `if`
    ("if key_value_states is None:\n    key_value_states = hidden_states", {"key_value_states": {"key_value_states", "hidden_states"}}),
    ("if key_value_states is None:\n    key_value_states = hidden_states * 2", {}),
    ("if key_value_states is not None:\n    key_value_states = hidden_states", {}),
    ("if key_value_states is None:\n    other = hidden_states", {}),
    ("if key_value_states is None:\n    key_value_states = hidden_states\nelse:\n    key_value_states = mask", {}),
    ("if key_value_states is None:\n    key_value_states = hidden_states\n    mask = None", {}),
]


@pytest.mark.parametrize(("body", "aliases"), CHOSEN)
def test_a_local_bound_to_one_of_two_names_reads_either(body: str, aliases: dict[str, set[str]]) -> None:
    source = "def forward(self, hidden_states, key_value_states=None, mask=None, is_cross_attention=False):\n"
    source += "".join(f"    {line}\n" for line in body.split("\n")) + "    return current\n"
    assert chosen_aliases(source) == {k: frozenset(v) for k, v in aliases.items()}


def test_frames_stop_where_torch_code_starts_below_the_models(source: Path) -> None:
    import torch.nn.modules.linear as linear

    file = linear.__file__
    line = next(i for i, text in enumerate(Path(file).read_text(encoding="utf-8").splitlines(), 1) if "return F.linear(" in text)
    code = "return F.linear(input, self.weight, self.bias)"
    into_torch = _trace(source, CALLS[0]) + f'  File "{file}", line {line}, in forward\n    {code}\n'
    graph = fx.Graph()
    node = graph.call_function(torch.neg, (graph.placeholder("x"),))
    node.meta["stack_trace"] = into_torch
    assert source_frames(node) == ((str(source), str(CALLS[0]), "q = rotate(x, cos)"),)  # F.linear's body is not the model's
    node.meta["stack_trace"] = f'  File "{file}", line {line}, in forward\n    {code}\n'
    assert source_frames(node) == ((file, str(line), code),)  # a torch.nn class's own statement is its source's


def test_frames_stop_at_another_modules_forward(source: Path) -> None:
    """A child's result carries the frames of the child's forward: its statements are the child class's, not the caller's."""
    graph = fx.Graph()
    node = graph.call_function(torch.neg, (graph.placeholder("x"),))
    node.meta["stack_trace"] = _trace(source, CALLS[0]) + f'  File "{source}", line 9, in forward\n    c: int = a + 1\n'
    assert source_frames(node) == ((str(source), str(CALLS[0]), "q = rotate(x, cos)"),)


def test_frames_pass_over_a_wrapper_calling_what_it_wraps(source: Path) -> None:
    """transformers 5 holds `apply_rotary_pos_emb` as a module whose forward calls it: `return func(*args, **kwargs)`."""
    graph = fx.Graph()
    node = graph.call_function(torch.neg, (graph.placeholder("x"),))
    wrapper = '  File "/site-packages/kernels/layer.py", line 856, in forward\n    return func(*args, **kwargs)\n'
    node.meta["stack_trace"] = _trace(source, CALLS[0]) + wrapper + _trace(source, ROTATE[0])
    found = source_frames(node)
    assert [line for _, line, _ in found] == [str(CALLS[0]), str(ROTATE[0])]
