"""Models for the round-trip tests. Builders return (GraphModule, args, kwargs)."""

from __future__ import annotations

import collections

import torch
import torch.nn.functional as F
from torch import fx, nn


@fx.wrap
def scaled_sum(x: torch.Tensor, y: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
    """A user function that symbolic_trace must not trace into."""
    return (x + y) * scale


class _Settings:
    """A user object a function reads: module.py cannot copy such a function, so it imports it."""

    scale = 2.0


SETTINGS = _Settings()


@fx.wrap
def configured_scale(x: torch.Tensor) -> torch.Tensor:
    return x * SETTINGS.scale


class ImportedFunction(nn.Module):
    def forward(self, x):
        return configured_scale(x).relu()


class ConvBN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2, padding_mode="reflect", padding=1)
        self.bn2 = nn.BatchNorm2d(8, momentum=0.2, eps=1e-3)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(self.flat(self.gap(x)))


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.GELU(approximate="tanh")
        self.drop = nn.Dropout(0.1)
        self.norm = nn.LayerNorm(32, eps=1e-6)
        self.fc2 = nn.Linear(32, 4, bias=False)
        self.tanh = nn.Tanh()
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        return self.softmax(self.tanh(self.fc2(self.norm(self.drop(self.act(self.fc1(x)))))))


class Leaf(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.scale = nn.Parameter(torch.full((width,), 0.5))

    def forward(self, x):
        return self.lin(x) * self.scale


class Middle(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.leaf = Leaf(6)
        self.other = Leaf(6)

    def forward(self, x):
        return self.other(self.leaf(x))


class Deep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.outer = nn.Module()
        self.outer.middle = Middle()
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        x = self.outer.middle(x)
        weight = self.outer.middle.leaf.lin.weight  # get_attr of a nested parameter
        return self.head(x @ weight.t()) + self.outer.middle.other.scale.sum()


class Buffers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mean", torch.linspace(-1, 1, 5))
        self.register_buffer("scale", torch.arange(1, 6, dtype=torch.float32), persistent=False)
        self.register_buffer("steps", torch.tensor(3, dtype=torch.int64), persistent=False)
        self.register_buffer("mask", torch.tensor([True, False, True, True, False]))

    def forward(self, x):
        y = (x - self.mean) * self.scale * self.steps
        return torch.where(self.mask, y, torch.tensor([0.5, 1.5, 2.5, 3.5, 4.5]))


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 8, padding_idx=0)
        self.proj = nn.Linear(8, 8)
        self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(torch.tanh(self.proj(self.embed(tokens))))


class Wrapped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, y):
        return scaled_sum(self.lin(x), y, scale=3.0)


class Operators(nn.Module):
    def forward(self, x):
        batch, channels = x.shape[0], x.size(1)
        y = x.view(batch, channels, -1).permute(0, 2, 1).contiguous()
        y = y[:, 1:, ...] * 2 + 1 - y[:, :-1] / 3
        y = -y ** 2 // 1 % 5
        z = y.transpose(1, 2)
        flags = (z > 0) & (z < 3) | ~(z == 1)
        return z.masked_fill(flags, float("-inf")).nan_to_num(neginf=-1.0).sum(dim=(1, 2), keepdim=True), batch * channels


class Kwargs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, bias, *, scale: float = 1.0, power: int = 2):
        return (self.lin(x) * scale + bias) ** power


class Outputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        a, b = self.a(x), self.b(x)
        return {"a": a, "pair": (a.relu(), [b, b.sigmoid()]), "shape": a.shape[-1]}


class Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(5, 7, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(14, 6, bias=False)
        self.rnn = nn.RNN(6, 4, nonlinearity="relu")

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        out2, h2 = self.gru(out.transpose(0, 1))
        out3, _ = self.rnn(out2)
        return out3, h.sum() + c.sum() + h2.sum()


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.norm = nn.LayerNorm(16)
        self.attn = nn.MultiheadAttention(16, 4, dropout=0.0, batch_first=True, add_bias_kv=True)
        self.glu = nn.GLU()
        self.out = nn.Identity()

    def forward(self, tokens):
        h = self.norm(self.embed(tokens))
        attended, weights = self.attn(h, h, h, need_weights=True)
        return self.out(self.glu(attended)), weights


class TrainingDropout(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.drop(self.lin(x)))


class Convs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv1d(2, 4, 3, dilation=2)
        self.t1 = nn.ConvTranspose1d(4, 3, 3, stride=2, output_padding=1)
        self.bn1 = nn.BatchNorm1d(3, affine=False)
        self.c3 = nn.Conv3d(1, 2, (1, 3, 3))
        self.bn3 = nn.BatchNorm3d(2, track_running_stats=False)

    def forward(self, x, v):
        return self.bn1(self.t1(self.c1(x))).mean(), self.bn3(self.c3(v)).sum()


class Frozen(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2).double()
        for p in self.backbone.parameters():
            p.requires_grad_(False)
        self.gain = nn.Parameter(torch.ones(2, dtype=torch.float64), requires_grad=False)

    def forward(self, x):
        return self.head(self.backbone(x).double()) * self.gain


class Shared(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        block = nn.Linear(3, 3)
        self.first = block
        self.second = block

    def forward(self, x):
        return self.second(self.first(x))


class Odd(nn.Module):
    """Names that are not identifiers, plus ones fx itself can still print."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module("my layer", nn.Linear(3, 3))
        self.register_buffer("a'b", torch.tensor([1.0, 2.0, 3.0]))
        self.register_parameter("é", nn.Parameter(torch.tensor([0.25, 0.5, 0.75])))
        self.layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))

    def forward(self, x):
        y = getattr(self, "my layer")(x) + getattr(self, "a'b")
        return self.layers(y) * self.é


class Inner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("offset", torch.full((4,), 0.25), persistent=False)

    def forward(self, x):
        return torch.sigmoid(self.lin(x)) + self.offset


class GraphModuleLeafTracer(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return isinstance(m, fx.GraphModule) or super().is_leaf_module(m, qualname)


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = fx.symbolic_trace(Inner())
        self.post = nn.Linear(4, 2)

    def forward(self, x):
        return self.post(self.inner(x) * 2)


def nested_graph_module() -> fx.GraphModule:
    torch.manual_seed(0)
    root = Outer()
    return fx.GraphModule(root, GraphModuleLeafTracer().trace(root), "Outer")


def adversarial_names() -> fx.GraphModule:
    torch.manual_seed(0)
    gm = fx.symbolic_trace(Odd())
    gm.add_submodule("class", nn.Linear(2, 2))  # unreferenced, but in the state_dict
    gm.add_submodule("holder.0.import", nn.Module())
    gm.holder.get_submodule("0").register_buffer('q"uote\\', torch.ones(1))
    return gm


class VarArgs(nn.Module):
    def forward(self, x, scale=2.0, *args, **kwargs):
        return x * scale + args[0] - kwargs["shift"]


class Literals(nn.Module):
    def forward(self, x):
        y = x.to(torch.float64).clamp(min=float("-inf"), max=float("inf"))
        z = torch.full((2, 3), float("nan"), dtype=torch.float32, device=torch.device("cpu"))
        w = torch.zeros(2, 3, dtype=torch.float16, layout=torch.strided).to(memory_format=torch.contiguous_format)
        y = y.masked_fill(y > 100, float("nan")).to(device=torch.device("cpu"), dtype=torch.float32)
        return y.nan_to_num(), z.nan_to_num(nan=0.5) + w.float(), x[None, ..., ::2], x[1:, -1]


def dict_root() -> fx.GraphModule:
    torch.manual_seed(0)
    graph = fx.Graph()
    x = graph.placeholder("x")
    lin = graph.call_module("blocks.lin", (x,))
    weight = graph.get_attr("scale")
    graph.output(graph.call_function(torch.mul, (lin, weight)))
    root = {"blocks.lin": nn.Linear(3, 3), "scale": nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))}
    return fx.GraphModule(root, graph, class_name="DictRoot")


def edited_graph() -> fx.GraphModule:
    torch.manual_seed(0)
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2)))
    first = next(n for n in gm.graph.nodes if n.op == "call_module")
    with gm.graph.inserting_after(first):
        relu = gm.graph.call_function(torch.relu, (first,))
    first.replace_all_uses_with(relu, delete_user_cb=lambda user: user is not relu)
    gm.recompile()
    return gm


def _rewrite_pattern(x, y):
    return torch.add(x, y)


def _rewrite_replacement(x, y):
    return torch.sub(x, y).mul(2)


class AddModel(nn.Module):
    def forward(self, x, y):
        return torch.add(x, y).relu()


def rewritten_graph() -> fx.GraphModule:
    gm = fx.symbolic_trace(AddModel())
    fx.subgraph_rewriter.replace_pattern(gm, _rewrite_pattern, _rewrite_replacement)
    gm.recompile()
    return gm


def pruned_graph() -> fx.GraphModule:
    torch.manual_seed(0)
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 3), nn.ReLU()))
    gm.add_submodule("spare.deep", nn.Linear(3, 3))
    gm.add_submodule("kept", nn.Linear(3, 2))
    output = next(n for n in gm.graph.nodes if n.op == "output")
    with gm.graph.inserting_before(output):
        kept = gm.graph.call_module("kept", (output.args[0],))
    output.args = (kept,)
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


def deep_copied() -> fx.GraphModule:
    import copy

    torch.manual_seed(0)
    return copy.deepcopy(fx.symbolic_trace(Deep()))


def unpickled() -> fx.GraphModule:
    import pickle

    torch.manual_seed(0)
    return pickle.loads(pickle.dumps(fx.symbolic_trace(Buffers())))


class Gate(nn.Module):
    """A user module kept as a leaf by a custom tracer; traceable, so it becomes a generated class."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.unused = nn.Parameter(torch.zeros(2))  # not used by forward, still in the state_dict
        self.register_buffer("bias", torch.full((width,), 0.1), persistent=False)

    def forward(self, x):
        return torch.sigmoid(self.proj(x)) * x + self.bias


class Clamp(nn.Module):
    """Not traceable (data-dependent branch): module.py copies the class, and sets `limit` on the instance."""

    def __init__(self, limit: float = 1.0) -> None:
        super().__init__()
        self.limit = limit

    def forward(self, x):
        if x.abs().max() > self.limit:
            return x.clamp(-self.limit, self.limit)
        return x


class Limiter(nn.Module):
    """Not traceable, and it keeps a user object: it cannot be copied, so module.py imports the class."""

    def __init__(self, limit: float = 1.0) -> None:
        super().__init__()
        self.limit = limit
        self.settings = SETTINGS

    def forward(self, x):
        if x.abs().max() > self.limit:
            return x.clamp(-self.limit, self.limit) * self.settings.scale
        return x


class UserLeaves(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Gate(4)
        self.second = Gate(4)
        self.clamp = Clamp(0.5)
        self.limiter = Limiter(2.0)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.limiter(self.clamp(self.second(self.first(x)))))


class UserLeafTracer(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return isinstance(m, (Gate, Clamp, Limiter)) or super().is_leaf_module(m, qualname)


def user_leaves() -> fx.GraphModule:
    torch.manual_seed(0)
    root = UserLeaves().eval()
    return fx.GraphModule(root, UserLeafTracer().trace(root), "UserLeaves")


class BasicBlock(nn.Module):
    """A torchvision-style residual block: `downsample` only where the shape changes."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ConvNormAct(nn.Sequential):
    """A Sequential subclass that only builds its layers, like torchvision's Conv2dNormActivation."""

    def __init__(self, inplanes: int, planes: int) -> None:
        super().__init__(nn.Conv2d(inplanes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True))


class ResNetLike(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvNormAct(3, 8)
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2), BasicBlock(16, 16))
        self.head = nn.ModuleDict({"pool": nn.AdaptiveAvgPool2d(1), "fc": nn.Linear(16, 5)})

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.head["fc"](torch.flatten(self.head["pool"](x), 1))


class Cached(nn.Module):
    """Keeps an intermediate value that its caller reads: its body cannot become a function."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        self.hidden = self.lin(x)
        return torch.relu(self.hidden) * 2


class Scaled(nn.Module):
    """A module called with a different Python constant each time: the calls' bodies differ."""

    def forward(self, x, scale: float):
        return x * scale


class Escapes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cached = Cached()
        self.scaled = Scaled()
        self.twice = Leaf(4)
        self.blocks = nn.ModuleList([Leaf(4), Leaf(4)])

    def forward(self, x):
        y = self.cached(x) + self.cached.hidden
        y = self.scaled(y, 2.0) + self.scaled(y, 3.0)
        for block in self.blocks:
            y = block(y)
        return self.twice(self.twice(y))


class ChannelNorm(nn.Module):
    """A layer norm over channels whose forward spells the channel count: instances differ in a forward literal."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.channels = channels

    def forward(self, x):
        x = torch.nn.functional.layer_norm(x.permute(0, 2, 3, 1), (self.channels,), self.weight, self.bias, 1e-6)
        return x.permute(0, 3, 1, 2)


class Stages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = ChannelNorm(4)
        self.conv = nn.Conv2d(4, 8, 1)
        self.norm2 = ChannelNorm(8)

    def forward(self, x):
        return self.norm2(self.conv(self.norm1(x)))


class Excite(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x * torch.sigmoid(self.fc(x))


class Variant(nn.Module):
    """One source class, three codes: with an excitation child (a generated class of its own) and
    with or without a residual connection."""

    def __init__(self, width: int, excite: bool = False, residual: bool = False) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.excite = Excite(width) if excite else None
        self.residual = residual

    def forward(self, x):
        y = torch.relu(self.lin(x))
        if self.excite is not None:
            y = self.excite(y) * 2
        return x + y if self.residual else y


class Variants(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Variant(4, excite=True), Variant(4), Variant(4, residual=True), Variant(4))

    def forward(self, x):
        return self.blocks(x)


class NormAct(nn.Module):
    """Built with an activation or without (nn.Identity), as timm's BatchNormAct2d takes `act_layer`."""

    def __init__(self, channels: int, act: bool) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.SiLU(inplace=True) if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(x))


class NormActs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = NormAct(4, act=True)
        self.second = NormAct(4, act=False)
        self.conv = nn.Conv2d(4, 8, 1)
        self.third = NormAct(8, act=True)

    def forward(self, x):
        return self.third(self.conv(self.second(self.first(x))))


class PooledHead(nn.Sequential):
    """A Sequential subclass with a forward of its own (as torchvision's ASPPPooling)."""

    def __init__(self, channels: int) -> None:
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(channels, channels, 1), nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for module in self:
            x = module(x)
        return torch.nn.functional.interpolate(x, size=size, mode="nearest")


class Heads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = PooledHead(4)

    def forward(self, x):
        return self.head(x) + x


class NamedStage(nn.Module):
    """A Sequential built from an OrderedDict: named children, called as one."""

    def __init__(self) -> None:
        super().__init__()
        layers = [("block1-0", nn.Linear(4, 4)), ("act", nn.ReLU()), ("block1-1", nn.Linear(4, 4))]
        self.stage = nn.Sequential(collections.OrderedDict(layers))

    def forward(self, x):
        return self.stage(x)


class Getter(nn.ModuleDict):
    """A ModuleDict subclass with a forward, as torchvision's IntermediateLayerGetter."""

    def __init__(self) -> None:
        super().__init__({"0": nn.Linear(4, 4), "1": nn.ReLU(), "head": nn.Linear(4, 4)})

    def forward(self, x):
        for module in self.values():
            x = module(x)
        return x


class Pyramid(nn.Module):
    """ModuleLists used last to first (as torchvision's FPN does): children kept in that order."""

    def __init__(self) -> None:
        super().__init__()
        self.getter = Getter()
        self.inner = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        x = self.getter(x)
        for i in (2, 1, 0):
            x = self.inner[i](x) + x
        return x


class Mix(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x + torch.relu(self.fc(x))


class Stage(nn.Module):
    """A downsample (none in the first stage) and a Sequential of blocks, as timm's ConvNeXtStage."""

    def __init__(self, width_in: int, width: int, depth: int) -> None:
        super().__init__()
        self.downsample = nn.Identity() if width_in == width else nn.Sequential(nn.LayerNorm(width_in), nn.Linear(width_in, width))
        self.blocks = nn.Sequential(*(Mix(width) for _ in range(depth)))

    def forward(self, x):
        return self.blocks(self.downsample(x))


class Stages2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(Stage(4, 4, 2), Stage(4, 8, 3))

    def forward(self, x):
        return self.stages(x)


class DenseLayer(nn.Module):
    """Takes every earlier feature map as one list, as torchvision's `_DenseLayer`."""

    def __init__(self, width: int, growth: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(width)
        self.conv = nn.Conv2d(width, growth, 3, padding=1, bias=False)

    def forward(self, features):
        return self.conv(torch.relu(self.norm(torch.cat(features, 1))))


class DenseBlock(nn.ModuleDict):
    """Each layer reads the list of the block's input and every earlier layer's output."""

    def __init__(self, width: int, growth: int, depth: int) -> None:
        super().__init__({f"layer{i + 1}": DenseLayer(width + i * growth, growth) for i in range(depth)})

    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return torch.cat(features, 1)


class Joined(nn.Module):
    """Takes two maps as two arguments and joins them: one arity, so its parameters stay two."""

    def forward(self, a, b):
        return torch.cat([a, b], 1)


class DenseNetLike(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block1 = DenseBlock(3, 2, 3)
        self.block2 = DenseBlock(9, 2, 2)
        self.join = Joined()

    def forward(self, x):
        y = self.block2(self.block1(x))
        return self.join(y, y * 2)


class Mode(nn.Module):
    """One `__init__`, three codes (by `mode`): more than a flag tells apart, so variants subclass the first."""

    def __init__(self, mode: int) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.mode = mode

    def forward(self, x):
        y = self.lin(x)
        if self.mode == 1:
            return torch.tanh(y)
        if self.mode == 2:
            return torch.sigmoid(y)
        return y


class Modes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Mode(0), Mode(1), Mode(2), Mode(0))

    def forward(self, x):
        return self.blocks(x)


class Split(nn.Module):
    """A second branch only where it downsamples, and other code there, as torchvision's ShuffleNet block."""

    def __init__(self, width: int, down: bool) -> None:
        super().__init__()
        self.branch1 = nn.Linear(width, width // 2) if down else None
        self.branch2 = nn.Linear(width if down else width // 2, width // 2)

    def forward(self, x):
        if self.branch1 is None:
            x1, x2 = x.chunk(2, dim=1)
            return torch.cat((x1, self.branch2(x2)), dim=1)
        return torch.cat((self.branch1(x), self.branch2(x)), dim=1)


class Splits(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Split(4, True), Split(4, False), Split(4, False))

    def forward(self, x):
        return self.blocks(x)


class Chain(nn.Module):
    """One `__init__`, two long codes with little in common: a subclass each, not both under one `if`."""

    def __init__(self, odd: bool) -> None:
        super().__init__()
        self.a, self.c, self.b = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)
        self.odd = odd

    def forward(self, x):
        for _ in range(5):
            x = torch.tanh(self.a(x)) if self.odd else torch.sin(self.a(x))
        return self.b(self.c(x))


class Chains(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Chain(False), Chain(True))

    def forward(self, x):
        return self.blocks(x)


class ConvUnit(nn.Module):
    """Holds a NormAct whose activation differs between units: the unit takes it built."""

    def __init__(self, act: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.norm = NormAct(4, act)

    def forward(self, x):
        return self.norm(self.conv(x)) + x


class ConvUnits(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.units = nn.Sequential(ConvUnit(True), ConvUnit(False), ConvUnit(True))

    def forward(self, x):
        return self.units(x)


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, scale):
        return x + self.lin(x) * scale


class Encoder(nn.Module):
    """Blocks of one class applied one after another with one more argument, as an HF encoder runs its layers."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 4)
        self.layers = nn.ModuleList(Layer() for _ in range(4))
        self.pair = nn.ModuleList(Layer() for _ in range(2))

    def forward(self, x):
        scale = torch.sigmoid(x.mean())
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, scale)
        for layer in self.pair:
            h = layer(h, scale)
        return h + x


@fx.wrap
def doubled_cat(tensors: list[torch.Tensor]) -> torch.Tensor:
    """A user function that rewrites the list it is given: callers must each get a list of their own."""
    tensors[:] = [t * 2 for t in tensors]
    return torch.cat(tensors, 1)


class DoublingLayer(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, 2)

    def forward(self, features):
        return self.lin(doubled_cat(features))


class DoublingBlock(nn.ModuleDict):
    """A DenseNet-style block whose layers edit their list: each gets a copy, so no loop shares one."""

    def __init__(self) -> None:
        super().__init__({"layer1": DoublingLayer(2), "layer2": DoublingLayer(4), "layer3": DoublingLayer(6)})

    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(layer(list(features)))
        return torch.cat(features, 1)


class Concat(nn.Module):
    def forward(self, features):
        return torch.cat(features, 1)


class NestedReader(nn.Module):
    """Reads its list only inside a child: the child takes the list, not this layer."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.cat = Concat()
        self.lin = nn.Linear(width, 2)

    def forward(self, features):
        return self.lin(self.cat(features))


class NestedBlock(nn.ModuleDict):
    def __init__(self) -> None:
        super().__init__({"layer1": NestedReader(2), "layer2": NestedReader(4), "layer3": NestedReader(6)})

    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return torch.cat(features, 1)


class Gated(nn.Module):
    """A buffer named like the flag its two codes would take."""

    def __init__(self, add: bool) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("residual", torch.full((4,), 0.5))
        self.add = add

    def forward(self, x):
        out = self.lin(x) * self.residual
        return x + out if self.add else out


class GatedBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Gated(False), Gated(True), Gated(True))

    def forward(self, x):
        return self.blocks(x)


class ConvBNAct(nn.Sequential):
    def __init__(self, cin: int, cout: int, groups: int = 1, act: type[nn.Module] | None = nn.ReLU6) -> None:
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, 3 if groups > 1 else 1, padding=1 if groups > 1 else 0, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        super().__init__(*layers, *([act(inplace=True)] if act else []))


class SqueezeGate(nn.Module):
    def __init__(self, channels: int, squeeze: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean((2, 3), keepdim=True)))))


class Expanding(nn.Module):
    """torchvision's InvertedResidual: an expansion layer only where expand != 1, a gate only where gated,
    and the activation a class argument."""

    def __init__(self, cin: int, cout: int, expand: int, gated: bool = False, act: type[nn.Module] = nn.ReLU6) -> None:
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers.append(ConvBNAct(cin, hidden, act=act))
        layers.append(ConvBNAct(hidden, hidden, groups=hidden, act=act))
        if gated:
            layers.append(SqueezeGate(hidden, hidden // 4 + 1))
        layers.append(ConvBNAct(hidden, cout, act=None))
        self.conv = nn.Sequential(*layers)
        self.residual = cin == cout

    def forward(self, x):
        if self.residual:
            return x + self.conv(x)
        return self.conv(x)


class ExpandingNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            Expanding(4, 4, 1), Expanding(4, 6, 2), Expanding(6, 6, 3), Expanding(6, 8, 2, gated=True), Expanding(8, 8, 1, gated=True),
            Expanding(8, 8, 2, act=nn.Hardswish),
        )

    def forward(self, x):
        return self.blocks(x)


class Scale(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.full((channels, 1, 1), 0.5))

    def forward(self, x):
        return x * self.weight


class Refine(nn.Module):
    """An optional element with no literal of its own: built under a flag of its name."""

    def __init__(self, channels: int, scaled: bool) -> None:
        super().__init__()
        layers: list[nn.Module] = [ConvBNAct(channels, channels, groups=channels)]
        if scaled:
            layers.append(Scale(channels))
        layers.append(ConvBNAct(channels, channels, act=False))
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


class RefineNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Refine(4, False), Refine(4, True), Refine(4, True))

    def forward(self, x):
        return self.blocks(x)


class Skipping(nn.Module):
    """timm's InvertedResidual: `shortcut = x`, the layers rebinding `x`, the shortcut added where shapes allow."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv_pw = nn.Conv2d(cin, cin * 2, 1)
        self.bn1 = nn.BatchNorm2d(cin * 2)
        self.conv_pwl = nn.Conv2d(cin * 2, cout, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.has_skip = cin == cout

    def forward(self, x):
        shortcut = x
        x = self.conv_pw(x)
        x = self.bn1(x)
        x = torch.relu(x)
        x = self.conv_pwl(x)
        x = self.bn2(x)
        if self.has_skip:
            x = x + shortcut
        return x


class SkippingNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Skipping(4, 6), Skipping(6, 6), Skipping(6, 6))

    def forward(self, x):
        return self.blocks(x)


class Excited(nn.Module):
    """timm's InvertedResidual: a squeeze-excite child only some blocks build, and the shortcut where shapes allow."""

    def __init__(self, cin: int, cout: int, excite: bool) -> None:
        super().__init__()
        self.conv_pw = nn.Conv2d(cin, cin * 2, 1)
        self.bn1 = nn.BatchNorm2d(cin * 2)
        self.se = SqueezeGate(cin * 2, cin) if excite else None
        self.conv_pwl = nn.Conv2d(cin * 2, cout, 1)
        self.has_skip = cin == cout

    def forward(self, x):
        shortcut = x
        x = self.bn1(self.conv_pw(x))
        if self.se is not None:
            x = self.se(x)
        x = self.conv_pwl(x)
        if self.has_skip:
            x = x + shortcut
        return x


class ExcitedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Excited(4, 6, True), Excited(6, 6, True), Excited(6, 8, False), Excited(8, 8, False))

    def forward(self, x):
        return self.blocks(x)


