"""inferred stacks: the module calls of a graph that recorded none, read from the modules it uses.

A tracer of its own (torchvision's and timm's `create_feature_extractor`, a GraphModule built by
hand) leaves `nn_module_stack` empty, and the modules between the root and the layers it calls are
plain holders (`blocks.0.0`: an `nn.Module` fx made to hold `conv_dw`). The graph still says where
each call ran: a layer is called at its path, a tensor read at its owner's ("anchors"). A holder
whose anchors are one run of the graph, with no anchor of another module among them and its first
layer call not made again (a second call), ran as one call. Code just after the run is its tail
where it reads what the run made and otherwise only what the run reads, up to a node combining two
of the run's values or inputs (an SE's `sigmoid` and `x * gate`, a block's `out + x`); code just
before it is its head where the run alone reads it and it reads no value another run made (an SE's
`x.mean(...)`). With the source model (`classes_from`), code around a run that the forward of the
class held there starts or ends with, its statements matched in order (recovered_statements.py),
each one it always runs, is the run's whatever it reads (a LayerNorm2d's `permute`s, an EdgeNeXt
block's `x.chunk(...)` of the block before's result). Anything else there is the caller's. Each
holder that ran as a call gets a recorded call, named after where it is held (`blocks.0.0`:
`Block`), and the split (split.py) cuts it out as it cuts out recorded ones; a numbered holder
whose children run one after another, each fed what the one before made, is a Sequential (but
where the source model holds a ModuleList, which its source loops over); a holder whose run is one
call stays a holder (a class would only pass it on), but where it is called on a value and the source
model's class there is one (a `Downsampling` whose `nn.Identity()` norm torch.export does not record).
Only the attribution is inferred: whatever is
cut out computes what the flat graph does (split.py refuses what it cannot cut). The input
GraphModule is not changed.
"""

from __future__ import annotations

import operator
import os
import re
from dataclasses import dataclass

from torch import fx, nn

from .annotations import root_code_traced
from .calls import INFERRED, SEQUENTIAL, Frame, body_nodes, dynamo_graph, is_torch_class, name_after, stack_frames
from .module_paths import depth, parent, prefixes, relative, within
from .recovered_statements import Key, keys_in, matched_in_order
from .subgraphs import copy_graph, with_graph


@dataclass(frozen=True)
class Run:
    """A holder's run in the graph: the positions of its first and last anchor."""

    path: str
    start: int
    end: int


def inferred_stacks(gm: fx.GraphModule, classes_from: nn.Module | None = None) -> fx.GraphModule:
    """`gm` (a copy) with an inferred `nn_module_stack` on every node, where no node recorded one and
    holders ran as calls, or where the graph recorded the calls of the layers only (_layer_calls); `gm`
    itself otherwise. `classes_from`: the model `gm` was captured from, whose classes name the holders."""
    modules = dict(gm.named_modules(remove_duplicate=False))
    owners, calls = owner_paths(body_nodes(gm), modules, classes_from)
    if not calls:
        return gm
    classes = {path: _class_of(path, modules[path], classes_from) for path in calls}
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    for node, path in owners.items():
        stack: dict[str, tuple[str, object]] = {p: (p, classes[p]) for p in prefixes(path) if p in calls}
        if node.op == "call_module" and str(node.target) in modules:
            stack[str(node.target)] = (str(node.target), type(modules[str(node.target)]))  # as symbolic_trace records a leaf
        recorded = dict(node.meta.get("nn_module_stack") or {})
        around = {key: entry for key, entry in recorded.items() if entry[0] == ""}  # the root's call, first
        copies[node].meta["nn_module_stack"] = {**around, **stack, **{k: e for k, e in recorded.items() if k not in around}}
    return with_graph(gm, graph)


