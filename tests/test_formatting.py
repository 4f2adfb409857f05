"""Formatting: what fxexport writes is exactly what black writes, and black runs only where it changes something."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
import fxexport.formatting as formatting
from fxexport.render import environment
from tests import models
from tests.cases import CASES
from tests.producers import PRODUCERS
from tests.test_hostile_names import HOSTILE

ALL = [(c.name, c.build) for c in CASES] + [(p.name, p.build) for p in PRODUCERS if p.name not in {c.name for c in CASES}]
REPO = Path(__file__).resolve().parent.parent


def _hostile_graph() -> fx.GraphModule:
    root = nn.Module()
    graph = fx.Graph()
    x = graph.placeholder("x")
    for index, name in enumerate(HOSTILE):
        if name.isidentifier() or '"' in name or "\\" in name or not name.isprintable():
            continue
        root.register_buffer(name, torch.full((3,), float(index)))
        x = graph.call_function(torch.add, (x, graph.get_attr(name)))
    graph.output(graph.call_method("sum", (x,), {"dim": -1, "keepdim": True}))
    return fx.GraphModule(root, graph)


def _wide_names() -> fx.GraphModule:
    """Names of double-width characters: a line of 84 characters is 88 columns wide for black."""
    graph = fx.Graph()
    graph.output(graph.placeholder("x"))
    gm = fx.GraphModule(nn.Module(), graph)
    gm.add_module("日本", nn.Module())
    gm.get_submodule("日本").register_parameter("日本", nn.Parameter(torch.arange(3.0)))
    return gm


class _Crop(nn.Module):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, : self.size].clamp(min=-3.4e38)


class _Crops(nn.Module):
    """Two crops of other sizes share a class whose slice bound is `self.size`, which black spaces
    (`x[:, : self.size]`), and a float black writes without a `+` (`-3.4e38`)."""

    def __init__(self) -> None:
        super().__init__()
        self.small, self.large = _Crop(1), _Crop(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.small(x).sum() + self.large(x).sum()


class _LengthCrop(nn.ModuleList):
    """Crops by its number of children, bounds on each side and a step: `len(self)` in the shared class."""

    def __init__(self, count: int) -> None:
        super().__init__(nn.Linear(4, 4) for _ in range(count))
        self.count = count

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.stack([m(x) for m in self]).sum(0)
        return x[:, : self.count] + x[:, self.count :][:, : self.count] + x[:, :: self.count][:, : self.count]


class _LengthCrops(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.small, self.large = _LengthCrop(2), _LengthCrop(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.small(x).sum() + self.large(x).sum()


class _LeafCrops(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return False


OTHERS = [("hostile", _hostile_graph), ("wide_names", _wide_names),
          ("crops", lambda: fx.GraphModule(_Crops(), _LeafCrops().trace(_Crops()))),
          ("length_crops", lambda: fx.symbolic_trace(_LengthCrops()))]  # fmt: skip


@pytest.mark.parametrize("name,build", ALL + OTHERS, ids=[n for n, _ in ALL + OTHERS])
def test_written_code_is_what_black_writes(name: str, build) -> None:
    _, files = fxexport.generate(build(), package_name="pkg")
    assert {p: t for p, t in files.items() if p.endswith(".py")} == formatting.black_everything({p: t for p, t in files.items() if p.endswith(".py")})


def test_the_loader_text_is_kept_in_blacks_style() -> None:
    marker = "{{ codes.safetensors_dtypes }}"
    template = (REPO / "templates" / "loader.py.jinja").read_text()
    assert template.count(marker) == 1
    text = environment().get_template("loader.py.jinja").render(codes={"safetensors_dtypes": "{}"})
    assert formatting.format_source("loader.py", text) == text
    too_long = [line for line in text.splitlines() if len(line) > formatting.LINE_LENGTH and not line.lstrip().startswith("#")]
    assert too_long == []  # else every export would send it to black


def test_black_sees_only_statements_too_long_for_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = formatting.format_source

    def counting(path: str, source: str) -> str:
        seen.append(source)
        return real(path, source)

    monkeypatch.setattr(formatting, "format_source", counting)
    fxexport.generate(fx.symbolic_trace(nn.Sequential(nn.Linear(2, 3), nn.ReLU())), package_name="pkg")
    assert seen == []
    _, files = fxexport.generate(fx.symbolic_trace(models.TracedNorms().eval()), package_name="pkg")  # the training rule, written as black writes it
    assert seen == [] and "module.training = True" in files["module.py"]
    wide = OrderedDict([("étage", nn.Conv2d(3, 3, 3, stride=2, padding=1, dilation=1, groups=1, bias=False, padding_mode="reflect"))])
    long = nn.Sequential(wide)  # a wide character: wrapping.py leaves the statement to black
    _, files = fxexport.generate(fx.symbolic_trace(long), package_name="pkg")
    assert len(seen) == 1 and seen[0].count("# fxexport: split") == 1 and "load_tensors" not in seen[0]
    assert files["module.py"] == real("module.py", files["module.py"])


class _LongConstructor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, stride=2, padding=1, dilation=1, groups=1, bias=False, padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class _LongBuffer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("a_buffer_whose_name_is_long_enough_to_need_wrapping_by_itself", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.a_buffer_whose_name_is_long_enough_to_need_wrapping_by_itself


class _RunOfWideLayers(nn.Module):
    """Children built alike, each too wide for the comprehension's line: `*[nn.Sequential(...) for _ in range(3)]` split."""

    def __init__(self) -> None:
        super().__init__()
        layer = lambda: nn.Sequential(nn.Conv2d(64, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64, eps=1e-06), nn.ReLU())  # noqa: E731
        self.layers = nn.Sequential(*[layer() for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def _quantized() -> fx.GraphModule:
    from tests import quantized

    return quantized.golden_fx()


WRAPPED = [  # (model, a wrapped line module.py must hold): statements wrapping.py wraps, so black is never imported
    (lambda: fx.symbolic_trace(_LongConstructor()), "self.conv = nn.Conv2d(\n"),
    (lambda: fx.symbolic_trace(_LongBuffer()), "self.register_buffer(\n"),
    (_quantized, "PACKED_WEIGHTS = {\n"),  # module-level tables and long register_buffer lines
    (lambda: fx.symbolic_trace(_RunOfWideLayers()), "            for _ in range(3)\n"),  # a comprehension split before its `for`
]


@pytest.mark.parametrize("build,wrapped", WRAPPED)
def test_long_statements_are_wrapped_without_black(monkeypatch: pytest.MonkeyPatch, build: Callable[[], fx.GraphModule], wrapped: str) -> None:
    seen: list[str] = []
    real = formatting.format_source
    monkeypatch.setattr(formatting, "format_source", lambda path, source: seen.append(source) or real(path, source))
    _, files = fxexport.generate(build(), package_name="pkg")
    assert wrapped in files["module.py"] and seen == []
    assert files["module.py"] == real("module.py", files["module.py"])


class _ATracerWhoseNameMakesTheProducerLineOfTheModuleDocstringLongerThanBlackAllows(fx.Tracer):
    pass


def test_a_long_docstring_line_needs_no_black(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = formatting.format_source
    monkeypatch.setattr(formatting, "format_source", lambda path, source: seen.append(source) or real(path, source))
    model = nn.Linear(2, 3)
    traced = fx.GraphModule(model, _ATracerWhoseNameMakesTheProducerLineOfTheModuleDocstringLongerThanBlackAllows().trace(model))
    _, files = fxexport.generate(traced, package_name="pkg")
    assert max(len(line) for line in files["module.py"].split('"""')[1].splitlines()) > formatting.LINE_LENGTH
    assert seen == [] and files["module.py"] == real("module.py", files["module.py"])


WORDS = " ".join(["word"] * 25)
DOCSTRINGS = [  # (source in black's style but for its length, whether black must see it)
    (f'"""Doc.\n\n{WORDS}\n"""\n', False),
    (f'def f():\n    """Doc.\n\n    {WORDS}\n    """\n', False),
    (f'"""Doc.\n\n{WORDS}"""\n', True),  # black moves closing quotes off a long last line
    (f'x = """{WORDS}"""\n', True),  # not a lone string
]


@pytest.mark.parametrize("source,black", DOCSTRINGS)
def test_only_a_docstring_that_black_keeps_skips_black(monkeypatch: pytest.MonkeyPatch, source: str, black: bool) -> None:
    seen: list[str] = []
    real = formatting.format_source
    monkeypatch.setattr(formatting, "format_source", lambda path, text: seen.append(text) or real(path, text))
    assert formatting.format_python("m.py", source) == real("m.py", source)
    assert bool(seen) == black
