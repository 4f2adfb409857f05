"""split: a flat GraphModule -> a tree of GraphModules, one per module the graph recorded calls of.

Each module call the graph recorded (calls.py) becomes a `call_module` of that module in its
caller's graph, and the module becomes a GraphModule (named after its source class) whose graph
holds exactly the nodes that ran inside the call. A module whose body cannot be cut out as a
function stays inline in its caller, with the reason (`Structure.inline`). A Sequential whose
body is its children called one after another stays an `nn.Sequential` and is called as one.
The input GraphModule is not changed: holders are copied, layers and tensors shared.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch import fx, nn

from .access import DICT_BASE, SEQUENTIAL_BASE, numbered_in_any_order, numbered_in_order
from .aliases import identity_source, reads_outside
from .annotations import recovered
from .calls import (
    SOURCE_CLASS,
    Call,
    Frame,
    body_nodes,
    call_tree,
    class_name,
    is_library_sequential,
    is_sequential,
    recorded_frames,
    resolve_class,
    stack_frames,
)
from .guards import is_guards_module
from .input_order import Orders, reorder_calls, source_ordered
from .ir import InlineModule
from .kept_values import may_keep_values
from .layers import first_used_after, first_uses
from .module_paths import called_path, joined
from .packed_inputs import Leaves, Packings, pack_inputs, repack_calls
from .packing import list_arguments
from .rebuild import is_holder
from .returned_values import returned_from, source_item
from .scopes import blocks_of
from .shared_modules import SHARED_MODULES, shared_names
from .source_names import (
    forward_reads,
    passed_argument,
    passed_as,
    passes_whole,
    rebound_parameters,
    source_parameters,
    unpacked_parameters,
)
from .subgraphs import (
    Builder,
    ListArgument,
    generic_input,
    held_values,
    local_name,
    module_from,
    rename_inputs,
    source_input_names,
)
from .tied_reads import inside_reads


@dataclass(frozen=True)
class Structure:
    """The split module tree: `root` and, for each generated class's module path, its source class."""

    root: fx.GraphModule
    inline: tuple[InlineModule, ...] = ()
    sources: tuple[tuple[str, type | str], ...] = ()

    def source_of(self, path: str) -> type | str | None:
        """The source class of the module at `path`, when it became a generated class."""
        return self._by_path.get(path)

    @functools.cached_property
    def _by_path(self) -> dict[str, type | str]:
        """`sources` by path: asked for once or twice per module."""
        return dict(self.sources)


def split(gm: fx.GraphModule) -> Structure:
    """Cut every recorded module call that can be cut out of `gm` into a method of its module."""
    leaves = {str(n.target) for n in gm.graph.find_nodes(op="call_module")}
    nodes = body_nodes(gm)
    frames = {n: recorded_frames(n, leaves) for n in nodes}
    gm, nodes, frames = _unaliased(gm, nodes, frames)
    gm, nodes, frames = _read_inside(gm, nodes, frames)
    modules = dict(gm.named_modules(remove_duplicate=False))
    inline: dict[str, InlineModule] = {}
    while True:
        stacks = {n: tuple(f for f in frames[n] if f.path not in inline) for n in nodes}
        items = call_tree(nodes, stacks)
        calls = [c for item in items if isinstance(item, Call) for c in item.calls()]
        _in_source_order(calls)
        graphs: dict[str, fx.Graph] = {}  # module path -> the graph of its first call
        shared: dict[str, dict[str, str]] = {}  # module path -> {path of a module it runs held outside it: attribute}
        lists = list_arguments(calls)
        found = _problems(calls, modules, graphs, lists, shared)
        if not found:
            break
        inline.update(found)
    inline.update(_unrecorded(gm, nodes, modules, inline))
    kinds = {f.path: f.cls for stack in frames.values() for f in stack} | {c.frame.path: c.frame.cls for c in calls}
    _source_named_inputs(graphs, kinds, frozenset(str(p.target) for p in gm.graph.find_nodes(op="placeholder")))
    listed = {c.frame.path for c in calls if c.frame.key in lists}
    leaf_classes = _leaves(modules, graphs)
    packings = pack_inputs(graphs, kinds, listed, leaf_classes)
    input_orders = source_ordered(graphs, kinds, listed)
    if not calls and not _numbered(gm) and not any(_regrouped(path, module) for path, module in modules.items()):
        return Structure(gm, tuple(inline.values()))
    return _assemble(gm, modules, items, calls, (graphs, shared), kinds, lists, (packings, input_orders, leaf_classes), tuple(sorted(inline.values(), key=lambda m: m.path)))


def _leaves(modules: dict[str, nn.Module], graphs: dict[str, fx.Graph]) -> dict[str, type]:
    """The class of each module held by its path that is not cut out: the graphs call it as a leaf."""
    return {path: type(module) for path, module in modules.items() if path and path not in graphs}


def _in_source_order(calls: list[Call]) -> None:
    """The outputs of each call in the order its source returns them, where the source shows each is an item
    of the tuple it returns (returned_values.py), not in the order the graph computes them: `attention_output,
    position_bias = self.attention(h)`, whose method computes the bias first. Not from symbolic_trace's
    recovered statements: the export of its re-trace, whose joined forwards may return in several places,
    would not know the order again (no fixed point)."""
    for call in calls:
        outputs = call.interface()[1]
        if len(outputs) < 2:
            continue
        items = [source_item(out, call.frame.key) for out in outputs]
        places = [item[0] if item is not None else None for item in items]
        lengths = {item[1] for item in items if item is not None}
        if None not in places and len(set(places)) == len(places) and len(lengths) == 1 and not recovered():
            call.put_outputs([out for _, out in sorted(zip(places, outputs), key=lambda pair: cast(int, pair[0]))])
            call.source_items = (tuple(sorted(cast("list[int]", places))), lengths.pop())
        else:  # the caller's statement names the items by the source's order: not where some are known to be out of it
            call.misordered = any(place is not None and place != position for position, place in enumerate(places))