def _layer_calls(nodes: list[fx.Node], modules: dict[str, nn.Module]) -> tuple[dict[fx.Node, Frame], set[str]]:
    """For a graph torch.export made of a GraphModule that a tracer of its own made (create_feature_extractor),
    which records the calls of the layers that GraphModule calls but none of the plain holders between:
    each node's outermost recorded call below the root (a layer it ran in), and the holders that may have
    run as calls: the plain holders on the paths of the layers and of the tensors the graph reads that no
    node records, none under a recorded call (`blocks.0.0` holding `conv_dw` and `bn1`, `blocks.0`,
    `blocks`; a traced-through LayerNorm2d holding its `weight`). Such a graph's stack traces hold no
    frame of its root's code (fx wrote it): each starts in the layer the node ran in. Where one frame is the
    root's, the graph recorded every call its source made, and a holder no node records ran none (the root
    calling `self.head["fc"]` itself, a ModuleList it loops over): no holder then. None for a graph without
    stack traces (symbolic_trace records none), nor one from dynamo, whose paths are read apart."""
    if dynamo_graph():
        return {}, set()
    layers = {n: frames[0] for n in nodes if (frames := [f for f in stack_frames(n) if f.path])}
    if root_code_traced(nodes) is not False:
        return layers, set()
    recorded = {f.path for n in nodes for f in stack_frames(n)}
    holding = {parent(f.path) for f in layers.values()} | {parent(str(a.target)) for n in nodes for a in n.all_input_nodes if a.op == "get_attr"}
    unrecorded = {
        path
        for held in holding
        for path in prefixes(held)
        if type(modules.get(path)) is nn.Module and not any(p in recorded for p in prefixes(path))
    }
    return layers, unrecorded


def owner_paths(nodes: list[fx.Node], modules: dict[str, nn.Module], classes_from: nn.Module | None = None) -> tuple[dict[fx.Node, str], set[str]]:
    """For each node, the deepest holder it ran inside that ran as a call ("" for the root), and the holders
    that ran as calls. In a graph that recorded calls, only holders no node records are looked at (_layer_calls).
    `classes_from`: the source model, whose class at a holder's path may say where its code starts and ends."""
    layers: dict[fx.Node, Frame] = {}
    holders: set[str] | None = None  # every plain holder, in a graph that recorded no call
    if any(n.meta.get("nn_module_stack") for n in nodes):
        layers, holders = _layer_calls(nodes, modules)
        if not holders:
            return {}, set()
    anchors = {n: _anchor_path(n, modules, layers.get(n)) for n in nodes}
    calls = _layer_call_paths(nodes, layers)
    runs = _runs(nodes, anchors, modules, calls, holders)
    if not runs:
        return {}, set()
    sources = {
        path: (found, frozenset(modules[path]._modules))
        for path in runs
        if classes_from is not None and (found := _source_class(path, modules[path], classes_from)) is not None
    }
    owned = _Owners(nodes, anchors, runs, {n: path for n, (_, path) in calls.items()}, sources)
    owned.attach_ends()
    for path in sorted(runs, key=depth, reverse=True):  # deepest first: a holder left out leaves its caller no chain
        numbered = _numbered(list(modules[path]._modules))
        if numbered and (not owned.chain(path) or _listed(path, classes_from)):
            owned.drop(path)
        elif not numbered and len({calls[n][0] if n in calls else n for n in owned.members[path]}) == 1 and not owned.sourced_call(path):
            owned.drop(path)
    return owned.owners, set(owned.runs)


def _anchor_path(node: fx.Node, modules: dict[str, nn.Module], layer: Frame | None = None) -> str | None:
    """The deepest module the node must have run in: the holder of the layer it calls (or whose recorded call
    it ran in, `layer`) and of the tensors it reads (their longest common path; the layer's own aside); None
    for a node that calls and reads nothing of a module."""
    paths = [parent(str(a.target)) for a in node.all_input_nodes if a.op == "get_attr" and (layer is None or not within(str(a.target), layer.path))]
    if node.op == "call_module" and str(node.target) in modules:
        paths.append(parent(str(node.target)))
    if layer is not None:
        paths.append(parent(layer.path))
    if not paths:
        return None
    return ".".join(os.path.commonprefix([path.split(".") for path in paths]))


def _layer_call_paths(nodes: list[fx.Node], layers: dict[fx.Node, Frame]) -> dict[fx.Node, tuple[object, str]]:
    """Each node that calls a layer or ran in a recorded layer call: which call (the node, or the recorded
    call's key) and the layer's path."""
    out: dict[fx.Node, tuple[object, str]] = {}
    for node in nodes:
        if node in layers:
            out[node] = (layers[node].key, layers[node].path)
        elif node.op == "call_module":
            out[node] = (node, str(node.target))
    return out


def _runs(
    nodes: list[fx.Node], anchors: dict[fx.Node, str | None], modules: dict[str, nn.Module], calls: dict[fx.Node, tuple[object, str]], holders: set[str] | None
) -> dict[str, Run]:
    """The holders that ran as one call: no anchor of another module between their first and last anchor,
    and their first layer call not made again among them."""
    spans: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for path in prefixes(anchors[node] or ""):
            if type(modules.get(path)) is nn.Module and (holders is None or path in holders):
                spans.setdefault(path, [i, i])[1] = i
    out = {}
    for path, (start, end) in spans.items():
        inside = [n for n in nodes[start : end + 1] if anchors[n] is not None]
        if all(within(anchors[n] or "", path) for n in inside) and not _called_again(inside, calls):
            out[path] = Run(path, start, end)
    return out


