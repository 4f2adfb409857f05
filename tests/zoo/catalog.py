"""The zoo: real torchvision, timm and transformers architectures, small and with random weights.

Each entry builds its model lazily (a library is imported only when one of its models is
built) and makes its example inputs. Nothing is downloaded: torchvision `weights=None`,
timm `pretrained=False`, transformers models from small configs with two layers.

A pair (model, producer) that cannot make a GraphModule for a reason outside fxexport is listed
in the entry's `unsupported`, with the reason and a piece of the error the producer raises (a
model that cannot be built at all has producer "build"): the zoo fails on any unlisted
failure, and on a listed pair that works or fails otherwise.
"""

from __future__ import annotations

import importlib
import importlib.util
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
LIBRARIES = ("torchvision", "timm", "transformers")


def always() -> bool:
    return True


@dataclass(frozen=True)
class Unsupported:
    """Why a producer makes no GraphModule of a model (producer "build": the model cannot be built at all)."""

    producer: str
    reason: str
    error: str  # a piece of the error raised, so that a listing which fails otherwise is noticed
    applies: Callable[[], bool] = always  # asked at run time: some reasons hold for one library version only


@dataclass(frozen=True)
class ZooModel:
    name: str
    library: str
    kind: str  # cnn, vit, segmentation, detection, video, encoder, decoder, encoder-decoder
    build: Callable[[], nn.Module]
    inputs: Callable[[], Inputs]
    producers: tuple[str, ...] = ("symbolic_trace", "export")  # "feature_extraction": build() makes the graph
    unsupported: tuple[Unsupported, ...] = ()
    not_fixed_point: str = ""  # why the symbolic_trace export of a re-trace of its export differs (issue 14's fixed point)
    needs: tuple[str, ...] = ()  # libraries its export imports (an operator only they define): checked where they are

    def listed(self, producer: str) -> Unsupported | None:
        """The catalog's reason why `producer` makes no GraphModule here, None when it must make one."""
        return next((u for u in self.unsupported if u.producer in (producer, "build") and u.applies()), None)


# Why a symbolic_trace export is not a fixed point: the re-trace's GraphModule is another than the first.
ATTRIBUTE_ORDER = ("symbolic_trace's GraphModule holds the root's tensors in the order its graph first reads them (timm reads "
                   "pos_embed first); the export keeps that order, its state_dict's, but its forward reads cls_token first, "
                   "so a re-trace holds them, and its state_dict lists them, in another order")
INDEXED_SEQUENTIAL = ("an nn.Sequential the export calls children of rather than itself (it stays inline: its children take tensor "
                      "constants symbolic_trace folded into the root, or the GraphModule holds them in another order than they "
                      "run) is a plain container in a re-trace, which records no call of it")


def image(size: int = 64, frames: int = 0) -> Callable[[], Inputs]:
    shape = (1, 3, frames, size, size) if frames else (1, 3, size, size)
    return lambda: ((torch.randn(*shape, generator=torch.Generator().manual_seed(1)),), {})


def text(*extra: str, length: int = 8) -> Callable[[], Inputs]:
    """`input_ids`, plus `attention_mask` or `decoder_input_ids` when named."""

    def make() -> Inputs:
        ids = torch.randint(1, 100, (1, length), generator=torch.Generator().manual_seed(2))
        made = {"attention_mask": torch.ones_like(ids), "decoder_input_ids": ids[:, :5].clone(), "token_type_ids": torch.zeros_like(ids)}
        return (), {"input_ids": ids, **{k: made[k] for k in extra}}

    return make