def _source_named_inputs(graphs: dict[str, fx.Graph], kinds: dict[str, type | str], model_inputs: frozenset[str]) -> None:
    """Name an input of the graphs of one source class after its source forward's parameter where every
    such graph has that input and names it alike (source_input_names, or passed_on_as): instances whose
    code differs (T5's self- and cross-attention) are compared as one class by their code, names
    included. A round per level, as names pass up from a child's inputs to its caller's."""
    by_class: dict[type | str, list[tuple[str, fx.Graph]]] = {}
    for path, graph in graphs.items():
        if path in kinds:
            by_class.setdefault(kinds[path], []).append((path, graph))
    hints: dict[str, list[str | None]] = {}  # by path: the names the graphs of its code alone agree on (_code_hints)
    for _ in range(_NAMING_LEVELS):
        renamed = False
        for cls, members in by_class.items():
            every = [list(graph.find_nodes(op="placeholder")) for _, graph in members]
            for group in _forms(members):
                proposals = [_proposed(path, graph, cls, graphs, kinds, model_inputs, hints) for path, graph in group]
                width = max(len(p) for p in proposals)
                inputs = [list(graph.find_nodes(op="placeholder")) for _, graph in group]
                agreed = [_agreed(i, proposals, inputs, cls) for i in range(width)]
                found = _code_hints(group, proposals, inputs, cls)
                renamed |= any(hints.get(path) != names for path, names in found.items())
                hints.update(found)
                agreed = _generic_names(agreed, inputs, cls, model_inputs, every)
                while clashes := {i for _, graph in group for i in _clashing(graph, agreed)}:  # an input keeping its name has it
                    agreed = [None if i in clashes else name for i, name in enumerate(agreed)]
                for _, graph in group:
                    renamed |= rename_inputs(graph, agreed)
        if not renamed:
            return


def _forms(members: list[tuple[str, fx.Graph]]) -> list[list[tuple[str, fx.Graph]]]:
    """The graphs of one class by how many inputs they take: each such form names its inputs on its own (BART's
    self-attention takes its mask second, its cross-attention third)."""
    out: dict[int, list[tuple[str, fx.Graph]]] = {}
    for path, graph in members:
        out.setdefault(len(graph.find_nodes(op="placeholder")), []).append((path, graph))
    return list(out.values())


def _code_hints(
    group: list[tuple[str, fx.Graph]], proposals: list[list[str | None]], inputs: list[list[fx.Node]], cls: type | str
) -> dict[str, list[str | None]]:
    """Where the graphs of a form propose two names for one input (Whisper's decoder self-attention
    `attention_mask`, its cross-attention `key_value_states`), the names the graphs of each code agree on,
    by path: no name for the form (its codes may yet join, under a flag), but what its callers pass it as
    (passed_on_as: the decoder layer's `attention_mask` and `encoder_hidden_states`)."""
    if not _proposed_apart(proposals):
        return {}
    codes: dict[tuple[Any, ...], list[int]] = {}
    for k, (_, graph) in enumerate(group):
        codes.setdefault(_code_of(graph), []).append(k)
    out: dict[str, list[str | None]] = {}
    for members in codes.values():
        own = [proposals[k] for k in members]
        agreed = [_agreed(i, own, [inputs[k] for k in members], cls) for i in range(max(len(p) for p in own))]
        out.update({group[k][0]: agreed for k in members})
    return out


def _proposed_apart(proposals: list[list[str | None]]) -> bool:
    """True where the graphs propose two names for one input."""
    width = max((len(p) for p in proposals), default=0)
    return any(len({p[i] for p in proposals if i < len(p) and p[i] is not None}) > 1 for i in range(width))


def _code_of(graph: fx.Graph) -> tuple[Any, ...]:
    """What a graph does, its literals aside: each node's op, target and what its arguments are (an input by
    position, another node, or a literal), so that instances of one code differing in sizes are alike."""
    inputs = {node: i for i, node in enumerate(graph.find_nodes(op="placeholder"))}

    def kind(value: Any) -> Any:
        if isinstance(value, fx.Node):
            return ("input", inputs[value]) if value in inputs else "node"
        return "literal"  # of any type: one code scales by 1 in one instance, by 0.5 in another

    code = []
    for node in graph.nodes:
        target = node.target if isinstance(node.target, str) else f"{getattr(node.target, '__module__', '')}.{getattr(node.target, '__qualname__', node.target)}"
        args = fx.node.map_aggregate(node.args, kind)
        kwargs = tuple(sorted((key, str(fx.node.map_aggregate(value, kind))) for key, value in node.kwargs.items()))
        code.append((node.op, target if node.op != "placeholder" else "", str(args), kwargs))
    return tuple(code)


_NAMING_LEVELS = 4  # rounds of input naming: a name passes up one level of module calls a round


