"""Run in a fresh process: import exported packages and compare them with recorded expectations.

Usage: python check_packages.py [--block a,b] [--rtol R --atol A] PACKAGES_DIR EXPECT_DIR NAME...
Prints one JSON report: for each name its problems, whether outputs matched exactly, the
largest output difference, and the seconds the import and construction took.
The process cannot import fxexport (nor the --block modules), and torch.load is forced to
weights_only=True (a call asking for weights_only=False fails).
"""

from __future__ import annotations

import argparse
import sys

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--block", default="", help="comma-separated modules that must not be importable")
ARGS.add_argument("--rtol", type=float, default=0.0)
ARGS.add_argument("--atol", type=float, default=0.0)
ARGS.add_argument("packages")
ARGS.add_argument("expect")
ARGS.add_argument("names", nargs="*")
OPTIONS = ARGS.parse_args()
for _blocked in ["fxexport", *filter(None, OPTIONS.block.split(","))]:
    sys.modules[_blocked] = None  # type: ignore[assignment]  # the export must not need these

import importlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from tests.structure import alignments, flatten, layouts, plain_state, storage_sharing, tensor_sharing  # noqa: E402

_torch_load = torch.load


def _forced_load(*args, **kwargs):
    if kwargs.get("weights_only") is False:
        raise AssertionError("torch.load(weights_only=False) is forbidden here")
    return _torch_load(*args, **{**kwargs, "weights_only": True})


torch.load = _forced_load


def aligned(tensor: torch.Tensor) -> torch.Tensor:
    """A copy in fresh memory: tensors read from a file may sit anywhere, and kernels pick their
    paths by alignment, so an input must be placed as the source's was (by the allocator)."""
    return tensor.clone()


def _decode(value, tensors):
    if isinstance(value, dict) and "__tensor__" in value:
        return aligned(tensors[value["__tensor__"]])
    if isinstance(value, dict):
        return {k: _decode(v, tensors) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    return value


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return type(a) is type(b) and a == b


def _error(got, want) -> float:
    """The largest absolute difference of two tensors (inf when they cannot be compared)."""
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)) or got.shape != want.shape or got.dtype != want.dtype:
        return float("inf")
    if not got.is_floating_point():
        return 0.0 if torch.equal(got, want) else float("inf")
    return float((got.double() - want.double()).abs().nan_to_num(0.0).max()) if got.numel() else 0.0


def _close(got, want) -> bool:
    if isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor) and got.is_floating_point() and _error(got, want) < float("inf"):
        return bool(torch.allclose(got, want, rtol=OPTIONS.rtol, atol=OPTIONS.atol, equal_nan=True))
    return False


def check_outputs(leaves, structure, spec, tensors, report) -> None:
    if structure != spec["structure"]:
        report["problems"].append(f"output structure {structure} != {spec['structure']}")
    expected = _decode(spec["outputs"], tensors)
    for index, (got, want) in enumerate(zip(leaves, expected)):
        if _same(got, want):
            continue
        report["exact"] = False
        report["max_error"] = max(report["max_error"], _error(got, want))
        if not _close(got, want):
            report["problems"].append(f"output leaf {index} differs (max abs error {_error(got, want):.3g})")


def check(name: str, packages: Path, expect: Path, report: dict) -> None:
    """Fill `report`: loaded once the class is built, then output and state problems."""
    spec = json.loads((expect / f"{name}.json").read_text())
    tensors = load_file(str(expect / f"{name}.safetensors"))
    start = time.perf_counter()
    module = importlib.import_module(name)
    model = getattr(module, spec["class_name"])()
    report.update(loaded=True, load_seconds=time.perf_counter() - start)
    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])  # as the source ran: a reduction may split by thread count
    args = _decode(spec["args"], tensors)
    kwargs = _decode(spec["kwargs"], tensors)
    if spec["seed"] is not None:
        torch.manual_seed(spec["seed"])
    with torch.no_grad():
        out = model(*args, **kwargs)
    check_outputs(*flatten(out), spec, tensors, report)
    report["problems"] += state_problems(model, spec, tensors)


def state_problems(model: torch.nn.Module, spec: dict, tensors: dict) -> list[str]:
    problems = []
    if list(model.state_dict()) != spec["state_keys"]:
        problems.append(f"state_dict keys {list(model.state_dict())} != {spec['state_keys']}")
    for key, value in plain_state(model).items():
        if f"state.{key}" not in tensors or not _same(value, tensors[f"state.{key}"]):
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
    # A stateless module the source GraphModule did not keep (traced through) may come back as its class.
    training = {k: m.training for k, m in model.named_modules(remove_duplicate=False) if k in spec["training"] or _holds_tensors(m)}
    if training != spec["training"]:
        problems.append(f"training flags {training} != {spec['training']}")
    if tensor_sharing(model) != spec["sharing"]:
        problems.append(f"shared tensors {tensor_sharing(model)} != {spec['sharing']}")
    if storage_sharing(model) != spec["storages"]:
        problems.append(f"tensors sharing a storage {storage_sharing(model)} != {spec['storages']}")
    if layouts(model) != spec["layouts"]:
        problems.append(f"strides and storage offsets {layouts(model)} != {spec['layouts']}")
    if alignments(model) != spec["alignment"]:
        problems.append(f"tensors not aligned as the source's (data_ptr % 64): {alignments(model)} != {spec['alignment']}")
    classes = dict(model.named_modules(remove_duplicate=False))
    wrong = {k: type(classes[k]).__name__ if k in classes else None for k, names in spec["classes"].items()
             if k not in classes or not _is_one_of(type(classes[k]).__name__, names)}  # fmt: skip
    if wrong:
        problems.append(f"module classes {wrong} are none of {({k: spec['classes'][k] for k in wrong})}")
    return problems


def _holds_tensors(module: torch.nn.Module) -> bool:
    return any(True for _ in module.parameters()) or any(True for _ in module.buffers())


def _is_one_of(name: str, expected: list[str]) -> bool:
    """A generated class specialised for one configuration is `Name_2` or `NameWithX`: it counts as `Name`."""
    if "*" in expected:  # roundtrip.ANY_CLASS: a holder whose calls the export inferred (any generated class)
        return True
    names = {e for e in expected} | {_camel(e) for e in expected}  # a generated class is named in CamelCase: `_DenseLayer` -> `DenseLayer`
    return any(name == e or re.fullmatch(rf"{re.escape(e)}(_\d+|With\w+)", name) for e in names)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def main() -> None:
    sys.path.insert(0, OPTIONS.packages)
    report = {}
    for name in OPTIONS.names:
        report[name] = {"problems": [], "loaded": False, "exact": True, "max_error": 0.0, "load_seconds": 0.0}
        try:
            check(name, Path(OPTIONS.packages), Path(OPTIONS.expect), report[name])
        except Exception as error:  # noqa: BLE001 - report, do not stop: one process checks many packages
            report[name]["problems"].append(f"{type(error).__name__}: {error}")
            report[name]["exact"] = False
    print(json.dumps(report))


if __name__ == "__main__":
    main()