def _attr(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


# torchvision --------------------------------------------------------------------------------
def tv(name: str, **kwargs: Any) -> Callable[[], nn.Module]:
    return lambda: _attr(f"torchvision.models.{name}")(weights=None, **kwargs).eval()


def tv_class(dotted: str, **kwargs: Any) -> Callable[[], nn.Module]:
    return lambda: _attr(f"torchvision.models.{dotted}")(**kwargs).eval()


def tv_segmentation(name: str) -> Callable[[], nn.Module]:
    return lambda: _attr(f"torchvision.models.segmentation.{name}")(weights=None, weights_backbone=None, num_classes=5).eval()


def tv_googlenet_outputs() -> nn.Module:
    """GoogLeNet returns its GoogLeNetOutputs namedtuple while the root trains; its layers stay in eval."""
    model = _attr("torchvision.models.googlenet")(weights=None, aux_logits=True, init_weights=True).eval()
    model.training = True
    return model


def tv_fpn(backbone: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        utils = importlib.import_module("torchvision.models.detection.backbone_utils")
        if backbone.startswith("resnet"):
            return utils.resnet_fpn_backbone(backbone_name=backbone, weights=None, trainable_layers=3).eval()
        return utils.mobilenet_backbone(backbone_name=backbone, weights=None, fpn=True, trainable_layers=3).eval()

    return build


def tv_convnext() -> nn.Module:
    config = _attr("torchvision.models.convnext.CNBlockConfig")
    setting = [config(16, 32, 1), config(32, None, 1)]
    return _attr("torchvision.models.convnext.ConvNeXt")(setting, stochastic_depth_prob=0.1).eval()


# The eager model each feature extractor was built from: its GraphModule keeps only the leaf modules, so the
# source classes it is measured against (readability.source_classes) are read from this one.
_EAGER: weakref.WeakKeyDictionary[nn.Module, nn.Module] = weakref.WeakKeyDictionary()


def eager_of(model: nn.Module) -> nn.Module | None:
    """The eager model a feature extractor (`model`, built by the catalog) was built from, else None."""
    return _EAGER.get(model)


def _extracted(extract: Callable[..., nn.Module], model: nn.Module, *args: Any, **kwargs: Any) -> nn.Module:
    extractor = extract(model, *args, **kwargs)
    _EAGER[extractor] = model
    return extractor


def tv_features() -> nn.Module:
    """torchvision's feature extractor, keeping the library's BasicBlock as a leaf module."""
    model = _attr("torchvision.models.resnet18")(weights=None).eval()
    extract = _attr("torchvision.models.feature_extraction.create_feature_extractor")
    return _extracted(extract, model, {"layer2": "c3", "layer4": "c5"}, tracer_kwargs={"leaf_modules": [_attr("torchvision.models.resnet.BasicBlock")]})


FEATURES = ("feature_extraction", "export")

TORCHVISION = [
    ZooModel("tv_resnet18", "torchvision", "cnn", tv("resnet18"), image()),
    ZooModel("tv_resnext50", "torchvision", "cnn", tv("resnext50_32x4d"), image()),
    ZooModel("tv_mobilenet_v2", "torchvision", "cnn", tv("mobilenet_v2", width_mult=0.5), image()),
    ZooModel("tv_mobilenet_v3", "torchvision", "cnn", tv("mobilenet_v3_small"), image()),
    ZooModel("tv_efficientnet_b0", "torchvision", "cnn", tv("efficientnet_b0"), image()),
    ZooModel("tv_squeezenet", "torchvision", "cnn", tv("squeezenet1_1"), image()),
    ZooModel("tv_shufflenet", "torchvision", "cnn", tv("shufflenet_v2_x0_5"), image()),
    ZooModel("tv_mnasnet", "torchvision", "cnn", tv("mnasnet0_5"), image()),
    ZooModel("tv_densenet121", "torchvision", "cnn", tv("densenet121"), image()),
    ZooModel("tv_regnet", "torchvision", "cnn", tv("regnet_x_400mf"), image()),
    ZooModel("tv_convnext", "torchvision", "cnn", tv_convnext, image()),
    ZooModel("tv_googlenet_outputs", "torchvision", "cnn", tv_googlenet_outputs, image()),
    ZooModel("tv_inception_v3", "torchvision", "cnn", tv("inception_v3", aux_logits=False, init_weights=True), image(80)),
    ZooModel("tv_vit", "torchvision", "vit", tv_class("vision_transformer.VisionTransformer", image_size=64, patch_size=16,
             num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64), image()),  # fmt: skip
    ZooModel("tv_swin", "torchvision", "vit", tv_class("swin_transformer.SwinTransformer", patch_size=[4, 4], embed_dim=16,
             depths=[2, 2], num_heads=[2, 2], window_size=[4, 4]), image()),  # fmt: skip
    ZooModel("tv_lraspp", "torchvision", "segmentation", tv_segmentation("lraspp_mobilenet_v3_large"), image()),
    ZooModel("tv_deeplabv3", "torchvision", "segmentation", tv_segmentation("deeplabv3_mobilenet_v3_large"), image()),
    ZooModel("tv_fpn_resnet18", "torchvision", "detection", tv_fpn("resnet18"), image(), not_fixed_point=INDEXED_SEQUENTIAL),
    ZooModel("tv_fpn_mobilenet", "torchvision", "detection", tv_fpn("mobilenet_v3_small"), image(), not_fixed_point=INDEXED_SEQUENTIAL),
    ZooModel("tv_r3d", "torchvision", "video", tv("video.r3d_18"), image(32, frames=4)),
    ZooModel("tv_features_resnet", "torchvision", "detection", tv_features, image(), FEATURES),
]


# timm ---------------------------------------------------------------------------------------
def tm(name: str, **kwargs: Any) -> Callable[[], nn.Module]:
    return lambda: _attr("timm.create_model")(name, pretrained=False, **kwargs).eval()


def tm_class(dotted: str, **kwargs: Any) -> Callable[[], nn.Module]:
    return lambda: _attr(f"timm.models.{dotted}")(**kwargs).eval()


def tm_features(name: str, nodes: dict[str, str]) -> Callable[[], nn.Module]:
    """timm's feature extractor: its registered layers stay leaf modules, its registered functions stay calls."""
    return lambda: _extracted(_attr("timm.layers._fx.create_feature_extractor"), tm(name)(), nodes)


def traced_branch(where: str) -> tuple[Unsupported, ...]:
    """symbolic_trace cannot trace Python control flow on a traced value (torch.export guards or branches instead)."""
    reason = f"{where}, and under symbolic_trace that value is a Proxy"
    return (Unsupported("symbolic_trace", reason, "symbolically traced variables cannot be used as inputs to control flow"),)


TIMM = [
    ZooModel("timm_resnet18d", "timm", "cnn", tm("resnet18d"), image()),
    ZooModel("timm_efficientnet_b0", "timm", "cnn", tm("efficientnet_b0"), image()),
    ZooModel("timm_mobilenetv3", "timm", "cnn", tm("mobilenetv3_small_100"), image()),
    ZooModel("timm_convnext_atto", "timm", "cnn", tm("convnext_atto"), image()),
    ZooModel("timm_regnetx_002", "timm", "cnn", tm("regnetx_002"), image()),
    ZooModel("timm_ghostnet", "timm", "cnn", tm("ghostnet_100"), image()),
    ZooModel("timm_rexnet", "timm", "cnn", tm("rexnet_100"), image()),
    ZooModel("timm_dla34", "timm", "cnn", tm("dla34"), image()),
    ZooModel("timm_cspresnet50", "timm", "cnn", tm("cspresnet50"), image()),
    ZooModel("timm_repvgg_a0", "timm", "cnn", tm("repvgg_a0"), image()),
    ZooModel("timm_vit_tiny", "timm", "vit", tm("vit_tiny_patch16_224", img_size=64, depth=2), image()),
    ZooModel("timm_deit_tiny", "timm", "vit", tm("deit_tiny_distilled_patch16_224", img_size=64, depth=2), image(),
             not_fixed_point=ATTRIBUTE_ORDER),
    ZooModel("timm_swin_tiny", "timm", "vit", tm("swin_tiny_patch4_window7_224", img_size=64, window_size=4, depths=(1, 1, 1, 1),
             embed_dim=16, num_heads=(1, 2, 2, 4)), image(), not_fixed_point=INDEXED_SEQUENTIAL),  # fmt: skip
    ZooModel("timm_levit", "timm", "vit", tm("levit_128s", img_size=64), image()),
    ZooModel("timm_mobilevit", "timm", "vit", tm("mobilevit_xxs"), image(), unsupported=traced_branch(
             "MobileVitBlock.forward branches on the feature map's size (`if new_h != H or new_w != W`: interpolate to a "
             "multiple of the patch size)")),  # fmt: skip
    ZooModel("timm_mixer", "timm", "vit", tm_class("mlp_mixer.MlpMixer", img_size=64, num_blocks=2, embed_dim=64), image()),
    ZooModel("timm_poolformer", "timm", "vit", tm("poolformerv2_s12"), image()),
    ZooModel("timm_coat_lite", "timm", "vit", tm("coat_lite_tiny", img_size=64), image()),
    ZooModel("timm_xcit_nano", "timm", "vit", tm("xcit_nano_12_p16_224", img_size=64, depth=2), image()),
    ZooModel("timm_pit_ti", "timm", "vit", tm("pit_ti_224", img_size=64), image()),
    ZooModel("timm_edgenext", "timm", "cnn", tm("edgenext_xx_small"), image()),
    ZooModel("timm_fastvit", "timm", "cnn", tm("fastvit_t8"), image()),
    ZooModel("timm_efficientvit", "timm", "vit", tm("efficientvit_b0"), image(), unsupported=traced_branch(
             "LiteMLA.forward branches on a tensor's device (`v.device.type != 'meta'`, to turn autocast off)")),  # fmt: skip
    ZooModel("timm_features_efficientnet", "timm", "detection", tm_features("efficientnet_b0", {"bn1": "stem", "bn2": "head"}), image(),
             FEATURES),  # fmt: skip
    ZooModel("timm_features_nfnet", "timm", "detection", tm_features("nfnet_l0", {"stem.act4": "stem", "final_act": "out"}), image(),
             FEATURES),  # fmt: skip
    ZooModel("timm_features_edgenext", "timm", "detection", tm_features("edgenext_xx_small", {"stem.0": "stem", "norm_pre": "out"}),
             image(), FEATURES),  # fmt: skip
    ZooModel("timm_features_twins", "timm", "detection", tm_features("twins_svt_small", {"pos_drops.1": "s2", "norm": "out"}),
             image(), FEATURES),  # fmt: skip
    ZooModel("timm_eva02_tiny", "timm", "vit", tm("eva02_tiny_patch14_224", img_size=56, depth=2), image(56), not_fixed_point=ATTRIBUTE_ORDER),
]


# transformers -------------------------------------------------------------------------------
SMALL = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
         "max_position_embeddings": 64}  # fmt: skip


def hf(model: str, config: str, **settings: Any) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        made = _attr(f"transformers.{config}")(use_cache=False, **settings)  # caches are outputs torch.export cannot return
        return _attr(f"transformers.{model}")(made).eval()

    return build


def gpt(**more: Any) -> dict[str, Any]:
    return {"vocab_size": 100, "n_embd": 32, "n_layer": 2, "n_head": 2, "n_positions": 64, **more}


def seq2seq(**more: Any) -> dict[str, Any]:
    return {"vocab_size": 100, "d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
            "decoder_attention_heads": 2, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "max_position_embeddings": 64,
            "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 1, **more}  # fmt: skip


LLAMA_LIKE = {**SMALL, "num_key_value_heads": 1, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}


def no_hf_tracer() -> bool:
    """transformers 5 removed transformers.utils.fx: "symbolic_trace" then means torch.fx.symbolic_trace."""
    return importlib.util.find_spec("transformers.utils.fx") is None


def hf_tracer() -> bool:
    """transformers 4 (put in front of the venv's, see README.md): "symbolic_trace" means its HFTracer."""
    return not no_hf_tracer()


# Why symbolic_trace makes no GraphModule of a transformers model, with transformers 5 (V5) or 4 (V4, 4.57).
V5, V4 = "transformers 5 has no fx tracer (transformers.utils.fx is gone), and torch.fx.symbolic_trace ", "transformers 4's HFTracer "
REBUILD = ("takes the argument count from the signature that forward's (self, *args, **kwargs) decorators wrap and cannot "
           "rebuild the outer decorator's code with it")  # fmt: skip
WRAPPED = Unsupported("symbolic_trace", V5 + REBUILD, "code: co_varnames is too small", no_hf_tracer)
DEFAULTS = Unsupported("symbolic_trace", V5 + "passes forward's **kwargs as one Proxy, which the merge_with_config_defaults "
                       "decorator assigns into", "'Proxy' object does not support item assignment", no_hf_tracer)  # fmt: skip
WRAPPED_4 = Unsupported("symbolic_trace", V4 + "(a torch.fx Tracer) " + REBUILD, "code: co_varnames is too small", hf_tracer)
KWARGS_4 = Unsupported("symbolic_trace", V4 + "passes None for forward's **kwargs, on which the check_model_inputs decorator "
                       "calls .get", "'NoneType' object has no attribute 'get'", hf_tracer)  # fmt: skip
VMAP_4 = Unsupported("symbolic_trace", V4 + "cannot trace create_causal_mask, which vmaps the mask function over traced "
                     "positions", "but the input is of type <class 'transformers.utils.fx.HFProxy'>", hf_tracer)  # fmt: skip


def not_in_hf_tracer(model: str) -> Unsupported:
    return Unsupported("symbolic_trace", V4 + f"does not support {model} (it is not in the tracer's list of supported models)",
                       f"Model {model} is not supported yet", hf_tracer)  # fmt: skip


TRANSFORMERS = [
    ZooModel("hf_bert", "transformers", "encoder", hf("BertModel", "BertConfig", **SMALL), text("attention_mask", "token_type_ids"),
             unsupported=(DEFAULTS,)),  # fmt: skip
    ZooModel("hf_roberta", "transformers", "encoder", hf("RobertaForMaskedLM", "RobertaConfig", **{**SMALL, "pad_token_id": 0}),
             text("attention_mask"), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_distilbert", "transformers", "encoder", hf("DistilBertForSequenceClassification", "DistilBertConfig", vocab_size=100,
             dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64), text("attention_mask"),
             unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_albert", "transformers", "encoder", hf("AlbertModel", "AlbertConfig", **SMALL, embedding_size=16), text(),
             unsupported=(DEFAULTS,)),  # fmt: skip
    ZooModel("hf_electra", "transformers", "encoder", hf("ElectraForTokenClassification", "ElectraConfig", **SMALL, embedding_size=16),
             text(), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_vit", "transformers", "vit", hf("ViTModel", "ViTConfig", hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
             intermediate_size=64, image_size=32, patch_size=8), lambda: ((), {"pixel_values": image(32)()[0][0]}),
             unsupported=(DEFAULTS, KWARGS_4)),  # fmt: skip
    ZooModel("hf_gpt2", "transformers", "decoder", hf("GPT2LMHeadModel", "GPT2Config", **gpt()), text(), unsupported=(WRAPPED, VMAP_4)),
    ZooModel("hf_llama", "transformers", "decoder", hf("LlamaForCausalLM", "LlamaConfig", **LLAMA_LIKE), text(),
             unsupported=(WRAPPED, WRAPPED_4)),  # fmt: skip
    ZooModel("hf_mistral", "transformers", "decoder", hf("MistralForCausalLM", "MistralConfig", **LLAMA_LIKE), text(),
             unsupported=(WRAPPED, WRAPPED_4)),  # fmt: skip
    ZooModel("hf_qwen2", "transformers", "decoder", hf("Qwen2ForCausalLM", "Qwen2Config", **LLAMA_LIKE), text(),
             unsupported=(WRAPPED, WRAPPED_4)),  # fmt: skip
    ZooModel("hf_gemma", "transformers", "decoder", hf("GemmaForCausalLM", "GemmaConfig", **LLAMA_LIKE, head_dim=16), text(),
             unsupported=(WRAPPED, not_in_hf_tracer("GemmaForCausalLM"))),  # fmt: skip
    ZooModel("hf_opt", "transformers", "decoder", hf("OPTForCausalLM", "OPTConfig", vocab_size=100, hidden_size=32, num_hidden_layers=2,
             num_attention_heads=2, ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=32), text(),
             unsupported=(WRAPPED, WRAPPED_4)),  # fmt: skip
    ZooModel("hf_gpt_neox", "transformers", "decoder", hf("GPTNeoXForCausalLM", "GPTNeoXConfig", **SMALL), text(),
             unsupported=(WRAPPED, not_in_hf_tracer("GPTNeoXForCausalLM"))),  # fmt: skip
    ZooModel("hf_phi", "transformers", "decoder", hf("PhiForCausalLM", "PhiConfig", **SMALL), text(),
             unsupported=(WRAPPED, not_in_hf_tracer("PhiForCausalLM"))),  # fmt: skip
    ZooModel("hf_t5", "transformers", "encoder-decoder", hf("T5ForConditionalGeneration", "T5Config", vocab_size=100, d_model=32,
             d_kv=16, d_ff=64, num_layers=2, num_heads=2), text("decoder_input_ids"), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_bart", "transformers", "encoder-decoder", hf("BartForConditionalGeneration", "BartConfig", **seq2seq()),
             text("decoder_input_ids"), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_marian", "transformers", "encoder-decoder", hf("MarianMTModel", "MarianConfig", **seq2seq()), text("decoder_input_ids"),
             unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_pegasus", "transformers", "encoder-decoder", hf("PegasusModel", "PegasusConfig", **seq2seq()), text("decoder_input_ids"),
             unsupported=(WRAPPED,)),  # fmt: skip
]



