"""The graphs of a split module tree: a call's body as its module's graph, and its caller's graph.

A call's inputs are the values its nodes use from outside it (a parameter of a module outside
its own subtree included); its outputs are its values used after it. Parameters of its own
subtree are read where used, as `get_attr` of the relative path.
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch import fx, nn
from torch.fx.immutable_collections import immutable_dict

from .annotations import own_stack_trace, recovered, root_traced, runs_forward_of, source_statement
from .calls import MISORDERED, SOURCE_ITEMS, Call, dynamo_graph, stack_frames
from .guards import is_guards_module
from .module_paths import CALLED_PATH, submodule
from .names import BUILTIN_NAMES, is_plain_identifier, unique_identifier, without_number
from .pytree_io import SEQUENCES
from .scopes import SCOPES, Scope, after, call_site_scopes
from .source_names import (
    called_name,
    chosen_aliases,
    forward_reads,
    forward_source,
    kept_input_alias,
    source_parameters,
    unpacked_parameters,
)


def _graph_module_class() -> type[fx.GraphModule]:
    """A GraphModule that generates its Python code only if something reads or runs it (nothing in an
    export does: 0.4 s for 20,000 nodes); a torch without one generates it at once."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:
        return fx.GraphModule
    return _LazyGraphModule


_GRAPH_MODULE = _graph_module_class()


@dataclass(frozen=True)
class ListArgument:
    """A call whose method takes its inputs as one list: the body node that reads them, and the list
    (or tuple) among its arguments that holds them (packing.py)."""

    user: fx.Node
    container: list[fx.Node] | tuple[fx.Node, ...]


LIST_PARAMETER = "tensors"  # as torch.cat and torch.stack name it; a name of what it holds is reused by no value


def _parameter_name(used: fx.Node, taken: set[str], path: str = "") -> str:
    """The model input's name for a model input (for dynamo's input of a tensor of the module at
    `path` or under it, its path there: `norm1_weight`), the attribute's for a tensor of another
    module, else `x`, `x_1`, ..."""
    if used.op == "placeholder":
        base = _lifted_tensor_name(used, path) or _frame_local(used) or str(used.target).lstrip("*")
    elif used.op == "get_attr":
        base = str(used.target).rpartition(".")[2]
    else:
        base = "x"  # not the caller's name for it: two callers (or two instances) give the body the same code
    return unique_identifier(base, taken, "x")


def _lifted_tensor_name(placeholder: fx.Node, path: str) -> str | None:
    """For dynamo's input of a tensor (or other attribute) of the module at `path` or under it, its
    path there with `_` for dots (`norm1_weight` in the forward of `blocks.0`); else None. dynamo names
    the input after where it found the value, each name made an identifier
    (`L_self_modules_blocks_modules_0_modules_norm1_parameters_weight_`; `G_lib_model_...` for a
    global reached through a Python module), and records the call of the module that first read it
    (`blocks.0.norm1`): the name must spell that module's path."""
    frames = stack_frames(placeholder) if dynamo_graph() else []
    owner = frames[-1].path if frames else ""
    if not path or not (owner == path or owner.startswith(f"{path}.")):
        return None
    parts = [re.escape(_identifier_part(part)) for part in owner.split(".")]
    spelled = "_(?:modules_)?".join(parts)
    found = re.search(rf"_(?:modules_)?{spelled}_(?:parameters_|buffers_)?([A-Za-z0-9_]+?)_$", str(placeholder.target))
    if found is None or found.group(1).startswith("modules_") or "_modules_" in found.group(1):
        return None
    relative = _identifier_part(owner[len(path) + 1 :])
    if relative[:1].isdigit():  # a child of a container (`0.norm1`): named after the container
        relative = f"{_identifier_part(path.rpartition('.')[2])}_{relative}"
    return f"{relative}_{found.group(1)}" if relative else found.group(1)


