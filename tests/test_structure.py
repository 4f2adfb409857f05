"""Structured export: a class per module the graph recorded calls of, containers indexed, and
modules that cannot be cut out left inline with the reason listed."""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.utils._pytree as pytree
from torch import fx, nn
from torch.fx.experimental.proxy_tensor import make_fx

import fxexport
from fxexport.show import show
from tests import models
from tests.packages import imported
from tests.roundtrip import expected_training


def _trace(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return fx.symbolic_trace(model)


def _export(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return torch.export.export(model, args).module()


def _trace_fused_leaves(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """symbolic_trace keeping fused layers calls, as quantization's own tracer does."""

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m: nn.Module, name: str) -> bool:
            return type(m).__module__.startswith("torch.ao.nn.intrinsic") or super().is_leaf_module(m, name)

    return fx.GraphModule(model, Tracer().trace(model))


def _trace_sequential_leaves(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """symbolic_trace keeping the calls of Sequential subclasses, as torchvision's feature extractor keeps
    its Conv2dNormActivation (a torchvision.ops module) as a leaf."""

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m: nn.Module, name: str) -> bool:
            return (isinstance(m, nn.Sequential) and type(m) is not nn.Sequential) or super().is_leaf_module(m, name)

    return fx.GraphModule(model, Tracer().trace(model))


def _trace_pos_leaves(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """symbolic_trace keeping the position modules the blocks run leaves, as a user's tracer may."""

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m: nn.Module, name: str) -> bool:
            return isinstance(m, models.SharedPosConv) or super().is_leaf_module(m, name)

    return fx.GraphModule(model, Tracer().trace(model))


def _export_strict(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """torch.export by dynamo, which records the frames of the functions a forward calls too."""
    return torch.export.export(model, args, strict=True).module()


def _trace_recording_lines(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """fxexport.trace: symbolic_trace, each node recording its stack trace (as `fxexport export` traces)."""
    return fxexport.trace(model)


def _export_reading_dropouts(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """torch.export, each value a dropout that does not train returns read after it as the dropout's node
    (torch 2.14 records it so: the dropout returned the same tensor; 2.13 reads the value itself)."""
    gm = _export(model, args)
    order = {node: i for i, node in enumerate(gm.graph.nodes)}
    for dropout in gm.graph.find_nodes(op="call_function", target=torch.ops.aten.dropout.default):
        source = dropout.args[0]
        for user in [u for u in source.users if u is not dropout and order[u] > order[dropout]]:
            user.replace_input_with(source, dropout)
    gm.recompile()
    return gm


def _export_holding_stateless_last(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """torch.export, `proj`'s stateless children held after the others (as levit's export holds its
    `proj`: ln, then act, though act runs first)."""
    gm = _export(model, args)
    proj = gm.get_submodule("proj")
    stateless = [name for name, child in proj._modules.items() if child is not None and not any(True for _ in child.parameters())]
    for name in stateless:
        proj._modules[name] = proj._modules.pop(name)
    return gm


def _trace_with_values(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """symbolic_trace, then FakeTensorProp's `meta["val"]` on every node (as the README shows for shapes)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    gm = fx.symbolic_trace(model)
    FakeTensorProp(gm, FakeTensorMode(allow_non_fake_inputs=True)).propagate(*args)
    return gm


def _make_fx(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    return make_fx(model)(*args)


_GRAPH_INPUTS: dict[int, tuple[Any, ...]] = {}  # id of a dynamo graph -> the inputs dynamo called it with (its parameters among them)


def _dynamo_graph(function: Callable[..., Any], args: tuple[Any, ...]) -> fx.GraphModule:
    """The graph torch.compile hands its backend; it takes the model's tensors as inputs (named `L_self_...`)."""
    import torch._dynamo

    captured: list[fx.GraphModule] = []

    def backend(gm: fx.GraphModule, inputs: list[torch.Tensor]) -> Callable[..., Any]:
        captured.append(gm)
        _GRAPH_INPUTS[id(gm)] = tuple(inputs)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(function, backend=backend, dynamic=False)(*args)
    return captured[0]


def _dynamo(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """dynamo records the module paths from `L['self']` (`L['self'].layer1.0`)."""
    return _dynamo_graph(model, args)


def _dynamo_argument_named_training(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """A compiled function whose argument is named like an attribute of every module: no child may take that name."""

    def run(training: nn.Module, *inputs: Any) -> Any:
        return training(*inputs)

    return _dynamo_graph(run, (model, *args))


def _dynamo_function(model: nn.Module, args: tuple[Any, ...]) -> fx.GraphModule:
    """A compiled function given the model: dynamo records the paths from its argument (`L['model'].layer1.0`)."""
    return _dynamo_graph(lambda model, *inputs: model(*inputs), (model, *args))


@dataclass(frozen=True)
class Shape:
    """A model, how it is captured, and the structure its export must have."""

    name: str
    model: Callable[[], nn.Module]
    args: Callable[[], tuple[Any, ...]]
    capture: Callable[[nn.Module, tuple[Any, ...]], fx.GraphModule]
    classes: frozenset[str]  # generated classes besides the root
    inline: dict[str, str] = field(default_factory=dict)  # module path -> words of the reason it stays inline
    counts: dict[str, int] = field(default_factory=dict)  # text -> times module.py has it


def _image() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(0)),)


def _tokens_image() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(0)),)


def _tokens() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0)),)


def _tokens_tall() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, 8, 4, generator=torch.Generator().manual_seed(0)),)


def _rows() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 4, generator=torch.Generator().manual_seed(0)),)


def _rows8() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),)


def _rotary() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(2, 3, 8, generator=generator), torch.randn(2, 3, 4, generator=generator), torch.randn(2, 3, 4, generator=generator))


def _foreign() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(2, 8, generator=generator), torch.randn(2, 8, generator=generator), torch.rand(2, 8, generator=generator) > 0.5)


def _seq() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(1, 6, 16, generator=generator), torch.randn(1, 5, 16, generator=generator), torch.ones(5, 5, dtype=torch.bool).tril())


OPTIONAL_INPUTS = {"def forward(self, hidden_states, key_value_states=None, attention_mask=None):": 1, "if key_value_states is None:": 1,
                   "key_value_states = hidden_states": 1, "self.k_proj(key_value_states)": 1, "attn_mask=attention_mask": 1,
                   "self.self_attn(self.norm1(x), attention_mask=mask)": 1, "self.encoder_attn(self.norm2(x), memory)": 1,
                   "self.self_attn(self.norm(x))": 1, "variant": 0}


def _rows_and_mask() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(0)), torch.ones(5, 5, dtype=torch.bool).tril())


def _masked() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(2, 5, 16, generator=generator), torch.randn(2, 7, 16, generator=generator), torch.zeros(2, 1, 5, 5), torch.zeros(2, 1, 5, 7))


# BART's decoder layer: its attention's forms take inputs apart (the mask second or third), each named within its form
# (the states read through `current = key_value_states if ... else hidden_states` too), and the layer's input passed
# as `attention_mask=encoder_attention_mask` named after the layer's parameter
MASKED_DECODER = {"def forward(self, hidden_states, attention_mask, key_value_states=None):": 1, "self.k_proj(key_value_states)": 1,
                  "def forward(self, hidden_states, attention_mask, encoder_hidden_states, encoder_attention_mask,):": 1,
                  "encoder_attention_mask, encoder_hidden_states)": 1, "x_1": 0}


def _two_rows() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(2, 4, generator=generator), torch.randn(2, 4, generator=generator))


def _same_count() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(2, 5, 16, generator=generator), torch.randn(2, 7, 16, generator=generator), torch.zeros(2, 1, 5, 5))


SAME_COUNT = {"def forward(self, hidden_states, key_value_states=None, attention_mask=None):": 1,
              "def forward(self, hidden_states, attention_mask, encoder_hidden_states):": 1, "x_1": 0}


def _direct() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(1, 5, 16, generator=generator), torch.randn(1, 6, 16, generator=generator), torch.ones(5, 5, dtype=torch.bool).tril())


DECODER_INPUTS = {"def forward(self, hidden_states, key_value_states=None, attention_mask=None):": 1, "def forward(self, x, memory, mask):": 1,
                  "self.self_attn(self.norm1(x), attention_mask=mask)": 1, "self.encoder_attn(self.norm2(x), memory)": 1, "variant": 0}
DIRECT_INPUTS = {"def forward(self, hidden_states, key_value_states=None, attention_mask=None):": 1, ", mem)": 1, ", attention_mask=msk)": 1,
                 "self.k_proj(key_value_states)": 1, "self.k_proj(attention_mask)": 0, "self.k_proj(mem)": 0}


