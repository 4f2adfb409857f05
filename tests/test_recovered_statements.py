"""recovered_statements: each node of a symbolic_trace graph matched with the source statement it ran in."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import pytest
import torch
from torch import fx, nn
from torch.fx.experimental.proxy_tensor import make_fx

import fxexport
from fxexport.inferred_stacks import inferred_stacks
from fxexport.recovered_statements import _loop_names, keys_in, recovered_statements
from tests import models

_FRAME = re.compile(r'File "[^"]+", line \d+, in forward\n\s*(?P<code>[^\n]*)')


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        qkv = self.qkv(x).reshape(b, t, 3, d).permute(2, 0, 1, 3)
        q, k, v = qkv[0], qkv[1], qkv[2]
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(8)
        self.attention = _Attention()
        self.norm2 = nn.LayerNorm(8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class _Arms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fused = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fused:
            x = torch.softmax(x.transpose(1, 2), dim=-1)
        else:
            x = x.transpose(1, 2) * 2
        x = x.transpose(1, 2)
        return x


class _Loop(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x) + x
        x = self.norm(x)
        return x


class _ZippedLoop(nn.Module):
    """A loop over two ModuleLists at once, over items of a split, then an item after it (`spx[-1]`) that
    the loop's first statement could have read in another iteration."""

    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
        self.norms = nn.ModuleList([nn.LayerNorm(2), nn.LayerNorm(2)])
        self.pool = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = torch.split(x, 2, -1)
        outs = []
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            out = spx[i]
            out = norm(conv(out))
            outs.append(out)
        last = spx[-1]
        last = self.pool(last)
        return torch.cat(outs + [last], -1)


def _helper(x: torch.Tensor) -> torch.Tensor:
    return x + 1


class _Helper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = _helper(x)
        y = self.fc(x) + x
        return y