class ConvNorm(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class RepBlock(nn.Module):
    """timm's RepVggBlock: an identity norm only where shapes allow, and convs whose stride is a default
    where it is 1: the blocks with stride 2 spell `stride=2`, the others nothing."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.identity = nn.BatchNorm2d(cin) if cin == cout and stride == 1 else None
        self.conv_kxk = ConvNorm(cin, cout, 3, stride=stride)
        self.conv_1x1 = ConvNorm(cin, cout, 1, stride=stride)
        self.act = nn.ReLU()

    def forward(self, x):
        if self.identity is None:
            x = self.conv_1x1(x) + self.conv_kxk(x)
        else:
            identity = self.identity(x)
            x = self.conv_1x1(x) + self.conv_kxk(x)
            x = x.add_(identity)
        return self.act(x)


class RepNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(RepBlock(4, 6, 2), RepBlock(6, 6, 1), RepBlock(6, 8, 2), RepBlock(8, 8, 1))

    def forward(self, x):
        return self.blocks(x)


class DownBlock(nn.Module):
    """torchvision's video BasicBlock: a downsample only where the first conv strides, that conv a child
    whose layers differ (a Sequential built by the caller in the source)."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=stride == 1), nn.BatchNorm2d(cout))
        self.conv2 = nn.Sequential(nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout))
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride), nn.BatchNorm2d(cout)) if stride != 1 else None

    def forward(self, x):
        out = self.conv2(self.conv1(x))
        if self.downsample is not None:
            x = self.downsample(x)
        return torch.relu(out + x)


class DownNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(DownBlock(4, 4, 1), DownBlock(4, 6, 2), DownBlock(6, 6, 1))

    def forward(self, x):
        return self.blocks(x)


class SplitStage(nn.Module):
    """timm's CrossStage: a downsampling conv only some stages build, and a split size the trace bakes in."""

    def __init__(self, cin: int, cout: int, down: bool) -> None:
        super().__init__()
        self.conv_down = nn.Conv2d(cin, cin, 3, stride=2, padding=1) if down else None
        self.conv_exp = nn.Conv2d(cin, cout * 2, 1)
        self.half = cout

    def forward(self, x):
        if self.conv_down is not None:
            x = self.conv_down(x)
        x = self.conv_exp(x)
        a, b = x.split(self.half, dim=1)
        return torch.cat([b, a * 2], dim=1)


class SplitStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(SplitStage(4, 4, True), SplitStage(8, 6, False), SplitStage(12, 8, True), SplitStage(16, 8, False))

    def forward(self, x):
        return self.stages(x)


class Bodied(nn.Module):
    """A container only some blocks build, whose elements differ between those that do: passed whole."""

    def __init__(self, mode: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.body = None
        if mode:
            layers = [ConvBNAct(4, 4, groups=4)] + ([ConvBNAct(4, 4)] if mode == 2 else []) + [nn.Conv2d(4, 4, 1)]
            self.body = nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv(x)
        if self.body is not None:
            x = self.body(x)
        return x * 2


class BodiedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Bodied(0), Bodied(1), Bodied(2))

    def forward(self, x):
        return self.blocks(x)


class Activated(nn.Module):
    """An activation that is an element of its own, of one class or another."""

    def __init__(self, act: type[nn.Module]) -> None:
        super().__init__()
        self.body = nn.Sequential(ConvBNAct(4, 4, groups=4), nn.Conv2d(4, 4, 1), act())

    def forward(self, x):
        return self.body(x)


class ActivatedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Activated(nn.ReLU), Activated(nn.SiLU), Activated(nn.ReLU))

    def forward(self, x):
        return self.blocks(x)


class Shortcut(nn.Module):
    """timm's regnet Bottleneck: the shortcut an nn.Identity where shapes allow (no call in the graph), a
    strided conv elsewhere."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 1)
        self.downsample = nn.Conv2d(cin, cout, 1, stride=stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        out = self.conv2(torch.relu(self.conv1(x)))
        out = out + self.downsample(x)
        return torch.relu(out)


class ShortcutNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Shortcut(4, 6, 2), Shortcut(6, 6, 1), Shortcut(6, 8, 2), Shortcut(8, 8, 1))

    def forward(self, x):
        return self.blocks(x)


class LayerScale(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.full((width,), 0.5))

    def forward(self, x):
        return x * self.weight


class MetaBlock(nn.Module):
    """timm's MetaFormerBlock: two residual scales only some blocks build."""

    def __init__(self, width: int, scaled: bool) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.res_scale1 = LayerScale(width) if scaled else None
        self.mix = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.res_scale2 = LayerScale(width) if scaled else None
        self.mlp = nn.Linear(width, width)

    def forward(self, x):
        if self.res_scale1 is None:
            x = x + self.mix(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.res_scale1(x) + self.mix(self.norm1(x))
        return self.res_scale2(x) + self.mlp(self.norm2(x))


class MetaBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(MetaBlock(4, False), MetaBlock(4, True), MetaBlock(4, False))

    def forward(self, x):
        return self.blocks(x)


class Offset(nn.Module):
    """A buffer named like the attribute a forward number that differs between blocks would take."""

    def __init__(self, scale: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.register_buffer("value", torch.full((4, 1, 1), 0.25))
        self.scale = scale

    def forward(self, x):
        return self.conv(x) * self.scale + self.value


class Offsets(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Offset(2), Offset(3), Offset(2))

    def forward(self, x):
        return self.blocks(x)


class IdentityStage(nn.Module):
    """timm's CrossStage as timm writes it: the downsampling conv an nn.Identity where a stage keeps its
    size, which symbolic_trace keeps as a call."""

    def __init__(self, cin: int, cout: int, down: bool) -> None:
        super().__init__()
        norm_act = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU())  # nested, as ConvNormAct(..., bn=BatchNormAct2d(..., act=...))
        self.conv_down = nn.Sequential(nn.Conv2d(cin, cin, 3, stride=2, padding=1), norm_act) if down else nn.Identity()
        self.conv_exp = nn.Conv2d(cin, cout * 2, 1)
        self.half = cout

    def forward(self, x):
        x = self.conv_down(x)
        x = self.conv_exp(x)
        a, b = x.split(self.half, dim=1)
        return torch.cat([b, a * 2], dim=1)


class IdentityStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(IdentityStage(4, 4, False), IdentityStage(8, 6, True), IdentityStage(12, 8, True))

    def forward(self, x):
        return self.stages(x)


class Shortcutted(nn.Module):
    """timm's DlaBasic: the residual a second input the caller may leave out (`shortcut = x` then)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)

    def forward(self, x, shortcut=None):
        if shortcut is None:
            shortcut = x
        out = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(out + shortcut * 0.5)


class ShortcuttedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(4, 6, 1)
        self.first = Shortcutted(6)
        self.second = Shortcutted(6)
        self.third = Shortcutted(6)

    def forward(self, x):
        y = self.stem(x)
        x = self.first(y, x.mean(1, keepdim=True))
        x = self.second(x)
        return self.third(x, y)


class BlockStage(nn.Module):
    """timm's RegStage: blocks named b1, b2, ... chained in the order they were added, 1 to 3 per stage."""

    def __init__(self, cin: int, cout: int, depth: int) -> None:
        super().__init__()
        for i in range(depth):
            self.add_module(f"b{i + 1}", Shortcut(cin if i == 0 else cout, cout, 2 if i == 0 else 1))

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x


class BlockStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.s1 = BlockStage(4, 6, 1)
        self.s2 = BlockStage(6, 8, 3)
        self.s3 = BlockStage(8, 8, 2)

    def forward(self, x):
        return self.s3(self.s2(self.s1(x)))


class ActGate(nn.Module):
    def __init__(self, width: int, act: nn.Module) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = act

    def forward(self, x):
        return x + self.act(self.fc(x))


class GateStage(nn.Module):
    """timm's MetaFormerStage: a Sequential of blocks that take a layer built by the caller (`res_scale1=Scale(320)`)."""

    def __init__(self, width: int, depth: int, act: type[nn.Module]) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.blocks = nn.Sequential(*[ActGate(width, act()) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.proj(x))


class GateStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(GateStage(8, 2, nn.ReLU), GateStage(8, 3, nn.GELU))

    def forward(self, x):
        return self.stages(x)


class TwoOutputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        y = self.proj(x)
        return y * 2, y.mean(-1, keepdim=True)


class Unpacking(nn.Module):
    """Tuple results taken apart: chunks read whole, a child returning two values, and three chunks of
    which only two are read (chunk(3) may give two: kept as indexing)."""

    def __init__(self) -> None:
        super().__init__()
        self.pair = TwoOutputs()

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        y, m = self.pair(torch.cat([b, a], dim=-1))
        parts = y.chunk(3, dim=0)
        return y * m + parts[0].sum() - parts[1].sum()


class DeadCode(nn.Module):
    """Values nothing reads: views and arithmetic (no statement), a random draw and an in-place add (kept)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = self.proj(x)
        x.unsqueeze(1).unsqueeze(2) * 2
        torch.rand_like(y)
        y.clone().add_(1)
        return y * 2


class LongScaled(MetaBlock):
    """MetaBlock with more statements on each side: torch.export's comments, one per source line,
    double the lines each side has of its own."""

    def forward(self, x):
        y = torch.relu(self.mix(self.norm1(x)))
        if self.res_scale1 is None:
            x = x + y
            z = self.norm2(x)
            z = self.mlp(z)
            z = torch.tanh(z)
            return x + z
        x = self.res_scale1(x)
        x = x + y
        z = self.norm2(x)
        z = self.mlp(z)
        z = torch.tanh(z)
        return self.res_scale2(x) + z


class LongScaledBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(LongScaled(8, False), LongScaled(8, False), LongScaled(8, True), LongScaled(8, True))

    def forward(self, x):
        return self.blocks(x)


class StateBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, tokens):
        return self.proj(x) + tokens.mean(), tokens * 2


class Threading(nn.Module):
    """Blocks that thread their state (`x, tokens = block(x, tokens)`), as timm's pit stages."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([StateBlock(), StateBlock(), StateBlock()])

    def forward(self, x):
        tokens = x.sum(-1, keepdim=True)
        x = x * 3
        for block in self.blocks:
            x, tokens = block(x, tokens)
        return x * tokens


class NestedTuple(nn.Module):
    """An LSTM's `out, (h, c)`: a result whose item is a tuple itself (the outer one is unpacked)."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 4, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out.sum(1) + h[0] * c[0]


class SplitPairs(nn.Module):
    """`x.split(4, dim=1)` read whole: its length depends on the input (a traced graph is not unpacked)."""

    def forward(self, x):
        parts = x.split(4, dim=1)
        return parts[0] * parts[1]


class UnderscoreInput(nn.Module):
    """An input named `_` beside a chunk nothing reads: the unread item takes another name."""

    def forward(self, x, _):
        a, b, c = x.chunk(3, 1)
        return a * c + _


class BlockNamedStage(BlockStage):
    """A stage whose forward names its input `block`."""

    def forward(self, block):
        for child in self.children():
            block = child(block)
        return block


class BlockInput(nn.Module):
    """Numbered stages whose input is named `block`: the loop variable takes another name."""

    def __init__(self) -> None:
        super().__init__()
        self.s1 = BlockNamedStage(4, 4, 1)
        self.s2 = BlockNamedStage(4, 4, 2)

    def forward(self, block):
        return self.s1(block) + self.s2(block)


class Attending(nn.Module):
    """BART's attention: self-attention (`attn(x, mask=mask)`) or, given another sequence, cross-attention."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x, context=None, mask=None):
        if context is None:
            context = x
        scores = self.q(x) @ self.k(context).transpose(-2, -1) + mask
        return scores.softmax(-1) @ self.v(context)


class DecoderLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.self_attn = Attending(dim)
        self.cross_attn = Attending(dim)

    def forward(self, x, memory, mask):
        x = x + self.self_attn(x, mask=mask)
        return x + self.cross_attn(x, memory, mask)


class Decoding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer(8), DecoderLayer(8)])

    def forward(self, x, memory, mask):
        for layer in self.layers:
            x = layer(x, memory, mask)
        return x


class Positions(nn.Module):
    """BART's learned positional embedding: positions made where the caller gives none."""

    def __init__(self, length: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(length + 2, dim))

    def forward(self, position_ids=None):
        if position_ids is None:
            position_ids = torch.arange(8).expand(1, -1)
        else:
            position_ids = position_ids.unsqueeze(0)
        return F.embedding(position_ids + 2, self.weight)


