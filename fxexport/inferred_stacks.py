"""inferred stacks: the module calls of a graph that recorded none, read from the modules it uses.

A tracer of its own (torchvision's and timm's `create_feature_extractor`, a GraphModule built by
hand) leaves `nn_module_stack` empty, and the modules between the root and the layers it calls are
plain holders (`blocks.0.0`: an `nn.Module` fx made to hold `conv_dw`). The graph still says where
each call ran: a layer is called at its path, a tensor read at its owner's. A holder whose layer
calls and tensor reads are one run of the graph, with nothing of another module among them, ran as
one call; the code just before or after that run is its head or tail where the run alone reads or
feeds it (SqueezeExcite's `x.mean(...)` and `x * gate`, a block's residual `+`). Each such holder
gets a recorded call, named after where it is held (`blocks.0.0`: `Block`), and the split
(split.py) cuts it out as it cuts out recorded ones; a numbered holder whose children run one after
another is a Sequential. Only the attribution is inferred: whatever is cut out computes what the
flat graph does (split.py refuses what it cannot cut). The input GraphModule is not changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch import fx, nn

from .calls import INFERRED, body_nodes
from .subgraphs import copy_graph, with_graph

SEQUENTIAL = "torch.nn.modules.container.Sequential"


@dataclass(frozen=True)
class Run:
    """A holder's run in the graph: the positions of its first and last layer call or tensor read."""

    path: str
    start: int
    end: int


