"""kept_values.may_keep_values: a module call that may keep a value on its module stays inline where its
caller reads one of its intermediate values; one whose source shows it keeps nothing returns them."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import pytest
import torch
from torch import nn

from fxexport.calls import INFERRED, forget_frames, name_after
from fxexport.kept_values import may_keep_values


class Returns(nn.Module):
    def forward(self, x):
        out = {"a": x}
        out["b"] = x * 2
        return out


class KeepsAttribute(nn.Module):
    def forward(self, x):
        self.hidden = x * 2
        return self.hidden + 1


class KeepsItem(nn.Module):
    def forward(self, x):
        self.cache["x"] = x
        return x


class KeepsInList(nn.Module):
    def forward(self, x):
        self.outputs.append(x)
        return x


class KeepsBySetattr(nn.Module):
    def forward(self, x):
        setattr(self, "hidden", x)  # noqa: B010 - the spelling the test is about
        return x


class KeepsByObjectSetattr(nn.Module):
    def forward(self, x):
        object.__setattr__(self, "hidden", x)
        return x


class WritesBufferInPlace(nn.Module):
    def forward(self, x):
        self.count.add_(1)
        return x


class KeepsInHelper(nn.Module):
    def forward(self, x):
        return self._remember(x) + 1

    def _remember(self, x):
        self.hidden = x
        return x


class CleanHelper(nn.Module):
    def forward(self, x):
        return self._double(x) + 1

    def _double(self, x):
        return x * 2


class ReadsSelfInOtherTarget(nn.Module):
    """T5Attention's `cache.is_updated[self.layer_idx] = True`: it stores into `cache`, not into self."""

    def forward(self, x, cache):
        cache.is_updated[self.layer_idx] = True
        return x


class RebindsSelf(nn.Module):
    def forward(self, x):
        self = self.other
        return x


class LibraryMethods(nn.ModuleDict):
    def forward(self, x):
        for layer in self.values():
            x = layer(x)
        return x


class Base(nn.Module):
    def forward(self, x):
        self.hidden = x * 2
        return self.hidden + 1


class SuperForward(Base):
    def forward(self, x):
        return super().forward(x) * 3


class ExplicitBase(Base):
    def forward(self, x):
        return Base.forward(self, x) * 3


class CleanBase(nn.Module):
    expansion = 4  # data of the class, read off self

    def forward(self, x):
        return x * self.expansion


class CleanSuperForward(CleanBase):
    def forward(self, x):
        return super().forward(x) + 1


class Alias(nn.Module):
    def forward(self, x):
        cache = self.cache
        cache["h"] = x * 2
        return x


class Vars(nn.Module):
    def forward(self, x):
        vars(self)["hidden"] = x * 2
        return x + 1


class GetattrStore(nn.Module):
    def forward(self, x):
        self.child.hidden = x * 2
        return x + 1


class OnChildren(nn.Module):
    def forward(self, x):
        for m in self.children():
            m.hidden = x * 2
        return x + 1


def _remember(module, value):
    module.hidden = value


class FunctionGivenSelf(nn.Module):
    def forward(self, x):
        _remember(self, x * 2)
        return x + 1


class ChildMethod(nn.Module):
    def forward(self, x):
        self.recorder.remember(x * 2)
        return x + 1


class ReadsChildTensor(nn.Module):
    def forward(self, x):
        return x + self.token.expand(x.shape[0], -1).mean() + self.table.get("k", 0)


class MethodPassedOn(nn.Module):
    def forward(self, x):
        return list(map(self._keep, [x]))[0]

    def _keep(self, x):
        self.hidden = x * 2
        return x


class Apply(nn.Module):
    def forward(self, x):
        self.apply(lambda m: setattr(m, "hidden", x * 2))
        return x + 1


def remember_output(fn):
    @functools.wraps(fn)
    def wrapper(self, x):
        out = fn(self, x)
        self.hidden = out
        return out

    return wrapper


