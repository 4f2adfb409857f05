"""One benchmark measurement, run by run.py in a fresh process: `python worker.py '<job json>'`.

The job says which phase (export, load, forward or memory), model and tool. The clock runs around the
save or load call only, after `import torch` and the tool's own imports. The result is printed
as one JSON line after MARKER; an exception becomes {"error": "<type>: <message>"}.
"""

from __future__ import annotations

import contextlib
import cProfile
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = "BENCH-RESULT "
_CHUNK = 16 << 20


@dataclass(frozen=True)
class Job:
    """The measurement a worker makes, as run.py passes it (JSON of these fields)."""

    phase: str  # "export", "load", "forward" or "memory"
    model: str
    tool: str
    quick: bool
    workdir: str
    cache: str = "warm"  # "warm": artifact read into the page cache first; "cold": evicted first
    profile: str | None = None  # folder for a cProfile dump of the timed call

    @property
    def folder(self) -> Path:
        return Path(self.workdir) / self.model


# memory ---------------------------------------------------------------------------------
def rss_mb() -> float:
    """The current resident set size."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def maxrss_mb() -> float:
    """The peak resident set size (ru_maxrss, KiB on Linux) since start or the last reset."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> bool:
    """Reset the peak RSS to the current RSS (Linux clear_refs "5"); False when not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def measure(call: Callable[[], Any], profile: Path | None) -> tuple[Any, dict[str, Any]]:
    """Run `call` once: its result, and its time, peak RSS and peak RSS over the RSS before it."""
    gc.collect()
    peak_before, baseline = maxrss_mb(), rss_mb()
    exact = reset_peak()
    profiler = cProfile.Profile() if profile else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        if profiler:
            profiler.enable()
        value = call()
        if profiler:
            profiler.disable()
        elapsed = time.perf_counter() - start
    peak_during = maxrss_mb()
    if profiler:
        profile.parent.mkdir(parents=True, exist_ok=True)
        profiler.dump_stats(profile)
    messages = list(dict.fromkeys(" ".join(str(w.message).split())[:120] for w in caught))
    return value, {
        "time_s": elapsed,
        "baseline_mb": baseline,
        "maxrss_mb": max(peak_before, peak_during),
        "extra_mb": max(0.0, peak_during - baseline),
        "extra_exact": exact,
        "warnings": messages,
    }


# artifacts ------------------------------------------------------------------------------
def files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [path] if path.is_file() else []


def size_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in files(path))


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def evict_artifacts(workdir: Path) -> None:
    """Drop every artifact file under `workdir` from the page cache: an export then writes into free
    memory, not into memory the kernel must first reclaim from the gigabytes earlier cells wrote. The
    code the tools run stays cached. A file another worker removes meanwhile (--jobs) is skipped."""
    for file in files(workdir):
        with contextlib.suppress(OSError):
            _evict(file)


def set_cache(path: Path, mode: str) -> None:
    """Put the artifact's files in the page cache ("warm") or drop them from it ("cold")."""
    for file in files(path):
        if mode == "cold":
            _evict(file)
        else:
            with open(file, "rb") as stream:
                while stream.read(_CHUNK):
                    pass


