"""The results as markdown tables (measurements, targets, forward speed and peak memory, whole processes) and an optional bar chart."""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import operator
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cells import Outcome
from models import MODELS
from processes import BASELINE, GROUP, PROCESSES, process
from tools import REFERENCE, TOOLS

MIB = 2**20
KIB = 2**10
PHASES = ("export", "load")

METHOD = """\
Each cell runs in fresh worker processes (--repeat of them); the cells of one model and phase
run in rounds, every tool once a round, the order reversed every other round, so that load
from other work falls on each tool alike. The table shows the process with the median time,
and the notes the range. Time: the save or load call only
(`time.perf_counter`), after `import torch` and the tool's own imports (fxexport for its
export, safetensors for load_file, torch.export for torch.export). Export starts from the built
model and its `symbolic_trace`; torch.export.export traces the nn.Module inside the timed call;
`os.sync()` runs just before an export's clock starts, so none pays for the write-back of
another's files (none syncs its own either), and then every artifact file earlier cells wrote is
dropped from the page cache (`posix_fadvise(DONTNEED)`), so every export writes into free memory
rather than reclaiming theirs first (without it the 1 GB model's export and f.write each took
0.24-2.5 s from one process to the next); the code the tools run stays cached.
Load includes importing the generated package, in a fresh folder with PYTHONDONTWRITEBYTECODE=1:
to_folder's module.py is compiled in every load, fxexport's comes with its hash-checked bytecode
(fxexport-nopyc: the same package exported with bytecode=False, so compiled). Peak RSS: `ru_maxrss` of the worker at the end of the
call (an export worker holds the model). Peak extra: the peak RSS during the call over the RSS
just before it (after import torch and, for export, after the model exists; the peak is reset
with /proc/self/clear_refs first). `× fxexport`: the cell's time over fxexport's for the same
model and phase. Load notes compare the loaded model's output (in eval mode) with the source's.
f.write: the bytes of fxexport's weights.safetensors for the model (its header, then each
tensor's memory, in fxexport's order, all prepared before the clock), written into one file
with one plain `f.write` per tensor; the notes say whether its file equals fxexport's (BLAKE3 digest)."""

PROCESS_METHOD = """\
Each command runs as a fresh process with this interpreter and the same environment (this
checkout first on PYTHONPATH), in an empty folder of its own; the time is the wall time from
just before the process starts to just after it exits, measured from outside. They run one at
a time, whatever --jobs: one untimed run of each first (bytecode written, files in the page
cache), then --repeat rounds of every command in turn (order reversed every other round, so
load from other work falls on each alike); the median per command."""


@dataclass(frozen=True)
class Target:
    check: str
    value: Callable[[list[Outcome], str], float | None]
    compare: Callable[[float, float], bool]
    bound: float
    models: tuple[str, ...] = ()  # empty: every model
    why: str = ""
    reference: bool = False  # a row that explains another, not a target of its own

    def text(self) -> str:
        sign = {operator.le: "<=", operator.ge: ">=", operator.lt: "<"}[self.compare]
        return f"{sign} {self.bound:g}" + (f" ({self.why})" if self.why else "")


# lookups --------------------------------------------------------------------------------
def find(outcomes: list[Outcome], phase: str, model: str, tool: str) -> Outcome | None:
    return next((o for o in outcomes if (o.cell.phase, o.cell.model, o.cell.tool) == (phase, model, tool)), None)


def value(outcomes: list[Outcome], phase: str, model: str, tool: str, key: str = "time_s") -> float | None:
    outcome = find(outcomes, phase, model, tool)
    return outcome.result[key] if outcome and outcome.result else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def brief(outcome: Outcome) -> str:
    """One cell's result in a few words, for progress lines."""
    if outcome.error or not outcome.result:
        return f"failed: {outcome.error}"
    if outcome.cell.phase == "forward":
        return f"forward ratio {outcome.result['ratio']:.3f}"
    if outcome.cell.phase == "memory":
        r = outcome.result
        return (f"forward peak {r['exported']['peak_bytes'] / KIB:,.0f} KiB, source GraphModule "
                f"{r['source']['peak_bytes'] / KIB:,.0f} KiB, ratio {r['ratio']:.3f}")  # fmt: skip
    if outcome.cell.phase == "process":
        return f"{outcome.result['time_s']:.3f} s, the whole process"
    return f"{outcome.result['time_s']:.3f} s, peak extra {outcome.result['extra_mb']:.0f} MiB"


