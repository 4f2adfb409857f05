"""describe: what a reader needs to use an export: producer, call signature, inputs, outputs, module tree.

Runs once, at the end of collect, on the GraphModule and the finished PackageIR. Everything
here is documentation: nothing it finds changes the generated code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
from torch import fx
from torch.fx.graph import _PyTreeCodeGen
from torch.fx.passes.shape_prop import TensorMetadata

from .guards import is_guards_module
from .ir import ModuleIR, PackageIR, SignatureIR, ValueIR
from .pytree_io import pytree_info

_SYMBOLIC = {torch.SymInt: "int", torch.SymFloat: "float", torch.SymBool: "bool"}


def describe(root: fx.GraphModule, package: PackageIR, class_names: Mapping[str, str]) -> PackageIR:
    """`package` with its producer, signature and module tree; `class_names` maps dotted paths to generated classes."""
    return dataclasses.replace(
        package, producer=producer(root), signature=signature(root, package), modules=module_tree(root, class_names)
    )


def producer(gm: fx.GraphModule) -> str:
    """What made the graph, as far as the GraphModule tells: `torch.export`, `torch.fx.symbolic_trace`, ..."""
    if isinstance(gm.graph._codegen, _PyTreeCodeGen) and "_guards_fn" in gm._modules:
        return "torch.export"
    tracer = getattr(gm, "_tracer_cls", None) or gm.graph._tracer_cls
    if tracer is fx.Tracer:
        return "torch.fx.symbolic_trace"
    if isinstance(tracer, type) and issubclass(tracer, fx.Tracer):
        return f"{tracer.__module__}.{tracer.__qualname__} (a torch.fx.Tracer)"
    return "torch.fx GraphModule"


def signature(root: fx.GraphModule, package: PackageIR) -> SignatureIR:
    """The root forward's parameters (as the generated code names them) and what the graph recorded about them."""
    params = next(c.forward_params for c in package.classes if c.is_root)
    placeholders = root.graph.find_nodes(op="placeholder")
    if pytree_info(root.graph) is not None:  # torch.export: placeholders are the leaves of the arguments
        inputs = tuple(value(node.name, node.meta) for node in placeholders)
    else:
        inputs = tuple(value(code.split("=", 1)[0], node.meta) for code, node in zip(params, placeholders))
    return SignatureIR(params, example_call(params), inputs, outputs(root.graph.output_node().args[0], "output"))


def example_call(params: tuple[str, ...]) -> str:
    """`model(x, y)`: the parameters without a default, keyword-only ones (after `*args`) by keyword."""
    parts: list[str] = []
    starred = False
    for code in params:
        starred = starred or code.startswith("*")
        if "=" not in code and not code.startswith("*"):
            parts.append(f"{code}={code}" if starred else code)
    return f"model({', '.join(parts)})"


def outputs(result: Any, label: str) -> tuple[ValueIR, ...]:
    """One ValueIR per leaf of the output structure, labelled like `output[0]` or `output['logits']`."""
    if isinstance(result, fx.Node):
        return (value(label, result.meta),)
    if isinstance(result, (tuple, list)):
        return tuple(v for index, item in enumerate(result) for v in outputs(item, f"{label}[{index}]"))
    if isinstance(result, dict):
        return tuple(v for key, item in result.items() for v in outputs(item, f"{label}[{key!r}]"))
    return (ValueIR(label, type(result).__name__),)


def value(name: str, meta: Mapping[str, Any]) -> ValueIR:
    """Read `meta["val"]` (torch.export, FakeTensorProp) or `meta["tensor_meta"]`/`meta["type"]` (ShapeProp)."""
    recorded = meta.get("val", meta.get("tensor_meta"))
    if isinstance(recorded, (torch.Tensor, TensorMetadata)):
        return ValueIR(
            name, "tensor", str(recorded.dtype).removeprefix("torch."), tuple(str(d) for d in recorded.shape)
        )
    if recorded is not None:
        return ValueIR(name, _SYMBOLIC.get(type(recorded), type(recorded).__name__))
    if isinstance(meta.get("type"), type):
        return ValueIR(name, meta["type"].__name__)
    return ValueIR(name)


def module_tree(root: fx.GraphModule, class_names: Mapping[str, str]) -> tuple[ModuleIR, ...]:
    """Every module once, in definition order, with the class the generated code builds for it."""
    return tuple(
        ModuleIR(path, class_names.get(path, type(module).__name__))
        for path, module in root.named_modules()
        if not is_guards_module(module)  # written as input checks in forward, not built
    )
