"""returned_values.returned_from: a value computed inside a module call and read after it is returned by the
call where, in each module's forward from the one that computed it out to the one called, its statement binds
it to a name that the forward binds nowhere after it, not in a loop, and returns as the same item of every
`return` after it. Each case is a two-layer stack (tests/models.py's BiasStack, T5's shape) captured by
torch.export, its first attention computing the bias that the second layer reads; asked of the first layer's
call and of its attention's."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

import pytest
import torch
from torch import fx, nn
from torch.utils.checkpoint import checkpoint

from fxexport.calls import stack_frames
from fxexport.returned_values import _dtype_test, returned_from, source_item
from tests import models


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flag = False
        self.bias = nn.Linear(4, 4)
        self.proj = nn.Linear(4, 4)


class BoundAgain(_Attention):
    def forward(self, x):
        position_bias = self.bias(x).tanh()
        output = self.proj(x) + position_bias
        position_bias = output * 2
        return output, position_bias


class InLoop(_Attention):
    def forward(self, x):
        for _ in range(1):
            position_bias = self.bias(x).tanh()
        output = self.proj(x) + position_bias
        return output, position_bias


class OtherItems(_Attention):
    def forward(self, x):
        position_bias = self.bias(x).tanh()
        output = self.proj(x) + position_bias
        if self.flag:
            return output, position_bias
        return position_bias, output


class OtherArm(_Attention):
    def forward(self, x):
        if not self.flag:
            position_bias = self.bias(x).tanh()
        else:  # bound after it, in the arm not taken
            position_bias = torch.zeros(x.shape)
        output = self.proj(x) + position_bias
        return output, position_bias


class Passed(_Attention):
    def forward(self, x):
        position_bias = self.bias(x).tanh()
        output = self.proj(x) + position_bias
        return output, position_bias


def _keeping(module, x):
    """Returns the softmax and keeps a later value on the module (the tanh asked about): the last value of the
    statement calling it, not what it binds."""
    probs = torch.softmax(x, dim=-1)
    module.kept = x.tanh()
    return probs


class KeptLast(_Attention):
    def forward(self, x):
        position_bias = _keeping(self, self.bias(x))
        output = self.proj(x) + self.kept
        return output, position_bias


class ComputedByMethod(_Attention):
    """T5's `position_bias = self.compute_bias(...)`, a method calling a static one that rebinds its argument."""

    @staticmethod
    def _bucket(x):
        x = x.abs()
        return x

    def compute_bias(self, x):
        return self.bias(self._bucket(x)).tanh()

    def forward(self, x):
        position_bias = self.compute_bias(x)
        output = self.proj(x) + position_bias
        return output, position_bias


class KeptInATuple(_Attention):
    def forward(self, x):
        position_bias = _keeping_pair((self, self.bias(x)))
        output = self.proj(x) + self.kept
        return output, position_bias


def _keeping_pair(pair):
    module, x = pair
    return _keeping(module, x)


class KeptByAlias(_Attention):
    def forward(self, x):
        me = self
        position_bias = _keeping(me, self.bias(x))
        output = self.proj(x) + self.kept
        return output, position_bias


class KeptByProperty(_Attention):
    @property
    def biased(self):
        self.kept = self.bias.weight.sum(0).tanh()
        return self.kept

    def forward(self, x):
        position_bias = self.biased
        output = self.proj(x) + position_bias
        return output, position_bias


class KeptByAHeldCallable(_Attention):
    def __init__(self) -> None:
        super().__init__()
        self.keep = functools.partial(_keeping, self)  # called as a child would be: `self.keep(...)`

    def forward(self, x):
        position_bias = self.keep(self.bias(x))
        output = self.proj(x) + self.kept
        return output, position_bias


def _swapped(forward):
    @functools.wraps(forward)
    def wrapper(self, *args):
        output = forward(self, *args)
        return output[1], output[0]

    return wrapper


def _checkpointed(forward):
    """transformers' GradientCheckpointingLayer: the forward called, or checkpointed when training."""

    @functools.wraps(forward)
    def wrapper(self, *args):
        if self.training:
            return checkpoint(functools.partial(forward, self), *args, use_reentrant=False)
        return forward(self, *args)

    return wrapper


def _swap_call(function, *args):
    output = function(*args)
    return output[1], output[0]


def _fake_checkpointed(forward):
    """Calls the forward given `partial(forward, self)` as a checkpoint does, but swaps the result."""

    @functools.wraps(forward)
    def wrapper(self, *args):
        return _swap_call(functools.partial(forward, self), *args)

    return wrapper


def _swapped_unmarked(forward):
    def wrapper(self, *args):  # no functools.wraps: nothing says what it wraps
        output = forward(self, *args)
        return output[1], output[0]

    return wrapper


