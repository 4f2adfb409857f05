"""restore: the torch.nn layers torch.export traced into ATen calls come back as layers, called as modules.

Where `nn_module_stack` says a call ran inside a torch.nn layer (`fc`, a `torch.nn.Linear`) and
its nodes are exactly what that layer's forward runs (layer_recovery.py), the layer is built
from the arguments the ops were called with and the tensors its module holds, checked against
the ops on sample inputs of the recorded shapes, and the ops become one `call_module` of it
(`self.fc(x)`), as symbolic_trace would have left them. A call that does not verify keeps its
ops. The input GraphModule is not changed: modules on the way to a restored layer are copied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch import fx, nn

from .aten_spellings import bind
from .calls import body_nodes, resolve_class, stack_frames
from .layer_recovery import LAYERS, Recovered, Run, bound_calls, recover
from .raising import is_aten
from .scopes import entered, scopes_of
from .subgraphs import copy_graph, holder_copy, private_holder, with_graph

# Inputs larger than this are not made up to check a layer (its ops stay).
MAX_SAMPLE_ELEMENTS = 1 << 24


@dataclass(frozen=True)
class Restored:
    """One call of a layer that verified: its nodes (in the input graph) and its inputs."""

    path: str
    nodes: tuple[fx.Node, ...]
    inputs: tuple[fx.Node, ...]
    mode: bool | None  # the training flag its ops ran in (BatchNorm, Dropout), None when they do not say


def restore_layers(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with every verified torch.nn layer call as a `call_module`; `gm` itself if there is none."""
    if not any(is_aten(n) for n in gm.graph.nodes):
        return gm
    modules = dict(gm.named_modules(remove_duplicate=False))
    layers: dict[str, nn.Module] = {}
    restored: list[Restored] = []
    for path, cls, nodes in _layer_runs(gm):
        try:
            found = _restore(gm, modules, layers, path, cls, nodes)
        except Exception:  # noqa: BLE001 - restoring is an improvement: a layer it cannot read keeps its ops
            found = None
        if found is not None:
            restored.append(found)
    if not restored:
        return gm
    return _rewrite(gm, layers, restored)


def _layer_runs(gm: fx.GraphModule) -> list[tuple[str, type[nn.Module], list[fx.Node]]]:
    """Runs of consecutive nodes inside one call of a torch.nn layer the table knows (innermost frame)."""
    runs: list[tuple[str, str, type[nn.Module], list[fx.Node]]] = []
    for node in body_nodes(gm):
        frames = stack_frames(node)
        cls = resolve_class(frames[-1].cls) if frames else None
        if cls not in LAYERS:
            continue
        key = frames[-1].key
        if runs and runs[-1][0] == key and runs[-1][3][-1].next is node:
            runs[-1][3].append(node)
        else:
            runs.append((key, frames[-1].path, cls, [node]))
    seen: dict[str, int] = {}
    for key, *_ in runs:
        seen[key] = seen.get(key, 0) + 1
    return [(path, cls, nodes) for key, path, cls, nodes in runs if seen[key] == 1]  # a call split in two: left alone


def _restore(
    gm: fx.GraphModule, modules: dict[str, nn.Module], layers: dict[str, nn.Module], path: str, cls: type[nn.Module], nodes: list[fx.Node]
) -> Restored | None:
    """The layer call the nodes are, its inputs the values they read from outside: not the tensors they read
    (its weights, wherever held), but for a tensor of another module it takes as its input where it cannot be
    read otherwise (timm's `self.meta_mlp(self.relative_coordinates_log)`: its first Linear's input)."""
    inside = set(nodes)
    read = list(dict.fromkeys(i for n in nodes for i in n.all_input_nodes if i not in inside))
    if any(u not in inside for n in nodes[:-1] for u in n.users) or not nodes[-1].users:
        return None
    values = tuple(i for i in read if i.op != "get_attr")
    elsewhere = tuple(i for i in read if i.op != "get_attr" or not str(i.target).startswith(f"{path}."))
    found = _restored(gm, modules, layers, path, cls, nodes, values)
    if found is None and elsewhere != values:
        found = _restored(gm, modules, layers, path, cls, nodes, elsewhere)
    return found