def tv_vgg11_bn() -> nn.Module:
    """torchvision VGG with a small feature stack (the stock vgg11_bn's classifier is 120M parameters)."""
    vgg = importlib.import_module("torchvision.models.vgg")
    model = vgg.VGG(vgg.make_layers([16, "M", 32, "M", 64, 64, "M"], batch_norm=True), num_classes=10)
    model.classifier = nn.Sequential(nn.Linear(64 * 7 * 7, 64), nn.ReLU(True), nn.Dropout(), nn.Linear(64, 64), nn.ReLU(True),
                                     nn.Dropout(), nn.Linear(64, 10))  # fmt: skip
    return model.eval()


def tm_mixer(block: str, **kwargs: Any) -> Callable[[], nn.Module]:
    """timm's MlpMixer with one of its block / mlp / norm classes (resmlp, gmlp): kwargs ending in _layer name classes in mlp_mixer."""
    def build() -> nn.Module:
        mixer = importlib.import_module("timm.models.mlp_mixer")
        layers = {k: getattr(mixer, v) for k, v in kwargs.items() if k.endswith("_layer")}
        return mixer.MlpMixer(**{**kwargs, **layers}, block_layer=getattr(mixer, block)).eval()

    return build


def tv_swin_v2() -> nn.Module:
    swin = importlib.import_module("torchvision.models.swin_transformer")
    return swin.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
                                block=swin.SwinTransformerBlockV2, downsample_layer=swin.PatchMergingV2).eval()  # fmt: skip


