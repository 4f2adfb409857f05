"""Benchmark fxexport against torch's own ways to save and load a model (issue 6).

    python bench/run.py            # the full run: ~1 GB, ~20,000-node and ResNet-18-style models
    python bench/run.py --quick    # small sizes: a smoke test of every path (< 60 s)
    python bench/run.py --only node_heavy --only fxexport --profile /tmp/prof
    python bench/run.py --only forward-memory   # peak memory of one forward, exported vs source GraphModule

Every measurement (one tool saving or loading one model, or a forward speed or peak memory comparison) runs in a
fresh worker process (worker.py), bounded by --timeout; the whole processes (processes.py) are
timed from here, from start to exit. This process never imports torch. Every child process
imports fxexport from this checkout (its folder first on PYTHONPATH), not from wherever
fxexport happens to be installed. The table goes to stdout and to bench/results.md
(results-quick.md for --quick), with a bar chart beside it when matplotlib is importable.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent  # the checkout whose fxexport is measured
sys.path[:0] = [str(BENCH), str(ROOT)]  # ROOT: the report names the fxexport the children import

import report  # noqa: E402
from cells import COMPARISONS, Cell, Outcome, plan  # noqa: E402
from processes import process  # noqa: E402
from worker import MARKER  # noqa: E402


@dataclass(frozen=True)
class Config:
    quick: bool
    timeout: float
    jobs: int
    cache: str
    workdir: Path
    profile: str | None
    repeat: int


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="small models: a smoke test that finishes in under a minute"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this model or tool, 'process' or 'forward-memory' (repeatable); exports a load needs are run too",
    )
    parser.add_argument("--timeout", type=float, help="seconds per measurement process (default 900; 60 with --quick)")
    parser.add_argument(
        "--jobs", type=int, help="measurements run at once (default 1; 2 with --quick); >1 skews timings"
    )
    parser.add_argument(
        "--repeat", type=int, help="fresh processes per cell, the median reported (default 3; 1 with --quick)"
    )
    parser.add_argument(
        "--cache",
        choices=("warm", "cold"),
        default="warm",
        help="artifact files in the page cache before a load (warm) or evicted from it (cold)",
    )
    parser.add_argument("--workdir", type=Path, help="where artifacts go (default: a temporary folder, removed after)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary artifact folder")
    parser.add_argument("--profile", metavar="DIR", help="write a cProfile dump of every timed call to DIR")
    parser.add_argument("--output", type=Path, help="markdown file (default bench/results.md, or results-quick.md)")
    return parser.parse_args(argv)


def _reason(proc: subprocess.CompletedProcess[str]) -> str:
    if proc.returncode < 0:
        return f"killed by {signal.Signals(-proc.returncode).name}"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _result(stdout: str) -> dict[str, Any] | None:
    lines = [line for line in stdout.splitlines() if line.startswith(MARKER)]
    return json.loads(lines[-1][len(MARKER) :]) if lines else None


def child_env(**extra: str) -> dict[str, str]:
    """The environment of every child process: this one's, with the checkout first on PYTHONPATH."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env | extra


def run_process(cell: Cell, config: Config) -> Outcome:
    """Run one whole process in an empty folder of its own; its wall time, from start to exit."""
    spec = process(cell.tool)
    folder = Path(tempfile.mkdtemp(prefix="process-", dir=config.workdir))
    out = folder / "out"  # the command's output folder: a package name, not there yet
    command = [sys.executable, *spec.argv(out)]
    try:
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=config.timeout, cwd=folder, env=child_env(), check=False
            )
        except subprocess.TimeoutExpired:
            return Outcome(cell, None, f"timeout after {config.timeout:g} s", time.perf_counter() - start)
        wall = time.perf_counter() - start
        missing = [name for name in spec.expects if not (out / name).exists()]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if proc.returncode:
        return Outcome(cell, None, _reason(proc), wall, proc.stderr)
    if missing:
        return Outcome(cell, None, f"exit status 0 but no {', '.join(missing)}", wall, proc.stderr)
    return Outcome(cell, {"time_s": wall, "command": spec.command()}, None, wall, proc.stderr)


def run_cell(cell: Cell, config: Config) -> Outcome:
    """Run one measurement in a fresh worker process (a whole process: the process itself)."""
    if cell.phase == "process":
        return run_process(cell, config)
    job = {
        "phase": cell.phase,
        "model": cell.model,
        "tool": cell.tool,
        "quick": config.quick,
        "workdir": str(config.workdir),
        "cache": config.cache,
        "profile": config.profile,
    }
    env = child_env(PYTHONDONTWRITEBYTECODE="1")  # no load leaves bytecode for the next one
    command = [sys.executable, str(BENCH / "worker.py"), json.dumps(job)]
    start = time.monotonic()
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=config.timeout, cwd=BENCH, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return Outcome(cell, None, f"timeout after {config.timeout:g} s", time.monotonic() - start)
    wall = time.monotonic() - start
    result = _result(proc.stdout)
    if result is None:
        return Outcome(cell, None, _reason(proc), wall, proc.stderr)
    return Outcome(cell, None if "error" in result else result, result.get("error"), wall, proc.stderr)