class Positioned(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder_positions = Positions(8, 4)
        self.decoder_positions = Positions(8, 4)

    def forward(self, position_ids):
        return self.encoder_positions() + self.decoder_positions(position_ids)


class FloatNorm(nn.Module):
    """T5's layer norm: `x.to(torch.float32)` of a float32 x is x itself, so torch.export records the
    caller's later uses of x as uses of the `to` made inside this call."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6))


class NormedResidual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = FloatNorm(8)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return x + self.fc(self.norm(x))


class NormedResiduals(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([NormedResidual(), NormedResidual()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Rotary(nn.Module):
    """transformers' rotary embedding: it returns `cos.to(x.dtype)`, the `to` of a value it made itself."""

    def forward(self, x):
        angles = torch.arange(x.shape[-1], dtype=torch.float32) * 0.5
        return angles.cos().to(x.dtype), angles.sin().to(x.dtype)


class Rotating(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rotary = Rotary()
        self.norm = FloatNorm(8)

    def forward(self, x):
        cos, sin = self.rotary(x)
        return self.norm(x) * cos + sin


class DroppedConv(nn.Module):
    """timm efficientvit's ConvLayer: a dropout first, which in eval mode returns its input itself."""

    def __init__(self) -> None:
        super().__init__()
        self.dropout = nn.Dropout(0.0)
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(self.dropout(x))


class DroppedResiduals(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([DroppedConv(), DroppedConv()])

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


class LinearNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.linear(x))


class ActThenLinear(nn.Module):
    """levit's `proj`: an OrderedDict Sequential whose stateless first child torch.export's module holds last."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Sequential(collections.OrderedDict(act=nn.Hardswish(), ln=LinearNorm()))
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.proj(x * 2))


class LoopedLinears(nn.Module):
    """A loop over a ModuleList with code around each call: the trace repeats it per child (rolled.py)."""

    def __init__(self, width: int = 4, depth: int = 4) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins:
            y = torch.relu(lin(x))
            x = (x + y) * 0.5
        return x


class LoopedPreNorm(nn.Module):
    """A loop whose call is in the middle of its code, calling a shared module too, reading an input each
    time, its start read again after it."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        h = x
        for block in self.blocks:
            h = h + block(self.norm(h) * 2.0) + bias
        return h - x


class LoopedGates(nn.Module):
    """A loop whose body unpacks a result, and reads the loop's start each time."""

    def __init__(self) -> None:
        super().__init__()
        self.gates = nn.ModuleList(nn.Linear(4, 8) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for gate in self.gates:
            a, b = gate(h).chunk(2, dim=-1)
            h = x + a * torch.sigmoid(b)
        return h


class NumberedSteps(nn.Module):
    """A loop whose code differs per child (a number from the loop's index): written unrolled."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, lin in enumerate(self.lins):
            x = torch.relu(lin(x)) * (i + 1)
        return x


class KeptSteps(nn.Module):
    """A loop that keeps every step's value for later (a list of features): written unrolled."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept = []
        for lin in self.lins:
            x = torch.relu(lin(x)) + 1.0
            kept.append(x)
        return torch.cat(kept, -1)


class RepeatedLayers(nn.Module):
    """Containers holding runs of layers one call builds alike, between others."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(8, 2), nn.Linear(8, 3), nn.Linear(8, 3), nn.Linear(8, 3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        return torch.cat([head(x) for head in self.heads], -1)


class ShuffledSplit(nn.Module):
    """Split, then a channel shuffle whose sizes are the block's own width: literals of a trace that
    differ from stage to stage on both sides of the branch, as in torchvision's ShuffleNet block."""

    def __init__(self, width: int, down: bool) -> None:
        super().__init__()
        self.width = width
        self.branch1 = nn.Linear(width, width // 2) if down else None
        self.branch2 = nn.Linear(width if down else width // 2, width // 2)

    def forward(self, x):
        if self.branch1 is None:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        out = out.view(-1, 2, self.width // 2)
        return out.transpose(1, 2).reshape(-1, self.width)


class ShuffledSplits(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stage1 = nn.Sequential(ShuffledSplit(4, True), ShuffledSplit(4, False))
        self.widen = nn.Linear(4, 8)
        self.stage2 = nn.Sequential(ShuffledSplit(8, True), ShuffledSplit(8, False), ShuffledSplit(8, False))

    def forward(self, x):
        return self.stage2(self.widen(self.stage1(x)))


class Tree(nn.Module):
    """A tree of trees (timm's DlaTree): modules of the caller's own class inside it."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.inner = Tree(depth - 1) if depth else None

    def forward(self, x):
        y = self.lin(x)
        z = y.relu()
        if self.inner is not None:
            z = self.inner(z)
        return z + x


class Bottlenecked(nn.Module):
    """Some blocks squeeze their features through a width of their own, which nothing else in the block has."""

    def __init__(self, hidden: int | None = None) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.squeeze = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, 4)) if hidden else None

    def forward(self, x):
        x = self.lin(x)
        if self.squeeze is not None:
            x = self.squeeze(x)
        return torch.relu(x)


class BottleneckedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Bottlenecked(3), Bottlenecked(), Bottlenecked(2), Bottlenecked())

    def forward(self, x):
        return self.blocks(x)


class Ghosted(nn.Module):
    """timm's GhostBottleneck: a depthwise conv and its norm where it strides, a squeeze-excite where asked, a
    shortcut conv where its width or size changes (an empty Sequential elsewhere); each applied in place."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1, se: bool = False) -> None:
        super().__init__()
        self.expand = nn.Conv2d(in_channels, 8, 1)
        self.conv_dw = nn.Conv2d(8, 8, 3, stride=stride, padding=1, groups=8) if stride > 1 else None
        self.bn_dw = nn.BatchNorm2d(8) if stride > 1 else None
        self.se = SqueezeGate(8, 2) if se else None
        self.project = nn.Conv2d(8, out_channels, 1)
        if in_channels == out_channels and stride == 1:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=stride), nn.BatchNorm2d(out_channels))

    def forward(self, x):
        shortcut = x
        x = self.expand(x)
        if self.conv_dw is not None:
            x = self.conv_dw(x)
            x = self.bn_dw(x)
        if self.se is not None:
            x = self.se(x)
        x = self.project(x)
        x += self.shortcut(shortcut)
        return x


class GhostedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            Ghosted(4, 4), Ghosted(4, 4, se=True), Ghosted(4, 6, stride=2), Ghosted(6, 6),
            Ghosted(6, 8, se=True), Ghosted(8, 8, stride=2, se=True),
        )  # fmt: skip

    def forward(self, x):
        return self.blocks(x)


class DropPath(nn.Module):
    """timm's DropPath: stochastic depth, its input itself in eval mode (symbolic_trace runs through it)."""

    def __init__(self, rate: float) -> None:
        super().__init__()
        self.rate = rate

    def forward(self, x):
        if self.rate == 0.0 or not self.training:
            return x
        keep = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(1 - self.rate)
        return x * keep / (1 - self.rate)


class DropPathBlock(nn.Module):
    """timm's blocks: `DropPath(rate) if rate > 0 else nn.Identity()` for each residual branch, and
    a layer scale every block builds as an nn.Identity (timm's `ls1` without init values)."""

    def __init__(self, width: int, rate: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.ls1 = nn.Identity()
        self.drop_path1 = DropPath(rate) if rate > 0 else nn.Identity()
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.drop_path2 = DropPath(rate) if rate > 0 else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.fc(self.norm(x))).contiguous())
        return x + self.drop_path2(self.mlp(x) * 0.5)


class DropPathNet(nn.Module):
    """Drop rates rising with depth from 0, as timm's `drop_path_rate` gives them: the first block's
    children are nn.Identity, the others' DropPath."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(DropPathBlock(4, rate) for rate in (0.0, 0.1, 0.2)))

    def forward(self, x):
        return self.blocks(x)


class BufferNamedLikeIdentity(nn.Module):
    """A block with an nn.Identity child `d` beside one whose `d` is a buffer: nothing to add there."""

    def __init__(self, identity: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if identity:
            self.d = nn.Identity()
            self.register_buffer("k", torch.full((4,), 5.0))
        else:
            self.register_buffer("d", torch.full((4,), 3.0))

    def forward(self, x):  # the same ops either way, an identity call aside
        if isinstance(self.d, nn.Module):
            return x + torch.mul(self.d(self.fc(x)), self.k)
        return x + torch.mul(self.fc(x), self.d)


class BufferNamedLikeIdentityNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(BufferNamedLikeIdentity(True), BufferNamedLikeIdentity(False))

    def forward(self, x):
        return self.blocks(x)


class InnerDropPath(nn.Module):
    def __init__(self, rate: float) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop_path = DropPath(rate) if rate > 0 else nn.Identity()

    def forward(self, x):
        return x + self.drop_path(self.fc(x))


class OuterDropPath(nn.Module):
    """A block with a drop path around one of another class with one: each instance has an identity
    at one level and a DropPath at the other."""

    def __init__(self, rate: float, inner_rate: float) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop_path = DropPath(rate) if rate > 0 else nn.Identity()
        self.inner = InnerDropPath(inner_rate)

    def forward(self, x):
        return self.inner(x + self.drop_path(self.fc(x)))


class NestedDropPaths(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = OuterDropPath(0.0, 0.1)
        self.second = OuterDropPath(0.1, 0.0)

    def forward(self, x):
        return self.second(self.first(x))


class PreScaled(nn.Module):
    def __init__(self, pre: bool) -> None:
        super().__init__()
        self.pre = pre

    def forward(self, x):
        if self.pre:
            x = x + 1
        return x * 2 * 3


class DropPathElsewhere(nn.Module):
    """Bodies of the same ops in other module calls: the identity's `x + 1` here is inside `sub` there."""

    def __init__(self, rate: float, pre: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop_path = DropPath(rate) if rate > 0 else nn.Identity()
        self.pre = pre
        self.sub = PreScaled(pre)

    def forward(self, x):
        x = self.fc(x)
        if not self.pre:
            x = self.drop_path(x + 1)
        return self.sub(x)


class DropPathElsewhereNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(DropPathElsewhere(0.0, False), DropPathElsewhere(0.1, True))

    def forward(self, x):
        return self.blocks(x)


class SourceNamed(nn.Module):
    """Locals its source names (source_names.py): a run of statements under one name, a statement over
    several lines, items of a tuple, a builtin's name (`max`, never taken) and a value the next statement
    names otherwise (`scores`, where the query dies)."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, hidden_states):
        query_states = self.q(hidden_states).view(2, 4, 2, 4)
        query_states = query_states.transpose(1, 2)
        key_states = self.k(hidden_states).view(2, 4, 2, 4).transpose(1, 2)
        scores = query_states @ key_states.transpose(-1, -2)
        max = scores.amax(-1, keepdim=True)
        first, second = (scores - max).softmax(-1).chunk(2, dim=1)
        total = torch.cat(
            [second, first],
            dim=1,
        )
        return total.sum(-1) * 2


class QkvAttention(nn.Module):
    """timm's attention: the source rebinds its input's name once the input is read for the last time,
    and slices it on under that name (a slice of a tensor is no item of a tuple)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        qkv = self.qkv(x).reshape(2, 4, 3, 2, 4).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        x = x.transpose(1, 2).reshape(2, 4, 8)
        x = torch.cat([x[:, 1:], x[:, :1]], dim=1)
        x = self.proj(x)
        return x.sigmoid()


class GatedSum(nn.Module):
    """Names a value `x` while its input, which the export names `x` (not `hidden` as here: the statement
    reading it reads `gate` and `scale` too, and `scale` is read with `hidden` only), is still read (the
    value it was normed to, which took its name): that value may not take the name. `gate` is read alone
    by one name: the input takes it."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.lin = nn.Linear(8, 8)

    def forward(self, hidden, gate, scale):
        hidden = self.norm(hidden * scale + gate)
        x = self.lin(hidden)
        x = x * gate
        return x + hidden * scale


class ViewedAttention(nn.Module):
    """twins' attention: the input's name runs on through views to q, k and v, whose memory lives until
    the attention output takes the name: no `del` of that name after it."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.a, self.b, self.c, self.d = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        x = self.qkv(x).reshape(2, 4, 3, 2, 4).permute(2, 0, 3, 1, 4)
        q, k, v = x.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        x = x.transpose(1, 2).reshape(2, 4, 8)
        x = torch.sigmoid(self.a(x))
        x = torch.tanh(self.b(x))
        x = torch.relu(self.c(x))
        return self.d(x)


class StagePool(nn.Module):
    """timm's pit pooling: the feature map and the class tokens in, both pooled out."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, stride=2, padding=1, groups=dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, cls_token):
        return self.conv(x), self.fc(cls_token)


class PooledStage(nn.Module):
    """timm's pit stage: pooled where it has a pool (`x, cls_tokens = self.pool(x, cls_tokens)`), then
    the class tokens joined to the flattened map, normed and split off again."""

    def __init__(self, dim: int, pool: bool) -> None:
        super().__init__()
        self.pool = StagePool(dim) if pool else None
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, cls_tokens):
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        b, c, h, w = x.shape
        x = torch.cat((cls_tokens, x.flatten(2).transpose(1, 2)), dim=1)
        x = self.norm(x)
        return x[:, 1:].transpose(1, 2).reshape(b, c, h, w), x[:, :1]


class PooledStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, 8))
        self.stages = nn.ModuleList([PooledStage(8, False), PooledStage(8, True), PooledStage(8, True)])

    def forward(self, x):
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        for stage in self.stages:
            x, cls_tokens = stage(x, cls_tokens)
        return x.mean((2, 3)) + cls_tokens[:, 0]


class RebindsInput(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = QkvAttention()
        self.gated = GatedSum()
        self.viewed = ViewedAttention()

    def forward(self, x):
        return self.viewed(self.gated(self.attention(x), x, x.flip(0)))


def _attention_interface(q, k, v):
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2), None


def _waves(x):
    return x.sin(), x.cos()


def _scaled(q, k):
    return q * 2, k * 3


class TupleNamed(nn.Module):
    """transformers' attention: a helper's result unpacked into two names, one read on by the next
    statement (`attn_output`), which names it, although its first value read one unpacked into other
    names (`q, k = ...`, as llama's rotary embedding); a pair both read by one statement names neither
    (`sines = cosines * sines`: which value is `sines` is not known)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, hidden_states):
        q, k, v = self.qkv(hidden_states).view(2, 4, 3, 2, 4).permute(2, 0, 3, 1, 4).unbind(0)
        q, k = _scaled(q, k)
        attn_output, attn_weights = _attention_interface(q, k, v)
        attn_output = attn_output.reshape(2, 4, 8)
        sines, cosines = _waves(attn_output)
        sines = cosines * sines
        return sines + sines.exp()


class SortedInner(nn.Module):
    """A tuple result unpacked into the name of a value its statement reads for the last time (`x, idx =
    torch.sort(x)`), well before return: no `del` of that name after the unpacking."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin(x)
        n = x.abs().sum()
        x, idx = torch.sort(x, dim=-1)
        a = x * n
        b = a * a
        c = b + b
        d = c * c
        e = d - d.mean()
        f = e * e
        g = f + f
        h = g * idx
        return h + h


class PickedInput(nn.Module):
    """Instances reading other inputs by their source names (`y` or `z`): an input named only in some is
    not named, nor one whose name another input keeps."""

    def __init__(self, flag: bool) -> None:
        super().__init__()
        self.flag = flag
        self.lin = nn.Linear(8, 8)

    def forward(self, x, y, z):
        if self.flag:
            a = y * 2
        else:
            a = z * 3
        b = self.lin(x)
        return a + b


class ReviewedNames(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = SortedInner()
        self.b1, self.b2 = PickedInput(True), PickedInput(False)

    def forward(self, u):
        p, q, r = u.exp(), u.sin(), u.cos()
        return self.inner(u * 1.5) * 2 + self.b1(p, q, r) + self.b2(p, q, r)


class MaskedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, hidden_states, attention_mask):
        scores = self.proj(hidden_states)
        return scores + attention_mask


class MaskedLayer(nn.Module):
    """Passes its mask on to a child that names it (`attention_mask`), in a call whose line reads that name:
    the layer's input takes it too; its own statement reads two of its parameters at once."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attention = MaskedAttention()

    def forward(self, hidden_states, attention_mask):
        return hidden_states + self.attention(self.norm(hidden_states), attention_mask=attention_mask)


class PassedNames(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([MaskedLayer(), MaskedLayer()])

    def forward(self, x, mask):
        mask = mask * 0.5
        for layer in self.layers:
            x = layer(x * 2, mask)
        return x


class ScaleNorm(nn.Module):
    """A norm with a weight and no children: symbolic_trace traces through it and rebuilds it as a plain
    module, which trains, though the model is in eval."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.full((width,), 1.5))

    def forward(self, x):
        return x / x.norm(dim=-1, keepdim=True) * self.weight


class NormedStep(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = ScaleNorm(width)
        self.up = nn.Linear(width, 2 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(2 * width, width)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


class TracedNorms(nn.Module):
    """Six steps whose norms fx rebuilds: in eval, every module but the layers trains after tracing."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = nn.Sequential(*[NormedStep(4) for _ in range(6)])
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.steps(x))


class SharedEncoderLayers(nn.Module):
    """Two encoders sharing one ModuleList of layers, which the package builds twice (one constructor
    call each), and norms fx rebuilds: training flags by rule, the second list's as well."""

    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.first = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.second = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.second.layers = self.first.layers
        self.norms = nn.Sequential(*[ScaleNorm(8) for _ in range(12)])

    def forward(self, x):
        return self.norms(self.second(self.first(x)))


class ShiftedAttention(nn.Module):
    """Rolls its tokens, masks the attention and rolls back only where it shifts, as torchvision's
    ShiftedWindowAttention: one source class whose instances differ in three places."""

    def __init__(self, width: int, tokens: int, shift: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.tokens, self.shift = tokens, shift

    def forward(self, x):
        if self.shift:
            x = torch.roll(x, -self.shift, dims=1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attention = (q @ k.transpose(-2, -1)) * 0.5
        if self.shift:
            mask = x.new_zeros(self.tokens)
            mask[: -self.shift].fill_(1.0)
            mask = mask.unsqueeze(0) - mask.unsqueeze(1)
            mask = mask.masked_fill(mask != 0, -100.0)
            attention = attention + mask
        attention = attention.softmax(dim=-1)
        x = self.proj(attention @ v)
        x = x * 2.0
        x = x.transpose(1, 2)
        x = x.sigmoid()
        x = x.transpose(1, 2)
        if self.shift:
            x = torch.roll(x, self.shift, dims=1)
        return x


class ShiftedStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ShiftedAttention(width, 6, shift) for width in (4, 8) for shift in (0, 2)))
        self.widen = nn.Linear(4, 8)

    def forward(self, x):
        x = self.blocks[1](self.blocks[0](x))
        return self.blocks[3](self.blocks[2](self.widen(x)))


class SelfOutput(nn.Module):
    """One statement reads two of its parameters (transformers' BertSelfOutput): the input no other took is the other."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        return self.norm(hidden_states + input_tensor)


class SelfOutputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.outputs = nn.ModuleList([SelfOutput(), SelfOutput()])

    def forward(self, x):
        for output in self.outputs:
            x = output(x * 2, x)
        return x


class StridedConv(nn.Module):
    """Calls F.conv2d with its stride: torch.export writes `stride=2` where it is not the default, and
    leaves it out where it is."""

    def __init__(self, channels: int, stride: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, channels, 3, 3) * 0.1)
        self.stride = stride

    def forward(self, x):
        return F.conv2d(x, self.weight, None, self.stride, 1).relu()


class StridedConvs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(StridedConv(3, 1), StridedConv(3, 2), StridedConv(3, 1))

    def forward(self, x):
        return self.blocks(x)


class RotaryAttention(nn.Module):
    """Unpacks a parameter into names (transformers' `cos, sin = position_embeddings`): the inputs the
    caller passes its items as take those names."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        cos, sin = position_embeddings
        q = self.q(hidden_states)
        q = q * cos + q.flip(-1) * sin
        return q + attention_mask


class RotaryLayer(nn.Module):
    """Passes the pair on whole: its inputs take the names its child unpacks it into."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = RotaryAttention()

    def forward(self, hidden_states, position_embeddings, attention_mask):
        normed = self.norm(hidden_states)
        return hidden_states + self.attn(normed, position_embeddings=position_embeddings, attention_mask=attention_mask)


class RotaryLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([RotaryLayer(), RotaryLayer()])

    def forward(self, x, attention_mask):
        position = (x.sin() * 0.5, x.cos() * 0.5)
        for layer in self.layers:
            x = layer(x, position, attention_mask)
        return x


class LateRotaryAttention(RotaryAttention):
    """RotaryAttention whose signature takes the mask before the pair it reads first (transformers'
    GPTNeoXAttention): the graph's inputs come in the order they are read, the items before the mask."""

    def forward(self, hidden_states, attention_mask, position_embeddings):
        cos, sin = position_embeddings
        q = self.q(hidden_states)
        q = q * cos + q.flip(-1) * sin
        scores = q + attention_mask
        return scores.relu()


class LateRotaryLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = LateRotaryAttention()

    def forward(self, hidden_states, attention_mask, position_embeddings):
        normed = self.norm(hidden_states)
        return hidden_states + self.attn(normed, attention_mask=attention_mask, position_embeddings=position_embeddings)


class LateRotaryLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([LateRotaryLayer(), LateRotaryLayer()])

    def forward(self, x, mask):
        position = (x.sin() * 0.5, x.cos() * 0.5)
        causal_mask = mask.tril()
        for layer in self.layers:
            x = layer(x, causal_mask, position)
        return x


class PairSource(nn.Module):
    """Returns a pair of expressions (transformers' rotary embedding `return cos.to(...), sin.to(...)`)."""

    def forward(self, x):
        emb = x * 2.0
        return emb.cos(), emb.sin()


class PassedPairs(nn.Module):
    """Binds a child's pair whole and passes it on (`position_embeddings = self.rotary_emb(...)`): its items
    take the names of the inputs the layers take them as."""

    def __init__(self) -> None:
        super().__init__()
        self.rotary = PairSource()
        self.layers = nn.ModuleList([LateRotaryLayer(), LateRotaryLayer()])

    def forward(self, x, mask):
        position_embeddings = self.rotary(x)
        causal_mask = mask.tril()
        for layer in self.layers:
            x = layer(x, causal_mask, position_embeddings)
        return x


class SwappedUse(nn.Module):
    """Reads the items it unpacks in the other order in one statement: which input is which is not
    known, so neither takes an item's name."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 8)

    def forward(self, hidden_states, position_embeddings):
        cos, sin = position_embeddings
        q = self.q(hidden_states)
        return q.flip(-1) * sin + q * cos


class SwappedUses(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = SwappedUse(), SwappedUse()

    def forward(self, x):
        position = (x.cos() * 0.5, x.sin() * 3.0)
        return self.b(self.a(x, position), position)


@fx.wrap
def scaled_by(x, training=0):
    return x * (training + 1)


class KeywordNamedTraining(nn.Module):
    """Passes a literal as a keyword named `training`: the attribute keeping it is not nn.Module's flag."""

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return scaled_by(self.lin(x), training=self.k)


class KeywordsNamedTraining(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = KeywordNamedTraining(2), KeywordNamedTraining(3)

    def forward(self, x):
        return self.b(self.a(x))


class ExpandingBlock(nn.Module):
    """A MobileNetV2-style block as written by hand: an expanding conv only where `expand` > 1, a residual
    only where the shape stays; the graph keeps the input of those with both for the sum."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        mid = cin * expand
        self.expand = nn.Conv2d(cin, mid, 1) if expand != 1 else None
        self.dw = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid)
        self.project = nn.Conv2d(mid, cout, 1)

    def forward(self, x):
        shortcut = x
        if self.expand is not None:
            x = self.expand(x)
        x = self.project(F.relu(self.dw(x)))
        if self.use_res:
            x = x + shortcut
        return x


class ExpandingBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ExpandingBlock(3, 4, 2, 1), ExpandingBlock(4, 4, 1, 2), ExpandingBlock(4, 6, 2, 2), ExpandingBlock(6, 6, 1, 2))

    def forward(self, x):
        return self.blocks(x)


class TokenPool(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 2, 1)
        self.fc = nn.Linear(c, c)

    def forward(self, x, cls_token):
        x = self.conv(x)
        cls_token = self.fc(cls_token)
        return x, cls_token


class TokenStage(nn.Module):
    """timm's pit stage: its input a tuple it unpacks into its own name (`x, cls_tokens = x`), a pooling child
    threading both only some stages build, and a last stage whose caller reads one of its outputs."""

    def __init__(self, c: int, pool: bool) -> None:
        super().__init__()
        self.pool = TokenPool(c) if pool else None
        self.mix = nn.Linear(c, c)

    def forward(self, x):
        x, cls_tokens = x
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        B, C, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.mix(x)
        cls_tokens = x[:, :1]
        x = x[:, 1:]
        x = x.transpose(1, 2).reshape(B, C, H, W)
        return x, cls_tokens


class TokenStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList([TokenStage(3, False), TokenStage(3, True), TokenStage(3, True)])
        self.cls = nn.Parameter(torch.randn(1, 1, 3))

    def forward(self, x):
        state = (x, self.cls.expand(x.shape[0], -1, -1))
        for stage in self.stages:
            state = stage(state)
        return state[1]


class PreExpandingBlock(nn.Module):
    """From a review: optional children on both sides of the point where the residual's input is taken
    (`pre` before it, `post` after the sum), none of which tells the blocks adding a residual apart."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int, pre: bool, post: bool) -> None:
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        mid = cin * expand
        self.pre = nn.Conv2d(cin, cin, 1) if pre else None
        self.expand = nn.Conv2d(cin, mid, 1) if expand != 1 else None
        self.dw = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid)
        self.project = nn.Conv2d(mid, cout, 1)
        self.post = nn.Conv2d(cout, cout, 1) if post else None

    def forward(self, x):
        if self.pre is not None:
            x = self.pre(x)
        shortcut = x
        if self.expand is not None:
            x = self.expand(x)
        x = self.project(F.relu(self.dw(x)))
        if self.use_res:
            x = x + shortcut
        if self.post is not None:
            x = self.post(x)
        return x


class PreExpandingBlocks(nn.Module):
    SPECS = [(3, 4, 2, 1, True, False), (4, 4, 1, 2, True, False), (4, 6, 2, 2, False, False), (6, 6, 1, 2, False, False),
             (6, 8, 2, 2, True, False), (8, 8, 1, 2, True, False), (8, 10, 2, 1, False, False)]  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(PreExpandingBlock(*spec) for spec in self.SPECS))

    def forward(self, x):
        return self.blocks(x)


class PostExpandingBlocks(PreExpandingBlocks):
    SPECS = [(3, 4, 2, 1, False, True), (4, 4, 1, 2, False, False), (4, 6, 2, 2, False, True), (6, 6, 1, 2, False, True),
             (6, 8, 2, 2, False, False), (8, 8, 1, 2, False, False)]  # fmt: skip


class HeadsAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return x.transpose(1, 2).reshape(B, N, C)


class HeadsStack(nn.Module):
    """Attention blocks of one width and other head counts: the literals torch.export bakes in where the
    source reads `self.num_heads` and `self.head_dim` are parameters of those names."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(HeadsAttention(8, 2), HeadsAttention(8, 4))

    def forward(self, x):
        return self.blocks(x)


class ItemsAfterDeadOnes(nn.Module):
    """Items of the input nothing reads (`x[0]`, dead code the export leaves out) before one returned and
    read: the graph numbers that one after the dead ones (`getitem_2`), a re-trace of the export would not."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        x[0]
        x[1]
        first = x[:, 0]
        return first, self.head(first)



class DeadReader(nn.Module):
    """A value read by code the export leaves out (a view nothing reads) and by the next statement:
    written inside that statement, as a re-trace of the export, which has no dead reader, writes it."""

    def forward(self, x):
        z = torch.cat([x, x], -1)[..., :4]
        unused = z.transpose(0, 1)  # noqa: F841 - the dead reader
        return z, x


class PoolConv(nn.Module):
    """A shortcut's downsampling, built differently by stride: the blocks take it built."""

    def __init__(self, width: int, stride: int) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(2, stride) if stride > 1 else nn.Identity()
        self.conv = nn.Conv2d(width, width, 1)

    def forward(self, x):
        return self.conv(self.pool(x))


class PreActBlock(nn.Module):
    """timm's NormFreeBlock in short: the shortcut is the input, or the downsampled pre-activated value
    (`shortcut = x`, `if self.downsample is not None: shortcut = self.downsample(out)`), and a main
    path too long for both to be written whole under one `if`."""

    def __init__(self, stride: int, downsample: bool) -> None:
        super().__init__()
        self.downsample = PoolConv(4, stride) if downsample else None
        self.act1 = nn.SiLU()
        self.conv1 = nn.Conv2d(4, 4, 1)
        self.act2 = nn.SiLU()
        self.conv2 = nn.Conv2d(4, 4, 3, stride=stride, padding=1)
        self.act3 = nn.SiLU()
        self.conv3 = nn.Conv2d(4, 4, 1)
        self.act4 = nn.Tanh()

    def forward(self, x):
        out = self.act1(x) * 0.5
        shortcut = x
        if self.downsample is not None:
            shortcut = self.downsample(out)
        out = self.conv1(out)
        out = self.conv2(self.act2(out))
        out = self.conv3(self.act3(out))
        out = self.act4(out) * 2.0
        return out * 0.2 + shortcut


class PreActBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(PreActBlock(1, True), PreActBlock(1, False), PreActBlock(2, True), PreActBlock(1, False))

    def forward(self, x):
        return self.blocks(x)


class Features(nn.Module):
    """Returns each stage's value in a dict, as torchvision's IntermediateLayerGetter does: a value its caller reads
    that its own later code reads too, returned rather than kept (its forward stores nothing on self)."""

    def __init__(self) -> None:
        super().__init__()
        self.stage1 = Leaf(4)
        self.stage2 = Leaf(4)

    def forward(self, x):
        out = {}
        x = self.stage1(x)
        out["c1"] = x
        x = self.stage2(torch.relu(x))
        out["c2"] = x
        return out


class ScaledFeatures(Features):
    """Features reading a tensor constant symbolic_trace folds into the root: its method would take it as a parameter."""

    def forward(self, x):
        out = {}
        x = self.stage1(x) * torch.tensor([1.0, 2.0, 3.0, 4.0])
        out["c1"] = x
        out["c2"] = self.stage2(torch.relu(x))
        return out


class FeaturePyramid(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = Features()
        self.scaled = ScaledFeatures()
        self.fuse = nn.Linear(4, 4)

    def forward(self, x):
        features = self.features(x)
        scaled = self.scaled(x)
        return self.fuse(features["c1"]) + features["c2"] + scaled["c1"] - scaled["c2"]


class Unpacked(nn.Module):
    """A value that dies where a call's result is unpacked into eight items, three statements before return."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        h = self.lin(x)
        a, b, c, d, e, f, g, i = torch.relu(h).chunk(8, dim=1)
        return torch.cat([a * b, c * d, e * f, g * i], 1)


class NamedLikeDynamoRoots(nn.Module):
    """Children named as dynamo names where it found a module (`L['self']`, `G['m']`): plain names to symbolic_trace."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module("L['self']", Leaf(4))
        self.add_module("G['m']", Leaf(4))

    def forward(self, x):
        return getattr(self, "G['m']")(getattr(self, "L['self']")(x))


class CheckedPatches(nn.Module):
    """timm's PatchEmbed check: a message formatted from a traced size, which symbolic_trace bakes in as "Proxy(getitem_2)"."""

    def __init__(self, size: int = 8, channels: int = 3) -> None:
        super().__init__()
        self.size = size
        self.proj = nn.Conv2d(channels, channels, 2, stride=2)

    def forward(self, x):
        _, _, h, w = x.shape
        torch._assert(h == self.size, f"Input height ({h}) doesn't match model ({self.size}).")
        torch._assert(x.ndim == 4, f"expected 4D input (got {x.ndim}D input) {{}}")
        return self.proj(x).flatten(2).sum(-1) * w


class CheckedPyramid(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = CheckedPatches(8, 3)
        self.second = CheckedPatches(4, 3)

    def forward(self, x):
        y = self.first(x)
        return self.second(x[:, :, :4, :4]) + y


class ScaledNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(4)
        self.norm1_weight = nn.Parameter(torch.linspace(0.5, 1.5, 4))  # its name is also its child's tensor's, read from here

    def forward(self, x):
        return self.norm1(x) * self.norm1_weight


class AddingStack(nn.Sequential):
    def forward(self, x):
        for layer in self:
            x = layer(x) + 1
        return x


class StackedNorms(nn.Module):
    """A Sequential subclass with a forward of its own over numbered children (dynamo: `stack_0_norm1_weight` in it)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack = AddingStack(ScaledNorm(), ScaledNorm())

    def forward(self, x):
        return self.stack(x)


class ModeAttention(nn.Module):
    """Attention run with autocast off, as timm efficientvit's LiteMLA and a Llama's rotary embedding do."""

    def __init__(self, dim: int = 4) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        with torch.autocast("cpu", enabled=False):
            attention = (q.float() @ k.float().transpose(-1, -2)).softmax(-1)
            out = attention @ v.float()
        return self.proj(out) + x


class ModeBlocks(nn.Module):
    """Blocks with a `with` of their own, and at the root a no_grad block around child calls holding an
    autocast block that changes the values (a bfloat16 linear)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([ModeAttention(), ModeAttention(), ModeAttention()])
        self.norm = nn.LayerNorm(4)
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        with torch.no_grad():
            scale = self.norm(x).abs().mean()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = self.head(x)
        return logits.float() * scale + x


class NormedConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int = 1, stride: int = 1, groups: int = 1, use_bias: bool = False, norm: bool = True, act: bool = True) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=use_bias)
        self.norm = nn.BatchNorm2d(cout) if norm else None
        self.act = nn.Hardswish() if act else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.act is not None:
            x = self.act(x)
        return x


class Inverted(nn.Module):
    """timm efficientvit's MBConv: its first two convolutions have a norm, or a bias instead (fewer_norm)."""

    def __init__(self, cin: int, cout: int, stride: int = 1, fewer_norm: bool = False) -> None:
        super().__init__()
        self.inverted_conv = NormedConv(cin, cin * 2, norm=not fewer_norm, use_bias=fewer_norm)
        self.depth_conv = NormedConv(cin * 2, cin * 2, 3, stride, groups=cin * 2, norm=not fewer_norm, use_bias=fewer_norm)
        self.point_conv = NormedConv(cin * 2, cout, act=False)

    def forward(self, x):
        return self.point_conv(self.depth_conv(self.inverted_conv(x)))


class Residual(nn.Module):
    """timm efficientvit's ResidualBlock: given its main branch, built by its caller."""

    def __init__(self, main: nn.Module, shortcut: nn.Module | None = None) -> None:
        super().__init__()
        self.main = main
        self.shortcut = shortcut

    def forward(self, x):
        res = self.main(x)
        if self.shortcut is not None:
            res = res + self.shortcut(x)
        return res


class InvertedStage(nn.Module):
    def __init__(self, cin: int, cout: int, depth: int, fewer_norm: bool) -> None:
        super().__init__()
        blocks = [Residual(Inverted(cin, cout, 2, fewer_norm))]
        blocks += [Residual(Inverted(cout, cout, 1, fewer_norm), nn.Identity()) for _ in range(depth - 1)]
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        return self.blocks(x)


class InvertedNet(nn.Module):
    """Residual blocks whose main branches differ in how deep inside they are built: one Residual class."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(InvertedStage(3, 8, 2, False), InvertedStage(8, 16, 3, True))

    def forward(self, x):
        return self.stages(x)


class OffsetBlock(nn.Module):
    """A tensor made from Python values in forward: torch.export lifts it into a constant of the block."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        offset = torch.tensor([1.0, 2.0, 3.0, 4.0])
        scale = torch.tensor([0.5, 0.25, 0.125, 2.0])
        return self.lin(x * scale + offset)


class OffsetBlocks(nn.Module):
    """Three such blocks: torch.export numbers their constants over the model (lifted_tensor_0 to _5)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([OffsetBlock(), OffsetBlock(), OffsetBlock()])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class Upcast(nn.Module):
    """A cast to the dtype the value has (`a.float()` of a float32 `a`) is `a` itself: `a`'s memory dies
    where the cast's value does, and its `del` goes there."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lin2 = nn.Linear(4, 4)

    def forward(self, x):
        a = self.lin(x).relu()
        b = a.float()
        c = self.lin2(b)
        c = c + 1
        c = c.sigmoid()
        c = c * 3
        c = c - 1
        c = c.tanh()
        c = c * 5
        c = c.cos()
        return c + 2


class DeepBody(nn.Module):
    """Blocks whose body nests Sequentials to other depths."""

    def __init__(self, variant: int) -> None:
        super().__init__()
        if variant == 0:
            self.body = nn.Sequential(NormedConv(4, 4, 3), NormedConv(4, 4, 3, act=False))
        else:
            self.body = nn.Sequential(NormedConv(4, 4, 3, norm=False, use_bias=True), nn.Sequential(NormedConv(4, 4, 3), nn.Sequential(nn.Conv2d(4, 4, 1), nn.GELU())))

    def forward(self, x):
        return self.body(x)


class DeepResidual(nn.Module):
    def __init__(self, variant: int) -> None:
        super().__init__()
        self.main = Residual(DeepBody(variant), nn.Identity())

    def forward(self, x):
        return self.main(x) * 2


class DeepStack(nn.Module):
    """dynamo holds none of these modules: the export makes a holder at every path its calls name
    (split._mirror), many of them, at depths down to six."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([DeepResidual(0), DeepResidual(1), DeepResidual(0)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ScaledDropBlock(nn.Module):
    """Literals that differ between instances, passed where the source passes its attributes: to a
    function (`F.dropout(x, self.p, ...)`), a method (`x.view(-1, self.groups, self.width)`) and as an
    operand (`* self.scale`)."""

    def __init__(self, dim: int, scale: float, p: float, groups: int) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.scale = scale
        self.p = p
        self.groups = groups
        self.width = dim // groups

    def forward(self, x):
        x = self.fc(x) * self.scale
        x = x.view(-1, self.groups, self.width).flip(1).flatten(1)
        return F.dropout(x, self.p, self.training)


class ScaledDropBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ScaledDropBlock(8, 0.5, 0.1, 2), ScaledDropBlock(8, 0.25, 0.2, 4), ScaledDropBlock(8, 0.125, 0.3, 1))

    def forward(self, x):
        return self.blocks(x)


class CountedTokenStage(TokenStage):
    """timm's pit stage as it is: `cls_tokens` read first (`token_length = cls_tokens.shape[1]`), so a graph
    takes the items of `x, cls_tokens = x` the other way round, and the pool reads both in one statement."""

    def forward(self, x):
        x, cls_tokens = x
        token_length = cls_tokens.shape[1]
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        B, C, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.mix(x)
        cls_tokens = x[:, :token_length]
        x = x[:, token_length:]
        x = x.transpose(1, 2).reshape(B, C, H, W)
        return x, cls_tokens


class CountedTokenStages(TokenStages):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList([CountedTokenStage(3, False), CountedTokenStage(3, True), CountedTokenStage(3, True)])

    def forward(self, x):  # both outputs of the last stage read
        state = (x, self.cls.expand(x.shape[0], -1, -1))
        for stage in self.stages:
            state = stage(state)
        return state[0].sum() + state[1].sum()


class ShapeChangedInPlace(nn.Module):
    """From a review: views whose shape an in-place op changes before `unbind` (`y.t_()`, also through the
    tensor `contiguous` returned as it is): the count the view asked for is not the count of items."""

    def forward(self, x):
        y = x.view(2, 3)
        y.t_()
        a = y.unbind(0)
        z = x.view(2, 3)
        w = z.contiguous()
        z.t_()
        b = w.unbind(0)
        return a[0] + a[1] + b[0] + b[1]


class RolledHeads(nn.Module):
    """From a review: a literal instances differ in, first where the source passes it starred (no name),
    then to a call passing `self.heads`: the parameter takes the name any of its places has."""

    def __init__(self, heads: int) -> None:
        super().__init__()
        self.heads = heads

    def forward(self, x):
        x = x.reshape(x.shape[0], -1, *(self.heads,))
        return torch.roll(x, self.heads, 1)


class RolledHeadsPair(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([RolledHeads(2), RolledHeads(3)])

    def forward(self, x):
        return self.blocks[0](x).sum() + self.blocks[1](x).sum()


class KeptInputBlock(nn.Module):
    """timm's ResNet BasicBlock: the input kept as `shortcut` first, then rebound to each child's value; a
    downsample only where the width changes."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.act1 = nn.ReLU()
        self.downsample = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, x):
        shortcut = x
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.act1(x)
        if self.downsample is not None:
            shortcut = self.downsample(shortcut)
        x += shortcut
        return x


class KeptInputBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(KeptInputBlock(3, 4), KeptInputBlock(4, 4), KeptInputBlock(4, 6))

    def forward(self, x):
        return self.blocks(x)


class KeptValueLayer(nn.Module):
    """transformers' decoder layer: the input kept as `residual`, then the sum kept as `residual` at once
    before the name it is bound to is rebound to the next child's value."""

    def __init__(self) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(8)
        self.self_attn = nn.Linear(8, 8)
        self.post_attention_layernorm = nn.LayerNorm(8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states)
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states


class KeptValueLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([KeptValueLayer(), KeptValueLayer()])

    def forward(self, hidden_states):
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class AliasReadBlock(nn.Module):
    """GPT-2's block: the input kept as `residual` first, and the sum reading that name alone."""

    def __init__(self) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(8)
        self.attn = nn.Linear(8, 8)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states)
        hidden_states = attn_output + residual
        return hidden_states


class AliasReadBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.h = nn.ModuleList([AliasReadBlock(), AliasReadBlock()])

    def forward(self, x):
        for block in self.h:
            x = block(x)
        return x


class NamedSqueeze(nn.Module):
    """timm's SqueezeExcite: `x_se` bound statement by statement, the last child called inside the return."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_reduce = nn.Conv2d(8, 2, 1)
        self.act1 = nn.ReLU()
        self.conv_expand = nn.Conv2d(2, 8, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        return x * self.gate(x_se)


class NamedSqueezes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.se = nn.Sequential(NamedSqueeze(), NamedSqueeze())

    def forward(self, x):
        return self.se(x)


class PassedOnHead(nn.Module):
    """timm pit's ConvHeadPooling as its export writes it: one statement reads both inputs, each the first
    argument of a child of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 1)
        self.fc = nn.Linear(4, 8)

    def forward(self, x, cls_token):
        return (self.conv(x), self.fc(cls_token))


class PassedOnHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.token = nn.Parameter(torch.randn(1, 1, 4))
        self.head = PassedOnHead()

    def forward(self, x):
        out, token = self.head(x, self.token.expand(x.shape[0], -1, -1))
        return out.mean((2, 3)) + token[:, 0]


class SplitConvs(nn.ModuleDict):
    """timm's MixedConv2d: a ModuleDict of convs, each on its split of the channels, the split sizes a list its
    instances differ in."""

    def __init__(self, channels: int, out: int, kernels: tuple[int, ...]) -> None:
        n = len(kernels)
        super().__init__({str(i): nn.Conv2d(channels // n, out // n, k, padding=k // 2, bias=False) for i, k in enumerate(kernels)})
        self.splits = [channels // n] * n

    def forward(self, x):
        xs = torch.split(x, self.splits, 1)
        return torch.cat([conv(xs[i]) for i, conv in enumerate(self.values())], 1)


class SplitConvBlock(nn.Module):
    def __init__(self, channels: int, out: int) -> None:
        super().__init__()
        self.conv_dw = SplitConvs(channels, channels, (3, 5))
        self.conv_pwl = SplitConvs(channels, out, (1, 1))

    def forward(self, x):
        return self.conv_pwl(self.conv_dw(x))


class SplitConvNet(nn.Module):
    """Blocks whose split convs differ in channels and split sizes alone: one class, its convs built from its
    parameters, its forward reading its split size (once one class per split size, passed its convs)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(SplitConvBlock(8, 8), SplitConvBlock(8, 16), SplitConvBlock(16, 16))

    def forward(self, x):
        return self.blocks(x)


class ActBlock(nn.Module):
    def __init__(self, channels: int, residual: bool, act: nn.Module) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = act
        self.residual = residual

    def forward(self, x):
        y = self.act(self.conv(x))
        return y + x if self.residual else y


class DownStage(nn.Module):
    """timm's hgnet stage: an optional downsample, then blocks whose classes and number differ by stage."""

    def __init__(self, channels: int, depth: int, downsample: bool, act: nn.Module) -> None:
        super().__init__()
        self.downsample = nn.Conv2d(channels, channels, 3, 2, 1, groups=channels) if downsample else nn.Identity()
        self.blocks = nn.Sequential(*[ActBlock(channels, i > 0, act) for i in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class DownStages(nn.Module):
    """Stages passed their blocks by the caller (they differ in more than literals) that also lack elements of
    them the others hold: each caller builds its own, as many as it has."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(DownStage(8, 1, False, nn.ReLU()), DownStage(8, 2, True, nn.GELU()), DownStage(8, 1, True, nn.GELU()))

    def forward(self, x):
        return self.stages(x)


class NormedHeads(nn.Module):
    """timm's Attention with query and key norms: `q, k = self.q_norm(q), self.k_norm(k)` pairs names with calls."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.q_norm = nn.LayerNorm(4)
        self.k_norm = nn.LayerNorm(4)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, 2, 4).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        x = F.scaled_dot_product_attention(q, k, v)
        return x.transpose(1, 2).reshape(B, N, C)


class NormedHeadsStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(NormedHeads(), NormedHeads())

    def forward(self, x):
        return self.blocks(x)


class ClassTokenCat(nn.Module):
    """timm cait's class-attention block: both inputs read by one statement, as the items of a tuple."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, x_cls, x):
        return self.norm(torch.cat((x_cls, x), dim=1))


class ClassTokenCats(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.token = nn.Parameter(torch.randn(1, 1, 4))
        self.block = ClassTokenCat()

    def forward(self, x):
        return self.block(self.token.expand(x.shape[0], -1, -1), x)


class Passing(nn.Module):
    """Computes nothing (timm's DropPath in eval): traced through, the graph holds no call of it."""

    def forward(self, x):
        return x


class Branches(nn.Module):
    """Numbered children the graph holds no call of: a Sequential's first (seresnext's avg_down stem
    of stride 1, as torch.export records it) and a ModuleList's unused identities (hrnet's transitions)."""

    def __init__(self) -> None:
        super().__init__()
        self.downsample = nn.Sequential(Passing(), nn.Conv2d(4, 4, 1, bias=False), nn.BatchNorm2d(4))
        self.transition = nn.ModuleList([nn.Identity(), nn.Identity(), nn.Conv2d(4, 4, 1)])

    def forward(self, x):
        x = self.downsample(x)
        return [t(x) if not isinstance(t, nn.Identity) else x for t in self.transition]


class SkippedChildren(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Branches(), Branches())

    def forward(self, x):
        a, b, c = self.blocks[0](x)
        return self.blocks[1](a + b + c)[2]


class ListSequential(nn.Sequential):
    """timm hrnet's SequentialList: a Sequential passing a list of branches through its children."""

    def forward(self, x):
        for module in self:
            x = module(x)
        return x


class FusedBranches(nn.Module):
    def __init__(self, count: int) -> None:
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1) for _ in range(count)])
        self.fuse_act = nn.ReLU()

    def forward(self, x):
        x = [branch(x[i]) for i, branch in enumerate(self.branches)]
        total = sum(x[1:], x[0])
        return [self.fuse_act(total + y) for y in x]


class ListStages(nn.Module):
    """Stages of two and three branches, each a ListSequential: the stage's results unpacked."""

    def __init__(self) -> None:
        super().__init__()
        self.stage2 = ListSequential(FusedBranches(2))
        self.stage3 = ListSequential(FusedBranches(3))

    def forward(self, x):
        y = self.stage2([x, x.flip(3)])
        y = self.stage3([y[0], y[1], y[1].flip(2)])
        return y[0] + y[1] + y[2]


class ResolutionHeads(nn.Module):
    """Children keyed by numbers far apart (a ModuleDict by resolution): no list with entries left out."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleDict({"224": nn.Linear(4, 2), "384": nn.Linear(4, 2)})

    def forward(self, x):
        return [self.heads[k](x) for k in self.heads]


class Pointwise(nn.Module):
    """efficientformer_v2's ConvNorm: a child of a class of its own (a generated class, whose call records no frames)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.conv(x) * 2


class ValueHead(nn.Module):
    """efficientformer_v2's Attention2d: a child every instance builds, its result bound to a name of its own
    (`v = self.v(x)`), beside one only some build, applied in place (`x = self.stride_conv(x)`)."""

    def __init__(self, stride: bool) -> None:
        super().__init__()
        if stride:
            self.stride_conv = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        else:
            self.stride_conv = None
        self.q = nn.Conv2d(4, 4, 1)
        self.v = Pointwise()
        self.v_local = nn.Conv2d(4, 4, 3, padding=1, groups=4)

    def forward(self, x):
        if self.stride_conv is not None:
            x = self.stride_conv(x)
        q = self.q(x)
        v = self.v(x)
        v_local = self.v_local(v)
        return q * v + v_local


class ProjectedBlock(nn.Module):
    """A child some instances build as nn.Identity(), its result bound to a name of its own (`y = self.proj(x)`)."""

    def __init__(self, proj: bool) -> None:
        super().__init__()
        self.proj = nn.Conv2d(4, 4, 1) if proj else nn.Identity()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = self.proj(x)
        return self.conv(y) + 1


class KeptShortcut(nn.Module):
    """timm's Bottleneck (hrnet's): the input kept as `shortcut`, the optional child applied to it in place;
    built by every instance here, so the export builds it always and calls it unconditionally."""

    def __init__(self, downsample=None) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.downsample = downsample

    def forward(self, x):
        shortcut = x
        x = self.conv(x)
        if self.downsample is not None:
            shortcut = self.downsample(shortcut)
        return x + shortcut


class KeptShortcutOfInput(KeptShortcut):
    """timm's ResNestBottleneck: the downsample reads the input itself, its value bound to the kept name."""

    def forward(self, x):
        shortcut = x
        out = self.conv(x)
        if self.downsample is not None:
            shortcut = self.downsample(x)
        return out + shortcut


class NamedChildResults(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.Sequential(ValueHead(True), ValueHead(False))
        self.blocks = nn.Sequential(ProjectedBlock(True), ProjectedBlock(False))
        self.kept = KeptShortcut(nn.Conv2d(4, 4, 1))
        self.kept_input = KeptShortcutOfInput(nn.Conv2d(4, 4, 1))

    def forward(self, x):
        return self.kept_input(self.kept(self.blocks(self.heads(x))))


class IndexedHeads(nn.Module):
    """torchvision's shifted window attention: `q, k, v = qkv[0], qkv[1], qkv[2]` pairs names with items."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, 2, 4).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attention = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return self.proj((attention @ v).transpose(1, 2).reshape(B, N, C))


class IndexedHeadsStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(IndexedHeads(), IndexedHeads())

    def forward(self, x):
        return self.blocks(x)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class RotaryHeads(nn.Module):
    """transformers' attention with rotary embeddings: values made by the functions the forward calls."""

    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.k_proj = nn.Linear(8, 8)

    def forward(self, x, cos, sin):
        query_states = self.q_proj(x).view(2, 3, 2, 4).transpose(1, 2)
        key_states = self.k_proj(x).view(2, 3, 2, 4).transpose(1, 2)
        query_states, key_states = apply_rotary(query_states, key_states, cos, sin)
        return F.scaled_dot_product_attention(query_states, key_states, key_states)


class RotaryStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([RotaryHeads(), RotaryHeads()])

    def forward(self, x, cos, sin):
        for layer in self.layers:
            x = layer(x, cos, sin).transpose(1, 2).reshape(2, 3, 8)
        return x


def split_halves(x):
    return x.chunk(2, dim=-1)


def sines(x):
    return x.sin(), x.cos()


def doubled(c):
    t = c * 2
    return t


class CalledPairs(nn.Module):
    """From a review: a tuple a called function returns keeps the names the forward unpacks it into (`a, b`),
    and a name a called function gives its parameter (`doubled(c)`) says nothing of the forward's `c`."""

    def forward(self, x):
        a, b = split_halves(x * 3)
        s, c = sines(a)
        y = doubled(s) + c
        return y * b


class AfterLinear(nn.Module):
    """`block` run by a child of the root, after a Linear of `width`: its code becomes a class of its own."""

    def __init__(self, width: int, block: nn.Module) -> None:
        super().__init__()
        self.blocks = nn.Sequential(nn.Linear(width, width), block)

    def forward(self, x):
        return self.blocks(x)


class CalledPairsStack(AfterLinear):
    def __init__(self) -> None:
        super().__init__(8, CalledPairs())


def squared_sum(a):
    t = a * 2
    return t * t + a


normalized = torch.nn.functional.normalize  # a Python function of torch's: its statements are not the model's


class CalledFunctions(nn.Module):
    """Functions a forward calls: with a plain argument (its statements name the values), with a computed one
    (`x * 3` made in the forward's statement: not matched), and one of torch's own."""

    def forward(self, x):
        y = squared_sum(x)
        z = squared_sum(y * 3)
        return normalized(z) + y


class CalledFunctionsStack(AfterLinear):
    def __init__(self) -> None:
        super().__init__(4, CalledFunctions())


def repeated_attention(q, k, v):
    k = k.repeat(1, 2, 1)
    v = v.repeat(1, 2, 1)
    found = F.scaled_dot_product_attention(q, k, v)
    return found.transpose(1, 2), None


class LocalAttention(nn.Module):
    """transformers' `attention_interface(...)`: a function held in a local, whose values are matched with
    nothing; the attention of the repeated key and value starts the value the forward unpacks, not one of theirs."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
        self.v = nn.Linear(4, 4)
        self.o = nn.Linear(6, 4)

    def forward(self, x):
        q = self.q(x).repeat(1, 2, 1)
        attend = repeated_attention
        attn_output, attn_weights = attend(q, self.k(x), self.v(x))
        return self.o(attn_output)


class LocalAttentionStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(LocalAttention(), nn.ReLU())

    def forward(self, x):
        return self.blocks(x)


def mutual_first(x, flag):
    return mutual_second(x, False) if flag else x.sin()


def mutual_second(x, flag):
    return mutual_first(x, flag).cos()


def armed(x, flag):
    if flag:
        skipped = x.sin()
        x = skipped * 2
    ran = x.sin()
    return ran * 3


def turned_back(a):
    turned = a.transpose(-2, -1)
    return turned * 2


def both_turned(q, k):
    return turned_back(q) * turned_back(k)


class Halved(nn.Module):
    def forward(self, x):
        return x / 2


def around(module, x):
    before = x * 2
    after = module(before)
    return after * 3


class CalledFunctionEdges(nn.Module):
    """From a review: functions calling each other (matched once each, not forever), an `if` arm that did
    not run (its statements name nothing), a function called twice in one statement (each call its own
    statements), a module called inside a function (its nodes do not end the function's)."""

    def __init__(self) -> None:
        super().__init__()
        self.halved = Halved()

    def forward(self, x):
        m = mutual_first(x, True)
        a = armed(m, False)
        b = both_turned(a, a)
        return around(self.halved, b)


class CalledFunctionEdgesStack(AfterLinear):
    def __init__(self) -> None:
        super().__init__(4, CalledFunctionEdges())


class PairedBlock(nn.Module):
    def forward(self, x):
        a, b = x.relu() * 2, 3
        return a * a + b


class PairedCallers(nn.Module):
    """Two equal blocks whose inputs come from other statements: one an item of `p, q = ...`, one a
    plain value (`r = y + q`); how a forward names its values reads the statement its input came from."""

    def __init__(self) -> None:
        super().__init__()
        self.b0 = PairedBlock()
        self.b1 = PairedBlock()

    def forward(self, x):
        p, q = x.chunk(2, dim=0)
        y = self.b0(p)
        r = y + q
        return self.b1(r)


class ProbedBlock(nn.Module):
    def __init__(self, probe: bool = False) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.probe = probe

    def forward(self, x):
        if self.probe:
            x.size(0)  # traced, read by nothing: no line of the generated forward
        return torch.relu(self.lin(x))


class ProbedStage(nn.Module):
    def __init__(self, probes: list[bool]) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(ProbedBlock(p) for p in probes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ProbedStages(nn.Module):
    """Two stages of blocks of one generated class whose graphs differ in one block (a dead read): a stage
    rolls its chain of blocks into a loop only where their graphs are equal."""

    def __init__(self) -> None:
        super().__init__()
        self.s0 = ProbedStage([False, False, False])
        self.s1 = ProbedStage([False, True, False])

    def forward(self, x):
        return self.s0(x) + self.s1(x)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(channels, channels // 2, 1)
        self.act = nn.ReLU()
        self.expand = nn.Conv2d(channels // 2, channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        s = self.expand(self.act(self.reduce(s)))
        return x * s.sigmoid()


class SEBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.se = SqueezeExcite(planes)
        self.down = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes)) if stride != 1 else None

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.se(self.bn2(self.conv2(out)))
        shortcut = x if self.down is None else self.down(x)
        return self.relu(out + shortcut)


class Mixer(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


class FeatureNet(nn.Module):
    """A backbone whose features are read as torchvision's create_feature_extractor reads them: the
    stem a Sequential chain, stages of SE blocks (the SE's `mean` before its layers and `*` after
    them, a block's residual `+` after its last layer), a stage whose result is also an output (no
    chain), two heads on one value, and mixers with a tensor of the root read between them."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
        self.stages = nn.Sequential(nn.Sequential(SEBlock(4, 4), SEBlock(4, 4)), nn.Sequential(SEBlock(4, 8, stride=2), SEBlock(8, 8)))
        self.heads = nn.ModuleList([nn.Conv2d(8, 2, 1), nn.Conv2d(8, 3, 1)])
        self.mixers = nn.ModuleList([Mixer(8), Mixer(8)])
        self.pos = nn.Parameter(torch.randn(8))

    def forward(self, x):
        x = self.stem(x)
        c2 = self.stages[0](x)
        c3 = self.stages[1](c2)
        tokens = c3.flatten(2).transpose(1, 2)
        for mixer in self.mixers:
            tokens = mixer(tokens) + self.pos
        return {"c2": c2, "c3": c3, "h0": self.heads[0](c3), "h1": self.heads[1](c3), "tokens": tokens}


def stackless(cls: type[nn.Module]) -> collections.abc.Callable[[], fx.GraphModule]:
    """A graph that recorded no module calls and holds its modules in plain holders, as a tracer of its
    own (torchvision's and timm's create_feature_extractor) makes it."""

    def build() -> fx.GraphModule:
        torch.manual_seed(0)
        model = cls().eval()
        graph = fx.Tracer().trace(model)
        for node in graph.nodes:
            node.meta.pop("nn_module_stack", None)
        return fx.GraphModule(model, graph, cls.__name__)

    return build


class SEBlockLeaves(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, SEBlock) or super().is_leaf_module(m, module_qualified_name)


def leaves_in_sequential() -> fx.GraphModule:
    """User blocks traced as leaves inside a Sequential the graph calls as one (a chain): still their classes."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.Sequential(SEBlock(4, 4), SEBlock(4, 8, stride=2))).eval()
    return fx.GraphModule(model, SEBlockLeaves().trace(model), "LeavesInSequential")


class FrozenNorm(nn.Module):
    """torchvision's FrozenBatchNorm2d: its buffers are read as plain attributes, which symbolic_trace does not
    trace, so the scale and bias it computes from them are constants the trace folds into the root."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.register_buffer("weight", torch.ones(channels))
        self.register_buffer("bias", torch.zeros(channels))
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))

    def forward(self, x):
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + 1e-5).rsqrt()
        bias = b - rm * scale
        return x * scale + bias


class FrozenBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = FrozenNorm(channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = FrozenNorm(channels)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + x)


class FrozenNet(nn.Module):
    """A detection backbone's frozen norms: each norm reads constants the root holds, which the norm's module
    holds in the export (a norm in the middle of a Sequential made again in its place), and one the root reads."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), FrozenNorm(4), nn.ReLU())
        self.blocks = nn.Sequential(FrozenBlock(4), FrozenBlock(4))

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return x.mean((2, 3)) + torch.full((4,), 0.5)


class PairOfLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)


class ReversedList(nn.Module):
    """A ModuleList whose entries the graph first uses last to first: the GraphModule holds them in that order,
    and `__init__` fills the second before the first exists."""

    def __init__(self) -> None:
        super().__init__()
        self.items = nn.ModuleList([PairOfLayers(), PairOfLayers()])

    def forward(self, x):
        return self.items[1].a(x) + self.items[0].b(self.items[0].a(x)) * self.items[1].b(x)


class GatedLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(2, 4)

    def forward(self, x):
        return x * self.b(self.a(x.mean(0, keepdim=True))).sigmoid()


class GatedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.se = GatedLinear()

    def forward(self, x):
        return x + self.se(self.fc(x))


class GatedStages(nn.Module):
    """Blocks whose residual reads the graph's own input first: the `x +` is the block's, not its gate's."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(nn.Sequential(GatedBlock(), GatedBlock()), nn.Sequential(GatedBlock()))

    def forward(self, x):
        return self.stages(x)


class TwoLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class CalledTwice(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blk = TwoLayers()

    def forward(self, x):
        a = self.blk(x)
        return a + self.blk(a.sigmoid() * 3)


class ScaledBetween(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([TwoLayers(), TwoLayers()])

    def forward(self, x):
        x = self.blocks[0](x) * 2
        return self.blocks[1](x) * 3


class RootReadsHolder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.Module()
        self.norm.scale = nn.Parameter(torch.ones(4))
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc((x + 1).relu() * self.norm.scale)


class ConvNormReLU(nn.Sequential):
    """torchvision's Conv2dNormActivation: a Sequential subclass that builds its layers from its arguments."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__(nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True))


class PairOfConvs(nn.Sequential):
    def __init__(self, channels: int) -> None:
        super().__init__(ConvNormReLU(channels, channels), ConvNormReLU(channels, channels))


class ScaledConvs(nn.Sequential):
    """A Sequential subclass holding a parameter of its own, which its parent reads (a layer scale)."""

    def __init__(self, channels: int) -> None:
        super().__init__(nn.Conv2d(channels, channels, 1), nn.ReLU())
        self.gamma = nn.Parameter(torch.full((channels, 1, 1), 0.5))


class SequentialSubclasses(nn.Module):
    """Sequential subclasses built from literals (one class with parameters), built with and without their
    activation (ConvBNAct: its callers pass the children), holding others (PairOfConvs) and holding a
    parameter its parent reads (ScaledConvs: called as a Sequential, its parameter set after its layers)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvNormReLU(3, 8, stride=2)
        self.widen = ConvNormReLU(8, 16)
        self.project = ConvBNAct(16, 16)
        self.narrow = ConvBNAct(16, 8, act=None)
        self.pairs = nn.Sequential(PairOfConvs(8), PairOfConvs(8))
        self.tail = nn.Sequential(ConvNormReLU(8, 8), ConvNormReLU(8, 8), ConvNormReLU(8, 8))
        self.scaled = ScaledConvs(8)

    def forward(self, x):
        x = self.tail(self.pairs(self.narrow(self.project(self.widen(self.stem(x))))))
        return self.scaled(x) * self.scaled.gamma


class TwoLayerMlp(nn.Module):
    def __init__(self, cin: int, hidden: int, cout: int, act_layer: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
        self.fc1 = nn.Linear(cin, hidden)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden, cout)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MetaMlpAttention(nn.Module):
    """timm swinv2_cr's attention: a small Mlp fed a buffer of its own (the Mlp's one input is named after
    the buffer in the graph, and after the Mlp's forward parameter in the export)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.meta_mlp = TwoLayerMlp(2, 16, 1, act_layer=nn.ReLU)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("relative_coordinates_log", torch.randn(dim, 2))

    def forward(self, x):
        return self.proj(x) * self.meta_mlp(self.relative_coordinates_log).squeeze(-1)


class MetaMlpBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.attn = MetaMlpAttention(dim)
        self.mlp = TwoLayerMlp(dim, 2 * dim, dim)

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)


class MetaMlpNet(nn.Module):
    """One Mlp class for the block's Mlp and the attention's (both `forward(self, x)` in the source)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(MetaMlpBlock(4), MetaMlpBlock(4))

    def forward(self, features):
        return self.blocks(features)


class KeyedPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.query = nn.Parameter(torch.randn(1, 4))
        self.fc = nn.Linear(4, 4)

    def forward(self, q, kv=None):
        kv = q if kv is None else kv
        return self.fc(q * kv)


class ScaledBy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, scale, feat=None):
        return self.fc(feat) * scale


class UnpackedPair(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, pair):
        a, b = pair
        return self.fc(a) * b


class BoundElsewhere(nn.Module):
    """Children whose graph's one input is not their forward's one parameter: given as another parameter
    (`kv=x`, `feat=x`, the first given the child's own tensor or a number), or an item of a pair the
    forward unpacks."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = KeyedPool()
        self.scaled = ScaledBy()
        self.pair = UnpackedPair()

    def forward(self, x):
        return self.pool(self.pool.query, kv=x) + self.scaled(2.0, feat=x) + self.pair((x, x))


class PatchMixer(nn.Module):
    """timm xcit's LPI: sizes passed as their own inputs, read only together in one call."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, H: int, W: int):
        B, N, C = x.shape
        x = x.permute(0, 2, 1).reshape(B, C, H, W)
        x = self.conv(x)
        return x.reshape(B, C, N).permute(0, 2, 1)


class SizedBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mixer = PatchMixer(dim)

    def forward(self, x, H: int, W: int):
        return x + self.mixer(self.norm(x), H, W)


class SizedBlocks(nn.Module):
    """Inputs named by where their statements pass them (`reshape(B, C, H, W)`, `self.mixer(..., H, W)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 2, stride=2)
        self.blocks = nn.ModuleList([SizedBlock(8), SizedBlock(8)])

    def forward(self, x):
        x = self.embed(x)
        B, C, Hp, Wp = x.shape
        x = x.flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x, Hp, Wp)
        return x


class SizedEncoding(nn.Module):
    """timm xcit's PositionalEncodingFourier: reads its inputs in another order than it lists them."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Conv2d(4, 3, 1)

    def forward(self, B: int, H: int, W: int):
        y = torch.arange(1, H + 1).to(torch.float32).unsqueeze(1).repeat(1, 1, W)
        x = torch.arange(1, W + 1).to(torch.float32).repeat(1, H, 1)
        pos = torch.stack([y, x, y * 2, x * 2], dim=1)
        return self.proj(pos).repeat(B, 1, 1, 1)


class EncodedImage(nn.Module):
    """A forward whose inputs come out in the source's order (`B, H, W`), its caller passing them so."""

    def __init__(self) -> None:
        super().__init__()
        self.encoding = SizedEncoding()

    def forward(self, x):
        B, C, H, W = x.shape
        return x + self.encoding(B, H, W)


class MaskedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, mask, x):
        y = self.fc(x)
        return y * mask.sigmoid()


class MaskedChain(nn.Module):
    """A chain of blocks carrying the value they return as their second input (cait's `blk(x, cls_tokens)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(MaskedBlock() for _ in range(4))

    def forward(self, x):
        mask = x.cos()
        for block in self.blocks:
            x = block(mask, x)
        return x


class ScaledConvBN(nn.Sequential):
    """A Sequential subclass ending with an activation only some instances build, holding a parameter of its own."""

    def __init__(self, cin: int, cout: int, act: bool = True) -> None:
        layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout)]
        if act:
            layers.append(nn.ReLU())
        super().__init__(*layers)
        self.gamma = nn.Parameter(torch.full((cout, 1, 1), 0.1))


class ScaledConvBNs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = ScaledConvBN(3, 8)
        self.b = ScaledConvBN(8, 16, act=False)
        self.c = ScaledConvBN(16, 16)

    def forward(self, x):
        x = self.a(x) * self.a.gamma
        x = self.b(x) * self.b.gamma
        return self.c(x) * self.c.gamma


class WindowPartition(nn.Module):
    """Cuts an image into windows, as swin's blocks do: `.contiguous()` after the permute, which
    torch.export leaves out where the image is one window (the permute moves nothing)."""

    def __init__(self, dim: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, H, W, C = x.shape
        x = x.view(B, H // self.window, self.window, W // self.window, self.window, C)
        windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, self.window, self.window, C)
        return self.proj(windows)


class WindowBlock(nn.Module):
    """A block whose partition child calls `.contiguous()` or not by its window, and which puts the
    windows back together with a `.contiguous()` of its own, left out alike."""

    def __init__(self, dim: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.partition = WindowPartition(dim, window)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        B, H, W, C = x.shape
        windows = self.partition(x).view(B, H // self.window, W // self.window, self.window, self.window, C)
        windows = windows.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, C)
        return self.norm(x + windows)


class WindowedNet(nn.Module):
    """Windows of 4 (4 windows) and of 8 (one window) over an 8x8 image: by torch.export the second
    block's trace has no `.contiguous()`, in its partition or of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(WindowBlock(8, 4), WindowBlock(8, 8))

    def forward(self, x):
        return self.blocks(x)


class QueryAttention(nn.Module):
    """Attention that scales by a global query where its block is given one (gcvit's WindowAttentionGlobal)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, dim)

    def forward(self, x, q_global=None):
        if q_global is not None:
            return self.qkv(x) * q_global.mean()
        return self.qkv(x)


class QueryWindowBlock(nn.Module):
    """A window block passing its attention a global query some callers give (gcvit's GlobalContextVitBlock):
    by torch.export the blocks given one and the others are one forward, `q_global=None`, its window
    sizes literals of the instance."""

    def __init__(self, dim: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.norm1 = nn.LayerNorm(dim)
        self.attn = QueryAttention(dim)

    def forward(self, x, q_global=None):
        B, H, W, C = x.shape
        w = self.window
        y = self.norm1(x).view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).contiguous()
        y = self.attn(y.view(-1, w * w, C), q_global)
        y = y.view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, C)
        return x + y


class QueryStage(nn.Module):
    """A block without the global query, then one with it."""

    def __init__(self, dim: int, window: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([QueryWindowBlock(dim, window), QueryWindowBlock(dim, window)])

    def forward(self, x):
        q_global = x.mean()
        x = self.blocks[0](x)
        return self.blocks[1](x, q_global)


class QueryStages(nn.Module):
    """Two stages of other window sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.s1 = QueryStage(8, 2)
        self.s2 = QueryStage(8, 4)

    def forward(self, x):
        return self.s2(self.s1(x))


class TwoPartitions(nn.Module):
    """Two window partitions whose `.contiguous()` calls come one after the other: an instance lacking
    the first (its window is the whole image) pairs the second with the other instances' second."""

    def __init__(self, first: int, second: int) -> None:
        super().__init__()
        self.first, self.second = first, second
        self.fa = nn.Linear(8, 8)
        self.fb = nn.Linear(8, 8)

    def forward(self, x):
        a = x.view(1, 8 // self.first, self.first, 8 // self.first, self.first, 8).permute(0, 1, 3, 2, 4, 5)
        b = x.view(1, 8 // self.second, self.second, 8 // self.second, self.second, 8).permute(0, 1, 3, 2, 4, 5)
        a = a.contiguous()
        b = b.contiguous()
        return self.fa(a.view(-1, 8)).sum() + self.fb(b.view(-1, 8)).sum()


class TwoPartitionsNet(nn.Module):
    """Windows (4, 4), (8, 4) and (4, 8): the second instance lacks the first call, the third the second."""

    def __init__(self) -> None:
        super().__init__()
        self.t = nn.ModuleList([TwoPartitions(4, 4), TwoPartitions(8, 4), TwoPartitions(4, 8)])

    def forward(self, x):
        return self.t[0](x) + self.t[1](x) + self.t[2](x)


class ComputedScale(nn.Module):
    """Computes `g` where its caller gives none, by other code with as many literals as the other side's."""

    def __init__(self, w: int, k: float) -> None:
        super().__init__()
        self.w, self.k = w, k
        self.fc = nn.Linear(8, 8)

    def forward(self, x, g=None):
        if g is None:
            g = x.reshape(1, -1, self.w).mean(-1) * self.k
        else:
            g = (x.mean() + g.reshape(self.w, -1) * self.k + 1.0).sum(0)
        return self.fc(x) + g.sum() * self.k


class ComputedScaleStage(nn.Module):
    """A block computing `g`, then one given it."""

    def __init__(self, w: int, k: float) -> None:
        super().__init__()
        self.b = nn.ModuleList([ComputedScale(w, k), ComputedScale(w, k)])

    def forward(self, x):
        g = x * 2.0
        x = self.b[0](x)
        return self.b[1](x, g)


class ComputedScaleStages(nn.Module):
    """Three stages of other sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.s1 = ComputedScaleStage(2, 0.5)
        self.s2 = ComputedScaleStage(4, 0.25)
        self.s3 = ComputedScaleStage(8, 0.125)

    def forward(self, x):
        return self.s3(self.s2(self.s1(x)))


class NormedWindowBlock(nn.Module):
    """A window block some build with a last norm (timm swinv2_cr's `norm3`, an nn.Identity elsewhere)."""

    def __init__(self, dim: int, window: int, extra_norm: bool) -> None:
        super().__init__()
        self.window = window
        self.proj = nn.Linear(dim, dim)
        self.norm3 = nn.LayerNorm(dim) if extra_norm else nn.Identity()

    def forward(self, x):
        B, H, W, C = x.shape
        w = self.window
        windows = x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, w, w, C)
        windows = self.proj(windows).view(B, H // w, W // w, w, w, C)
        x = x + windows.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, C)
        x = self.norm3(x)
        return x.reshape(B, H * W, C).view(B, H, W, C)


class NormedWindowNet(nn.Module):
    """Blocks of 4 windows, then one of one window with the last norm: by torch.export that block has
    neither `.contiguous()` and a norm the others lack."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(NormedWindowBlock(8, 4, False), NormedWindowBlock(8, 4, False), NormedWindowBlock(8, 8, True))

    def forward(self, x):
        return self.blocks(x)


class SwapsInputs(nn.Module):
    """A forward that swaps its parameters first: its statements read the caller's `x` as `y`."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        x, y = y, x
        u = y.sigmoid()
        return self.fc(x) * u


class SwappedInputsNet(nn.Module):
    """Calls SwapsInputs with its input and the input's cosine."""

    def __init__(self) -> None:
        super().__init__()
        self.m = SwapsInputs()

    def forward(self, x):
        y = x.cos()
        return self.m(x, y)


class SpaceToDepth(nn.Module):
    """A stateless module symbolic_trace traces through (timm tresnet's `s2d`): the GraphModule holds none."""

    def forward(self, x):
        N, C, H, W = x.size()
        x = x.view(N, C, H // 2, 2, W // 2, 2).permute(0, 3, 5, 1, 2, 4).contiguous()
        return x.view(N, C * 4, H // 2, W // 2)


class SpaceToDepthBody(nn.Module):
    """A Sequential of named layers whose first and fourth are SpaceToDepth (timm tresnet's `body`)."""

    def __init__(self) -> None:
        super().__init__()
        layers = [("s2d", SpaceToDepth()), ("conv1", nn.Conv2d(12, 8, 3)), ("act", nn.ReLU()), ("s2d_2", SpaceToDepth()), ("conv2", nn.Conv2d(32, 4, 1))]
        self.body = nn.Sequential(collections.OrderedDict(layers))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


def _sdpa_attention(query, key, value, attention_mask, position_ids=None):
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)


ATTENTION_FUNCTIONS = {"sdpa": _sdpa_attention}


class InterfaceAttention(nn.Module):
    """transformers' attention calling its kernel through a table (falcon's `attention_interface(self, q, k,
    v, attention_mask, position_ids=position_ids)`): the statement reads two parameters besides the states."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, hidden_states, attention_mask, position_ids=None):
        query_states, key_states, value_states = self.qkv(hidden_states).chunk(3, dim=-1)
        attention_interface = ATTENTION_FUNCTIONS["sdpa"]
        attn_output = attention_interface(query_states, key_states, value_states, attention_mask, position_ids=position_ids)
        return attn_output


class InterfaceAttentionNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = InterfaceAttention()

    def forward(self, x):
        mask = x[0] @ x[0].transpose(0, 1)  # a value of the graph's own: the attention's input takes no model input's name
        return self.attn(x, mask)


class PooledMix(nn.Module):
    """timm's BottleneckAttn: a pool ending the blocks that stride, an nn.Identity in the others (torch.export
    records no call of it)."""

    def __init__(self, width: int, stride: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(width, width, 1)
        self.pool = nn.AvgPool2d(2, 2) if stride == 2 else nn.Identity()

    def forward(self, x):
        out = torch.relu(self.proj(x)) * 2
        out = self.pool(out)
        return out


class PooledMixes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(PooledMix(4, 1), PooledMix(4, 2), PooledMix(4, 1))

    def forward(self, x):
        return self.blocks(x)


class ShortcutFirstBlock(nn.Module):
    """timm's MbConvBlock: a shortcut and a downsampling, identities but in a stage's first block, the
    shortcut read from the block's input first (`shortcut = self.shortcut(x)`)."""

    def __init__(self, cin: int, cout: int, first: bool) -> None:
        super().__init__()
        self.shortcut = nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(cin, cout, 1)) if first else nn.Identity()
        self.down = nn.AvgPool2d(2) if first else nn.Identity()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.down(x)
        x = self.conv(x)
        return x + shortcut


class ShortcutFirstStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ShortcutFirstBlock(4, 8, True), ShortcutFirstBlock(8, 8, False), ShortcutFirstBlock(8, 16, True), ShortcutFirstBlock(16, 16, False))

    def forward(self, x):
        return self.blocks(x)


class PoolEnding(nn.Module):
    """A block ending in a child that is an nn.Identity in some instances (timm's BottleneckAttn `pool`)."""

    def __init__(self, real: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, 1, 1)
        self.pool = nn.AvgPool2d(3, 1, 1) if real else nn.Identity()

    def forward(self, x):
        out = self.conv(x)
        return self.pool(out)


class ShortcutStarting(nn.Module):
    """A block starting with a child that is an nn.Identity in some instances (timm's MbConvBlock `shortcut`)."""

    def __init__(self, real: bool) -> None:
        super().__init__()
        self.shortcut = nn.Sequential(nn.Conv2d(4, 4, 1)) if real else nn.Identity()
        self.conv = nn.Conv2d(4, 4, 3, 1, 1)

    def forward(self, x):
        s = self.shortcut(x)
        return self.conv(x) + s


class EndToStart(nn.Module):
    """By torch.export the identity ending `a1` and the one starting `b1` rewire the same node (`b1` reads
    `a1`'s value): added one round after the other (the first version raised, or wired `b1`'s to `a1`'s conv)."""

    def __init__(self, b_first: bool) -> None:
        super().__init__()
        self.b_first = b_first
        self.a0, self.b0, self.a1, self.b1 = PoolEnding(True), ShortcutStarting(True), PoolEnding(False), ShortcutStarting(False)

    def forward(self, x):
        x = self.a0(self.b0(x)) if self.b_first else self.b0(self.a0(x))
        return self.b1(self.a1(x))


class EndToStartNet(EndToStart):
    def __init__(self) -> None:
        super().__init__(False)


class StartToEndNet(EndToStart):
    def __init__(self) -> None:
        super().__init__(True)


class NoneOrIdentityShortcut(nn.Module):
    """A shortcut some blocks build as None, some as an nn.Identity, some as a conv, the forward testing it for None."""

    def __init__(self, kind: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, 1, 1)
        self.shortcut = None if kind == 0 else nn.Identity() if kind == 1 else nn.Sequential(nn.Conv2d(4, 4, 1))

    def forward(self, x):
        shortcut = x
        x = self.conv(x)
        if self.shortcut is not None:
            shortcut = self.shortcut(shortcut)
        return x + shortcut


class NoneOrIdentityShortcuts(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(NoneOrIdentityShortcut(kind) for kind in (2, 0, 1, 2, 1)))

    def forward(self, x):
        return self.blocks(x)


class ConcatenatingBlock(nn.Module):
    """timm's hgnet HighPerfGpuBlock: its layers' outputs concatenated, the input added back only where
    `residual`, through `drop_path` (an identity), which the other blocks hold but never call."""

    def __init__(self, channels: int, residual: bool) -> None:
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList(nn.Conv2d(channels if i == 0 else 4, 4, 3, padding=1) for i in range(2))
        self.aggregation = nn.Conv2d(channels + 8, channels, 1)
        self.drop_path = nn.Identity()

    def forward(self, x):
        identity = x
        output = [x]
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        x = torch.cat(output, dim=1)
        x = self.aggregation(x)
        if self.residual:
            x = self.drop_path(x) + identity
        return x


class ConcatenatingBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ConcatenatingBlock(4, residual) for residual in (False, True, True)))

    def forward(self, x):
        return self.blocks(x)


class TokenMixingBlock(nn.Module):
    """timm's EfficientFormerV2Block: a token mixer, its layer scale and drop path only some blocks build
    (None in the others), the drop path an identity."""

    def __init__(self, channels: int, mixes: bool) -> None:
        super().__init__()
        if mixes:
            self.token_mixer = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
            self.ls1 = nn.Conv2d(channels, channels, 1, groups=channels)
            self.drop_path1 = nn.Identity()
        else:
            self.token_mixer = None
            self.ls1 = None
            self.drop_path1 = None
        self.mlp = nn.Conv2d(channels, channels, 1)
        self.drop_path2 = nn.Identity()

    def forward(self, x):
        if self.token_mixer is not None:
            x = x + self.drop_path1(self.ls1(self.token_mixer(x)))
        return x + self.drop_path2(self.mlp(x))


class TokenMixingBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(TokenMixingBlock(4, mixes) for mixes in (False, False, True, True)))

    def forward(self, x):
        return self.blocks(x)


class PoolFirstBlock(nn.Module):
    """timm's MbConvBlock: the shortcut, a pool where the block strides, runs before the normalization,
    whose num_batches_tracked no op reads (torch.export puts every get_attr first)."""

    def __init__(self, stride: int) -> None:
        super().__init__()
        self.shortcut = nn.AvgPool2d(2) if stride == 2 else nn.Identity()
        self.pre_norm = nn.BatchNorm2d(4)
        self.conv = nn.Conv2d(4, 4, 3, stride=stride, padding=1)

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.pre_norm(x)
        return self.conv(x) + shortcut


class PoolFirstBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(PoolFirstBlock(stride) for stride in (2, 1, 1)))

    def forward(self, x):
        return self.blocks(x)


class StridedMixer(nn.Module):
    """timm's efficientformerv2 Attention2d: where it strides, a conv first and an upsample near the end,
    each applied in place under its own test (None in the other blocks)."""

    def __init__(self, stride: int | None) -> None:
        super().__init__()
        if stride is not None:
            self.stride_conv = nn.Conv2d(4, 4, 3, stride=stride, padding=1, groups=4)
            self.upsample = nn.Upsample(scale_factor=stride, mode="bilinear")
        else:
            self.stride_conv = None
            self.upsample = None
        self.q = nn.Conv2d(4, 4, 1)
        self.k = nn.Conv2d(4, 4, 1)
        self.proj = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        if self.stride_conv is not None:
            x = self.stride_conv(x)
        q = self.q(x)
        k = self.k(x)
        out = torch.relu(q) * torch.sigmoid(k)
        out = out + q
        if self.upsample is not None:
            out = self.upsample(out)
        out = torch.tanh(out)
        return self.proj(out)


class StridedMixers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(StridedMixer(stride) for stride in (2, None, None)))

    def forward(self, x):
        return self.blocks(x)


class MixerStage(nn.Module):
    """timm's mvitv2 MultiScaleVitStage: a ModuleList of one, two or more blocks, the first of some
    strided (a code of its own), looped over."""

    def __init__(self, strides: tuple[int | None, ...]) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(StridedMixer(stride) for stride in strides)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class MixerStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(MixerStage((None,)), MixerStage((2, None)), MixerStage((2, None, None, None)))

    def forward(self, x):
        return self.stages(x)


class ThreeKindBlock(nn.Module):
    """Three codes of one class, one of them calling an identity the others never call: the identity
    is an optional child (a flag pairs the other two), not a third class (a review's case)."""

    def __init__(self, kind: int) -> None:
        super().__init__()
        self.kind = kind
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.drop_path = nn.Identity()

    def forward(self, x):
        if self.kind == 0:
            return self.drop_path(self.conv(x)) + x
        if self.kind == 1:
            return self.conv(x)
        return torch.sigmoid(self.conv(x))


class ThreeKindBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ThreeKindBlock(kind) for kind in (0, 1, 2)))

    def forward(self, x):
        return self.blocks(x)


class HiddenStateStage(nn.Module):
    """transformers' ResNetStage: a ModuleList looped over on an input named for what it holds."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

    def forward(self, hidden_state):
        for layer in self.layers:
            hidden_state = layer(hidden_state)
        return hidden_state


class HiddenStateStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList([HiddenStateStage(), HiddenStateStage()])

    def forward(self, hidden_state):
        for stage in self.stages:
            hidden_state = stage(hidden_state)
        return hidden_state


class LevelConv(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class PooledLevels(nn.Module):
    """timm gcvit's FeatureBlock: a Sequential of named levels (`conv1`, `pool1`, ...), as many as asked."""

    def __init__(self, dim: int, levels: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential()
        for i in range(levels):
            self.blocks.add_module(f"conv{i + 1}", LevelConv(dim))
            self.blocks.add_module(f"pool{i + 1}", nn.MaxPool2d(2))

    def forward(self, x):
        return self.blocks(x)


class PooledLevelsNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.coarse = PooledLevels(4, 2)
        self.fine = PooledLevels(4, 1)
        self.finer = PooledLevels(8, 1)
        self.widen = nn.Conv2d(4, 8, 1)

    def forward(self, x):
        return self.coarse(x).mean((2, 3)) + self.fine(x).mean((2, 3)) + self.finer(self.widen(x)).mean((2, 3))[:, :4]


class GlobalQueryAttention(nn.Module):
    """timm gcvit's WindowAttentionGlobal: attention whose query is given (every other block) or its own."""

    def __init__(self, dim: int, use_global: bool) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, dim * (2 if use_global else 3))
        self.proj = nn.Linear(dim, dim)
        self.scale = dim**-0.5

    def forward(self, x, q_global: torch.Tensor | None = None):
        B, N, C = x.shape
        if q_global is not None:
            k, v = self.qkv(x).chunk(2, dim=-1)
            q = q_global.expand(B, N, C)
        else:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).reshape(B, N, 2, C // 2).transpose(2, 3)
        return self.proj(x.reshape(B, N, C))


class GlobalQueryStage(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.to_query = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList([GlobalQueryAttention(dim, False), GlobalQueryAttention(dim, True)])

    def forward(self, x):
        q_global = self.to_query(x.mean(1, keepdim=True))
        for i, block in enumerate(self.blocks):
            x = x + (block(x) if i % 2 == 0 else block(x, q_global))
        return x


class GlobalQueryNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList([GlobalQueryStage(8), GlobalQueryStage(16)])
        self.widen = nn.Linear(8, 16)

    def forward(self, x):
        return self.stages[1](self.widen(self.stages[0](x)))


class ReducedAttention(nn.Module):
    """timm pvt_v2's Attention: keys and values from a strided conv of the tokens where `sr_ratio` > 1, which
    alone reads the feature map's height and width."""

    def __init__(self, dim: int, sr_ratio: int) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        if sr_ratio > 1:
            self.sr = nn.Conv2d(dim, dim, sr_ratio, stride=sr_ratio)
            self.norm = nn.LayerNorm(dim)
        else:
            self.sr = None
        self.kv = nn.Linear(dim, dim * 2)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, H: int, W: int):
        B, N, C = x.shape
        q = self.q(x)
        if self.sr is not None:
            x = x.permute(0, 2, 1).reshape(B, C, H, W)
            x = self.sr(x).reshape(B, C, -1).permute(0, 2, 1)
            x = self.norm(x)
        kv = self.kv(x).reshape(B, -1, 2, C).permute(2, 0, 1, 3)
        k, v = kv.unbind(0)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj(attn @ v)


class ReducedStage(nn.Module):
    def __init__(self, dim: int, sr_ratio: int) -> None:
        super().__init__()
        self.attn = ReducedAttention(dim, sr_ratio)

    def forward(self, x):
        B, C, H, W = x.shape
        tokens = x.flatten(2).transpose(1, 2)
        tokens = tokens + self.attn(tokens, H, W)
        return tokens.transpose(1, 2).reshape(B, C, H, W)


class ReducedStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(ReducedStage(8, 2), ReducedStage(8, 4), ReducedStage(8, 1))

    def forward(self, x):
        return self.stages(x)


class OptionalGate(nn.Module):
    """A child only some instances build, reading an input the others are not given."""

    def __init__(self, has: bool) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.gate = nn.Linear(8, 8) if has else None

    def forward(self, x, y, z=None):
        h = self.lin(x)
        if self.gate is not None:
            h = h + self.gate(y)
        return h


class ThreeInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, y, z):
        return self.lin(x) * y + z


class GateHolder(nn.Module):
    """Holds an OptionalGate or a ThreeInputs at one attribute: the holder of a gate without its child passes it
    one input, the ThreeInputs holder three, which is no call to give the gate."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.m = ThreeInputs() if kind == "three" else OptionalGate(kind == "has")

    def forward(self, x, y, z):
        return self.m(x, y, z) + y + z


class GateHolders(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.holders = nn.ModuleList([GateHolder("three"), GateHolder("lacks"), GateHolder("has")])

    def forward(self, x):
        y, z = x.sin(), x.cos()
        for holder in self.holders:
            x = holder(x, y, z)
        return x


class MiddleQueryAttention(nn.Module):
    """A global query some blocks are given, in the middle of the inputs (a scale follows it)."""

    def __init__(self, dim: int, use_global: bool) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, dim * (2 if use_global else 3))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, q_global, scale):
        B, N, C = x.shape
        if q_global is not None:
            k, v = self.qkv(x).chunk(2, dim=-1)
            q = q_global.expand(B, N, C)
        else:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1) * scale).softmax(-1)
        x = (attn @ v).reshape(B, N, 2, C // 2).transpose(2, 3)
        return self.proj(x.reshape(B, N, C))


class MiddleQueryNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_query = nn.Linear(8, 8)
        self.to_scale = nn.Linear(8, 1)
        self.blocks = nn.ModuleList([MiddleQueryAttention(8, False), MiddleQueryAttention(8, True)])

    def forward(self, x):
        q = self.to_query(x.mean(1, keepdim=True))
        scale = self.to_scale(x).sigmoid()
        for i, block in enumerate(self.blocks):
            x = x + block(x, q if i % 2 else None, scale)
        return x


class GlobalQueryBlock(nn.Module):
    """timm gcvit's GlobalContextVitBlock: passes the global query, where it is given one, on to its attention."""

    def __init__(self, dim: int, use_global: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = GlobalQueryAttention(dim, use_global)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, q_global: torch.Tensor | None = None):
        x = x + self.attn(self.norm(x), q_global)
        return x + self.mlp(x)


class PassedQueryNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_query = nn.Linear(8, 8)
        self.blocks = nn.ModuleList([GlobalQueryBlock(8, False), GlobalQueryBlock(8, True), GlobalQueryBlock(8, False)])

    def forward(self, x):
        q_global = self.to_query(x.mean(1, keepdim=True))
        x = self.blocks[0](x)
        x = self.blocks[1](x, q_global)
        return self.blocks[2](x)


class MaskedMemoryBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 8)

    def forward(self, x, memory, mask):
        x = x + self.fc(self.norm(x)).masked_fill(mask, 0.0)
        return x * memory