class FakeCheckpointed(Passed):
    forward = _fake_checkpointed(Passed.forward)


class SwappedUnmarked(Passed):
    forward = _swapped_unmarked(Passed.forward)


class SwappedByCall(Passed):
    def __call__(self, *args):
        output = super().__call__(*args)
        return output[1], output[0]


class Swapped(Passed):
    forward = _swapped(Passed.forward)


class Checkpointed(Passed):
    forward = _checkpointed(Passed.forward)


def _swap(pair):
    return pair[1], pair[0]


class Layer(nn.Module):
    def __init__(self, attention: nn.Module) -> None:
        super().__init__()
        self.attention = attention

    def forward(self, x):
        output, position_bias = self.attention(x)
        return x + output, position_bias


class SwappedLayer(Layer):
    def forward(self, x):
        position_bias, output = _swap(self.attention(x))
        return x + output, position_bias


class Pair(Layer):
    """Two attentions, the second given the first's output: the first's bias is not what the statement binds."""

    def __init__(self, attention: nn.Module) -> None:
        super().__init__(attention)
        self.attentions = nn.ModuleList([attention, Passed()])
        del self.attention

    def forward(self, x):
        output, position_bias = self.attentions[1](self.attentions[0](x)[0])
        return x + output, position_bias


class HalfClamped(_Attention):
    """transformers' fp16 clamp: an arm that runs only where the bias is half binds it again."""

    def forward(self, x):
        position_bias = self.bias(x).tanh()
        if position_bias.dtype == torch.float16:
            position_bias = position_bias.clamp(-1, 1)
        output = self.proj(x) + position_bias
        return output, position_bias


class NotHalfScaled(_Attention):
    """The arm runs where the bias is neither half: it binds the bias again (the tanh is not what is returned)."""

    def forward(self, x):
        position_bias = self.bias(x).tanh()
        if position_bias.dtype not in (torch.float16, torch.bfloat16):
            position_bias = position_bias * 2
        output = self.proj(x) + position_bias
        return output, position_bias


class PassOn(nn.Module):
    def forward(self, pair):
        output, position_bias = pair
        return output + 1, position_bias + 1


class LastOfList(Layer):
    """The attention called as the last of a list (`self.parts[-1]`)."""

    def __init__(self, attention: nn.Module) -> None:
        super().__init__(attention)
        self.parts = nn.ModuleList([nn.Linear(4, 4), attention])
        del self.attention

    def forward(self, x):
        output, position_bias = self.parts[-1](x)
        return self.parts[0](x) + output, position_bias


class FirstInsideLast(Layer):
    """`self.parts[-1]` called on the attention's result: the statement binds what the last part returns."""

    def __init__(self, attention: nn.Module) -> None:
        super().__init__(attention)
        self.parts = nn.ModuleList([attention, PassOn()])
        del self.attention

    def forward(self, x):
        output, position_bias = self.parts[-1](self.parts[0](x))
        return x + output, position_bias


class Swap(nn.Module):
    """Stateless, computing nothing: the GraphModule holds it not, and the graph records no call of it."""

    def forward(self, pair):
        output, position_bias = pair
        return position_bias, output


class SwapLast(Layer):
    """`self.parts[-1]` is the Swap, which the count of the children the graph knows of does not see."""

    def __init__(self, attention: nn.Module) -> None:
        super().__init__(attention)
        self.parts = nn.ModuleList([attention, Swap()])
        del self.attention

    def forward(self, x):
        output, position_bias = self.parts[-1](self.parts[0](x))  # the bias is `output` here
        return x + output, position_bias


class Stack(nn.Module):
    def __init__(self, attention: nn.Module, layer: type[Layer] = Layer) -> None:
        super().__init__()
        self.layers = nn.ModuleList([layer(attention), nn.Linear(4, 4)])

    def forward(self, x):
        h, position_bias = self.layers[0](x)
        return self.layers[1](h) + position_bias