def _median(cell: Cell, runs: list[Outcome]) -> Outcome:
    """The run with the median result, with every run's result as its samples."""
    key = "ratio" if cell.phase in COMPARISONS else "time_s"
    middle = sorted(runs, key=lambda run: run.result[key])[len(runs) // 2]
    samples = [run.result[key] for run in runs]
    return replace(middle, result={**middle.result, "samples": samples}, wall_s=sum(run.wall_s for run in runs))


def run_repeated(cell: Cell, config: Config) -> Outcome:
    """Run a cell `config.repeat` times (stopping at a failure); the run with the median result."""
    runs: list[Outcome] = []
    for _ in range(config.repeat):
        runs.append(run_cell(cell, config))
        if runs[-1].error:
            return runs[-1]
    return _median(cell, runs)


def run_interleaved(cells: list[Cell], config: Config, untimed: bool = True) -> list[Outcome]:
    """Cells one at a time: with `untimed`, each once untimed (the bytecode of what it imports written,
    its files in the page cache, as after any earlier use), then `config.repeat` rounds of every
    cell in turn, the order reversed every other round, so that load from other work, which comes
    and goes, falls on every command alike; per cell the run with the median time."""
    failed: dict[Cell, Outcome] = {}
    runs: dict[Cell, list[Outcome]] = {cell: [] for cell in cells}
    for cell in cells if untimed else ():
        if (outcome := run_cell(cell, config)).error:
            failed[cell] = outcome
    for round_ in range(config.repeat):
        for cell in cells if round_ % 2 == 0 else cells[::-1]:
            if cell in failed:
                continue
            outcome = run_cell(cell, config)
            if outcome.error:
                failed[cell] = outcome
            else:
                runs[cell].append(outcome)
    return [failed.get(cell) or _median(cell, runs[cell]) for cell in cells]


def _progress(outcome: Outcome, done: int, total: int) -> None:
    cell = outcome.cell
    line = f"[{done}/{total}] {cell.phase:7} {cell.model:12} {cell.tool:12} {report.brief(outcome)}"
    print(f"{line}  (process {outcome.wall_s:.1f} s)", file=sys.stderr, flush=True)
    if outcome.error and outcome.stderr:
        print("    " + "\n    ".join(outcome.stderr.strip().splitlines()[-6:]), file=sys.stderr)


def run_stages(stages: list[list[Cell]], config: Config) -> list[Outcome]:
    """Run the stages in order (exports, loads, forward, memory, processes). Within a stage, one cell at a
    time, interleaved: the whole processes all together, after an untimed run of each; the others per
    model, so that the tools one model's ratios compare are timed in the same stretch of the machine's
    load from other work, which comes and goes. With `config.jobs` > 1, that many cells at once, each
    run to the end in turn."""
    outcomes: list[Outcome] = []
    total = sum(map(len, stages))
    for stage in stages:
        blocked = [cell for cell in stage if cell.blocked_by(outcomes)]
        for cell in blocked:
            outcomes.append(Outcome(cell, None, f"no artifact: the {cell.needs().tool} export failed", 0.0))
            _progress(outcomes[-1], len(outcomes), total)
        ready = [cell for cell in stage if cell not in blocked]
        if all(cell.phase == "process" for cell in ready):
            for outcome in run_interleaved(ready, config):
                outcomes.append(outcome)
                _progress(outcome, len(outcomes), total)
            continue
        if config.jobs == 1:
            for group in _per_model(ready):
                for outcome in run_interleaved(group, config, untimed=False):
                    outcomes.append(outcome)
                    _progress(outcome, len(outcomes), total)
            continue
        with ThreadPoolExecutor(max_workers=config.jobs) as pool:
            for outcome in pool.map(lambda cell: run_repeated(cell, config), ready):
                outcomes.append(outcome)
                _progress(outcome, len(outcomes), total)
    return outcomes


def _per_model(cells: list[Cell]) -> list[list[Cell]]:
    """The cells of each model, in their order."""
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.model, []).append(cell)
    return list(groups.values())


def make_config(args: argparse.Namespace, workdir: Path) -> Config:
    return Config(
        quick=args.quick,
        timeout=args.timeout or (60 if args.quick else 900),
        jobs=args.jobs or (2 if args.quick else 1),
        cache=args.cache,
        workdir=workdir.resolve(),
        profile=args.profile and str(Path(args.profile).resolve()),
        repeat=args.repeat or (1 if args.quick else 3),
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        stages = plan(args.only)
    except ValueError as error:
        print(f"run.py: error: {error}", file=sys.stderr)
        return 2
    config = make_config(args, args.workdir or Path(tempfile.mkdtemp(prefix="fxexport-bench-")))
    load_before, start = os.getloadavg()[0], time.monotonic()
    try:
        outcomes = run_stages(stages, config)
    finally:
        if not (args.workdir or args.keep):
            shutil.rmtree(config.workdir, ignore_errors=True)
    command = " ".join(["python bench/run.py", *argv])
    elapsed, load_after = time.monotonic() - start, os.getloadavg()[0]
    info = report.RunInfo(command, config.quick, config.cache, config.repeat, elapsed, load_before, load_after)
    text = report.markdown(outcomes, info)
    print(text)
    output = args.output or BENCH / ("results-quick.md" if args.quick else "results.md")
    output.write_text(text, encoding="utf-8")
    chart = report.chart(outcomes, output.with_suffix(".png"))
    print(f"wrote {output}" + (f" and {chart}" if chart else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
