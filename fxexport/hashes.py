"""The digest of each large weight file, computed from the tensors' memory on a thread while the export goes on.

BLAKE3 runs at 5-10 GB/s here, about as fast as the page cache takes writes: run after the writes, the
hash would still be a good share of a weight-heavy export. blake3 (for large inputs) and file writes
release the GIL, so the hash runs beside rendering, formatting and writing, from when collect has
planned the file (started before, beside a busy collect, it waits for the interpreter lock on each
tensor, and slows collect). A file of less than THREAD_BYTES is hashed as it is written instead.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

from .digests import Digest
from .ir import PackageIR, TensorIR
from .weights import safetensors_digest

# Below this many bytes a weight file is hashed as it is written, on the export's own thread: the hash
# (5.6 GB/s, 11 ms for 64 MB) costs less there than a thread that waits for the interpreter lock on
# each tensor beside the export (the quantized CNN's 11 MB: 45 ms exports on a thread, 37 without).
THREAD_BYTES = 64 << 20


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
        """Hash every weight file of `package` of THREAD_BYTES or more; a smaller one is left to be hashed as
        it is written (getting at thousands of small tensors' bytes holds the interpreter: done on two
        threads at once, the writing and the hashing wait for each other)."""
        for name in package.weight_files:
            tensors = file_tensors(package, name)
            if sum(t.nbytes for t in tensors) >= THREAD_BYTES:
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