CASES = [  # name, model, returned by (the first layer, its attention), the bias's (item, items) of the first layer's tuple
    ("returned", lambda: Stack(Passed()), (True, True), (1, 2)),
    ("bound_in_the_other_arm", lambda: Stack(OtherArm()), (True, True), (1, 2)),
    ("bound_again_after", lambda: Stack(BoundAgain()), (False, False), None),
    ("bound_in_a_loop", lambda: Stack(InLoop()), (False, False), None),
    ("returned_as_other_items", lambda: Stack(OtherItems()), (False, False), None),
    ("unpacked_from_a_function_of_the_result", lambda: Stack(Passed(), SwappedLayer), (False, True), None),
    ("t5_shape", models.BiasStack, (True, True), (1, 2)),
    ("bound_by_a_call_given_self", lambda: Stack(KeptLast()), (False, False), None),
    ("computed_by_a_method_keeping_nothing", lambda: Stack(ComputedByMethod()), (True, True), (1, 2)),
    ("decorated_by_a_wrapper_reordering", lambda: Stack(Swapped()), (False, False), None),
    ("decorated_by_a_checkpointing_wrapper", lambda: Stack(Checkpointed()), (True, True), (1, 2)),
    ("another_child_of_the_same_container", lambda: Stack(Passed(), Pair), (False, True), None),
    ("bound_by_a_call_given_self_in_a_tuple", lambda: Stack(KeptInATuple()), (False, False), None),
    ("bound_by_a_call_given_an_alias_of_self", lambda: Stack(KeptByAlias()), (False, False), None),
    ("bound_to_a_property", lambda: Stack(KeptByProperty()), (False, False), None),
    ("bound_by_a_held_callable_given_self", lambda: Stack(KeptByAHeldCallable()), (False, False), None),
    ("decorated_by_a_false_checkpoint", lambda: Stack(FakeCheckpointed()), (False, False), None),
    ("decorated_without_functools_wraps", lambda: Stack(SwappedUnmarked()), (False, False), None),
    ("call_overridden", lambda: Stack(SwappedByCall()), (False, False), None),
    ("bound_again_in_an_arm_its_dtype_skips", lambda: Stack(HalfClamped()), (True, True), (1, 2)),
    ("bound_again_in_an_arm_its_dtype_runs", lambda: Stack(NotHalfScaled()), (False, False), None),
    ("called_by_a_negative_index", lambda: Stack(Passed(), LastOfList), (True, True), (1, 2)),
    ("the_negative_index_of_another_child", lambda: Stack(Passed(), FirstInsideLast), (False, True), None),
    ("the_negative_index_of_a_child_not_held", lambda: Stack(Passed(), SwapLast), (False, True), None),
]


def _bias(gm: fx.GraphModule) -> fx.Node:
    return next(n for n in gm.graph.nodes if n.op == "call_function" and "tanh" in str(n.target))


@pytest.mark.parametrize(("name", "build", "returned", "item"), CASES, ids=[c[0] for c in CASES])
def test_a_value_is_returned_where_each_forward_binds_and_returns_it(name: str, build: Callable[[], nn.Module], returned: tuple[bool, bool], item: tuple[int, int] | None) -> None:
    torch.manual_seed(0)
    gm = torch.export.export(build().eval(), (torch.randn(2, 4),)).module()
    bias = _bias(gm)
    frames = [frame for frame in stack_frames(bias) if not str(frame.cls).startswith("torch.")]  # the bias's Linear aside
    layer = next(frame.key for frame in frames if frame.path == "layers.0")
    assert (returned_from(bias, layer), returned_from(bias, frames[-1].key)) == returned
    assert source_item(bias, layer) == item


def test_a_graph_without_stack_traces_shows_nothing_returned() -> None:
    gm = torch.export.export(Stack(Passed()).eval(), (torch.randn(2, 4),)).module()
    for node in gm.graph.nodes:
        node.meta.pop("stack_trace", None)
    bias = _bias(gm)
    assert not any(returned_from(bias, frame.key) for frame in stack_frames(bias))


DTYPE_TESTS = [  # an `if` test, what it gives where the bias is float32 (None: not known)
    ("position_bias.dtype == torch.float16", False),
    ("torch.float32 == position_bias.dtype", True),
    ("position_bias.dtype != torch.half", True),
    ("position_bias.dtype is torch.float32", True),
    ("position_bias.dtype is not torch.float32", False),
    ("position_bias.dtype in (torch.float16, torch.bfloat16)", False),
    ("position_bias.dtype not in [torch.float16]", True),
    ("not position_bias.dtype == torch.float16", True),
    ("position_bias.dtype == torch.float16 and not torch.isfinite(position_bias).all()", False),
    ("position_bias.dtype == torch.float32 or self.flag", True),
    ("position_bias.dtype == torch.float32 and self.flag", None),
    ("x.dtype == torch.float16", None),
    ("position_bias.dtype == dtype", None),
    ("position_bias.dtype in dtypes", None),
    ("position_bias.dtype == torch.float16 == x.dtype", None),
]


@pytest.mark.parametrize(("test", "gives"), DTYPE_TESTS, ids=[t for t, _ in DTYPE_TESTS])
def test_an_if_testing_the_values_dtype_is_read_from_the_graph(test: str, gives: bool | None) -> None:
    expression = ast.parse(test, mode="eval").body
    assert _dtype_test(expression, "position_bias", torch.float32) is gives
