"""Operator namespaces that exist only once a module registers them, and that module.

`torch.ops.quantized_decomposed.*` (what PT2E quantization leaves in a graph) is defined by
`torch.ao.quantization.fx._decomposed`, part of torch but not imported by `import torch`;
`torch.ops.torchao.*` by the torchao package. A module.py that calls them imports the module
first, so the package needs only torch for the first and says it needs torchao for the second.
An operator defined with `torch.library.custom_op` (transformers' `torch.ops.transformers.
grouped_mm_fallback`, which its MoE layers call) is defined by the module its function is in:
module.py imports that one, for the same reason, as it imports the module holding the
`torch.library.Library` that defines a namespace (`LIB = torch.library.Library("mylib", "DEF")`), and
torchvision for `torch.ops.torchvision.*` (`roi_align`, `nms`: its extension defines them).
"""

from __future__ import annotations

import sys

import torch

from .imports import ImportTable

# namespace -> the module whose import defines its operators
REGISTERING_MODULES = {
    "quantized_decomposed": "torch.ao.quantization.fx._decomposed",
    "torchao": "torchao",
    "torchvision": "torchvision",
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
    elif (module := _library_module(namespace)) is not None:
        imports.module(module, note=f"defines torch.ops.{namespace}")


def _custom_op_module(qualname: str) -> str | None:
    """The module whose import defines the `torch.library.custom_op` of that name (that of its function),
    None for any other operator, or one defined where no import reaches (`__main__`, inside torch)."""
    definition = getattr(torch._library.custom_ops, "OPDEFS", {}).get(qualname)
    module = getattr(getattr(definition, "_init_fn", None), "__module__", None)
    if not isinstance(module, str) or module == "__main__" or module.split(".")[0] == "torch":
        return None
    return module


# namespace -> _library_module's answer, during one export (forget_libraries): each asks every module
# imported (22 ms with transformers and timm imported), and a flat export of a core-ATen graph asks of
# `aten` once per operator it calls.
_FOUND: dict[str, str | None] = {}


def forget_libraries() -> None:
    """Drop the answers kept during an export: a module imported after it may define a namespace."""
    _FOUND.clear()


def _library_module(namespace: str) -> str | None:
    if namespace not in _FOUND:
        _FOUND[namespace] = _library_module_of(namespace)
    return _FOUND[namespace]


def _library_module_of(namespace: str) -> str | None:
    """The imported module that holds, at its top level, a `torch.library.Library` defining `namespace`
    (a "DEF" or "FRAGMENT" library); None where none does, or where that is `__main__` or torch's own."""
    for name, module in list(sys.modules.items()):
        if name == "__main__" or name.split(".")[0] == "torch" or module is None:
            continue
        for value in list(getattr(module, "__dict__", {}).values()):
            if isinstance(value, torch.library.Library) and value.ns == namespace and value.kind in ("DEF", "FRAGMENT"):
                return name
    return None