def _memory_share(phase: str, tool: str = REFERENCE) -> Callable[[list[Outcome], str], float | None]:
    """A cell's peak extra RSS over the model's weight bytes."""

    def share(outcomes: list[Outcome], model: str) -> float | None:
        extra = value(outcomes, phase, model, tool, "extra_mb")
        weights = value(outcomes, "export", model, REFERENCE, "weights_bytes")
        return ratio(extra * MIB if extra is not None else None, weights)

    return share


def _load_memory_over_weights_and_skeleton(outcomes: list[Outcome], model: str) -> float | None:
    """fxexport load's peak extra RSS over (the weight bytes + the skeleton's peak extra RSS)."""
    extra = value(outcomes, "load", model, REFERENCE, "extra_mb")
    skeleton = value(outcomes, "load", model, "skeleton", "extra_mb")
    weights = value(outcomes, "export", model, REFERENCE, "weights_bytes")
    if extra is None or skeleton is None or weights is None:
        return None
    return ratio(extra * MIB, weights + skeleton * MIB)


def _ratio(phase: str, tool: str, over: str) -> Callable[[list[Outcome], str], float | None]:
    """The time of `tool` over the time of `over`, for the same model and phase."""
    return lambda outcomes, model: ratio(value(outcomes, phase, model, tool), value(outcomes, phase, model, over))


def _load_over_skeleton_and_load_file(outcomes: list[Outcome], model: str) -> float | None:
    skeleton, load_file = value(outcomes, "load", model, "skeleton"), value(outcomes, "load", model, "load_file")
    both = None if skeleton is None or load_file is None else skeleton + load_file
    return ratio(value(outcomes, "load", model, REFERENCE), both)


def _reference_value(phase: str, key: str) -> Callable[[list[Outcome], str], float | None]:
    return lambda outcomes, model: value(outcomes, phase, model, REFERENCE, key)


_CLI = next(p.name for p in PROCESSES if p.name != BASELINE)

TARGETS: tuple[Target, ...] = (
    # export (issue 17)
    Target("fxexport export / to_folder export", _ratio("export", REFERENCE, "to_folder"), operator.le, 1.0),
    Target("fxexport export / f.write of the same bytes", _ratio("export", REFERENCE, "f.write"), operator.le, 1.2,
           models=("weight_heavy",), why="its weights.safetensors, written with plain f.write"),
    Target(f"`{process(_CLI).command()}` / `{process(BASELINE).command()}`", _ratio("process", _CLI, BASELINE),
           operator.le, 1.3, models=(GROUP,), why="whole processes, wall time"),
    Target("fxexport export time (s)", _reference_value("export", "time_s"), operator.le, 10, models=("node_heavy",)),
    Target("fxexport export peak extra RSS / weight bytes", _memory_share("export"), operator.lt, 1, models=("weight_heavy",),
           why="weights.py: never a second full copy"),
    # load (issue 17 restates issue 6's: over the module tree alone plus load_file, not load_file alone)
    Target("fxexport load / (skeleton + load_file)", _load_over_skeleton_and_load_file, operator.le, 1.0,
           why="module tree alone, then safetensors load_file"),
    Target("fxexport load peak extra RSS / (weight bytes + skeleton peak extra RSS)",
           _load_memory_over_weights_and_skeleton, operator.le, 1.1),
    Target("fxexport load / safetensors load_file", _ratio("load", REFERENCE, "load_file"), operator.le, 1.3,
           why="issue 6's target, replaced by (skeleton + load_file)", reference=True),
    Target("skeleton (module tree, no weights) / safetensors load_file", _ratio("load", "skeleton", "load_file"),
           operator.le, 1.3, why="why the row above cannot be met", reference=True),
    Target("fxexport load peak extra RSS / weight bytes", _memory_share("load"), operator.le, 1.1,
           why="issue 6's target, replaced by the one with the skeleton", reference=True),
    Target("load_file peak extra RSS / weight bytes", _memory_share("load", "load_file"), operator.le, 1.1,
           reference=True),
    Target("to_folder load / fxexport load", _ratio("load", "to_folder", REFERENCE), operator.ge, 5),
    Target("forward: fxexport module / source GraphModule", _reference_value("forward", "ratio"), operator.le, 1.02,
           models=tuple(m.name for m in MODELS if m.forward_bench)),
    # issue 14: the structured module must not keep more intermediates alive than the flat graph
    Target("forward peak memory: fxexport module / source GraphModule", _reference_value("memory", "ratio"), operator.le,
           1.05, models=tuple(m.name for m in MODELS if m.memory_bench), why="issue 14; CPU tensor bytes, one forward"),
)  # fmt: skip


