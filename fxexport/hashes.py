"""The digest of each large weight file, computed from the tensors' memory on a thread while the export goes on.

BLAKE3 runs at 5-10 GB/s here, about as fast as the page cache takes writes: run after the writes, the
hash would still be a good share of a weight-heavy export. blake3 (for large inputs) and file writes
release the GIL, so the hash runs beside rendering, formatting and writing, from when collect has
planned the file (started before, beside a busy collect, it waits for the interpreter lock on each
tensor, and slows collect). A file of small or few bytes is hashed as it is written instead.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

from .digests import Digest
from .ir import PackageIR, TensorIR
from .weights import safetensors_digest

# A weight file is hashed on the thread when it holds THREAD_BYTES or more in tensors of THREAD_MEAN_BYTES
# on average; else as it is written, on the export's own thread. The thread waits for the interpreter lock
# on each tensor, which pays only where the tensors are large (bench, AMD EPYC: the CNN's 44 MB in 122
# tensors of 375 KiB exports 5 ms sooner on the thread, the transformer's 19 MB in 256 KiB tensors 2 ms
# sooner, the quantized CNN's 11 MB in 109 KiB tensors 1-2 ms later).
THREAD_BYTES = 8 << 20
THREAD_MEAN_BYTES = 192 << 10


@dataclass(frozen=True)
class _Job:
    digest: Future[Digest | None]
    stop: threading.Event


class WeightHashes:
    """Weight file name -> its digest, computed on one thread; a context manager that stops it on exit."""

    def __init__(self) -> None:
        self._hasher = ThreadPoolExecutor(max_workers=1)
        self._jobs: dict[str, _Job] = {}

    def __enter__(self) -> WeightHashes:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        for job in self._jobs.values():
            job.stop.set()  # a no-op for a finished hash; else the export failed
        self._hasher.shutdown(wait=True)

    def start_package(self, package: PackageIR) -> None:
        """Hash on the thread every weight file of `package` that pays for it (see THREAD_BYTES); any other
        is left to be hashed as it is written."""
        for name in package.weight_files:
            tensors = file_tensors(package, name)
            size = sum(t.nbytes for t in tensors)
            if size >= THREAD_BYTES and size >= THREAD_MEAN_BYTES * len(tensors):
                stop = threading.Event()
                self._jobs[name] = _Job(self._hasher.submit(safetensors_digest, tensors, None, stop), stop)

    def hashes(self, name: str) -> bool:
        """True when the weight file `name` is hashed here (see start_package)."""
        return name in self._jobs

    def result(self, name: str) -> Digest:
        """The digest of the weight file `name`, once computed."""
        found = self._jobs[name].digest.result()
        assert found is not None, "a hash is stopped only on exit"
        return found


def file_tensors(package: PackageIR, name: str) -> list[TensorIR]:
    """The entries of the weight file `name`."""
    return [t for t in package.stored if t.file == name]
