"""Run zoo models through each producer, export them, and check them standalone in fresh processes.

A pair (model, producer) that yields a GraphModule is exported to a staging folder, moved,
recorded, and measured for readability against the eager model's own classes (readability.py:
the harness hands each export folder its model's classes, read once before any capture); then batches of packages are imported and compared in fresh interpreters
where torchvision, timm, transformers and fxexport cannot be imported. Outputs must be
bit-for-bit equal (torch.equal) to the GraphModule's; a pair that makes no GraphModule must
be listed as unsupported in the catalog (see `failure`).
"""

from __future__ import annotations

import gc
import importlib
import shutil
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import fx, nn

import fxexport
from tests.roundtrip import check_details, record
from tests.zoo.catalog import LIBRARIES, Unsupported, ZooModel, eager_of, no_hf_tracer
from tests.zoo.readability import (
    Readability,
    SourceClass,
    call_nodes,
    graph_nodes,
    layer_paths,
    measure,
    recorded_classes,
    source_classes,
)

PRODUCERS = ("symbolic_trace", "export", "feature_extraction")
SHORT = {"symbolic_trace": "fx", "export": "ep", "feature_extraction": "fe"}
BATCH = 12  # packages checked per fresh process


@dataclass
class Row:
    model: str
    library: str
    kind: str
    producer: str
    unsupported: Unsupported | None = None  # the catalog lists this pair as making no GraphModule
    graph_error: str = ""  # the producer could not make a GraphModule
    export_error: str = ""
    export_seconds: float = 0.0
    loaded: bool = False
    matched: bool = False  # bit for bit, with the state, sharing and layout checks passing
    exact: bool = False  # every output torch.equal to the GraphModule's
    max_error: float = 0.0
    load_seconds: float = 0.0
    problems: tuple[str, ...] = ()
    readability: Readability | None = None  # module.py against the source model's classes, once exported
    fixed_point: str = ""  # symbolic_trace pairs: "yes", or how the export of a re-trace of the export differs
    not_fixed_point: str = ""  # the catalog's reason why it differs, where it lists one
    needs: tuple[str, ...] = ()  # libraries the export imports (ZooModel.needs)

    @property
    def package(self) -> str:
        return f"{self.model}_{SHORT[self.producer]}"

    @property
    def has_graph(self) -> bool:
        return not self.graph_error

    @property
    def exported(self) -> bool:
        return self.has_graph and not self.export_error


def missing_libraries(libraries: tuple[str, ...] = LIBRARIES) -> list[str]:
    """The zoo libraries that cannot be imported here (torchvision does not import beside another torch)."""
    missing = []
    for name in libraries:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - not installed, or installed for another torch
            missing.append(name)
    return missing


def _hf_trace(model: nn.Module, kwargs: dict[str, Any]) -> fx.GraphModule:
    from transformers.utils.fx import symbolic_trace  # transformers before 5.0

    saved = dict(vars(torch))
    try:
        return symbolic_trace(model, input_names=list(kwargs))
    finally:  # a trace that raises leaves torch.arange, torch.zeros, ... patched: later pairs would read its wrappers
        for name, value in saved.items():
            if vars(torch).get(name) is not value:
                setattr(torch, name, value)