def _called_again(anchors: list[fx.Node], calls: dict[fx.Node, tuple[object, str]]) -> bool:
    """True when the first layer a run calls is called again in it: the holder ran twice, its caller's code
    between (a holder running one layer twice in a row, `x = self.act(self.act(x))`, reads as two calls too;
    the nodes of one recorded call are one call)."""
    made = [calls[n] for n in anchors if n in calls]
    paths = [path for k, (call, path) in enumerate(made) if k == 0 or made[k - 1][0] != call]
    return bool(paths) and paths[0] in paths[1:]


class _Owners:
    """Which run each node is in (`owners`: its deepest), and each run's nodes (`members`: its own and its
    nested runs'), kept in step as nodes move."""

    def __init__(
        self, nodes: list[fx.Node], anchors: dict[fx.Node, str | None], runs: dict[str, Run], layers: dict[fx.Node, str],
        sources: dict[str, tuple[type, frozenset[str]]] | None = None,
    ) -> None:
        self.runs = runs
        self.layers = layers  # node -> the path of the layer it calls or ran in
        self.sources = sources or {}  # run path -> the source model's class there, and the holder's children
        self.sourced: set[str] = set()  # runs whose head their source class's forward starts with
        self.nodes = nodes
        self.anchored = {n for n in nodes if anchors[n] is not None}
        self.position = {n: i for i, n in enumerate(nodes)}
        self.owners: dict[fx.Node, str] = {}
        self.members: dict[str, dict[fx.Node, None]] = {path: {} for path in runs}
        ordered = sorted(runs.values(), key=lambda r: (r.start, depth(r.path)))
        open_runs: list[Run] = []
        k = 0
        for i, node in enumerate(nodes):
            while k < len(ordered) and ordered[k].start == i:
                open_runs.append(ordered[k])
                k += 1
            while open_runs and open_runs[-1].end < i:
                open_runs.pop()
            anchor = anchors[node]
            if anchor is not None:
                owner = max((p for p in prefixes(anchor) if p in runs), key=depth, default="")
            else:  # a free node: the innermost run around it (runs nest: no anchor of another module inside one)
                owner = open_runs[-1].path if open_runs and open_runs[-1].start < i < open_runs[-1].end else ""
            self._put(node, owner)

    def _put(self, node: fx.Node, owner: str) -> None:
        self.owners[node] = owner
        for path in prefixes(owner):
            if path in self.members:
                self.members[path][node] = None

    def move(self, node: fx.Node, owner: str) -> None:
        """`node` runs in `owner` now, and in the runs around it."""
        for path in prefixes(self.owners[node]):
            if path in self.members:
                self.members[path].pop(node, None)
        self._put(node, owner)

    def drop(self, path: str) -> None:
        """The run at `path` was no call: its nodes are its nearest run-holding caller's."""
        del self.runs[path]
        caller = max((p for p in prefixes(parent(path)) if p in self.runs), key=depth, default="")
        for node in list(self.members.pop(path)):
            if self.owners[node] == path:
                self.owners[node] = caller

    def attach_ends(self) -> None:
        """The free nodes between two anchors: first the tails of the runs that end at the first, then the
        heads of those that start at the second, innermost first; the rest stay their caller's."""
        ending: dict[int, list[str]] = {}
        starting: dict[int, list[str]] = {}
        for run in self.runs.values():
            ending.setdefault(run.end, []).append(run.path)
            starting.setdefault(run.start, []).append(run.path)
        nodes = self.nodes
        places = [i for i, n in enumerate(nodes) if n in self.anchored]
        gaps = [(before, after, nodes[(0 if before is None else before + 1) : (len(nodes) if after is None else after)])
                for before, after in zip([None, *places], [*places, None])]  # fmt: skip
        left: list[list[fx.Node]] = []
        for before, _, free in gaps:
            for path in sorted(ending.get(before, []), key=depth, reverse=True) if before is not None else []:
                tail = self._tail(free, path)
                for node in tail:
                    self.move(node, path)
                free = free[len(tail) :]
            left.append(free)
        proposed: list[list[tuple[str, list[fx.Node]]]] = []  # per gap, innermost run first
        for (_, after, _), free in zip(gaps, left):
            heads: list[tuple[str, list[fx.Node]]] = []
            taken: set[fx.Node] = set()
            for path in sorted(starting.get(after, []), key=depth, reverse=True) if after is not None else []:
                head = self._head(free, path, taken)
                heads.append((path, head))
                taken.update(head)
                free = free[: len(free) - len(head)]
            proposed.append(heads)
        headed = {path for heads in proposed for path, head in heads if head}
        uneven = _uneven_siblings(headed, set(self.runs)) - self.sourced  # a head its source starts with is its own
        for heads in proposed:
            for k, (path, head) in enumerate(heads):
                if any(p in uneven for p, h in heads[: k + 1] if h):
                    break  # a head an inner run was refused: the outer ones assumed it
                for node in head:
                    self.move(node, path)

    def _tail(self, free: list[fx.Node], path: str) -> list[fx.Node]:
        """The first of `free` that are the run's tail: each reads what the run made and else only what the
        run (its head too) reads, the run's result is one value read by the tail alone (_one_result), and the
        last reads two of the run's values or inputs (code that combines the run's result with what the run
        had: `x * gate`, `out + x`; a graph input counts). A tail reading the result alone (`* 2`, the `0 +`
        that starts a `sum`) is its caller's code as much as its own: left to the caller."""
        members = set(self.members[path])
        inputs = self._inputs(path, members) | self._head_inputs(path, members)
        taken: list[fx.Node] = []
        ends: list[int] = []  # the lengths of `taken` that end combining two of the run's values
        for node in free:
            read = [a for a in node.all_input_nodes if not _heldwithin(a, path)]
            if not _readswithin(node, path) or not any(a in members for a in read) or any(a not in members and a not in inputs for a in read):
                break
            members.add(node)
            taken.append(node)
            if len({a for a in read if a in members or a in inputs}) >= 2:
                ends.append(len(taken))
        tails = [k for k in ends if self._one_result(path, taken[:k])]
        longest = max(tails, default=0)
        for k in range(len(taken), longest, -1):  # longer where the source class's forward ends with that code
            if self._one_result(path, taken[:k]) and self._in_source(path, [], taken[:k], set(taken[longest:k])):
                return taken[:k]
        return taken[:longest]

    def _one_result(self, path: str, tail: list[fx.Node]) -> bool:
        """True when no value of the run, nor of the tail before a node, is read outside them but by that node
        (the run's result is one value then), or by the tail's last node where the run's own code reads that
        value too and the tail's first node does not (a block's first residual, read by its second residual
        after a layer scale's `* gamma`; not the run's result read again by a caller's `y * sigmoid(y)`)."""
        members = set(self.members[path])
        last = tail[-1] if tail else None
        escaping = {m for m in members if any(u not in members for u in m.users)}
        # a value the run's own code reads and the tail's first node does not may wait for its last (a first residual)
        waiting = {m for m in escaping if tail and m not in tail[0].all_input_nodes and any(u in members for u in m.users)}
        for node in tail:
            if any(u not in members and u is not node and (u is not last or m not in waiting) for m in escaping for u in m.users):
                return False
            members.add(node)
            escaping = {m for m in (*escaping, node) if any(u not in members for u in m.users)}
        return True

    def _head_inputs(self, path: str, members: set[fx.Node]) -> set[fx.Node]:
        """What the free nodes just before the run read, where the run alone reads them (its head, perhaps):
        an SE's `x * gate` reads the `x` its head's `x.mean(...)` reads."""
        start = self.runs[path].start
        head: set[fx.Node] = set()
        k = start - 1
        while k >= 0 and (node := self.nodes[k]) not in self.anchored and node.users and all(u in members or u in head for u in node.users):
            if not _readswithin(node, path):
                break
            head.add(node)
            k -= 1
        return {a for n in head for a in n.all_input_nodes if a not in head and not _heldwithin(a, path)}

    def _head(self, free: list[fx.Node], path: str, inner: set[fx.Node]) -> list[fx.Node]:
        """The last of `free` that are the run's head: each is read by the run (and the heads of runs inside
        it, `inner`) alone and reads no value another run made (`x.mean(...)` of an SE, the `permute` before
        a LayerNorm2d's `layer_norm`; not the caller's `* 2` between two blocks). Where the source class's
        forward starts with such code, it is the run's whatever it reads (a LayerNorm2d's `permute` of the
        stage before's result, an EdgeNeXt block's `x.chunk(...)`): `sourced`."""
        members = set(self.members[path]) | inner
        candidates: list[fx.Node] = []  # read by the run alone
        for node in reversed(free):
            if not _readswithin(node, path) or not node.users or any(u not in members for u in node.users):
                break
            members.add(node)
            candidates.append(node)
        candidates.reverse()
        plain = 0
        for node in reversed(candidates):
            if any(not within(path, self.owners.get(a, "")) for a in node.all_input_nodes if not _heldwithin(a, path)):
                break
            plain += 1
        for k in range(len(candidates), plain, -1):
            if self._in_source(path, candidates[-k:], [], set(candidates[-k : len(candidates) - plain])):
                self.sourced.add(path)
                return candidates[-k:]
        return candidates[len(candidates) - plain :]

    def sourced_call(self, path: str) -> bool:
        """True for a run of one call that is a class of the source model's called on a value (`Downsampling`,
        whose `nn.Identity()` norm torch.export does not record): a class as in the source, though it only
        passes the value on; not a run reading no value (a layer scale's `self.scale.view(...)`, its `x *`
        left outside)."""
        members = set(self.members[path])
        return path in self.sources and bool(self._inputs(path, members))

    def _in_source(self, path: str, head: list[fx.Node], tail: list[fx.Node], taken: set[fx.Node]) -> bool:
        """True when the forward of the source class at `path` does, in order, what `head` does, what the run
        does (the call of a layer or module it runs inside it one step) and what `tail` does, the run's first
        and last step matched after and before them; those of the head and tail it alone would make the run's
        (`taken`) each a statement it always runs (no `if self.scale: x = x * 2` taken for the caller's)."""
        if path not in self.sources:
            return False
        steps = self._steps(path)
        keys = [keys_in(n, path) for n in head] + steps + [keys_in(n, path) for n in tail]
        units = matched_in_order(*self.sources[path], keys)
        if units is None or units[len(head)] is None or units[len(head) + len(steps) - 1] is None:
            return False
        ends = [*zip(head, units), *zip(tail, units[len(keys) - len(tail) :])]
        # an item of a value the head made may be matched where the source reads it (torch.export takes each
        # item out where it splits a value: `spx[-1]` next to `x.chunk(...)`)
        return all(
            unit is not None and (node not in taken or (not unit.conditional and unit.loop is None) or _item_of(node, head)) for node, unit in ends
        )

    def _steps(self, path: str) -> list[tuple[Key, ...]]:
        """What the run's nodes do, in order, as its forward's statements spell it: the nodes run inside one
        child one call of it or of an item of it (a container it loops over), however many nodes they are."""
        steps: list[tuple[Key, ...]] = []
        callee = None
        for node in sorted(self.members[path], key=self.position.__getitem__):
            inner = self.layers.get(node) or self.owners[node]
            child = relative(inner, path).split(".")[0] if inner != path else None
            if child is None:
                steps.append(keys_in(node, path))
            elif child != callee:  # the child called, or an item of it (a container it loops over)
                steps.append((("module", child), ("item", child)))
            callee = child
        return steps

    def _inputs(self, path: str, members: set[fx.Node]) -> set[fx.Node]:
        """The values the run reads from outside it (graph inputs too), but the tensors of its own modules."""
        return {a for m in members for a in m.all_input_nodes if a not in members and not _heldwithin(a, path)}

    def chain(self, path: str) -> bool:
        """True when the nodes of the run at `path` are its numbered children's, called in order, each fed the
        value the one before it made (the first the run's one input) and read by the next alone."""
        members = sorted(self.members[path], key=self.position.__getitem__)
        groups: dict[str, list[fx.Node]] = {}
        for node in members:
            owner = self.layers.get(node) or self.owners[node]
            if owner == path:
                return False  # code of its own, between its children
            groups.setdefault(owner[len(path) + 1 :].split(".")[0], []).append(node)
        order = list(groups)
        if order != sorted(order, key=int):
            return False
        if [n for name in order for n in groups[name]] != members:
            return False  # children interleave
        previous: fx.Node | None = None
        for name in order:
            inside = set(groups[name])
            inputs = {a for n in inside for a in n.all_input_nodes if a not in inside and not _heldwithin(a, path)}
            if len(inputs) != 1 or (previous is not None and (inputs != {previous} or any(u not in inside for u in previous.users))):
                return False
            results = [n for n in groups[name] if any(u not in inside for u in n.users)]
            if len(results) != 1:
                return False
            previous = results[0]
        return True


