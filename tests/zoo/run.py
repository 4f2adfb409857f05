"""The zoo check: `python -m tests.zoo.run [--only SUBSTRING ...] [--producer NAME] [--keep DIR] [--readability-only]`.

Needs torchvision, timm and transformers (a second venv; see README.md). Prints one row per
(model, producer) pair, the cause of every failure, then the readability table: one row per
exported pair, its module.py measured against the source model's classes (readability.py).
Exits 1 when a pair did not export, load standalone and match bit for bit, unless
tests/zoo/catalog.py lists it as unsupported (and it still fails that way).
`--readability-only` skips the standalone check and prints the readability table alone, with
the failures that need no check (exit 1 when a pair made no GraphModule unlisted, or did not export).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import torch

from tests.zoo import readability
from tests.zoo.catalog import ZOO
from tests.zoo.harness import PRODUCERS, Row, failure, fixed_point_failure, missing_libraries, run

COLUMNS = ("model", "library", "producer", "exported", "loaded standalone", "matched", "fixed point", "export s", "load s", "note")


def _matched(row: Row) -> str:
    if row.matched:
        return "exact"
    return f"no ({row.max_error:.1e})" if row.loaded and not row.exact else "no"


def _note(row: Row) -> str:
    if failure(row) or fixed_point_failure(row):
        return "FAIL"
    return f"unsupported: {row.unsupported.reason}" if row.unsupported else ""


def cells(row: Row) -> tuple[str, ...]:
    if not row.has_graph:
        return (row.model, row.library, row.producer, "no graph", "-", "-", "-", "-", "-", _note(row))
    loaded = ("yes" if row.loaded else "no") if row.exported else "-"
    matched = _matched(row) if row.exported else "-"
    export_s = f"{row.export_seconds:.1f}" if row.exported else "-"
    load_s = f"{row.load_seconds:.1f}" if row.loaded else "-"
    fixed = row.fixed_point.split(":")[0] or "-"  # the difference is in the failure's note
    return (row.model, row.library, row.producer, "yes" if row.exported else "no", loaded, matched, fixed, export_s, load_s, _note(row))


def grid(header: tuple[str, ...], body: list[tuple[str, ...]]) -> str:
    body = [header, *body]
    widths = [max(len(line[i]) for line in body) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    return grid(COLUMNS, [cells(r) for r in rows])


def readability_table(rows: list[Row]) -> str:
    """One row per exported pair: module.py against the source model's own classes (issues 14 and 15),
    and a torch.export's class lines against the symbolic_trace export of the same model."""
    traced = {r.model: r.readability.class_lines for r in rows if r.readability and r.producer == "symbolic_trace"}

    def versus_fx(r: Row) -> str:
        lines = traced.get(r.model)
        return f"{r.readability.class_lines / lines:.2f}" if r.readability and r.producer == "export" and lines else "-"

    body = [(r.model, r.producer, *readability.cells(r.readability), versus_fx(r)) for r in rows if r.readability]
    return "readability (issues 14, 15)\n" + grid(("model", "producer", *readability.HEADER, "class lines / fx"), body)


def summary(rows: list[Row]) -> str:
    pairs = [r for r in rows if r.has_graph]
    models = len({r.model for r in rows})
    listed = sum(r.unsupported is not None and not failure(r) for r in rows)
    counts = (len(pairs), sum(r.exported for r in pairs), sum(r.loaded for r in pairs), sum(r.matched for r in pairs))
    traced = [r for r in pairs if r.fixed_point]
    return (f"{models} models, {len(rows)} (model, producer) attempts, {len(rows) - len(pairs)} without a GraphModule "
            f"({listed} listed as unsupported); pairs {counts[0]}, exported {counts[1]}, loaded standalone {counts[2]}, "
            f"matched bit for bit {counts[3]}; symbolic_trace exports that are fixed points {sum(r.fixed_point == 'yes' for r in traced)} "
            f"of {len(traced)}; failures {len(failures(rows))}")  # fmt: skip


def failures(rows: list[Row]) -> list[str]:
    return [f"FAIL {r.package}: {problem}" for r in rows for problem in (failure(r), fixed_point_failure(r)) if problem]


def unsupported(rows: list[Row]) -> list[str]:
    return [f"unsupported {r.package}: {r.graph_error}" for r in rows if r.unsupported and not failure(r)]


def torch_version(python: str) -> str:
    """The torch version of another interpreter (the one that checks, in the cross-version check)."""
    found = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=False)
    return found.stdout.strip() or f"unknown ({found.stderr.strip()[-200:]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.zoo.run", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run models whose name contains one of these")
    parser.add_argument("--producer", choices=PRODUCERS, action="append", help="default: every producer")
    parser.add_argument("--keep", type=Path, help="write the exports here instead of a temporary folder")
    parser.add_argument("--readability-only", action="store_true", help="skip the standalone check; print the readability table alone")
    parser.add_argument("--check-with", metavar="PYTHON", default=sys.executable,
                        help="the interpreter that loads and checks the exports (another torch version's: the cross-version check)")
    options = parser.parse_args(argv)
    entries = [e for e in ZOO if not options.only or any(s in e.name for s in options.only)]
    if missing := missing_libraries(tuple(sorted({e.library for e in entries}))):
        print(f"the zoo needs {', '.join(missing)}: install them in a separate venv (see README.md)", file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="fxexport-zoo-") as scratch:
        work = options.keep or Path(scratch)
        rows = run(entries, work, tuple(options.producer or PRODUCERS), log=lambda r: print(f"  {r.package}: {cells(r)[3]}", flush=True),
                   check=not options.readability_only, python=options.check_with)  # fmt: skip
    if options.readability_only:
        unchecked = [r for r in rows if not r.exported or r.unsupported is not None]  # failures the check cannot change
        print(readability_table(rows), *failures(unchecked), sep="\n")
        return 1 if failures(unchecked) else 0
    checked = f"checked by {options.check_with}: torch {torch_version(options.check_with)}, exported with torch {torch.__version__}"
    print(table(rows), *unsupported(rows), *failures(rows), summary(rows), checked, "", readability_table(rows), sep="\n")
    return 1 if failures(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