def _agreed(i: int, proposals: list[list[str | None]], inputs: list[list[fx.Node]], cls: type | str) -> str | None:
    """The name every graph of a class (its `inputs`) proposes for its input `i`, else None. A graph whose input is a
    model input named after a parameter of the source forward (the first block of a chain takes the
    model's `hidden_states`) proposes that name; one whose input is named `x` for want of a name and read
    by no statement it recorded (symbolic_trace records none) goes with the others' name of a parameter.
    A graph's only input, of a source forward with one parameter, is that parameter,
    whatever the caller's value was called (timm's `self.meta_mlp(self.relative_coordinates_log)`). A graph
    with fewer inputs has no say (timm gcvit's attention called without its `q_global`)."""
    names: set[str | None] = set()
    unknown = False
    for proposal, placeholders in zip(proposals, inputs):
        if i >= len(proposal):
            continue
        name = proposal[i]
        if name is None and i < len(placeholders):
            placeholder = placeholders[i]
            if len(placeholders) == 1 and (sole := _sole_parameter(placeholder, cls)) is not None:
                name = sole
            elif not generic_input(placeholder):
                name = str(placeholder.target) if str(placeholder.target) in source_parameters(cls) else None
            elif all(forward_reads(user) is None for user in placeholder.users):
                unknown = True
                continue
        names.add(name)
    if len(names) != 1 or None in names:
        return None
    name = names.pop()
    if name in rebound_parameters(cls):  # `x, y = y, x`: the source's statements read another value as `x`
        return None
    return name if name and (not unknown or name in source_parameters(cls)) else None


def _generic_names(
    agreed: list[str | None], inputs: list[list[fx.Node]], cls: type | str, model_inputs: frozenset[str], every: list[list[fx.Node]]
) -> list[str | None]:
    """`agreed`, with the inputs the graphs of a class (`every`; those of this form: `inputs`) name apart for want
    of a name, where some name one after a model input the source forward has no parameter for (`tgt`, passed
    on as its `x`), named `x`, `x_1`, ... alike in all, so that their code compares alike: in order, each a name
    no graph's other inputs have."""
    apart = [i for i, name in enumerate(agreed) if name is None and _named_apart(i, every, cls, model_inputs)]
    if not apart:
        return agreed
    kept = {str(p.target) for graph_inputs in inputs for i, p in enumerate(graph_inputs) if i not in apart and agreed[i] is None}
    kept |= {name for name in agreed if name is not None}
    out = list(agreed)
    for i in apart:  # `x` for the first input only: a later one is `x_1`, ... (the optional-input joins read them so)
        fresh = next(name for k in range(0 if i == 0 else 1, len(agreed) + len(kept) + 2) if (name := f"x_{k}" if k else "x") not in kept)
        out[i] = fresh
        kept.add(fresh)
    return out


def _named_apart(i: int, inputs: list[list[fx.Node]], cls: type | str, model_inputs: frozenset[str]) -> bool:
    """True when the graphs name their input `i` apart, each for want of a name (`x`, `x_1`) or after a model
    input that is no parameter of the source forward, and one at least for want of a name."""
    placeholders = [graph_inputs[i] for graph_inputs in inputs if i < len(graph_inputs)]
    if len({str(p.target) for p in placeholders}) < 2 or not any(generic_input(p) for p in placeholders):
        return False
    return all(generic_input(p) or _foreign_model_input(p, cls, model_inputs) for p in placeholders)


def _foreign_model_input(placeholder: fx.Node, cls: type | str, model_inputs: frozenset[str]) -> bool:
    """True for an input named after a model input that is no parameter of the source forward: named by the
    caller (the model's `tgt`, passed on as a block's `x`), not after what the block takes it as."""
    name = str(placeholder.target)
    return name in model_inputs and not generic_input(placeholder) and name not in source_parameters(cls)


def _sole_parameter(placeholder: fx.Node, cls: type | str) -> str | None:
    """The source forward's one parameter, where the input is passed on as itself: an input the graph
    packs into a list or tuple is an item of what the source passes (symbolic_trace takes a list apart:
    `self.cat(features)` is `self.cat([x])`), as is one of a parameter the source unpacks (`a, b = pair`).
    A forward with other parameters may have been given the input as one of those (`kv=x`)."""
    parameters = source_parameters(cls)
    if len(parameters) != 1 or not local_name(parameters[0]) or any(p == parameters[0] for p, _ in unpacked_parameters(cls)):
        return None
    packed = any(placeholder in (value for value in arg if isinstance(value, fx.Node)) for user in placeholder.users for arg in _containers(user))
    return None if packed else parameters[0]


def _containers(node: fx.Node) -> list[list[object]]:
    """The list, tuple and dict arguments of a node, each as its items."""
    values = [*node.args, *node.kwargs.values()]
    return [list(v.values()) if isinstance(v, dict) else list(v) for v in values if isinstance(v, (list, tuple, dict))]


def _proposed(
    path: str,
    graph: fx.Graph,
    cls: type | str,
    graphs: dict[str, fx.Graph],
    kinds: dict[str, type | str],
    model_inputs: frozenset[str],
    hints: dict[str, list[str | None]] | None = None,
) -> list[str | None]:
    """The source parameter name of each input of `graph` (source_input_names), else the one the children
    it is passed to have named theirs (passed_on_as), else the one the source passes where its statements
    pass the input to a call (passed_as: `reshape(B, C, H, W)`)."""
    own = source_input_names(graph, cls, renamable=model_inputs)
    placeholders = list(graph.find_nodes(op="placeholder"))
    passed = [passed_on_as(p, path, cls, graphs, kinds, hints) if name is None else name for p, name in zip(placeholders, own)]
    passed = [name if name is not None or not generic_input(p) else _passed_parameter(p, cls) for p, name in zip(placeholders, passed)]
    if passed != own:  # a statement reading a passed-on name and another parameter: the other is now the one left
        passed = source_input_names(graph, cls, passed, model_inputs)
    return [None if name is not None and passed.count(name) > 1 else name for name in passed]