def _item_of(node: fx.Node, values: list[fx.Node]) -> bool:
    """True for an item of one of `values` (`spx[1]` of `spx = x.chunk(2)`)."""
    return node.op == "call_function" and node.target is operator.getitem and node.args[0] in values


def _listed(path: str, model: nn.Module | None) -> bool:
    """True where the source model holds a ModuleList of no forward of its own at `path`: its source loops
    over it, never calls it."""
    held = _held_at(path, model) if model is not None else None
    return isinstance(held, nn.ModuleList) and type(held).forward is nn.ModuleList.forward


def _held_at(path: str, model: nn.Module) -> nn.Module | None:
    """The module `model` holds at `path`, None where it holds none."""
    try:
        return model.get_submodule(path)
    except Exception:  # noqa: BLE001 - the model's own __getattr__ may raise anything: then it holds none
        return None


def _uneven_siblings(headed: set[str], runs: set[str]) -> set[str]:
    """The runs with a head whose numbered siblings (`mixers.0`, `mixers.1`) do not all have one: the code
    before the first of a list of blocks is their caller's (a `transpose` before a chain of mixers)."""
    groups: dict[str, list[str]] = {}
    for path in runs:
        holder, _, name = path.rpartition(".")
        if _numbered([name]):
            groups.setdefault(holder, []).append(path)
    return {p for paths in groups.values() if len(paths) > 1 and not set(paths) <= headed for p in paths if p in headed}


