"""verify: check an export against its manifest, and optionally against its source, numerically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.utils._pytree as pytree

from .bytecode import pyc as compiled_pyc
from .bytecode import pyc_path
from .diff import export_manifest
from .digests import Digest, file_digest
from .errors import FxExportError, user_code
from .write import MANIFEST


@dataclass(frozen=True)
class OutputError:
    """How far output `index` of the export is from the source's; `problem` explains a mismatch."""

    index: int
    max_abs: float
    max_rel: float
    problem: str = ""


@dataclass(frozen=True)
class VerifyResult:
    """What verify found for `folder`: problems (none means OK) and, against a source, per-output errors."""

    folder: Path
    problems: tuple[str, ...]
    outputs: tuple[OutputError, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no problems were found."""
        return not self.problems

    def report(self) -> str:
        """Human-readable: one line per output and per problem, then OK or the problem count."""
        lines = [f"output {o.index}: max abs error {o.max_abs:.3g}, max rel error {o.max_rel:.3g}{o.problem}" for o in self.outputs]
        lines += [f"problem: {p}" for p in self.problems]
        lines.append(f"{self.folder}: {'OK' if self.ok else f'{len(self.problems)} problem(s)'}")
        return "\n".join(lines)


def _digest_problem(path: Path, recorded: str) -> str | None:
    """What is wrong with the file at `path` given its manifest digest (blake3, or format 1's sha256), if anything."""
    expected = Digest.parse(recorded)
    try:
        found = file_digest(path, expected.algorithm)
    except ValueError:
        return f"file {path.name!r} has a digest of unknown algorithm {expected.algorithm!r} in the manifest"
    if found != expected:
        return f"file {path.name!r} was altered or truncated ({expected.algorithm} differs)"
    return None


def _weight_problems(path: Path, expected: dict[str, Any]) -> list[str]:
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as weights:
            found = {k: weights.get_slice(k) for k in weights.keys()}
            shapes = {k: (list(s.get_shape()), str(s.get_dtype())) for k, s in found.items()}
    except Exception as error:  # noqa: BLE001 - any read failure means a damaged file
        return [f"{path.name}: cannot be read as safetensors ({error})"]
    problems = [f"{path.name}: tensor {k!r} is missing" for k in sorted(set(expected) - set(shapes))]
    problems += [f"{path.name}: tensor {k!r} is not in the manifest" for k in sorted(set(shapes) - set(expected))]
    for key in sorted(set(expected) & set(shapes)):
        shape, _ = shapes[key]
        if shape != expected[key].get("shape"):
            problems.append(f"{path.name}: tensor {key!r} has shape {shape}, manifest says {expected[key].get('shape')}")
    return problems


def verify_files(folder: str | Path) -> VerifyResult:
    """Every file listed with the right digest, no extra files, every tensor present with its shape."""
    folder = Path(folder)
    manifest = export_manifest(folder)
    files: dict[str, str] = dict(manifest.get("files", {}))
    present = {p.name for p in folder.iterdir() if p.is_file()} - {MANIFEST}
    problems = [f"file {name!r} is missing" for name in sorted(set(files) - present)]
    problems += [f"file {name!r} is not in the manifest" for name in sorted(present - set(files))]
    problems += [problem for name in sorted(set(files) & present) if (problem := _digest_problem(folder / name, files[name]))]
    tensors: dict[str, Any] = dict(manifest.get("tensors", {}))
    for name in sorted(n for n in set(files) & present if n.endswith(".safetensors")):
        # not views, nor tensor subclasses (stored as their parts)
        in_file = {k: v for k, v in tensors.items() if v.get("file", name) == name and v.get("storage", k) == k and "subclass" not in v}
        problems += _weight_problems(folder / name, in_file)
    problems += _bytecode_problems(folder, sorted(n for n in set(files) & present if n.endswith(".py")))
    return VerifyResult(folder, tuple(problems))


def _compiled(path: Path, relative: str) -> bytes | None:
    """The pyc the source at `path` compiles to; None where it does not compile."""
    try:
        return compiled_pyc(path.read_bytes(), relative)
    except (SyntaxError, ValueError):
        return None


def _bytecode_problems(folder: Path, sources: list[str]) -> list[str]:
    """A pyc of this interpreter's in `__pycache__` must be what compiling its source gives now."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return []
    shipped = {name: pyc_path(folder, name, tag) for name in sources}
    shipped = {name: pyc for name, pyc in shipped.items() if pyc.is_file()}
    fresh = {name: _compiled(folder / name, name) for name in shipped}
    return [
        f"bytecode {pyc.relative_to(folder)} is not what {name} compiles to (altered, or stale); delete {pyc.parent.name}"
        for name, pyc in shipped.items()
        if pyc.read_bytes() != fresh[name]
    ]


CHILD = r"""
import importlib, json, sys
sys.modules["fxexport"] = None
import torch
import torch.utils._pytree as pytree
from safetensors.torch import load_file, save_file
folder, class_name, data = sys.argv[1:4]
sys.path.insert(0, str(__import__("pathlib").Path(folder).resolve().parent))
package = importlib.import_module(__import__("pathlib").Path(folder).name)
model = getattr(package, class_name)()
spec = json.loads(open(data + ".json").read())
tensors = load_file(data + ".in.safetensors")
def decode(v):
    if isinstance(v, dict) and "__tensor__" in v: return tensors[v["__tensor__"]].clone()  # in fresh, aligned memory
    if isinstance(v, dict): return {k: decode(x) for k, x in v.items()}
    if isinstance(v, list): return [decode(x) for x in v]
    return v
with torch.no_grad():
    out = model(*decode(spec["args"]), **decode(spec["kwargs"]))
leaves, treespec = pytree.tree_flatten(out)
save_file({str(i): t.contiguous() for i, t in enumerate(leaves) if isinstance(t, torch.Tensor)}, data + ".out.safetensors")
print(json.dumps({"treespec": str(treespec), "others": {str(i): repr(v) for i, v in enumerate(leaves) if not isinstance(v, torch.Tensor)}}))
"""


def _encode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        key = str(len(tensors))
        tensors[key] = value.detach().contiguous()
        return {"__tensor__": key}
    if isinstance(value, dict):
        return {k: _encode(v, tensors) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v, tensors) for v in value]
    return value


def _error(index: int, got: Any, want: Any) -> OutputError:
    if not isinstance(want, torch.Tensor):
        return OutputError(index, 0.0, 0.0, "" if repr(want) == got else f" (got {got}, expected {want!r})")
    if got.shape != want.shape or got.dtype != want.dtype:
        return OutputError(index, float("inf"), float("inf"), f" ({got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)})")
    if want.numel() == 0 or not (want.is_floating_point() or want.is_complex()):
        return OutputError(index, 0.0 if torch.equal(got, want) else float("inf"), 0.0 if torch.equal(got, want) else float("inf"))
    diff = (got.double() - want.double()).abs()
    scale = want.double().abs().clamp_min(1e-12)
    return OutputError(index, diff.max().item(), (diff / scale).max().item())


def verify_against(folder: str | Path, source: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], *, rtol: float = 1e-5, atol: float = 1e-6) -> VerifyResult:
    """Import the export in a fresh process and compare its outputs with `source` on the same inputs."""
    folder = Path(folder)
    files = verify_files(folder)
    class_name = str(export_manifest(folder).get("module_name", "FxModule"))
    with torch.no_grad(), user_code("running the source on the example inputs failed"):
        # nn.Module's call, not GraphModule's: that prints a traceback to stderr before it re-raises
        expected = torch.nn.Module.__call__(source, *args, **kwargs)
    want, want_spec = pytree.tree_flatten(expected)
    from safetensors.torch import load_file, save_file

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        tensors: dict[str, torch.Tensor] = {}
        spec = {"args": _encode(list(args), tensors), "kwargs": _encode(kwargs, tensors)}
        try:
            Path(data + ".json").write_text(json.dumps(spec))
        except (TypeError, ValueError) as error:
            raise FxExportError(
                f"verify passes the example inputs to a fresh process, so they must be tensors, numbers, strings, "
                f"lists, tuples or dicts: {error}"
            ) from error
        save_file(tensors, data + ".in.safetensors")
        run = subprocess.run([sys.executable, "-c", CHILD, str(folder), class_name, data], capture_output=True, text=True)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["no output"])[-1]
            return VerifyResult(folder, (*files.problems, f"the package failed in a fresh process: {last}"))
        report = json.loads(run.stdout.strip().splitlines()[-1])
        got_tensors = load_file(data + ".out.safetensors")
    problems = list(files.problems)
    if report["treespec"] != str(want_spec):
        problems.append(f"output structure differs: {report['treespec']} != {want_spec}")
    outputs = []
    for index, value in enumerate(want):
        got = got_tensors.get(str(index), report["others"].get(str(index)))
        found = _error(index, got, value)
        outputs.append(found)
        if found.problem or found.max_abs > atol + rtol * _magnitude(value):
            problems.append(f"output {index} differs: max abs error {found.max_abs:.3g}{found.problem}")
    return VerifyResult(folder, tuple(problems), tuple(outputs))


def _magnitude(value: Any) -> float:
    if isinstance(value, torch.Tensor) and value.numel() and (value.is_floating_point() or value.is_complex()):
        return float(value.double().abs().max().item())
    return 0.0


def example_inputs(obj: Any, where: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A tuple of args, a dict with 'args'/'kwargs', or a zero-argument callable returning one."""
    if callable(obj) and not isinstance(obj, (tuple, dict, torch.Tensor)):
        with user_code(f"calling example inputs {where} with no arguments failed"):
            obj = obj()
    if isinstance(obj, torch.Tensor):
        return (obj,), {}
    if isinstance(obj, tuple):
        return obj, {}
    if isinstance(obj, dict) and set(obj) <= {"args", "kwargs"}:
        args, kwargs = obj.get("args", ()), obj.get("kwargs", {})
        if isinstance(args, (tuple, list)) and isinstance(kwargs, dict) and all(isinstance(k, str) for k in kwargs):
            return tuple(args), dict(kwargs)
    raise FxExportError(
        f"example inputs {where} must be a tuple of args, a tensor, or a dict with 'args' (a tuple) and 'kwargs' "
        "(a dict with string keys)"
    )