# formatting -----------------------------------------------------------------------------
def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _clean(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _reference_output(outcomes: list[Outcome], model: str) -> dict | None:
    return next(
        (o.result["reference"] for o in outcomes if o.cell.model == model and o.result and o.result.get("reference")),
        None,
    )


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-4 * max(abs(a), abs(b), 1.0)


def _spread(result: dict) -> list[str]:
    samples = result.get("samples", [])
    return [f"median of {len(samples)}, {min(samples):.3g}–{max(samples):.3g} s"] if len(samples) > 1 else []


def _same_bytes(outcome: Outcome, outcomes: list[Outcome]) -> list[str]:
    """For a tool that writes fxexport's weight bytes itself: whether its file is fxexport's, byte for byte."""
    digest = (outcome.result or {}).get("weights_digest")
    if digest is None or outcome.cell.tool == REFERENCE:
        return []
    reference = value(outcomes, outcome.cell.phase, outcome.cell.model, REFERENCE, "weights_digest")
    if reference is None:
        return []
    return [f"same bytes as {REFERENCE}'s weights" if digest == reference else f"BYTES DIFFER from {REFERENCE}'s weights"]


def _notes(outcome: Outcome, outcomes: list[Outcome]) -> str:
    result, notes = outcome.result or {}, []
    notes += _spread(result)
    notes += [f"{name} {seconds:.2f} s" for name, seconds in result.get("details", {}).items()]
    output, reference = result.get("output"), _reference_output(outcomes, outcome.cell.model)
    if output and reference:
        match = _same(output["sum"], reference["sum"]) and _same(output["abs_sum"], reference["abs_sum"])
        notes.append("output matches" if match else "OUTPUT DIFFERS from the source")
        if output["loaded_training"]:
            notes.append("loads with training=True (source: eval)")
    notes += _same_bytes(outcome, outcomes)
    if result and not result.get("extra_exact", True):
        notes.append("peak extra is an upper bound")
    notes += [f"warning: {_clean(w, 70)}" for w in result.get("warnings", [])[:1]]
    return "; ".join(notes)


def _row(outcome: Outcome, outcomes: list[Outcome]) -> list[str]:
    cell = outcome.cell
    head = [cell.model, cell.phase, cell.tool]
    if outcome.error or not outcome.result:
        return head + [f"failed: {_clean(outcome.error or 'no result', 70)}"] + ["—"] * 5
    r = outcome.result
    reference = value(outcomes, cell.phase, cell.model, REFERENCE)
    return head + [
        _num(r["time_s"], 3),
        _num(ratio(r["time_s"], reference)),
        _num(r["maxrss_mb"], 0),
        _num(r["extra_mb"], 0),
        _num(r["artifact_bytes"] / MIB, 1),
        _notes(outcome, outcomes),
    ]


def _order(outcome: Outcome) -> tuple[int, int, int]:
    models = [m.name for m in MODELS]
    tools = [t.name for t in TOOLS]
    return models.index(outcome.cell.model), PHASES.index(outcome.cell.phase), tools.index(outcome.cell.tool)


# sections -------------------------------------------------------------------------------
def _fxexport_origin() -> str:
    spec = importlib.util.find_spec("fxexport")  # finds the package without importing it (and torch)
    return str(Path(spec.origin).parent) if spec and spec.origin else "not importable"


def _versions() -> str:
    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "missing"

    return (
        f"Python {platform.python_version()}, torch {version('torch')}, safetensors {version('safetensors')}, "
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs"
    )


def models_section(outcomes: list[Outcome]) -> list[str]:
    rows = []
    for spec in MODELS:
        done = [o.result for o in outcomes if o.cell.model == spec.name and o.cell.phase == "export" and o.result]
        if any(o.cell.model == spec.name for o in outcomes):
            nodes = f"{done[0]['nodes']:,}" if done else "—"
            weights = _num(done[0]["weights_bytes"] / MIB, 1) if done else "—"
            rows.append([spec.name, spec.description, nodes, weights])
    return _table(["model", "description (full size)", "graph nodes", "weights (MiB)"], rows)


def measurements_section(outcomes: list[Outcome]) -> list[str]:
    cells = sorted((o for o in outcomes if o.cell.phase in PHASES), key=_order)
    header = [
        "model",
        "phase",
        "tool",
        "time (s)",
        "× fxexport",
        "peak RSS (MiB)",
        "peak extra (MiB)",
        "artifact (MiB)",
        "notes",
    ]
    return _table(header, [_row(o, outcomes) for o in cells])


def targets_section(outcomes: list[Outcome]) -> list[str]:
    rows = []
    present = {o.cell.model for o in outcomes}
    for target in TARGETS:
        for model in target.models or [m.name for m in MODELS]:
            if model not in present:
                continue
            got = target.value(outcomes, model)
            met = "—" if got is None else "yes" if target.compare(got, target.bound) else "**no**"
            met = f"({met}: for reference)" if target.reference else met
            rows.append([target.check, model, _num(got, 3), target.text(), met])
    return _table(["check", "model", "value", "target", "met"], rows)


def _forward_row(outcome: Outcome) -> list[str]:
    if not outcome.result:
        return [outcome.cell.model, f"failed: {_clean(outcome.error or 'no result', 70)}", "—", "—", "—", "—", "—"]
    r = outcome.result
    runs = ", ".join(f"{x:.3f}" for x in r.get("samples", [r["ratio"]]))
    ms = [_num(r["source_s"] * 1e3, 3), _num(r["exported_s"] * 1e3, 3)]
    return [outcome.cell.model, *ms, _num(r["ratio"], 3), runs, str(r["calls"])]


def forward_section(outcomes: list[Outcome]) -> list[str]:
    rows = [_forward_row(o) for o in outcomes if o.cell.phase == "forward"]
    header = ["model", "source GraphModule (ms/call)", "fxexport module (ms/call)", "ratio", "ratio per process",
              "calls each"]  # fmt: skip
    return _table(header, rows)


MEMORY_METHOD = """\
Peak CPU tensor memory of one forward (torch.inference_mode, one intra-op thread, after one
untimed call), counted at the allocator: torch.profiler with profile_memory=True records each
allocation and free of the CPU allocator during the call; the peak of their running total is what
the call had allocated at once above what existed before it (weights and inputs excluded). The
exported package is imported in a fresh worker process, beside the source GraphModule (the
model's symbolic_trace) built there, and the eager model itself; each is measured three times, the
largest kept (they are equal when "same in every run" says yes). A structured export calls a
module per source module, and a module call holds its inputs until it returns (the caller's
local and `nn.Module.__call__`'s arguments), where the flat GraphModule frees a value after its
last use: its peak is the eager model's, not the GraphModule's."""


def _memory_row(outcome: Outcome) -> list[str]:
    if not outcome.result:
        return [outcome.cell.model, f"failed: {_clean(outcome.error or 'no result', 70)}", "—", "—", "—", "—", "—"]
    r = outcome.result
    kib = [_num(r[side]["peak_bytes"] / KIB, 1) if side in r else "—" for side in ("source", "exported", "eager")]
    same = "yes" if r["deterministic"] else "no: " + ", ".join(f"{x:,}" for x in r["exported"]["runs"] + r["source"]["runs"])
    return [outcome.cell.model, *kib, _num(r["ratio"], 3), _num(r["exported"]["held_bytes"] / KIB, 1), same]


def memory_section(outcomes: list[Outcome]) -> list[str]:
    rows = [_memory_row(o) for o in outcomes if o.cell.phase == "memory"]
    header = ["model", "source GraphModule peak (KiB)", "fxexport module peak (KiB)", "eager source model peak (KiB)",
              "ratio", "output (KiB)", "same in every run"]  # fmt: skip
    return _table(header, rows)


def process_section(outcomes: list[Outcome]) -> list[str]:
    rows = []
    baseline = value(outcomes, "process", GROUP, BASELINE)
    for spec in PROCESSES:
        outcome = find(outcomes, "process", GROUP, spec.name)
        if outcome is None:
            continue
        if not outcome.result:
            rows.append([f"`{spec.command()}`", f"failed: {_clean(outcome.error or 'no result', 70)}", "—", "—"])
            continue
        seconds = outcome.result["time_s"]
        runs = ", ".join(f"{x:.2f}" for x in outcome.result.get("samples", [seconds]))
        rows.append([f"`{spec.command()}`", _num(seconds, 3), _num(ratio(seconds, baseline)), runs])
    return _table(["command", "wall time (s)", f"× `{process(BASELINE).command()}`", "per process (s)"], rows)


@dataclass(frozen=True)
class RunInfo:
    """How the run went, for the report's header."""

    command: str
    quick: bool
    cache: str
    repeat: int
    seconds: float
    load_before: float  # 1-minute load average at the start: well above 0 means other work shares the CPUs
    load_after: float  # and at the end, where the run itself accounts for about --jobs


def header(info: RunInfo) -> list[str]:
    sizes = "quick (small) sizes" if info.quick else "full sizes"
    when = datetime.date.today().isoformat()
    how = f"{info.repeat} process(es) per cell, page cache {info.cache} before loads"
    return [
        f"`{info.command}`: {sizes}, {how}, {info.seconds:.0f} s in all, {when}.  ",
        f"{_versions()}; fxexport from `{_fxexport_origin()}`.  ",
        f"Load average {info.load_before:.2f} at the start, {info.load_after:.2f} at the end.",
    ]


def markdown(outcomes: list[Outcome], info: RunInfo) -> str:
    """The whole report."""
    lines = ["# fxexport benchmark (issues 6 and 17)", "", *header(info), "", METHOD, ""]
    lines += ["## Models", "", *models_section(outcomes), ""]
    lines += ["## Export and load", "", *measurements_section(outcomes), ""]
    lines += ["## Targets", "", *targets_section(outcomes), ""]
    if any(o.cell.phase == "forward" for o in outcomes):
        note = (
            "Ratio: median over rounds of exported / source for two blocks of calls run back to back (one intra-op"
            " thread, torch.inference_mode); the process with the median ratio is shown."
        )
        lines += ["## Forward speed", "", note, "", *forward_section(outcomes), ""]
    if any(o.cell.phase == "memory" for o in outcomes):
        lines += ["## Forward peak memory", "", MEMORY_METHOD, "", *memory_section(outcomes), ""]
    if any(o.cell.phase == "process" for o in outcomes):
        lines += ["## Whole processes", "", PROCESS_METHOD, "", *process_section(outcomes), ""]
    return "\n".join(lines)


def chart(outcomes: list[Outcome], path: Path) -> Path | None:
    """Bar charts of export and load times per model and tool; None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    models = [m.name for m in MODELS if any(o.cell.model == m.name for o in outcomes)]
    figure, axes = plt.subplots(1, len(PHASES), figsize=(6 * len(PHASES), 4.5))
    for axis, phase in zip(axes, PHASES):
        tools = [t.name for t in TOOLS if any(o.cell.phase == phase and o.cell.tool == t.name for o in outcomes)]
        width = 0.8 / max(1, len(tools))
        for i, tool_name in enumerate(tools):
            heights = [value(outcomes, phase, m, tool_name) or float("nan") for m in models]
            axis.bar([x + i * width for x in range(len(models))], heights, width, label=tool_name)
        axis.set_xticks([x + width * (len(tools) - 1) / 2 for x in range(len(models))], models)
        axis.set_yscale("log")
        axis.set_ylabel("seconds (log scale; missing bar: failed)")
        axis.set_title(phase)
        axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