def _frame_local(placeholder: fx.Node) -> str | None:
    """In a dynamo graph, the name of the compiled frame's local or global an input is (`x` for
    `L_x_`), so that the block taking the model's input reads as the blocks taking other values do."""
    found = re.fullmatch(r"[LG]_([A-Za-z][A-Za-z0-9_]*?)_", str(placeholder.target)) if dynamo_graph() else None
    return found.group(1) if found is not None else None


def _identifier_part(text: str) -> str:
    """`text` with every character an identifier may not hold as `_` (dynamo's spelling of a path)."""
    return re.sub(r"[^a-zA-Z0-9]", "_", text)


def generic_input(placeholder: fx.Node) -> bool:
    """True for an input named `x`, `x_1`, ... (_parameter_name), not after what it holds."""
    return without_number(str(placeholder.target)) == "x"


def source_input_names(graph: fx.Graph, cls: type | str, settled: Sequence[str | None] = (), renamable: frozenset[str] = frozenset()) -> list[str | None]:
    """For each input of a call's graph, the name of the source forward's parameter that every statement
    reading it reads (`hidden_states`, `attention_mask`; a statement reading the name the source keeps the
    parameter under first, `residual = hidden_states`, reads it too, and one reading a local it binds to one of two,
    `current_states = key_value_states if is_cross_attention else hidden_states`, reads both), where the graph recorded the statements
    (torch.export, dynamo), or the one of those no other input took; None for an input not named `x`,
    `x_1`, ... (nor after one of the `renamable` model inputs that the source forward has no parameter
    of: the model's `tgt`, a block's `x`), read by statements that read several parameters or none, or
    whose name another input has. `settled`: names some inputs already have (passed_on_as)."""
    names = source_parameters(cls)
    placeholders = list(graph.find_nodes(op="placeholder"))
    out: list[str | None] = list(settled) or [None] * len(placeholders)
    if not names:
        return out
    commons: dict[int, set[str]] = {}
    read: dict[int, frozenset[str]] = {}  # what every statement reading the input reads
    texts: dict[int, str] = {}  # the first statement reading it, as the source wrote it
    kept = kept_input_alias(forward_source(cls))  # `residual = hidden_states` first: reading `residual` reads the input
    chosen = chosen_aliases(forward_source(cls))  # `current = k if k is not None else h`: reading `current` reads either
    for i, placeholder in enumerate(placeholders):
        reads = [r | {kept[1]} if kept and r is not None and kept[0] in r else r for r in map(forward_reads, placeholder.users)]
        reads = [r.union(*(chosen[name] for name in r if name in chosen)) if r is not None else r for r in reads]  # either
        unnamed = generic_input(placeholder) or (str(placeholder.target) in renamable and str(placeholder.target) not in names)
        if unnamed and reads and not any(r is None for r in reads):
            read[i] = frozenset.intersection(*cast(list[frozenset[str]], reads))
            commons[i] = {name for name in read[i] & set(names) if local_name(name)}
            texts[i] = (source_statement(next(iter(placeholder.users))) or ("", "", ""))[2]
    # by elimination, only where the parameters the statements read (`input` too) leave one; and a model input
    # only where its statements read that one alone (the one left may be another input's)
    strict = {i for i in commons if not generic_input(placeholders[i])}
    while True:  # a statement reading two parameters (`hidden_states + input_tensor`): the one no other input took
        found = {i: common.pop() for i, common in ((i, common - set(out)) for i, common in commons.items() if out[i] is None)
                 if len(common) == 1 and len(read[i] & set(names) - set(out)) == 1 and (i not in strict or len(commons[i]) == 1)}  # fmt: skip
        if not found:  # else the one its statements pass it as: `self.fc(cls_token)` in `return (self.conv(x), self.fc(cls_token))`
            found = {i: name for i, common in commons.items() if out[i] is None and (name := _passed_as(placeholders[i], common - set(out)))}
        if not found:  # else the one named like the keyword the op takes it by: `attn_mask=` for `attention_mask`
            found = {i: name for i, common in commons.items() if out[i] is None and (name := _keyword_like(placeholders[i], common - set(out)))}
        if not found:
            break
        for i, name in found.items():
            out[i] = name
    _name_unpacked(out, read, cls, texts)
    taken = [str(p.target) for p, name in zip(placeholders, out) if name is None]
    return [None if name is None or out.count(name) > 1 or name in taken else name for name in out]


