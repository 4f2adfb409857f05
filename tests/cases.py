"""The round-trip case list: one entry per model, each run through every assertion."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import torch
from torch import fx, nn

from tests import models, quantized, shadowing
from tests.producers import PRODUCERS

# One small model per producer joins the golden catalogue.
GOLDEN_PRODUCERS = {"export_mixed", "export_resnet", "export_cond", "export_scoped_regions", "export_dynamic", "decomposed_resnet", "unflatten_mixed", "make_fx_mlp", "make_fx_symbolic",
                    "dynamo_mixed", "dynamo_dynamic", "dynamo_resnet", "concrete_args"}  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], nn.Module]
    args: Callable[[], tuple[Any, ...]]
    kwargs: Callable[[], dict[str, Any]] = field(default=dict)
    seed: int | None = None
    class_name: str = "FxModule"
    refill: bool = True  # False: the builder makes its values CPU-independent itself (quantized models, before calibrating)


def traced(cls: type[nn.Module], train: bool = False) -> Callable[[], fx.GraphModule]:
    def build() -> fx.GraphModule:
        torch.manual_seed(0)
        module = cls()
        module.train(train)
        return fx.symbolic_trace(module)

    return build


def sequential() -> fx.GraphModule:
    torch.manual_seed(0)
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Sequential(nn.Tanh(), nn.Linear(8, 2)))
    return fx.symbolic_trace(seq.eval())


def _randn(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)


def _randns(*shapes: tuple[int, ...]) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(*shape, generator=torch.Generator().manual_seed(1 + i)) for i, shape in enumerate(shapes))


def _tokens(high: int, *shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(0, high, shape, generator=torch.Generator().manual_seed(2)),)


CASES = [
    Case("conv_bn", traced(models.ConvBN), _randn(2, 3, 8, 8)),
    Case("mlp", traced(models.MLP), _randn(3, 16)),
    Case("sequential", sequential, _randn(2, 4)),
    Case("nested_deep", traced(models.Deep), _randn(2, 6)),
    Case("buffers", traced(models.Buffers), _randn(2, 5)),
    Case("tied_weights", traced(models.Tied), _tokens(11, 2, 5)),
    Case("wrapped_function", traced(models.Wrapped), lambda: (torch.ones(2, 4), torch.full((2, 4), 0.5))),
    Case("imported_function", traced(models.ImportedFunction), _randn(2, 3)),
    Case("operators", traced(models.Operators), _randn(2, 3, 4)),
    Case("kwargs", traced(models.Kwargs), _randn(2, 3), lambda: {"bias": torch.ones(3), "scale": 0.5}),
    Case("outputs", traced(models.Outputs), _randn(2, 4)),
    Case("recurrent", traced(models.Recurrent), _randn(2, 3, 5)),
    Case("attention", traced(models.Attention), _tokens(20, 2, 6)),
    Case("dropout_train", traced(models.TrainingDropout, train=True), _randn(4, 8), seed=123),
    Case("convs", traced(models.Convs), lambda: (torch.randn(2, 2, 9), torch.randn(1, 1, 2, 5, 5))),
    Case("frozen", traced(models.Frozen), _randn(2, 4)),
    Case("shared_module", traced(models.Shared), _randn(2, 3)),
    Case("adversarial_names", models.adversarial_names, _randn(2, 3)),
    Case("nested_graph_module", models.nested_graph_module, _randn(2, 4)),
    Case("var_args", traced(models.VarArgs), lambda: (torch.ones(2), 3.0, torch.full((2,), 0.5)), lambda: {"shift": torch.ones(2)}),
    Case("literals", traced(models.Literals), _randn(3, 4)),
    Case("dict_root", models.dict_root, _randn(2, 3), class_name="DictRoot"),
    Case("edited_graph", models.edited_graph, _randn(2, 4)),
    Case("rewritten_graph", models.rewritten_graph, lambda: (torch.ones(3), torch.arange(3.0))),
    Case("pruned_graph", models.pruned_graph, _randn(2, 3)),
    Case("deep_copied", models.deep_copied, _randn(2, 6)),
    Case("unpickled", models.unpickled, _randn(2, 5)),
    Case("user_leaves", models.user_leaves, _randn(3, 4)),
    Case("resnet_like", traced(models.ResNetLike), _randn(2, 3, 8, 8)),
    Case("escapes", traced(models.Escapes), _randn(2, 4)),
    Case("variants", traced(models.Variants), _randn(2, 4)),
    Case("norm_acts", traced(models.NormActs), _randn(2, 4, 3, 3)),
    Case("forward_literals", traced(models.Stages), _randn(2, 4, 3, 3)),
    Case("sequential_with_forward", traced(models.Heads), _randn(2, 4, 3, 3)),
    Case("list_arguments", traced(models.DenseNetLike), _randn(2, 3, 8, 8)),
    Case("child_with_its_code", traced(models.Splits), _randn(2, 4)),
    Case("child_with_its_code_and_literals", traced(models.ShuffledSplits), _randn(2, 4)),
    Case("in_place_children", traced(models.GhostedNet), _randn(2, 4, 8, 8)),
    Case("chain_of_blocks", traced(models.Encoder), _randn(2, 4)),
    Case("optional_elements", traced(models.ExpandingNet), _randn(2, 4, 6, 6)),
    Case("defaulted_input", traced(models.ShortcuttedNet), _randn(2, 4, 8, 8)),
    Case("numbered_blocks", traced(models.BlockStages), _randn(2, 4, 16, 16)),
    Case("defaulted_middle_input", traced(models.Decoding), _randns((2, 5, 8), (2, 5, 8), (5, 5))),
    Case("rolled_loop", traced(models.LoopedPreNorm), _randns((2, 4), (4,))),
    Case("rolled_split_scales", traced(models.SplitScalesNet), _randn(2, 16, 6, 6)),
    Case("rolled_chunks", traced(models.ChunkedConvStages), _randn(2, 12, 6, 6)),
    Case("listed_children", traced(models.MixedConvNet), _randn(2, 8, 12, 12)),
    Case("defaulted_children", traced(models.DefaultedChildren), _randn(2, 4)),
    Case("defaulted_children_without_a_run", traced(models.RepMixerNet), _randn(2, 4, 6, 6)),
    Case("identity_calls", traced(models.DropPathNet), _randn(2, 4)),
    Case("items_after_dead_ones", traced(models.ItemsAfterDeadOnes), _randn(2, 3, 4)),
    Case("renamed_function_calls", traced(shadowing.SumsOfSums), _randn(2, 4)),
    Case("dead_reader", traced(models.DeadReader), _randn(2, 4)),
    Case("traced_messages", traced(models.CheckedPyramid), _randn(2, 3, 8, 8)),
    Case("children_passed_in_with_literals", traced(models.SplitConvNet), _randn(2, 8, 6, 6)),
    Case("list_stages", traced(models.ListStages), _randn(2, 4, 6, 6)),
    Case("named_child_results", traced(models.NamedChildResults), _randn(2, 4, 8, 8)),
    Case("feature_extractor", models.stackless(models.FeatureNet), _randn(2, 3, 8, 8)),
    Case("leaves_in_sequential", models.leaves_in_sequential, _randn(2, 3, 8, 8)),
    Case("folded_constants", traced(models.FrozenNet), _randn(2, 3, 8, 8)),
    Case("reversed_module_list", traced(models.ReversedList), _randn(2, 4)),
    Case("blocks_on_the_graph_input", models.stackless(models.GatedStages), _randn(3, 4)),
    Case("export_feature_extractor", models.exported(models.stackless(models.FeatureNet), 2, 3, 8, 8), _randn(2, 3, 8, 8)),
    Case("sequential_subclasses", traced(models.SequentialSubclasses), _randn(2, 3, 16, 16)),
    Case("named_sequential_levels", traced(models.PooledLevelsNet), _randn(1, 4, 8, 8)),
    Case("global_query_input", traced(models.GlobalQueryNet), _randn(2, 5, 8)),
    Case("optional_child_inputs", traced(models.ReducedStages), _randn(1, 8, 4, 4)),
    Case("query_passed_on", traced(models.PassedQueryNet), _randn(2, 5, 8)),
    Case("encoder_decoder", traced(models.EncoderDecoder), lambda: (*_randns((1, 6, 16), (1, 5, 16))(), torch.ones(5, 5, dtype=torch.bool).tril())),
    Case("masked_decoder", traced(models.MaskedDecoder), _randns((2, 5, 16), (2, 7, 16), (2, 1, 5, 5), (2, 1, 5, 7))),
    Case("preact_basic_blocks", traced(models.PreActBasicBlocks), _randn(2, 4, 8, 8)),
    Case("hybrid_blocks", traced(models.HybridBlocks), _randn(2, 4, 8)),
    Case("bias_passed_or_none", traced(models.BiasPassingHead), _randn(2, 8)),
    Case("weight_normed_layers", traced(models.NormedConvBlocks), _randn(2, 4, 9)),
    Case("norm_bias_passed_or_left_out", traced(models.OptionalBiasNorms), _randn(2, 4)),
    # a parameter the source unpacks (`cos, sin = position_embeddings`), passed on whole, bound whole by the caller
    Case("packed_parameters", traced(models.PassedPairs), _randns((2, 8), (2, 8))),
    # timm's pit: a stage unpacking its tuple into its own name (`x, cls_tokens = x`), stages passing it on
    Case("packed_stages", traced(models.TokenStages), _randn(2, 3, 8, 8)),
    # timm's CoaT: blocks run modules their model holds (and hands them), which the GraphModule holds there only
    Case("shared_modules", traced(models.SharedModuleStages), _randn(2, 5, 4)),
    # ... held by the first of the blocks running it: two variants of one class in a loop, again in a re-export
    Case("module_held_by_a_sibling", traced(models.SiblingHeldPos), _randn(2, 5, 4)),
    # timm twins' blocks: a size tuple passed whole to a leaf attention, and spread (`*size`) by another
    Case("twins_like_blocks", models.twins_like_blocks, _randn(2, 8, 4, 4)),
    # ... timm pvt_v2's: taken apart by index, and unpacked where only some instances read it
    Case("pvt_like_blocks", traced(models.PvtLikeBlocks), _randn(2, 8, 4, 4)),
    *(Case(p.name, p.build, p.args, p.kwargs) for p in PRODUCERS if p.name in GOLDEN_PRODUCERS),
    Case("fx_quantized_mlp", quantized.golden_fx, quantized.coarse_inputs, refill=False),
]
# Cases that need a package torch does not bring: left out (and their golden kept) when it is missing.
OPTIONAL_CASES = [Case("pt2e_quantized_mlp", quantized.golden_pt2e, quantized.coarse_inputs, refill=False)]
CASES += OPTIONAL_CASES if quantized.HAS_TORCHAO else []



def portable(build: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    """The model with every floating tensor refilled from integers, so that its values are the same on
    every CPU: torch's initialisers take vectorised paths (normal_, uniform_ on larger tensors) that
    give other bits under another ATEN_CPU_CAPABILITY, and a golden weight file holds the values."""

    def rebuilt() -> nn.Module:
        model = build()
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for tensor, low in _floating_tensors(model):
                ints = torch.randint(0, 2**10, tuple(tensor.shape), generator=generator)
                tensor.copy_((ints.to(tensor.dtype) / 2**11 + low).to(tensor.dtype))  # exact in every float dtype
        return model

    return rebuilt


def _floating_tensors(model: nn.Module) -> list[tuple[torch.Tensor, float]]:
    """Each floating parameter and constant with values from -0.25, each buffer from 0.5 (running
    variances stay positive); every tensor once."""
    found: dict[int, tuple[torch.Tensor, float]] = {}
    for module in model.modules():
        held = [*((p, -0.25) for p in module._parameters.values()), *((b, 0.5) for b in module._buffers.values())]
        held += [(v, -0.25) for v in vars(module).values() if isinstance(v, torch.Tensor)]
        for tensor, low in held:
            if tensor is not None and tensor.is_floating_point() and tensor.device.type != "meta":
                found.setdefault(id(tensor), (tensor, low))
    return list(found.values())


CASES = [dataclasses.replace(case, build=portable(case.build)) if case.refill else case for case in CASES]

# For specs on the command line: tests.cases:CASES_BY_NAME.<name>.build
CASES_BY_NAME = SimpleNamespace(**{case.name: case for case in CASES})
