"""Record what a source module does, then check exported packages against it in one fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import fx, nn

from fxexport.guards import is_guards_module
from fxexport.module_paths import prefixes
from fxexport.producers import normalize
from tests.structure import alignments, flatten, layouts, plain_state, storage_sharing, tensor_sharing

REPO = Path(__file__).resolve().parent.parent
CHECKER = Path(__file__).resolve().parent / "check_packages.py"


class _Encoder:
    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}

    def encode(self, value: Any, prefix: str) -> Any:
        if isinstance(value, torch.Tensor):
            key = f"{prefix}.{len(self.tensors)}"
            self.tensors[key] = value.detach().clone().contiguous()
            return {"__tensor__": key}
        if isinstance(value, dict):
            return {k: self.encode(v, prefix) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.encode(v, prefix) for v in value]
        return value


def record(name: str, gm: fx.GraphModule, args: tuple[Any, ...], kwargs: dict[str, Any], seed: int | None, folder: Path,
           class_name: str = "FxModule") -> None:
    """Run `gm` and write its inputs, outputs and state to `folder/name.{json,safetensors}`."""
    encoder = _Encoder()
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        out = gm(*args, **kwargs)
    leaves, structure = flatten(out)
    gm = normalize(gm)  # unflattened modules: compare structure with their GraphModule form
    state = plain_state(gm)
    buffers = dict(gm.named_buffers(remove_duplicate=False))
    for key, value in state.items():
        encoder.tensors[f"state.{key}"] = value.detach().clone().contiguous()
    for key, value in buffers.items():
        encoder.tensors[f"buffer.{key}"] = value.detach().clone().contiguous()
    spec = {
        "class_name": class_name,
        "seed": seed,
        "threads": torch.get_num_threads(),  # the check runs with as many: results may depend on it
        "args": encoder.encode(list(args), "arg"),
        "kwargs": encoder.encode(kwargs, "kwarg"),
        "outputs": encoder.encode(leaves, "out"),
        "structure": structure,
        "state_keys": list(gm.state_dict()),
        "buffers": list(buffers),
        "requires_grad": {k: p.requires_grad for k, p in gm.named_parameters(remove_duplicate=False)},
        "training": expected_training(gm),
        "sharing": tensor_sharing(gm),
        "storages": storage_sharing(gm),
        "layouts": layouts(gm),
        "alignment": alignments(gm),
        "classes": expected_classes(gm),
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(spec, indent=1))
    save_file(encoder.tensors, str(folder / f"{name}.safetensors"))


# A plain holder module may come back as the container it stands for (numbered children: a list).
HOLDER_CLASSES = ["Module", "Sequential", "ModuleList", "ModuleDict"]


# ATen calls of a layer whose mode is an argument (torch.export traces a model in the mode it is in):
# overload -> the position of its training flag, or the flag itself.
_MODE_ARGUMENT: dict[Any, int | bool] = {
    torch.ops.aten.batch_norm.default: 5,
    torch.ops.aten._native_batch_norm_legit_no_training.default: False,
    torch.ops.aten.dropout.default: 2,
    torch.ops.aten.dropout_.default: 2,
}


_MODE_LAYERS = {f"torch.nn.modules.batchnorm.BatchNorm{d}d" for d in (1, 2, 3)} | {"torch.nn.modules.dropout.Dropout"}


def expected_training(gm: fx.GraphModule) -> dict[str, bool]:
    """Each module's training flag: its own, but a torch.nn BatchNorm or Dropout traced into ops runs in the
    mode its ops ran in (an argument of theirs), as the restored layer must to give the same results; and
    when all of those ran in eval, the model was traced in eval: every module is (but higher-order ops' graphs)."""
    flags = {k: m.training for k, m in _modules(gm)}
    modes = {}
    for node in gm.graph.nodes:
        mode = _MODE_ARGUMENT.get(node.target)
        stack = list((node.meta.get("nn_module_stack") or {}).values())
        if mode is not None and stack and _qualified(stack[-1][1]) in _MODE_LAYERS:  # held or not (a stateless Dropout)
            modes[stack[-1][0]] = mode if isinstance(mode, bool) else bool(node.args[mode])
    trained = any(_MODE_ARGUMENT.get(n.target) not in (None, False) and n.args[_MODE_ARGUMENT[n.target]] for n in gm.graph.nodes)
    if modes and not any(modes.values()) and not trained:
        return {k: m.training if k and isinstance(m, fx.GraphModule) else False for k, m in _modules(gm)}
    return {**flags, **{k: mode for k, mode in modes.items() if not mode and k in flags}}  # traced in training, a layer keeps its ops


def _qualified(cls: Any) -> str:
    return f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else str(cls)


ANY_CLASS = "*"  # expected_classes: the module may come back as any class


def expected_classes(gm: fx.GraphModule) -> dict[str, list[str]]:
    """The class names each module may have in the export: its own; a holder's container or the
    source class its recorded calls name (the structured export's generated class); any class, for
    a holder of a graph that recorded no calls, or of one that recorded layers' calls past holders it
    did not record (the export infers them and names the class, see inferred_stacks.py)."""
    recorded: dict[str, set[str]] = {}
    bodies = [m for m in gm.modules() if isinstance(m, fx.GraphModule)]  # a higher-order op's body records its calls too
    for node in (n for body in bodies for n in body.graph.nodes):
        for path, cls in (node.meta.get("nn_module_stack") or {}).values():
            recorded.setdefault(path, set()).add(cls.__name__ if isinstance(cls, type) else str(cls).rpartition(".")[2])
    past_holders = any(p.count(".") >= 2 and not any(q in recorded for q in prefixes(p)[:-1]) for p in recorded)
    classes = {}
    for path, module in _modules(gm):
        if isinstance(module, fx.GraphModule):
            continue
        name = type(module).__name__
        unrecorded = past_holders and not any(q in recorded for q in prefixes(path))
        inferred = [ANY_CLASS] if not recorded or unrecorded else []
        classes[path] = sorted({name, *HOLDER_CLASSES, *recorded.get(path, ()), *inferred}) if name == "Module" else [name]
    return classes


def _modules(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Every module but torch.export's `_guards_fn`, which the export writes as code in forward, and the
    bodies of its grad and autocast regions, which it writes as `with` blocks (with_blocks.py)."""
    bodies = _with_block_bodies(model)
    return [(k, m) for k, m in model.named_modules(remove_duplicate=False) if not is_guards_module(m) and id(m) not in bodies]


def _with_block_bodies(model: nn.Module) -> set[int]:
    """The ids of the GraphModules `wrap_with_autocast` and `wrap_with_set_grad_enabled` run."""
    body_at = {getattr(torch.ops.higher_order, name, None): at for name, at in (("wrap_with_autocast", 4), ("wrap_with_set_grad_enabled", 1))}
    found = set()
    for module in model.modules():
        for node in module.graph.nodes if isinstance(module, fx.GraphModule) else ():
            at = body_at.get(node.target) if node.op == "call_function" else None
            if at is not None and isinstance(node.args[at], fx.Node):
                found.add(id(module.get_submodule(str(node.args[at].target))))
    return found


def check_in_fresh_process(packages: Path, expect: Path, names: list[str], block: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Import and check every named package in one new interpreter; returns problems per name."""
    return {name: details["problems"] for name, details in check_details(packages, expect, names, block).items()}


def check_details(packages: Path, expect: Path, names: list[str], block: tuple[str, ...] = (), tolerance: float = 0.0,
                  python: str = sys.executable) -> dict[str, Any]:  # fmt: skip
    """Per name: problems, exact (bool), max_error and load_seconds; `block` names modules the process cannot import;
    `python` the interpreter that checks (another torch version's, for the cross-version check)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}  # REPO: user functions the exports import
    options = ["--block", ",".join(block), "--rtol", str(tolerance), "--atol", str(tolerance)]
    result = subprocess.run(
        [python, str(CHECKER), *options, str(packages), str(expect), *names],
        capture_output=True, text=True, cwd=packages, env=env, timeout=1800,
    )  # fmt: skip
    if result.returncode != 0:
        raise AssertionError(f"checker failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])
