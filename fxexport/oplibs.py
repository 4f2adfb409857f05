"""Operator namespaces that exist only once a module registers them, and that module.

`torch.ops.quantized_decomposed.*` (what PT2E quantization leaves in a graph) is defined by
`torch.ao.quantization.fx._decomposed`, part of torch but not imported by `import torch`;
`torch.ops.torchao.*` by the torchao package. A module.py that calls them imports the module
first, so the package needs only torch for the first and says it needs torchao for the second.
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
    namespace = str(target).split(".")[0]  # `quantized_decomposed.quantize_per_tensor.default`
    module = REGISTERING_MODULES.get(namespace)
    if module is not None:
        imports.module(module, note=f"defines torch.ops.{namespace}")