def passes_through(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        kwargs.pop("unused", None)
        return fn(*args, **kwargs)

    return wrapper


def checkpointed(fn):
    """transformers' GradientCheckpointingLayer: the wrapped forward bound to the module by `partial`, run later."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if self.training and getattr(self, "checkpointing", False):
            return torch.utils.checkpoint.checkpoint(functools.partial(fn, self, **kwargs), *args, use_reentrant=False)
        return fn(self, *args, **kwargs)

    return wrapper


def _store_hidden(m, x):
    m.hidden = x
    return x


class Checkpointed(nn.Module):
    @checkpointed
    def forward(self, x):
        return x * 2


class PartialOfAnotherFunction(nn.Module):
    def forward(self, x):
        return functools.partial(_store_hidden, self)(x * 2)


class WrapperKeeps(nn.Module):
    @remember_output
    def forward(self, x):
        return x * 2


class WrapperPassesThrough(nn.Module):
    @passes_through
    def forward(self, x):
        return x * 2


class StaticGivenSelf(nn.Module):
    def forward(self, x):
        return self._store(self, x)

    @staticmethod
    def _store(m, x):
        m.hidden = x * 2
        return x


class StaticRebindingItsArgument(nn.Module):
    """T5's `_relative_position_bucket`: a static method given no instance, rebinding its own argument."""

    def forward(self, x):
        return self._bucket(x) + 1

    @staticmethod
    def _bucket(x):
        x = x.abs()
        return x


class StaticFillingWhatItIsGiven(nn.Module):
    """A static method given part of the instance, which it fills."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: list[torch.Tensor] = []

    def forward(self, x):
        return self._store(self.cache, x)

    @staticmethod
    def _store(cache, x):
        cache.append(x * 2)
        return x


class OutKeyword(nn.Module):
    def forward(self, x):
        torch.mul(x, 2, out=self.buf)
        return x + 1


class InitInPlace(nn.Module):
    def forward(self, x):
        nn.init.zeros_(self.buf)
        return x + 1


class CallOverride(nn.Module):
    def __call__(self, x):
        out = super().__call__(x)
        self.hidden = out
        return out

    def forward(self, x):
        return x * 2


class KeepsGlobal(nn.Module):
    def forward(self, x):
        global _LAST
        _LAST = x
        return x + 1


class NamedModules(nn.Module):
    """torch.nn.Module's own methods are not read: named_modules fills a set of its own with `self`."""

    def forward(self, x):
        return x * len(list(self.named_modules()))


class AugmentedAlias(nn.Module):
    def forward(self, x):
        cache = self.cache
        cache += [x]
        return x


class SetItemFunction(nn.Module):
    def forward(self, x):
        operator.setitem(self.cache, "h", x)
        return x


class GetattrMethod(nn.Module):
    def forward(self, x):
        self._keep(x)
        return x

    def _keep(self, x):
        self.hidden = x


class SuperSetattr(nn.Module):
    def forward(self, x):
        super().__setattr__("hidden", x)
        return x


class OverTuple(nn.Module):
    def forward(self, x):
        for m in (self.a, self.b):
            m.hidden = x
        return x


class OnTheClass(nn.Module):
    def forward(self, x):
        type(self).hidden = x
        return x


class MethodReturningPart(nn.Module):
    def forward(self, x):
        cache = self.get_cache()
        cache.append(x)
        return x

    def get_cache(self):
        return self.cache


class EncoderKeepingWeights(nn.TransformerEncoderLayer):
    """Overrides a method torch's own forward calls."""

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x, weights = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=True)
        self.weights = weights
        return self.dropout1(x)


class CachedProperty(nn.Module):
    @functools.cached_property
    def table(self):
        return torch.ones(2)

    def forward(self, x):
        return x * self.table


class Casts(nn.Module):
    """Idioms that only read: tensors cast to another's dtype or device, in place on a local, a child's forward."""

    def forward(self, x):
        x = x.to(self.weight.dtype) + self.table.to(x.device) + self.inv_freq[None].float()
        x = x.mul_(self.gamma).clamp_(min=self.eps)
        return self.block.forward(x) + self.block(x)


class _EqualsAll(type):
    def __eq__(cls, other):
        return True


class Unhashable(nn.Module, metaclass=_EqualsAll):
    def forward(self, x):
        return x


class _Boom:
    def __getattr__(self, name):
        raise RuntimeError(name)

    def __call__(self, *args):
        return args


class RaisingForward(nn.Module):
    forward = _Boom()


