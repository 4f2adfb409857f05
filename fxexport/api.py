"""The public entry point: run the stages capture -> collect -> render -> format -> write."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import fx, nn

from .collect import RESERVED, collect
from .errors import FxExportError
from .formatting import check_python, format_definitions, format_sources, wrap_statements
from .hashes import WeightHashes
from .ir import PackageIR
from .names import BUILTIN_NAMES, is_plain_identifier
from .producers import normalize
from .render import TemplateFolders, render, template_folders
from .shards import plan_weights
from .write import check_target, write_package

__version__ = "0.1.0"


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    folder: Path
    files: tuple[str, ...]
    parameter_count: int
    buffer_count: int
    warnings: tuple[str, ...]


# Module-level names module.py uses as they are, or that the import table keeps for imports (imports.FIXED): a class
# of that name would shadow them.
TEMPLATE_NAMES = frozenset({"torch", "nn", "F", "gc", "json", "math", "struct", "threading", "Mapping", "contextmanager", "Path"})


def check_class_name(name: str) -> None:
    """Refuse a generated class name that is not a plain Python identifier, or that module.py uses already."""
    if not is_plain_identifier(name):
        raise FxExportError(f"class name {name!r} is not a valid Python identifier")
    if name in RESERVED or name in BUILTIN_NAMES or name in TEMPLATE_NAMES:
        raise FxExportError(f"class name {name!r} is a name module.py uses already; choose another, e.g. {name.capitalize() + 'Model'!r}")


def generate(
    gm: fx.GraphModule | torch.export.ExportedProgram | torch.export.UnflattenedModule,
    *,
    package_name: str,
    module_name: str = "FxModule",
    templates: TemplateFolders = (),
    standalone: bool = False,
    input_checks: bool = True,
    weights: str = "safetensors",
    max_shard_size: str | int | None = None,
    annotate: bool = True,
    shapes: bool = False,
    structure: str = "structured",
    classes_from: nn.Module | None = None,
) -> tuple[PackageIR, dict[str, str]]:
    """Collect, render and format without touching the disk: the IR and `{path: source}`.

    `gm` may also be a `torch.export.ExportedProgram` or a `torch.export.unflatten` module.
    `templates` is a folder, or folders searched in order, before fxexport's own templates.
    """
    check_class_name(module_name)
    folders = template_folders(templates)
    package = _package(normalize(gm), package_name, module_name, standalone, input_checks, weights, max_shard_size, annotate, shapes, structure, classes_from)
    return package, _sources(package, folders)


def _package(
    root: fx.GraphModule,
    package_name: str,
    module_name: str,
    standalone: bool,
    input_checks: bool,
    weights: str,
    max_shard_size: str | int | None,
    annotate: bool,
    shapes: bool,
    structure: str,
    classes_from: nn.Module | None,
) -> PackageIR:
    """collect, then the weight files planned: what the files are rendered from."""
    package = collect(
        root, module_name=package_name, class_name=module_name, standalone=standalone, input_checks=input_checks, annotate=annotate, shapes=shapes,
        structure=structure, classes_from=classes_from,
    )
    return format_definitions(plan_weights(package, weights=weights, max_shard_size=max_shard_size))


def _sources(package: PackageIR, folders: tuple[Path, ...]) -> dict[str, str]:
    """render and format. A user's templates may place the lines elsewhere: then the rendered files are wrapped whole."""
    return _format(render(package if folders else wrap_statements(package), folders), folders)


def _format(sources: dict[str, str], templates: tuple[Path, ...]) -> dict[str, str]:
    """black's style; invalid Python from a user's templates is their error to fix, not ours."""
    try:
        if templates:  # our own templates give valid code (the bytecode step compiles it too); a user's may not
            check_python(sources)
        return format_sources(sources)
    except FxExportError as error:
        if not templates:
            raise
        cause = str(error).removesuffix("; please report this as a bug")
        raise FxExportError(f"{cause}; check the custom templates in {', '.join(map(str, templates))}") from error


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off during an export, as it was after: an export allocates
    hundreds of thousands of short-lived objects, and each full pass of the collector scans every
    object torch has made (0.1 s a pass, twice for a 20,000-node graph) for cycles it will not find
    there. Those an export leaves are collected after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def export(
    gm: fx.GraphModule | torch.export.ExportedProgram | torch.export.UnflattenedModule,
    folder: str | Path,
    *,
    module_name: str = "FxModule",
    overwrite: bool = False,
    standalone: bool = False,
    input_checks: bool = True,
    weights: str = "safetensors",
    max_shard_size: str | int | None = None,
    progress: Callable[[int, int], None] | None = None,
    templates: TemplateFolders = (),
    annotate: bool = True,
    shapes: bool = False,
    bytecode: bool = True,
    structure: str = "structured",
    classes_from: nn.Module | None = None,
) -> ExportResult:
    """Write `gm` as a standalone package at `folder` defining class `module_name`.

    The folder holds `__init__.py`, `module.py`, `README.md`, the weights as safetensors and a
    manifest. `templates` is a folder of Jinja templates searched before fxexport's own, or a
    list of such folders (the first wins).
    With `standalone=True`, any import other than torch and the standard library is an error.
    `input_checks=False` drops the input checks torch.export graphs carry (kept by default).
    `weights="none"` writes code only (the class then takes `weights=` a path or state_dict);
    `max_shard_size` (bytes or e.g. "2GB") splits the weights into shards with an index.
    `progress(done, total)` is called as weight bytes are written. `annotate=False` leaves out
    the comments that say which source line each group of statements came from; `shapes=True`
    adds a shape/dtype comment to each statement whose node recorded one. `bytecode=False`
    leaves out the compiled `__pycache__` (hash-checked pycs that make the first import fast).
    `structure="structured"` (the default) writes a class per module the graph recorded calls of,
    named after its source class, with containers indexed; `structure="flat"` writes the whole
    graph as one forward. Modules that cannot be cut out stay inline (listed in the manifest).
    `classes_from` is the model `gm` was captured from: where the graph records no class for a
    module (a feature extractor's GraphModule holds plain `nn.Module`s), the class this model holds
    at the same path names the generated class and its comment says where that class is defined.
    `gm` may also be a `torch.export.ExportedProgram` or a `torch.export.unflatten` module.
    Raises FxExportError with a one-line message for anything the caller can fix.
    """
    folder = Path(folder)
    check_target(folder, overwrite)
    check_class_name(module_name)
    folders = template_folders(templates)
    with _collector_paused(), WeightHashes() as hashes:
        package = _package(normalize(gm), folder.name, module_name, standalone, input_checks, weights, max_shard_size, annotate, shapes, structure, classes_from)
        hashes.start_package(package)  # beside rendering, formatting and writing
        sources = _sources(package, folders)
        files = write_package(folder, sources, package, __version__, overwrite, progress, bytecode, hashes)
    return ExportResult(folder, files, package.parameter_count, package.buffer_count, package.warnings)
