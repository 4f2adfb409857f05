"""The package's hash-checked bytecode, compiled in a fresh interpreter started before the sources exist.

marshal's output depends on which strings the compiling process has interned, so only a pristine
process gives the same bytes every time. Starting one takes longer than compiling a model's code, so
an export starts it first, beside collecting and rendering, and hands it the files once written.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from .errors import FxExportError

# The folder and the sources, relative to it, come on stdin once the files exist, NUL-separated.
_COMPILE = """
import py_compile, sys
tag = sys.argv[1]
folder, *sources = sys.stdin.read().split("\\0")
for relative in sources:
    stem = relative.rpartition(".")[0]
    py_compile.compile(folder + "/" + relative, cfile=f"{folder}/__pycache__/{stem}.{tag}.pyc", dfile=relative,
                       doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
"""


class Compiler:
    """A fresh interpreter waiting for the files to compile (see write_bytecode)."""

    def __init__(self, tag: str) -> None:
        command = [sys.executable, "-I", "-c", _COMPILE, tag]
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def start(self, folder: Path, sources: list[str]) -> None:
        """Compile `sources` (paths relative to `folder`) into `folder/__pycache__`; the caller goes on meanwhile."""
        assert self._process.stdin is not None
        try:
            self._process.stdin.write("\0".join([str(folder.absolute()), *sources]))
            self._process.stdin.close()
        except BrokenPipeError:
            pass  # the interpreter ended: finish says how

    def finish(self) -> None:
        """Wait for the compiling; FxExportError if it failed."""
        assert self._process.stderr is not None
        errors = self._process.stderr.read()
        if self._process.wait() != 0:
            lines = errors.strip().splitlines() or [f"exit status {self._process.returncode}"]
            raise FxExportError(f"cannot compile the generated code to bytecode: {lines[-1]}; export with bytecode=False (--no-bytecode)")

    def stop(self) -> None:
        """End the interpreter if it still runs (the export failed, or its files are about to be removed)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdin, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


@contextlib.contextmanager
def compiler(enabled: bool = True) -> Iterator[Compiler | None]:
    """A Compiler started now and stopped on exit; None when not `enabled`, or when this interpreter
    caches no bytecode or cannot start itself."""
    tag = sys.implementation.cache_tag
    if not enabled or tag is None or not sys.executable:
        yield None
        return
    started = Compiler(tag)
    try:
        yield started
    finally:
        started.stop()


def write_bytecode(folder: Path, sources: list[str]) -> None:
    """Compile each source into `__pycache__`, as `pip install` does, so the first import is fast.

    Hash-checked pycs: the interpreter uses one only while its source is byte-for-byte the one
    compiled (an edited module.py is compiled afresh), wherever the folder is moved, and reads
    it even where bytecode is never written (PYTHONDONTWRITEBYTECODE, read-only folders). The
    name recorded in the code is relative; the import system replaces it with the real path.
    """
    with compiler(bool(sources)) as started:
        if started is not None:
            started.start(folder, sources)
            started.finish()