def _cycle(x):
    return x


_cycle.__wrapped__ = _cycle  # type: ignore[attr-defined]


class WrappedCycle(nn.Module):
    forward = _cycle


def _unreadable() -> type:
    namespace: dict[str, object] = {}
    exec("def forward(self, x):\n    return x\n", namespace)  # no file to read its source from
    return type("Unreadable", (nn.Module,), {"forward": namespace["forward"]})


CASES = [
    ("returns", Returns, False),
    ("keeps_attribute", KeepsAttribute, True),
    ("keeps_item", KeepsItem, True),
    ("keeps_in_list", KeepsInList, True),
    ("keeps_by_setattr", KeepsBySetattr, True),
    ("keeps_by_object_setattr", KeepsByObjectSetattr, True),
    ("writes_buffer_in_place", WritesBufferInPlace, True),
    ("keeps_in_helper", KeepsInHelper, True),
    ("clean_helper", CleanHelper, False),
    ("stores_into_another_object", ReadsSelfInOtherTarget, False),
    ("rebinds_self", RebindsSelf, True),
    ("library_methods", LibraryMethods, False),
    ("source_unreadable", _unreadable(), True),
    ("by_qualified_name", f"{__name__}.Returns", False),  # as torch.export records the class
    ("by_qualified_name_keeping", f"{__name__}.KeepsAttribute", True),
    ("name_not_importable", "no_such_package.Module", True),
    ("torch_layer", nn.Linear, False),
    ("torch_layer_writing_a_buffer", nn.BatchNorm2d, False),  # running statistics: buffers, not values of the graph
    ("store_in_a_base_class", SuperForward, True),
    ("base_forward_given_self", ExplicitBase, True),
    ("clean_base_and_class_data", CleanSuperForward, False),
    ("store_through_a_local", Alias, True),
    ("store_into_vars", Vars, True),
    ("store_onto_getattr", GetattrStore, True),
    ("store_onto_children", OnChildren, True),
    ("function_given_self", FunctionGivenSelf, True),
    ("child_method", ChildMethod, True),
    ("reads_child_tensor_and_dict", ReadsChildTensor, False),
    ("method_passed_on", MethodPassedOn, True),
    ("module_apply", Apply, True),
    ("wrapper_keeps", WrapperKeeps, True),
    ("wrapper_passes_through", WrapperPassesThrough, False),
    ("wrapped_forward_bound_by_partial", Checkpointed, False),
    ("partial_of_another_function_given_self", PartialOfAnotherFunction, True),
    ("staticmethod_given_self", StaticGivenSelf, True),
    ("staticmethod_rebinding_its_argument", StaticRebindingItsArgument, False),
    ("staticmethod_filling_what_it_is_given", StaticFillingWhatItIsGiven, True),
    ("out_keyword", OutKeyword, True),
    ("initialiser_in_place", InitInPlace, True),
    ("call_override", CallOverride, True),
    ("global_store", KeepsGlobal, True),
    ("torch_methods_not_read", NamedModules, False),
    ("augmented_alias", AugmentedAlias, True),
    ("setitem_function", SetItemFunction, True),
    ("getattr_method", GetattrMethod, True),
    ("super_setattr", SuperSetattr, True),
    ("over_a_tuple_of_children", OverTuple, True),
    ("on_the_class", OnTheClass, True),
    ("method_returning_part", MethodReturningPart, True),
    ("torch_layer_method_overridden", EncoderKeepingWeights, True),
    ("cached_property", CachedProperty, True),
    ("casts_and_in_place_on_locals", Casts, False),
    ("unhashable_class", Unhashable, True),
    ("raising_forward", RaisingForward, True),
    ("wrapped_cycle", WrappedCycle, True),
]


@pytest.mark.parametrize(("name", "cls", "keeps"), CASES, ids=[c[0] for c in CASES])
def test_a_module_may_keep_values_only_where_its_source_says_it_may(name: str, cls: type | str, keeps: bool) -> None:
    assert may_keep_values(cls) is keeps


