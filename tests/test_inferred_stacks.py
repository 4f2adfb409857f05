"""Module calls inferred for a graph that recorded none (inferred_stacks.py): which holder each node ran in."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.calls import body_nodes
from fxexport.collect import collect
from fxexport.errors import FxExportError
from fxexport.inferred_stacks import SEQUENTIAL, class_named, inferred_stacks, owner_paths
from tests import models
from tests.cases import CASES_BY_NAME, traced
from tests.packages import imported


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], fx.GraphModule]
    owners: dict[str, str]  # node name -> the holder it ran in ("" for the root)
    calls: dict[str, str]  # holder path -> its recorded class (SEQUENTIAL, or the name of an inferred one)
    not_calls: tuple[str, ...]  # holders that ran no call of their own
    classes: tuple[str, ...]  # the generated classes of the structured export, the root's aside
    root_line: str = ""  # a line of the root's forward
    source: Callable[[], nn.Module] | None = None  # the model the graph was captured from (`classes_from`)
    named: tuple[str, ...] = ()  # the generated classes, named after the source model's
    shape: tuple[int, ...] = ()  # the input's
    exported: bool = False  # captured by torch.export (else symbolic_trace)
    source_lines: tuple[str, ...] = ()  # with `source`: lines of the named classes written as their forwards write them
    source_owners: dict[str, str] | None = None  # with `source`: the holder nodes run in where its classes say so


CASES = [
    Case(
        "feature_net",
        models.stackless(models.FeatureNet),
        owners={
            "mean": "stages.0.0.se",  # an SE's head: it feeds the SE's first layer alone
            "mul": "stages.0.0.se",  # its tail: it reads what the SE made and what the SE reads
            "add": "stages.0.0",  # the block's residual: `x` is no value the SE reads
            "add_4": "mixers.0",  # a mixer's residual
            "add_5": "",  # the root's `+ self.pos` between two mixers
            "flatten": "",  # the root's, between two holders' runs
        },
        calls={"stem": SEQUENTIAL, "stages.0": SEQUENTIAL, "stages.1.0.down": SEQUENTIAL, "stages.0.0": "Stage", "stages.0.0.se": "Se", "mixers.0": "Mixer"},
        not_calls=(
            "stages",  # its first stage's result is an output too: no chain
            "heads",  # two heads read one value: no chain
            "mixers",  # the root reads its tensor between them
        ),
        classes=("Mixer", "Se", "Stage"),
        root_line="x = self.stem(x)",
        source=models.FeatureNet,
        named=("Mixer", "SEBlock", "SqueezeExcite"),
        shape=(2, 3, 8, 8),
        source_lines=("out = self.relu(self.bn1(self.conv1(x)))", "s = x.mean((2, 3), keepdim=True)", "return x + self.fc2(self.act(self.fc1(x)))"),
    ),
    Case(
        "blocks_on_the_graph_input",
        models.stackless(models.GatedStages),
        owners={"mul": "stages.0.0.se", "add": "stages.0.0"},  # the first block's `x +` reads the graph's input, which its gate does not read
        calls={"stages": SEQUENTIAL, "stages.0": SEQUENTIAL, "stages.0.0": "Stage", "stages.0.0.se": "Se"},
        not_calls=(),
        classes=("Se", "Stage"),
        root_line="return self.stages(x)",
        source=models.GatedStages,
        named=("GatedBlock", "GatedLinear"),
        shape=(2, 4),
        source_lines=("return x * self.b(self.a(x.mean(0, keepdim=True))).sigmoid()", "return x + self.se(self.fc(x))"),
    ),
    Case(
        "split_blocks_and_a_permuting_norm",
        models.stackless(models.NormedSplitStages),
        owners={  # without the source's classes, code reading what the run before made is the caller's:
            "chunk": "",  # the split blocks' splits (read by their `x +` too), and ...
            "chunk_1": "",
            "permute": "",  # ... the norm's first `permute`, and code reading the norm's result alone after it
            "permute_1": "",
        },
        calls={"blocks.0": "Block", "blocks.1": "Block", "blocks.2": "Block"},  # the recorded name; the classes are told apart later
        not_calls=("blocks", "down", "down.0"),  # code of their caller's between their children
        classes=("Block", "BlockWithConvProj"),
        root_line="x = self.blocks[0](x)",
        source=models.NormedSplitStages,
        named=("ChannelsLastNorm", "ConvResidual", "SplitBlock"),
        shape=(2, 3, 8, 8),
        source_lines=("return x.permute(0, 3, 1, 2)", "return x + self.proj(out)"),
        # their forwards split first (the first block's none: the split blocks' heads are their own all the same),
        # and permute first and last: a Sequential of blocks, one of norm and convolution
        source_owners={"chunk": "blocks.1", "chunk_1": "blocks.2", "permute": "down.0", "permute_1": "down.0", "down_1": "down"},
    ),
    Case(
        "caller_code_a_block_runs_where_set",
        models.stackless(models.DoubledBetween),
        owners={"mul": "", "transpose": ""},
        calls={"blocks.0": "Block", "blocks.1": "Block"},
        not_calls=("blocks",),
        classes=("Block",),
        root_line="x = x * 2",
        source=models.DoubledBetween,
        named=("MaybeDoubled",),
        shape=(4, 4),
        source_lines=("return x + self.out(self.fc(x))",),
        # the blocks' forward doubles first and transposes last under `if self.scale:`, which these skip: the caller's
        source_owners={"mul": "", "transpose": ""},
    ),
    # a layer scale's `* gamma` after the block's last layer, then its second residual reading its first:
    # the block's tail, though the first residual is read after the run (timm's MetaFormer blocks)
    # (its layer scale's run, the tensor's `view` alone, reads no value: no class called with none, source or not)
    Case("layer_scaled_blocks", models.stackless(models.LayerScaledBlocks), owners={"mul": "blocks.0", "add_1": "blocks.0", "view": "blocks.0"},
         calls={"blocks": SEQUENTIAL, "blocks.0": "Block", "blocks.1": "Block"}, not_calls=("blocks.0.layer_scale",), classes=("Block",),
         root_line="x = self.blocks(x)", source=models.LayerScaledBlocks, named=("LayerScaledBlock",), shape=(2, 4),
         source_lines=("x = x + self.fc1(x)",), source_owners={"mul": "blocks.0", "add_1": "blocks.0", "view": "blocks.0"}),  # fmt: skip
    Case("exported_layer_scaled_blocks", models.exported(models.stackless(models.LayerScaledBlocks), 2, 4),
         owners={"mul": "blocks.0", "add_1": "blocks.0"}, calls={"blocks": SEQUENTIAL, "blocks.0": "Block", "blocks.1": "Block"},
         not_calls=(), classes=("Block",), root_line="x = self.blocks(x)", source=models.LayerScaledBlocks,
         named=("LayerScaledBlock",), shape=(2, 4), exported=True, source_lines=("x = x + self.fc1(x)",)),  # fmt: skip
    # a downsampling module whose norm (an nn.Identity) torch.export records no call of: a run of one call, a
    # holder (`self.downsample.conv(x)`), but of a source class called on a value where the source is known
    Case("exported_one_call_runs", models.exported(models.stackless(models.NormedDownStages), 2, 4, 8, 8), owners={"conv2d_4": "stages.1"},
         calls={"stages.0": "Stage", "stages.1": "Stage"}, not_calls=("stages.1.downsample",), classes=("Block", "Stage", "StageWithDownsample"),
         root_line="return self.stages(x)", source=models.NormedDownStages, named=("ConvResidual", "NormedDown", "NormedDownStage"), shape=(2, 4, 8, 8),
         exported=True, source_lines=("return self.conv(x)",), source_owners={"conv2d_4": "stages.1.downsample"}),  # fmt: skip
    # the next block's `x * torch.sigmoid(x)` reads the block before's result twice: no tail of that block,
    # and the head of its own where its source starts with it
    Case("heads_their_source_starts_with", models.stackless(models.SiluGatedBlocks),
         owners={"sigmoid": "", "mul": "", "sigmoid_1": "", "mul_1": ""}, calls={"blocks.0": "Block", "blocks.1": "Block"},
         not_calls=("blocks",), classes=("Block",), root_line="for block in self.blocks:", source=models.SiluGatedBlocks,
         named=("SiluGated",), shape=(2, 4), source_lines=("x = x * torch.sigmoid(x)",),
         source_owners={"sigmoid": "blocks.0", "mul": "blocks.0", "sigmoid_1": "blocks.1", "mul_1": "blocks.1"}),  # fmt: skip
    # a caller combining a block's two results (`a * 2 + b`): the block's result is not one value
    Case("results_combined_by_the_caller", models.stackless(models.TwoResultsCaller),
         owners={"mul": "", "add": "", "mul_1": "", "add_1": ""}, calls={"blocks.0": "Block", "blocks.1": "Block"},
         not_calls=("blocks",), classes=(), root_line="x = x * 2", source=models.TwoResultsCaller, named=("TwoResults",),
         shape=(2, 4), source_lines=("return (x, self.fc2(x))",), source_owners={"mul": "", "add": "", "mul_1": "", "add_1": ""}),  # fmt: skip
    # a holder called twice: its first layer met again in its run, its caller's code between the calls
    Case("called_twice", models.stackless(models.CalledTwice), owners={"sigmoid": ""}, calls={}, not_calls=("blk",), classes=()),
    # the caller's `* 2` after a block reads none of the block's inputs: no tail, and no chain of blocks
    Case("caller_code_between_blocks", models.stackless(models.ScaledBetween), owners={"mul": "", "relu": "blocks.0"},
         calls={"blocks.0": "Block"}, not_calls=("blocks",), classes=("Block",), root_line="x = self.blocks[0](x)"),  # fmt: skip
    # code that feeds a holder's run alone is its head, whoever wrote it: here the caller's (a limit of inferring;
    # the same shape as a LayerNorm2d's `permute` before its `layer_norm`)
    Case("caller_code_reading_a_holder", models.stackless(models.RootReadsHolder), owners={"relu": "norm", "mul": "norm", "fc": ""},
         calls={"norm": "Norm"}, not_calls=(), classes=("Norm",), root_line="return self.fc(x)"),  # fmt: skip
    # a holder whose run is one call of its child: a class would only pass it on
    Case("one_call_holder", models.dict_root, owners={}, calls={}, not_calls=("blocks",), classes=()),
    Case("recorded_calls", CASES_BY_NAME.resnet_like.build, owners={}, calls={}, not_calls=(), classes=()),
    # torch.export of such a graph records the layers' calls, not the holders': those are inferred around them
    Case(
        "exported_feature_net",
        models.exported(models.stackless(models.FeatureNet), 2, 3, 8, 8),
        owners={"mean": "stages.0.0.se", "mul": "stages.0.0.se", "add": "stages.0.0", "add_4": "mixers.0", "add_5": "", "flatten": ""},
        calls={"stem": SEQUENTIAL, "stages.0": SEQUENTIAL, "stages.1.0.down": SEQUENTIAL, "stages.0.0": "Stage", "stages.0.0.se": "Se", "mixers.0": "Mixer"},
        not_calls=("stages", "heads", "mixers"),  # as unexported
        classes=("Mixer", "Se", "Stage"),
        root_line="x = self.stem(x)",
        source=models.FeatureNet,
        named=("Mixer", "SEBlock", "SqueezeExcite"),
        shape=(2, 3, 8, 8),
        exported=True,
        # its layers' nodes record their own statements, the code between them none: recovered all the same
        source_lines=("s = self.reduce(s)", "return x + self.fc2(self.act(self.fc1(x)))"),
    ),
    Case("exported_blocks_on_the_graph_input", models.exported(models.stackless(models.GatedStages), 2, 4),
         owners={"mul": "stages.0.0.se", "add": "stages.0.0"}, calls={"stages": SEQUENTIAL, "stages.0": SEQUENTIAL, "stages.0.0": "Stage"},
         not_calls=(), classes=("Se", "Stage"), root_line="return self.stages(x)"),  # fmt: skip
    # a holder whose run is one call of a leaf of several ops (its nodes all recorded in that call): no class
    Case("exported_one_call_holder", models.exported(models.normed_head_leaves, 2, 3, 8, 8), owners={}, calls={}, not_calls=("head",), classes=()),
    # an exported model whose root calls a ModuleDict's children itself: its own code recorded (stack traces), so
    # every call it made is, and no holder is inferred; nor in an export of a graph that recorded its calls
    Case("exported_recorded_calls", models.exported(models.ResNetLike, 2, 3, 8, 8), owners={}, calls={}, not_calls=("head",), classes=()),
    Case("exported_traced_calls", models.exported(CASES_BY_NAME.resnet_like.build, 2, 3, 8, 8), owners={}, calls={}, not_calls=("head",), classes=()),
    Case("no_holders", traced(models.MLP), owners={}, calls={}, not_calls=(), classes=()),
]


def _without_stacks(build: Callable[[], fx.GraphModule]) -> fx.GraphModule:
    gm = build()
    for node in gm.graph.nodes:
        node.meta.pop("nn_module_stack", None)
    return gm


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


def _stacks(gm: fx.GraphModule) -> dict[str, dict[str, tuple[str, object]]]:
    return {n.name: dict(n.meta.get("nn_module_stack") or {}) for n in gm.graph.nodes}


def test_each_node_runs_in_the_holder_whose_run_it_belongs_to(case: Case) -> None:
    gm = case.build()
    modules = dict(gm.named_modules(remove_duplicate=False))
    owners, _ = owner_paths(body_nodes(gm), modules)
    by_name = {n.name: path for n, path in owners.items()}
    assert {name: by_name.get(name, "") for name in case.owners} == case.owners


@pytest.mark.parametrize("case", [c for c in CASES if c.source_owners], ids=[c.name for c in CASES if c.source_owners])
def test_code_the_source_class_starts_or_ends_with_runs_in_its_holder(case: Case) -> None:
    """With the source model (`classes_from`), code just before or after a holder's run that the forward of
    the class held there starts or ends with is the holder's, whatever it reads (a LayerNorm2d's permutes)."""
    assert case.source is not None and case.source_owners is not None
    gm = case.build()
    owners, _ = owner_paths(body_nodes(gm), dict(gm.named_modules(remove_duplicate=False)), case.source())
    by_name = {n.name: path for n, path in owners.items()}
    assert {name: by_name.get(name, "") for name in case.source_owners} == case.source_owners


def test_holders_that_ran_as_calls_are_recorded_with_their_class(case: Case) -> None:
    gm = case.build()
    inferred = inferred_stacks(gm)
    recorded = {path: cls for stack in _stacks(inferred).values() for path, cls in stack.values() if isinstance(cls, str)}
    names = {path: cls if cls == SEQUENTIAL else cls.rpartition(".")[2] for path, cls in recorded.items()}
    assert {path: names.get(path) for path in case.calls} == case.calls
    assert not set(case.not_calls) & set(names)


def test_a_graph_that_recorded_calls_or_holds_no_holder_is_left_as_it_is(case: Case) -> None:
    gm = case.build()
    inferred = inferred_stacks(gm)
    assert (inferred is gm) == (not case.calls)


def test_the_input_graph_is_not_changed(case: Case) -> None:
    gm = case.build()
    before = _stacks(gm)
    inferred_stacks(gm)
    assert _stacks(gm) == before


def test_the_structured_export_has_a_class_per_inferred_block(case: Case) -> None:
    gm = case.build()
    package = collect(gm, module_name="pkg")
    generated = sorted(c.name for c in package.classes if not c.is_root)
    if case.calls:
        assert generated == sorted(case.classes)
        root = next(c for c in package.classes if c.is_root)
        assert case.root_line in root.forward_lines
        assert not any("getattr(" in line for c in package.classes for line in c.forward_lines)


NAMED = [c for c in CASES if c.source is not None]


@pytest.mark.parametrize("case", NAMED, ids=[c.name for c in NAMED])
def test_holders_are_named_after_the_classes_of_the_model_the_graph_came_from(case: Case) -> None:
    """`classes_from`: each inferred class takes the name of the class the source model holds there, says
    where that class is defined, and writes the statements that class's forward writes, with its names
    (recovered_statements.py), where the graph records none (torch.export's records only the layers')."""
    assert case.source is not None
    package = collect(case.build(), module_name="pkg", classes_from=case.source())
    generated = [c for c in package.classes if not c.is_root]
    assert sorted(c.name for c in generated) == sorted(case.named)
    for cls in generated:
        assert re.fullmatch(rf"# tests/models\.py:\d+ {cls.name}", cls.comment), cls.comment
    unnamed = collect(case.build(), module_name="pkg")
    assert case.source_lines and set(case.source_lines) <= {line for c in generated for line in c.forward_lines}
    assert not set(case.source_lines) & {line for c in unnamed.classes for line in c.forward_lines}
    assert not package.warnings


@pytest.mark.parametrize("case", NAMED, ids=[c.name for c in NAMED])
def test_a_named_export_computes_the_same_bits_and_is_a_fixed_point(case: Case, tmp_path: Path) -> None:
    """The classes named after the source's are classes of the export: traced again, they are recorded, so
    the export of the export is the same module.py (its producer line aside)."""
    assert case.source is not None
    x = torch.randn(*case.shape, generator=torch.Generator().manual_seed(1))
    first, again = _exported_twice(case.build(), case.source(), (x,), tmp_path, case.exported)
    assert first == again


def _exported_twice(gm: fx.GraphModule, source: nn.Module, args: tuple[torch.Tensor, ...], folder: Path, exported: bool = False) -> tuple[list[str], list[str]]:
    """module.py (its producer line aside) of `gm`'s export with `classes_from=source`, and of that export's,
    captured again as `gm` was; the package checked bit for bit against `gm` first."""
    fxexport.export(gm, folder / "named_pkg", classes_from=source, bytecode=False)
    with imported(folder / "named_pkg") as package:
        model = package.FxModule()
        assert _same_bits(model(*args), gm(*args))
        again = torch.export.export(model, args).module() if exported else fx.symbolic_trace(model)
        fxexport.export(again, folder / "again_pkg", bytecode=False)
    texts = ((folder / name / "module.py").read_text().splitlines() for name in ("named_pkg", "again_pkg"))
    first, second = ([line for line in text if not line.startswith("Producer: ")] for text in texts)
    return first, second


def test_modules_of_one_class_that_ran_different_code_merge_into_a_fixed_point(tmp_path: Path) -> None:
    """An attention class run as self- and as cross-attention, its calls inferred, merges into one class; its
    locals take the source forward's names (recovered_statements.py), as in the export of the export, so
    both branch alike."""
    args = (torch.randn(1, 6, 16), torch.randn(1, 5, 16), torch.ones(5, 5, dtype=torch.bool).tril())
    first, again = _exported_twice(models.stackless(models.EncoderDecoder)(), models.EncoderDecoder(), args, tmp_path)
    assert first == again


REDEFINED = """
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        {body}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x)
"""


def test_a_source_class_defined_again_is_read_as_it_is_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's class defined again under the same name in one process (a notebook cell run again): each
    export reads the statements of the class its model holds."""
    monkeypatch.syspath_prepend(str(tmp_path))
    bodies = ["return x + self.fc2(self.fc1(x))", "hidden = self.fc1(x)\n        return x + self.fc2(hidden)"]
    for body in bodies:
        (tmp_path / "redefined_blocks.py").write_text(REDEFINED.format(body=body))
        monkeypatch.delitem(sys.modules, "redefined_blocks", raising=False)
        model = importlib.import_module("redefined_blocks").Net()
        _, sources = fxexport.generate(models.stackless(lambda model=model: model)(), package_name="redefined", classes_from=model)
        assert f"        {body}\n" in sources["module.py"]