def video(size: int, frames: int) -> Callable[[], Inputs]:
    return image(size, frames=frames)


# Models added after a survey of models outside the catalogue (2026-12-04), small configurations.
TORCHVISION += [
    ZooModel("tv_vgg11_bn", "torchvision", "cnn", tv_vgg11_bn, image()),
    ZooModel("tv_alexnet", "torchvision", "cnn", tv("alexnet", num_classes=10), image()),
    ZooModel("tv_wide_resnet50_2", "torchvision", "cnn", tv("wide_resnet50_2", num_classes=10), image()),
    ZooModel("tv_efficientnet_v2_s", "torchvision", "cnn", tv("efficientnet_v2_s", num_classes=10), image()),
    ZooModel("tv_regnet_y_400mf", "torchvision", "cnn", tv("regnet_y_400mf"), image()),
    ZooModel("tv_swin_v2", "torchvision", "vit", tv_swin_v2, image()),
    ZooModel("tv_maxvit", "torchvision", "vit", tv_class("maxvit.MaxVit", input_size=(64, 64), stem_channels=16, partition_size=2,
             block_channels=[16, 32], block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.0, num_classes=10), image(), not_fixed_point=INDEXED_SEQUENTIAL),  # fmt: skip
    ZooModel("tv_googlenet", "torchvision", "cnn", tv("googlenet", aux_logits=False, init_weights=True), image()),
    ZooModel("tv_mobilenet_v3_large", "torchvision", "cnn", tv("mobilenet_v3_large"), image()),
    ZooModel("tv_r2plus1d_18", "torchvision", "video", tv("video.r2plus1d_18"), video(32, 4)),
    ZooModel("tv_mc3_18", "torchvision", "video", tv("video.mc3_18"), video(32, 4)),
    ZooModel("tv_s3d", "torchvision", "video", tv("video.s3d", num_classes=10), video(224, 16)),
    ZooModel("tv_shufflenet_v2_x1_0", "torchvision", "cnn", tv("shufflenet_v2_x1_0"), image()),
]

