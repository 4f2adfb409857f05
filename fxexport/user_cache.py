"""The per-user folder where fxexport keeps what it compiled for the next process: Jinja's own cache
folder (mode 0700 and owner checked by Jinja, in the temporary directory), shared by the compiled
templates (render.py) and the loader's bytecode (bytecode.py)."""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path

import jinja2


@functools.cache
def cache_folder() -> Path | None:
    """The folder, or None where no safe one can be made (its owner or mode is not ours)."""
    try:
        return Path(jinja2.FileSystemBytecodeCache().directory)
    except (OSError, RuntimeError):
        return None


def read_entry(name: str) -> bytes | None:
    """An entry's bytes, None when it is not there or cannot be read."""
    folder = cache_folder()
    if folder is None:
        return None
    try:
        return (folder / name).read_bytes()
    except OSError:
        return None


def write_entry(name: str, data: bytes) -> None:
    """Keep `data` as entry `name`, whole or not at all (written aside, then renamed); a folder that
    cannot be written to is skipped."""
    folder = cache_folder()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temporary, folder / name)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)  # left only where it was not renamed