def _same_bits(got: object, want: object) -> bool:
    leaves = torch.utils._pytree.tree_leaves
    return all(torch.equal(a, b) for a, b in zip(leaves(got), leaves(want), strict=True))


@pytest.mark.parametrize("source", [models.MLP, models.GatedStages], ids=["other_children", "other_paths"])
def test_a_model_that_holds_other_modules_there_names_nothing(source: Callable[[], nn.Module]) -> None:
    """A holder is named after the source model's class only where that module holds every child and tensor
    the holder does: another model's classes name nothing."""
    package = collect(models.stackless(models.FeatureNet)(), module_name="pkg", classes_from=source())
    assert sorted(c.name for c in package.classes if not c.is_root) == ["Mixer", "Se", "Stage"]
    assert not any(c.comment for c in package.classes)
    assert package.warnings == (f"classes_from named no class: the graph records the class of each module it calls, or the {source.__name__} "
                                "given holds other modules where it infers the calls (pass the model the graph was captured from)",)  # fmt: skip


def test_a_plain_tensor_attribute_of_the_source_class_does_not_stop_its_name() -> None:
    """fx registers a plain tensor attribute a forward reads as a buffer of its holder: the source module
    holds it as an attribute, and still names the holder."""
    package = collect(models.stackless(models.PlainMaskStages)(), module_name="pkg", classes_from=models.PlainMaskStages())
    assert sorted(c.name for c in package.classes if not c.is_root) == ["PlainMaskBlock"]