def _passed_parameter(placeholder: fx.Node, cls: type | str) -> str | None:
    """The source forward's parameter passed_as finds for the input, where a forward input may take its name."""
    found = passed_as(placeholder)
    return found if found is not None and found in source_parameters(cls) and local_name(found) else None


def passed_on_as(
    placeholder: fx.Node,
    path: str,
    cls: type | str,
    graphs: dict[str, fx.Graph],
    kinds: dict[str, type | str] | None = None,
    hints: dict[str, list[str | None]] | None = None,
) -> str | None:
    """The name the called children give the input `placeholder` only passes on to them
    (`self.self_attn(hidden_states, attention_mask=attention_mask)`: `attention_mask`), where that is a
    parameter of the caller's source forward too and the statement making each call reads it; or an
    item's name a child unpacks a parameter into (`cos, sin = position_embeddings`), where the caller's
    source forward has that parameter and the calling statement passes it whole (`kinds`: module path ->
    class)."""
    if not generic_input(placeholder):
        return None
    names: set[str] = set()
    parameters = source_parameters(cls)
    for user in placeholder.users:
        child_path = called_path(path, user)
        child = graphs.get(child_path) if user.op == "call_module" else None
        positions = [i for i, arg in enumerate(user.args) if arg is placeholder]
        if child is None or not positions or placeholder in user.kwargs.values():
            return None
        inputs = list(child.find_nodes(op="placeholder"))
        reads = forward_reads(user) or frozenset()
        items = {item: parameter for parameter, unpacked in unpacked_parameters((kinds or {}).get(child_path, "")) for item in unpacked}
        hint = (hints or {}).get(child_path, [])
        for i in positions:
            name = str(inputs[i].target) if i < len(inputs) else ""
            if i < len(hint) and generic_input(inputs[i]):
                name = hint[i] or name  # the name the child's code alone gives it
            if name in reads and name in parameters:
                names.add(name)
            elif (given := _passed_for(user, child_path, name, kinds)) is not None and given in reads and given in parameters:
                names.add(given)  # `attention_mask=encoder_attention_mask`
            elif name in items and items[name] in reads and items[name] in parameters and passes_whole(user, items[name]):
                names.add(name)
            else:
                return None
    return names.pop() if len(names) == 1 else None


def _passed_for(user: fx.Node, child_path: str, name: str, kinds: dict[str, type | str] | None) -> str | None:
    """The name the caller's statement passes for the parameter `name` of the child at `child_path`
    (source_names.passed_argument)."""
    cls = (kinds or {}).get(child_path)
    return passed_argument(user, str(user.target), cls, name) if cls is not None else None


def _clashing(graph: fx.Graph, names: list[str | None]) -> set[int]:
    """The positions of `names` that another input of `graph` would have after renaming."""
    final = [names[i] if i < len(names) and names[i] is not None else str(p.target) for i, p in enumerate(graph.find_nodes(op="placeholder"))]
    return {i for i, name in enumerate(names) if name is not None and i < len(final) and final.count(name) > 1}


def _unaliased(gm: fx.GraphModule, nodes: list[fx.Node], frames: dict[fx.Node, tuple[Frame, ...]]) -> tuple[fx.GraphModule, list[fx.Node], dict[fx.Node, tuple[Frame, ...]]]:
    """`gm` (a copy, when it changes) where uses outside a module call of a node that returns its input
    itself read that input (aliases.py); the body nodes and their frames in it."""
    if not any(frames.values()):
        return gm, nodes, frames  # no recorded call: no use is outside one
    swaps = {n: (source, users) for n in nodes if (source := identity_source(n, gm)) is not None and (users := reads_outside(n, source, frames))}
    if not swaps:
        return gm, nodes, frames

    def swap(graph: fx.Graph, env: dict[fx.Node, fx.Node]) -> None:
        for node, (source, users) in swaps.items():
            for user in users:
                env[user].replace_input_with(env[node], env[source])

    return _copied_with(gm, nodes, frames, swap)


def _copied_with(
    gm: fx.GraphModule, nodes: list[fx.Node], frames: dict[fx.Node, tuple[Frame, ...]], change: Callable[[fx.Graph, dict[fx.Node, fx.Node]], None]
) -> tuple[fx.GraphModule, list[fx.Node], dict[fx.Node, tuple[Frame, ...]]]:
    """A copy of `gm` whose graph `change` edits (given each node's copy); the body nodes and frames in it."""
    graph = fx.Graph()
    graph._codegen = gm.graph._codegen
    env: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        env[node] = graph.node_copy(node, env.__getitem__)
    change(graph, env)
    copied = module_from(gm, graph, type(gm).__name__)
    copied.meta = dict(getattr(gm, "meta", {}))
    return copied, [env[n] for n in nodes], {env[n]: f for n, f in frames.items()}


def _read_inside(gm: fx.GraphModule, nodes: list[fx.Node], frames: dict[fx.Node, tuple[Frame, ...]]) -> tuple[fx.GraphModule, list[fx.Node], dict[fx.Node, tuple[Frame, ...]]]:
    """`gm` (a copy, when it changes) where a tied tensor is read under the path inside the module call
    reading it (tied_reads.py); the body nodes and their frames in it."""
    found = inside_reads(gm, nodes, frames) if any(frames.values()) else {}
    if not found:
        return gm, nodes, frames

    def reread(graph: fx.Graph, env: dict[fx.Node, fx.Node]) -> None:
        made: dict[str, fx.Node] = {}
        for user, reads in found.items():
            for read, path in reads.items():
                if path not in made:  # beside the read it stands for, as torch.export puts its reads first
                    with graph.inserting_before(env[read]):
                        made[path] = graph.get_attr(path)
                    made[path].meta = dict(env[read].meta)
                env[user].replace_input_with(env[read], made[path])

    return _copied_with(gm, nodes, frames, reread)