def _heldwithin(value: fx.Node, path: str) -> bool:
    """True for a read of a tensor a module at or under `path` holds."""
    return value.op == "get_attr" and within(parent(str(value.target)), path)


def _readswithin(node: fx.Node, path: str) -> bool:
    """True when every tensor the node reads is held at or under `path`: a run's code reads no tensor of its caller's."""
    return all(_heldwithin(a, path) for a in node.all_input_nodes if a.op == "get_attr")


def _class_of(path: str, module: nn.Module, classes_from: nn.Module | None) -> str:
    """The dotted name recorded for an inferred call: a Sequential for numbered children, else the class the
    source model holds there (`<inferred>.timm.models._efficientnet_blocks.InvertedResidual`), else a class
    named after where the holder is held (`blocks.0.0`: `Block`, `stem`: `Stem`)."""
    if _numbered(list(module._modules)):
        return SEQUENTIAL
    source = _source_class(path, module, classes_from) if classes_from is not None else None
    named = name_after(source) if source is not None else None
    return named or f"{INFERRED}.{class_named(path)}"


def _source_class(path: str, holder: nn.Module, model: nn.Module) -> type | None:
    """The class of the module `model` holds at `path`, where it is a model's own (not torch's) and holds
    every child and tensor the holder does (fx keeps those the graph uses, and registers a plain tensor
    attribute as a buffer); else None."""
    source = _held_at(path, model)
    if source is None:
        return None
    held = {*holder._modules, *holder._parameters, *holder._buffers}
    if is_torch_class(type(source)) or not held <= {*source._modules, *source._parameters, *source._buffers, *vars(source)}:
        return None
    return type(source)


