"""The public entry point: run the stages capture -> collect -> render -> format -> write."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from torch import fx

from .collect import collect
from .formatting import format_sources
from .ir import PackageIR
from .names import is_plain_identifier
from .render import check_template_dirs, render
from .errors import FxExportError
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


def generate(gm: fx.GraphModule, *, package_name: str, module_name: str = "FxModule",
             templates: Sequence[str | Path] = ()) -> tuple[PackageIR, dict[str, str]]:  # fmt: skip
    """Collect, render and format without touching the disk: the IR and `{path: source}`.

    `templates` are folders searched, in order, before fxexport's own templates.
    """
    if not is_plain_identifier(module_name):
        raise FxExportError(f"class name {module_name!r} is not a valid Python identifier")
    folders = tuple(map(Path, templates))
    check_template_dirs(folders)
    package = collect(gm, module_name=package_name, class_name=module_name)
    return package, _format(render(package, folders), folders)


def _format(sources: dict[str, str], templates: tuple[Path, ...]) -> dict[str, str]:
    """black; invalid Python from a user's templates is their error to fix, not ours."""
    try:
        return format_sources(sources)
    except FxExportError as error:
        if not templates:
            raise
        cause = str(error).removesuffix("; please report this as a bug")
        raise FxExportError(f"{cause}; check the custom templates in {', '.join(map(str, templates))}") from error


def export(gm: fx.GraphModule, folder: str | Path, *, module_name: str = "FxModule", overwrite: bool = False,
           templates: Sequence[str | Path] = ()) -> ExportResult:  # fmt: skip
    """Write `gm` as a standalone package at `folder` defining class `module_name`.

    The folder holds `__init__.py`, `module.py`, `README.md`, the weights as safetensors and a
    manifest. `templates` are folders of Jinja templates searched before fxexport's own.
    Raises FxExportError with a one-line message for anything the caller can fix.
    """
    folder = Path(folder)
    check_target(folder, overwrite)
    package, sources = generate(gm, package_name=folder.name, module_name=module_name, templates=templates)
    files = write_package(folder, sources, package, __version__, overwrite)
    return ExportResult(folder, files, package.parameter_count, package.buffer_count, package.warnings)