def _evict(file: Path) -> None:
    """The file's pages written back and dropped from the page cache."""
    with open(file, "rb") as stream:
        os.fsync(stream.fileno())
        os.posix_fadvise(stream.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


# results of a model -----------------------------------------------------------------------
def fingerprint(module: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """Summaries of `module(*args)` in eval mode, to check that a load gives the source's output."""
    import torch

    if not isinstance(module, torch.nn.Module) or any(p.is_meta for p in module.parameters()):
        return None  # a state_dict, or a skeleton without weights: nothing to run
    training = module.training
    with contextlib.suppress(Exception):  # a module that refuses eval() is compared as it is
        module.eval()
    with torch.inference_mode():
        out = module(*args).double()
    return {"sum": out.sum().item(), "abs_sum": out.abs().sum().item(), "loaded_training": training}


def weight_bytes(module: Any) -> int:
    """Bytes of its parameters and buffers, and of the packed weights of quantized layers (int8 weights, fp32 biases)."""
    from fxexport.quantized import packing

    tensors = {id(t): t for t in [*module.parameters(), *module.buffers()]}
    packed = [t for m in module.modules() if (p := packing(m)) is not None for t in p.tensors if t is not None]
    return sum(t.numel() * t.element_size() for t in [*tensors.values(), *packed])


def _import_all(names: tuple[str, ...]) -> None:
    import importlib

    for name in names:
        importlib.import_module(name)


def _profile_path(job: Job) -> Path | None:
    return Path(job.profile) / f"{job.model}-{job.phase}-{job.tool}.prof" if job.profile else None


# phases ---------------------------------------------------------------------------------
def run_export(job: Job) -> dict[str, Any]:
    """Build and trace the model, then time the tool's save of it (after its untimed `prepare`)."""
    import models
    import tools
    from torch import fx

    spec, tool = models.model(job.model), tools.tool(job.tool)
    _import_all(tool.save_imports)
    model = models.build(spec, job.quick)
    source = tools.Source(model, fx.symbolic_trace(model), models.inputs(spec, job.quick))
    payload = tool.prepare(source) if tool.prepare else source
    path = job.folder / tool.artifact
    job.folder.mkdir(parents=True, exist_ok=True)
    remove(path)
    os.sync()  # untimed: no export pays for writing back the pages an earlier one left dirty
    evict_artifacts(Path(job.workdir))  # nor for reclaiming the pages of the files earlier cells wrote
    details, result = measure(lambda: tool.save(payload, path), _profile_path(job))
    result.update(
        details=details or {},
        artifact_bytes=size_bytes(path),
        weights_bytes=weight_bytes(model),
        nodes=len(source.gm.graph.nodes),
        reference=fingerprint(source.gm, source.args),
    )
    if tool.weights_digest:
        result["weights_digest"] = tool.weights_digest(path)
    return result


def run_load(job: Job) -> dict[str, Any]:
    """Time the tool's load of its artifact; then run the loaded model once (untimed) for a check."""
    import models
    import tools

    spec, tool = models.model(job.model), tools.tool(job.tool)
    if tool.load is None:
        raise ValueError(f"{tool.name} has no load")
    path = job.folder / tool.artifact
    if not files(path):
        raise FileNotFoundError(f"no artifact at {path}")
    set_cache(path, job.cache)
    _import_all(tool.load_imports)
    args = models.inputs(spec, job.quick)
    loaded, result = measure(lambda: tool.load(path), _profile_path(job))
    result.update(artifact_bytes=size_bytes(path), output=fingerprint(loaded, args))
    return result


def _time_calls(module: Any, args: tuple[Any, ...], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        module(*args)
    return (time.perf_counter() - start) / calls


def _paired_times(first: Any, second: Any, args: tuple[Any, ...], rounds: int, calls: int) -> list[tuple[float, float]]:
    """Per round, seconds per call of `first` and of `second`, run back to back in alternating order."""
    pairs = []
    for i in range(rounds):
        if i % 2 == 0:
            a = _time_calls(first, args, calls)
            b = _time_calls(second, args, calls)
        else:
            b = _time_calls(second, args, calls)
            a = _time_calls(first, args, calls)
        pairs.append((a, b))
    return pairs


def run_forward(job: Job) -> dict[str, Any]:
    """Seconds per call of the source GraphModule and of the exported module, and their ratio.

    The ratio is the median over rounds of (exported / source) for two blocks of calls run back
    to back, so that load from other processes, which comes and goes, mostly cancels out. One
    intra-op thread: the comparison is of the code around the kernels.
    """
    import models
    import tools
    import torch
    from torch import fx

    torch.set_num_threads(1)
    spec = models.model(job.model)
    gm = fx.symbolic_trace(models.build(spec, job.quick))
    exported = tools.tool(tools.REFERENCE).load(job.folder / tools.tool(tools.REFERENCE).artifact)
    args = models.inputs(spec, job.quick)
    rounds, calls = (6, 4) if job.quick else (60, 5)
    with torch.inference_mode():
        if not torch.allclose(gm(*args), exported(*args), rtol=1e-5, atol=1e-6):
            raise AssertionError("the exported forward gives a different output than the source")
        _time_calls(gm, args, calls)
        _time_calls(exported, args, calls)
        pairs = _paired_times(gm, exported, args, rounds, calls)
    return {
        "source_s": statistics.median(s for s, _ in pairs),
        "exported_s": statistics.median(e for _, e in pairs),
        "ratio": statistics.median(e / s for s, e in pairs),
        "calls": rounds * calls,
    }


def forward_peak(module: Any, args: tuple[Any, ...]) -> tuple[int, int]:
    """Bytes of CPU tensor memory one call of `module` allocates at its peak, and still holds after it.

    Counted at the allocator: torch.profiler with profile_memory=True records every allocation
    and free of the CPU allocator while it runs (each a "[memory]" event of signed bytes); their
    running total, in the order they happened, is the memory allocated since the call began and
    not yet freed, and its maximum the peak above what was allocated before (weights, inputs).
    Frees of memory allocated before the call are not recorded, so they cannot lower it. What the
    call keeps after (its output) ends the total.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    gc.collect()
    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        output = module(*args)  # held until the profile ends: the total ends at what the call keeps
    del output
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    devices = {str(e.device_type()) for e in events}
    if devices - {"DeviceType.CPU"}:
        raise ValueError(f"the forward allocated memory on {', '.join(sorted(devices))}, not only on the CPU")
    total = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):  # sorted() is stable: ties keep their recorded order
        total += event.nbytes()
        peak = max(peak, total)
    return peak, total


def _peaks(module: Any, args: tuple[Any, ...], runs: int) -> dict[str, Any]:
    """`forward_peak` over `runs` calls after one untimed call (lazy initialisation of kernels)."""
    import torch

    with torch.inference_mode():
        module(*args)
    measured = [forward_peak(module, args) for _ in range(runs)]
    return {"peak_bytes": max(p for p, _ in measured), "held_bytes": measured[-1][1], "runs": [p for p, _ in measured]}


def run_memory(job: Job) -> dict[str, Any]:
    """Peak CPU tensor memory of one forward of the exported package (loaded in this fresh process)
    and of the source GraphModule, on the same input, and their ratio.

    One intra-op thread (allocations in worker threads would escape the profiler's thread-local
    recording) and torch.inference_mode, as the forward speed comparison runs.
    """
    import models
    import tools
    import torch
    from torch import fx

    torch.set_num_threads(1)
    spec = models.model(job.model)
    exported = tools.tool(tools.REFERENCE).load(job.folder / tools.tool(tools.REFERENCE).artifact)
    eager = models.build(spec, job.quick)
    gm = fx.symbolic_trace(eager)
    args = models.inputs(spec, job.quick)
    with torch.inference_mode():
        if not torch.allclose(gm(*args), exported(*args), rtol=1e-5, atol=1e-6):
            raise AssertionError("the exported forward gives a different output than the source")
    runs = 3
    source, package = _peaks(gm, args, runs), _peaks(exported, args, runs)
    return {
        "source": source,
        "exported": package,
        "eager": _peaks(eager, args, runs),  # the model itself: module calls hold their inputs until they return
        "ratio": package["peak_bytes"] / source["peak_bytes"],
        "deterministic": len(set(source["runs"])) == 1 and len(set(package["runs"])) == 1,
        "input_bytes": sum(a.numel() * a.element_size() for a in args),
    }


PHASES = {"export": run_export, "load": run_load, "forward": run_forward, "memory": run_memory}


def main(argv: list[str]) -> int:
    job = Job(**json.loads(argv[1]))
    import torch  # noqa: F401 - imported before any measurement: its cost is not the tools'

    torch_rss = rss_mb()
    try:
        result = PHASES[job.phase](job)
        result["torch_rss_mb"] = torch_rss
    except Exception as error:  # noqa: BLE001 - every failure is reported as a table cell
        traceback.print_exc()
        result = {"error": f"{type(error).__name__}: {error}"}
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
