"""torch.export's pytree calling convention as plain Python: flatten inputs, rebuild outputs.

`torch.export(...).module()` graphs take their original arguments and flatten them with an
input TreeSpec, and rebuild their result with an output TreeSpec. For tuples, lists, dicts and
None that becomes ordinary indexing and literals; anything else keeps torch's own (JSON, not
pickle) TreeSpec through `torch.utils._pytree.treespec_loads`.
"""

from __future__ import annotations

import collections
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
    if spec.type in SEQUENCES or _is_namedtuple(spec.type):
        return [a for i, child in enumerate(spec.children()) for a in leaf_accesses(child, f"{expr}[{i}]", key_code)]
    if spec.type in MAPPINGS:
        return [a for key, child in zip(spec.context, spec.children()) for a in leaf_accesses(child, f"{expr}[{key_code(key)}]", key_code)]
    raise NotPlain(str(spec.type))


def structure_code(spec: pytree.TreeSpec, leaves: Iterator[str], key_code: Callable[[Any], str]) -> str:
    """The expression that rebuilds an output structure from leaf expressions."""
    if spec.is_leaf():
        return next(leaves)
    if spec.type is type(None):
        return "None"
    items = [structure_code(child, leaves, key_code) for child in spec.children()]
    if spec.type is tuple:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if spec.type in (list, immutable_list):
        return f"[{', '.join(items)}]"
    if spec.type in (dict, immutable_dict):
        return "{" + ", ".join(f"{key_code(k)}: {v}" for k, v in zip(spec.context, items)) + "}"
    raise NotPlain(str(spec.type))


def _is_namedtuple(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def spec_json(spec: pytree.TreeSpec) -> str:
    """The TreeSpec as torch's JSON (what `treespec_loads` reads back)."""
    return pytree.treespec_dumps(spec)
