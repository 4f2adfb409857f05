"""User-defined leaf modules: traced into a GraphModule that keeps the original structure."""

from __future__ import annotations

from torch import fx, nn

from .errors import FxExportError


def trace_user_module(module: nn.Module, where: str) -> fx.GraphModule:
    """Trace `module` with symbolic_trace; its children, parameters and buffers stay as they were.

    symbolic_trace copies only what the graph touches, in the order it touches it; a module
    rebuilt from that would lose unused weights and reorder its state_dict. So the traced
    GraphModule gets the module's own children, parameters and buffers back, in their order.
    """
    try:
        traced = fx.symbolic_trace(module)
    except Exception as error:  # any tracing failure means we fall back
        raise FxExportError(f"module {where!r} ({type(module).__qualname__}) cannot be traced: {type(error).__name__}: {error}") from error
    gm = fx.GraphModule(traced, traced.graph, class_name=type(module).__name__)
    constants = {k: v for k, v in gm._buffers.items() if k not in module._buffers and k not in module._parameters}
    gm._modules.clear()
    gm._modules.update(module._modules)
    gm._parameters.clear()
    gm._parameters.update(module._parameters)
    gm._buffers.clear()
    gm._buffers.update(module._buffers)
    gm._buffers.update(constants)
    gm._non_persistent_buffers_set = set(module._non_persistent_buffers_set)
    gm.training = module.training  # not train(): that would change the user's child modules too
    return gm
