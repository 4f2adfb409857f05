"""User-defined leaf modules: traced into a GraphModule that keeps the original structure."""

from __future__ import annotations

from torch import fx, nn

from .errors import FxExportError


class ChildrenAsLeaves(fx.Tracer):
    """Trace one module's own forward: every submodule it calls stays a call, and gets its own class.

    The default tracer would trace through library submodules (keeping only torch.nn ones), so
    a library class inside a library leaf would lose its class and its own traceability.
    """

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        """Every child is a leaf: only the module itself is traced."""
        return True


def trace_user_module(module: nn.Module, where: str) -> fx.GraphModule:
    """Trace `module` alone (its submodules are leaves); its children, parameters and buffers stay as they were.

    symbolic_trace copies only what the graph touches, in the order it touches it; a module
    rebuilt from that would lose unused weights and reorder its state_dict. So the traced
    GraphModule gets the module's own children, parameters and buffers back, in their order.
    """
    try:
        traced = fx.GraphModule(module, ChildrenAsLeaves().trace(module))
    except Exception as error:
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