def _keyword_like(placeholder: fx.Node, names: set[str]) -> str | None:
    """The one of `names` sharing a word (of three letters or more) with the keyword every node reading the
    input passes it by, where they pass it by one keyword only: falcon's `attention_interface(self, query_states,
    key_states, value_states, attention_mask, position_ids=position_ids)` runs `F.scaled_dot_product_attention(...,
    attn_mask=x_3)`, so the input is `attention_mask`."""
    keywords = {key for user in placeholder.users for key, value in user.kwargs.items() if value is placeholder}
    if len(keywords) != 1 or any(placeholder in user.args for user in placeholder.users):
        return None
    words = {word for word in keywords.pop().split("_") if len(word) > 2}
    matching = [name for name in names if words & set(name.split("_"))]
    return matching[0] if len(matching) == 1 else None


def _passed_as(placeholder: fx.Node, names: set[str]) -> str | None:
    """The one of `names` that every statement reading the input spells it as where it passes it on first:
    the first argument of the call of a child, a function or a method (its receiver) that reads it."""
    spelled = {_argument_name(user, placeholder) for user in placeholder.users}
    return spelled.pop() if len(spelled) == 1 and spelled <= names else None


def _argument_name(user: fx.Node, placeholder: fx.Node) -> str | None:
    """The name `user`'s statement passes as the first argument of the call `user` is (None where that
    is not the placeholder, or the line spells it otherwise or more than once)."""
    found = source_statement(user)
    first = user.args[0] if user.args else None
    name = called_name(user)
    if found is None or name is None:
        return None
    if isinstance(first, (tuple, list)) and user.op == "call_function" and list(first).count(placeholder) == 1:
        return _item_name(found[2], name, list(first).index(placeholder), len(first))
    if first is not placeholder:
        return None
    if user.op == "call_module" and is_plain_identifier(str(user.target)):
        pattern = rf"\bself\.{re.escape(name)}\(\s*(\w+)\s*[,)]"
    elif user.op == "call_method":
        pattern = rf"(?<![\w.])(\w+)\.{re.escape(name)}\("
    elif user.op == "call_function":
        pattern = rf"\b{re.escape(name)}\(\s*(\w+)\s*[,)]"
    else:
        return None
    spelled = set(re.findall(pattern, found[2]))
    return spelled.pop() if len(spelled) == 1 else None


def _item_name(line: str, function: str, place: int, count: int) -> str | None:
    """The name the line writes as item `place` of the tuple or list it passes a call of `function` first
    (`x_cls` of `torch.cat((x_cls, x), dim=1)`), where it writes `count` plain names there."""
    found = re.findall(rf"\b{re.escape(function)}\(\s*[(\[]([^()\[\]]*)[)\]]", line)
    items = [item.strip() for item in found[0].split(",") if item.strip()] if len(found) == 1 else []
    return items[place] if len(items) == count and all(map(is_plain_identifier, items)) else None