def class_named(path: str) -> str:
    """`Block` for `blocks.0.0`, `PatchEmbed` for `patch_embeds.1`, `Stem` for `stem`, `Layer` for `layer1.0`
    and `layer2.0`, `Block` where no name fits."""
    parts = path.split(".")
    named = [k for k, part in enumerate(parts) if not part.isdecimal()]
    if not named:
        return "Block"
    k = named[-1]
    name = parts[k]
    if k < len(parts) - 1:  # an entry of a container: one of its items
        name = _singular(name)
    name = re.sub(r"(?<=[A-Za-z_]{3})[0-9]+$", "", name)  # `layer1`, `layer2`: one class where their code is one
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    return camel if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", camel) else "Block"


def _singular(name: str) -> str:
    """`block` for `blocks`, `entry` for `entries`, `box` for `boxes`; `bus`, `status`, `series` as they are."""
    if name.endswith(("ss", "us", "is", "series", "species")):
        return name
    if name.endswith("ies"):
        return name[:-3] + "y"
    if re.search(r"(s|x|z|ch|sh)es$", name):
        return name[:-2]
    return name[:-1] if name.endswith("s") else name


def _numbered(names: list[str]) -> bool:
    """Children named 0, 1, ... (in any order), as a Sequential's or a ModuleList's are."""
    return bool(names) and all(n.isascii() and n.isdecimal() for n in names)