class ForeignNamedInputs(nn.Module):
    """Blocks given values their parameters name otherwise: the first block's `x` is the model's input `tgt`,
    the others' the block before's value; each block's `memory` a value computed first, its `mask` the model's."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.blocks = nn.ModuleList([MaskedMemoryBlock() for _ in range(3)])

    def forward(self, src, tgt, mask):
        memory = self.proj(src)
        for block in self.blocks:
            tgt = block(tgt, memory, mask)
        return tgt


class SeqAttention(nn.Module):
    """Whisper's attention: given the encoder's states, keys and values come from them, else from the input."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, key_value_states=None, attention_mask=None):
        b, n, d = hidden_states.shape
        q = self.q_proj(hidden_states).view(b, n, self.heads, -1).transpose(1, 2)
        current = key_value_states if key_value_states is not None else hidden_states
        k = self.k_proj(current).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        v = self.v_proj(current).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, d))


class SeqEncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = SeqAttention()
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return x + self.self_attn(self.norm(x))


class SeqDecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = SeqAttention()
        self.encoder_attn = SeqAttention()
        self.norm1 = nn.LayerNorm(16)
        self.norm2 = nn.LayerNorm(16)

    def forward(self, x, memory, mask):
        x = x + self.self_attn(self.norm1(x), attention_mask=mask)
        return x + self.encoder_attn(self.norm2(x), key_value_states=memory)


