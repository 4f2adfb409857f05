"""The weight file an export most likely writes, written on a thread while collect runs.

Writing a weight file is copying its bytes into the page cache, which runs outside the interpreter: on
a thread it overlaps collecting, rendering and formatting (tens of milliseconds for a CNN's 45 MB). The
file is the one hashes.py guesses before collect (each parameter, buffer and tensor attribute once);
it goes into a temporary file beside the target folder and is moved into the package where collect's
file has the same header and the same memory behind each entry, else removed and written again.
The thread takes the interpreter lock rarely (the writes go in batches of pieces, see weights.py): each
time it waits for the lock, a busy main thread holds it up to 5 ms. The file is hashed from the tensors'
memory once collect has planned it (hashes.py), beside the rest of this writing.
Progress is reported on the caller's thread, as the thread's bytes arrive.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, TimeoutError
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from .hashes import file_identity
from .ir import TensorIR
from .weights import write_safetensors

_POLL = 0.05  # seconds between progress reports while the thread finishes


@dataclass(frozen=True)
class _Job:
    identity: tuple[bytes, tuple[tuple[object, ...], ...]]  # the file's header and the memory behind its entries
    path: Path
    done: Future[None]
    stop: threading.Event
    written: list[int]  # bytes written so far, by the thread


class _Stopped(Exception):
    pass


class EarlyWrites:
    """Weight file name -> that file, written on one thread into a temporary file beside `folder`; a
    context manager that stops the thread and removes what it wrote and no one took."""

    def __init__(self, folder: Path) -> None:
        self._parent = folder.absolute().parent
        self._prefix = f".{folder.name}."
        self._writer = ThreadPoolExecutor(max_workers=1)
        self._jobs: dict[str, _Job] = {}

    def __enter__(self) -> EarlyWrites:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        for job in self._jobs.values():
            job.stop.set()
        self._writer.shutdown(wait=True)
        for job in self._jobs.values():
            job.path.unlink(missing_ok=True)

    def start(self, name: str, tensors: list[TensorIR]) -> None:
        """Write the file `name` holding `tensors`; nothing where no file can be made beside the folder yet
        (write_package makes its parents, or reports why it cannot)."""
        path = self._new_file()
        if path is None:
            return
        stop, written = threading.Event(), [0]
        done = self._writer.submit(_write, path, tensors, stop, written)
        self._jobs[name] = _Job(file_identity(tensors), path, done, stop, written)

    def _new_file(self) -> Path | None:
        """A new empty file beside the folder, with the permissions `open` gives (the umask's, where
        mkstemp's are the owner's only); None where the folder's parent is not made yet or not writable."""
        for _ in range(100):
            path = self._parent / f"{self._prefix}{secrets.token_hex(6)}.fxexport-tmp"
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                continue
            except OSError:
                return None
            return path
        return None

    def holds(self, name: str, tensors: list[TensorIR]) -> bool:
        """True when the file `name` being written here holds `tensors` as collect planned them; else
        its writing stops (the caller writes the file)."""
        job = self._jobs.get(name)
        if job is not None and job.identity != file_identity(tensors):
            job.stop.set()
            return False
        return job is not None

    def take(self, name: str, into: Path, advance: Callable[[int], None]) -> None:
        """Move the file `name` (see `holds`) to `into` once written, reporting its bytes to `advance(count)`
        as they are written."""
        job = self._jobs[name]
        reported = 0
        while True:
            try:
                job.done.result(timeout=_POLL)  # an error writing (a full disk) is raised here
                break
            except TimeoutError:
                reported = _report(job, reported, advance)
        _report(job, reported, advance)
        os.replace(job.path, into)
        del self._jobs[name]


def _write(path: Path, tensors: list[TensorIR], stop: threading.Event, written: list[int]) -> None:
    def advance(count: int) -> None:
        if stop.is_set():
            raise _Stopped
        written[0] += count

    with contextlib.suppress(_Stopped):
        write_safetensors(path, tensors, advance)


def _report(job: _Job, reported: int, advance: Callable[[int], None]) -> int:
    now = job.written[0]
    if now > reported:
        advance(now - reported)
    return now
