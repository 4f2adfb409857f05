"""Modules a module runs that its model holds elsewhere: CoaT's blocks run the encoder the model holds as `cpe1`.

timm's CoaT builds one position encoder per stage, holds it as `self.cpe1` and hands it to each block of
the stage, which holds it too (`self.cpe = shared_cpe`) and runs it. symbolic_trace records the call
under the first path the model holds the module at (`cpe1`), and its GraphModule holds the module there
only, so its state_dict lists those tensors once. The block's call is still cut out as a method: it runs
the module under a name of its own (`self.cpe(x, size)`), an attribute the model's `__init__` sets on
each block without registering a child, so that `state_dict()`, `named_modules()` and a re-trace find the
module where the GraphModule holds it:

    object.__setattr__(self.serial_blocks1[0], "cpe", self.cpe1)

The attribute is named after the module's last name without its number (`cpe` for `cpe1` and `cpe2`),
so that the blocks of every stage share one class.
"""

from __future__ import annotations

import functools
import keyword
import re

from torch import fx, nn

from .calls import Call
from .module_paths import within

SHARED_MODULES = "fxexport_shared_modules"  # meta of a cut-out module: ((attribute, path of the module it runs), ...)


def outside_paths(call: Call) -> list[str]:
    """The modules the call runs itself (a nested call, or a layer) that its own module does not hold, first run first."""
    found: dict[str, None] = {}
    for item in call.items:
        path = item.frame.path if isinstance(item, Call) else str(item.target) if item.op == "call_module" else None
        if path is not None and not within(path, call.frame.path):
            found[path] = None
    return list(found)


def shared_names(call: Call, module: nn.Module, modules: dict[str, nn.Module]) -> dict[str, str] | str:
    """For each module the call runs that its own module does not hold (`outside_paths`), the attribute its
    method runs it as; or why there is none."""
    paths = outside_paths(call)
    for path in paths:
        if path not in modules:
            return f"it calls module {path!r}, which is not one of its submodules"
        if within(call.frame.path, path):
            return f"it calls module {path!r}, which holds it"
    names = {path: attribute_name(path) for path in paths}
    if len(set(names.values())) < len(names):
        names = {path: attribute_name(path, numbered=True) for path in paths}
    for path, name in names.items():
        if not _attribute_like(name):
            return f"it calls module {path!r}, held outside it, and {name!r} is no name to run it as"
        if _taken(name, module) or list(names.values()).count(name) > 1:
            return f"it calls module {path!r}, held outside it, and has no free attribute to run it as ({name!r} is taken)"
    return names


def attribute_name(path: str, numbered: bool = False) -> str:
    """`cpe` for `cpe1` (`cpe1` when `numbered`): the module's last name, its number dropped."""
    last = path.rpartition(".")[2]
    return last if numbered else re.sub(r"(?<=[A-Za-z_])[0-9]+$", "", last)


def _attribute_like(name: str) -> bool:
    """True for a plain ASCII identifier, not a keyword or a dunder."""
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__")


def _taken(name: str, module: nn.Module) -> bool:
    """True when the module, or a GraphModule made of it (fx's `meta`, `graph`, ...), has `name` already."""
    return hasattr(module, name) or name in _graph_module_names()


@functools.cache
def _graph_module_names() -> frozenset[str]:
    """Every name a GraphModule has, its class's and those fx sets on each (made once, when first asked)."""
    return frozenset(dir(fx.GraphModule(nn.Module(), fx.Graph())))