class EncoderDecoder(nn.Module):
    """An encoder and a decoder of one attention class: given its input only, a mask too, or the encoder's states."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.ModuleList([SeqEncoderLayer() for _ in range(2)])
        self.decoder = nn.ModuleList([SeqDecoderLayer() for _ in range(2)])

    def forward(self, src, tgt, mask):
        for layer in self.encoder:
            src = layer(src)
        for layer in self.decoder:
            tgt = layer(tgt, src, mask)
        return tgt


class ShortAttention(SeqAttention):
    """SeqAttention with short layer names: a line reading the encoder's states (`x_1`) is as short as one
    reading the input (`x`), so both are written alike."""

    def __init__(self, dim=16, heads=2):
        super().__init__(dim, heads)
        del self.q_proj, self.k_proj, self.v_proj, self.out_proj
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, hidden_states, key_value_states=None, attention_mask=None):
        b, n, d = hidden_states.shape
        q = self.q(hidden_states).view(b, n, self.heads, -1).transpose(1, 2)
        current = key_value_states if key_value_states is not None else hidden_states
        k = self.k(current).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        v = self.v(current).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        return self.o(out.transpose(1, 2).reshape(b, n, d))


class ShortEncoderDecoder(EncoderDecoder):
    """EncoderDecoder of ShortAttention, the decoder passing the mask after a None for the encoder's states."""

    def __init__(self):
        super().__init__()
        for layer in self.encoder:
            layer.self_attn = ShortAttention()
        for layer in self.decoder:
            layer.self_attn, layer.encoder_attn = ShortAttention(), ShortAttention()