def _restored(
    gm: fx.GraphModule,
    modules: dict[str, nn.Module],
    layers: dict[str, nn.Module],
    path: str,
    cls: type[nn.Module],
    nodes: list[fx.Node],
    inputs: tuple[fx.Node, ...],
) -> Restored | None:
    holder = modules.get(path)
    state = _state(holder) if holder is not None else {}
    calls = bound_calls(nodes)
    if state is None or calls is None or not _reachable(modules, path):
        return None
    recovered = recover(cls, Run(path, calls, inputs, state, lambda target: _attribute(gm, target)))
    if recovered is None or recovered.training:
        return None  # traced in training, the ops run so whatever the flags (as BatchNorm's must): a Dropout too
    layer = layers.get(path) or _build(cls, recovered, holder, state, _training(modules, path, holder, recovered))
    if layer is None or not _verifies(gm, layer, nodes, inputs, state):
        return None
    layers[path] = layer
    return Restored(path, tuple(nodes), inputs, recovered.training)


def _attribute(gm: fx.GraphModule, target: str) -> Any:
    owner, _, name = target.rpartition(".")
    return getattr(gm.get_submodule(owner), name, None)


def _state(holder: nn.Module) -> dict[str, torch.Tensor] | None:
    """The tensors a plain holder keeps, by name; None for anything else (a layer, a holder with children)."""
    if type(holder) is not nn.Module or holder._modules or any(isinstance(v, torch.Tensor) for v in vars(holder).values()):
        return None
    tensors = {**holder._parameters, **holder._buffers}
    return {k: v for k, v in tensors.items() if v is not None}


def _reachable(modules: dict[str, nn.Module], path: str) -> bool:
    """Every module already on the way to `path` is a plain holder (the root aside): copies can take the layer."""
    parts = path.split(".")
    ancestors = [".".join(parts[:i]) for i in range(1, len(parts))]
    return all(type(modules[a]) is nn.Module for a in ancestors if a in modules)


def _training(modules: dict[str, nn.Module], path: str, holder: nn.Module | None, recovered: Recovered) -> bool:
    if recovered.training is not None:
        return recovered.training
    if holder is not None:
        return holder.training
    parent = path.rpartition(".")[0]
    while parent not in modules:
        parent = parent.rpartition(".")[0]
    return modules[parent].training


def _build(cls: type[nn.Module], recovered: Recovered, holder: nn.Module | None, state: dict[str, torch.Tensor], training: bool) -> nn.Module | None:
    """The layer, holding the holder's own tensors; None when its state would not be the holder's."""
    try:
        with torch.device("meta"):
            layer = cls(**recovered.kwargs)
    except Exception:  # noqa: BLE001 - a constructor may refuse the arguments in any way
        return None
    own = {k for k, v in {**layer._parameters, **layer._buffers}.items() if v is not None}
    if own != set(state) or any(layer.get_parameter(k).shape != v.shape for k, v in state.items() if k in layer._parameters):
        return None
    if holder is not None and holder._non_persistent_buffers_set != layer._non_persistent_buffers_set:
        return None
    for name, tensor in state.items():
        if name in layer._parameters:
            layer._parameters[name] = cast("nn.Parameter", tensor)
        else:
            layer._buffers[name] = tensor
    layer.train(training)
    return layer


def _verifies(gm: fx.GraphModule, layer: nn.Module, nodes: list[fx.Node], inputs: tuple[fx.Node, ...], state: dict[str, torch.Tensor]) -> bool:
    """The layer gives what the nodes give (same bits, same mutation of its input) on made-up inputs of the recorded shapes."""
    high = state["weight"].shape[0] if isinstance(layer, nn.Embedding) else 2
    samples = [_sample(node.meta.get("val"), high) for node in inputs]
    if any(s is None for s in samples):
        return False
    if any(t.device.type != "cpu" for t in state.values()):
        return False  # made-up inputs are on the CPU: a layer on meta (or an accelerator) keeps its ops
    body = _body(gm, nodes, inputs)
    with torch.no_grad(), torch.random.fork_rng(devices=[]), entered(scopes_of(nodes[0])):  # in the mode the ops ran in
        try:
            expected_inputs = [s.clone() for s in samples]  # type: ignore[union-attr]
            torch.manual_seed(0)
            expected = body(*expected_inputs)
            actual_inputs = [s.clone() for s in samples]  # type: ignore[union-attr]
            torch.manual_seed(0)
            actual = layer(*actual_inputs)
        except Exception:  # noqa: BLE001 - the ops or a wrong layer may fail on made-up inputs in any way
            return False
    return _equal(actual, expected) and all(map(_equal, actual_inputs, expected_inputs))