def _name_unpacked(out: list[str | None], read: dict[int, frozenset[str]], cls: type | str, texts: dict[int, str]) -> None:
    """Name the inputs that are the items of a parameter the source forward unpacks (`cos, sin =
    position_embeddings`: the caller passes the tuple's items as inputs one after another) after the
    names it unpacks them into. Where as many inputs in a row are unnamed, the statements reading
    each read its item's name and no parameter of the forward but the unpacked one, or one another input is
    named after, an input is named before
    them (unless the parameter is the first), and the named inputs before them are parameters before it
    (those after may come before it in the signature too: a graph takes its inputs in the order its
    statements first read them, gpt_neox's attention `cos, sin` before `attention_mask`). Where one statement reads
    several items (`apply_rotary_pos_emb(q, k, cos, sin)`), its inputs come in the order it names the
    items in (`texts`: the statement reading each input)."""
    order = source_parameters(cls)
    for parameter, items in unpacked_parameters(cls):
        named = list(out)
        if parameter in items:  # `x, cls_tokens = x`: an input named `x` for the statements reading it is an item
            out[:] = [None if name == parameter else name for name in out]
        if parameter in out or not all(local_name(item) and item not in out for item in items):
            out[:] = named
            continue
        place = order.index(parameter)
        # the parameter read whole reads the items (`self.attn(h, position_embeddings)`, `x, cls_tokens = x`); a
        # parameter another input is named after is not these inputs (`q = hidden_states * cos` in an export,
        # whose `hidden_states = self.q(hidden_states)` rebinds it)
        others = set(order) - {parameter} - set(out)
        for start in range(0 if place == 0 else 1, len(out) - len(items) + 1):
            run = range(start, start + len(items))
            before = [name for name in out[:start] if name is not None]
            after = [name for name in out[start + len(items) :] if name is not None]
            if (
                (before or place == 0)
                and all(out[i] is None and i in read and not read[i] & others for i in run)
                and all(name in order and order.index(name) < place for name in before)
                and all(name in order for name in after)
                and (found := _items_of(run, items, read, texts)) is not None
            ):
                out[start : start + len(items)] = found
                break
        else:
            out[:] = named


def _items_of(run: range, items: tuple[str, ...], read: dict[int, frozenset[str]], texts: dict[int, str]) -> list[str] | None:
    """The item each input of `run` is: in the order they are unpacked where each one's statements read its
    item (a statement reading several naming them in that order); else, where the graph took them in
    another order (the order its statements first read them: timm's pit reads `cls_tokens` of `x,
    cls_tokens = x` first), the one item each one's statements read once the items other inputs are
    found to be are set aside (`self.pool(x, cls_tokens)` reads both); None where neither settles every input."""
    if all(item in read[i] for i, item in zip(run, items)) and all(_in_order(texts.get(i, ""), items, read[i]) for i in run):
        return list(items)
    found: dict[int, str] = {}
    while len(found) < len(run):
        taken = set(found.values())
        settled = {i: next(iter(read[i] & set(items) - taken)) for i in run if i not in found and len(read[i] & set(items) - taken) == 1}
        if not settled or len(set(settled.values())) < len(settled):
            return None
        found.update(settled)
    return [found[i] for i in run]


def _in_order(text: str, items: tuple[str, ...], read: frozenset[str]) -> bool:
    """True when the statement `text` names the items it reads in the order they are unpacked."""
    places = [m.start() for item in items if item in read and (m := re.search(rf"(?<![\w.]){re.escape(item)}(?!\w)", text))]
    return len(places) == sum(item in read for item in items) and places == sorted(places)


def rename_inputs(graph: fx.Graph, names: Sequence[str | None]) -> bool:
    """Give the graph's inputs the names that are not None; True when one changed."""
    changed = False
    for placeholder, name in zip(list(graph.find_nodes(op="placeholder")), names):
        if name is not None and placeholder.target != name:
            placeholder.target = name
            changed = True
    return changed


# Names the generated module binds for itself: a parameter of that name would be renamed.
_GENERATED = frozenset({"self", "device", "dtype", "weights", "load_weights", "torch", "nn", "F", "math", "operator"})


def local_name(name: str) -> bool:
    """A name a forward parameter may take: a plain identifier (`H` too: module-level names avoid every
    parameter's), no builtin's, none the module binds."""
    return is_plain_identifier(name) and name not in BUILTIN_NAMES and name not in _GENERATED