class DirectAttentions(nn.Module):
    """SeqAttentions the model calls with its own inputs, named after no parameter of theirs: one given the
    `mem` it reads keys and values from, one given the `msk`."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = SeqAttention(), SeqAttention(), SeqAttention()

    def forward(self, src, mem, msk):
        h = self.a(src)
        h = self.b(h, mem)
        return self.c(h, None, msk)


class DecoderStack(nn.Module):
    """Decoder layers only: each attention given a mask or the encoder's states, none given its input alone."""

    def __init__(self):
        super().__init__()
        self.decoder = nn.ModuleList([SeqDecoderLayer() for _ in range(2)])

    def forward(self, tgt, memory, mask):
        for layer in self.decoder:
            tgt = layer(tgt, memory, mask)
        return tgt


class KeywordOnlyAttention(nn.Module):
    """Its optional inputs keyword-only, the mask listed before the states keys and values come from."""

    def __init__(self, d=16):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, hidden_states, *, attention_mask=None, key_value_states=None):
        current = key_value_states if key_value_states is not None else hidden_states
        out = F.scaled_dot_product_attention(self.q(hidden_states), self.k(current), self.v(current), attn_mask=attention_mask)
        return out + hidden_states


class KeywordOnlyPair(nn.Module):
    """helper-60: a value computed for `key_value_states` is no `attention_mask`, though the statement reading
    it reads that parameter beside `current`."""

    def __init__(self):
        super().__init__()
        self.b, self.c = KeywordOnlyAttention(), KeywordOnlyAttention()

    def forward(self, x, m):
        h = self.b(x, attention_mask=m)
        return self.c(h, key_value_states=h * 2)


class BareAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q = nn.Linear(d, d)

    def forward(self, hidden_states, key_value_states=None, attention_mask=None):
        current = key_value_states if key_value_states is not None else hidden_states
        return F.scaled_dot_product_attention(self.q(hidden_states), current, current, attn_mask=attention_mask)


class MemoryThenMask(nn.Module):
    """helper-60: the model's `mem` given as keys and values, its `m` as a mask: neither is the other's name."""

    def __init__(self):
        super().__init__()
        self.a, self.b = BareAttention(), BareAttention()

    def forward(self, x, mem, m):
        return self.b(self.a(x, mem), attention_mask=m)


class SplitScales(nn.Module):
    """Res2Net's block: a loop over two ModuleLists at once, over the input's splits by the loop's index,
    each step's value kept; the first step takes its split alone, and a first block takes each alone."""

    def __init__(self, width: int = 4, scale: int = 4, first: bool = False) -> None:
        super().__init__()
        self.width, self.first = width, first
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1, bias=False) for _ in range(scale - 1))
        self.bns = nn.ModuleList(nn.BatchNorm2d(width) for _ in range(scale - 1))
        self.pool = nn.AvgPool2d(3, 1, 1) if first else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = torch.split(x, self.width, 1)
        spo = []
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            sp = spx[i] if i == 0 or self.first else sp + spx[i]  # noqa: F821 (bound by the first step)
            sp = torch.relu(bn(conv(sp)))
            spo.append(sp)
        spo.append(self.pool(spx[-1]) if self.pool is not None else spx[-1])
        return torch.cat(spo, 1) + x


class SplitScalesNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(SplitScales(first=True), SplitScales(), SplitScales(8, 2), SplitScales(2, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class ChunkedConvs(nn.Module):
    """EdgeNeXt's split block: the input chunked into one more piece than it has convolutions, each piece
    but the last added to the one before's output and convolved, in a loop over a ModuleList."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(12 // (count + 1), 12 // (count + 1), 3, padding=1) for _ in range(count))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spx = x.chunk(len(self.convs) + 1, dim=1)
        spo = []
        for i, conv in enumerate(self.convs):
            sp = spx[i] if i == 0 else sp + spx[i]  # noqa: F821
            spo.append(conv(sp))
            sp = spo[-1]
        spo.append(spx[-1])
        return x + torch.cat(spo, 1)


class ChunkedConvStages(nn.Module):
    def __init__(self, counts: tuple[int, ...] = (2, 3, 5)) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ChunkedConvs(count) for count in counts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class StageFeatures(nn.Module):
    """A loop over stages whose every output is returned, the input first: `[x] + outs`."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList(nn.Sequential(nn.Linear(4, 4), nn.ReLU()) for _ in range(3))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        features = [x]
        for stage in self.stages:
            x = stage(x) * 0.5
            features.append(x)
        return features


class SelectedSteps(nn.Module):
    """A loop reading the input at its index each step (`x.select(1, i)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x[:, 0]
        for i, lin in enumerate(self.lins):
            h = torch.tanh(lin(h) + x.select(1, i))
        return h


class MixedConvs(nn.ModuleDict):
    """timm's MixedConv2d: a ModuleDict subclass convolving each split of its input with one of its
    children, by the loop's index (`[c(x_split[i]) for i, c in enumerate(self.values())]`)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.splits = [8 // count] * count
        for i in range(count):
            self.add_module(str(i), nn.Conv2d(8 // count, 8 // count, 2 * i + 1, padding=i, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_split = torch.split(x, self.splits, 1)
        x_out = [c(x_split[i]) for i, c in enumerate(self.values())]
        return torch.cat(x_out, 1)


class MixedConvStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(MixedConvs(2), MixedConvs(4), MixedConvs(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class StemmedStages(nn.Module):
    """A stem, then a loop over stages keeping each output: the loop carries the stem's value by its name."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        outs = []
        for blk in self.blocks:
            x = blk(x) * 0.5
            outs.append(x)
        return torch.cat(outs, 1)


class EvenMixedConvs(nn.ModuleDict):
    """timm's MixedConv2d as timm builds it: a convolution per kernel size it is given, the channels split
    as evenly as they go (the first split takes what is left over), the stride shared by every child."""

    def __init__(self, channels: int, kernel_sizes: list[int], stride: int = 1) -> None:
        super().__init__()
        count = len(kernel_sizes)
        self.splits = [channels // count + (channels % count if i == 0 else 0) for i in range(count)]
        for i, (k, c) in enumerate(zip(kernel_sizes, self.splits)):
            self.add_module(str(i), nn.Conv2d(c, c, k, stride=stride, padding=k // 2, groups=c, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_split = torch.split(x, self.splits, 1)
        return torch.cat([c(x_split[i]) for i, c in enumerate(self.values())], 1)


class SummedHeads(nn.ModuleList):
    """A ModuleList subclass of as many alike heads as it is asked for, their outputs summed."""

    def __init__(self, count: int) -> None:
        super().__init__(nn.Linear(6, 6) for _ in range(count))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([head(x) for head in self], 0).sum(0) * 0.5


class MixedConvNet(nn.Module):
    """Mixed convolutions of 2, 3 and 4 kernels, and heads of 2 and 3 linears: each one class."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            EvenMixedConvs(8, [3, 5]), EvenMixedConvs(8, [3, 5, 7], stride=2), EvenMixedConvs(8, [1, 1, 1]),
            EvenMixedConvs(8, [3, 5, 7, 9]), EvenMixedConvs(8, [3, 5]),
        )
        self.heads = nn.ModuleList([SummedHeads(2), SummedHeads(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(x).flatten(2)[..., :6]
        return self.heads[1](self.heads[0](x))


class ResidualLinears(nn.ModuleList):
    """A ModuleList subclass adding each child's output to its input in turn."""

    def __init__(self, count: int) -> None:
        super().__init__(nn.Linear(4, 4) for _ in range(count))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for m in self:
            x = m(x) + x
        return x


class NormedStack(nn.Module):
    """A loop with code around each call of a ModuleList's blocks, then a norm."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(count))
        self.norm = nn.LayerNorm(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x).relu() * 0.5
        return self.norm(x)


class TwoAndThreeSteps(nn.Module):
    """Containers of two and of three children looped over: one class each kind."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Sequential(ResidualLinears(2), ResidualLinears(3))
        self.b = nn.Sequential(NormedStack(2), NormedStack(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


class QueriedBlock(nn.Module):
    """gcvit's block: adds a global query where given one (`def forward(self, x, q_global=None)`)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, q: torch.Tensor | None = None) -> torch.Tensor:
        y = self.fc(x)
        if q is not None:
            y = y * q.sigmoid()
        return x + y


class GlobalStage(nn.Module):
    """gcvit's stage: a downsample in all stages but the first, a norm in the last only, and blocks
    alternating without and with the global query (2 in most stages, 4 in one)."""

    def __init__(self, width: int, depth: int, downsample: bool, norm: bool) -> None:
        super().__init__()
        self.downsample = nn.Linear(width // 2, width) if downsample else nn.Identity()
        self.glob = nn.Linear(width, width)
        self.blocks = nn.ModuleList(QueriedBlock(width) for _ in range(depth))
        self.norm = nn.LayerNorm(width) if norm else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.downsample(x)
        q = self.glob(x)
        for i, blk in enumerate(self.blocks):
            x = blk(x, q) if i % 2 else blk(x)
        x = self.norm(x)
        return x.flip(-1)


class GlobalStages(nn.Module):
    """gcvit's stages (torch.export leaves the identities out: the first stage has no downsample, the others
    no norm, and the deeper stage, a code of its own, neither a norm nor a stage beside it that lacks one)."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(
            GlobalStage(4, 2, False, False), GlobalStage(8, 2, True, False), GlobalStage(16, 4, True, False),
            GlobalStage(32, 2, True, True),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stages(x)


class BranchSum(nn.Module):
    """timm's MobileOneBlock: branches summed, the identity norm's `0` where the block has none."""

    def __init__(self, width: int, identity: bool) -> None:
        super().__init__()
        self.identity = nn.BatchNorm1d(width) if identity else None
        self.scale = nn.Linear(width, width)
        self.conv = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity_out = 0
        if self.identity is not None:
            identity_out = self.identity(x)
        out = self.scale(x) + self.conv(x)
        out = out + identity_out
        return out.relu()


class DualPath(nn.Module):
    """timm's DualPathBlock: a projection of the input where the block projects (`proj_s1`, or `proj_s2` where
    it also downsamples: another child in its place), else the input itself, split in two."""

    def __init__(self, width: int, kind: str) -> None:
        super().__init__()
        self.proj_s1 = nn.Linear(width, width) if kind == "proj" else None
        self.proj_s2 = nn.Linear(width, width, bias=False) if kind == "down" else None
        self.body = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.proj_s1 is None and self.proj_s2 is None:
            s = x
        else:
            s = self.proj_s1(x) if self.proj_s1 is not None else self.proj_s2(x)
        a, b = s[:, :2], s[:, 2:]
        y = self.body(x)
        return torch.cat([a + y[:, :2], b], 1) * 0.5


class DefaultedChildren(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sums = nn.Sequential(BranchSum(4, False), BranchSum(4, True), BranchSum(4, True))
        self.paths = nn.Sequential(DualPath(4, "proj"), DualPath(4, "normal"), DualPath(4, "down"), DualPath(4, "normal"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.paths(self.sums(x))


class ProjectedStage(nn.Module):
    """A stage with a projection of its input only some build (the input itself where none), blocks of 2 or 4
    and a norm only some build (helper-66's review case)."""

    def __init__(self, depth: int, proj: bool, norm: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4) if proj else None
        self.blocks = nn.ModuleList(QueriedBlock(4) for _ in range(depth))
        self.norm = nn.LayerNorm(4) if norm else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x
        if self.proj is not None:
            s = self.proj(x)
        y = x
        for b in self.blocks:
            y = b(y)
        if self.norm is not None:
            y = self.norm(y)
        return y + s


class ProjectedStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(*(ProjectedStage(*c) for c in [(2, True, False), (2, False, False), (4, True, False), (2, True, True), (4, False, True)]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stages(x)


class BranchBlock(nn.Module):
    """timm's MobileOneBlock: a sum over a ModuleList of branches, started from a scale branch or 0,
    plus an identity branch or 0; the stem's list holds one branch."""

    def __init__(self, channels: int, branches: int, scale: bool = True, identity: bool = True) -> None:
        super().__init__()
        self.identity = nn.BatchNorm2d(channels) if identity else None
        self.conv_scale = nn.Conv2d(channels, channels, 1) if scale else None
        self.conv_kxk = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1) for _ in range(branches)])
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity_out = 0
        if self.identity is not None:
            identity_out = self.identity(x)
        scale_out = 0
        if self.conv_scale is not None:
            scale_out = self.conv_scale(x)
        out = scale_out
        for ck in self.conv_kxk:
            out += ck(x)
        out += identity_out
        return self.act(out)


class BranchNet(nn.Module):
    """A stem of one branch, then blocks of four with and without their scale and identity branches."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = BranchBlock(4, 1, identity=False)
        self.blocks = nn.Sequential(BranchBlock(4, 4, identity=False), BranchBlock(4, 4), BranchBlock(4, 4, scale=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.stem(x))


class Res2Block(nn.Module):
    """timm's Bottle2neck: a conv per split of the input, each split added to the conv's output before it
    but in the first block of a stage, which runs each alone, pools the last split and downsamples."""

    def __init__(self, width: int, is_first: bool) -> None:
        super().__init__()
        self.is_first = is_first
        self.width = width
        self.conv1 = nn.Conv2d(4 * width, 4 * width, 1)
        self.convs = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1, bias=False) for _ in range(3)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(width) for _ in range(3)])
        self.pool = nn.AvgPool2d(3, stride=1, padding=1) if is_first else None
        self.conv3 = nn.Conv2d(4 * width, 4 * width, 1)
        self.relu = nn.ReLU()
        self.downsample = nn.Conv2d(4 * width, 4 * width, 1) if is_first else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        spx = torch.split(self.conv1(x), self.width, 1)
        spo = []
        sp = spx[0]
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            if i == 0 or self.is_first:
                sp = spx[i]
            else:
                sp = sp + spx[i]
            sp = self.relu(bn(conv(sp)))
            spo.append(sp)
        if self.pool is not None:
            spo.append(self.pool(spx[-1]))
        else:
            spo.append(spx[-1])
        out = self.conv3(torch.cat(spo, 1))
        if self.downsample is not None:
            shortcut = self.downsample(x)
        out += shortcut
        return self.relu(out)


class Res2Stage(nn.Module):
    """A stage of Res2Blocks, the first alone."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Res2Block(2, True), Res2Block(2, False), Res2Block(2, False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class FourierPositions(nn.Module):
    """A position encoding of a batch's height and width (timm's PositionalEncodingFourier, shortened)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(8, dim, 1)

    def forward(self, B: int, H: int, W: int) -> torch.Tensor:
        return self.proj(self.proj.weight.new_ones((B, 8, H, W)))


class SplitTransposeBlock(nn.Module):
    """timm's EdgeNeXt block: ChunkedConvs' loop, then attention over the positions with an optional
    position encoding, then an MLP, each scaled."""

    def __init__(self, dim: int, scales: int, pos: bool) -> None:
        super().__init__()
        width = dim // scales
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1, groups=width) for _ in range(max(1, scales - 1)))
        self.pos_embd = FourierPositions(dim) if pos else None
        self.norm_xca = nn.LayerNorm(dim)
        self.xca = nn.Linear(dim, dim)
        self.drop_path = nn.Identity()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.gamma_xca = nn.Parameter(torch.full((dim,), 0.5))
        self.gamma = nn.Parameter(torch.full((dim,), 0.25))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        spx = x.chunk(len(self.convs) + 1, dim=1)
        spo = []
        sp = spx[0]
        for i, conv in enumerate(self.convs):
            if i > 0:
                sp = sp + spx[i]
            sp = conv(sp)
            spo.append(sp)
        spo.append(spx[-1])
        x = torch.cat(spo, 1)
        B, C, H, W = x.shape
        x = x.reshape(B, C, H * W).permute(0, 2, 1)
        if self.pos_embd is not None:
            pos_encoding = self.pos_embd(B, H, W).reshape(B, -1, x.shape[1]).permute(0, 2, 1)
            x = x + pos_encoding
        x = x + self.drop_path(self.gamma_xca * self.xca(self.norm_xca(x)))
        x = x.reshape(B, H, W, C)
        x = self.norm(x)
        x = self.mlp(x)
        x = self.gamma * x
        x = x.permute(0, 3, 1, 2)
        return shortcut + self.drop_path(x)


class EdgeStages(nn.Module):
    """Blocks of one to three convolutions, the one of a single convolution encoding positions."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(SplitTransposeBlock(12, 2, True), SplitTransposeBlock(12, 3, False), SplitTransposeBlock(12, 4, False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class MobileOneLike(nn.Module):
    """timm fastvit's MobileOneBlock: branches summed from a scale branch or 0 and an identity norm or 0, then a list
    of conv branches, if any (the token mixer's norm builds the identity norm alone), and `act(se(out))`, most of
    them identities, in both ways out of the forward."""

    def __init__(self, channels: int, branches: int = 1, scale: bool = True, identity: bool = True, act: bool = True, se: bool = False) -> None:
        super().__init__()
        self.reparam_conv = None
        self.identity = nn.BatchNorm2d(channels) if identity else None
        self.conv_kxk = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1) for _ in range(branches)]) if branches else None
        self.conv_scale = nn.Conv2d(channels, channels, 1) if scale else None
        self.se = nn.Conv2d(channels, channels, 1) if se else nn.Identity()
        self.act = nn.GELU() if act else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.reparam_conv is not None:
            return self.act(self.se(self.reparam_conv(x)))
        identity_out = 0
        if self.identity is not None:
            identity_out = self.identity(x)
        scale_out = 0
        if self.conv_scale is not None:
            scale_out = self.conv_scale(x)
        out = scale_out + identity_out
        if self.conv_kxk is not None:
            for rc in self.conv_kxk:
                out += rc(x)
        return self.act(self.se(out))


class RepMixer(nn.Module):
    """fastvit's RepMixer: a block of every branch less one of the identity norm alone."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = MobileOneLike(channels, branches=0, scale=False, act=False)
        self.mixer = MobileOneLike(channels, act=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + (self.mixer(x) - self.norm(x))


class RepMixerNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(MobileOneLike(4, identity=False), MobileOneLike(4, scale=False))
        self.mixers = nn.Sequential(RepMixer(4), RepMixer(4))
        self.final_conv = MobileOneLike(4, identity=False, se=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.final_conv(self.mixers(self.stem(x)))


class OffGate(nn.Module):
    """A scale where it is on, else the input itself: a module with a parameter torch.export records no call of."""

    def __init__(self, on: bool) -> None:
        super().__init__()
        self.on = on
        self.w = nn.Parameter(torch.full((1, 4, 1, 1), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w if self.on else x


class GateEndedBlock(nn.Module):
    """Ends in `act(se(...))`, `se` an OffGate that is off in some blocks and `act` an identity in others."""

    def __init__(self, on: bool, act: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.se = OffGate(on)
        self.act = nn.ReLU() if act else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.se(self.conv(x)))


class EarlyActivated(nn.Module):
    """Activates at the end of its early return but before the convolution on its other way out."""

    def __init__(self, fused: bool = False, act: bool = True) -> None:
        super().__init__()
        self.fused = nn.Conv2d(4, 4, 1) if fused else None
        self.conv = nn.Conv2d(4, 4, 1)
        self.act = nn.ReLU() if act else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fused is not None:
            return self.act(self.fused(x) * 2)
        x = self.act(x * 3)
        return self.conv(x)


class EndingIdentities(nn.Module):
    """Blocks whose identities torch.export records no call of: one holding a module of that child's name (not to
    be replaced), one calling its identity elsewhere than at the end on its other way out."""

    def __init__(self) -> None:
        super().__init__()
        self.gated = nn.Sequential(GateEndedBlock(True, True), GateEndedBlock(False, False))
        self.early = nn.Sequential(EarlyActivated(fused=True), EarlyActivated(act=False), EarlyActivated(act=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.early(self.gated(x))


class FrozenResBlock(nn.Module):
    """torchvision's BasicBlock of a detection backbone: frozen norms, whose constants symbolic_trace folds into the
    root and passes each block, and a downsample in the first block of a stage (two constants more)."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = FrozenNorm(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = FrozenNorm(cout)
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), FrozenNorm(cout)) if stride != 1 else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class FrozenStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer1 = nn.Sequential(FrozenResBlock(4, 4), FrozenResBlock(4, 4))
        self.layer2 = nn.Sequential(FrozenResBlock(4, 8, 2), FrozenResBlock(8, 8))
        self.layer3 = nn.Sequential(FrozenResBlock(8, 16, 2), FrozenResBlock(16, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer3(self.layer2(self.layer1(x)))


class FrozenShortcutFirst(nn.Module):
    """A FrozenResBlock that computes its downsampled shortcut before its main path: the holders' first constants
    are the downsample's, which the others' first inputs are not."""

    def __init__(self, channels: int, downsample: bool) -> None:
        super().__init__()
        self.fc = nn.Conv2d(channels, channels, 1)
        self.bn = FrozenNorm(channels)
        self.downsample = nn.Sequential(nn.Conv2d(channels, channels, 1), FrozenNorm(channels)) if downsample else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        if self.downsample is not None:
            identity = self.downsample(x)
        return torch.relu(self.bn(self.fc(x))) + identity


class FrozenShortcutsFirst(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(FrozenShortcutFirst(4, k % 2 == 1) for k in range(4)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class FrozenInverted(nn.Module):
    """torchvision's InvertedResidual of a detection backbone: frozen norms (their constants folded into the root and
    passed in, each block its own), a squeeze-excite in some blocks, a residual add where the channels match."""

    def __init__(self, cin: int, cout: int, squeeze: bool) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Sequential(nn.Conv2d(cin, 8, 1, bias=False), FrozenNorm(8), nn.ReLU(inplace=True))]
        if squeeze:
            layers.append(nn.Sequential(nn.Conv2d(8, 8, 1), nn.Sigmoid()))
        layers.append(nn.Sequential(nn.Conv2d(8, cout, 1, bias=False), FrozenNorm(cout)))
        self.block = nn.Sequential(*layers)
        self.use_res_connect = cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.block(x)
        if self.use_res_connect:
            result = result + x
        return result


class FrozenInvertedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            FrozenInverted(4, 6, False), FrozenInverted(6, 6, False), FrozenInverted(6, 4, True), FrozenInverted(4, 4, True), FrozenInverted(4, 4, True)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


def exported(build: collections.abc.Callable[[], nn.Module], *shape: int) -> collections.abc.Callable[[], fx.GraphModule]:
    """torch.export's GraphModule of what `build` makes: of a `stackless` graph, it records the calls of the layers
    that graph calls and none of the plain holders between them (create_feature_extractor's graph, exported)."""

    def run() -> fx.GraphModule:
        module = build()
        return torch.export.export(module, (torch.randn(*shape, generator=torch.Generator().manual_seed(0)),)).module()

    return run


class BatchNormAct(nn.BatchNorm2d):
    """timm's BatchNormAct2d: a torch.nn class's subclass with a forward of its own, a leaf of timm's feature extractor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps
        )  # fmt: skip
        return torch.relu(x)


class BatchNormActLeaves(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, BatchNormAct) or super().is_leaf_module(m, module_qualified_name)


class NormedStem(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.norm = BatchNormAct(4)
        self.head = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.head(self.norm(self.stem(x)))


def normed_stem_leaves() -> fx.GraphModule:
    """A GraphModule whose tracer kept a user class a leaf, as timm's create_feature_extractor keeps BatchNormAct2d."""
    torch.manual_seed(0)
    model = NormedStem().eval()
    return fx.GraphModule(model, BatchNormActLeaves().trace(model), "NormedStem")


class FrozenThreeWays(nn.Module):
    """A block of three codes, each instance passed its own folded constants: plain, a residual add, a gating product."""

    def __init__(self, mode: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.norm = FrozenNorm(4)
        self.mode = mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.norm(self.conv(x))
        if self.mode == 1:
            out = out + x
        if self.mode == 2:
            out = out * x
        return out


class FrozenThreeWaysNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(FrozenThreeWays(mode) for mode in (2, 0, 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class ScaledResidual(nn.Module):
    """A wrapper class used at the root and again below it: the root's frames are its class's code too."""

    def __init__(self, fn: nn.Module) -> None:
        super().__init__()
        self.fn = fn
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fn(x)
        return x + y * self.scale


def nested_residuals() -> nn.Module:
    torch.manual_seed(0)
    return ScaledResidual(nn.Sequential(ScaledResidual(nn.Conv2d(4, 4, 1)), nn.ReLU(), nn.Conv2d(4, 4, 1))).eval()


class NormedHead(nn.Module):
    """A plain holder whose one child is a leaf of several ops (a BatchNormAct): a class would only pass the call on."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.head = nn.Module()
        self.head.norm = BatchNormAct(4)

    def forward(self, x):
        return self.head.norm(self.stem(x))


def normed_head_leaves() -> fx.GraphModule:
    """NormedHead traced with its BatchNormAct a leaf and no module calls recorded, as a feature extractor's tracer makes it."""
    torch.manual_seed(0)
    model = NormedHead().eval()
    graph = BatchNormActLeaves().trace(model)
    for node in graph.nodes:
        node.meta.pop("nn_module_stack", None)
    return fx.GraphModule(model, graph, "NormedHead")


class TokenMixer(nn.Module):
    """Mixes a feature map's tokens (flattened, softmax over channels, folded back), then scales half its channels."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.split = channels // 2

    def forward(self, x):
        B, C, H, W = x.shape
        tokens = x.flatten(2).transpose(1, 2).softmax(-1)
        x = tokens.transpose(1, 2).reshape(B, C, H, W)
        return torch.cat([x[:, : self.split] * 2, x[:, self.split :]], 1)


class TokenMixers(nn.Module):
    """Mixers of other widths on other feature map sizes: the literals torch.export bakes in where the forward
    passes the dimensions it unpacked are named by convention, a slice bound after the attribute it reads."""

    def __init__(self) -> None:
        super().__init__()
        self.mix1 = TokenMixer(4)
        self.down = nn.Conv2d(4, 8, 2, stride=2)
        self.mix2 = TokenMixer(8)

    def forward(self, x):
        return self.mix2(self.down(self.mix1(x)))


class PreActBasic(nn.Module):
    """timm's PreActBasic: the shortcut is the input, or a projection of the pre-activation only some blocks build."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.downsample = nn.Conv2d(cin, cout, 1, stride=stride, bias=False) if stride != 1 or cin != cout else None
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)

    def forward(self, x):
        x_preact = self.norm1(x)
        shortcut = x
        if self.downsample is not None:
            shortcut = self.downsample(x_preact)
        x = self.conv1(x_preact)
        x = self.conv2(self.norm2(x))
        return x + shortcut


class PreActBasicBlocks(nn.Module):
    """PreActBasic blocks with and without a projected shortcut: one class, the projection rebinding the input it replaces."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(PreActBasic(4, 4), PreActBasic(4, 8, 2), PreActBasic(8, 8))

    def forward(self, x):
        return self.blocks(x)


class BiasMlp(nn.Module):
    """timm's RelPosMlp: an MLP of fixed coordinates, read through a method as an attention bias, or added by its forward."""

    def __init__(self, tokens: int) -> None:
        super().__init__()
        self.mlp = nn.Linear(2, 1)
        self.register_buffer("coords", torch.linspace(-1, 1, 2 * tokens * tokens).reshape(tokens, tokens, 2), persistent=False)

    def get_bias(self):
        return self.mlp(self.coords).squeeze(-1).unsqueeze(0)

    def forward(self, attn):
        return attn + self.get_bias()


class GatedMixer(nn.Module):
    """Returns its output and a state, as timm's efficientvim mixer does."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        return h.tanh(), h


class HybridBlock(nn.Module):
    """Keeps its input after reading its shape; mixes it with a state it unpacks from a child, scaled by gates it indexes
    after; attends with a bias a child's method computes (the unfused arm calls the child instead)."""

    def __init__(self, dim: int, tokens: int) -> None:
        super().__init__()
        self.fused_attn = True
        self.alpha = nn.Parameter(torch.linspace(0.1, 0.9, 2 * dim).reshape(2, dim))
        self.mixer = GatedMixer(dim)
        self.rel_pos = BiasMlp(tokens)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        shortcut = x
        alpha = torch.sigmoid(self.alpha).view(2, 1, 1, -1)
        x, h = self.mixer(x)
        x = shortcut + alpha[0] * (x - shortcut)
        q = x.unsqueeze(1)
        if self.fused_attn:
            attn_bias = self.rel_pos.get_bias()
            x = F.scaled_dot_product_attention(q, q, q, attn_mask=attn_bias)
        else:
            attn = (q @ q.transpose(-2, -1)) * C**-0.5
            attn = self.rel_pos(attn)
            x = attn.softmax(dim=-1) @ q
        x = self.proj(x.reshape(B, N, C))
        return shortcut + x * alpha[1] + h


class HybridBlocks(nn.Module):
    """Two HybridBlocks: one class."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(HybridBlock(8, 4), HybridBlock(8, 4))

    def forward(self, x):
        return self.blocks(x)


class ShapeKeptBlock(nn.Module):
    """Reads its input's shape, then keeps the input for a residual (timm's tiny_vit and sam blocks)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        shortcut = x
        x = self.norm(x)
        x = self.fc(x.reshape(B * N, C)).reshape(B, N, C)
        return shortcut + x


class ShapeKeptBlocks(nn.Module):
    """Two ShapeKeptBlocks: one class."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ShapeKeptBlock(8), ShapeKeptBlock(8))

    def forward(self, x):
        return self.blocks(x)


class BiasPassingLinear(nn.Linear):
    """timm's Linear: passes its bias on, which some instances do not have (None)."""

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class BiasPassingHead(nn.Module):
    """BiasPassingLinears with a bias and without: one class passing `self.bias` (None where built without)."""

    def __init__(self) -> None:
        super().__init__()
        self.pre = BiasPassingLinear(8, 8, bias=False)
        self.norm = nn.LayerNorm(8)
        self.fc = BiasPassingLinear(8, 4)

    def forward(self, x):
        return self.fc(self.norm(self.pre(x)))


class NormedConvBlock(nn.Module):
    """transformers' Wav2Vec2PositionalConvEmbedding: a weight-normed convolution (a parametrized layer,
    which symbolic_trace keeps a leaf), then the padding it adds trimmed and an activation."""

    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2, groups=2), dim=2)
        self.remove = 1 if kernel_size % 2 == 0 else 0
        self.act = nn.GELU()

    def forward(self, x):
        x = self.conv(x)
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return self.act(x)


class NormedConvBlocks(nn.Module):
    """NormedConvBlocks of two kernel sizes, and a weight-normed head on its default tensor and dim."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(NormedConvBlock(4, 4), NormedConvBlock(4, 3))
        self.head = nn.utils.parametrizations.weight_norm(nn.Linear(4, 2))

    def forward(self, x):
        return self.head(self.blocks(x).transpose(1, 2))


class OptionalBiasNorm(nn.Module):
    """A layer norm whose bias some instances do not have (None), passed on as the source passes it."""

    def __init__(self, dim: int, bias: bool) -> None:
        super().__init__()
        self.dim = dim
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, dim))
        self.bias = nn.Parameter(torch.linspace(-0.5, 0.5, dim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, (self.dim,), self.weight, self.bias)


class OptionalBiasNorms(nn.Module):
    """OptionalBiasNorms with a bias and without: one class passing `self.bias` (torch writes the call with keywords)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = OptionalBiasNorm(4, True)
        self.b = OptionalBiasNorm(4, False)

    def forward(self, x):
        return self.b(self.a(x))


def _attend(module, x):
    """An attention function given the module (transformers' `attention_interface(self, ...)`): what it
    does with the module is not read, so its class may keep values."""
    return torch.softmax(x * module.scaling, dim=-1)


def _attend_keeping(module, x):
    """As _attend, and it keeps the scores on the module, where the caller reads them."""
    module.scores = x * module.scaling
    return torch.softmax(module.scores, dim=-1)


class BiasAttention(nn.Module):
    """T5's attention: the first computes a position bias, which it returns with its output, and later
    ones are given (`if position_bias is None:`); the attention runs in a function given `self`."""

    def __init__(self, has_bias: bool, keeping: bool = False) -> None:
        super().__init__()
        self.has_bias = has_bias
        self.keeping = keeping
        self.scaling = 0.5
        self.proj = nn.Linear(4, 4)
        self.bias = nn.Linear(4, 4) if has_bias else None

    def forward(self, x, position_bias=None):
        if position_bias is None:
            if self.bias is None:
                position_bias = torch.zeros(x.shape)
            else:
                position_bias = self.bias(x).tanh()
        attend = _attend_keeping if self.keeping else _attend
        attention = attend(self, self.proj(x) + position_bias)
        output = attention * 2
        return output, position_bias


class BiasLayer(nn.Module):
    """T5's layer: norm, attention, residual; the bias passed on, as the attention returned it."""

    def __init__(self, has_bias: bool, keeping: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.attention = BiasAttention(has_bias, keeping)

    def forward(self, hidden_states, position_bias=None):
        attention_output, position_bias = self.attention(self.norm(hidden_states), position_bias)
        hidden_states = hidden_states + attention_output
        return hidden_states, position_bias


class BiasStack(nn.Module):
    """T5's stack: the first layer's position bias passed to the next (read outside the layer that made it)."""

    def __init__(self, keeping: bool = False) -> None:
        super().__init__()
        self.layers = nn.ModuleList([BiasLayer(True, keeping), BiasLayer(False)])

    def forward(self, x):
        position_bias = None
        for layer in self.layers:
            x, position_bias = layer(x, position_bias)
        return x


class KeptScores(nn.Module):
    """The first layer's attention keeps its scores on itself, and the stack reads them there: not returned."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = BiasStack(keeping=True).layers

    def forward(self, x):
        h, _ = self.layers[0](x)
        return self.layers[1](h)[0] + self.layers[0].attention.scores


class MaskedDecoderLayer(SeqDecoderLayer):
    """BART's decoder layer: its self-attention given its mask by keyword, its cross-attention the encoder's
    states and the encoder's mask, passed as `attention_mask=encoder_attention_mask`."""

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None):
        hidden_states = hidden_states + self.self_attn(self.norm1(hidden_states), attention_mask=attention_mask)
        residual = hidden_states
        hidden_states = self.encoder_attn(
            self.norm2(hidden_states), key_value_states=encoder_hidden_states, attention_mask=encoder_attention_mask
        )
        return residual + hidden_states


class MaskedDecoder(nn.Module):
    """Decoder layers whose attention class runs as two forms given different inputs (BART's)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([MaskedDecoderLayer() for _ in range(2)])

    def forward(self, tgt, memory, tgt_mask, memory_mask):
        causal_mask = tgt_mask.tril()  # computed, as BART's masks
        states = memory * 2
        cross_mask = memory_mask * 2
        for layer in self.layers:
            tgt = layer(tgt, causal_mask, states, cross_mask)
        return tgt


class CrossFlagAttention(SeqAttention):
    """BART's attention: a flag the forward sets first says whether it attends across, and the states its keys
    and values come from are chosen by that flag; its statements too long for a line with the inputs' names."""

    def forward(self, hidden_states, key_value_states=None, attention_mask=None):
        is_cross_attention = key_value_states is not None
        b, n, d = hidden_states.shape
        query_states = self.q_proj(hidden_states).view(b, n, self.heads, d // self.heads).transpose(1, 2)
        current_states = key_value_states if is_cross_attention else hidden_states
        key_states = self.k_proj(current_states).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        value_states = self.v_proj(current_states).view(b, -1, self.heads, d // self.heads).transpose(1, 2)
        out = F.scaled_dot_product_attention(query_states, key_states, value_states, attn_mask=attention_mask)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, d))


class CrossFlagDecoderLayer(MaskedDecoderLayer):
    def __init__(self):
        super().__init__()
        self.self_attn, self.encoder_attn = CrossFlagAttention(), CrossFlagAttention()


class CrossFlagDecoder(MaskedDecoder):
    """BART's decoder: each layer's attentions, self and cross, one class whose inputs are named as its source's."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([CrossFlagDecoderLayer() for _ in range(2)])


class TemplateBase(nn.Module):
    """A forward its subclasses share, each with its own `body` (from a review): the inner module's statements
    run the same lines as its caller's."""

    def forward(self, hidden, bias):
        normed = self.norm(hidden)
        return self.body(normed, bias) + hidden


class TemplateInner(TemplateBase):
    def __init__(self):
        super().__init__()
        self.norm, self.lin = nn.LayerNorm(4), nn.Linear(4, 4)

    def body(self, normed, bias):
        return self.lin(normed) * bias


class TemplateOuter(TemplateBase):
    def __init__(self):
        super().__init__()
        self.norm, self.inner = nn.LayerNorm(4), TemplateInner()

    def body(self, normed, bias):
        return self.inner(normed.relu(), bias.sigmoid())


class TemplateModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.outer = TemplateOuter()

    def forward(self, x, b):
        return self.outer(x, b)


class CallerBaseModel(nn.Module):
    """Blocks subclassing the model's class with a forward of their own (from a review): the model's lines are
    their caller's, not theirs."""

    def __init__(self, blocks=True):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        if blocks:
            self.b0, self.b1 = CallerBaseBlock(), CallerBaseBlock()

    def forward(self, hidden, scale=None):
        h = self.proj(hidden)
        h = self.b0(h) if scale is not None else h
        return self.b1(h, scale)


class CallerBaseBlock(CallerBaseModel):
    def __init__(self):
        super().__init__(blocks=False)
        self.fc = nn.Linear(4, 4)

    def forward(self, hidden, scale=None):
        hidden = self.fc(hidden).tanh()
        if scale is not None:
            hidden = hidden * scale
        return hidden


class SameCountDecoderLayer(SeqDecoderLayer):
    """Whisper's decoder layer: its self-attention given a mask, its cross-attention the encoder's states and no
    mask, so the attention runs as two codes taking two inputs each, the second another parameter; its calls read
    another parameter too (Whisper's `cache=cache`), so the layer names its inputs after its attention's only."""

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, cache=None):
        attn = self.self_attn(self.norm1(hidden_states if cache is None else cache), attention_mask=attention_mask)
        hidden_states = hidden_states + attn
        cross = self.encoder_attn(self.norm2(hidden_states if cache is None else cache), key_value_states=encoder_hidden_states)
        return hidden_states + cross


class SameCountDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([SameCountDecoderLayer() for _ in range(2)])

    def forward(self, tgt, memory, tgt_mask):
        causal_mask = tgt_mask.tril()
        states = memory * 2
        for layer in self.layers:
            tgt = layer(tgt, causal_mask, states)
        return tgt


class SuperTemplateOuter(TemplateBase):
    """Its own forward, running the base's through `super()` (from a review): the inner module, which inherits
    that forward, runs inside one module running it."""

    def __init__(self):
        super().__init__()
        self.norm, self.inner = nn.LayerNorm(4), TemplateInner()

    def forward(self, hidden, bias):
        return super().forward(hidden, bias) * 2

    def body(self, normed, bias):
        return self.inner(normed.relu(), bias.sigmoid())


class SuperTemplateModel(TemplateModel):
    def __init__(self):
        super().__init__()
        self.outer = SuperTemplateOuter()


class OptionalNode(nn.Module):
    """A tree node given `ctx` by one caller and `mask` by another (from a review): its two codes taking two
    inputs each join under a flag, which they do only where they name their second input alike."""

    def __init__(self, depth=2):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.kids = nn.ModuleList([OptionalNode(depth - 1), OptionalNode(depth - 1)]) if depth else None

    def forward(self, x, ctx=None, mask=None):
        h = self.lin(x)
        if ctx is not None:
            h = h + ctx
        if mask is not None:
            h = h * mask
        if self.kids is not None:
            h = self.kids[0](h, ctx=x) + self.kids[1](h, mask=x.sigmoid())
        return h


class OptionalTree(nn.Module):
    def __init__(self):
        super().__init__()
        self.root = OptionalNode()

    def forward(self, x, c):
        return self.root(x, ctx=c)


class UnpackingAttention(SwappedUse):
    """Unpacks the pair it is passed (`cos, sin = position_embeddings`) and reads its items in that order."""

    def forward(self, hidden_states, position_embeddings):
        cos, sin = position_embeddings
        q = self.q(hidden_states)
        return q * cos + q.flip(-1) * sin


class UnpackingLayer(nn.Module):
    """Passes the pair on whole to two children that unpack it: it takes it as one parameter too."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = UnpackingAttention()
        self.cross = UnpackingAttention()

    def forward(self, hidden_states, position_embeddings):
        hidden_states = hidden_states + self.attn(hidden_states, position_embeddings)
        return hidden_states + self.cross(hidden_states, position_embeddings)


class UnpackingLayers(nn.Module):
    block = UnpackingLayer

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([self.block(), self.block()])

    def forward(self, x):
        position_embeddings = (x.cos(), x.sin())
        for layer in self.layers:
            x = layer(x, position_embeddings)
        return x


class IndexingLayer(nn.Module):
    """Reads an item of its pair by index and passes the pair on: its own items stay inputs of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = UnpackingAttention()

    def forward(self, hidden_states, position_embeddings):
        return self.attn(hidden_states, position_embeddings) * position_embeddings[0]


class IndexingLayers(UnpackingLayers):
    block = IndexingLayer


class TripleSource(nn.Module):
    def forward(self, x):
        return x.cos(), x.sin(), x.tanh()


class PartlyPassedTriple(nn.Module):
    """Passes two of a child's three results as the pair: a tuple of those two, not the child's result."""

    def __init__(self) -> None:
        super().__init__()
        self.source = TripleSource()
        self.layers = nn.ModuleList([RotaryLayer(), RotaryLayer()])

    def forward(self, x):
        cos, sin, extra = self.source(x)
        for layer in self.layers:
            x = layer(x, (cos, sin), extra)
        return x


class SharedReLUBlock(nn.Module):
    """Holds one ReLU at two places, as fusing leaves torchvision's BasicBlock (`conv1.1` is `relu`): the
    shared ReLU evaluates, the rest trains (convert_to_reference_fx leaves it so)."""

    def __init__(self) -> None:
        super().__init__()
        from torch.ao.nn import intrinsic

        self.relu = nn.ReLU()
        self.conv1 = intrinsic.ConvReLU2d(nn.Conv2d(3, 3, 1), self.relu)
        self.relu.eval()

    def forward(self, x):
        return self.relu(self.conv1(x) + x)


class SwappingLayer(nn.Module):
    """Passes its pair's items on the other way round: a tuple of them, not its parameter whole, so it
    keeps them as inputs of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = UnpackingAttention()

    def forward(self, hidden_states, position_embeddings):
        return self.attn(hidden_states, (position_embeddings[1], position_embeddings[0]))


class SwappingLayers(UnpackingLayers):
    block = SwappingLayer


class RenamingLayer(nn.Module):
    """Passes its own `rope` on as the child's `position_embeddings`, beside a parameter of that name it
    never uses: it takes the pair as `rope`."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = UnpackingAttention()

    def forward(self, hidden_states, rope, position_embeddings=None):
        return self.attn(hidden_states, rope)


class RenamingLayers(UnpackingLayers):
    block = RenamingLayer


class PassingLevel(nn.Module):
    """Passes the pair on whole to the level inside it, a class per level, five deep: every level takes it whole."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = UnpackingAttention()

    def forward(self, hidden_states, position_embeddings):
        return self.inner(hidden_states, position_embeddings)


def _level(name: str, inner: type[nn.Module]) -> type[nn.Module]:
    def __init__(self) -> None:
        nn.Module.__init__(self)
        self.inner = inner()

    return type(name, (PassingLevel,), {"__init__": __init__, "__module__": __name__})


PassingLevel2 = _level("PassingLevel2", PassingLevel)
PassingLevel3 = _level("PassingLevel3", PassingLevel2)
PassingLevel4 = _level("PassingLevel4", PassingLevel3)
PassingLevel5 = _level("PassingLevel5", PassingLevel4)


class DeepPassing(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.levels = PassingLevel5()

    def forward(self, x):
        return self.levels(x, (x.cos(), x.sin()))


class TupleSequence(nn.Sequential):
    """timm pit's SequentialTuple: runs its children on the tuple it is given, never taking it apart."""

    def forward(self, x):
        for module in self:
            x = module(x)
        return x


class SequencedTokenStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = TupleSequence(TokenStage(3, False), TokenStage(3, True))
        self.cls = nn.Parameter(torch.randn(1, 1, 3))

    def forward(self, x):
        x, cls_tokens = self.stages((x, self.cls.expand(x.shape[0], -1, -1)))
        return cls_tokens


class PlainMaskBlock(nn.Module):
    """A block reading a plain tensor attribute (not a registered buffer): fx registers it as a buffer of the holder."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.mask = torch.tensor([1.0, 0.0, 1.0, 1.0])

    def forward(self, x):
        return self.fc(x) * self.mask + x


class PlainMaskStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.ModuleList([PlainMaskBlock(), PlainMaskBlock()])

    def forward(self, x):
        return self.stages[1](self.stages[0](x).relu())


class SharedPosConv(nn.Module):
    """coat's ConvPosEnc: a depthwise convolution, added back to its input."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv1d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x):
        return self.proj(x.transpose(1, 2)).transpose(1, 2) + x


class SharedRelPos(nn.Module):
    """coat's ConvRelPosEnc: convolutions over a list, run for the attention that holds it."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv_list = nn.ModuleList([nn.Conv1d(dim // 2, dim // 2, 3, padding=1), nn.Conv1d(dim // 2, dim // 2, 5, padding=2)])

    def forward(self, q, v):
        v = v.transpose(1, 2)
        half = v.shape[1] // 2
        out = torch.cat([self.conv_list[0](v[:, :half]), self.conv_list[1](v[:, half:])], dim=1)
        return q * out.transpose(1, 2)


class SharingAttention(nn.Module):
    def __init__(self, dim: int, shared_rel: nn.Module) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.rel = shared_rel
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj(attn @ v + self.rel(q, v))


class SharingBlock(nn.Module):
    """coat's SerialBlock: runs a position module its model holds and shares with its other blocks."""

    def __init__(self, dim: int, shared_pos: nn.Module, shared_rel: nn.Module) -> None:
        super().__init__()
        self.pos = shared_pos
        self.norm = nn.LayerNorm(dim)
        self.attn = SharingAttention(dim, shared_rel)

    def forward(self, x):
        x = self.pos(x)
        return x + self.attn(self.norm(x))


class SharedModuleStages(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pos1 = SharedPosConv(4)
        self.pos2 = SharedPosConv(8)
        self.rel1 = SharedRelPos(4)
        self.rel2 = SharedRelPos(8)
        self.blocks1 = nn.ModuleList([SharingBlock(4, self.pos1, self.rel1) for _ in range(2)])
        self.up = nn.Linear(4, 8)
        self.blocks2 = nn.ModuleList([SharingBlock(8, self.pos2, self.rel2) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks1:
            x = block(x)
        x = self.up(x)
        for block in self.blocks2:
            x = block(x)
        return x


class PosBlock(nn.Module):
    def __init__(self, pos: nn.Module) -> None:
        super().__init__()
        self.pos = pos
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.pos(x)) + x


class SiblingHeldPos(nn.Module):
    """Blocks running a module the first of them holds: the GraphModule holds it there only."""

    def __init__(self) -> None:
        super().__init__()
        first = PosBlock(SharedPosConv(4))
        self.blocks = nn.ModuleList([first, PosBlock(first.pos), PosBlock(first.pos)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ShareRunner(nn.Module):
    def __init__(self, shared: nn.Module) -> None:
        super().__init__()
        self.shared = shared
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.shared(x))


class NamedShared(nn.Module):
    """Blocks running a module the model holds under `name`, however hostile."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.add_module(name, SharedPosConv(4))
        self.blocks = nn.ModuleList([ShareRunner(self._modules[name]) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class SizedLeafAttention(nn.Module):
    """Kept a leaf by its tracer, as timm's LocallyGroupedAttn: takes the size tuple whole and unpacks it."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        H, W = size
        B, N, C = x.shape
        return self.proj(x.view(B, H, W, C).flip(1).reshape(B, N, C))


class SpreadAttention(nn.Module):
    """Spreads the size tuple where it reduces at all, as timm's GlobalSubSampleAttn: `reshape(B, C, *size)`."""

    def __init__(self, dim: int, reduce: bool) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.sr = nn.Conv2d(dim, dim, 2, stride=2) if reduce else None

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        B, N, C = x.shape
        q = self.q(x)
        if self.sr is not None:
            x = x.permute(0, 2, 1).reshape(B, C, *size)
            x = self.sr(x).reshape(B, C, -1).permute(0, 2, 1)
        return q + x.mean(1, keepdim=True)


class TwinsLikeBlock(nn.Module):
    def __init__(self, dim: int, kind: str) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SizedLeafAttention(dim) if kind == "leaf" else SpreadAttention(dim, kind == "reduce")
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), size)
        x = x + self.mlp(self.norm2(x))
        return x


class TwinsLikeBlocks(nn.Module):
    """timm twins' pattern: blocks passing their size tuple whole to a leaf attention or to one that spreads it."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([TwinsLikeBlock(8, "leaf"), TwinsLikeBlock(8, "reduce"), TwinsLikeBlock(8, "leaf"), TwinsLikeBlock(8, "plain")])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, _, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x, (H, W))
        return x


class SizedLeaves(fx.Tracer):
    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, SizedLeafAttention) or super().is_leaf_module(m, module_qualified_name)


def twins_like_blocks(stackless: bool = False) -> fx.GraphModule:
    """TwinsLikeBlocks traced with its leaf attentions kept; `stackless`: recording no module calls, as timm's
    feature extractor (export it with `classes_from=TwinsLikeBlocks()`)."""
    torch.manual_seed(0)
    model = TwinsLikeBlocks().eval()
    graph = SizedLeaves().trace(model)
    for node in graph.nodes if stackless else ():
        node.meta.pop("nn_module_stack", None)
    return fx.GraphModule(model, graph, "TwinsLikeBlocks")


class IndexedSizeConv(nn.Module):
    """Takes the items of its size tuple by index, as timm pvt_v2's DWConv: `view(B, C, feat_size[0], feat_size[1])`."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x: torch.Tensor, feat_size: list[int]) -> torch.Tensor:
        B, N, C = x.shape
        x = x.transpose(1, 2).view(B, C, feat_size[0], feat_size[1])
        return self.conv(x).flatten(2).transpose(1, 2)


class ReducingAttention(nn.Module):
    """Unpacks its size tuple and reads it only where it reduces, as timm pvt_v2's Attention."""

    def __init__(self, dim: int, sr_ratio: int) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.sr = nn.Conv2d(dim, dim, sr_ratio, stride=sr_ratio) if sr_ratio > 1 else None

    def forward(self, x: torch.Tensor, feat_size: list[int]) -> torch.Tensor:
        B, N, C = x.shape
        H, W = feat_size
        q = self.q(x)
        if self.sr is not None:
            x = x.permute(0, 2, 1).reshape(B, C, H, W)
            x = self.sr(x).reshape(B, C, -1).permute(0, 2, 1)
        return q + x.mean(1, keepdim=True)


class PvtLikeBlock(nn.Module):
    def __init__(self, dim: int, sr_ratio: int) -> None:
        super().__init__()
        self.attn = ReducingAttention(dim, sr_ratio)
        self.mlp = IndexedSizeConv(dim)

    def forward(self, x: torch.Tensor, feat_size: list[int]) -> torch.Tensor:
        x = x + self.attn(x, feat_size)
        return x + self.mlp(x, feat_size)


class PvtLikeBlocks(nn.Module):
    """timm pvt_v2's pattern: blocks passing their size tuple whole to an attention that unpacks it where it
    reduces (the last one does not) and to a convolution taking its items by index."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([PvtLikeBlock(8, 2), PvtLikeBlock(8, 2), PvtLikeBlock(8, 1)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, _, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        feat_size = (H, W)
        for block in self.blocks:
            x = block(x, feat_size)
        return x


class ScaledEmbedding(nn.Module):
    """An embedding of its own, as BART's BartScaledWordEmbedding (no torch.nn layer to restore)."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(10, 4))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight) * 2.0


class TiedEmbedder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = ScaledEmbedding()
        self.norm = nn.LayerNorm(4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.norm(self.embed(ids))


class TiedLM(nn.Module):
    """A head and an embedding sharing one weight, as transformers' language models tie them."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 10, bias=False)
        self.encoder = TiedEmbedder()
        self.encoder.embed.weight = self.head.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(ids))


def tied_read_outside() -> fx.GraphModule:
    """TiedLM by torch.export, its embedding reading the tied weight as `head.weight`, a path outside the
    encoder (as BART's decoder reads `lm_head.weight`)."""
    torch.manual_seed(0)
    gm = torch.export.export(TiedLM().eval(), (torch.tensor([[1, 2, 3]]),)).module()
    for node in gm.graph.find_nodes(op="get_attr"):
        if node.target == "encoder.embed.weight":
            node.target = "head.weight"
    gm.recompile()
    return gm


class ChannelsLastNorm(nn.Module):
    """A LayerNorm over channels as timm's LayerNorm2d writes it: permuted to channels last and back."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.shape = (channels,)
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.shape, self.weight, self.bias, 1e-6)
        return x.permute(0, 3, 1, 2)


class SplitBlock(nn.Module):
    """A block that splits its input as EdgeNeXt's does, and adds the input back."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels // 2, channels // 2, 3, padding=1)
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return x + self.proj(torch.cat([self.conv(a), b], 1))


class ConvResidual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 1)
        self.conv2 = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return x + self.conv2(self.conv1(x))


class NormedSplitStages(nn.Module):
    """A block, then split blocks (each `chunk` reads what the block before made, as its `+` does), then a
    downsampling Sequential whose norm starts and ends with a permute (EdgeNeXt's stages)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(ConvResidual(8), SplitBlock(8), SplitBlock(8))
        self.down = nn.Sequential(ChannelsLastNorm(8), nn.Conv2d(8, 16, 2, stride=2))
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        return self.head(self.down(self.blocks(self.stem(x))))


class MaybeDoubled(nn.Module):
    """A block that doubles its input first and transposes its result last where `scale` is set."""

    def __init__(self, scale: bool) -> None:
        super().__init__()
        self.scale = scale
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        if self.scale:
            x = x * 2
        x = x + self.out(self.fc(x))
        if self.scale:
            x = x.transpose(0, 1)
        return x


class DoubledBetween(nn.Module):
    """Blocks that neither double nor transpose, and a caller doing both around the second: code its
    blocks' class runs only where another instance would, which stays the caller's."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([MaybeDoubled(False), MaybeDoubled(False)])

    def forward(self, x):
        x = self.blocks[0](x)
        x = self.blocks[1](x * 2)
        return x.transpose(0, 1)


def _scaled_relu(x, scale: float):
    return F.relu(x) * scale


class LeafNormAct(nn.BatchNorm2d):
    """A norm whose forward calls a helper, kept a leaf by the tracer (LeafNormActs)."""

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        return _scaled_relu(x, 2.0)


class ConvNormBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.bn = LeafNormAct(4)

    def forward(self, x):
        return x + self.bn(self.conv(x))


class LeafNormActs(nn.Module):
    """Blocks holding a norm a tracer of its own keeps a leaf, and one more such norm at the root."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.blocks = nn.Sequential(ConvNormBlock(), ConvNormBlock())
        self.top = LeafNormAct(4)

    def forward(self, x):
        return self.top(self.blocks(self.stem(x)))


def leaf_norm_acts() -> fx.GraphModule:
    """LeafNormActs by torch.export of its graph from a tracer of its own keeping LeafNormAct a leaf: the
    norms' nodes record their own statements, the blocks' code none."""

    class Leaves(fx.Tracer):
        def is_leaf_module(self, m: nn.Module, qualified_name: str) -> bool:
            return isinstance(m, LeafNormAct) or super().is_leaf_module(m, qualified_name)

    torch.manual_seed(0)
    model = LeafNormActs().eval()
    graph = Leaves().trace(model)
    for node in graph.nodes:
        node.meta.pop("nn_module_stack", None)
    gm = fx.GraphModule(model, graph, "LeafNormActs")
    return torch.export.export(gm, (torch.randn(2, 3, 4, 4),)).module()


class ScaleBy(nn.Module):
    """timm MetaFormer's Scale: its tensor read alone is its run; the `x *` is its caller's to the graph."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.rand(width))

    def forward(self, x):
        return x * self.scale.view(1, -1)


class LayerScaledBlock(nn.Module):
    """A block whose second residual adds a layer-scaled branch to its first (timm's MetaFormer blocks):
    the first residual is read by the block's code after its last layer."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.fc2 = nn.Linear(width, width)
        self.layer_scale = ScaleBy(width)

    def forward(self, x):
        x = x + self.fc1(x)
        return x + self.layer_scale(self.fc2(self.norm(x)))


class LayerScaledBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(LayerScaledBlock(4), LayerScaledBlock(4))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.blocks(x))


class NormedDown(nn.Module):
    """timm MetaFormer's Downsampling: a norm (an nn.Identity here, which torch.export records no call of),
    then a strided convolution."""

    def __init__(self, channels: int, out: int) -> None:
        super().__init__()
        self.norm = nn.Identity()
        self.conv = nn.Conv2d(channels, out, 2, stride=2)

    def forward(self, x):
        return self.conv(self.norm(x))


class NormedDownStage(nn.Module):
    def __init__(self, channels: int, out: int, down: bool) -> None:
        super().__init__()
        self.downsample = NormedDown(channels, out) if down else nn.Identity()
        self.blocks = nn.Sequential(ConvResidual(out), ConvResidual(out))

    def forward(self, x):
        return self.blocks(self.downsample(x))


class NormedDownStages(nn.Module):
    """Stages, the second downsampling first (MetaFormer's)."""

    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(NormedDownStage(4, 4, False), NormedDownStage(4, 8, True))

    def forward(self, x):
        return self.stages(x)


class SiluGated(nn.Module):
    """A block whose forward starts reading its input twice (`x * torch.sigmoid(x)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        x = x * torch.sigmoid(x)
        return self.fc2(self.fc1(x))


class SiluGatedBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(SiluGated(), SiluGated())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.blocks(x))


class TwoResults(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        a = self.fc1(x)
        return a, self.fc2(a)


class TwoResultsCaller(nn.Module):
    """Blocks returning two values, combined by the caller (`a * 2 + b`)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([TwoResults(), TwoResults()])
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        a, b = self.blocks[0](x)
        a, b = self.blocks[1](a * 2 + b)
        return self.head(a * 2 + b)