def test_a_class_defined_in_a_function_names_its_holders_and_says_where(tmp_path: Path) -> None:
    """The class the model holds is kept, not imported again by name: one defined in a function names too,
    and its comment (`make.<locals>.Gate`) is kept by the export of the export."""

    class LocalGate(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return x * self.fc(x).sigmoid()

    class Gated(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gates = nn.ModuleList([LocalGate(), LocalGate()])

        def forward(self, x):
            return self.gates[1](self.gates[0](x).relu())

    package = collect(models.stackless(Gated)(), module_name="pkg", classes_from=Gated())
    (gate,) = [c for c in package.classes if not c.is_root]
    assert gate.name == "LocalGate"
    assert re.fullmatch(r"# tests/test_inferred_stacks\.py:\d+ test_a_class_defined_in_a_function_names_its_holders_and_says_where\.<locals>\.LocalGate", gate.comment)
    first, again = _exported_twice(models.stackless(Gated)(), Gated(), (torch.randn(2, 4),), tmp_path)
    assert first == again


@pytest.mark.parametrize(
    ("classes_from", "structure", "message"),
    [
        ({}, "structured", "classes_from must be the torch.nn.Module the graph was captured from, got dict"),
        (models.FeatureNet, "structured", "classes_from must be the model the graph was captured from, not its class FeatureNet: pass an instance"),
        (models.FeatureNet(), "flat", "classes_from names the classes of a structured export; a flat one (--flat, structure='flat') writes none"),
    ],
    ids=["not_a_module", "a_class", "flat"],
)
def test_classes_from_is_the_model_for_a_structured_export(classes_from: object, structure: str, message: str) -> None:
    with pytest.raises(FxExportError) as raised:
        collect(models.stackless(models.FeatureNet)(), module_name="pkg", classes_from=classes_from, structure=structure)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_a_stripped_graph_comes_back_with_its_blocks_one_class() -> None:
    """resnet_like without its stacks: the blocks of `layer1` and `layer2` are one class again (`Layer`, where
    the recorded graph names them BasicBlock), its stem a Sequential, its head dict a class of its own."""
    package = collect(_without_stacks(CASES_BY_NAME.resnet_like.build), module_name="pkg")
    assert sorted(c.name for c in package.classes if not c.is_root) == ["Head", "Layer"]
    root = next(c for c in package.classes if c.is_root)
    assert root.forward_lines == ("x = self.stem(x)", "x = self.layer1(x)", "x = self.layer2(x)", "return self.head(x)")


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("blocks.0.0", "Block"),
        ("patch_embeds.1", "PatchEmbed"),
        ("stem", "Stem"),
        ("layer1.0", "Layer"),
        ("conv2", "Conv"),
        ("entries.2", "Entry"),
        ("glass.0", "Glass"),
        ("0.1", "Block"),
        ("_.0", "Block"),
        ("9lives", "Block"),
        ("bus.0", "Bus"),
        ("statuses.1", "Status"),
        ("series.0", "Series"),
        ("boxes.2", "Box"),
        ("fpn.p3", "P3"),
        ("²", "Block"),
        ("stem.conv_dw", "ConvDw"),
    ],
)
def test_an_inferred_class_is_named_after_where_it_is_held(path: str, name: str) -> None:
    assert class_named(path) == name


def test_a_user_leaf_inside_a_called_sequential_keeps_its_class() -> None:
    """A Sequential called as one runs its children: a user class among them is called, not a plain holder."""
    gm = models.leaves_in_sequential()
    package = collect(gm, module_name="pkg")
    assert sorted(c.name for c in package.classes if not c.is_root) == ["SEBlock", "SqueezeExcite"]
    root = next(c for c in package.classes if c.is_root)
    assert any("SEBlock(" in line for line in root.init_lines)