def _holds(path: str, inner: str) -> bool:
    """True when the module at `path` holds the one at `inner` (the root, "", holds every other)."""
    return path != inner and (path == "" or inner.startswith(path + "."))


class Builder:
    """Copies nodes into a new graph whose module paths are relative to `prefix`."""

    def __init__(self, prefix: str, cls: type | str | None = None, lists: Mapping[str, ListArgument] | None = None, shared: Mapping[str, str] | None = None) -> None:
        self.prefix = prefix
        self.shared = shared or {}  # path of a module held outside this one -> the attribute this one runs it as
        self.cls = cls
        self.applied: tuple[Scope, ...] = ()  # the `with` blocks the caller writes around this module's call
        self.lists = lists or {}  # by frame key: calls whose method takes their inputs as one list
        self.graph = fx.Graph()
        self.env: dict[fx.Node, fx.Node] = {}
        self.packed: dict[int, fx.Node] = {}  # id of a list in a body node's arguments -> the parameter holding it
        self.callers: int | None = None  # how many modules running `cls`'s forward this one runs inside, once a node says

    def own_trace(self, trace: str, node: fx.Node) -> str | None:
        """The part of `node`'s stack `trace` from this module's own frame on (None if none is; the root's: all
        of it, unless recovered, where the root has no frame, or where the graph's traces hold no frame of the
        root's own code: torch.export of a GraphModule, whose traces start in the modules it called)."""
        if self.cls is None:
            return trace if root_traced() and not recovered() else None
        if self.callers is None:
            self.callers = sum(1 for f in stack_frames(node) if runs_forward_of(f.cls, self.cls) and _holds(f.path, self.prefix))
        return own_stack_trace(trace, self.cls, self.callers)

    @classmethod
    def for_call(cls, call: Call, lists: Mapping[str, ListArgument] | None = None, shared: Mapping[str, str] | None = None) -> Builder:
        """The graph of one call's body: its inputs are placeholders (or one list), its outputs returned;
        `shared`: the attribute it runs each module held outside it as (shared_modules.py)."""
        builder = cls(call.frame.path, call.frame.cls, lists, shared)
        builder.applied = call_site_scopes(call.nodes(), call.frame.path)
        inputs, outputs = call.interface()
        taken: set[str] = set()
        packed = builder.lists.get(call.frame.key)
        if packed is not None:
            builder.packed[id(packed.container)] = builder.graph.placeholder(LIST_PARAMETER)
        for used in [] if packed is not None else inputs:
            placeholder = builder.graph.placeholder(_parameter_name(used, taken, call.frame.path))
            placeholder.meta = dict(used.meta)
            placeholder.meta.pop(SCOPES, None)  # where the value was made, not where it is read
            builder.env[used] = placeholder
        builder.emit(call.items, keep_names=False)
        values = [builder.env[out] for out in outputs]
        builder.graph.output(None if not values else values[0] if len(values) == 1 else tuple(values))
        return builder

    @classmethod
    def for_root(cls, gm: fx.GraphModule, items: list[fx.Node | Call], lists: Mapping[str, ListArgument] | None = None) -> Builder:
        """The root's graph: its own placeholders, input guards and output; calls as `call_module`."""
        builder = cls("", None, lists)
        builder.graph._codegen = gm.graph._codegen
        for node in gm.graph.nodes:
            if node.op == "placeholder" or (node.op == "call_module" and is_guards_module(submodule(gm, str(node.target)))):
                builder.env[node] = builder.graph.node_copy(node, builder.value)
        builder.emit(items, keep_names=True)
        for node in gm.graph.find_nodes(op="output"):
            builder.graph.node_copy(node, builder.value)
        return builder

    def relative(self, target: str) -> str:
        """A module path relative to the module whose graph this is (a module held outside it: its attribute)."""
        if target in self.shared:
            return self.shared[target]
        return target[len(self.prefix) + 1 :] if self.prefix else target

    def value(self, old: fx.Node) -> fx.Node:
        """The copy of `old`; a parameter or buffer is read where first used."""
        new = self.env.get(old)
        if new is None:
            new = self.graph.get_attr(self.relative(str(old.target)))
            new.meta = dict(old.meta)
            self.env[old] = new
        return new

    def emit(self, items: list[fx.Node | Call], keep_names: bool) -> None:
        """Copy nodes and write nested calls as calls."""
        for item in items:
            if isinstance(item, Call):
                self.call(item)
            else:
                self.copy(item, keep_names)

    def copy(self, node: fx.Node, keep_names: bool) -> None:
        """Copy one node, its module path made relative (names numbered afresh unless `keep_names`)."""
        target = self.relative(str(node.target)) if node.op in ("call_module", "get_attr") else node.target
        if self.packed:
            args, kwargs = self.arguments(node.args), self.arguments(node.kwargs)
        else:
            args, kwargs = fx.map_arg(node.args, self.value), fx.map_arg(node.kwargs, self.value)
        name = node.name if keep_names else None if node.op in ("call_module", "get_attr") else without_number(node.name)  # numbered afresh in a method of its own
        new = self.graph.create_node(node.op, target, args, kwargs, name=name, type_expr=node.type)
        new.meta = dict(node.meta)
        if node.op == "call_module" and str(node.target) in self.shared:
            new.meta[CALLED_PATH] = str(node.target)
        if SCOPES in new.meta:  # the blocks written around this module's call are its caller's
            new.meta[SCOPES] = after(new.meta[SCOPES], self.applied)
        if "stack_trace" in new.meta:
            new.meta["stack_trace"] = self.own_trace(new.meta["stack_trace"], node)
        self.env[node] = new

    def arguments(self, value: Any) -> Any:
        """A node's arguments for the copy: each node's copy, a list the method takes as a parameter that parameter."""
        if id(value) in self.packed:
            return self.packed[id(value)]
        if type(value) in SEQUENCES:
            return type(value)(self.arguments(v) for v in value)
        if type(value) in (dict, immutable_dict):
            return type(value)({k: self.arguments(v) for k, v in value.items()})
        return fx.map_arg(value, self.value)

    def call(self, call: Call) -> None:
        """`call_module` of the called module; several outputs come back as a tuple, taken apart."""
        inputs, outputs = call.interface()
        values = tuple(self.value(i) for i in inputs)
        packed = self.lists.get(call.frame.key)
        args: tuple[object, ...] = values if packed is None else ([*values] if isinstance(packed.container, list) else values,)
        node = self.graph.call_module(self.relative(call.frame.path), cast("tuple[Any, ...]", args))
        if call.frame.path in self.shared:
            node.meta[CALLED_PATH] = call.frame.path
        if call.misordered:
            node.meta[MISORDERED] = True
        if call.source_items is not None:
            node.meta[SOURCE_ITEMS] = call.source_items
        scopes = after(call_site_scopes(call.nodes(), call.frame.path), self.applied)
        if scopes:
            node.meta[SCOPES] = scopes
        traced = next((n for n in call.nodes() if n.meta.get("stack_trace")), None)
        if traced is not None:  # the line that made the call, as for a restored layer
            node.meta["stack_trace"] = self.own_trace(traced.meta["stack_trace"], traced)
        if len(outputs) == 1:
            node.meta.update({k: v for k, v in outputs[0].meta.items() if k in ("val", "tensor_meta", "type")})
            self.env[outputs[0]] = node
            return
        for position, out in enumerate(outputs):
            item = self.graph.call_function(operator.getitem, (node, position))
            item.meta = {k: v for k, v in out.meta.items() if k in ("val", "tensor_meta", "type")}
            self.env[out] = item