def _problems(
    calls: list[Call], modules: dict[str, nn.Module], graphs: dict[str, fx.Graph], lists: dict[str, ListArgument], shared: dict[str, dict[str, str]]
) -> dict[str, InlineModule]:
    """Modules (by path) some call of which cannot be cut out, and why; all their calls stay inline.
    `graphs` gets the graph of each module's first call, kept for the class; `shared`, for each module
    that runs modules held outside it, the attribute it runs each as (shared_modules.py)."""
    problems: dict[str, InlineModule] = {}

    def refuse(frame: Frame, reason: str) -> None:
        problems.setdefault(frame.path, InlineModule(frame.path, class_name(frame.cls), reason))

    counts = Counter(c.frame.key for c in calls)
    calls_of = Counter(c.frame.path for c in calls)
    missing = set(calls_of) - set(modules)  # modules the GraphModule does not hold (stateless, traced through)
    paths_of = Counter(id(m) for m in modules.values())
    bodies: dict[str, set[tuple[str, object]]] = {}
    for call in calls:
        path, frame = call.frame.path, call.frame
        module = modules.get(path) or _creatable(path, modules)
        if module is None:
            refuse(frame, "the GraphModule holds no module at this path, and cannot hold one")
        elif not is_holder(module) or paths_of[id(module)] > 1:
            refuse(frame, "the module is not a plain holder of its own path")
        elif counts[frame.key] > 1:
            refuse(frame, "its body interleaves with code of its caller")
        elif isinstance(names := shared_names(call, module, modules), str):
            refuse(frame, names)
        elif (why := _cannot_cut(call, module, modules, missing)) is not None:
            refuse(frame, why)
        elif not is_sequential(frame.cls):
            if names:
                shared[path] = names
            graph = Builder.for_call(call, lists, names).graph
            graphs.setdefault(path, graph)
            if calls_of[path] > 1:  # one body, or several: compared as code only where there are several
                bodies.setdefault(path, set()).add((graph.python_code("self").src, blocks_of(graph)))
    for call in calls:
        if len(bodies.get(call.frame.path, ())) > 1:
            refuse(call.frame, "it is called several times with different bodies")
    return problems


def _creatable(path: str, modules: dict[str, nn.Module]) -> nn.Module | None:
    """An empty module for a stateless module the GraphModule does not hold, when its nearest held ancestor is a holder."""
    parent = path
    while parent:
        parent = parent.rpartition(".")[0]
        if parent in modules:
            return nn.Module() if is_holder(modules[parent]) or not parent else None
    return nn.Module()


def _cannot_cut(call: Call, module: nn.Module, modules: dict[str, nn.Module], missing: set[str]) -> str | None:
    """Why this call cannot become a method of its module, or None (one running modules held outside
    it: shared_names, asked before)."""
    inputs, outputs = call.interface()
    body = call.nodes()
    if len(outputs) > 1 and (why := _not_returned(call, body, inputs, outputs, modules)) is not None:
        return why
    if is_sequential(call.frame.cls) and not _is_chain(call, module, inputs, outputs, missing):
        return "its body is not its children called one after another"
    return None


def _not_returned(call: Call, body: list[fx.Node], inputs: list[fx.Node], outputs: list[fx.Node], modules: dict[str, nn.Module]) -> str | None:
    """Why a value the caller reads that the call's own later code reads too cannot be returned with its
    other results, or None: a module that may keep values on itself may have kept it (the graph cannot tell
    kept from returned, kept_values.py), and a tensor held outside the call (symbolic_trace's constants,
    folded into the root) would become a parameter of its method."""
    position = {n: i for i, n in enumerate(body)}
    escaping = next(_escaping(outputs, position), None)
    if escaping is None:
        return None
    held = next((n for n in inputs if n.op == "get_attr"), None)
    if held is not None:
        return f"its intermediate value {escaping.name!r} is used outside it, and it reads {held.target!r}, a tensor held outside it"
    keeper = _keeper(call, modules)
    kept = None if keeper is None else next((out for out in _escaping(outputs, position) if not returned_from(out, call.frame.key)), None)
    if kept is not None:
        return f"its intermediate value {kept.name!r} is used outside it, and {keeper} may keep values on itself"
    return None


def _escaping(outputs: list[fx.Node], position: dict[fx.Node, int]) -> Iterator[fx.Node]:
    """The values read after the call that its own later code reads too."""
    return (out for out in outputs if any(u in position and position[u] > position[out] for u in out.users))


def _keeper(call: Call, modules: dict[str, nn.Module]) -> str | None:
    """The module run inside the call (itself, a nested call, a called layer) whose class may keep a value on it."""
    for nested in reversed(call.calls()):
        if may_keep_values(nested.frame.cls):
            return f"{class_name(nested.frame.cls)} {nested.frame.path!r}"
    for node in call.nodes():
        module = modules.get(str(node.target)) if node.op == "call_module" else None
        if module is not None and may_keep_values(type(module)):
            return f"{type(module).__name__} {node.target!r}"
    return None