def _model(cls: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        model = cls().eval()
        with torch.no_grad():  # nonzero running statistics, so the batch norms do something
            for module in model.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.running_mean.uniform_(-0.5, 0.5)
                    module.running_var.uniform_(0.5, 1.5)
        return model

    return build


HELD_ELSEWHERE = {"object.__setattr__(self.blocks1[0], \"pos\", self.pos1)": 1, "object.__setattr__(self.blocks2[1].attn, \"rel\", self.rel2)": 1,
                  "object.__setattr__(": 8, "x = self.pos(x)": 1, "self.rel(q, v)": 1, "for layer in self.blocks1:": 1, "getattr(": 0}
RESNET = {"getattr(": 0, "x = self.layer1(x)": 1, "x = self.stem(x)": 1, "if self.downsample is not None:": 1,
          "def __init__(self, in_channels, out_channels, stride=1) -> None:": 1,
          "if stride != 1:": 1, "self.downsample = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=stride,": 1,
          "self.downsample = None": 1, "BasicBlock(8, 16, stride=2)": 1,
          "class ConvNormAct(nn.Sequential):": 1, "super().__init__(nn.Conv2d(3, 8, 3, padding=1, bias=False),": 1,
          "self.stem = ConvNormAct()": 1}  # fmt: skip
# Sequentials whose children take their tensors as inputs: no chain of children
DYNAMO_INLINE = {path: "not its children called one after another" for path in ("stem", "layer1", "layer2", "layer2.0.downsample")}
SKIPPED = {"getattr(": 0, "self.downsample = nn.Sequential(nn.Identity(), nn.Conv2d(4, 4, 1, bias=False), nn.BatchNorm2d(4))": 1,
           "self.transition = nn.ModuleList([nn.Identity(), nn.Identity(), nn.Conv2d(4, 4, 1)])": 1, "self.downsample(x)": 1,
           "self.transition[2](": 2}  # fmt: skip
LISTED = {"for i, (in_channels, kernel_size, padding) in enumerate(": 1, "zip(in_channels_list, kernel_sizes, paddings)": 1,
          "self.splits = in_channels_list": 1, "self.splits, dim=1)": 1, "EvenMixedConvs([4, 2, 2], [3, 5, 7], [1, 2, 3], stride=2)": 1,
          "class SummedHeads(nn.ModuleList):": 1, "for i in range(count):": 1, "for layer in self:": 1, "SummedHeads(3)": 1, "getattr(": 0}
SHAPES = [
    Shape("resnet_trace", _model(models.ResNetLike), _image, _trace, frozenset({"BasicBlock", "ConvNormAct"}), counts=RESNET),
    # torch.export traces the torch.nn layers into ATen calls: restored, the export reads as the traced one does
    Shape("resnet_export", _model(models.ResNetLike), _image, _export, frozenset({"BasicBlock", "ConvNormAct"}),
          counts={**{k: v for k, v in RESNET.items() if k not in ("x = self.layer1(x)", "x = self.stem(x)")},
                  "x = self.layer2(self.layer1(self.stem(x)))": 1, "torch.ops": 0, "F.": 0}),  # one line of the source
    Shape("escapes_trace", _model(models.Escapes), _rows, _trace, frozenset({"Leaf"}),
          inline={"cached": "used outside it, and Cached 'cached' may keep values on itself", "scaled": "different bodies"},
          counts={"self.twice(": 2, "for block in self.blocks:": 1, "self.blocks[0](": 0, "getattr(": 0}),
    Shape("escapes_export", _model(models.Escapes), _rows, _export, frozenset({"Leaf"}),
          inline={"cached": "used outside it, and Cached 'cached' may keep values on itself", "scaled": "different bodies"}, counts={"self.twice(": 2}),
    # a module returning values its own later code reads (a dict of features) is cut out, returning them all; one
    # reading a tensor constant the trace folded into the root stays inline
    Shape("returned_intermediates", _model(models.FeaturePyramid), _rows, _trace, frozenset({"Features", "Leaf"}),
          inline={"scaled": "used outside it, and it reads '_tensor_constant0', a tensor held outside it"},
          counts={"return (x, self.stage2(torch.relu(x)))": 1, "out, features2 = self.features(x)": 1, "self.scaled(": 0}),
    # torch.export lifts the constant into the module that made it: both are cut out
    Shape("returned_intermediates_export", _model(models.FeaturePyramid), _rows, _export, frozenset({"Features", "ScaledFeatures", "Leaf"}),
          counts={"return (x, self.stage2(F.relu(x)))": 2, "scaled1, scaled2 = self.scaled(x)": 1}),
    # a value the source returns through two modules (T5's position bias), from an attention passing `self` to a
    # function (so it may keep values): cut out, the items in the order the source returns them, named as it names them
    Shape("returned_through_modules_export", _model(models.BiasStack), _rows, _export,
          frozenset({"BiasAttention", "BiasAttention_1", "BiasLayer", "BiasLayer_1"}),
          counts={"attention_output, position_bias = self.attention(self.norm(hidden_states))": 1,
                  "return (hidden_states + attention_output, position_bias)": 1, "self.layers[0].": 0}),
    # symbolic_trace: the recovered statements place the bias, not the attention's output (computed in the function):
    # cut out, the items in the graph's order, so not named by the source's statement
    Shape("returned_through_modules_trace", _model(models.BiasStack), _rows, _trace,
          frozenset({"BiasAttention", "BiasAttention_1", "BiasLayer", "BiasLayer_1"}),
          counts={"attention1, attention2 = self.attention(self.norm(hidden_states))": 1, "position_bias = self.attention(": 0}),
    # the attention keeps its scores on itself and the caller reads them there: not returned, it stays inline
    Shape("kept_not_returned_export", _model(models.KeptScores), _rows, _export, frozenset({"BiasAttention", "BiasLayer"}),
          inline={path: "used outside it, and BiasAttention 'layers.0.attention' may keep values on itself" for path in ("layers.0", "layers.0.attention")}),
    # a value dying where a result is unpacked into eight items, five statements before return: no `del`
    Shape("unpacked_items_are_no_statements", _model(models.Unpacked), lambda: (torch.randn(2, 16),), _trace, frozenset(),
          counts={"del x": 0, "chunk(": 1}),
    Shape("unpacked_items_are_no_statements_export", _model(models.Unpacked), lambda: (torch.randn(2, 16),), _export, frozenset(),
          counts={"del h": 0, "h = self.lin(x)": 1, "a, b, c, d, e, f, g, i = F.relu(h).chunk(8, dim=1)": 1}),
    Shape("forward_literals", _model(models.Stages), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"ChannelNorm"}),
          counts={"(self.size,)": 1, "self.size = size": 1, "ChannelNorm(4)": 1, "ChannelNorm(8)": 1}),
    # same __init__ but for a child one block builds, three forwards: a flag and an optional child
    Shape("variants", _model(models.Variants), _rows, _trace, frozenset({"Excite", "Variant"}),
          counts={"Variant()": 2, "Variant(residual=True)": 1, "Variant(use_excite=True)": 1, "if self.residual:": 1, "if use_excite:": 1,
                  "if self.excite is not None:": 1, "self.residual = residual": 1, "def __init__(self, use_excite=False, residual=False)": 1}),
    Shape("three_codes", _model(models.Modes), _rows, _trace, frozenset({"Mode", "Mode_1", "Mode_2"}),
          counts={"class Mode_1(Mode):": 1, "class Mode_2(Mode):": 1, "if self.": 0}),
    Shape("two_long_codes", _model(models.Chains), _rows, _trace, frozenset({"Chain", "Chain_1"}), counts={"class Chain_1(Chain):": 1, "if self.": 0}),
    Shape("child_with_its_code", _model(models.Splits), _rows, _trace, frozenset({"Split"}),
          counts={"if self.branch1 is not None:": 1, "branch1=None": 1, "Split(4, branch1=nn.Linear(4, 2))": 1, "Split(2)": 2}),
    Shape("child_with_its_code_export", _model(models.Splits), _rows, _export, frozenset({"Split"}), counts={"if self.branch1 is not None:": 1}),
    # an optional child whose value stands in for the input, read by a later statement: the join binds the input,
    # kept first under the name the source binds the child's value to
    Shape("optional_shortcut", _model(models.PreActBlocks), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"PreActBlock", "PoolConv"}),
          counts={"if self.downsample is not None:": 1, "shortcut = self.downsample(out)": 1, "return out * 0.2 + shortcut": 1, "out = self.conv1(out)": 1,
                  "shortcut = x": 1}),
    Shape("optional_shortcut_export", _model(models.PreActBlocks), lambda: (torch.randn(2, 4, 8, 8),), _export, frozenset({"PreActBlock", "PoolConv"}),
          counts={"if self.downsample is not None:": 1, "shortcut = self.downsample(out)": 1, "out = self.conv1(out)": 1, "shortcut = x": 1}),
    # the same, each side's forwards differing in literals (a stage's width): one class, the literals parameters
    Shape("child_with_its_code_and_literals", _model(models.ShuffledSplits), _rows, _trace, frozenset({"ShuffledSplit"}),
          counts={"if self.branch1 is not None:": 1, "branch1=None": 1, "ShuffledSplit(": 6, "ShuffledSplit_1": 0}),
    Shape("child_with_its_code_and_literals_export", _model(models.ShuffledSplits), _rows, _export, frozenset({"ShuffledSplit"}),
          counts={"if self.branch1 is not None:": 1, "ShuffledSplit(": 6}),
    Shape("child_arguments", _model(models.NormActs), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"NormAct"}),
          counts={"if use_act:": 1, "self.act = nn.SiLU(inplace=True)": 1, "self.act = nn.Identity()": 1, "NormAct(4, use_act=False)": 1,
                  "(4, act=": 0}),  # as the source builds it: `nn.SiLU(inplace=True) if act else nn.Identity()`
    Shape("layer_argument_of_a_child", _model(models.ConvUnits), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"NormAct", "ConvUnit"}),
          counts={"ConvUnit(norm=NormAct())": 2, "ConvUnit(norm=NormAct(use_act=False))": 1}),
    Shape("chain_of_blocks", _model(models.Encoder), _rows, _trace, frozenset({"Layer"}),
          counts={"for layer in self.layers:": 1, "for layer in self.pair:": 1, "out = layer(out, scale)": 2, "self.layers[0](": 0, "self.pair[0](": 0}),  # a ModuleList's two calls a loop too
    Shape("chain_of_blocks_export", _model(models.Encoder), _rows, _export, frozenset({"Layer"}), counts={"for layer in self.layers:": 1}),
    Shape("list_edited_by_its_reader", _model(models.DoublingBlock), lambda: (torch.randn(3, 2),), _trace, frozenset({"DoublingLayer"}),
          counts={"for layer in": 0, "def forward(self, features):": 1}),  # a user function may edit the list: no shared one
    Shape("list_read_in_a_child", _model(models.NestedBlock), lambda: (torch.randn(3, 2),), _trace,
          frozenset({"Concat", "NestedReader", "NestedReader_1", "NestedReader_2"}), counts={"self.cat([x, x_1])": 1}),
    Shape("flag_beside_a_buffer", _model(models.GatedBlocks), _rows, _trace, frozenset({"Gated"}),
          counts={'self.register_buffer("residual"': 1, "self.residual_2 = residual": 1, "if self.residual_2:": 1}),
    Shape("sequential_with_forward", _model(models.Heads), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"PooledHead"}),
          counts={"class PooledHead(nn.Sequential):": 1, "for layer in self:": 1, "self[0](": 0, "getattr(": 0}),
    Shape("named_sequential", _model(models.NamedStage), _rows, _trace, frozenset(), counts={"return self.stage(x)": 1}),
    # torch.export keeps only the layers holding tensors: the ReLU it drops is made again between them
    Shape("named_sequential_export", _model(models.NamedStage), _rows, _export, frozenset(), counts={"return self.stage(x)": 1}),
    Shape("containers_by_name", _model(models.Pyramid), _rows, _trace, frozenset({"Getter"}),
          counts={"class Getter(nn.ModuleDict):": 1, "for layer in self.values():": 1, 'self.inner.add_module("2", nn.Linear(4, 4))': 1,
                  "for layer in self.inner:": 1, "out = layer(x)": 1, "getattr(": 0}),
    Shape("container_children", _model(models.Stages2), _rows, _trace, frozenset({"Stage", "Mix"}),
          counts={"Stage(blocks=nn.Sequential(Mix(4), Mix(4)))": 1, "self.downsample = downsample if downsample is not None else nn.Identity()": 1}),
    Shape("list_arguments", _model(models.DenseNetLike), _image, _trace, frozenset({"DenseLayer", "DenseBlock", "Joined"}),
          counts={"def forward(self, features):": 1, "features = [x]": 1, "for layer in self.values():": 1,
                  "features.append(layer(features))": 1, "torch.cat(features, 1)": 2, "([x]": 0, "([x, layer1": 0,
                  'DenseBlock({"layer1": DenseLayer(3), "layer2": DenseLayer(5), "layer3": DenseLayer(7),})': 1,
                  'DenseBlock({"layer1": DenseLayer(9), "layer2": DenseLayer(11)})': 1,
                  "def forward(self, a, b):": 1, "self.join(x, b)": 1}),  # one arity: one parameter per input, the source's
    Shape("list_arguments_export", _model(models.DenseNetLike), _image, _export, frozenset({"DenseLayer", "DenseBlock", "Joined"}),
          counts={"def forward(self, features):": 1, "def forward(self, a, b):": 1,
                  "for layer in self.values():": 1, "torch.cat(features, dim=1)": 2}),
    # elements only some instances build: a parameter only those pass, else a flag
    Shape("optional_elements", _model(models.ExpandingNet), lambda: (torch.randn(2, 4, 6, 6),), _trace, frozenset({"Expanding", "SqueezeGate", "ConvBNAct"}),
          counts={"layers = []": 1, "if in_channels is not None:": 1, "if out_channels_2 is not None:": 1,
                  "Expanding(8, 8, out_channels_2=3)": 1, "Expanding(8, 6, in_channels=4, residual=False)": 1, "self.conv = nn.Sequential(*layers,": 1,
                  "activation=nn.ReLU6": 1, "activation=nn.Hardswish)": 1, "activation(inplace=True)": 2}),  # the activation's class a parameter
    Shape("optional_elements_export", _model(models.ExpandingNet), lambda: (torch.randn(2, 4, 6, 6),), _export, frozenset({"Expanding", "SqueezeGate", "ConvBNAct"}),
          counts={"if in_channels is not None:": 1, "if out_channels_2 is not None:": 1}),
    Shape("optional_element_flag", _model(models.RefineNet), lambda: (torch.randn(2, 4, 6, 6),), _trace, frozenset({"Refine", "Scale", "ConvBNAct"}),
          counts={"if use_scale:": 1, "def __init__(self, use_scale=True)": 1, "Refine()": 2, "Refine(use_scale=False)": 1}),
    # the plain side rebinds its input where the residual side keeps it: one code, the residual added under the flag;
    # the input kept as `shortcut` first, as the source keeps it
    Shape("rebound_input", _model(models.SkippingNet), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"Skipping"}),
          counts={"shortcut = x": 1, "x = self.conv_pw(x)": 1, "out =": 0, "if self.residual:": 1, "return x + shortcut": 1}),
    Shape("rebound_input_export", _model(models.SkippingNet), lambda: (torch.randn(2, 4, 3, 3),), _export, frozenset({"Skipping"}),
          counts={"shortcut = x": 1, "x = self.conv_pw(x)": 1, "if self.residual:": 1, "return x + shortcut": 1}),
    # a child only some blocks build and a residual only some add: one class with both (timm's blocks);
    # the blocks holding the child, a class of its own, wait for the others to meet them; the residual's
    # flag is the test of the parameters that decides it in every block, as the source computes it
    Shape("optional_child_and_flag", _model(models.ExcitedNet), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"Excited", "SqueezeGate"}),
          counts={"if self.se is not None:": 1, "if self.residual:": 1, "Excited(6, 12, 6, use_se=True)": 1,
                  "Excited(6, 12, 8)": 1, "if use_se:": 1, "self.se = SqueezeGate(out_channels, in_channels)": 1,
                  "self.residual = in_channels == out_channels_2": 1, "residual=False": 0, "residual=True": 0}),
    Shape("optional_child_and_flag_export", _model(models.ExcitedNet), lambda: (torch.randn(2, 4, 3, 3),), _export, frozenset({"Excited", "SqueezeGate"}),
          counts={"if self.se is not None:": 1, "if self.residual:": 1}),
    # children of a generated class that spell a default or not (`stride=2`, nothing for 1) compare equal
    Shape("generated_defaults", _model(models.RepNet), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"RepBlock", "ConvNorm"}),
          counts={"if self.identity is not None:": 2, "x = self.conv_1x1(x) + self.conv_kxk(x)": 1, "RepBlock(6, 6, stride=1, use_identity=True)": 1, "RepBlock(4, 6)": 1,
                  "if use_identity:": 1, "self.identity = nn.BatchNorm2d(in_channels)": 1}),  # the stride, not read by it, is no test
    # a child only some blocks build, with a width no parameter of the class carries: passed in, not its width apart
    Shape("optional_child_of_its_own_width", _model(models.BottleneckedNet), _rows, _trace, frozenset({"Bottlenecked"}),
          counts={"self.squeeze = squeeze": 1, "Bottlenecked(squeeze=nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 4)))": 1,
                  "Bottlenecked()": 2, "out_features": 0}),
    Shape("optional_child_of_its_own_width_export", _model(models.BottleneckedNet), _rows, _export, frozenset({"Bottlenecked"}),
          counts={"self.squeeze = squeeze": 1, "out_features": 0}),
    # a child only some blocks build beside a child that differs beyond literals: one class taking both; the
    # child of its one holder, whose literals no parameter carries, passed in (nothing says what others would build)
    Shape("optional_child_beside_child_argument", _model(models.DownNet), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"DownBlock"}),
          counts={"if self.downsample is not None:": 1, "self.conv1 = conv1": 1, "def __init__(self, in_channels, conv1, downsample=None)": 1}),
    # several children each block builds or not, each applied in place (timm's GhostBottleneck): one class applying
    # each under `if`, the two always built together under one, built by the class or passed in
    Shape("in_place_children", _model(models.GhostedNet), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"Ghosted", "SqueezeGate"}),
          counts={"if self.conv_dw is not None:": 1, "if self.bn_dw is not None:": 0, "if self.se is not None:": 1,
                  "if self.shortcut is not None:": 1, "if use_conv_dw:": 1, "self.bn_dw = None": 1, "if use_se:": 1,
                  "Ghosted(4, 4)": 1, "Ghosted(4, 4, use_se=True)": 1, "shortcut=None": 1, "Ghosted(6, 6)": 1,
                  "Ghosted(8, 8, use_conv_dw=True, use_se=True, shortcut=nn.Sequential(nn.Conv2d(8, 8, 1, stride=2)": 1}),
    # the same where torch.export records `x += self.shortcut(x)` inside the return: called on its own line first
    Shape("in_place_children_export", _model(models.GhostedNet), lambda: (torch.randn(2, 4, 8, 8),), _export, frozenset({"Ghosted", "SqueezeGate"}),
          counts={"if self.conv_dw is not None:": 1, "if self.shortcut is not None:": 1, "shortcut = self.shortcut(shortcut)": 1,
                  "x += shortcut": 1, "return x.add_(shortcut)": 0}),
    # a child only some blocks build, applied in place, beside a forward literal that differs: one class
    Shape("optional_child_and_forward_literal", _model(models.SplitStages), lambda: (torch.randn(2, 4, 16, 16),), _trace, frozenset({"SplitStage"}),
          counts={"if self.conv_down is not None:": 1, "x.split(self.half_value, dim=1)": 1, "SplitStage(8, 12, 6)": 1}),
    Shape("optional_child_and_forward_literal_export", _model(models.SplitStages), lambda: (torch.randn(2, 4, 16, 16),), _export,
          frozenset({"SplitStage"}), counts={"if self.conv_down is not None:": 1, "x.split(self.half_value, dim=1)": 1}),  # `half` is nn.Module.half
    # items of a child's result each take the name of the input in its place where those die there, in a graph
    # without recorded statements generic ones (`x_1`) too: `x, x_1 = self.pool(x, x_1)`, applied in place, so the
    # stages without a pool are one class with it (timm's pit by symbolic_trace: `out, out_1 = ...`, two classes)
    Shape("pair_applied_in_place", _model(models.PooledStages), lambda: (torch.randn(2, 8, 8, 8),), _trace,
          frozenset({"PooledStage", "StagePool"}),
          counts={"if self.pool is not None:": 1, "x, cls_tokens = self.pool(x, cls_tokens)": 1, "out_1": 0, "PooledStage(use_pool=False)": 1, "PooledStage()": 2}),
    # an attribute read symbolic_trace names `getattr_1`, its items read at once, is unpacked as far as they go (read
    # later, it takes the attribute's name: test_unpacking.py)
    Shape("shape_read_at_once_unpacked", _model(models.PooledStages), lambda: (torch.randn(2, 8, 8, 8),), _trace,
          frozenset({"PooledStage", "StagePool"}), counts={"b, c, h, w = x.shape[:4]": 1, "getattr": 0}),
    # a container only some blocks build is passed as its holders build it, never padded with another's elements
    Shape("optional_padded_container", _model(models.BodiedNet), lambda: (torch.randn(2, 4, 6, 6),), _trace,
          frozenset({"Bodied", "BodiedWithBody", "ConvBNAct"}), counts={"if use_conv_bn_act:": 1, "BodiedWithBody(use_conv_bn_act=True)": 1}),
    # a Sequential subclass builds its children in its super().__init__ call, its literals parameters; one whose
    # instances differ in ending with an activation or not adds it under a flag; one holding a parameter sets it after that call
    Shape("sequential_subclasses", _model(models.SequentialSubclasses), _image, _trace, frozenset({"ConvNormReLU", "ConvBNAct", "PairOfConvs", "ScaledConvs"}),
          counts={"class ConvNormReLU(nn.Sequential):": 1, "def __init__(self, in_channels, out_channels, stride=1) -> None:": 1,
                  "super().__init__(nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),": 1,
                  "self.stem = ConvNormReLU(3, 8, stride=2)": 1, "self.widen = ConvNormReLU(8, 16)": 1,
                  "self.project = ConvBNAct(16, activation=True)": 1, "self.narrow = ConvBNAct(8)": 1, "if activation:": 1,
                  "layers.append(nn.ReLU6(inplace=True))": 1, "super().__init__(*layers)": 1,
                  "super().__init__(ConvNormReLU(8, 8), ConvNormReLU(8, 8))": 1, "nn.Sequential(*[ConvNormReLU(8, 8) for _ in range(3)])": 1,
                  "class ScaledConvs(nn.Sequential):": 1, "super().__init__(nn.Conv2d(8, 8, 1), nn.ReLU())": 1,
                  "self.gamma = nn.Parameter(torch.empty(8, 1, 1))": 1, "x = self.scaled(x)": 1, "return x * self.scaled.gamma": 1,
                  "self.add_module(": 0, "getattr(": 0}),
    # the same where a tracer keeps the Sequential subclasses as leaves (torchvision's feature extractor): each a
    # generated subclass of nn.Sequential, never `getattr(self, "0")(input)`; one holding a parameter has its
    # forward of Sequential, so it is one too
    Shape("sequential_subclass_leaves", _model(models.SequentialSubclasses), _image, _trace_sequential_leaves,
          frozenset({"ConvNormReLU", "ConvBNAct", "PairOfConvs", "ScaledConvs"}),
          counts={"class ConvNormReLU(nn.Sequential):": 1, "self.stem = ConvNormReLU(3, 8, stride=2)": 1, "self.narrow = ConvBNAct(8)": 1,
                  "super().__init__(ConvNormReLU(8, 8), ConvNormReLU(8, 8))": 1, "class ScaledConvs(nn.Sequential):": 1,
                  "x = self.scaled(x)": 1, "self.add_module(": 0, "getattr(": 0}),
    # and one with a forward of its own, kept as a leaf: a subclass of nn.Sequential too, its forward over `self`
    Shape("sequential_subclass_leaf_with_forward", _model(models.StackedNorms), lambda: (torch.randn(2, 4),), _trace_sequential_leaves,
          frozenset({"AddingStack", "ScaledNorm"}), counts={"class AddingStack(nn.Sequential):": 1, "for layer in self:": 1, "getattr(": 0}),
    # a Sequential's stateless children the GraphModule does not hold (traced through) stand where the source has
    # them, so the container runs as the source's (they were appended last: `model.body(x)` failed) and is called whole
    Shape("traced_through_children_in_order", _model(models.SpaceToDepthBody), lambda: (torch.randn(1, 3, 16, 16),), _trace,
          frozenset({"SpaceToDepth"}), counts={"s2d=SpaceToDepth(), conv1=nn.Conv2d(12, 8, 3)": 1,
                                               "act=nn.ReLU(), s2d_2=SpaceToDepth()": 1, "self.body(x)": 1}),
    Shape("traced_through_children_in_order_export", _model(models.SpaceToDepthBody), lambda: (torch.randn(1, 3, 16, 16),), _export,
          frozenset({"SpaceToDepth"}), counts={"s2d=SpaceToDepth(": 1, "self.body(x)": 1, "self.body.s2d(": 0}),
    # a module's only input is its source forward's only parameter, whatever its caller's value is called: the
    # Mlp fed a buffer (`relative_coordinates_log`) and the one fed a block's `x` are one class; a block given the
    # model's `features` names it `x` as its source does
    Shape("sole_input_named_as_in_source", _model(models.MetaMlpNet), _rows, _trace, frozenset({"TwoLayerMlp", "MetaMlpAttention", "MetaMlpBlock"}),
          counts={"class TwoLayerMlp(nn.Module):": 1, "def forward(self, x):": 3, "self.meta_mlp(self.relative_coordinates_log)": 1,
                  "def forward(self, relative_coordinates_log)": 0, "def forward(self, features):": 1}),
    # by torch.export too: the Linear fed its parent's buffer is an nn.Linear again (it was a holder and F.linear)
    Shape("sole_input_named_as_in_source_export", _model(models.MetaMlpNet), _rows, _export,
          frozenset({"TwoLayerMlp", "MetaMlpAttention", "MetaMlpBlock"}),
          counts={"class TwoLayerMlp(nn.Module):": 1, "self.fc1 = nn.Linear(in_features, out_features)": 1, "F.linear": 0, "nn.Module()": 0}),
    # ... but not where the forward has other parameters the caller may have passed it as, or unpacks it
    Shape("sole_input_bound_elsewhere", _model(models.BoundElsewhere), _rows, _trace, frozenset({"KeyedPool", "ScaledBy", "UnpackedPair"}),
          counts={"def forward(self, q):": 0, "def forward(self, scale):": 0, "def forward(self, pair):": 0, "def forward(self, feat):": 1,
                  "def forward(self, x):": 3}),
    # an input no statement reads alone takes the name the source passes where a statement passes it to a call
    Shape("inputs_named_where_passed", _model(models.SizedBlocks), _image, _trace, frozenset({"PatchMixer", "SizedBlock"}),
          counts={"def forward(self, x, H, W):": 2, ".reshape(B, C, H, W)": 1, "self.mixer(self.norm(x), H, W)": 1, "x_1": 0}),
    # ... but not after a parameter the forward binds to another value first (`x, y = y, x`): its statements read
    # the caller's first input as `y`; named so, and taken in the source's order, a caller passing `(x, y)` got another result
    Shape("inputs_swapped_in_source_export", _model(models.SwappedInputsNet), _rows, _export, frozenset({"SwapsInputs"}),
          counts={"def forward(self, x, y):": 0, "self.m(y, x)": 0, "self.m(x, y)": 1}),
    # an input a statement reads beside two parameters, passed to the op by a keyword sharing a word with one of
    # them (`attn_mask=` for `attention_mask`, not `position_ids`): named after that one (falcon, stablelm; was `x_1`)
    Shape("input_named_like_its_keyword_export", _model(models.InterfaceAttentionNet), lambda: (torch.randn(2, 3, 8),),
          _export, frozenset({"InterfaceAttention"}), counts={"def forward(self, hidden_states, attention_mask):": 1, "attn_mask=attention_mask": 1}),
    # inputs named after the source forward's parameters are taken in its order, however the graph first reads them
    Shape("inputs_in_source_order", _model(models.EncodedImage), _image, _trace, frozenset({"SizedEncoding"}),
          counts={"def forward(self, B, H, W):": 1, "def forward(self, H, W, B):": 0}),
    # ... and a chain of blocks carrying their value in another than the first input is still a loop
    Shape("chain_carried_second", _model(models.MaskedChain), _rows, _trace, frozenset({"MaskedBlock"}),
          counts={"def forward(self, mask, x):": 1, "for block in self.blocks:": 1, "x = block(mask, x)": 1, "= self.blocks[": 0}),
    # ... its flagged last layer added to the list of layers, its own parameter set after them
    Shape("sequential_subclass_flag_and_tensor", _model(models.ScaledConvBNs), _image, _trace, frozenset({"ScaledConvBN"}),
          counts={"class ScaledConvBN(nn.Sequential):": 1, "if activation:": 1, "layers.append(nn.ReLU())": 1, "super().__init__(*layers)": 1,
                  "self.gamma = nn.Parameter(torch.empty(out_channels, 1, 1))": 1, "self.b = ScaledConvBN(8, 16, activation=False)": 1}),
    # an activation that is an element of its own is an activation parameter, not one flag per class
    Shape("activation_element", _model(models.ActivatedNet), lambda: (torch.randn(2, 4, 6, 6),), _trace, frozenset({"Activated", "ConvBNAct"}),
          counts={"activation()": 1, "Activated(activation=nn.SiLU)": 1, "use_": 0}),
    # a child some blocks build as nn.Identity (no call in the graph): all run the others' forward, callers pass it
    Shape("identity_child", _model(models.ShortcutNet), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"Shortcut"}),
          counts={"Shortcut(6, 6)": 1, "if stride != 1:": 1, "self.downsample = nn.Identity()": 1, "out = out + self.downsample(x)": 1}),
    # identity calls only some blocks make, where the others ran through an eval-mode DropPath (timm's
    # drop_path1, symbolic_trace): every block calls an nn.Identity, one class
    Shape("identity_calls_some_make", _model(models.DropPathNet), _rows, _trace, frozenset({"DropPathBlock"}),
          counts={"self.drop_path1 = nn.Identity()": 1, "self.drop_path2 = nn.Identity()": 1, "DropPathBlock() for _ in range(3)": 1, "self.drop_path1(": 1, "self.ls1 = nn.Identity()": 1,
                  "self.drop_path2(": 1}),
    # not where the other block holds a buffer of that name; nested blocks, each with an identity at one
    # level, innermost first (one class each); not where the same ops run inside other module calls
    Shape("identity_call_name_taken", _model(models.BufferNamedLikeIdentityNet), _rows, _trace,
          frozenset({"BufferNamedLikeIdentity", "BufferNamedLikeIdentity_1"}), counts={"self.d = nn.Identity()": 1}),
    Shape("identity_calls_nested", _model(models.NestedDropPaths), _rows, _trace, frozenset({"OuterDropPath", "InnerDropPath"}),
          counts={"OuterDropPath()": 2, "self.drop_path = nn.Identity()": 2}),
    Shape("identity_call_in_other_calls", _model(models.DropPathElsewhereNet), _rows, _trace,
          frozenset({"DropPathElsewhere", "PreScaled", "PreScaled_1"}), counts={"self.drop_path = nn.Identity()": 1, "sub=PreScaled()": 1}),
    # a `.contiguous()` torch.export left out where the tensor was contiguous already, where another instance calls
    # it: added, one class (was a `use_contiguous` flag or a class per window size); nested and at the block's level
    Shape("elided_contiguous_export", _model(models.WindowedNet), lambda: (torch.randn(1, 8, 8, 8),), _export,
          frozenset({"WindowBlock", "WindowPartition"}),
          counts={".contiguous()": 2, "use_contiguous": 0, "variant": 0, "WindowPartition(": 2, "if self.": 0}),
    # ... two such calls in a row pair by the value they read: each instance gets the one it lacks (the greedy
    # match took the second instance's `b.contiguous()` for the donor's `a.contiguous()`: a `variant` flag)
    Shape("elided_contiguous_pairs_export", _model(models.TwoPartitionsNet), lambda: (torch.randn(1, 8, 8, 8),), _export,
          frozenset({"TwoPartitions"}), counts={".contiguous()": 2, "variant": 0, "if self.": 0}),
    # ... also where that instance builds a child the others build as an nn.Identity (timm swinv2_cr's last `norm3`,
    # which torch.export records no call of): the call is added to the code both run, the identity to the others
    Shape("elided_contiguous_beside_child_export", _model(models.NormedWindowNet), lambda: (torch.randn(1, 8, 8, 8),), _export,
          frozenset({"NormedWindowBlock"}), counts={".contiguous()": 2, "if self.norm3 is not None:": 0, "x = self.norm3(x)": 1, "else:": 0,
                                                    "NormedWindowBlock(2, 4)": 2, "norm3=nn.LayerNorm(8)": 1}),
    # blocks some callers give an input the others leave out, whose literals differ from stage to stage: one
    # class, each literal a parameter in both branches (the branch an instance never runs has its own side's
    # literals); was a class per stage, each branch with another instance's numbers
    Shape("defaulted_input_literals_apart_export", _model(models.QueryStages), lambda: (torch.randn(1, 8, 8, 8),), _export,
          frozenset({"QueryWindowBlock", "QueryAttention", "QueryAttention_1", "QueryStage"}),
          counts={"class QueryWindowBlock(nn.Module):": 1, "def forward(self, x, q_global=None):": 1, ".view(-1, self.value_3, 8)": 2, "self.value_4": 0,
                  "class QueryStage(nn.Module):": 1}),
    # ... numbers taken line for line only: where the branches' lines differ, the `1`, `-1` and `1.0` stay
    # literals (were parameters holding one side's `1` and the other's `0.5`)
    Shape("defaulted_input_other_lines_export", _model(models.ComputedScaleStages), lambda: (torch.randn(2, 8),), _export,
          frozenset({"ComputedScale", "ComputedScaleStage"}),
          counts={"x.reshape(1, -1, self.w).mean(-1)": 1, "+ 1.0).sum(0)": 1, "class ComputedScale(nn.Module):": 1}),

    Shape("called_identity_child", _model(models.IdentityStages), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"IdentityStage"}),
          counts={"IdentityStage(4, 8, 4, use_conv_down=False)": 1, "self.conv_down = nn.Identity()": 1, "x = self.conv_down(x)": 1}),
    # an input some callers leave out, the block using another in its place: one forward, the input defaulting to None
    Shape("defaulted_input", _model(models.ShortcuttedNet), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"Shortcutted"}),
          counts={"def forward(self, x, shortcut=None):": 1, "if shortcut is None:": 1, "shortcut = x\n": 1, "self.second = Shortcutted()": 1}),
    Shape("defaulted_input_export", _model(models.ShortcuttedNet), lambda: (torch.randn(2, 4, 8, 8),), _export, frozenset({"Shortcutted"}),
          counts={"def forward(self, x, shortcut=None):": 1, "if shortcut is None:": 1}),
    # an input some callers leave out in the middle (cross-attention beside self-attention): taken last, callers reordered;
    # named `context` by the cross-attention's form, which reads it as that (was the caller's `memory`)
    Shape("defaulted_middle_input", _model(models.Decoding), lambda: (torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(5, 5)), _trace,
          frozenset({"Attending", "DecoderLayer"}), counts={"def forward(self, x, mask, context=None):": 1, "if context is None:": 1,
                                                          "self.cross_attn(x, mask, memory)": 1, "self.self_attn(x, mask)": 1}),
    Shape("defaulted_middle_input_export", _model(models.Decoding), lambda: (torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(5, 5)),
          _export, frozenset({"Attending", "DecoderLayer"}), counts={"def forward(self, x, mask, context=None):": 1, "if context is None:": 1}),
    # an input some callers leave out, the block computing it then (BART's positions): one forward computing it when None
    Shape("computed_input_export", _model(models.Positioned), lambda: (torch.arange(8),), _export, frozenset({"Positions"}),
          counts={"def forward(self, position_ids=None):": 1, "if position_ids is None:": 1, "else:": 1,
                  "position_ids = position_ids.unsqueeze(0)": 1}),
    # a `to` that returns its input itself (T5's layer norm): torch.export records the caller's residual as reading it; cut out all the same
    Shape("identity_alias_export", _model(models.NormedResiduals), lambda: (torch.randn(2, 3, 8),), _export, frozenset({"FloatNorm", "NormedResidual"}),
          counts={"return x + self.fc(self.norm(x))": 1}),
    # a `to` of a value the call made itself (a rotary embedding's `cos.to(x.dtype)`): its callers keep reading the `to`
    Shape("identity_alias_of_own_value_export", _model(models.Rotating), lambda: (torch.randn(2, 3, 8),), _export, frozenset({"Rotary", "FloatNorm"}),
          counts={"= self.rotary()": 1}),
    # a dropout that does not train returns its input itself: the caller's residual reads it, cut out all the same
    Shape("dropout_alias_export", _model(models.DroppedResiduals), lambda: (torch.randn(2, 4, 5, 5),), _export_reading_dropouts, frozenset({"DroppedConv"}),
          counts={"for layer in self.layers:": 1, "x = x + layer(x)": 1}),
    # an OrderedDict Sequential held in another order than it runs, but only for children without state: called whole
    Shape("sequential_held_out_of_order_export", _model(models.ActThenLinear), lambda: (torch.randn(2, 8),), _export_holding_stateless_last,
          frozenset({"LinearNorm"}), counts={"self.proj(x * 2)": 1, "self.proj.act(": 0}),
    # stages of 1 to 3 blocks named b1, b2, ... and chained: one class registering the blocks its callers pass
    Shape("numbered_blocks", _model(models.BlockStages), lambda: (torch.randn(2, 4, 16, 16),), _trace, frozenset({"BlockStage", "Shortcut"}),
          counts={"def __init__(self, *blocks)": 1, 'self.add_module(f"b{i}", block)': 1, "for block in self.children():": 1, "= BlockStage(": 3}),
    Shape("numbered_blocks_export", _model(models.BlockStages), lambda: (torch.randn(2, 4, 16, 16),), _export, frozenset({"BlockStage", "Shortcut"}),
          counts={"def __init__(self, *blocks)": 1, "for block in self.children():": 1, "= BlockStage(": 3}),
    # stages whose Sequential of blocks differs beyond literals, each block taking a layer its caller builds: passed whole
    Shape("passed_blocks_of_built_layers", _model(models.GateStages), lambda: (torch.randn(2, 8),), _trace, frozenset({"ActGate", "GateStage"}),
          counts={"self.blocks = blocks": 1, "blocks=nn.Sequential(": 2}),
    # tuple results taken apart where every item is read and the count is certain (chunk(2) read whole, recorded values)
    Shape("unpacked_results", _model(models.Unpacking), lambda: (torch.randn(3, 8),), _trace, frozenset({"TwoOutputs"}),
          counts={"chunk1, out = x.chunk(2, dim=-1)": 1, "out_1, pair2 = self.pair(out)": 1, "chunk = out_1.chunk(3, dim=0)": 1, "[0]": 1}),
    Shape("unpacked_results_export", _model(models.Unpacking), lambda: (torch.randn(3, 8),), _export, frozenset({"TwoOutputs"}),
          counts={"a, b = x.chunk(2, dim=-1)": 1, "y, m = self.pair(cat)": 1, "out, chunk2, _ = y.chunk(3)": 1, "return mul + out - chunk2.sum()": 1, "[0]": 0}),
    # locals named as the source names them where torch.export recorded the statements; none from symbolic_trace
    Shape("source_names_export", _model(models.SourceNamed), lambda: (torch.randn(2, 4, 8),), _export, frozenset(),
          counts={"query_states = self.q(hidden_states).view(2, 4, 2, 4)": 1, "query_states = query_states.transpose(1, 2)": 1,
                  "key_states = self.k(hidden_states).view(2, 4, 2, 4)": 1,
                  "scores = query_states @ key_states.transpose(-1, -2)": 1, "max =": 0,
                  "first, second = F.softmax(": 1, "total = torch.cat([second, first], dim=1)": 1}),
    # a value takes its source's name of an input nobody reads from there on (timm's attention rebinds `x`), not that of
    # an input still read later (GatedSum's `hidden`: its input is `x`, its statement reading `gate` and `scale` too, and
    # `scale` is read with `hidden` only; `gate` takes its source name, read alone by that name; a child's result takes the
    # name an always-run statement binds it to, `x = self.lin(hidden)`, not its input's); where the name ran on through views
    # whose memory lives until then (twins' attention), no `del` unbinds the value that took it; a slice of a tensor
    # takes its name on (`x = torch.cat([x[:, 1:], ...`), as no item of a tuple does
    Shape("rebinds_input_export", _model(models.RebindsInput), lambda: (torch.randn(2, 4, 8),), _export,
          frozenset({"QkvAttention", "GatedSum", "ViewedAttention"}),
          counts={"q, k, v = qkv.unbind()": 1, "q, k, v = x.unbind()": 1, "x = F.scaled_dot_product_attention(q, k, v)": 2,
                  "x = torch.cat([x[:, 1:], x[:, :1]], dim=1)": 1, "x = self.proj(x)": 1, "hidden = self.norm(x * x_1 + gate)": 1,
                  "x = self.lin(hidden)": 1, "x = x * gate": 1, "return x + hidden * x_1": 1, "def forward(self, x, x_1, gate):": 1,
                  "del q, k, v\n": 1, "del x": 0}),
    # a helper's unpacked result: the value a later statement reads by one of its names takes it
    Shape("tuple_named_export", _model(models.TupleNamed), lambda: (torch.randn(2, 4, 8),), _export, frozenset(),
          counts={"attn_output = F.scaled_dot_product_attention(": 1, "attn_output = attn_output.transpose(1, 2)": 1,
                  "sines = attn_output.": 0, "cosines =": 0, "sines = cos * sin": 1}),
    # from a review: an item unpacked into a dying value's name is bound at its result (no `del` after it); inputs
    # named in some instances of a class only, or whose name another input keeps, keep `x`, `x_1`, ...
    Shape("reviewed_names_export", _model(models.ReviewedNames), lambda: (torch.randn(2, 8),), _export, frozenset({"SortedInner", "PickedInput"}),
          counts={"x, idx = x.sort()": 1, "torch.ops": 0, "def forward(self, x, x, ": 0, "def forward(self, x, x_1):": 1}),
    # an input only passed on to children that name it takes their name, where the calling line reads it
    Shape("passed_names_export", _model(models.PassedNames), lambda: (torch.randn(2, 8), torch.randn(2, 8)), _export,
          frozenset({"MaskedAttention", "MaskedLayer"}),
          counts={"def forward(self, hidden_states, attention_mask):": 2, "def forward(self, x, attention_mask):": 0}),
    # a statement reading two parameters names the input no other input took after one of them
    # a keyword some instances' calls leave at its default, written out in all: one class taking it
    Shape("keyword_defaults_export", _model(models.StridedConvs), _image, _export, frozenset({"StridedConv"}),
          counts={"F.conv2d(x, self.weight, None, stride=self.stride, padding=1)": 1, "StridedConv(2)": 1}),
    # a parameter the source unpacks (`cos, sin = position_embeddings`) is one parameter, unpacked as there; a
    # layer passing it on takes it whole, and a caller building it passes the tuple (packed_inputs)
    Shape("unpacked_names_export", _model(models.RotaryLayers), lambda: (torch.randn(2, 8), torch.randn(2, 8)), _export,
          frozenset({"RotaryAttention", "RotaryLayer"}),
          counts={"def forward(self, hidden_states, position_embeddings, attention_mask):": 2, "cos, sin = position_embeddings": 1,
                  "self.attn(normed, position_embeddings, attention_mask)": 1, "x = layer(x, (cos, sin), attention_mask)": 1}),
    Shape("unpacked_names_read_before_an_earlier_parameter_export", _model(models.LateRotaryLayers), lambda: (torch.randn(2, 8), torch.randn(2, 8)),
          _export, frozenset({"LateRotaryAttention", "LateRotaryLayer"}),
          counts={"def forward(self, hidden_states, attention_mask, position_embeddings):": 2, "cos, sin = position_embeddings": 1}),
    # a call's tuple result holding exactly the items, in order, is passed whole
    Shape("items_named_as_passed_on_export", _model(models.PassedPairs), lambda: (torch.randn(2, 8), torch.randn(2, 8)), _export,
          frozenset({"PairSource", "LateRotaryAttention", "LateRotaryLayer"}),
          counts={"position_embeddings = self.rotary(x)": 1, "x = layer(x, causal_mask, position_embeddings)": 1, "cos, sin = self.rotary": 0}),
    # two of a call's three results passed as the pair: the tuple of those two, not the call's result (which
    # `cos, sin = position_embeddings` could not unpack)
    Shape("packed_two_of_three_results_export", _model(models.PartlyPassedTriple), lambda: (torch.randn(2, 8),), _export,
          frozenset({"TripleSource", "RotaryAttention", "RotaryLayer"}), counts={"x = layer(x, (cos, sin), extra)": 1}),
    Shape("packed_two_of_three_results_traced", _model(models.PartlyPassedTriple), lambda: (torch.randn(2, 8),), _trace_recording_lines,
          frozenset({"TripleSource", "RotaryAttention", "RotaryLayer"}), counts={"x = layer(x, (cos, sin), extra)": 1}),
    # symbolic_trace records no statements: a forward reading its parameter only whole, as an argument or returned
    # (timm pit's `for module in self: x = module(x)`), takes the tuple its children unpack as that parameter
    Shape("packed_passed_on_whole_traced", _model(models.SequencedTokenStages), _image, _trace, frozenset({"TupleSequence", "TokenStage", "TokenPool"}),
          counts={"def forward(self, x):\n        cls_tokens, x_1 = self[0](x)": 1, "return self.stages((x, cls_tokens))": 1}),
    # a pair passed on whole to two children that unpack it
    Shape("packed_passed_to_two_children_export", _model(models.UnpackingLayers), lambda: (torch.randn(2, 8),), _export,
          frozenset({"UnpackingAttention", "UnpackingLayer"}),
          counts={"def forward(self, x, position_embeddings):": 1, "self.cross(hidden_states, position_embeddings)": 1, "x = layer(x, (cos, sin))": 1}),
    # a module held at two places, which the package builds as two (the fused layer makes its own): each takes
    # the source's flag
    Shape("shared_module_flags_at_both_places", models.SharedReLUBlock, lambda: (torch.randn(1, 3, 4, 4),), _trace_fused_leaves,
          frozenset()),
    Shape("swapped_items_export", _model(models.SwappedUses), lambda: (torch.randn(2, 8),), _export, frozenset({"SwappedUse"}),
          counts={"def forward(self, hidden_states, x_1, x_2):": 1, "cos,": 0}),
    # a forward literal passed as `training=`: kept under another attribute than nn.Module's flag
    Shape("keyword_named_training", _model(models.KeywordsNamedTraining), _rows, _trace, frozenset({"KeywordNamedTraining"}),
          counts={"self.training = training": 0, "training=self.training_value": 1}),
    Shape("two_parameter_statement_export", _model(models.SelfOutputs), lambda: (torch.randn(2, 8),), _export, frozenset({"SelfOutput"}),
          counts={"def forward(self, hidden_states, input_tensor):": 1}),
    Shape("source_names_trace", _model(models.SourceNamed), lambda: (torch.randn(2, 4, 8),), _trace, frozenset(),
          counts={"query_states": 0, "scores": 0, "total": 0}),
    # values nothing reads: no statement for views and arithmetic; a random draw and an in-place add stay
    Shape("dead_code", _model(models.DeadCode), lambda: (torch.randn(2, 4),), _trace, frozenset(),
          counts={"unsqueeze": 0, "torch.rand_like(x)": 1, "x.clone().add_(1)": 1}),
    Shape("dead_code_export", _model(models.DeadCode), lambda: (torch.randn(2, 4),), _export, frozenset(),
          counts={"unsqueeze(": 0, "rand_like": 1, "y = self.proj(x)": 1, "y.clone().add_(1)": 1}),
    # the same where torch.export's comments (one per source line) double each side's lines: code lines are counted
    Shape("optional_children_with_comments_export", _model(models.LongScaledBlocks), lambda: (torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),), _export, frozenset({"LongScaled", "LayerScale"}),
          counts={"if self.res_scale1 is not None:": 1}),
    # blocks threading their state: the items take the names of the inputs they replace
    Shape("threaded_state", _model(models.Threading), lambda: (torch.randn(2, 4),), _trace, frozenset({"StateBlock"}),
          counts={"x, out = self.blocks[0](x, out)": 1, "x, out = self.blocks[2](x, out)": 1}),
    Shape("threaded_state_export", _model(models.Threading), lambda: (torch.randn(2, 4),), _export, frozenset({"StateBlock"}),
          counts={"x, out = self.blocks[0](x, out)": 1, "x, out = self.blocks[2](x, out)": 1}),
    # a result whose item is a tuple itself: the outer one is unpacked, the inner indexed
    Shape("nested_tuple_with_values", _model(models.NestedTuple), lambda: (torch.randn(2, 3, 4),), _trace_with_values, frozenset(),
          counts={" = self.lstm(x)": 1, "[0] * ": 1}),
    # a traced graph's recorded values hold for its example only: a split is not unpacked by them
    Shape("split_with_values", _model(models.SplitPairs), lambda: (torch.randn(2, 8),), _trace_with_values, frozenset(),
          counts={"split = x.split(4, dim=1)": 1}),
    # an input named `_`: the chunk nothing reads takes another name
    Shape("underscore_input", _model(models.UnderscoreInput), lambda: (torch.randn(2, 6), torch.randn(2, 2)), _trace, frozenset(),
          counts={"out, unused, chunk3 = x.chunk(3, 1)": 1, "+ _\n": 1}),
    Shape("underscore_input_export", _model(models.UnderscoreInput), lambda: (torch.randn(2, 6), torch.randn(2, 2)), _export, frozenset(),
          counts={", unused, ": 1}),
    # numbered stages called with an input named `block`: the loop variable is `child`
    Shape("block_input", _model(models.BlockInput), lambda: (torch.randn(2, 4, 16, 16),), _trace, frozenset({"BlockNamedStage", "Shortcut"}),
          counts={"for child in self.children():": 1}),
    # torch.export records no call of the identity: the source calls the child whatever the block, so the blocks
    # lacking it get an nn.Identity and the call, as symbolic_trace's (was an optional child, `if self.downsample is not None:`)
    Shape("identity_child_export", _model(models.ShortcutNet), lambda: (torch.randn(2, 4, 8, 8),), _export, frozenset({"Shortcut"}),
          counts={"if self.downsample is not None:": 0, "Shortcut(6, 6)": 1, "self.downsample = nn.Identity()": 1, "out = out + self.downsample(x)": 1}),
    # ... a child ending the block (timm's BottleneckAttn pool), read after it: one class, the pool passed in
    Shape("identity_child_ending_export", _model(models.PooledMixes), lambda: (torch.randn(1, 4, 8, 8),), _export, frozenset({"PooledMix"}),
          counts={"return self.pool(out)": 1, "PooledMix()": 2, "PooledMix(pool=nn.AvgPool2d(2, stride=2))": 1,
                  "self.pool = pool if pool is not None else nn.Identity()": 1}),
    # ... one ending a block and one starting the next, rewiring the same node: one round after the other
    Shape("identity_children_end_to_start_export", _model(models.EndToStartNet), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"PoolEnding", "ShortcutStarting"}), counts={"return self.pool(out)": 1, "s = self.shortcut(x)": 1, "variant": 0}),
    Shape("identity_children_start_to_end_export", _model(models.StartToEndNet), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"PoolEnding", "ShortcutStarting"}), counts={"return self.pool(out)": 1, "s = self.shortcut(x)": 1, "variant": 0}),
    # symbolic_trace: a shortcut the source tests for None stays None where a block has none (an identity
    # reading the block's input was added to it, as the source never calls the child there)
    Shape("none_or_identity_child", _model(models.NoneOrIdentityShortcuts), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"NoneOrIdentityShortcut"}), counts={"NoneOrIdentityShortcut()": 1, "NoneOrIdentityShortcut(shortcut=nn.Identity())": 2,
                                                         "if self.shortcut is not None:": 1}),
    # an identity one side calls only under a flag (hgnet's drop_path, called `if self.residual:`): every block
    # builds it, and the sides share the statements that compute the same under other names
    Shape("identity_called_under_a_flag", _model(models.ConcatenatingBlocks), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"ConcatenatingBlock"}), counts={"self.drop_path = nn.Identity()": 1, "if self.residual:": 1, "self.aggregation(": 1,
                                                     "ConcatenatingBlock(residual=False)": 1, "self.drop_path is not None": 0}),
    Shape("identity_called_under_a_flag_export", _model(models.ConcatenatingBlocks), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"ConcatenatingBlock"}), counts={"if self.residual:": 1, "self.aggregation(": 1, "ConcatenatingBlock(residual=False)": 1}),
    # two optional children and an identity beside them (EfficientFormerV2Block's token_mixer, ls1, drop_path1):
    # every block builds the identity, the others are optional
    Shape("optional_children_beside_an_identity", _model(models.TokenMixingBlocks), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"TokenMixingBlock"}), counts={"self.drop_path1 = nn.Identity()": 1, "if self.token_mixer is not None:": 1}),
    # a stateless child runs first where torch.export puts every get_attr first, one (num_batches_tracked)
    # read by nothing: it stands first, where its call is
    Shape("stateless_child_first_export", _model(models.PoolFirstBlocks), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"PoolFirstBlock"}), counts={"self.shortcut = nn.Identity()\n        self.pre_norm = nn.BatchNorm2d(4)": 1}),
    # two optional children applied in place apart (efficientformerv2's Attention2d: stride_conv first,
    # upsample near the end): one class, each applied under its own test
    Shape("optional_children_apart", _model(models.StridedMixers), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"StridedMixer"}), counts={"if self.stride_conv is not None:": 1, "if self.upsample is not None:": 1}),
    Shape("optional_children_apart_export", _model(models.StridedMixers), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"StridedMixer"}), counts={"if self.stride_conv is not None:": 1, "if self.upsample is not None:": 1}),
    # a ModuleList looped over, of one, two or four blocks, some strided (a code of their own): one class, a loop
    Shape("module_list_loops", _model(models.MixerStages), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"MixerStage", "StridedMixer"}), counts={" in self.blocks:": 1, "self.blocks[": 0}),
    Shape("module_list_loops_export", _model(models.MixerStages), lambda: (torch.randn(1, 4, 8, 8),), _export,
          frozenset({"MixerStage", "StridedMixer"}), counts={" in self.blocks:": 1, "self.blocks[": 0}),
    Shape("identity_of_one_code_in_three", _model(models.ThreeKindBlocks), lambda: (torch.randn(1, 4, 8, 8),), _trace,
          frozenset({"ThreeKindBlock"})),
    # a Sequential of named children is built as torch documents it, from an OrderedDict, so that blocks holding one
    # of other lengths are one class taking it whole (timm gcvit's FeatureBlock: levels of conv and pool)
    Shape("named_sequential_passed_whole", _model(models.PooledLevelsNet), lambda: (torch.randn(1, 4, 8, 8),), _trace, frozenset({"PooledLevels", "LevelConv"}),
          counts={"class PooledLevels(": 1, "self.blocks = blocks": 1, "collections.OrderedDict(conv1=LevelConv(": 3, "pool2=nn.MaxPool2d(2, stride=2)": 1,
                  "self.blocks.conv1": 0}),
    Shape("named_sequential_passed_whole_export", _model(models.PooledLevelsNet), lambda: (torch.randn(1, 4, 8, 8),), _export, frozenset({"PooledLevels", "LevelConv"}),
          counts={"class PooledLevels(": 1, "self.blocks = blocks": 1, "collections.OrderedDict(conv1=LevelConv(": 3, "pool2=nn.MaxPool2d(2, stride=2)": 1,
                  "self.blocks.conv1": 0}),
    # forwards of one `__init__`, one taking an input more that no other input stands for, are one forward defaulting
    # it to None and branching on it, as the source (timm gcvit's WindowAttentionGlobal, given a global query or not)
    Shape("input_defaulted_to_none", _model(models.GlobalQueryNet), lambda: (torch.randn(2, 5, 8),), _trace, frozenset({"GlobalQueryAttention", "GlobalQueryStage"}),
          counts={"def forward(self, x, q_global=None):": 1, "if q_global is not None:": 1, "self.blocks[0](x)": 1, "self.blocks[1](x, q_global)": 1}),
    Shape("input_defaulted_to_none_export", _model(models.GlobalQueryNet), lambda: (torch.randn(2, 5, 8),), _export,
          frozenset({"GlobalQueryAttention", "GlobalQueryStage"}),
          counts={"def forward(self, x, q_global=None):": 1, "if q_global is not None:": 1, "self.blocks[0](x)": 1, "self.blocks[1](x, q_global)": 1}),
    # a child only some instances build whose code alone reads inputs the others are not given (timm pvt_v2's `sr`,
    # reading H and W): one class, those inputs defaulting to None (was a class each); its callers then pass them
    # to every instance, as the source (the stage was two codes under a flag, `self.attn(tokens)` on one side)
    Shape("optional_child_reading_inputs_more", _model(models.ReducedStages), lambda: (torch.randn(1, 8, 4, 4),), _trace,
          frozenset({"ReducedAttention", "ReducedStage"}),
          counts={"def forward(self, x, H=None, W=None):": 1, "if self.sr is not None:": 1, ".reshape(B, C, H, W)": 2,
                  "tokens + self.attn(tokens, H, W)": 1, "self.attn(tokens)": 0, "variant": 0}),
    Shape("optional_child_reading_inputs_more_export", _model(models.ReducedStages), lambda: (torch.randn(1, 8, 4, 4),), _export,
          frozenset({"ReducedAttention", "ReducedStage"}), counts={"if self.sr is not None:": 1}),
    # ... but only to an instance of that class: a holder of another class at that attribute (three inputs) is
    # no call to give it (it was given three: a TypeError)
    Shape("inputs_given_to_the_same_class_only", _model(models.GateHolders), _rows8, _trace,
          frozenset({"OptionalGate", "ThreeInputs", "GateHolder"}), counts={"class OptionalGate(": 1}),
    Shape("inputs_given_to_the_same_class_only_export", _model(models.GateHolders), _rows8, _export,
          frozenset({"OptionalGate", "ThreeInputs", "GateHolder"}), counts={"class OptionalGate(": 1}),
    # a block passing the input on to a child whose forward defaults it to None passes it in one call, None where
    # it is left out (timm gcvit's GlobalContextVitBlock; was `if q_global is not None:` around two calls)
    Shape("input_passed_on_defaulted", _model(models.PassedQueryNet), lambda: (torch.randn(2, 5, 8),), _trace,
          frozenset({"GlobalQueryAttention", "GlobalQueryBlock"}),
          counts={"x = x + self.attn(self.norm(x), q_global)": 1, "self.attn(self.norm(x))": 0, "def forward(self, x, q_global=None):": 2}),
    Shape("input_passed_on_defaulted_export", _model(models.PassedQueryNet), lambda: (torch.randn(2, 5, 8),), _export,
          frozenset({"GlobalQueryAttention", "GlobalQueryBlock"}),
          counts={"x = x + self.attn(self.norm(x), q_global)": 1, "self.attn(self.norm(x))": 0, "def forward(self, x, q_global=None):": 2}),
    # the input some blocks lack in the middle of their inputs is not taken for the last one: the blocks lacking it
    # would read their `scale` as the other blocks' `q_global` (they stay apart: their callers cannot reorder)
    Shape("input_in_the_middle_not_misread", _model(models.MiddleQueryNet), lambda: (torch.randn(2, 5, 8),), _trace,
          frozenset({"MiddleQueryAttention", "MiddleQueryAttention_1"}), counts={"scale=None": 0, "x_1=None": 0}),
    Shape("input_in_the_middle_not_misread_export", _model(models.MiddleQueryNet), lambda: (torch.randn(2, 5, 8),), _export,
          frozenset({"MiddleQueryAttention", "MiddleQueryAttention_1"}), counts={"scale=None": 0, "x_1=None": 0}),
    # a loop over blocks carries its input's name, whatever it is, and its variable is the container's name in the
    # singular (`for stage in self.stages: hidden_state = stage(hidden_state)`, as the source)
    Shape("loop_on_a_named_input", _model(models.HiddenStateStages), _rows, _trace, frozenset({"HiddenStateStage"}),
          counts={"hidden_state = layer(hidden_state)": 1, "for stage in self.stages:": 1, "hidden_state = stage(hidden_state)": 1, " = hidden_state\n": 0}),
    Shape("loop_on_a_named_input_export", _model(models.HiddenStateStages), _rows, _export, frozenset({"HiddenStateStage"}),
          counts={"hidden_state = layer(hidden_state)": 1, "for stage in self.stages:": 1, "hidden_state = stage(hidden_state)": 1, " = hidden_state\n": 0}),
    # ... two, one reading the block's input before anything else does (timm's MbConvBlock `shortcut` and `down`)
    Shape("identity_children_of_input_export", _model(models.ShortcutFirstStages), lambda: (torch.randn(1, 4, 16, 16),), _export, frozenset({"ShortcutFirstBlock"}),
          counts={"shortcut = self.shortcut(x)": 1, "x = self.down(x)": 1, "if use_shortcut:": 1, "self.down = nn.Identity()": 1,
                  "ShortcutFirstBlock(8, 16, use_shortcut=True)": 1}),
    # two children only some blocks build, with code of their own: one class branching on the first
    Shape("two_optional_children", _model(models.MetaBlocks), _rows, _trace, frozenset({"MetaBlock", "LayerScale"}),
          counts={"if self.res_scale1 is not None:": 1, "MetaBlock(res_scale1=LayerScale(), res_scale2=LayerScale())": 1,
                  "def __init__(self, res_scale1=None, res_scale2=None)": 1}),
    Shape("two_optional_children_export", _model(models.MetaBlocks), _rows, _export, frozenset({"MetaBlock", "LayerScale"}),
          counts={"if self.res_scale1 is not None:": 1}),
    # a forward number that differs between blocks is stored apart from a buffer of the name it would take
    Shape("forward_literal_beside_a_buffer", _model(models.Offsets), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"Offset"}),
          counts={"self.register_buffer(\"value\"": 1, "self.value_value = value": 1, "return self.conv(x) * self.value_value + self.value": 1}),
    Shape("rolled_loop", _model(models.LoopedLinears), _rows, _trace, frozenset(),
          counts={"for lin in self.lins:": 1, "lin(x)": 1, "self.lins[": 0, "x = x * 0.5": 1}),
    Shape("rolled_loop_export", _model(models.LoopedLinears), _rows, _export, frozenset(), counts={"for lin in self.lins:": 1, "self.lins[": 0}),
    Shape("rolled_loop_around_its_call", _model(models.LoopedPreNorm), lambda: (*_rows(), torch.randn(4)), _trace, frozenset(),
          counts={"out = x": 1, "for block in self.blocks:": 1, "out = out + bias": 1, "return out - x": 1, "self.blocks[": 0}),
    Shape("rolled_loop_around_its_call_export", _model(models.LoopedPreNorm), lambda: (*_rows(), torch.randn(4)), _export, frozenset(),
          counts={"for block in self.blocks:": 1, "out = out + block(self.norm(out) * 2.0) + bias": 1, "return out - x": 1}),
    Shape("rolled_loop_unpacking", _model(models.LoopedGates), _rows, _trace, frozenset(),
          counts={"for gate in self.gates:": 1, "out_1, out_2 = out.chunk(2, dim=-1)": 1, "out = x + out_1": 1, "self.gates[": 0}),
    Shape("rolled_loop_unpacking_export", _model(models.LoopedGates), _rows, _export, frozenset(), counts={"for gate in self.gates:": 1}),
    Shape("steps_numbered_unrolled", _model(models.NumberedSteps), _rows, _trace, frozenset(), counts={"for lin in": 0, "self.lins[2](": 1}),
    # a loop keeping every step's value in a list (`outs.append(x)`), over the input's splits by its index, zipped over
    # two ModuleLists (Res2Net's); where the first step takes its split alone, an `if i == 0:` says so
    Shape("steps_kept_in_a_list", _model(models.KeptSteps), _rows, _trace, frozenset(),
          counts={"outs = []": 1, "for lin in self.lins:": 1, "outs.append(x)": 1, "return torch.cat(outs, -1)": 1, "self.lins[": 0}),
    Shape("steps_kept_in_a_list_export", _model(models.KeptSteps), _rows, _export, frozenset(),
          counts={"for lin in self.lins:": 1, "outs.append(x)": 1, "self.lins[": 0}),
    Shape("steps_kept_after_a_stem", _model(models.StemmedStages), _rows, _trace, frozenset(),
          counts={"x = self.stem(x)": 1, "x = block(x)": 1, "outs.append(x)": 1, "out = x": 0}),
    Shape("steps_kept_after_a_stem_export", _model(models.StemmedStages), _rows, _export, frozenset(),
          counts={"x = self.stem(x)": 1, "x = block(x) * 0.5": 1, "outs.append(x)": 1, "out = x": 0}),
    Shape("steps_kept_after_the_input", _model(models.StageFeatures), _rows, _trace, frozenset(),
          counts={"for stage in self.stages:": 1, "return [x] + outs": 1}),
    Shape("steps_kept_after_the_input_export", _model(models.StageFeatures), _rows, _export, frozenset(),
          counts={"for stage in self.stages:": 1, "return [x] + outs": 1}),
    Shape("steps_by_the_index", _model(models.SelectedSteps), lambda: (torch.randn(2, 3, 4),), _trace, frozenset(),
          counts={"for i, lin in enumerate(self.lins):": 1, "x.select(1, i)": 1, "self.lins[": 0}),
    Shape("steps_by_the_index_export", _model(models.SelectedSteps), lambda: (torch.randn(2, 3, 4),), _export, frozenset(),
          counts={"for i, lin in enumerate(self.lins):": 1, "x[:, i]": 1, "self.lins[": 0}),
    Shape("split_scales", _model(models.SplitScalesNet), lambda: (torch.randn(2, 16, 6, 6),), _trace,
          frozenset({"SplitScales", "SplitScales_1", "SplitScales_2"}),
          counts={"for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):": 2, "if i == 0:": 1, "out = out + spx[i]": 1,
                  "torch.cat(outs + [spx[-1]], 1)": 1, "self.convs[1]": 0}),
    Shape("split_scales_export", _model(models.SplitScalesNet), lambda: (torch.randn(2, 16, 6, 6),), _export,
          frozenset({"SplitScales", "SplitScales_1", "SplitScales_2"}),
          counts={"for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):": 2, "if i == 0:": 1, "self.convs[1]": 0}),
    # ... also over a ModuleDict subclass's own children (timm's MixedConv2d), one child alone written out;
    # blocks of 2 and 4 children are one class building them from lists (listed_children.py)
    Shape("mixed_convs", _model(models.MixedConvStages), lambda: (torch.randn(2, 8, 6, 6),), _trace,
          frozenset({"MixedConvs", "MixedConvs_1"}),
          counts={"for i, layer in enumerate(self.values()):": 1, "out = x_split[i]": 1, 'self["1"]': 0, 'self["0"](out)': 1,
                  "for i, (kernel_size, padding) in enumerate(zip(kernel_sizes, paddings)):": 1, "MixedConvs(4, [1, 3], [0, 1])": 1, "self.splits = [in_channels] * len(kernel_sizes)": 1,
                  "x_split = torch.split(x, self.splits, dim=1)": 1}),
    Shape("mixed_convs_export", _model(models.MixedConvStages), lambda: (torch.randn(2, 8, 6, 6),), _export,
          frozenset({"MixedConvs", "MixedConvs_1"}), counts={"for i, layer in enumerate(self.values()):": 1, 'self["1"]': 0,
                                                            "split_with_sizes = x.split(self.splits, dim=1)": 1}),
    # ... their channels split unevenly, the split list the children's channels; a ModuleList subclass of n alike heads
    Shape("listed_children", _model(models.MixedConvNet), lambda: (torch.randn(2, 8, 12, 12),), _trace,
          frozenset({"EvenMixedConvs", "SummedHeads"}), counts=LISTED),
    Shape("listed_children_export", _model(models.MixedConvNet), lambda: (torch.randn(2, 8, 12, 12),), _export,
          frozenset({"EvenMixedConvs", "SummedHeads"}), counts=LISTED),
    # a loop over two children is one too: blocks of 2 and 3 children are one class
    # stages of two codes (2 and 4 blocks) besides children only some build, applied in place: the stage of 4 builds
    # no norm and no stage of its code lacks one, so its norm goes where the other code applies it (gcvit by torch.export)
    Shape("children_some_build_across_codes", _model(models.GlobalStages), _rows, _trace, frozenset({"GlobalStage", "QueriedBlock"}),
          counts={"if self.variant:": 1, "x = self.norm(x)": 1, "if use_norm:": 1}),
    Shape("children_some_build_across_codes_export", _model(models.GlobalStages), _rows, _export, frozenset({"GlobalStage", "QueriedBlock"}),
          counts={"if self.variant:": 1, "if self.norm is not None:": 1, "norm=nn.LayerNorm(32)": 1, "use_norm": 0}),
    # a child only some blocks build, whose output the others read as a default (MobileOne's `identity_out = 0`,
    # dpn's input in its projection's place, and the projection another child builds in its place): one class each
    Shape("defaulted_children", _model(models.DefaultedChildren), _rows, _trace, frozenset({"BranchSum", "DualPath"}),
          counts={"identity_out = 0": 1, "if self.identity is not None:": 1, "s = x": 1, "if self.proj_s1 is not None:": 1,
                  "if self.proj_s2 is not None:": 1, "else:": 0}),
    Shape("defaulted_children_export", _model(models.DefaultedChildren), _rows, _export, frozenset({"BranchSum", "DualPath"}),
          counts={"identity_out = 0": 1, "if self.identity is not None:": 1, "s = x": 1, "if self.proj_s1 is not None:": 1,
                  "if self.proj_s2 is not None:": 1, "else:": 0}),
    # MobileOne's blocks: a sum over a ModuleList of branches from a scale branch or 0, the stem's list of one branch
    # run as the loop the others run: one class (by torch.export the blocks without a scale branch start from
    # `conv(x) + 0` and add the others in place: the source's `out = 0`, then `out += layer(x)` per branch)
    Shape("branch_blocks", _model(models.BranchNet), lambda: (torch.randn(2, 4, 6, 6),), _trace, frozenset({"BranchBlock"}),
          counts={"scale_out = 0": 1, "identity_out = 0": 1, "for layer in self.conv_kxk:": 1, "[0]": 0, "if self.conv_scale is not None:": 1}),
    Shape("branch_blocks_export", _model(models.BranchNet), lambda: (torch.randn(2, 4, 6, 6),), _export, frozenset({"BranchBlock"}),
          counts={"scale_out = 0": 1, "for layer in self.conv_kxk:": 1, "out += layer(x)": 1, "out += identity_out": 1, "[0]": 0, "+ 0": 0}),
    # fastvit's: the token mixer's norm builds the identity norm alone, which is the others' code without the conv
    # branches, read where it lacks the scale branch: one class, the conv branches under `if`; by torch.export, which
    # records `0 + identity_out` as `identity_out + 0` and no identity's call, the calls of the identities `se` and
    # `act` the forward always makes (also before its early return) added where the others end in them
    Shape("rep_mixers", _model(models.RepMixerNet), lambda: (torch.randn(2, 4, 6, 6),), _trace, frozenset({"MobileOneLike", "RepMixer"}),
          counts={"scale_out = 0": 1, "identity_out = 0": 1, "if self.conv_kxk is not None:": 1, "self.conv_kxk = None": 1,
                  "out = scale_out + identity_out": 1, "return self.act(self.se(out))": 1}),
    Shape("rep_mixers_export", _model(models.RepMixerNet), lambda: (torch.randn(2, 4, 6, 6),), _export, frozenset({"MobileOneLike", "RepMixer"}),
          counts={"scale_out = 0": 1, "identity_out = 0": 1, "if self.conv_kxk is not None:": 1, "self.conv_kxk = None": 1,
                  "out = scale_out + identity_out": 1, "out += self.conv_kxk[0](x)": 1, "return self.act(self.se(out))": 1, "+ 0": 0}),
    # ... but not into a block holding a module of that name (an OffGate off in it), nor where the forward calls the
    # identity elsewhere than at the end on another way out (`x = self.act(x * 3)` before the convolution)
    Shape("ending_identities_export", _model(models.EndingIdentities), lambda: (torch.randn(2, 4, 6, 6),), _export,
          frozenset({"OffGate", "GateEndedBlock", "GateEndedBlock_1", "EarlyActivated", "EarlyActivated_1"}),
          counts={"self.act = nn.Identity()": 0, "self.se.w = nn.Parameter": 1}),
    # a detection backbone's BasicBlocks, passed the constants symbolic_trace folded into the root, each its own
    # (named after them): one class, the downsample's two more defaulting to None
    Shape("frozen_stages", _model(models.FrozenStages), lambda: (torch.randn(2, 4, 8, 8),), _trace, frozenset({"FrozenNorm", "FrozenResBlock"}),
          inline=dict.fromkeys(("layer1", "layer2", "layer3", "layer2.0.downsample", "layer3.0.downsample"), "not its children called one after another"),
          counts={"if self.downsample is not None:": 1, "_tensor_constant13=None": 1, "FrozenResBlock(8, 16, stride=2)": 1}),
    # ... but not where the holders read their downsample's constants first: the inputs at one place mean
    # other things (helper-73's case)
    Shape("frozen_shortcuts_first", _model(models.FrozenShortcutsFirst), lambda: (torch.randn(2, 4, 8, 8),), _trace,
          frozenset({"FrozenNorm", "FrozenShortcutFirst", "FrozenShortcutFirstWithDownsample"}),
          inline=dict.fromkeys(("blocks", "blocks.1.downsample", "blocks.3.downsample"), "not its children called one after another")),
    # torchvision's InvertedResidual of a detection backbone: four codes of one interface, each block passed its
    # own folded constants; the two with a residual add and the two without join on a flag, pair by pair
    Shape("frozen_inverted_blocks", _model(models.FrozenInvertedNet), lambda: (torch.randn(2, 4, 8, 8),), _trace,
          frozenset({"FrozenNorm", "FrozenInverted", "FrozenInverted_1"}),
          inline=dict.fromkeys(("features", *(f"features.{k}.block{part}" for k in range(5) for part in ("", ".0", ".2" if k > 1 else ".1"))),
                               "not its children called one after another"),
          counts={"if self.residual:": 2, "FrozenInverted(6, residual=True)": 1, "FrozenInverted_1(4)": 2}),
    # three codes of one interface, each passed its own constants: no pairing of two of them leaves the third out
    # (helper-74's case; as three_codes without constants), so three classes, the variants subclassing the first
    Shape("frozen_three_ways", _model(models.FrozenThreeWaysNet), lambda: (torch.randn(2, 4, 6, 6),), _trace,
          frozenset({"FrozenNorm", "FrozenThreeWays", "FrozenThreeWays_1", "FrozenThreeWays_2"}),
          inline={"blocks": "not its children called one after another"},
          counts={"if self.": 0, "class FrozenThreeWays_1(FrozenThreeWays):": 1, "class FrozenThreeWays_2(FrozenThreeWays):": 1}),
    # Res2Net's blocks: each split added to the conv's output before it, but in the first block of a stage, which
    # runs each alone (the loop reads the block's flag), pools the last split and downsamples: one class
    Shape("res2_blocks", _model(models.Res2Stage), lambda: (torch.randn(2, 8, 6, 6),), _trace, frozenset({"Res2Block"}),
          counts={"if i == 0 or self.is_first:": 1, "if self.pool is not None:": 1, "shortcut = x": 1, "if self.downsample is not None:": 1,
                  "Res2Block(is_first=True": 1, "self.is_first = is_first": 1}),
    Shape("res2_blocks_export", _model(models.Res2Stage), lambda: (torch.randn(2, 8, 6, 6),), _export, frozenset({"Res2Block"}),
          counts={"if i == 0 or self.is_first:": 1, "if self.pool is not None:": 1, "shortcut = x": 1, "if self.downsample is not None:": 1}),
    # stages of two codes, one joined on children only some build, where the other code's comments sit elsewhere:
    # one class, no flag for where a note sits (the input itself where no projection is built)
    Shape("projected_stages_export", _model(models.ProjectedStages), _rows, _export, frozenset({"ProjectedStage", "QueriedBlock"}),
          counts={"s = x": 1, "if self.proj is not None:": 1, "if self.norm is not None:": 1, "variant": 0}),
    Shape("two_and_three_steps", _model(models.TwoAndThreeSteps), _rows, _trace, frozenset({"ResidualLinears", "NormedStack"}),
          counts={"for layer in self:": 1, "for block in self.blocks:": 1, "NormedStack(blocks=nn.ModuleList([nn.Linear(4, 4) for _ in range(3)]))": 1,
                  "ResidualLinears(2)": 1, "[0]": 0}),
    Shape("two_and_three_steps_export", _model(models.TwoAndThreeSteps), _rows, _export, frozenset({"ResidualLinears", "NormedStack"}),
          counts={"for layer in self:": 1, "for block in self.blocks:": 1, "[0]": 0}),
    # ... which a block of 2, 3 and 5 convolutions runs alike: one class
    Shape("chunked_convs", _model(models.ChunkedConvStages), lambda: (torch.randn(2, 12, 6, 6),), _trace, frozenset({"ChunkedConvs"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if i == 0:": 1, "x.chunk(self.value, dim=1)": 1}),
    Shape("chunked_convs_export", _model(models.ChunkedConvStages), lambda: (torch.randn(2, 12, 6, 6),), _export, frozenset({"ChunkedConvs"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if i == 0:": 1}),
    # ... and one of a single convolution, its loop's first step alone (timm's edgenext)
    Shape("chunked_convs_one", _model(lambda: models.ChunkedConvStages((1, 2, 3))), lambda: (torch.randn(2, 12, 6, 6),), _trace, frozenset({"ChunkedConvs"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if i == 0:": 1, "ChunkedConvs(2, convs=nn.ModuleList([nn.Conv2d(6, 6, 3, padding=1)]))": 1}),
    # ... and an EdgeNeXt block's, with an optional position encoding: one class, the tail shared (its `del` run once)
    Shape("edge_stages", _model(models.EdgeStages), lambda: (torch.randn(2, 12, 5, 5),), _trace, frozenset({"SplitTransposeBlock", "FourierPositions"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if self.pos_embd is not None:": 1, "del drop_path": 1, "out = out + drop_path": 1}),
    Shape("edge_stages_export", _model(models.EdgeStages), lambda: (torch.randn(2, 12, 5, 5),), _export, frozenset({"SplitTransposeBlock", "FourierPositions"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if self.pos_embd is not None:": 1}),
    Shape("chunked_convs_one_export", _model(lambda: models.ChunkedConvStages((1, 2, 3))), lambda: (torch.randn(2, 12, 6, 6),), _export, frozenset({"ChunkedConvs"}),
          counts={"for i, conv in enumerate(self.convs):": 1, "if i == 0:": 1}),
    Shape("repeated_layers", _model(models.RepeatedLayers), _rows, _trace, frozenset(),
          counts={"nn.Sequential(nn.Linear(4, 8), *[nn.Linear(8, 8) for _ in range(3)], nn.ReLU())": 1,
                  "nn.ModuleList([nn.Linear(8, 2), *[nn.Linear(8, 3) for _ in range(3)]])": 1}),
    Shape("make_fx", _model(models.MLP), lambda: (torch.randn(3, 16),), _make_fx, frozenset()),
    Shape("traced_norms_train", _model(models.TracedNorms), _rows, _trace, frozenset({"NormedStep", "ScaleNorm"}),
          counts={"module.training = True": 1, ".training = ": 1, "self.eval()": 1}),
    Shape("traced_norms_shared_layers", _model(models.SharedEncoderLayers), lambda: (torch.randn(2, 3, 8),), _trace,
          frozenset({"ScaleNorm"}), counts={"module.training = True": 1, "self.first.layers.training = False": 1,
                                            "self.second.layers.training = False": 1}),
    # a flag the forward branches on in three places: one class, its shared code once
    Shape("shifted_trace", _model(models.ShiftedStages), lambda: (torch.randn(2, 6, 4),), _trace, frozenset({"ShiftedAttention"}),
          counts={"if self.use_roll:": 3, "use_roll=True)": 2, "else:": 0}),
    Shape("shifted_export", _model(models.ShiftedStages), lambda: (torch.randn(2, 6, 4),), _export, frozenset({"ShiftedAttention"}),
          counts={"if self.use_roll:": 3, "use_roll=True)": 2, "del q, k, v, attention": 1}),
    # a child only some blocks build, and a residual only some add: the input the residual reads kept as
    # `shortcut`, the child applied in place under `if`, the residual on a flag
    Shape("residual_and_optional_child", _model(models.ExpandingBlocks), _image, _trace, frozenset({"ExpandingBlock"}),
          counts={"shortcut = x": 1, "if self.expand is not None:\n            x = self.expand(x)": 1, "if self.residual:": 2,
                  "return x + shortcut": 1, "ExpandingBlock(3, 4, stride=2)": 1, "self.residual = stride == 1": 1, "residual=True": 0}),
    # by torch.export, the block without the child writes the source line whole (`x = self.project(F.relu(self.dw(x)))`),
    # the others as three statements: one code
    Shape("residual_and_optional_child_export", _model(models.ExpandingBlocks), _image, _export, frozenset({"ExpandingBlock"}),
          counts={"shortcut = x": 1, "if self.residual:": 2, "x = self.dw(x)": 1, "self.project(F.relu(": 0}),
    # timm's pit: a tuple input unpacked into its own name, a child threading both items only some stages build,
    # and a last stage whose caller reads one output (torch.export leaves its other out): one class
    Shape("threaded_optional_child_export", _model(models.TokenStages), _image, _export, frozenset({"TokenStage", "TokenPool"}),
          counts={"def forward(self, x):\n        x, cls_tokens = x": 1, "if self.pool is not None:\n            x, cls_tokens = self.pool(x, cls_tokens)": 1,
                  "cls_tokens = x[:, :1]": 1, "if self.use_reshape:": 1, "return cls_tokens": 1, "x_1": 0,
                  # it returns `x, cls_tokens` as the source does (returned_values), so each stage passes the next its tuple
                  "x = self.stages[0]((x, cls_tokens))": 1, "x = self.stages[1](x)": 1, "return (x, cls_tokens)": 1}),
    # from a review: optional children that do not tell apart the blocks adding a residual are no branch between
    # their codes (the blocks without `pre` or `post` ran the residual's code)
    Shape("optional_children_apart_from_a_residual", _model(models.PreExpandingBlocks), _image, _trace, frozenset({"PreExpandingBlock"})),
    Shape("optional_children_apart_from_a_residual_export", _model(models.PreExpandingBlocks), _image, _export, frozenset({"PreExpandingBlock"})),
    # literals torch.export bakes in where the source passes `self.num_heads`: parameters of that name
    Shape("literals_named_from_the_source_export", _model(models.HeadsStack), lambda: (torch.randn(2, 5, 8),), _export, frozenset({"HeadsAttention"}),
          counts={"self.num_heads = num_heads": 1, "reshape(2, 5, 3, self.num_heads, self.head_dim)": 1, "_value": 0, "HeadsAttention(2, 4)": 1}),
    # ... a dimension the forward unpacks from a shape, by convention (`B, C, H, W = x.shape`), a square map's side
    # `resolution`, a slice bound after the attribute the source slices by
    Shape("literals_named_by_convention_export", _model(models.TokenMixers), _tokens_image, _export, frozenset({"TokenMixer"}),
          counts={"reshape(2, self.channels, self.resolution, self.resolution)": 1, "x[:, : self.split] * 2": 1, "x[:, self.split :]": 1,
                  "self.value": 0}),
    Shape("literals_named_by_convention_apart_export", _model(models.TokenMixers), _tokens_tall, _export, frozenset({"TokenMixer"}),
          counts={"reshape(2, self.channels, self.height, self.width)": 1, "self.value": 0}),
    # an input kept for a residual after its shape is read: kept under the source's name, the input's name rebound
    Shape("input_kept_after_a_shape_read", _model(models.ShapeKeptBlocks), _tokens, _trace, frozenset({"ShapeKeptBlock"}),
          counts={"shortcut = x": 1, "x = self.norm(x)": 1, "return shortcut + x": 1, "out = ": 0}),
    Shape("input_kept_after_a_shape_read_export", _model(models.ShapeKeptBlocks), _tokens, _export, frozenset({"ShapeKeptBlock"}),
          counts={"shortcut = x": 1, "x = self.norm(x)": 1, "return shortcut + x": 1, "out = ": 0}),
    # a child's child called from a method of the child (timm's `self.rel_pos.get_bias()`) is not the child's call
    # in the arm not taken (`attn = self.rel_pos(attn)`): not named `attn`; gates indexed after a tuple a child
    # returns are not its unpacking
    Shape("method_of_a_child", _model(models.HybridBlocks), _tokens, _trace, frozenset({"HybridBlock", "GatedMixer"}),
          counts={"attn = ": 0, "alpha = torch.sigmoid(self.alpha)": 1, "alpha[0]": 1}),
    Shape("optional_child_after_a_residual", _model(models.PostExpandingBlocks), _image, _trace, frozenset({"PreExpandingBlock", "PreExpandingBlock_1"})),
    # dynamo: paths under the root, not a module named "L['self']"; a block's tensors, passed in, named by their path in it
    Shape("dynamo_module", _model(models.ResNetLike), _image, _dynamo, frozenset({"BasicBlock", "BasicBlock_1"}), inline=DYNAMO_INLINE,
          counts={"L['": 0, "getattr(": 0, "self.layer1 = nn.Sequential(BasicBlock(), BasicBlock())": 1, "self.layer1[0](": 1,
                  "def forward(self, x, conv1_weight, bn1_running_mean, bn1_running_var, bn1_weight, bn1_bias, conv2_weight,": 2,
                  "downsample_1_running_mean,": 2, "F.conv2d(x, conv1_weight, None,": 2}),
    # messages symbolic_trace formatted a size into ("Proxy(getitem_2)"): formatted again from the size, one class
    Shape("traced_messages", _model(models.CheckedPyramid), _image, _trace, frozenset({"CheckedPatches"}),
          counts={"Proxy(": 0, "\"Input height ({}) doesn't match model ({}).\".format(": 1, "self.value = value": 1,
                  "CheckedPatches(8)": 1, "CheckedPatches(4)": 1, "\"expected 4D input (got {}D input) {{}}\".format(x.ndim)": 1,
                  "del out": 0}),
    # one instance: its number stays in the message
    Shape("traced_message_once", _model(models.CheckedPatches), _image, _trace, frozenset(),
          counts={"Proxy(": 0, "\"Input height ({}) doesn't match model (8).\".format(out)": 1, "del out": 0}),
    Shape("named_like_dynamo_roots", _model(models.NamedLikeDynamoRoots), _rows, _trace, frozenset({"Leaf"}),
          counts={"""getattr(self, "L['self']")(x)""": 1, """getattr(self, "G['m']")(""": 1}),
    # numbered children of a container: their tensors named after it; the model's input `x` where dynamo says `L_x_`
    Shape("dynamo_numbered_children", _model(models.StackedNorms), _rows, _dynamo, frozenset({"ScaledNorm", "AddingStack"}),
          counts={"def forward(self, x, norm1_weight, norm1_bias, norm1_weight_1):": 1,
                  "def forward(self, x, stack_0_norm1_weight, stack_0_norm1_bias, stack_0_norm1_weight_1,": 1, "(L_x_,": 1}),
    Shape("dynamo_argument_named_training", _model(models.StackedNorms), _rows, _dynamo_argument_named_training,
          frozenset({"ScaledNorm", "ScaledNorm_1", "AddingStack", "StackedNorms"}), counts={"""getattr(self, "L['training']")(""": 1}),
    Shape("dynamo_function", _model(models.ResNetLike), _image, _dynamo_function, frozenset({"BasicBlock", "BasicBlock_1", "ResNetLike"}),
          inline={f"model.{path}": reason for path, reason in DYNAMO_INLINE.items()},
          counts={"L['": 0, "getattr(": 0, "self.model = ResNetLike()": 1, "stem_0_weight,": 2, "layer2_0_downsample_1_bias,": 2}),
    # torch.export's grad and autocast regions (higher-order ops with a body each): `with` blocks, where the source has them
    Shape("with_blocks_export", _model(models.ModeBlocks), lambda: (torch.randn(2, 3, 4),), _export, frozenset({"ModeAttention"}),
          counts={"torch.ops": 0, "submod": 0, 'with torch.autocast("cpu", enabled=False):': 1, "with torch.no_grad():": 1,
                  'with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):': 1, "self.head = nn.Linear(4, 4)": 1, "for block in self.blocks:": 1}),
    # children built by a generated class, differing deep inside (a norm or a bias in the main branch's convolutions): passed whole
    Shape("deep_children_passed", _model(models.InvertedNet), _image, _trace, frozenset({"NormedConv", "Inverted", "Residual", "InvertedStage"}),
          counts={"def __init__(self, main, use_shortcut=True) -> None:": 1, "Residual(main=Inverted(": 5}),
    Shape("deep_children_passed_export", _model(models.InvertedNet), _image, _export, frozenset({"NormedConv", "Inverted", "Residual", "InvertedStage"}),
          counts={"def __init__(self, main, residual=True) -> None:": 1, "Residual(main=Inverted(": 5}),
    # dynamo records a `with` as calls that change the mode and restore it: the same blocks
    Shape("with_blocks_dynamo", _model(models.ModeBlocks), lambda: (torch.randn(2, 3, 4),), _dynamo, frozenset({"ModeAttention"}),
          counts={"_set_grad_enabled": 0, "_enter_autocast": 0, "_exit_autocast": 0, 'with torch.autocast("cpu", enabled=False):': 1,
                  "with torch.no_grad():": 1, 'with torch.autocast("cpu", dtype=torch.bfloat16):': 1}),
    # a cast to the dtype a value has is the value: its memory is freed where the cast's value dies
    Shape("cast_to_its_own_dtype_export", _model(models.Upcast), _rows, _export, frozenset(),
          counts={"b = a.to(torch.float32) del": 0, "c = self.lin2(b) del a, b": 1}),
    # dynamo's graph holds no module: one is made at every path its calls name, none standing for another
    Shape("dynamo_deep_holders", _model(models.DeepStack), lambda: (torch.randn(2, 4, 6, 6),), _dynamo,
          frozenset({"DeepResidual", "DeepResidual_1", "Residual", "DeepBody", "DeepBody_1", "NormedConv", "NormedConv_1", "NormedConv_2"}),
          inline={path: "not its children called one after another" for path in ("blocks.0.main.main.body", "blocks.1.main.main.body",
                  "blocks.1.main.main.body.1", "blocks.1.main.main.body.1.1", "blocks.2.main.main.body")}),
    # tensor constants torch.export lifted, numbered over the model: numbered within their block, one class
    Shape("lifted_constants_export", _model(models.OffsetBlocks), _rows, _export, frozenset({"OffsetBlock"}),
          counts={"self.lifted_tensor_0 = torch.empty(4)": 1, "self.lifted_tensor_1 = torch.empty(4)": 1, "lifted_tensor_2": 0,
                  "for block in self.blocks:": 1}),
    # literals that differ between instances, named after the attribute the source passes in their place: a
    # function's argument, read from the class's forward where the graph quotes no source line (symbolic_trace;
    # an operand is not: which statement of the forward computed it is not known)
    Shape("literals_named_from_the_source_forward", _model(models.ScaledDropBlocks), lambda: (torch.randn(2, 8),), _trace, frozenset({"ScaledDropBlock"}),
          counts={"self.groups = groups": 1, "view(-1, self.groups, self.width)": 1, "p=self.p": 1, "x = self.fc(x) * self.value": 1}),
    # by torch.export, an operand too, named from the quoted line (`* self.scale`); the dropout's line is not quoted
    # (the generated statement reads as it): its `p` read from the forward
    Shape("literals_named_from_the_source_forward_export", _model(models.ScaledDropBlocks), lambda: (torch.randn(2, 8),), _export, frozenset({"ScaledDropBlock"}),
          counts={"self.p = p": 1, "self.scale = scale": 1, "* self.scale": 1, "F.dropout(x, self.p": 1, "view(-1, self.groups, self.width)": 1,
                  "value": 0}),
    # symbolic_trace: `unbind(0)` of a tensor the graph reshaped to 3 there, whatever the input, is unpacked (its
    # items named as the source forward's statements, recovered); the literals the source passes as `self.num_heads`
    # and `self.head_dim` take those names from its forward
    Shape("unbind_of_a_fixed_size", _model(models.HeadsStack), lambda: (torch.randn(2, 5, 8),), _trace, frozenset({"HeadsAttention"}),
          counts={"q, k, v = qkv.unbind(0)": 1, "unbind[": 0, "reshape(B, N, 3, self.num_heads, self.head_dim)": 1}),
    # from a review: an in-place op changes the shape the view fixed before `unbind`: its items stay indexed
    Shape("unbind_after_an_in_place_shape_change", _model(models.ShapeChangedInPlace), lambda: (torch.randn(6),), _trace, frozenset(),
          counts={"unbind[0] + unbind[1]": 1, "unbind_1[0]": 1}),
    # an input the source keeps as `shortcut` first and then rebinds to its children's values (timm's ResNet blocks)
    # is written so, where the graph named the chain `out`: by torch.export the lines then read as the lines they quote
    Shape("input_kept_as_in_the_source", _model(models.KeptInputBlocks), _image, _trace, frozenset({"KeptInputBlock"}),
          counts={"shortcut = x": 1, "x = self.conv1(x)": 1, "shortcut = self.downsample(shortcut)": 1, "out =": 0}),
    Shape("input_kept_as_in_the_source_export", _model(models.KeptInputBlocks), _image, _export, frozenset({"KeptInputBlock"}),
          counts={"shortcut = x": 1, "x = self.conv1(x)": 1, "shortcut = self.downsample(shortcut)": 1, "out =": 0}),
    # a value the source keeps under another name at once and then rebinds (transformers' decoder layers:
    # `hidden_states = residual + hidden_states`, `residual = hidden_states`), where the graph named it `residual`;
    # one class: the first layer's input is the model's `hidden_states`, the second's `x` for want of a name
    # (symbolic_trace) or read from the statements (torch.export), and they agree on the source's parameter
    Shape("value_kept_as_in_the_source", _model(models.KeptValueLayers), lambda: (torch.randn(2, 3, 8),), _trace, frozenset({"KeptValueLayer"}),
          counts={"residual = hidden_states": 2, "hidden_states = residual + hidden_states": 1, "return residual + hidden_states": 1,
                  "hidden_states = self.post_attention_layernorm(hidden_states)": 1, "out =": 0}),
    Shape("value_kept_as_in_the_source_export", _model(models.KeptValueLayers), lambda: (torch.randn(2, 3, 8),), _export, frozenset({"KeptValueLayer"}),
          counts={"residual = hidden_states": 2, "hidden_states = residual + hidden_states": 1, "return residual + hidden_states": 1,
                  "hidden_states = self.post_attention_layernorm(hidden_states)": 1, "out =": 0}),
    # blocks given values their parameters name otherwise (the model's `tgt` as the first block's `x`, the block
    # before's value as the others'; a computed `memory`): one class, its inputs named and ordered as the source's
    Shape("inputs_named_otherwise_by_the_model", _model(models.ForeignNamedInputs), _foreign, _trace, frozenset({"MaskedMemoryBlock"}),
          counts={"def forward(self, x, memory, mask):": 1, "tgt = block(tgt, memory, mask)": 1}),
    Shape("inputs_named_otherwise_by_the_model_export", _model(models.ForeignNamedInputs), _foreign, _export, frozenset({"MaskedMemoryBlock"}),
          counts={"def forward(self, x, memory, mask):": 1, "tgt = block(tgt, memory, mask)": 1}),
    # one attention class given its input only (encoder), a mask too, or the encoder's states (decoder), as
    # Whisper's: one forward taking both, each defaulting to None, callers passing the mask by keyword
    Shape("optional_inputs_of_one_forward", _model(models.EncoderDecoder), _seq, _trace, frozenset({"SeqAttention", "SeqEncoderLayer", "SeqDecoderLayer"}),
          counts=OPTIONAL_INPUTS),
    Shape("optional_inputs_of_one_forward_export", _model(models.EncoderDecoder), _seq, _export,
          frozenset({"SeqAttention", "SeqEncoderLayer", "SeqDecoderLayer"}), counts=OPTIONAL_INPUTS),
    # the same with lines short enough to hold a whole statement: those reading the encoder's states (`x_1`) are
    # written as those reading the input (`x`) are, one statement a line, so the forms compare line by line
    Shape("optional_inputs_in_short_lines_export", _model(models.ShortEncoderDecoder), _seq, _export,
          frozenset({"ShortAttention", "SeqEncoderLayer", "SeqDecoderLayer"}),
          counts={"def forward(self, hidden_states, key_value_states=None, attention_mask=None):": 1, "k = self.k(key_value_states).view(1, -1, 2, 8).transpose(1, 2)": 1,
                  "variant": 0}),
    # attentions the model calls with its own inputs (`mem`, `msk`), whose names say nothing and are written in
    # strings of its input checks ("src" holds the `c` of `self.c`): one class, the mask passed by keyword
    Shape("optional_inputs_given_model_inputs", _model(models.DirectAttentions), _direct, _trace, frozenset({"SeqAttention"}),
          counts=DIRECT_INPUTS),
    Shape("optional_inputs_given_model_inputs_export", _model(models.DirectAttentions), _direct, _export, frozenset({"SeqAttention"}),
          counts=DIRECT_INPUTS),
    # decoder layers only: no attention is given its input alone, each a mask or the encoder's states; one class
    # all the same, the shortest form read off a longer one with its input absent
    Shape("optional_inputs_without_the_shortest", _model(models.DecoderStack), _direct, _trace, frozenset({"SeqAttention", "SeqDecoderLayer"}),
          counts=DECODER_INPUTS),
    Shape("optional_inputs_without_the_shortest_export", _model(models.DecoderStack), _direct, _export,
          frozenset({"SeqAttention", "SeqDecoderLayer"}), counts=DECODER_INPUTS),
    Shape("inputs_named_within_each_form", _model(models.MaskedDecoder), _masked, _trace, frozenset({"SeqAttention", "MaskedDecoderLayer"}),
          counts=MASKED_DECODER),
    Shape("inputs_named_within_each_form_export", _model(models.MaskedDecoder), _masked, _export,
          frozenset({"SeqAttention", "MaskedDecoderLayer"}), counts=MASKED_DECODER),
    # BART's: the cross-attention's states read through `current_states = key_value_states if is_cross_attention
    # else hidden_states` are `key_value_states`; the layer, whose forward its base class defines, names what it
    # passes on as its source (`encoder_hidden_states`), its statements found in the base's code
    Shape("states_chosen_by_a_flag", _model(models.CrossFlagDecoder), _masked, _trace,
          frozenset({"CrossFlagAttention", "CrossFlagDecoderLayer"}), counts=MASKED_DECODER),
    Shape("states_chosen_by_a_flag_export", _model(models.CrossFlagDecoder), _masked, _export,
          frozenset({"CrossFlagAttention", "CrossFlagDecoderLayer"}), counts=MASKED_DECODER),
    # Whisper's: the attention's self- and cross-attention forms take two inputs each, the second another parameter
    # (`attention_mask`, `key_value_states`): the layer names what it passes after each code's own names
    Shape("forms_taking_as_many_inputs", _model(models.SameCountDecoder), _same_count, _trace, frozenset({"SeqAttention", "SameCountDecoderLayer"}),
          counts=SAME_COUNT),
    Shape("forms_taking_as_many_inputs_export", _model(models.SameCountDecoder), _same_count, _export,
          frozenset({"SeqAttention", "SameCountDecoderLayer"}), counts=SAME_COUNT),
    # from a review: a tree's nodes given `ctx` by one caller and `mask` by another name their second input apart
    # for their callers only; named so themselves, they would not join under a flag
    Shape("forms_taking_as_many_inputs_join_under_a_flag", _model(models.OptionalTree), _two_rows, _trace,
          frozenset({"OptionalNode", "OptionalNodeWithKids", "OptionalNodeWithKids_1"}), counts={"def forward(self, x, x_1):": 3}),
    # from a review: a statement reading a local the source binds to one of two parameters by a test for None
    # (`current = key_value_states if ... else hidden_states`) reads both: no input is named after the other
    # parameter it reads by elimination (the states computed for the cross-attention were `attention_mask`)
    Shape("states_not_named_as_the_mask", _model(models.KeywordOnlyPair), _rows_and_mask, _trace, frozenset({"KeywordOnlyAttention"}),
          counts={"key_value_states=attention_mask": 0, "key_value_states=mul": 1}),
    Shape("model_inputs_not_named_as_each_other", _model(models.MemoryThenMask), _direct, _trace, frozenset({"BareAttention", "BareAttention_1"}),
          counts={"def forward(self, x, mem, m):": 1, "attention_mask, attention_mask": 0, "self.a(x, mem)": 1}),
    Shape("model_inputs_not_named_as_each_other_export", _model(models.MemoryThenMask), _direct, _export,
          frozenset({"BareAttention", "BareAttention_1"}), counts={"def forward(self, x, mem, m):": 1, "attention_mask, attention_mask": 0, "self.a(x, mem)": 1}),
    # torch.export: an input the statements read under the name the source keeps it as first (GPT-2's
    # `attn_output + residual`) is named after the parameter, and then kept as the source keeps it
    Shape("input_read_under_its_kept_name_export", _model(models.AliasReadBlocks), lambda: (torch.randn(2, 3, 8),), _export,
          frozenset({"AliasReadBlock"}), counts={"def forward(self, hidden_states)": 1, "residual = hidden_states": 1,
                                                 "hidden_states = self.ln_1(hidden_states)": 1, "attn_output = self.attn(hidden_states)": 1,
                                                 "attn_output + residual": 1}),
    # torch.export: a chain the source binds to `x_se` statement by statement, its last value computed inside the
    # return (`return x * self.gate(x_se)`), takes the source's name, not `out`
    Shape("chain_named_up_to_its_return_export", _model(models.NamedSqueezes), lambda: (torch.randn(2, 8, 4, 4),), _export,
          frozenset({"NamedSqueeze"}), counts={"x_se = self.conv_reduce(x_se)": 1, "x_se = self.conv_expand(x_se)": 1, "out =": 0}),
    # from a review: a literal first where its place has no name (a starred argument), then where the source names it
    Shape("literal_named_at_a_later_place", _model(models.RolledHeadsPair), lambda: (torch.randn(2, 12),), _trace, frozenset({"RolledHeads"}),
          counts={"self.heads = heads": 1, "x = x.reshape(x.shape[0], -1, self.heads)": 1, "torch.roll(x, self.heads, 1)": 1, "value": 0}),
    # symbolic_trace, statements recovered: an input read by a statement reading two named after the one it is
    # passed as (timm pit's ConvHeadPooling as its export writes it, which its next export reads)
    Shape("input_named_as_passed_on", _model(models.PassedOnHeads), lambda: (torch.randn(2, 4, 3, 3),), _trace, frozenset({"PassedOnHead"}),
          counts={"def forward(self, x, cls_token):": 1, "return (self.conv(x), self.fc(cls_token))": 1}),
    # blocks passed in by each caller (they differ in more than literals), as many as each stage has: one class
    Shape("containers_passed_in_of_other_lengths_export", _model(models.DownStages), lambda: (torch.randn(1, 8, 16, 16),), _export,
          frozenset({"DownStage", "ActBlock"}), counts={"DownStage(blocks=nn.Sequential(ActBlock(act=nn.GELU())))": 1, "self.blocks = blocks": 1}),
    # symbolic_trace, statements recovered: a statement pairing names with calls names each call's value
    Shape("names_paired_with_calls", _model(models.NormedHeadsStack), lambda: (torch.randn(2, 5, 8),), _trace, frozenset({"NormedHeads"}),
          counts={"q, k, v = qkv.unbind(0)": 1, "q = self.q_norm(q)": 1, "k = self.k_norm(k)": 1, "F.scaled_dot_product_attention(q, k, v)": 1}),
    # ... and names with the items it indexes (torchvision swin's `q, k, v = qkv[0], qkv[1], qkv[2]`), by either producer
    Shape("names_paired_with_items", _model(models.IndexedHeadsStack), lambda: (torch.randn(2, 5, 8),), _trace, frozenset({"IndexedHeads"}),
          counts={"q = qkv[0]": 1, "k = qkv[1]": 1, "v = qkv[2]": 1, "(attention @ v)": 1, "getitem": 0}),
    Shape("names_paired_with_items_export", _model(models.IndexedHeadsStack), lambda: (torch.randn(2, 5, 8),), _export,
          frozenset({"IndexedHeads"}), counts={"q = qkv[0]": 1, "k = qkv[1]": 1, "v = qkv[2]": 1, "(attention @ v)": 1, "getitem": 0}),
    # values made inside the functions a forward calls are named by those functions' statements, where the graph
    # recorded their frames (dynamo, strict torch.export) or they are matched with them (called_functions.py:
    # torch.export's default records the forwards' alone); the forward's own statement names what it assigns
    # (`q_embed` and `k_embed`: `query_states, key_states = ...` assigns two)
    Shape("names_of_called_functions_export_strict", _model(models.RotaryStack), _rotary, _export_strict, frozenset({"RotaryHeads"}),
          counts={"cos = cos.unsqueeze(1)": 1, "sin = sin.unsqueeze(1)": 1, "q_embed = query_states * cos": 1,
                  "k_embed = key_states * cos": 1, "x1 = query_states[": 1, "F.scaled_dot_product_attention(q_embed, k_embed, k_embed)": 1}),
    Shape("names_of_called_functions_export", _model(models.RotaryStack), _rotary, _export, frozenset({"RotaryHeads"}),
          counts={"cos = cos.unsqueeze(1)": 1, "sin = sin.unsqueeze(1)": 1, "q_embed = query_states * cos": 1,
                  "k_embed = key_states * cos": 1, "x1 = query_states[": 1, "F.scaled_dot_product_attention(q_embed, k_embed, k_embed)": 1}),
    # a value reading two values its own statement computed starts that statement's result (transformers'
    # `attn_output, attn_weights = attention_interface(...)`: the attention of the key and value it repeated), so
    # the key it repeats first is not named `attn_output`
    Shape("result_of_a_statement_unpacked_starts_where_its_parts_meet", _model(models.LocalAttentionStack), lambda: (torch.randn(2, 3, 4),),
          _export, frozenset({"LocalAttention"}), counts={"attn_output = self.k(x)": 0, "attn_output = F.scaled_dot_product_attention(q, ": 1}),
    # fxexport.trace records the frames of the functions a forward calls too
    Shape("names_of_called_functions_traced", _model(models.RotaryStack), _rotary, _trace_recording_lines, frozenset({"RotaryHeads"}),
          counts={"cos = cos.unsqueeze(1)": 1, "q_embed = query_states * cos": 1, "x1 = query_states[": 1}),
    # from a review: the items of a tuple a called function returns take the forward's names (its statement reads
    # them apart: `a, b = split_halves(x * 3)`), and `doubled(c)`'s `c` is not the forward's `c`
    Shape("names_around_called_functions_export_strict", _model(models.CalledPairsStack), lambda: (torch.randn(2, 8),), _export_strict,
          frozenset({"CalledPairs"}), counts={"a, b = ": 1, "        c = ": 0}),
    # ... or as the items of the tuple a function takes first (timm cait's `torch.cat((x_cls, x), dim=1)`)
    Shape("inputs_named_as_items_passed_on", _model(models.ClassTokenCats), lambda: (torch.randn(2, 3, 4),), _trace, frozenset({"ClassTokenCat"}),
          counts={"def forward(self, x_cls, x):": 1}),
    # traced recording each node's statement: the values take the source's names, as by torch.export
    Shape("source_names_of_a_trace_recording_lines", _model(models.HeadsStack), lambda: (torch.randn(2, 5, 8),), _trace_recording_lines,
          frozenset({"HeadsAttention"}), counts={"q, k, v = qkv.unbind(0)": 1, "x = F.scaled_dot_product_attention(q, k, v)": 1,
                                                 # `B, N, C = x.shape`, whose length symbolic_trace does not know: its items named
                                                 "B, N, C = x.shape[:3]": 1, "reshape(B, N, 3, self.num_heads, self.head_dim)": 1, "getitem": 0}),
    # the items of `x, cls_tokens = x` taken the other way round (`cls_tokens` read first, then both by one
    # statement): named by what the statements reading each read, once the other is set aside; one class
    Shape("tuple_items_read_the_other_way_round", _model(models.CountedTokenStages), lambda: (torch.randn(2, 3, 8, 8),),
          _trace_recording_lines, frozenset({"CountedTokenStage", "TokenPool"}), counts={"def forward(self, x):\n        x, cls_tokens = x": 1, "x_1": 0}),
    # numbered children the graph holds no call of are nn.Identity where they were: a Sequential whose first computed
    # nothing is still called as one, a ModuleList of unused identities indexed (not `getattr(self.transition, "2")`)
    Shape("children_skipped_by_the_graph", _model(models.SkippedChildren), lambda: (torch.randn(2, 4, 8, 8),), _trace,
          frozenset({"Branches"}), counts=SKIPPED),
    Shape("children_skipped_by_the_graph_export", _model(models.SkippedChildren), lambda: (torch.randn(2, 4, 8, 8),), _export,
          frozenset({"Branches"}), counts=SKIPPED),
    # ... but children keyed by numbers far apart (a ModuleDict's "224" and "384") are no list with 383 entries left out
    Shape("children_numbered_far_apart", _model(models.ResolutionHeads), _rows, _trace, frozenset(), counts={"nn.Identity()": 0, "nn.ModuleList": 0}),
    # blocks run modules their model holds and hands them (timm's CoaT): symbolic_trace records the calls, and its
    # GraphModule holds the modules, under the model's names only; each block runs them as attributes of its own
    Shape("modules_held_elsewhere", _model(models.SharedModuleStages), lambda: (torch.randn(2, 5, 4),), _trace,
          frozenset({"SharingBlock", "SharingAttention", "SharedPosConv", "SharedRelPos"}), counts=HELD_ELSEWHERE),
    # torch.export holds them at each place, as the model does: the blocks hold them as children
    Shape("modules_held_elsewhere_export", _model(models.SharedModuleStages), lambda: (torch.randn(2, 5, 4),), _export,
          frozenset({"SharingBlock", "SharingAttention", "SharedPosConv", "SharedRelPos"}), counts={"object.__setattr__": 0, "x = self.pos(x)": 1},
          inline={p: "recorded no call" for p in ("pos1.proj", "pos2.proj", *(f"rel{i}.conv_list.{j}" for i in (1, 2) for j in (0, 1)))}),
    # ... also where the tracer keeps the module a leaf: no graph of its holder calls it, it is still built as its class
    Shape("modules_held_elsewhere_as_leaves", _model(models.SharedModuleStages), lambda: (torch.randn(2, 5, 4),), _trace_pos_leaves,
          frozenset({"SharingBlock", "SharingAttention", "SharedPosConv", "SharedRelPos"}),
          counts={"self.pos1 = SharedPosConv(4)": 1, "self.pos2 = SharedPosConv(8)": 1, "x = self.pos(x)": 1, "object.__setattr__(": 8}),
    # ... where a block holds a child under the name it would run such a module as, it stays inline
    Shape("module_held_elsewhere_by_a_taken_name", _model(lambda: models.NamedShared("fc1")), lambda: (torch.randn(2, 5, 4),), _trace,
          frozenset({"SharedPosConv"}), inline={f"blocks.{i}": "has no free attribute to run it as" for i in range(2)},
          counts={"object.__setattr__": 0}),
]  # fmt: skip


@dataclass
class Exported:
    source: nn.Module
    gm: fx.GraphModule
    args: tuple[Any, ...]
    folder: Path
    text: str
    model: nn.Module


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Exported]:
    root = tmp_path_factory.mktemp("structure")
    sys.path.insert(0, str(root))
    out = {}
    for shape in SHAPES:
        source, args = shape.model(), shape.args()
        gm = shape.capture(source, args)
        args = _GRAPH_INPUTS.get(id(gm), args)
        fxexport.export(gm, root / shape.name)
        model = importlib.import_module(shape.name).FxModule()
        out[shape.name] = Exported(source, gm, args, root / shape.name, (root / shape.name / "module.py").read_text(), model)
    yield out
    sys.path.remove(str(root))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_outputs_equal_the_source_graph_bit_for_bit(shape: Shape, exported: dict[str, Exported]) -> None:
    item = exported[shape.name]
    with torch.no_grad():
        ours, source = (pytree.tree_flatten(out) for out in (item.model(*item.args), item.gm(*item.args)))  # dynamo's graphs return tuples
    assert ours[1] == source[1] and all(torch.equal(a, b) for a, b in zip(ours[0], source[0], strict=True))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_training_flags_are_the_source_graphs(shape: Shape, exported: dict[str, Exported]) -> None:
    item = exported[shape.name]
    source = expected_training(item.gm)  # a torch.export graph's modules in the mode its layers' ops ran in
    ours = {k: m.training for k, m in item.model.named_modules(remove_duplicate=False)}
    shared = source.keys() & ours.keys()  # a stateless module the graph traced through may not be held
    assert {k: ours[k] for k in shared} == {k: source[k] for k in shared}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_one_class_per_kind_of_module(shape: Shape, exported: dict[str, Exported]) -> None:
    classes = re.findall(r"^class (\w+)\(\s*(?:nn\.\w+|\w+)\s*\)", exported[shape.name].text, re.MULTILINE)
    assert len(classes) == len(set(classes))  # a second class of one name would replace the first
    assert set(classes) - {"FxModule"} == shape.classes


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_modules_left_inline_are_listed_with_the_reason(shape: Shape, exported: dict[str, Exported]) -> None:
    manifest = json.loads((exported[shape.name].folder / "fxexport.json").read_text())
    listed = {entry["path"]: entry["reason"] for entry in manifest["inline_modules"]}
    assert set(listed) == set(shape.inline)
    for path, words in shape.inline.items():
        assert words in listed[path]
        assert f"{path} (" in show(exported[shape.name].folder).report()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_code_reads_like_the_source(shape: Shape, exported: dict[str, Exported]) -> None:
    code = re.sub(r"^ *#.*$", "", exported[shape.name].text, flags=re.MULTILINE)  # the code, not comments quoting the source
    text = re.sub(r"\s", "", code)  # black may have split a call over lines
    assert {t: text.count(re.sub(r"\s", "", t)) for t in shape.counts} == shape.counts


def test_resnet_blocks_are_one_class_indexed_and_callable(exported: dict[str, Exported]) -> None:
    item = exported["resnet_trace"]
    blocks = [item.model.layer1[0], item.model.layer1[1], item.model.layer2[0], item.model.layer2[1]]
    assert {type(b).__name__ for b in blocks} == {"BasicBlock"}
    assert type(item.model.layer1).__name__ == "Sequential" and type(item.model.head).__name__ == "Module"
    x = torch.randn(2, 8, 8, 8, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.equal(item.model.layer1(x), item.source.layer1(x))
        assert torch.equal(item.model.layer2[0](x), item.source.layer2[0](x))
    assert item.model.layer1[0].downsample is None and isinstance(item.model.layer2[0].downsample, nn.Sequential)


def test_a_shared_module_is_one_instance_called_twice(exported: dict[str, Exported]) -> None:
    item = exported["escapes_trace"]
    assert re.search(r"^ +self\.twice = Leaf\(\)$", item.text, re.MULTILINE)
    assert type(item.model.twice).__name__ == "Leaf" and type(item.model.blocks).__name__ == "ModuleList"


def test_modules_held_elsewhere_are_run_not_held(exported: dict[str, Exported]) -> None:
    item = exported["modules_held_elsewhere"]
    block = item.model.blocks2[1]
    assert block.pos is item.model.pos2 and block.attn.rel is item.model.rel2
    assert "pos" not in dict(block.named_children()) and "rel" not in dict(block.attn.named_children())
    assert list(item.model.state_dict()) == list(item.gm.state_dict())
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.equal(block(x), item.source.blocks2[1](x))


@pytest.mark.parametrize("option", [{"structure": "flat"}])
def test_flat_keeps_the_whole_graph_in_one_forward(option: dict[str, str]) -> None:
    gm = fx.symbolic_trace(_model(models.ResNetLike)())
    package, sources = fxexport.generate(gm, package_name="pkg", **option)
    assert [c.name for c in package.classes] == ["FxModule"] and not package.inline_modules
    assert 'getattr(self.layer1, "0").conv1(' in sources["module.py"]  # as before structured exports


def test_an_unknown_structure_is_a_one_line_error() -> None:
    with pytest.raises(fxexport.FxExportError, match="structure must be one of 'structured', 'flat', not 'tree'"):
        fxexport.generate(fx.symbolic_trace(models.MLP()), package_name="pkg", structure="tree")


class _Shadowing(nn.Module):
    """Attributes named like the module-level names the generated code reads."""

    def __init__(self, width: int, act: type[nn.Module] | None) -> None:
        super().__init__()
        self.torch = nn.Linear(width, width)
        self.nn = act() if act else nn.Identity()  # two kinds and an identity: passed whole, as `nn=`

    def forward(self, x):
        return self.nn(self.torch(x))


def test_parameters_never_shadow_the_names_init_reads(tmp_path: Path) -> None:
    model = nn.Sequential(_Shadowing(4, nn.SiLU), _Shadowing(4, None), nn.Linear(4, 8), _Shadowing(8, nn.GELU)).eval()
    fxexport.export(fx.symbolic_trace(model), tmp_path / "shadowing")
    sys.path.insert(0, str(tmp_path))
    try:
        exported = importlib.import_module("shadowing").FxModule()
    finally:
        sys.path.remove(str(tmp_path))
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(exported(x), model(x))
    assert "self.nn = nn_2" in (tmp_path / "shadowing" / "module.py").read_text()


class Stage_1(nn.Module):  # a source class its author numbered, with no `Stage` beside it
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).relu()


class Unit(nn.Module):
    """Two long codes of one source class: two generated classes, the second numbered."""

    def __init__(self, odd: bool) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)
        self.odd = odd

    def forward(self, x):
        for _ in range(5):
            x = torch.tanh(self.a(x)) if self.odd else torch.sin(self.a(x))
        return self.b(x)


class Unit_1(nn.Module):  # a class of its own that happens to look like a variant of Unit
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) * 3


class NumberedNames(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stage = Stage_1()
        self.units = nn.Sequential(Unit(False), Unit_1(), Unit(True))

    def forward(self, x):
        return self.units(self.stage(x))


def test_a_source_class_named_like_a_variant_keeps_its_name_and_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Unit_1` beside `Unit` keeps its name (an earlier export's variant would be named so), and Unit's own
    variant takes another; a numbered name with no class of its base beside it is CapWords, as any other."""
    model = NumberedNames().eval()
    source = _trace(model, _rows())
    fxexport.export(source, tmp_path / "numbered")
    code = (tmp_path / "numbered" / "module.py").read_text()
    classes = dict(re.findall(r"^class (\w+)\((\w+)", code, flags=re.M))
    assert "Stage1" in classes and "Unit_1" in classes and "Unit" in classes
    assert "return self.lin(x) * 3" in code.split("class Unit_1(")[1].split("\nclass ")[0]
    variant = next(name for name, base in classes.items() if name.startswith("Unit_") and name != "Unit_1")
    assert classes[variant] in ("Unit", "nn")
    monkeypatch.syspath_prepend(str(tmp_path))
    exported = importlib.import_module("numbered").FxModule()
    x = _rows()[0]
    assert torch.equal(exported(x), source(x))


def _numbered_root() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 2)).eval()


class _NamedAndNumbered(nn.Module):
    """Children numbered and named: no Sequential, whose index counts every child."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module("0", nn.Linear(4, 8))
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(getattr(self, "0")(x))


class _NumberedWithAppend(nn.Module):
    """Children numbered in order and a parameter named as nn.Sequential's method (helper-70's finding 2:
    an nn.Sequential cannot register it)."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module("0", nn.Linear(4, 8))
        self.add_module("1", nn.Linear(8, 2))
        self.append = nn.Parameter(torch.full((2,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, "1")(getattr(self, "0")(x)) * self.append


ROOTS = [  # (name, model, the root's base)
    ("a Sequential", _numbered_root, "nn.Sequential"),
    ("children numbered and named", lambda: _NamedAndNumbered().eval(), "nn.Module"),
    ("children numbered, a parameter named append", lambda: _NumberedWithAppend().eval(), "nn.Module"),
]


@pytest.mark.parametrize("producer", ["symbolic_trace", "export"])
@pytest.mark.parametrize("name,model,base", ROOTS, ids=[r[0] for r in ROOTS])
def test_a_traced_sequential_is_a_sequential_that_indexes_its_children(name: str, model: Callable[[], nn.Module], base: str, producer: str, tmp_path: Path) -> None:
    """Issue 14's "no getattr(self.x, "0") anywhere", for the root too: a traced nn.Sequential's root
    holds its children numbered in order (torch.export's `_guards_fn` aside)."""
    torch.manual_seed(0)
    source = model()
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    gm = fx.symbolic_trace(source) if producer == "symbolic_trace" else torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "out")
    text = (tmp_path / "out" / "module.py").read_text()
    assert f"class FxModule({base}):" in text
    assert ('getattr(self, "0")' in text) == (base == "nn.Module"), text
    assert ("for layer in self:" in text) == (base == "nn.Sequential")  # its children chained, torch.export's checks aside
    with imported(tmp_path / "out") as package, torch.no_grad():
        ours = package.FxModule()
        assert torch.equal(ours(x), gm(x))
        assert list(ours.state_dict()) == list(source.state_dict())
        if base == "nn.Sequential":
            assert len(ours) == 4 and isinstance(ours[2], nn.Sequential)
            assert torch.equal(ours[3](ours[2](ours[1](ours[0](x)))), gm(x))