TIMM += [
    ZooModel("timm_convmixer", "timm", "cnn", tm_class("convmixer.ConvMixer", dim=32, depth=2, kernel_size=3, patch_size=4), image()),
    ZooModel("timm_beit", "timm", "vit", tm("beit_base_patch16_224", img_size=64, depth=2, embed_dim=64, num_heads=2), image()),
    ZooModel("timm_cait", "timm", "vit", tm("cait_xxs24_224", img_size=64, depth=2), image()),
    ZooModel("timm_crossvit", "timm", "vit", tm("crossvit_tiny_240"), image(240), unsupported=traced_branch(
             "scale_image branches on the image size (`if H != ss[0] or W != ss[1]`: interpolate to each branch's size)")),  # fmt: skip
    ZooModel("timm_hrnet", "timm", "cnn", tm("hrnet_w18_small"), image()),
    ZooModel("timm_res2net", "timm", "cnn", tm("res2net50_14w_8s"), image()),
    ZooModel("timm_selecsls", "timm", "cnn", tm("selecsls42b"), image()),
    ZooModel("timm_dpn68", "timm", "cnn", tm("dpn68"), image()),
    ZooModel("timm_nest", "timm", "vit", tm("nest_tiny", img_size=64), image(), unsupported=(Unsupported("symbolic_trace",
             "deblockify calls `int(math.sqrt(T))` on the token count, a Proxy under symbolic_trace", "int() argument must be"),)),  # fmt: skip
    ZooModel("timm_tnt", "timm", "vit", tm("tnt_s_patch16_224", img_size=64, depth=2), image()),
    ZooModel("timm_volo", "timm", "vit", tm("volo_d1_224", img_size=64), image()),
    ZooModel("timm_gcvit", "timm", "vit", tm("gcvit_xxtiny", img_size=64), image()),
    ZooModel("timm_mvitv2", "timm", "vit", tm("mvitv2_tiny", img_size=64), image(), unsupported=traced_branch(
             "cal_rel_pos_type computes `max(k_h / q_h, 1.0)` from the feature map's size")),  # fmt: skip
    ZooModel("timm_convit", "timm", "vit", tm("convit_tiny", img_size=64, depth=2), image(), unsupported=traced_branch(
             "GPSA.forward branches on the token count (`if self.rel_indices is None or self.rel_indices.shape[1] != N`)")),  # fmt: skip
    ZooModel("timm_resmlp", "timm", "vit", tm_mixer("ResBlock", img_size=64, patch_size=16, num_blocks=2, embed_dim=64, mlp_ratio=4, norm_layer="Affine"), image()),
    ZooModel("timm_gmlp", "timm", "vit", tm_mixer("SpatialGatingBlock", img_size=64, patch_size=16, num_blocks=2, embed_dim=64, mlp_ratio=6, mlp_layer="GatedMlp"), image()),
    ZooModel("timm_lcnet", "timm", "cnn", tm("lcnet_050"), image()),
    ZooModel("timm_mobileone", "timm", "cnn", tm("mobileone_s0"), image()),
    ZooModel("timm_inception_next", "timm", "cnn", tm("inception_next_tiny"), image()),
    ZooModel("timm_nfnet", "timm", "cnn", tm("dm_nfnet_f0"), image(), unsupported=traced_branch(
             "get_same_padding (dynamic 'same' padding) takes `max(..., 0)` of the feature map's size")),  # fmt: skip
    ZooModel("timm_vgg11", "timm", "cnn", tm("vgg11", num_classes=10, mlp_ratio=0.0625), image(), unsupported=traced_branch(
             "ConvMlp.forward branches on the feature map's size (`if x.shape[-2] < self.input_kernel_size ...`: pool up)")),  # fmt: skip
    ZooModel("timm_densenet121", "timm", "cnn", tm("densenet121"), image()),
    ZooModel("timm_efficientformer", "timm", "vit", tm("efficientformer_l1"), image(224)),
    ZooModel("timm_efficientformerv2", "timm", "vit", tm("efficientformerv2_s0"), image(224)),
    ZooModel("timm_tiny_vit", "timm", "vit", tm("tiny_vit_5m_224", depths=(1, 1, 1, 1), window_sizes=(2, 2, 2, 2)), image(),
             unsupported=traced_branch("TinyVitBlock.forward branches on the feature map's size (`if H == self.window_size and ...`)")),  # fmt: skip
    ZooModel("timm_hgnet", "timm", "cnn", tm("hgnet_tiny"), image()),
    ZooModel("timm_repvit", "timm", "cnn", tm("repvit_m1"), image()),
    ZooModel("timm_vovnet", "timm", "cnn", tm("ese_vovnet19b_dw"), image()),
    ZooModel("timm_sequencer", "timm", "vit", tm("sequencer2d_s", img_size=56, layers=(1, 1, 1, 1)), image(56)),
    ZooModel("timm_botnet", "timm", "vit", tm("botnet26t_256", img_size=64), image()),
    ZooModel("timm_lambda_resnet", "timm", "vit", tm("lambda_resnet26t"), image()),
    ZooModel("timm_pvt_v2", "timm", "vit", tm("pvt_v2_b0"), image()),
    ZooModel("timm_mobilevitv2", "timm", "vit", tm("mobilevitv2_050"), image(), unsupported=traced_branch(
             "MobileVitV2Block.forward branches on the feature map's size (`if new_h != H or new_w != W`)")),  # fmt: skip
    ZooModel("timm_davit", "timm", "vit", tm("davit_tiny", depths=(1, 1, 1, 1)), image()),
    ZooModel("timm_focalnet", "timm", "vit", tm_class("focalnet.FocalNet", embed_dim=32, depths=(1, 1, 1, 1)), image()),
    ZooModel("timm_coatnet", "timm", "vit", tm("coatnet_0_rw_224", img_size=64), image()),
    ZooModel("timm_maxvit_rw", "timm", "vit", tm("maxvit_tiny_rw_224", img_size=64), image()),
    ZooModel("timm_resnetv2", "timm", "cnn", tm("resnetv2_18"), image()),
    ZooModel("timm_xception41", "timm", "cnn", tm("xception41"), image()),
    ZooModel("timm_inception_v4", "timm", "cnn", tm("inception_v4"), image(128)),
    ZooModel("timm_mixnet", "timm", "cnn", tm("mixnet_s"), image()),
    ZooModel("timm_skresnet", "timm", "cnn", tm("skresnet18"), image()),
    ZooModel("timm_resnest", "timm", "cnn", tm("resnest14d"), image()),
    ZooModel("timm_regnety_002", "timm", "cnn", tm("regnety_002"), image()),
    ZooModel("timm_seresnext26d", "timm", "cnn", tm("seresnext26d_32x4d"), image()),
    ZooModel("timm_convnextv2", "timm", "cnn", tm("convnextv2_atto"), image()),
    ZooModel("timm_swinv2_cr", "timm", "vit", tm("swinv2_cr_tiny_224", img_size=64, window_size=4, depths=(1, 1, 1, 1)), image()),
]