def capture(entry: ZooModel, producer: str, model: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> fx.GraphModule:
    if producer == "export":
        return torch.export.export(model, args, kwargs).module()
    if producer == "feature_extraction":
        assert isinstance(model, fx.GraphModule), "a feature extractor's build() returns its GraphModule"
        return model
    if entry.library == "transformers" and not no_hf_tracer():
        return _hf_trace(model, kwargs)
    return fx.symbolic_trace(model)


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text[:300]


def export_pair(entry: ZooModel, producer: str, model: nn.Module, work: Path, source: tuple[SourceClass, ...] = ()) -> Row:
    """Capture, export, move, record and measure one pair; the check comes later, in a batch.

    `source`: the eager model's classes (`readability.source_classes`), read before any capture."""
    row = Row(entry.name, entry.library, entry.kind, producer, entry.listed(producer), needs=entry.needs)
    args, kwargs = entry.inputs()
    try:
        gm = capture(entry, producer, model, args, kwargs)
    except Exception as error:  # noqa: BLE001 - any producer failure means "no graph"
        row.graph_error = _short(error)
        return row
    for earlier in (work / "staging" / row.package, work / "moved" / row.package):  # a kept folder's last run
        shutil.rmtree(earlier, ignore_errors=True)
    start = time.perf_counter()
    try:
        fxexport.export(gm, work / "staging" / row.package, classes_from=eager_of(model))  # an extractor's classes: the eager model's
    except Exception as error:  # noqa: BLE001 - reported in the table
        row.export_error = _short(error)
        (work / "errors").mkdir(exist_ok=True)
        (work / "errors" / f"{row.package}.txt").write_text(traceback.format_exc())
        return row
    row.export_seconds = time.perf_counter() - start
    shutil.move(str(work / "staging" / row.package), str(work / "moved" / row.package))
    record(row.package, gm, args, kwargs, None, work / "expect")
    ran = recorded_classes(gm) | ({s.name for s in source} if eager_of(model) is not None else set())  # an extractor records none
    row.readability = measure(work / "moved" / row.package, source, graph_nodes(gm), call_nodes(gm), layer_paths(model, gm), frozenset(ran))
    if producer == "symbolic_trace" and entry.library != "transformers":
        row.fixed_point = fixed_point(work / "moved" / row.package, work / "fixed_point")
        row.not_fixed_point = entry.not_fixed_point
    return row


def fixed_point(folder: Path, scratch: Path) -> str:
    """Issue 14's fixed point: import the export (a copy, in `scratch`), `symbolic_trace` it, export that
    again: "yes" when module.py comes out the same (its `Producer:` line aside), else the first line that differs."""
    copy = scratch / folder.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    sys.path.insert(0, str(scratch))
    try:
        model = importlib.import_module(folder.name).FxModule()
        _, sources = fxexport.generate(fx.symbolic_trace(model), package_name=folder.name)
    except Exception as error:  # noqa: BLE001 - reported in the table
        return f"no: {_short(error)}"
    finally:
        sys.path.remove(str(scratch))
        for name in [m for m in sys.modules if m == folder.name or m.startswith(f"{folder.name}.")]:
            del sys.modules[name]
        shutil.rmtree(copy, ignore_errors=True)
    first, again = ([line for line in text.splitlines() if "Producer:" not in line] for text in ((folder / "module.py").read_text(), sources["module.py"]))
    if first == again:
        return "yes"
    at = next((i for i, (a, b) in enumerate(zip(first, again)) if a != b), min(len(first), len(again)))
    return f"no: line {at + 1}: {(first[at] if at < len(first) else '').strip()[:60]!r}"


def check_rows(rows: list[Row], work: Path, python: str = sys.executable) -> None:
    """Fill in loaded/matched from fresh processes, BATCH packages each. An export that needs a library
    (Row.needs) is checked by this interpreter, which has it, with that library allowed."""
    exported = [r for r in rows if r.exported and not r.needs]
    batches = [(exported[start : start + BATCH], LIBRARIES, python) for start in range(0, len(exported), BATCH)]
    batches += [([r], tuple(lib for lib in LIBRARIES if lib not in r.needs), sys.executable) for r in rows if r.exported and r.needs]
    for batch, blocked, checker in batches:
        report = check_details(work / "moved", work / "expect", [r.package for r in batch], blocked, python=checker)
        for row in batch:
            details = report[row.package]
            row.loaded, row.problems, row.exact = details["loaded"], tuple(details["problems"]), details["exact"]
            row.matched = row.loaded and row.exact and not row.problems
            row.max_error, row.load_seconds = details["max_error"], details["load_seconds"]


def run(entries: list[ZooModel], work: Path, producers: tuple[str, ...] = PRODUCERS, log: Any = None, check: bool = True,
        python: str = sys.executable) -> list[Row]:  # fmt: skip
    """Every pair of `entries` and `producers`; `check=False` skips the standalone check (readability only);
    `python` checks the exports (another interpreter: another torch version loads what this one exported)."""
    for sub in ("staging", "moved", "expect"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    rows = []
    for entry in entries:
        torch.manual_seed(0)
        try:
            model = entry.build()
        except Exception as error:  # noqa: BLE001 - a catalog entry this library version cannot build
            rows += [Row(entry.name, entry.library, entry.kind, p, entry.listed(p), f"cannot build: {_short(error)}")
                     for p in producers if p in entry.producers]  # fmt: skip
            continue
        source = source_classes(model, eager_of(model))  # before any producer touches the model
        for producer in (p for p in producers if p in entry.producers):
            rows.append(export_pair(entry, producer, model, work, source))
            if log:
                log(rows[-1])
        del model
        gc.collect()
    if check:
        check_rows(rows, work, python)
    return rows


def failure(row: Row) -> str:
    """Why the pair fails the zoo, '' when it passes."""
    if row.unsupported is not None:
        return _listing_failure(row, row.unsupported)
    if not row.has_graph:
        return f"no GraphModule, and tests/zoo/catalog.py does not list the pair as unsupported: {row.graph_error}"
    if not row.exported:
        return f"export failed: {row.export_error}"
    if row.problems or not row.loaded:
        return "; ".join(row.problems) or "not loaded"
    return "" if row.exact else f"outputs not bit-for-bit equal (max abs error {row.max_error:.3g})"


def fixed_point_failure(row: Row) -> str:
    """Why a symbolic_trace pair fails issue 14's fixed point, '' when it passes (or is not checked): a pair
    the catalog lists as no fixed point must still differ."""
    if row.fixed_point and row.not_fixed_point:
        return "" if row.fixed_point != "yes" else f"listed as not a fixed point ({row.not_fixed_point}) but it is one: remove the listing"
    return "" if row.fixed_point in ("", "yes") else f"the export of a symbolic_trace of the export differs, {row.fixed_point.removeprefix('no: ')}"


def _listing_failure(row: Row, listed: Unsupported) -> str:
    """A listed pair must still fail, and with the listed error: the list stays exact."""
    if row.has_graph:
        return f"listed as unsupported ({listed.reason}) but {row.producer} made a GraphModule: remove the listing"
    if listed.error not in row.graph_error:
        return f"listed as unsupported with {listed.error!r}, but the error is now: {row.graph_error}"
    return ""