def module_from(holder: nn.Module, graph: fx.Graph, name: str) -> fx.GraphModule:
    """A GraphModule running `graph` that holds exactly what `holder` holds, in the same order."""
    module = _GRAPH_MODULE(holder, graph, name if name.isidentifier() else "GraphModule")
    object.__setattr__(module, "_modules", type(holder._modules)(holder._modules))
    object.__setattr__(module, "_parameters", type(holder._parameters)(holder._parameters))
    object.__setattr__(module, "_buffers", type(holder._buffers)(holder._buffers))
    object.__setattr__(module, "_non_persistent_buffers_set", set(holder._non_persistent_buffers_set))
    module.__dict__.update(held_values(holder))
    module.training = holder.training
    return module


def holder_copy(module: nn.Module) -> nn.Module:
    """A plain module holding what `module` holds (children, parameters, buffers, tensor attributes), in dicts of its own."""
    new = nn.Module()
    new.training = module.training
    new._parameters.update(module._parameters)
    new._buffers.update(module._buffers)
    new._non_persistent_buffers_set.update(module._non_persistent_buffers_set)
    new._modules.update(module._modules)
    new.__dict__.update(held_values(module))
    return new


def held_values(module: nn.Module) -> dict[str, object]:
    """The values a module holds as plain attributes: tensors and packed weights (packed_objects.py), and for
    a GraphModule the other constants its graph reads (torch.export's `function_const_func_spec0`, the
    TreeSpec of a vmap over indexing, as transformers 4's causal masks run) and the modules held elsewhere
    it calls (shared_modules.py), which a copy running that graph needs too."""
    read = {str(n.target) for op in ("get_attr", "call_module") for n in module.graph.find_nodes(op=op)} if isinstance(module, fx.GraphModule) else set()
    return {key: value for key, value in vars(module).items() if isinstance(value, (torch.Tensor, torch.ScriptObject)) or key in read}