def _call_order(call: Call, module: nn.Module, missing: set[str]) -> list[str] | None:
    """The named children of a Sequential (an OrderedDict's) in the order the call runs them, each once,
    where that is the order the module holds them but for children without state: those may stand anywhere
    in the module (a GraphModule holds them where the graph first named them: levit's `proj`, act then ln,
    comes back holding ln first; it holds none it traced through, `missing` paths: timm tresnet's `s2d`,
    the first of `body`) without changing its state_dict. None otherwise, or for numbered children."""
    prefix = f"{call.frame.path}."
    called = [item.frame.path if isinstance(item, Call) else str(item.target) for item in call.items]
    order = [path[len(prefix) :] for path in called if path.startswith(prefix)]
    names = [*module._modules, *(name for name in order if name not in module._modules and f"{prefix}{name}" in missing)]
    if not names or all(name.isdigit() for name in names):
        return None
    if sorted(order) != sorted(names):
        return None
    stateful = [n for n in names if not _stateless(module._modules.get(n))]
    return order if [n for n in order if n in stateful] == stateful else None


def _stateless(module: nn.Module | None) -> bool:
    """True for a module with no parameter, buffer or tensor anywhere in it (nothing in a state_dict)."""
    return module is None or not any(map(_holds_tensors, module.modules()))


def _holds_tensors(module: nn.Module) -> bool:
    """True when the module itself holds a parameter, a buffer or a tensor attribute."""
    return bool(module._parameters or module._buffers) or any(isinstance(v, torch.Tensor) for v in vars(module).values())


def _is_chain(call: Call, module: nn.Module, inputs: list[fx.Node], outputs: list[fx.Node], missing: set[str]) -> bool:
    """True when the body is `for child in self: x = child(x)`, as nn.Sequential.forward runs it."""
    names = list(module._modules)
    if names and not all(name.isdigit() for name in names):  # named children (OrderedDict): all held, once each
        order = _call_order(call, module, missing)
        if order is None:
            return False
        children: list[str] | None = [f"{call.frame.path}.{name}" for name in order]
    else:  # numbered: stateless children the GraphModule did not keep are created, those no call reaches are nn.Identity (_mirror)
        children = _numbered_chain(call, names)
    if children is None or len(inputs) != 1 or len(outputs) != 1 or len(call.items) != len(children):
        return False
    previous: fx.Node = inputs[0]
    for item, child in zip(call.items, children):
        if isinstance(item, Call):
            item_inputs, item_outputs = item.interface()
            path, last = item.frame.path, item_outputs
        elif item.op == "call_module" and not item.kwargs and len(item.args) == 1:
            path, item_inputs, last = str(item.target), [a for a in item.args if isinstance(a, fx.Node)], [item]
        else:
            return False
        if path != child or item_inputs != [previous] or len(last) != 1:
            return False
        previous = last[0]
    return previous is outputs[0]


def _numbered_chain(call: Call, names: list[str]) -> list[str] | None:
    """The paths of the numbered children a Sequential's call runs, in the order it runs them, where that
    is their order by number and it runs every child the GraphModule holds; None otherwise. A number
    it skips stands for a child that computed nothing: the value passed on is the one it was given."""
    prefix = f"{call.frame.path}."
    called = [item.frame.path if isinstance(item, Call) else str(item.target) for item in call.items]
    numbers = [path[len(prefix) :] for path in called if path.startswith(prefix)]
    if len(numbers) != len(called) or not _in_order(numbers) or not set(names) <= set(numbers):
        return None
    return called  # each number skipped is filled (_mirror)


def _regrouped(path: str, module: nn.Module) -> bool:
    """True when the module comes back as another container, or with children filled in (_mirror)."""
    return _container_kind(module) is not type(module) or bool(path and is_holder(module) and _gaps(list(module._modules)))


def _gaps(names: list[str]) -> list[str]:
    """The numbers missing below the largest of children numbered in order (`1, 2`: `0`), else none."""
    if not _in_order(names):
        return []
    held = set(names)
    return [str(i) for i in range(int(names[-1])) if str(i) not in held]


def _in_order(names: list[str]) -> bool:
    """True for children numbered as ints are written (no `01`), ascending, leaving out at most MAX_GAPS
    numbers below the largest (children keyed by numbers far apart, a ModuleDict's `"224"` and `"384"`,
    are no list with entries left out)."""
    if not names or not all(n.isdigit() and n == str(int(n)) for n in names):
        return False
    numbers = [int(n) for n in names]
    return numbers == sorted(set(numbers)) and numbers[-1] + 1 - len(numbers) <= MAX_GAPS


MAX_GAPS = 8  # entries of a container its graph holds no call of, filled with nn.Identity in their places


def _under(target: str, path: str) -> bool:
    return target.startswith(f"{path}.")


def _unrecorded(gm: fx.GraphModule, nodes: list[fx.Node], modules: dict[str, nn.Module], inline: dict[str, InlineModule]) -> dict[str, InlineModule]:
    """Plain modules whose code the graph runs without recording a call of them (as after make_fx)."""
    owners = {str(n.target).rpartition(".")[0] for n in gm.graph.find_nodes(op="get_attr")}
    plain = [path for path, module in modules.items() if path and type(module) is nn.Module and path in owners]
    if not plain:
        return {}
    recorded = {f.path for n in nodes for f in stack_frames(n)} | set(inline)
    out = {}
    for path in plain:
        if path not in recorded:
            if not any(_under(path, other) for other in recorded):
                out[path] = InlineModule(path, "Module", "the graph recorded no call of it (no nn_module_stack)")
    return {p: m for p, m in out.items() if not any(_under(p, q) for q in out)}


