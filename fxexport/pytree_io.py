"""torch.export's pytree calling convention as plain Python: flatten inputs, rebuild outputs.

`torch.export(...).module()` graphs take their original arguments and flatten them with an
input TreeSpec, and rebuild their result with an output TreeSpec. For tuples, lists, dicts and
None that becomes ordinary indexing and literals; anything else keeps torch's own (JSON, not
pickle) TreeSpec through `torch.utils._pytree.treespec_loads`.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch.utils._pytree as pytree
from torch import fx
from torch.fx.immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from torch.fx.graph import _PyTreeInfo

SEQUENCES = (tuple, list, immutable_list)
MAPPINGS = (dict, immutable_dict, collections.OrderedDict)


class NotPlain(Exception):
    """A TreeSpec node that is not a tuple, list, dict or None."""


def pytree_info(graph: fx.Graph) -> _PyTreeInfo | None:
    """The `_PyTreeInfo` of an export graph, or None for a graph with plain placeholders."""
    codegen = getattr(graph, "_codegen", None)
    return getattr(codegen, "pytree_info", None) if isinstance(codegen, fx.graph._PyTreeCodeGen) else None


def leaf_accesses(spec: pytree.TreeSpec, expr: str, key_code: Callable[[Any], str]) -> list[str]:
    """An access expression per leaf, in flatten order: `x`, `x[0]`, `inputs['a'][1]`."""
    if spec.is_leaf():
        return [expr]
    if spec.type is type(None):
        return []
    if spec.type in SEQUENCES or spec.type is collections.namedtuple:
        return [a for i, child in enumerate(spec.children()) for a in leaf_accesses(child, f"{expr}[{i}]", key_code)]
    if spec.type in MAPPINGS:
        return [a for key, child in zip(spec.context, spec.children()) for a in leaf_accesses(child, f"{expr}[{key_code(key)}]", key_code)]
    raise NotPlain(str(spec.type))


def structure_code(spec: pytree.TreeSpec, leaves: Iterator[str], key_code: Callable[[Any], str],
                   class_code: Callable[[type], str]) -> str:  # fmt: skip
    """The expression that rebuilds an output structure from leaf expressions; `class_code` names output classes."""
    if spec.is_leaf():
        return next(leaves)
    if spec.type is type(None):
        return "None"
    items = [structure_code(child, leaves, key_code, class_code) for child in spec.children()]
    if spec.type is collections.namedtuple:  # pytree's namedtuple node: the class is the context
        return f"{class_code(spec.context)}({', '.join(items)})"
    if (fields := dataclass_fields(spec)) is not None:
        values = [f"{name}={'None' if index is None else items[index]}" for name, index in fields]
        return f"{class_code(spec.type)}({', '.join(values)})"
    if spec.type is tuple:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if spec.type in (list, immutable_list):
        return f"[{', '.join(items)}]"
    if spec.type in MAPPINGS:
        mapping = "{" + ", ".join(f"{key_code(k)}: {v}" for k, v in zip(spec.context, items)) + "}"
        return f"{class_code(spec.type)}({mapping})" if spec.type is collections.OrderedDict else mapping
    raise NotPlain(str(spec.type))


def rebuilt_class(spec: pytree.TreeSpec) -> type | None:
    """The class `structure_code` writes a constructor call of, if any."""
    if spec.type is collections.namedtuple:
        return spec.context
    return spec.type if spec.type is collections.OrderedDict or dataclass_fields(spec) is not None else None


def dataclass_fields(spec: pytree.TreeSpec) -> list[tuple[str, int | None]] | None:
    """(field, child index or None) for a dataclass node, from either context pytree uses for one.

    A dict-like dataclass (transformers' ModelOutput) has its keys as context; one registered
    with `register_dataclass` has `[fields with a value, fields that are None]`.
    """
    if not (isinstance(spec.type, type) and dataclasses.is_dataclass(spec.type)) or not isinstance(spec.context, list):
        return None
    names = {f.name for f in dataclasses.fields(spec.type)}
    keyed, rest = spec.context, []
    if len(spec.context) == 2 and all(isinstance(part, list) for part in spec.context):
        keyed, rest = spec.context
    if len(keyed) != spec.num_children or not all(isinstance(k, str) and k in names for k in [*keyed, *rest]):
        return None
    return [*((k, i) for i, k in enumerate(keyed)), *((k, None) for k in rest)]


def spec_json(spec: pytree.TreeSpec) -> str:
    """The TreeSpec as torch's JSON (what `treespec_loads` reads back)."""
    return pytree.treespec_dumps(spec)
