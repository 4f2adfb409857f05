"""Source annotations: where each group of statements came from, never an absolute path."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch import nn

import fxexport
from fxexport.annotations import _class_line, _header, short_path, without_echoes
from tests import models
from tests.producers import PRODUCERS

ANNOTATED = ["export_mixed", "export_cond", "dynamo_mixed"]  # producers that record stack traces


@pytest.mark.parametrize("name", ANNOTATED)
def test_annotations_name_the_source_line(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    gm = next(p for p in PRODUCERS if p.name == name).build()
    annotated = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    plain = fxexport.generate(gm, package_name="pkg", annotate=False)[1]["module.py"]
    notes = re.findall(r"^ *# (\S+):(\d+) in (\w+)(?:: (.*))?$", annotated, re.MULTILINE)
    assert notes and all(file.startswith(("tests/", "torch/")) for file, *_ in notes), notes
    assert any(file == "tests/producers.py" and code for file, _, _, code in notes)
    assert str(Path.cwd()) not in annotated and "/work/" not in annotated
    assert not re.search(r"^ *# tests/", plain, re.MULTILINE)
    # without the source lines to follow, values go inside one statement only where neither is a layer call
    calls = lambda text: Counter(re.findall(r"(?:self\.[\w.]+|F\.\w+|torch\.[\w.]+|\.\w+)\(", re.sub(r"^ *#.*$", "", text, flags=re.M)))  # noqa: E731
    assert calls(annotated) == calls(plain)


def test_a_module_inside_one_of_its_own_class_names_its_own_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The innermost tree's statements quote its own lines, not the line of its caller (of the same class) that called it."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    model = models.Tree(2).eval()
    gm = torch.export.export(model, (torch.randn(2, 4),)).module()
    text = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    bodies = re.split(r"^class ", text, flags=re.MULTILINE)
    leaf = next(body for body in bodies if body.startswith("Tree") and "self.inner" not in body)
    quoted = re.findall(r"^ *# tests/models\.py:\d+ in forward: (.*)$", leaf, re.MULTILINE)
    own = {"y = self.lin(x)", "z = y.relu()", "return z + x"}  # its own lines, but the call of its inner tree
    assert quoted and set(quoted) <= own, quoted


INHERITED = [
    # (model, the forward of a generated class its source class inherits, or whose caller's class is a base of it)
    (models.TemplateModel, "class TemplateInner", "def forward(self, hidden, bias):"),  # not its caller's run of those lines
    (models.CallerBaseModel, "class CallerBaseBlock(", "def forward(self, hidden):"),  # not named after its caller's `scale`
    (models.SuperTemplateModel, "class TemplateInner", "def forward(self, hidden, bias):"),  # its caller runs it by `super()`
    (models.CrossFlagDecoder, "class CrossFlagDecoderLayer", "encoder_hidden_states,"),  # its base's lines are its own
]


@pytest.mark.parametrize(("model", "cls", "forward"), INHERITED, ids=lambda v: getattr(v, "__name__", None))
def test_a_module_runs_the_lines_of_the_forward_it_inherits_not_its_callers(model: type[nn.Module], cls: str, forward: str) -> None:
    torch.manual_seed(0)
    module = model().eval()
    args = tuple(torch.randn(2, 5, 16) if i < 2 else torch.zeros(2, 1, 5, 5) for i in range(4)) if model is models.CrossFlagDecoder else (torch.randn(2, 4), torch.randn(2, 4))
    gm = torch.export.export(module, args).module()
    text = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    body = text[text.index(cls) :].split("\nclass ")[0]
    assert forward in body, body


def test_paths_outside_known_roots_show_only_the_file_name() -> None:
    assert short_path("/somewhere/else/model.py") == "model.py"


def test_shape_comments_are_optional_and_black_stable() -> None:
    import fxexport.formatting as formatting

    gm = next(p for p in PRODUCERS if p.name == "export_dynamic").build()
    plain = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    shaped = fxexport.generate(gm, package_name="pkg", shapes=True)[1]["module.py"]
    assert "float32[" not in plain.split("def forward")[1].replace("expected a float32", "")
    assert re.search(r"= F.softmax\(.*  # float32\[s\d+\*s\d+, 6\]$", shaped, re.MULTILINE)
    assert formatting.format_source("module.py", shaped) == shaped


class _Decorated(nn.Module):
    def forward(self, x):
        return x


def _decorate(cls: type) -> type:
    return cls


@_decorate
class _DecoratedTop(nn.Module):
    """Decorated over one line: inspect counts the decorator in."""

    def forward(self, x):
        return x


def _source_classes() -> list[type]:
    found = [c for c in vars(models).values() if isinstance(c, type) and issubclass(c, nn.Module)]
    return found + [c for c in vars(nn).values() if isinstance(c, type) and issubclass(c, nn.Module)] + [_DecoratedTop]


@pytest.mark.parametrize("cls", _source_classes(), ids=lambda c: c.__qualname__)
def test_a_class_line_found_without_parsing_its_file_is_inspects(cls: type) -> None:
    quick = _class_line(cls)
    if quick is None:
        return  # inspect finds it (decorated, nested, no methods of its own)
    lines, line = inspect.getsourcelines(cls)
    assert quick == (inspect.getsourcefile(cls), line, _header(lines))


def test_decorated_and_nested_classes_are_left_to_inspect() -> None:
    assert _class_line(_DecoratedTop) is None and _class_line(nn.Container) is None  # nn.Container: three-line decorator
    nested = type("Nested", (nn.Module,), {"forward": _Decorated.forward, "__qualname__": "Outer.Nested"})
    assert _class_line(nested) is None


NOTE = "# models/net.py:12 in forward: y = self.lin(x)"
ECHOES = [  # (forward lines, the lines without_echoes keeps)
    ([NOTE, "y = self.lin(x)"], ["y = self.lin(x)"]),
    ([NOTE, "y = self.lin(x)", "del x"], ["y = self.lin(x)", "del x"]),  # a del does not count
    # nor does a return after it: no note quotes the method's result (timm's Mlp: `x = self.fc2(x)`, `return self.drop2(x)`)
    ([NOTE, "y = self.lin(x)", "del x", "return y"], ["y = self.lin(x)", "del x", "return y"]),
    ([NOTE, "y = self.lin(x)", "return y.relu()"], ["y = self.lin(x)", "return y.relu()"]),
    # nor a return written as an in-place operation, then the return (torch.export's `return y.add_(x)`)
    ([NOTE, "y = self.lin(x)", "y += x", "return y"], ["y = self.lin(x)", "y += x", "return y"]),
    ([NOTE, "y = self.lin(x)", "y += x", "return x"], [NOTE, "y = self.lin(x)", "y += x", "return x"]),  # another value returned
    ([NOTE, "return self.lin(x)"], [NOTE, "return self.lin(x)"]),  # its one statement a return, which reads otherwise
    ([NOTE, "z = self.lin(x)", "return z"], [NOTE, "z = self.lin(x)", "return z"]),  # the first statement differs
    ([NOTE, "y  =  self.lin( x )"], ["y  =  self.lin( x )"]),  # spacing aside
    ([NOTE, "y = self.lin(x) * 2"], [NOTE, "y = self.lin(x) * 2"]),  # the code differs from the line
    ([NOTE, "y = self.lin(x)", "z = y.relu()"], [NOTE, "y = self.lin(x)", "z = y.relu()"]),  # two statements
    ([NOTE, "for lin in self.lins:", "    y = self.lin(x)"], [NOTE, "for lin in self.lins:", "    y = self.lin(x)"]),
    ([NOTE, "y = self.lin(x)", "# models/net.py:13 in forward: return y", "return y"], ["y = self.lin(x)", "return y"]),
    (["# out: float32[2, 4]", "out = self.lin(x)"], ["# out: float32[2, 4]", "out = self.lin(x)"]),  # a shape comment is no note
    (["if self.lin is not None:", f"    {NOTE}", "    y = self.lin(x)", "else:", "    y = x"],
     ["if self.lin is not None:", "    y = self.lin(x)", "else:", "    y = x"]),  # inside a block: up to its end
    ([f"    {NOTE}", "    y = self.lin(x)", f"    {NOTE}", "    y = self.lin(x)"], ["    y = self.lin(x)", "    y = self.lin(x)"]),
    # a name kept under another after it does not count either (transformers' `residual = hidden_states`)
    ([NOTE, "y = self.lin(x)", "x = y", "return y.relu()"], ["y = self.lin(x)", "x = y", "return y.relu()"]),
    ([NOTE, "y = self.lin(x)", "x = y * 2"], [NOTE, "y = self.lin(x)", "x = y * 2"]),  # more than a name
    # the statement under the test of the optional child it calls (timm's `shortcut = self.downsample(shortcut)`)
    ([NOTE, "if self.lin is not None:", "    y = self.lin(x)", "return y"], ["if self.lin is not None:", "    y = self.lin(x)", "return y"]),
    ([NOTE, "if self.norm is not None:", "    y = self.lin(x)"], [NOTE, "if self.norm is not None:", "    y = self.lin(x)"]),  # another child's test
    ([NOTE, "if self.lin is not None:", "    y = self.lin(x)", "else:", "    y = x"],
     [NOTE, "if self.lin is not None:", "    y = self.lin(x)", "else:", "    y = x"]),  # an else too
    # a note the line before repeats (both branches' last statement, written once after them: mobileone by torch.export)
    (["if self.a is not None:", "    y = self.a(x)", "else:", "    y = x", NOTE.replace("self.lin(x)", "y * 2"), NOTE.replace("self.lin(x)", "y * 2"), "y = y.relu()"],
     ["if self.a is not None:", "    y = self.a(x)", "else:", "    y = x", NOTE.replace("self.lin(x)", "y * 2"), "y = y.relu()"]),
]


@pytest.mark.parametrize(("lines", "kept"), ECHOES)
def test_a_note_that_repeats_its_one_statement_is_left_out(lines: list[str], kept: list[str]) -> None:
    assert without_echoes(lines) == kept


def test_the_root_of_an_exported_graph_module_quotes_no_line_of_a_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.export of a GraphModule records no frame of the root's own code (fx wrote it): the outermost frame of
    a child's nodes is the child's own, which notes the child's statements, not the root's call of it."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    gm = models.exported(models.normed_stem_leaves, 2, 3, 8, 8)()
    source = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    root = source[source.index("class FxModule") :]
    assert "x = self.norm(x)" in root and "F.batch_norm(" not in root
    assert re.search(r"^ *# tests/models.py:\d+ in forward: x = F.batch_norm\($", source[: source.index("class FxModule")], re.MULTILINE)


def test_a_root_whose_class_runs_below_it_keeps_its_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ScaledResidual at the root and inside it: the root's own frames are in its class's code, which a node of the
    inner one starts in too; the graph records the root's code (helper-74's case), so the root keeps its names and
    statements (its return written as the source's line, which needs no note then)."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    gm = models.exported(models.nested_residuals, 2, 4, 8, 8)()
    source = fxexport.generate(gm, package_name="pkg")[1]["module.py"]
    root = source[source.index("class FxModule") :]
    assert re.search(r"^ *return x \+ y \* self.scale$", root, re.MULTILINE)
    assert re.search(r"^ *y = self.fn\(x\)$", root, re.MULTILINE)
