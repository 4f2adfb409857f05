"""The zoo's readability measures (readability.py) on hand-written module.py texts and one real export.

Runs under the main venv: no torchvision, timm or transformers needed.
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport import examples
from tests.zoo.readability import (
    Readability,
    SourceClass,
    call_nodes,
    graph_nodes,
    layer_paths,
    measure,
    read_code,
    source_classes,
)

FLAT = '''
class FxModule(nn.Module):
    def __init__(self, *, load_weights: bool = True) -> None:
        super().__init__()
        self.layer1 = nn.Module()
        self.layer1.add_module("0", nn.Module())
        getattr(self.layer1, "0").conv1 = nn.Conv2d(3, 3, 3)

    def forward(self, x):
        layer1_0_conv1 = getattr(self.layer1, "0").conv1(x)
        del x
        relu = torch.ops.aten.relu.default(layer1_0_conv1)
        del layer1_0_conv1
        add = torch.ops.aten.add.Tensor(relu, getattr(self, name))
        del relu
        return add


def load_tensors(module, weights=None):
    getattr(module, "weight")
    torch.ops.aten.add.Tensor(1, 2)
'''

STRUCTURED = '''
class BasicBlock(nn.Module):  # torchvision/models/resnet.py:59 BasicBlock
    def __init__(self, inplanes: int, planes: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)

    def forward(self, x):
        return F.relu(self.bn1(self.conv1(x)) + x)


class FxModule(nn.Module):  # torchvision/models/resnet.py:166 ResNet
    def __init__(self) -> None:
        super().__init__()
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))

    def forward(self, x):
        return self.layer1[0](x)
'''

BLOCK = SourceClass("BasicBlock", "BasicBlock", instances=2, lines=30)
RESNET = SourceClass("ResNet", "ResNet", instances=1, lines=100)


def readability(text: str, source: tuple[SourceClass, ...] = (BLOCK, RESNET), inline: int = 0) -> Readability:
    return Readability(10, read_code(textwrap.dedent(text)), source, inline)


def test_flat_output_counts_what_its_class_holds_and_not_the_loader() -> None:
    code = read_code(FLAT)
    assert [(c.name, c.comment, c.lines) for c in code.classes] == [("FxModule", "", 5 + 8)]
    assert code.string_getattrs == 2  # getattr(self, name) is not a literal; the loader's is not a class's
    assert code.torch_ops == 2
    assert code.dels == 3


def test_flat_output_fails_the_targets_on_a_model_with_repeated_blocks() -> None:
    r = readability(FLAT)
    assert r.found == 0 and r.class_lines == 13 and r.source_lines == 130
    assert r.targets() == "2 string getattr; BasicBlock: 0 classes"


def test_structured_output_finds_classes_by_name_and_by_class_line_comment() -> None:
    r = readability(STRUCTURED)
    assert [c.comment for c in r.code.classes] == ["# torchvision/models/resnet.py:59 BasicBlock",
                                                   "# torchvision/models/resnet.py:166 ResNet"]  # fmt: skip
    assert r.found == 2  # BasicBlock by name, ResNet by the comment on FxModule's class line
    assert r.class_lines == (4 + 2) + (3 + 2) and r.code.string_getattrs == 0 and r.code.dels == 0
    assert r.targets() == "ok"


def test_output_stand_ins_are_not_generated_classes() -> None:
    text = textwrap.dedent('''
        class OutputMapping(collections.OrderedDict):
            def __post_init__(self):
                getattr(self, "x")


        try:
            from transformers.modeling_outputs import BaseModelOutput
        except Exception:
            @dataclasses.dataclass
            class BaseModelOutput(OutputMapping):
                last_hidden_state: object = None
        ''') + FLAT
    code = read_code(text)
    assert [c.name for c in code.classes] == ["FxModule"]
    assert code.string_getattrs == 2  # FxModule's: the stand-ins are not generated classes


def test_a_sequential_subclass_is_a_generated_class() -> None:
    text = textwrap.dedent('''
        class ConvNormAct(nn.Sequential):  # models/layers.py:3 ConvNormAct
            pass
        ''') + FLAT
    code = read_code(text)
    assert [(c.name, c.comment, c.lines) for c in code.classes][0] == ("ConvNormAct", "# models/layers.py:3 ConvNormAct", 0)


def test_a_repeated_block_split_into_variants_fails_one_class_per_block() -> None:
    variants = STRUCTURED + "\n\nclass BasicBlock_1(nn.Module):\n    def forward(self, x):\n        return x\n"
    r = readability(variants)
    assert len(r.classes_of(BLOCK)) == 2
    assert r.targets() == "BasicBlock: 2 classes"


def test_a_repeated_block_the_graph_has_no_code_of_is_not_judged_but_named() -> None:
    depth = SourceClass("StochasticDepth", "StochasticDepth", instances=4, lines=20)
    r = Readability(10, read_code(textwrap.dedent(STRUCTURED)), (BLOCK, RESNET, depth), 0, ran=frozenset({"BasicBlock", "ResNet"}))
    assert r.targets() == "ok (StochasticDepth: no code in the graph)"
    recorded = Readability(10, read_code(textwrap.dedent(STRUCTURED)), (BLOCK, RESNET, depth), 0, ran=frozenset({"BasicBlock", "StochasticDepth"}))
    assert recorded.targets() == "StochasticDepth: 0 classes"  # it ran code, and no class holds it
    assert readability(STRUCTURED, (BLOCK, RESNET, depth)).targets() == "StochasticDepth: 0 classes"  # nothing known


def test_a_longer_source_name_is_not_a_variant_of_a_shorter_one() -> None:
    forward = "    def forward(self, x):\n        return x\n"
    text = f"class Block(nn.Module):\n{forward}\n\nclass BlockStack(nn.Module):\n{forward}"
    block, stack = SourceClass("Block", "Block", 4, 5), SourceClass("BlockStack", "BlockStack", 2, 5)
    r = readability(text, (block, stack))
    assert [c.name for c in r.classes_of(block)] == ["Block"]
    assert [c.name for c in r.classes_of(stack)] == ["BlockStack"]


def test_class_lines_over_the_source_lines_fail_and_models_without_repeated_blocks_are_not_judged() -> None:
    short = (SourceClass("BasicBlock", "BasicBlock", 2, 5), SourceClass("ResNet", "ResNet", 1, 4))
    assert readability(STRUCTURED, short).targets() == "class lines 1.22x > 1x"  # 11 lines for 9
    assert readability(FLAT, (RESNET,)).targets() == "n/a"


def test_inline_modules_come_from_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "module.py").write_text(STRUCTURED)
    manifest = {"modules": [], "inline_modules": [{"path": "layer1.0", "class": "BasicBlock", "reason": "data-dependent"},
                                                  {"path": "fc", "class": "Head", "reason": "x"}]}  # fmt: skip
    (tmp_path / "fxexport.json").write_text(json.dumps(manifest))
    assert measure(tmp_path, (BLOCK,), 7).inline_modules == 2
    (tmp_path / "fxexport.json").write_text(json.dumps({"modules": []}))
    assert measure(tmp_path, (BLOCK,), 7).inline_modules == 0  # absent: nothing left inline


def test_source_classes_are_the_eager_models_non_torch_classes_with_their_lines() -> None:
    found = {s.name: s for s in source_classes(examples.resnet())}
    assert set(found) == {"TinyResNet", "_Block"}
    assert found["_Block"].instances == 3 and found["TinyResNet"].instances == 1
    assert found["_Block"].lines == len(inspect.getsource(examples._Block).splitlines())


def test_a_feature_extractors_source_classes_are_its_eager_models_at_the_paths_it_ran() -> None:
    model = examples.resnet()
    graph = fx.symbolic_trace(model).graph
    last = next(n for n in graph.nodes if n.op == "call_module" and str(n.target).startswith("layers.1."))
    output = next(n for n in graph.nodes if n.op == "output")
    output.args = (last,)  # cut after the second block's first layer, as an extractor does
    graph.eliminate_dead_code()
    extractor = fx.GraphModule(model, graph)  # holds the leaf modules it calls, plain Modules above them
    assert {type(m).__name__ for m in extractor.modules()} & {"_Block", "TinyResNet"} == set()
    found = {s.name: s for s in source_classes(extractor, model)}
    assert set(found) == {"TinyResNet", "_Block"}
    assert found["_Block"].instances == 2  # blocks 0 and 1 ran, block 2 did not
    assert found["TinyResNet"].lines == len(inspect.getsource(examples.TinyResNet).splitlines())


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
def test_a_real_export_is_measured_from_its_folder(tmp_path: Path, producer: str) -> None:
    model, (x,) = examples.resnet(), examples.resnet_inputs()
    gm = fx.symbolic_trace(model) if producer == "symbolic_trace" else torch.export.export(model, (x,)).module()
    fxexport.export(gm, tmp_path / "pkg")
    r = measure(tmp_path / "pkg", source_classes(model), graph_nodes(gm), call_nodes(gm), layer_paths(model, gm))
    assert r.graph_nodes == len(gm.graph.nodes) > 20
    assert r.layers[0] == r.layers[1] == sum(1 for m in model.modules() if type(m) in (nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.AdaptiveAvgPool2d, nn.Linear))
    module = (tmp_path / "pkg" / "module.py").read_text()
    assert len(r.code.classes) == module.count("\nclass ") >= 1
    manifest = json.loads((tmp_path / "pkg" / "fxexport.json").read_text())
    assert r.code.dels == len(re.findall(r"^ +del ", module, re.MULTILINE))
    assert r.inline_modules == len(manifest["inline_modules"])
    assert r.code.torch_ops == module.count("torch.ops.") == 0  # ATen calls raised to the public torch API
    assert r.source_lines == sum(len(inspect.getsource(c).splitlines()) for c in (examples._Block, examples.TinyResNet))
    assert r.found == 1 and r.code.string_getattrs == 0  # _Block became the generated class Block
    assert "Block" in {c.name for c in r.code.classes}