def _equal(a: Any, b: Any) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def _sample(value: Any, high: int) -> torch.Tensor | None:
    """A tensor of `value`'s shape and dtype with made-up values; None when its shape is not known or too large."""
    if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
        return None
    shape = []
    for size in value.shape:
        hint = size if isinstance(size, int) else getattr(size.node, "hint", None)
        if not isinstance(hint, int):
            return None
        shape.append(hint)
    if torch.Size(shape).numel() > MAX_SAMPLE_ELEMENTS:
        return None
    generator = torch.Generator().manual_seed(0)
    if value.dtype.is_floating_point:
        return torch.randn(shape, generator=generator).to(value.dtype)
    if value.dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    return torch.randint(0, high, shape, generator=generator).to(value.dtype)


def _body(gm: fx.GraphModule, nodes: list[fx.Node], inputs: tuple[fx.Node, ...]) -> fx.GraphModule:
    """The nodes as a GraphModule of their own, taking the call's inputs."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {i: graph.placeholder(f"input_{k}") for k, i in enumerate(inputs)}

    def mapped(node: fx.Node) -> fx.Node:
        if node not in env:  # a tensor the layer holds
            env[node] = graph.get_attr(str(node.target))
        return env[node]

    for node in nodes:
        env[node] = graph.node_copy(node, mapped)
    graph.output(env[nodes[-1]])
    return fx.GraphModule(gm, graph)


def _rewrite(gm: fx.GraphModule, layers: dict[str, nn.Module], restored: list[Restored]) -> fx.GraphModule:
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    for call in restored:
        nodes = [copies[n] for n in call.nodes]
        main, output = nodes[0], nodes[-1]  # the layer's op; its value, or a getitem of it
        if output is not main:
            main.meta["val"] = output.meta.get("val")
            output.replace_all_uses_with(main)
            copies[call.nodes[-1]] = main  # a later layer's input, when it was this getitem
        for node in reversed(nodes[1:]):
            graph.erase_node(node)
        main.meta["stack_trace"] = _caller_trace(main.meta.get("stack_trace"))
        held = [a for a in main.all_input_nodes if a.op == "get_attr"]
        main.op, main.target = "call_module", call.path
        main.args, main.kwargs = tuple(copies[i] for i in call.inputs), {}
        for node in held:
            if not node.users:
                graph.erase_node(node)
    graph.lint()
    root = holder_copy(gm)
    private = {id(root)}
    first_use = first_uses(graph)
    for path, layer in layers.items():
        install(root, path.split("."), layer, private, first_use)
    if any(call.mode is False for call in restored) and _traced_in_eval(gm):  # the model is, as a whole, as its source was
        _evaluate(root, private | {id(layer) for layer in layers.values()}, {}, set())
    return with_graph(gm, graph, root)


def _traced_in_eval(gm: fx.GraphModule) -> bool:
    """Every op that takes a training flag (batch norms, dropouts, wherever they are) ran with it off."""
    for node in gm.graph.nodes:
        if is_aten(node):
            values = bind(node).values
            if values.get("training", values.get("train", False)) is not False:
                return False
    return True


def _evaluate(module: nn.Module, ours: set[int], copies: dict[int, nn.Module], seen: set[int]) -> None:
    """Eval mode for `module` and every plain holder and restored layer under it (copying holders
    that are not ours yet, once each); other modules (subgraphs of higher-order ops) as they are."""
    module.training = False
    seen.add(id(module))
    for name, child in module._modules.items():
        if child is not None and type(child) is nn.Module and id(child) not in ours:
            if id(child) not in copies:
                copies[id(child)] = holder_copy(child)
                ours.add(id(copies[id(child)]))
            module._modules[name] = child = copies[id(child)]
        if child is not None and id(child) in ours and id(child) not in seen:
            _evaluate(child, ours, copies, seen)


_TRACE_FRAME = re.compile(r'^ *File "(?P<file>[^"]*)", line \d+, in .*\n(?: {4}.*(?:\n|$))*', re.MULTILINE)


def _caller_trace(trace: str | None) -> str | None:
    """The stack trace without the frames inside torch.nn: the line that called the layer, if it was recorded."""
    frames = [m.group(0) for m in _TRACE_FRAME.finditer(trace or "")]
    kept = [f for f in frames if "/torch/nn/" not in _TRACE_FRAME.match(f)["file"].replace("\\", "/")]  # type: ignore[index]
    return "".join(kept).rstrip("\n") or None


def first_uses(graph: fx.Graph, frames: bool = False) -> dict[str, dict[str, int]]:
    """By holder path, the position of the first use of each child the graph reads or calls (or a module under it);
    with `frames`, of each a node runs inside the call of too (a module the GraphModule does not hold)."""
    out: dict[str, dict[str, int]] = {}
    order = {node: position for position, node in enumerate(graph.nodes)}
    for node, position in order.items():
        paths = [f.path for f in stack_frames(node) if f.path] if frames else []
        if node.op == "call_module":
            paths.append(str(node.target))
        elif node.op == "get_attr" and node.users:  # torch.export puts every get_attr first: used where read
            paths.append(str(node.target))
            position = min(order[user] for user in node.users)
        for path in paths:
            parts = path.split(".")
            for end in range(len(parts)):
                uses = out.setdefault(".".join(parts[:end]), {})
                uses[parts[end]] = min(uses.get(parts[end], position), position)
    return out


def first_used_after(names: Iterable[str], uses: dict[str, int], name: str) -> int | None:
    """The index of the first of `names` the graph uses after `name` (by `uses`, first_uses' positions of
    one holder's children), before which `name` goes; None where none is, or `name` is not used."""
    mine = uses.get(name)
    return None if mine is None else next((i for i, key in enumerate(names) if uses.get(key, -1) > mine), None)


def install(root: nn.Module, parts: list[str], layer: nn.Module, private: set[int], first_use: dict[str, dict[str, int]]) -> None:
    """Put `layer` at `parts` under `root`, copying the shared holders on the way (creating missing ones)."""
    paths = {id(root): ""}  # each holder on the way, by id: its path

    def new_holder(parent: nn.Module, name: str) -> nn.Module:
        """A module for a stateless layer's missing parent, in its parent's mode, set in its place."""
        new = nn.Module()
        new.training = parent.training
        _place(parent, name, new, first_use.get(paths.get(id(parent), ""), {}))
        return new

    parent = root
    for end, name in enumerate(parts[:-1]):
        parent = private_holder(parent, [name], private, new_holder)
        paths[id(parent)] = ".".join(parts[: end + 1])
    _place(parent, parts[-1], layer, first_use.get(".".join(parts[:-1]), {}))


def _place(parent: nn.Module, name: str, child: nn.Module, uses: dict[str, int]) -> None:
    """Set a child; numbered children stay in number order (a created ReLU between two held layers),
    in the places numbered children take (others, as the root's `_guards_fn`, stay where they are);
    a named one goes before the first sibling the graph uses after it (torch.export keeps only the
    layers that hold tensors: a created ReLU goes back between the batch norm and the conv it sits
    between, where a Sequential of named layers must have it)."""
    if name in parent._modules:  # a holder replaced where it stood
        parent._modules[name] = child
        return
    later = None if name.isdigit() else first_used_after(parent._modules, uses, name)
    if later is not None:
        items = list(parent._modules.items())
        items.insert(later, (name, child))
        parent._modules.clear()
        parent._modules.update(items)
        return
    parent._modules[name] = child
    items = list(parent._modules.items())
    slots = [i for i, (key, _) in enumerate(items) if key.isdigit()]
    numbered = sorted((items[i] for i in slots), key=lambda item: int(item[0]))
    for slot, item in zip(slots, numbered):
        items[slot] = item
    parent._modules.clear()
    parent._modules.update(items)