def _container_kind(module: nn.Module, names: list[str] | None = None, sequential: bool = False) -> type:
    """The container class a plain holder stands for: a recorded Sequential, or numbered children make a
    ModuleList. A Sequential indexes by position: only numbered 0, 1, ... in order; a ModuleList by
    name: 0 to n-1 in any order (the order the graph first used them, which state_dict() keeps)."""
    names = list(module._modules) if names is None else names
    numbered = numbered_in_order(names)
    renumbered = numbered_in_any_order(names)
    if sequential and names and type(module) in (nn.Module, nn.Sequential):
        return nn.Sequential  # a recorded Sequential: numbered, or named as an OrderedDict Sequential is
    if (type(module) is nn.Sequential and not numbered) or (type(module) is nn.ModuleList and not renumbered):
        return nn.Module
    if type(module) is not nn.Module or _holds_tensors(module) or not names:
        return type(module)
    if numbered:
        return nn.Sequential if sequential else nn.ModuleList
    if renumbered and not sequential:
        return nn.ModuleList  # a ModuleList indexes by name: children first used last to first stay in that order
    if not any(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", n) for n in names):
        return nn.ModuleDict
    return nn.Module


def _mirror(gm: fx.GraphModule, sequential: set[str], missing: set[str], orders: dict[str, list[str]] | None = None) -> nn.Module:
    """Copies of the holders of `gm`'s tree (as their containers), sharing layers and tensors, with an
    empty module at each `missing` path (a stateless module the GraphModule did not keep) and the
    children of each path in `orders` held in that order (a Sequential's, as its call runs them)."""
    orders = orders or {}
    uses: dict[str, dict[str, int]] = {}  # filled when first needed
    memo: dict[int, nn.Module] = {}
    kept: list[nn.Module] = []
    created: dict[str, list[str]] = {}
    leaves = [m.training for m in gm.modules() if not m._modules]
    leaf_training = sum(leaves) * 2 > len(leaves) if leaves else None  # the mode the graph's layers are in
    for path in sorted(missing):
        parts = path.split(".")
        for i in range(1, len(parts) + 1):
            parent, name = ".".join(parts[: i - 1]), parts[i - 1]
            created.setdefault(parent, [])
            if name not in created[parent]:
                created[parent].append(name)

    def copy(module: nn.Module, path: str) -> nn.Module:
        if id(module) in memo:
            return memo[id(module)]
        if path and not is_holder(module):
            return module
        children: dict[str, nn.Module | None] = dict(module._modules)
        for name in created.get(path, []):
            if name not in children:
                children[name] = made = nn.Module()
                kept.append(made)  # alive while copying: `memo` goes by id, and a freed module's id is reused
        if any(name not in module._modules and not name.isdigit() for name in created.get(path, [])):
            if not uses:
                uses.update(first_uses(gm.graph, frames=True))
            children = _by_first_use(children, set(module._modules), uses.get(path, {}))
        held = list(module._modules)
        if created.get(path) and all(n.isdigit() for n in children) and held == sorted(held, key=int):  # a created child goes to its place
            children = dict(sorted(children.items(), key=lambda item: int(item[0])))
        if path and (gaps := _gaps(list(children))):  # stateless children nothing reached (an unused or
            for name in gaps:  # a Sequential's computing-nothing nn.Identity): indices stay the source's
                children[name] = made = nn.Identity()
                made.training = module.training if leaf_training is None else leaf_training
                kept.append(made)
            children = dict(sorted(children.items(), key=lambda item: int(item[0])))
        if path in orders:
            children = {name: children[name] for name in orders[path]}
        kind = _container_kind(module, list(children), path in sequential) if path else nn.Module
        new: nn.Module = kind.__new__(kind)  # type: ignore[call-overload]
        nn.Module.__init__(new)
        memo[id(module)] = new
        new.training = module.training
        new._parameters.update(module._parameters)
        new._buffers.update(module._buffers)
        new._non_persistent_buffers_set.update(module._non_persistent_buffers_set)
        for key, value in held_values(module).items():
            new.__dict__.setdefault(key, value)
        for name, child in children.items():
            if child is not None and name in created.get(path, []) and name not in module._modules:
                # made again: a holder takes its parent's mode, a layer that of the graph's layers (symbolic_trace
                # rebuilds the holders of an eval model in training mode; the layer itself ran in eval)
                holder = bool(created.get(joined(path, name))) or leaf_training is None
                child.training = module.training if holder else bool(leaf_training)
            new._modules[name] = None if child is None else copy(child, joined(path, name))
        return new

    return copy(gm, "")


def _by_first_use(children: dict[str, nn.Module | None], held: set[str], uses: dict[str, int]) -> dict[str, nn.Module | None]:
    """`children` with each named one the GraphModule does not hold before the first sibling the graph uses
    after it (`uses`: layers.first_uses of their holder), the rule layers._place puts a restored layer or a
    shared identity by: call order, not name order, so instances whose stateless children some build as an
    identity list them alike."""
    out = {name: child for name, child in children.items() if name in held or name.isdigit()}
    for name, child in children.items():
        if name not in out:
            items = list(out.items())
            later = first_used_after(out, uses, name)
            items.insert(len(items) if later is None else later, (name, child))
            out = dict(items)
    return out


def _root_module(
    gm: fx.GraphModule, root: nn.Module, items: list[fx.Node | Call], lists: dict[str, ListArgument], inputs: tuple[Packings, Orders, Leaves], graphs: dict[str, fx.Graph]
) -> fx.GraphModule:
    """The root's graph with its calls cut out, running in the mirrored module tree `root`; `inputs`: how
    the methods it calls take their inputs (packed_inputs, input_order) and the modules it calls as leaves."""
    graph = Builder.for_root(gm, items, lists).graph
    repack_calls(graph, "", inputs[0], graphs, inputs[2])
    reorder_calls(graph, "", inputs[1])
    return module_from(root, graph, type(gm).__name__)


def _sharing_graph(gm: fx.GraphModule, root: nn.Module) -> fx.GraphModule:
    """The mirrored module tree `root` running `gm`'s own graph, where nothing was cut out of it: a copy
    would be the same graph, made node by node (0.5 s for 20,000 nodes). Nothing after the split
    changes a graph; its owner stays what it was."""
    owner = gm.graph.owning_module
    top = module_from(root, gm.graph, type(gm).__name__)
    gm.graph.owning_module = owner
    return top


def _share(shared: dict[str, dict[str, str]], holders: dict[str, nn.Module]) -> None:
    """Give each module that runs modules held outside it those modules, as unregistered attributes (shared_modules.py)."""
    for path, names in shared.items():
        module = holders[path]
        for outside, name in names.items():
            object.__setattr__(module, name, holders[outside])
        if isinstance(module, fx.GraphModule):
            module.meta[SHARED_MODULES] = tuple((name, outside) for outside, name in names.items())


def sequential_base(cls: type | str, module: nn.Module) -> str | None:
    """"Sequential" for a Sequential subclass with a forward of its own, its children numbered in order
    ("ModuleList" for a ModuleList subclass): its class subclasses that container too, so its forward
    indexes them (`self[0](x)`); else None. For a module cut out of the graph, and for a leaf traced alone."""
    found = resolve_class(cls)
    if found is None or not (_numbered(module) or not module._modules):
        return None
    return next((base.__name__ for base in (nn.Sequential, nn.ModuleList) if issubclass(found, base)), None)


def _numbered(module: nn.Module) -> bool:
    """The module's children are numbered in order, 0 first (torch.export's `_guards_fn` aside: it is
    written as checks, never as a child)."""
    return numbered_in_order(name for name, child in module._modules.items() if not is_guards_module(child))


_SEQUENTIAL_NAMES = frozenset(dir(nn.Sequential)) - frozenset(dir(nn.Module))  # `append`, `pop`, ...


def _holds_sequential_names(gm: fx.GraphModule) -> bool:
    """True when the module holds a tensor or attribute under a name nn.Sequential defines (`append`): as
    an nn.Sequential it could not register it."""
    held = {*vars(gm), *gm._parameters, *gm._buffers, *(str(n.target).split(".")[0] for n in gm.graph.find_nodes(op="get_attr"))}
    return bool(held & _SEQUENTIAL_NAMES)


def _guards_last(module: nn.Module) -> None:
    """torch.export's `_guards_fn` moved after the other children, which then index by their places."""
    for name in [name for name, child in module._modules.items() if is_guards_module(child)]:
        module._modules[name] = module._modules.pop(name)


def _dict_base(cls: type | str, module: nn.Module) -> bool:
    """A ModuleDict subclass with a forward of its own that holds only children: its class subclasses
    nn.ModuleDict too, so its forward reads them by key (`self["layer1"](x)`)."""
    found = resolve_class(cls)
    return found is not None and issubclass(found, nn.ModuleDict) and not module._parameters and not module._buffers


def _assemble(
    gm: fx.GraphModule,
    modules: dict[str, nn.Module],
    items: list[fx.Node | Call],
    calls: list[Call],
    bodies: tuple[dict[str, fx.Graph], dict[str, dict[str, str]]],
    kinds: dict[str, type | str],
    lists: dict[str, ListArgument],
    inputs: tuple[Packings, Orders, Leaves],
    inline: tuple[InlineModule, ...],
) -> Structure:
    graphs, shared = bodies
    sequential = {path for path, cls in kinds.items() if is_sequential(cls)}
    cut = {c.frame.path for c in calls}
    missing = cut - set(modules)
    orders = {c.frame.path: order for c in calls if c.frame.path in sequential and c.frame.path in modules and (order := _call_order(c, modules[c.frame.path], missing))}
    root = _mirror(gm, sequential, missing, orders)
    holders = dict(root.named_modules(remove_duplicate=False))
    built: set[str] = set()
    for call in sorted(calls, key=lambda c: -c.frame.path.count(".")):
        path = call.frame.path
        if path in built or path in sequential:
            continue
        built.add(path)
        for outside, name in shared.get(path, {}).items():  # read as the holder's attribute while the module is made
            object.__setattr__(holders[path], name, holders[outside])
        module = module_from(holders[path], graphs[path], class_name(call.frame.cls))
        module.meta[SOURCE_CLASS] = call.frame.cls
        if (indexed := sequential_base(call.frame.cls, module)) is not None:
            module.meta[SEQUENTIAL_BASE] = indexed
        elif _dict_base(call.frame.cls, module):
            module.meta[DICT_BASE] = True
        parent, _, name = path.rpartition(".")
        holders[parent]._modules[name] = module
        holders[path] = module
    _share(shared, holders)
    top = _root_module(gm, root, items, lists, inputs, graphs) if calls or lists else _sharing_graph(gm, root)
    top.meta = dict(getattr(gm, "meta", {}))
    if _numbered(top) and not _holds_sequential_names(top):  # a traced nn.Sequential: its class subclasses nn.Sequential, so its forward indexes its children (`self[0](input)`)
        _guards_last(top)
        top.meta[SEQUENTIAL_BASE] = "Sequential"
    containers = {p for p in sequential & cut if type(holders.get(p)) is nn.Sequential and not is_library_sequential(kinds[p])}
    sources = tuple((path, kinds[path]) for path in sorted((built & cut) | containers))
    return Structure(top, inline, sources)

