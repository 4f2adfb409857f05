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

# The folder and the sources, relative to it, come on stdin once the files exist, NUL-separated. What
# py_compile.compile does for a hash-checked pyc, with the import system's own functions (loaded when the
# interpreter starts): importing py_compile (enum, traceback, tokenize) took 10 ms of a core the export
# wants, as does `site` (-S).
_COMPILE = """
import _imp, sys
from importlib._bootstrap_external import _RAW_MAGIC_NUMBER, _calc_mode, _code_to_hash_pyc, _path_split, _write_atomic
tag = sys.argv[1]
folder, *sources = sys.stdin.read().split("\\0")
made = set()
for relative in sources:
    path = folder + "/" + relative
    with open(path, "rb") as handle:
        data = handle.read()
    code = compile(data, relative, "exec", dont_inherit=True, optimize=-1)
    directory, name = _path_split(relative)
    cache = folder + "/" + (directory + "/" if directory else "") + "__pycache__"
    if cache not in made:
        __import__("os").makedirs(cache, exist_ok=True)
        made.add(cache)
    pyc = _code_to_hash_pyc(code, _imp.source_hash(_RAW_MAGIC_NUMBER, data), True)
    _write_atomic(cache + "/" + name.rpartition(".")[0] + "." + tag + ".pyc", pyc, _calc_mode(path))
"""


class Compiler:
    """A fresh interpreter waiting for the files to compile (see write_bytecode)."""

    def __init__(self, tag: str) -> None:
        command = [sys.executable, "-I", "-S", "-c", _COMPILE, tag]
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