def hf_inputs(**shapes: tuple[tuple[int, ...], str]) -> Callable[[], Inputs]:
    """Keyword inputs: name -> (shape, "float" | "ids")."""

    def make() -> Inputs:
        made = {}
        for i, (name, (shape, kind)) in enumerate(shapes.items()):
            g = torch.Generator().manual_seed(3 + i)
            made[name] = torch.randn(*shape, generator=g) if kind == "float" else torch.randint(3, 100, shape, generator=g)
        return (), made

    return make


def pixels(size: int = 32) -> Callable[[], Inputs]:
    return hf_inputs(pixel_values=((1, 3, size, size), "float"))


ITERATED = Unsupported("symbolic_trace", V5 + "passes forward's **kwargs as one Proxy, which a decorator's wrapper unpacks "
                       "(`func(self, *args, **kwargs)`)", "Proxy object cannot be iterated", no_hf_tracer)  # fmt: skip
BOTH_INPUTS = Unsupported("symbolic_trace", V5 + "gives every argument a Proxy, inputs_embeds too, so forward raises its "
                          "check that input_ids and inputs_embeds are not both given",
                          "You cannot specify both input_ids and inputs_embeds", no_hf_tracer)  # fmt: skip
HF_CHANNELS = traced_branch("ResNetEmbeddings.forward branches on the channel count (`if num_channels != self.num_channels`)")