def inferred_stacks(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` (a copy) with an inferred `nn_module_stack` on every node, where no node recorded one and
    holders ran as calls; `gm` itself otherwise."""
    if any(n.meta.get("nn_module_stack") for n in gm.graph.nodes):
        return gm
    modules = dict(gm.named_modules(remove_duplicate=False))
    nodes = body_nodes(gm)
    owners, framed = owner_paths(nodes, modules)
    if not framed:
        return gm
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    for node, path in owners.items():
        copies[node].meta["nn_module_stack"] = _stack(node, path, framed, modules)
    return with_graph(gm, graph)


def owner_paths(nodes: list[fx.Node], modules: dict[str, nn.Module]) -> tuple[dict[fx.Node, str], set[str]]:
    """For each node, the deepest holder it ran inside that ran as a call ("" for the root), and the holders
    that ran as calls."""
    floors = {n: _floor(n, modules) for n in nodes}
    runs = _runs(nodes, floors, modules)
    if not runs:
        return {}, set()
    owned = _Owners(nodes, floors, runs)
    owned.attach_ends(nodes, floors)
    for path in sorted(runs, key=_depth, reverse=True):  # deepest first: a holder left out leaves its caller no chain
        names = list(modules[path]._modules)
        numbered = bool(names) and all(name.isdigit() for name in names)
        if (numbered and not owned.chain(path)) or (not numbered and len(owned.members[path]) == 1):
            owned.drop(path)  # no chain; or one call and nothing else, which a class would only pass on
    return owned.owners, set(owned.runs)


def _floor(node: fx.Node, modules: dict[str, nn.Module]) -> str | None:
    """The deepest module the node must have run in: the holder of the layer it calls and of the tensors it
    reads (their longest common path), None for a node that calls and reads nothing of a module."""
    paths = [_parent(str(a.target)) for a in node.all_input_nodes if a.op == "get_attr"]
    if node.op == "call_module" and str(node.target) in modules:
        paths.append(_parent(str(node.target)))
    if not paths:
        return None
    common = paths[0].split(".") if paths[0] else []
    for path in paths[1:]:
        parts = path.split(".") if path else []
        k = 0
        while k < min(len(common), len(parts)) and common[k] == parts[k]:
            k += 1
        common = common[:k]
    return ".".join(common)


def _runs(nodes: list[fx.Node], floors: dict[fx.Node, str | None], modules: dict[str, nn.Module]) -> dict[str, Run]:
    """The holders that ran as one call: every node between their first and last anchor is theirs."""
    spans: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        floor = floors[node]
        for path in _prefixes(floor or ""):
            if type(modules.get(path)) is nn.Module:
                spans.setdefault(path, [i, i])[1] = i
    out = {}
    for path, (start, end) in spans.items():
        inside = (floors[n] for n in nodes[start : end + 1])
        if all(f is None or _within(f, path) for f in inside):
            out[path] = Run(path, start, end)
    return out


class _Owners:
    """Which run each node is in (`owners`: its deepest), and each run's nodes (`members`: its own and its
    nested runs'), kept in step as nodes move."""

    def __init__(self, nodes: list[fx.Node], floors: dict[fx.Node, str | None], runs: dict[str, Run]) -> None:
        self.runs = runs
        self.position = {n: i for i, n in enumerate(nodes)}
        self.owners: dict[fx.Node, str] = {}
        self.members: dict[str, dict[fx.Node, None]] = {path: {} for path in runs}
        ordered = sorted(runs.values(), key=lambda r: (r.start, _depth(r.path)))
        open_runs: list[Run] = []
        k = 0
        for i, node in enumerate(nodes):
            while k < len(ordered) and ordered[k].start == i:
                open_runs.append(ordered[k])
                k += 1
            while open_runs and open_runs[-1].end < i:
                open_runs.pop()
            floor = floors[node]
            if floor is not None:
                owner = max((p for p in _prefixes(floor) if p in runs), key=_depth, default="")
            else:
                owner = open_runs[-1].path if open_runs and open_runs[-1].start < i < open_runs[-1].end else ""
            self._put(node, owner)

    def _put(self, node: fx.Node, owner: str) -> None:
        self.owners[node] = owner
        for path in _prefixes(owner):
            if path in self.members:
                self.members[path][node] = None

    def move(self, node: fx.Node, owner: str) -> None:
        for path in _prefixes(self.owners[node]):
            if path in self.members:
                self.members[path].pop(node, None)
        self._put(node, owner)

    def drop(self, path: str) -> None:
        """The run at `path` was no call: its nodes are its nearest run-holding caller's."""
        del self.runs[path]
        caller = max((p for p in _prefixes(_parent(path)) if p in self.runs), key=_depth, default="")
        for node in list(self.members.pop(path)):
            if self.owners[node] == path:
                self.owners[node] = caller

    def attach_ends(self, nodes: list[fx.Node], floors: dict[fx.Node, str | None]) -> None:
        """Free nodes between two anchors go to the run that closed before them (its tail: they read what it
        made, and it feeds nothing else) or the run that opens after them (its head: they feed it alone)."""
        ending: dict[int, list[str]] = {}
        starting: dict[int, list[str]] = {}
        for run in self.runs.values():
            ending.setdefault(run.end, []).append(run.path)
            starting.setdefault(run.start, []).append(run.path)
        anchors = [i for i, n in enumerate(nodes) if floors[n] is not None]
        for a, b in zip([None, *anchors], [*anchors, None]):
            free = nodes[(0 if a is None else a + 1) : (len(nodes) if b is None else b)]
            if not free:
                continue
            closing = sorted((p for p in ending.get(a, []) if b is None or self.runs[p].end < b), key=_depth, reverse=True) if a is not None else []
            opening = sorted((p for p in starting.get(b, []) if a is None or self.runs[p].start > a), key=_depth, reverse=True) if b is not None else []
            k = 0
            while k < len(free) and (tail := next((p for p in closing if self._tail_of(free[k], p)), None)) is not None:
                self.move(free[k], tail)
                k += 1
            for node in reversed(free[k:]):
                head = next((p for p in opening if self._head_of(node, p)), None)
                if head is None:
                    break
                self.move(node, head)

    def _tail_of(self, node: fx.Node, path: str) -> bool:
        """True when `node` reads what the run at `path` made, else only what the run reads, nothing of another
        module, and the run's values are read by nothing else: the run ends with it, one value still its result."""
        if not _reads_within(node, path):
            return False
        members = self.members[path]
        inputs = [a for a in node.all_input_nodes if a in self.position]
        if not any(a in members for a in inputs):
            return False
        read = {a for m in members for a in m.all_input_nodes if a not in members}
        if any(a not in members and a not in read for a in inputs):
            return False  # a value the run does not read: the caller's code (a block's `+ x` after its SE's `*`)
        return all(u in members or u is node for m in members for u in m.users)

    def _head_of(self, node: fx.Node, path: str) -> bool:
        """True when only the run at `path` reads `node`, which reads nothing of another module."""
        members = self.members[path]
        return _reads_within(node, path) and bool(node.users) and all(u in members for u in node.users)

    def chain(self, path: str) -> bool:
        """True when the nodes of the run at `path` are its numbered children's, called in order, each fed the
        value the one before it made (the first the run's one input) and read by the next alone."""
        members = sorted(self.members[path], key=self.position.__getitem__)
        child_of: dict[fx.Node, str] = {}
        for node in members:
            owner = str(node.target) if node.op == "call_module" else self.owners[node]
            if owner == path:
                return False  # code of its own, between its children
            child_of[node] = owner[len(path) + 1 :].split(".")[0]
        order = list(dict.fromkeys(child_of.values()))
        if order != sorted(order, key=int) or [child_of[n] for n in members] != sorted(child_of.values(), key=order.index):
            return False
        previous: list[fx.Node] = []
        for name in order:
            inside = {n for n in members if child_of[n] == name}
            inputs = {a for n in inside for a in n.all_input_nodes if a not in inside and a.op != "get_attr"}
            if len(inputs) != 1 or (previous and (inputs != set(previous) or any(u not in inside for u in previous[0].users))):
                return False
            previous = [n for n in inside if any(u not in inside for u in n.users)]
            if len(previous) != 1:
                return False
        return True


def _reads_within(node: fx.Node, path: str) -> bool:
    return all(_within(_parent(str(a.target)), path) for a in node.all_input_nodes if a.op == "get_attr")


def _stack(node: fx.Node, path: str, framed: set[str], modules: dict[str, nn.Module]) -> dict[str, tuple[str, object]]:
    """The recorded stack of a node run inside `path`: every holder on the way that ran as a call, and the
    layer a call_module calls, outermost first, as symbolic_trace records them (key: the path)."""
    stack: dict[str, tuple[str, object]] = {p: (p, _class_of(p, modules[p])) for p in _prefixes(path) if p in framed}
    if node.op == "call_module" and str(node.target) in modules:
        target = str(node.target)
        stack[target] = (target, type(modules[target]))
    return stack


def _class_of(path: str, module: nn.Module) -> str:
    """The dotted name recorded for an inferred call: a Sequential for numbered children, else a class named
    after where the holder is held (`blocks.0.0`: `Block`, `stem`: `Stem`)."""
    names = list(module._modules)
    if names and all(name.isdigit() for name in names):
        return SEQUENTIAL
    return f"{INFERRED}.{class_named(path)}"


def class_named(path: str) -> str:
    """`Block` for `blocks.0.0`, `PatchEmbed` for `patch_embeds.1`, `Stem` for `stem`, `Layer` for `layer1.0`
    and `layer2.0`, `Block` where no name fits."""
    parts = path.split(".")
    named = [k for k, part in enumerate(parts) if not part.isdigit()]
    if not named:
        return "Block"
    k = named[-1]
    name = parts[k]
    if k < len(parts) - 1:  # an entry of a container: one of its items
        name = re.sub(r"ies$", "y", name) if name.endswith("ies") else name[:-1] if name.endswith("s") and not name.endswith("ss") else name
    name = re.sub(r"(?<=[A-Za-z_])[0-9]+$", "", name)  # `layer1`, `layer2`: one class where their code is one
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    return camel if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", camel) else "Block"


def _prefixes(path: str) -> list[str]:
    """`a`, `a.b`, `a.b.c` for `a.b.c`; none for the root."""
    parts = path.split(".") if path else []
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def _within(path: str, ancestor: str) -> bool:
    return not ancestor or path == ancestor or path.startswith(f"{ancestor}.")


def _parent(path: str) -> str:
    return path.rpartition(".")[0]


def _depth(path: str) -> int:
    return path.count(".") + 1 if path else 0
