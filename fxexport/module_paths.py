"""Dotted module paths (`blocks.0.attn`), "" for the root: their prefixes, depth and nesting; the module at one."""

from __future__ import annotations

from torch import fx, nn

CALLED_PATH = "fxexport_called_path"  # meta of a call of a module held outside its caller: the module's path (shared_modules.py)


def prefixes(path: str) -> list[str]:
    """`a`, `a.b`, `a.b.c` for `a.b.c`; none for the root."""
    parts = path.split(".") if path else []
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def depth(path: str) -> int:
    """How many names the path has: 0 for the root."""
    return path.count(".") + 1 if path else 0


def within(path: str, ancestor: str) -> bool:
    """True when `path` is `ancestor` or under it (everything is under the root)."""
    return not ancestor or path == ancestor or path.startswith(f"{ancestor}.")


def joined(path: str, name: str) -> str:
    """The path of `name` (a path itself) under the module at `path`: `a.b.c` for `a.b` and `c`."""
    return f"{path}.{name}" if path else name


def called_path(path: str, call: fx.Node) -> str:
    """The path of the module a `call_module` node of the graph of the module at `path` calls: its target
    under that module, or the path of a module held elsewhere that it runs as an attribute of its own."""
    return call.meta.get(CALLED_PATH) or joined(path, str(call.target))


def relative(path: str, ancestor: str) -> str:
    """`path` as seen from the module at `ancestor`, which holds it: `c` of `a.b.c` from `a.b`."""
    return path[len(ancestor) + 1 :] if ancestor else path


def parent(path: str) -> str:
    """The path of the module holding the one at `path` ("" for a child of the root)."""
    return path.rpartition(".")[0]


def submodule(root: nn.Module, path: str) -> nn.Module:
    """`root.get_submodule(path)`, read off the modules' `_modules` where attribute access finds the child
    there (_found_as_child); else asked of get_submodule, which looks each name up twice through
    `__getattr__` (17 us for `blocks.0.attention.qkv`, against 5 us here: 2 ms of the bench transformer's export)."""
    if type(root).get_submodule is not nn.Module.get_submodule:
        return root.get_submodule(path)
    module = root
    for name in path.split(".") if path else ():
        child = module._modules.get(name)
        if child is None or not _found_as_child(module, name):
            return root.get_submodule(path)
        module = child
    return module


def _found_as_child(module: nn.Module, name: str) -> bool:
    """True when `getattr(module, name)` surely is its child `name`: no attribute of its class or of its own,
    no parameter or buffer comes first, and nn.Module's own `__getattr__` finds it."""
    return (
        type(module).__getattr__ is nn.Module.__getattr__
        and name not in module.__dict__
        and name not in module._parameters
        and name not in module._buffers
        and not hasattr(type(module), name)
    )