VISION = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64, "image_size": 32, "patch_size": 8}

TRANSFORMERS += [
    ZooModel("hf_whisper", "transformers", "encoder-decoder", hf("WhisperModel", "WhisperConfig", **seq2seq(), num_mel_bins=8,
             max_source_positions=16, max_target_positions=32),
             hf_inputs(input_features=((1, 8, 32), "float"), decoder_input_ids=((1, 5), "ids")), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_clip_vision", "transformers", "vit", hf("CLIPVisionModel", "CLIPVisionConfig", **VISION), pixels(), unsupported=(DEFAULTS,)),
    ZooModel("hf_clip_text", "transformers", "encoder", hf("CLIPTextModel", "CLIPTextConfig", **SMALL), text("attention_mask"), unsupported=(DEFAULTS,)),
    ZooModel("hf_deberta_v2", "transformers", "encoder", hf("DebertaV2Model", "DebertaV2Config", **SMALL, relative_attention=True,
             pos_att_type=["p2c", "c2p"], position_buckets=16, max_relative_positions=-1), text("attention_mask"), unsupported=(BOTH_INPUTS,)),  # fmt: skip
    ZooModel("hf_mobilebert", "transformers", "encoder", hf("MobileBertModel", "MobileBertConfig", **SMALL, embedding_size=16,
             intra_bottleneck_size=16, true_hidden_size=16), text("attention_mask"), unsupported=(DEFAULTS,)),  # fmt: skip
    ZooModel("hf_convnext", "transformers", "cnn", hf("ConvNextModel", "ConvNextConfig", hidden_sizes=[8, 16], depths=[1, 1],
             num_stages=2, image_size=32), pixels(), unsupported=(ITERATED,)),  # fmt: skip
    ZooModel("hf_swin", "transformers", "vit", hf("SwinModel", "SwinConfig", image_size=32, patch_size=4, embed_dim=16,
             depths=[1, 1], num_heads=[1, 2], window_size=4), pixels(), unsupported=(ITERATED,)),  # fmt: skip
    ZooModel("hf_segformer", "transformers", "segmentation", hf("SegformerModel", "SegformerConfig", num_encoder_blocks=2,
             depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
             num_attention_heads=[1, 2], mlp_ratios=[2, 2]), pixels(), unsupported=(DEFAULTS,)),  # fmt: skip
    ZooModel("hf_dinov2", "transformers", "vit", hf("Dinov2Model", "Dinov2Config", hidden_size=32, num_hidden_layers=2,
             num_attention_heads=2, mlp_ratio=2, image_size=32, patch_size=8), pixels(), unsupported=(ITERATED,)),  # fmt: skip
    ZooModel("hf_resnet", "transformers", "cnn", hf("ResNetModel", "ResNetConfig", embedding_size=16, hidden_sizes=[16, 32],
             depths=[1, 1], layer_type="bottleneck"), pixels(), unsupported=HF_CHANNELS),  # fmt: skip
    ZooModel("hf_wav2vec2", "transformers", "encoder", hf("Wav2Vec2Model", "Wav2Vec2Config", hidden_size=32, num_hidden_layers=2,
             num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2), hf_inputs(input_values=((1, 400), "float")),
             unsupported=(DEFAULTS,)),  # fmt: skip
    ZooModel("hf_falcon", "transformers", "decoder", hf("FalconForCausalLM", "FalconConfig", vocab_size=100, hidden_size=32,
             num_hidden_layers=2, num_attention_heads=2), text(), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_bloom", "transformers", "decoder", hf("BloomForCausalLM", "BloomConfig", vocab_size=100, hidden_size=32, n_layer=2,
             n_head=2), text("attention_mask"), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_gptj", "transformers", "decoder", hf("GPTJForCausalLM", "GPTJConfig", **gpt(rotary_dim=8)), text(), unsupported=(WRAPPED,)),
    ZooModel("hf_mixtral", "transformers", "decoder", hf("MixtralForCausalLM", "MixtralConfig", **LLAMA_LIKE, num_local_experts=4,
             num_experts_per_tok=2), text(), unsupported=(WRAPPED,), needs=("transformers",)),  # fmt: skip
    ZooModel("hf_phi3", "transformers", "decoder", hf("Phi3ForCausalLM", "Phi3Config", **LLAMA_LIKE), text(), unsupported=(WRAPPED,)),
    ZooModel("hf_stablelm", "transformers", "decoder", hf("StableLmForCausalLM", "StableLmConfig", **LLAMA_LIKE), text(), unsupported=(WRAPPED,)),
    ZooModel("hf_starcoder2", "transformers", "decoder", hf("Starcoder2ForCausalLM", "Starcoder2Config", **LLAMA_LIKE), text(), unsupported=(WRAPPED,)),
    ZooModel("hf_mbart", "transformers", "encoder-decoder", hf("MBartForConditionalGeneration", "MBartConfig", **seq2seq()),
             text("decoder_input_ids"), unsupported=(WRAPPED,)),  # fmt: skip
    ZooModel("hf_blenderbot", "transformers", "encoder-decoder", hf("BlenderbotForConditionalGeneration", "BlenderbotConfig",
             **seq2seq()), text("decoder_input_ids"), unsupported=(WRAPPED,)),  # fmt: skip
]


ZOO = [*TORCHVISION, *TIMM, *TRANSFORMERS]