def private_holder(
    root: nn.Module, parts: Sequence[str], private: set[int], missing: Callable[[nn.Module, str], nn.Module] | None = None
) -> nn.Module:
    """The holder at `parts` under `root`, each holder on the way not yet in `private` (ids) replaced
    where it stands by a copy of its own (`holder_copy`) and added to it; a missing one is made and
    set by `missing(parent, name)`."""
    parent = root
    for name in parts:
        child = parent._modules.get(name)
        if child is None:
            if missing is None:
                raise KeyError(f"no module {name!r} on the path {'.'.join(parts)!r}")
            child = missing(parent, name)
        elif id(child) not in private:
            child = holder_copy(child)
            parent._modules[name] = child
        private.add(id(child))
        parent = child
    return parent


def with_graph(gm: fx.GraphModule, graph: fx.Graph, holder: nn.Module | None = None) -> fx.GraphModule:
    """A GraphModule running `graph` that holds what `gm` holds (modules, tensors, meta, other attributes),
    or, for modules and tensors, what `holder` holds."""
    new = module_from(gm if holder is None else holder, graph, type(gm).__name__)
    for key, value in vars(gm).items():
        if holder is None or not isinstance(value, torch.Tensor):
            new.__dict__.setdefault(key, value)
    new.meta = dict(getattr(gm, "meta", {}))
    return new


def copy_graph(graph: fx.Graph, copies: dict[fx.Node, fx.Node] | None = None) -> fx.Graph:
    """A copy of `graph` (nodes and their meta copied, shallowly) sharing its codegen (the pytree specs);
    `copies` gets each node's copy."""
    new = fx.Graph(tracer_cls=graph._tracer_cls)
    mapping = {} if copies is None else copies
    result = new.graph_copy(graph, mapping, return_output_node=True)
    new._codegen = graph._codegen
    if result is None:  # no output: a container torch.export.unflatten holds its children in, never called
        return new
    value, output = cast("tuple[Any, fx.Node]", result)
    mapping[output] = new.output(value, type_expr=getattr(output, "type", None))
    mapping[output].meta = copy.copy(output.meta)
    return new
