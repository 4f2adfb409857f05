"""Operator namespaces that exist only once a module registers them, and that module.

`torch.ops.quantized_decomposed.*` (what PT2E quantization leaves in a graph) is defined by
`torch.ao.quantization.fx._decomposed`, part of torch but not imported by `import torch`;
`torch.ops.torchao.*` by the torchao package. A module.py that calls them imports the module
first, so the package needs only torch for the first and says it needs torchao for the second.
An operator defined with `torch.library.custom_op` (transformers' `torch.ops.transformers.
grouped_mm_fallback`, which its MoE layers call) is defined by the module its function is in:
module.py imports that one, for the same reason.
"""

from __future__ import annotations

import torch

from .imports import ImportTable

# namespace -> the module whose import defines its operators
REGISTERING_MODULES = {
    "quantized_decomposed": "torch.ao.quantization.fx._decomposed",
    "torchao": "torchao",
}


def register_op_library(target: object, imports: ImportTable) -> None:
    """Import the module that defines `target`'s namespace, when `import torch` alone does not."""
    if not isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return
    namespace, name = str(target).split(".")[:2]  # `quantized_decomposed.quantize_per_tensor.default`
    module = REGISTERING_MODULES.get(namespace)
    if module is not None:
        imports.module(module, note=f"defines torch.ops.{namespace}")
    elif (module := _custom_op_module(f"{namespace}::{name}")) is not None:
        imports.module(module, note=f"defines torch.ops.{namespace}.{name}")


def _custom_op_module(qualname: str) -> str | None:
    """The module whose import defines the `torch.library.custom_op` of that name (that of its function),
    None for any other operator, or one defined where no import reaches (`__main__`, inside torch)."""
    definition = getattr(torch._library.custom_ops, "OPDEFS", {}).get(qualname)
    module = getattr(getattr(definition, "_init_fn", None), "__module__", None)
    if not isinstance(module, str) or module == "__main__" or module.split(".")[0] == "torch":
        return None
    return module