@pytest.mark.parametrize(("cls", "keeps"), [(Casts, False), (SuperSetattr, True)], ids=["keeping_nothing", "keeping"])
def test_an_inferred_call_named_after_a_class_keeps_what_that_class_keeps(cls: type[nn.Module], keeps: bool) -> None:
    """A call fxexport inferred, named after the source model's class (inferred_stacks.py), ran that class's
    forward; one named after where it is held has no source to tell: it may keep one."""
    try:
        assert may_keep_values(name_after(cls) or "") is keeps
        assert may_keep_values(f"{INFERRED}.{cls.__qualname__}") is True
    finally:
        forget_frames()


def _with(cls: type[nn.Module], **attributes: object) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        module = cls()
        for name, value in attributes.items():
            if isinstance(value, torch.Tensor):
                module.register_buffer(name, value)
            else:
                setattr(module, name, value)
        return module

    return build


class _Recorder(nn.Module):
    def remember(self, value):
        self.hidden = value


RUNNABLE = [
    ("returns", _with(Returns)),
    ("keeps_attribute", _with(KeepsAttribute)),
    ("keeps_in_list", _with(KeepsInList, outputs=[])),
    ("writes_buffer_in_place", _with(WritesBufferInPlace, count=torch.zeros(()))),
    ("keeps_in_helper", _with(KeepsInHelper)),
    ("clean_helper", _with(CleanHelper)),
    ("store_in_a_base_class", _with(SuperForward)),
    ("clean_base_and_class_data", _with(CleanSuperForward)),
    ("store_through_a_local", _with(Alias, cache={})),
    ("store_onto_children", _with(OnChildren, child=nn.Identity())),
    ("function_given_self", _with(FunctionGivenSelf)),
    ("child_method", _with(ChildMethod, recorder=_Recorder())),
    ("reads_child_tensor_and_dict", _with(ReadsChildTensor, token=torch.ones(1, 4), table={"k": 1})),
    ("method_passed_on", _with(MethodPassedOn)),
    ("wrapper_keeps", _with(WrapperKeeps)),
    ("wrapper_passes_through", _with(WrapperPassesThrough)),
    ("out_keyword", _with(OutKeyword, buf=torch.zeros(3, 4))),
    ("initialiser_in_place", _with(InitInPlace, buf=torch.ones(3, 4))),
    ("call_override", _with(CallOverride)),
    ("torch_methods_not_read", _with(NamedModules)),
    ("augmented_alias", _with(AugmentedAlias, cache=[])),
    ("setitem_function", _with(SetItemFunction, cache={})),
    ("getattr_method", _with(GetattrMethod)),
    ("super_setattr", _with(SuperSetattr)),
    ("over_a_tuple_of_children", _with(OverTuple, a=nn.Identity(), b=nn.Identity())),
    ("method_returning_part", _with(MethodReturningPart, cache=[])),
    ("casts_and_in_place_on_locals", _with(Casts, weight=torch.ones(4), table=torch.ones(4), inv_freq=torch.ones(4),
                                             gamma=torch.ones(4), eps=0.5, block=nn.Identity())),
]


def _state(module: nn.Module) -> list[tuple[str, object]]:
    """What a call could keep: every module's attributes (containers by their contents) and tensors' values."""
    out: list[tuple[str, object]] = []
    for path, sub in module.named_modules():
        for key, value in vars(sub).items():
            if isinstance(value, (list, dict)):
                out.append((f"{path}.{key}", repr(value)))
            elif key not in ("_parameters", "_buffers", "_modules") and not key.startswith("_"):
                out.append((f"{path}.{key}", id(value)))
        out += [(f"{path}.{name}", tensor.clone()) for name, tensor in sub._buffers.items() if tensor is not None]
    return out


def _same(before: list[tuple[str, object]], after: list[tuple[str, object]]) -> bool:
    if [k for k, _ in before] != [k for k, _ in after]:
        return False
    return all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b for (_, a), (_, b) in zip(before, after))


@pytest.mark.parametrize(("name", "build"), RUNNABLE, ids=[r[0] for r in RUNNABLE])
def test_the_rule_matches_what_the_module_does(name: str, build: Callable[[], nn.Module]) -> None:
    """Run, each case keeps something exactly where the source reading says it may: not looser than the code."""
    module = build()
    before = _state(module)
    module(torch.ones(3, 4))
    assert (not _same(before, _state(module))) is may_keep_values(type(module))
