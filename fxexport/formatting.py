"""format: black, in memory, with a pinned mode, so tests compare exactly what is written."""

from __future__ import annotations

import black

from .errors import FxExportError

MODE = black.Mode(target_versions={black.TargetVersion.PY39}, line_length=88)


def format_source(path: str, source: str) -> str:
    try:
        return black.format_str(source, mode=MODE)
    except Exception as error:  # black raises several types for invalid input
        raise FxExportError(f"generated {path} is not valid Python ({error}); please report this as a bug") from error


def format_sources(files: dict[str, str]) -> dict[str, str]:
    return {path: format_source(path, text) if path.endswith(".py") else text for path, text in files.items()}