class _Indexed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fuse = nn.ModuleList([nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fuse[0][1](x)
        return y + x


class _Root(nn.Module):
    """The root's source is not known to a symbolic_trace GraphModule: its statements stay unknown."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x).relu()


class _Bias(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Linear(8, 8)

    def bias(self) -> torch.Tensor:
        return self.mlp(torch.ones(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias()


class _ChildOfChild(nn.Module):
    """A child's child called by its path, and from a method of the child, in the arm of an `if` that calls
    no child; the other arm calls the child itself."""

    def __init__(self) -> None:
        super().__init__()
        self.rel = _Bias()
        self.fused = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.rel.mlp(x)
        if self.fused:
            b = self.rel.bias()
            y = y * b
        else:
            y = self.rel(y)
        return y.relu()


class _Pair(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.tanh(), x.sigmoid()


class _Unpacked(nn.Module):
    """A tuple a child returns is a Python tuple, unpacked with no getitem: the gates indexed after it are not."""

    def __init__(self) -> None:
        super().__init__()
        self.pair = _Pair()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gates = x.softmax(-1)
        y, h = self.pair(x)
        return y * gates[0] + h


class _Halves(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x.chunk(2, -1)


class _HalvesUnpacked(nn.Module):
    """A child traced through that returns one traced value (a chunk): unpacking it makes items of it."""

    def __init__(self) -> None:
        super().__init__()
        self.halves = _Halves()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value, gate = self.halves(x)
        out = value * gate
        return out[..., 0] + out.sum(-1)


class _HalvesIndexed(nn.Module):
    """... or indexes it (the export of that, traced again)."""

    def __init__(self) -> None:
        super().__init__()
        self.halves = _Halves()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        halves = self.halves(x)
        value = halves[0]
        gate = halves[1]
        return value * gate


BLOCK = "x = x + self.attention(self.norm1(x))"
RETURN = "return x + self.mlp(self.norm2(x))"
# (case, the block, {node name: the innermost statement it is matched with (None: none)})
CASES: list[tuple[str, Callable[[], nn.Module], dict[str, str | None]]] = [
    ("chained_calls", _Block, {
        "block_norm1": BLOCK, "add": BLOCK, "block_norm2": RETURN, "block_mlp_0": RETURN, "add_1": RETURN,
        "getattr_1": "b, t, d = x.shape", "getitem_2": "b, t, d = x.shape",
        "block_attention_qkv": "qkv = self.qkv(x).reshape(b, t, 3, d).permute(2, 0, 1, 3)",
        "permute": "qkv = self.qkv(x).reshape(b, t, 3, d).permute(2, 0, 1, 3)",
        "getitem_3": "q, k, v = qkv[0], qkv[1], qkv[2]", "getitem_5": "q, k, v = qkv[0], qkv[1], qkv[2]",
        "transpose": "return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v",
        "matmul_1": "return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v",
        "relu": None,  # the root's own
    }),
    ("taken_arm_only", _Arms, {
        "transpose": "x = torch.softmax(x.transpose(1, 2), dim=-1)",
        "softmax": "x = torch.softmax(x.transpose(1, 2), dim=-1)",
        "transpose_1": "x = x.transpose(1, 2)",  # not the untaken `else`
    }),
    ("loop_over_children", _Loop, {
        # matched, but a loop's statements keep none: each iteration would have the same line
        "block_layers_0": None, "add": None, "block_layers_1": None, "add_1": None,
        "block_norm": "x = self.norm(x)",  # after the loop, found past its iterations
    }),
    ("loop_over_zipped_children", _ZippedLoop, {
        "block_convs_0": None, "block_norms_0": None, "block_norms_1": None,  # children of both lists, in the loop
        "block_pool": "last = self.pool(last)",  # past the loop, though `spx[-1]` was taken for its next iteration
        "cat": "return torch.cat(outs + [last], -1)",
    }),
    ("indexed_children", _Indexed, {  # indexing modules is not traced: no getitem
        "block_fuse_0_1": "y = self.fuse[0][1](x)", "add": "return y + x",
    }),
    ("child_of_a_child", _ChildOfChild, {
        "block_rel_mlp": "y = self.rel.mlp(x)",  # by its path
        "block_rel_mlp_1": None,  # inside `self.rel.bias()`: no call of `self.rel` (the other arm's) ran
        "mul": "y = y * b", "relu": "return y.relu()",
    }),
    ("tuple_of_a_child_unpacked", _Unpacked, {
        "softmax": "gates = x.softmax(-1)", "getitem": "return y * gates[0] + h", "mul": "return y * gates[0] + h",
    }),
    ("traced_value_of_a_child_unpacked", _HalvesUnpacked, {
        "getitem": "value, gate = self.halves(x)", "getitem_1": "value, gate = self.halves(x)",
        "getitem_2": "return out[..., 0] + out.sum(-1)",
    }),
    ("traced_value_of_a_child_indexed", _HalvesIndexed, {"getitem": "value = halves[0]", "getitem_1": "gate = halves[1]"}),
    ("never_past_a_child_call", _Helper, {
        "add": None,  # inside _helper: no statement of forward adds before calling self.fc
        "block_fc": "y = self.fc(x) + x", "add_1": "y = self.fc(x) + x",
    }),
]  # fmt: skip


def _innermost(node: fx.Node) -> str | None:
    frames = _FRAME.findall(node.stack_trace or "")
    return frames[-1].strip() if frames else None


def _statements(gm: fx.GraphModule) -> dict[str, str | None]:
    """Each node's innermost recovered statement, by name."""
    with recovered_statements(gm):
        return {n.name: _innermost(n) for n in gm.graph.nodes}


@pytest.mark.parametrize(("block", "expected"), [(b, e) for _, b, e in CASES], ids=[c[0] for c in CASES])
def test_each_node_is_matched_with_its_statement(block: Callable[[], nn.Module], expected: dict[str, str | None]) -> None:
    found = _statements(fx.symbolic_trace(_Root(block())))
    assert {name: found[name] for name in expected} == expected


@pytest.mark.parametrize(("block", "expected"), [(b, e) for _, b, e in CASES], ids=[c[0] for c in CASES])
def test_the_traced_graph_is_as_it_was_after_the_export(block: Callable[[], nn.Module], expected: dict[str, str | None]) -> None:
    traced = fx.symbolic_trace(_Root(block()))
    metas = [dict(n.meta) for n in traced.graph.nodes]
    fxexport.generate(traced, package_name="recovered")
    assert [dict(n.meta) for n in traced.graph.nodes] == metas


def test_a_nested_call_has_a_frame_per_module() -> None:
    gm = fx.symbolic_trace(_Root(_Block()))
    with recovered_statements(gm):
        trace = next(n for n in gm.graph.nodes if n.name == "block_attention_qkv").stack_trace or ""
    assert [code.strip() for code in _FRAME.findall(trace)] == [BLOCK, "qkv = self.qkv(x).reshape(b, t, 3, d).permute(2, 0, 1, 3)"]


RECORDED: list[tuple[str, Callable[[], fx.GraphModule]]] = [
    ("recorded_statements", lambda: fxexport.trace(_Root(_Block()))),
    ("no_module_calls", lambda: make_fx(lambda x: x.relu() + 1)(torch.randn(2))),
]


@pytest.mark.parametrize("make", [m for _, m in RECORDED], ids=[n for n, _ in RECORDED])
def test_a_graph_recording_statements_or_no_module_calls_is_kept(make: Callable[[], fx.GraphModule]) -> None:
    gm = make()
    traces = [n.stack_trace for n in gm.graph.nodes]
    with recovered_statements(gm) as recovered:
        assert not recovered and [n.stack_trace for n in gm.graph.nodes] == traces


def test_layer_statements_torch_export_recorded_keep_theirs_after_their_callers() -> None:
    """torch.export of a GraphModule a tracer of its own made records the statements its layers ran, none of
    the code between: each inferred call's nodes get its source's statements, a layer's before its own, and
    are as they were once the block ends."""
    gm = inferred_stacks(models.exported(models.stackless(models.FeatureNet), 2, 3, 8, 8)(), models.FeatureNet())
    traces = {n: n.stack_trace for n in gm.graph.nodes}
    reduce = next(n for n in gm.graph.nodes if n.stack_trace and "se.reduce" in str(n.meta.get("nn_module_stack")))
    with recovered_statements(gm) as recovered:
        frames = [code.strip() for code in _FRAME.findall(reduce.stack_trace or "")]
        assert recovered and frames[-2:] == ["s = self.expand(self.act(self.reduce(s)))", "return self._conv_forward(input, self.weight, self.bias)"]
    assert {n: n.stack_trace for n in gm.graph.nodes} == traces


def test_a_leaf_torch_export_recorded_keeps_its_statements_and_their_notes() -> None:
    """A module of the model's own class the tracer kept a leaf recorded its statements under torch.export:
    its nodes keep them (the block calling it, inferred, puts its frames first), and its class quotes them."""
    gm = inferred_stacks(models.leaf_norm_acts(), models.LeafNormActs())
    traces = {n: n.stack_trace for n in gm.graph.nodes if n.stack_trace and "LeafNormAct" in str(n.meta.get("nn_module_stack"))}
    within_blocks = [n for n in traces if "blocks." in str(n.meta.get("nn_module_stack"))]
    with recovered_statements(gm):
        assert traces and all((n.stack_trace or "").endswith(trace) for n, trace in traces.items())
        assert within_blocks and all("return x + self.bn(self.conv(x))" in (n.stack_trace or "") for n in within_blocks)
    _, sources = fxexport.generate(models.leaf_norm_acts(), package_name="leaves", classes_from=models.LeafNormActs())
    code = sources["module.py"]
    assert code.count("class LeafNormAct(") == 1 and "in forward: x = F.batch_norm(" in code.split("class LeafNormAct(")[1].split("class ")[0]


ATEN_KEYS = [  # an ATen operator, as the statement spells what it does, then what else it may have run as
    (torch.ops.aten.mul.Tensor, (("op", "Mult"), ("call", "mul"))),  # `x * y`, or `torch.mul(x, y)`
    (torch.ops.aten.add.Tensor, (("op", "Add"), ("call", "add"))),
    (torch.ops.aten.permute.default, (("call", "permute"),)),  # `x.permute(...)`
    (torch.ops.aten.layer_norm.default, (("call", "layer_norm"),)),  # `F.layer_norm(...)`
]


@pytest.mark.parametrize(("target", "keys"), ATEN_KEYS, ids=[str(t) for t, _ in ATEN_KEYS])
def test_an_aten_operator_is_matched_as_the_operator_or_function_it_ran_as(target: object, keys: tuple[tuple[str, ...], ...]) -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    assert keys_in(graph.call_function(target, (x, x)), "") == keys  # type: ignore[arg-type]


def test_the_export_writes_statements_as_the_source_and_quotes_none() -> None:
    _, sources = fxexport.generate(fx.symbolic_trace(_Root(_Block())), package_name="recovered")
    code = sources["module.py"]
    assert f"        {BLOCK}\n        {RETURN}\n" in code
    assert " in forward: " not in code


LOOPS = [  # a loop header, and the names it binds to children of the containers `convs` and `norms`
    ("for conv in self.convs:", {"conv": "convs"}),
    ("for i, conv in enumerate(self.convs):", {"conv": "convs"}),
    ("for norm in self.norms.values():", {"norm": "norms"}),
    ("for conv, norm in zip(self.convs, self.norms):", {"conv": "convs", "norm": "norms"}),
    ("for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):", {"conv": "convs", "norm": "norms"}),
    ("for conv, other in zip(self.convs, self.others):", {"conv": "convs"}),  # not a child
    ("for pair in zip(self.convs, self.norms):", {}),  # not unpacked
]


@pytest.mark.parametrize(("header", "names"), LOOPS, ids=[h for h, _ in LOOPS])
def test_a_loop_binds_names_to_the_children_it_iterates(header: str, names: dict[str, str]) -> None:
    loop = ast.parse(f"{header}\n    pass").body[0]
    assert isinstance(loop, ast.For) and _loop_names(loop, frozenset({"convs", "norms"})) == names
