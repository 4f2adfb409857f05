"""Run in a fresh process: import exported packages and compare them with recorded expectations.

Usage: python check_packages.py PACKAGES_DIR EXPECT_DIR NAME... ; prints one JSON report.
The process cannot import fxexport, and torch.load refuses weights_only=False.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.modules["fxexport"] = None  # type: ignore[assignment]  # the export must not need fxexport

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

_torch_load = torch.load


def _guarded_load(*args, **kwargs):
    if kwargs.get("weights_only") is False:
        raise AssertionError("torch.load(weights_only=False) is forbidden here")
    return _torch_load(*args, **kwargs)


torch.load = _guarded_load


def _decode(value, tensors):
    if isinstance(value, dict) and "__tensor__" in value:
        return tensors[value["__tensor__"]]
    if isinstance(value, dict):
        return {k: _decode(v, tensors) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    return value


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return type(a) is type(b) and a == b


def check(name: str, packages: Path, expect: Path) -> list[str]:
    spec = json.loads((expect / f"{name}.json").read_text())
    tensors = load_file(str(expect / f"{name}.safetensors"))
    module = importlib.import_module(name)
    model = getattr(module, spec["class_name"])()
    problems = []
    args = _decode(spec["args"], tensors)
    kwargs = _decode(spec["kwargs"], tensors)
    if spec["seed"] is not None:
        torch.manual_seed(spec["seed"])
    with torch.no_grad():
        out = model(*args, **kwargs)
    leaves, treespec = pytree.tree_flatten(out)
    if str(treespec) != spec["treespec"]:
        problems.append(f"output structure {treespec} != {spec['treespec']}")
    expected = _decode(spec["outputs"], tensors)
    for index, (got, want) in enumerate(zip(leaves, expected)):
        if not _same(got, want):
            problems.append(f"output leaf {index} differs")
    state = model.state_dict()
    if list(state) != spec["state_keys"]:
        problems.append(f"state_dict keys {list(state)} != {spec['state_keys']}")
    for key, value in state.items():
        if key in spec["state_keys"] and not _same(value, tensors[f"state.{key}"]):
            problems.append(f"state_dict[{key!r}] differs")
    buffers = dict(model.named_buffers(remove_duplicate=False))
    if sorted(buffers) != sorted(spec["buffers"]):
        problems.append(f"buffers {sorted(buffers)} != {sorted(spec['buffers'])}")
    for key in spec["buffers"]:
        if key in buffers and not _same(buffers[key], tensors[f"buffer.{key}"]):
            problems.append(f"buffer {key!r} differs")
    grads = {k: p.requires_grad for k, p in model.named_parameters(remove_duplicate=False)}
    if grads != spec["requires_grad"]:
        problems.append(f"requires_grad {grads} != {spec['requires_grad']}")
    training = {k: m.training for k, m in model.named_modules(remove_duplicate=False)}
    if training != spec["training"]:
        problems.append(f"training flags {training} != {spec['training']}")
    if _sharing(model) != spec["sharing"]:
        problems.append(f"shared tensors {_sharing(model)} != {spec['sharing']}")
    classes = {k: type(m).__name__ for k, m in model.named_modules(remove_duplicate=False)}
    rebuilt = {k: classes.get(k) for k in spec["classes"]}
    if rebuilt != spec["classes"]:
        problems.append(f"module classes {rebuilt} != {spec['classes']}")
    return problems


def _sharing(model: torch.nn.Module) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for key, tensor in [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]:
        groups.setdefault(id(tensor), []).append(key)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def main() -> None:
    packages, expect, *names = sys.argv[1:]
    sys.path.insert(0, packages)
    report = {}
    for name in names:
        try:
            report[name] = check(name, Path(packages), Path(expect))
        except Exception as error:  # noqa: BLE001 - report, do not stop: one process checks many packages
            report[name] = [f"{type(error).__name__}: {error}"]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
