"""Turn what other producers hand over into a GraphModule: ExportedPrograms, unflattened modules, .pt2 files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import fx, nn

from .errors import user_code


def _is_unflattened(obj: Any) -> bool:
    return type(obj).__name__ in ("UnflattenedModule", "InterpreterModule") and isinstance(getattr(obj, "graph", None), fx.Graph)


def _graph_module(module: nn.Module, graph: fx.Graph) -> fx.GraphModule:
    """A GraphModule over `graph` that keeps `module`'s children, parameters and buffers, in order."""
    gm = fx.GraphModule(module, graph, class_name=type(module).__name__)
    gm._modules.clear()
    gm._modules.update((name, from_unflattened(child) if _is_unflattened(child) else child) for name, child in module._modules.items())
    gm._parameters.clear()
    gm._parameters.update(module._parameters)
    gm._buffers.clear()
    gm._buffers.update(module._buffers)
    gm._non_persistent_buffers_set = set(module._non_persistent_buffers_set)
    for name, value in vars(module).items():  # tensor constants the graph reads as plain attributes
        if isinstance(value, torch.Tensor):
            gm.__dict__[name] = value
    gm.training = module.training
    return gm


def _holder(module: nn.Module) -> nn.Module:
    """The children of a module nothing calls, in a ModuleList where they are numbered as its items."""
    children = {name: from_unflattened(child) if _is_unflattened(child) else child for name, child in module._modules.items()}
    items = [c for c in children.values() if c is not None]
    numbered = list(children) == [str(i) for i in range(len(children))] and len(items) == len(children)
    holder = nn.ModuleList(items) if numbered else nn.Module()
    if not numbered:
        holder._modules.update(children)
    for name, value in vars(module).items():
        if isinstance(value, torch.Tensor):
            holder.__dict__[name] = value
    holder.training = module.training
    return holder


def _root_codegen(module: Any, graph: fx.Graph) -> None:
    """Give the root graph torch.export's calling convention (pytree in and out) from its signature."""
    signature = module.module_call_graph[0].signature
    in_spec, out_spec = signature.in_spec, signature.out_spec
    args_spec, kwargs_spec = in_spec.children()
    placeholders = [n.name for n in graph.find_nodes(op="placeholder")]
    if all(child.is_leaf() for child in args_spec.children()):
        positional = placeholders[: args_spec.num_children]
    else:
        positional = [f"arg{i}" for i in range(args_spec.num_children)]
    orig_args = [*positional, *kwargs_spec.context]
    graph._codegen = fx.graph._PyTreeCodeGen(fx.graph._PyTreeInfo(orig_args, in_spec, out_spec))


def from_unflattened(module: Any) -> nn.Module:
    """`torch.export.unflatten(ep)` as nested GraphModules with the same hierarchy; a module it holds
    children in and never calls (a ModuleList's place: an empty graph) as a holder of them."""
    graph = module.graph
    if type(module).__name__ != "UnflattenedModule" and not graph.nodes and not module._parameters and not module._buffers:
        return _holder(module)
    if type(module).__name__ == "UnflattenedModule":
        graph = fx.Graph()
        result = graph.graph_copy(module.graph, {})
        graph.output(result if isinstance(result, (tuple, list)) else (result,))  # pytree outputs are flat
        _root_codegen(module, graph)
    return _graph_module(module, graph)


def load_pt2(path: Path) -> fx.GraphModule:
    """A `torch.export.save` file, loaded without unpickling arbitrary objects."""
    with user_code(f"cannot load {str(path)!r} as a torch.export program"):  # torch raises many types for a bad archive
        program = torch.export.load(str(path))
    return program.module()


def normalize(obj: Any) -> Any:
    """ExportedProgram -> its module(); UnflattenedModule -> GraphModules; anything else unchanged."""
    if isinstance(obj, torch.export.ExportedProgram):
        return obj.module()
    if _is_unflattened(obj):
        return from_unflattened(obj)
    return obj
