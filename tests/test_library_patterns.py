"""What real model zoos do, on small stand-ins (tests/library.py), exported and loaded without the library.

Each case is exported through symbolic_trace and torch.export where it can be, moved, and
checked in one fresh process where `tests.library` (like torchvision, timm or transformers
for a user who does not have them) cannot be imported.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import fx, nn

import fxexport
from tests import library
from tests.packages import imported
from tests.roundtrip import check_in_fresh_process, record

BLOCKED = ("tests.library",)


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(3))


def classifier() -> nn.Module:
    torch.manual_seed(0)
    model = library.Classifier().eval()
    model.training = True  # the root picks its output class by its flag; every layer stays in eval
    return model


def seeded(cls: type[nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        return cls().eval()

    return build


class BlockLeafTracer(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return isinstance(m, library.Block) or super().is_leaf_module(m, qualname)


def gate_graph() -> fx.GraphModule:
    """A hand-built graph whose call_function target is a library function, with a keyword."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(library.gate, (graph.call_module("lin", (x,)),), {"bias": 2.0}))
    torch.manual_seed(0)
    return fx.GraphModule({"lin": nn.Linear(4, 4)}, graph)


class WindowedLeafTracer(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return isinstance(m, library.Windowed) or super().is_leaf_module(m, qualname)


def copied_leaf() -> fx.GraphModule:
    """A library leaf fx cannot trace: its class is copied, its instance built part by part."""
    torch.manual_seed(0)
    root = library.WindowedNet().eval()
    return fx.GraphModule(root, WindowedLeafTracer().trace(root), "WindowedNet")


def block_leaf() -> fx.GraphModule:
    root = classifier()
    return fx.GraphModule(root, BlockLeafTracer().trace(root), "Classifier")


@dataclass(frozen=True)
class Pattern:
    name: str
    build: Callable[[], nn.Module]
    args: Callable[[], tuple[Any, ...]]


MODELS = [
    Pattern("classifier", classifier, lambda: (_x(3, 4),)),
    Pattern("encoder", seeded(library.Encoder), lambda: (torch.tensor([[1, 2, 3], [4, 5, 6]]),)),
    Pattern("detector", seeded(library.Detector), lambda: (_x(3, 4),)),
    Pattern("strided", seeded(library.Strided), lambda: (_x(2, 6),)),
]
GRAPHS = [
    Pattern("gate_graph", gate_graph, lambda: (_x(2, 4),)),
    Pattern("block_leaf", block_leaf, lambda: (_x(3, 4),)),
    Pattern("copied_leaf", copied_leaf, lambda: (_x(3, 4),)),
    Pattern("spec_graph", library.spec_graph, lambda: (_x(2, 4),)),
]
PRODUCERS: dict[str, Callable[[nn.Module, tuple[Any, ...]], fx.GraphModule]] = {
    "trace": lambda model, args: fx.symbolic_trace(model),
    "export": lambda model, args: torch.export.export(model, args).module(),
}
PAIRS = [(f"{p.name}_{producer}", p, producer) for p in MODELS for producer in PRODUCERS] + [(p.name, p, None) for p in GRAPHS]


def graph_of(pattern: Pattern, producer: str | None) -> fx.GraphModule:
    model = pattern.build()
    return model if producer is None else PRODUCERS[producer](model, pattern.args())  # type: ignore[return-value]


@dataclass(frozen=True)
class Exports:
    moved: Path
    expect: Path
    results: dict[str, fxexport.api.ExportResult]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Exports:
    staging, moved, expect = (tmp_path_factory.mktemp(n) for n in ("staging", "moved", "expect"))
    results = {}
    for name, pattern, producer in PAIRS:
        gm = graph_of(pattern, producer)
        results[name] = fxexport.export(gm, staging / name)
        shutil.move(str(staging / name), str(moved / name))
        record(name, gm, pattern.args(), {}, None, expect)
    return Exports(moved, expect, results)


@pytest.fixture(scope="module")
def report(exports: Exports) -> dict[str, list[str]]:
    return check_in_fresh_process(exports.moved, exports.expect, [name for name, _, _ in PAIRS], BLOCKED)


@pytest.mark.parametrize("name", [name for name, _, _ in PAIRS])
def test_loads_and_matches_without_the_library(name: str, report: dict[str, list[str]], exports: Exports) -> None:
    assert report[name] == []
    assert exports.results[name].warnings == ()  # nothing imported from the library


@pytest.mark.parametrize("name", ["classifier_trace", "gate_graph"])
def test_library_functions_are_copied_without_annotations(name: str, exports: Exports) -> None:
    text = (exports.moved / name / "module.py").read_text()
    copied = text[text.index("\ndef ") :].split("\nclass ")[0]  # the library functions, before the classes
    for absent in ("Optional", "Tuple", "Union", "LibraryConfig", "Tensor]", "-> ", "@fx.wrap", "# a comment"):
        assert absent not in copied, absent
    expected = {"classifier_trace": "def scaled_norm(x, scale=None, config=None):", "gate_graph": "def gate(x, *, bias=0.5):"}
    assert expected[name] in text


@pytest.mark.parametrize(
    "name, line",
    [("encoder_trace", "self.embed._is_hf_initialized = True"), ("spec_graph", "from torch._higher_order_ops.flat_apply import _ConstantFunction"),
     ("spec_graph", "torch.utils._pytree.treespec_loads(")],
)  # fmt: skip
def test_library_settings_and_graph_constants_are_code(name: str, line: str, exports: Exports) -> None:
    assert line in (exports.moved / name / "module.py").read_text()


def test_untraceable_library_layer_is_copied_with_its_bases(exports: Exports) -> None:
    text = (exports.moved / "copied_leaf" / "module.py").read_text()
    for line in ("class WindowBase(nn.Module):", "class Windowed(WindowBase):", "    PAD = 0.0", "    @staticmethod",
                 "    @property", "self.inner = Windowed(proj=nn.Linear(4, 4), scale=Scale(), window=3)", "class Scale(nn.Module):"):  # fmt: skip
        assert line in text, line
    assert "def __init__(self, width" not in text  # the library constructor is not copied


@pytest.mark.parametrize(
    "name, cls",
    [("classifier_trace", library.PairOutputs), ("classifier_export", library.PairOutputs), ("detector_trace", library.Detections),
     ("detector_export", library.Detections), ("encoder_export", library.EncoderOutput)],
)  # fmt: skip
def test_output_classes_are_the_library_classes_when_it_is_importable(name: str, cls: type, exports: Exports) -> None:
    pattern = next(p for n, p, _ in PAIRS if n == name)
    with imported(exports.moved / name) as package:
        out = package.FxModule()(*pattern.args())
    assert type(out) is cls


def _with_own_tensor() -> fx.GraphModule:
    gm = copied_leaf()
    gm.inner.register_parameter("gain", nn.Parameter(torch.ones(4)))
    return gm


def _with_members_named_self() -> fx.GraphModule:
    gm = copied_leaf()
    gm.inner.self = nn.Linear(2, 2)  # transformers' BertAttention holds its attention so
    vars(gm.inner)["members"] = 2
    return gm


def _with_unnamed_setting() -> fx.GraphModule:
    gm = copied_leaf()
    setattr(gm.inner, "two words", 1)  # a name no keyword argument can have
    return gm


@pytest.mark.parametrize(
    ("build", "lines"),
    [
        (copied_leaf, ["self.inner = Windowed(proj=nn.Linear(4, 4), scale=Scale(), window=3)"]),
        (_with_own_tensor, ["self.inner = Windowed()", "self.inner.proj = nn.Linear(4, 4)", "self.inner.gain = nn.Parameter(", "self.inner.window = 3"]),
        (_with_members_named_self, ["self.inner = Windowed(\n", "        self=nn.Linear(2, 2),\n", "        members=2,\n"]),
        (_with_unnamed_setting, ["self.inner = Windowed()", "self.inner.proj = nn.Linear(4, 4)", "setattr(self.inner, 'two words', 1)"]),
    ],
    ids=["given by keyword", "a tensor of its own: part by part", "members named self and members", "a setting with no plain name: part by part"],
)
def test_a_copied_instance_is_given_its_layers_and_settings_by_keyword_where_each_is_one_expression(
    build: Callable[[], fx.GraphModule], lines: list[str], tmp_path: Path
) -> None:
    gm = build()
    fxexport.export(gm, tmp_path / "copied_pkg")
    text = (tmp_path / "copied_pkg" / "module.py").read_text()
    assert all(line in text for line in lines), text
    with imported(tmp_path / "copied_pkg") as package:
        model = package.FxModule()
        x = _x(3, 4)
        assert list(model.state_dict()) == list(gm.state_dict())
        assert torch.equal(model(x), gm(x))
        assert vars(model.inner).get("window") == 3
