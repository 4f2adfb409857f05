"""The digest of each weight file, computed from the tensors' memory on a thread while the export goes on.

BLAKE3 runs at 5-10 GB/s here, about as fast as the page cache takes writes: run after the writes, the
hash would still be a good share of a weight-heavy export. blake3 (for large inputs) and file writes
release the GIL, so the hash runs beside collecting, rendering, formatting and writing. It can start
before collect on a guess of the weight file (each parameter, buffer and tensor attribute of the module
tree once, under its first path): kept when collect's file has the same header and the same memory
behind each entry, else hashed again.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

import torch
from torch import nn

from .digests import Digest
from .guards import is_guards_module
from .ir import PackageIR, TensorIR
from .shards import SINGLE
from .weights import header, layout, safetensors_digest

# Below this many bytes a weight file hashes in milliseconds: not worth guessing it.
GUESS_BYTES = 8 << 20


@dataclass(frozen=True)
class _Job:
    head: bytes
    memory: tuple[tuple[object, ...], ...]  # where each entry's bytes are: what makes the same header the same file
    digest: Future[Digest | None]
    stop: threading.Event


def _memory(tensor: torch.Tensor) -> tuple[object, ...]:
    return (tensor.device, tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()))


class WeightHashes:
    """Weight file name -> its digest, computed on one thread; a context manager that stops it on exit."""

    def __init__(self) -> None:
        self._hasher = ThreadPoolExecutor(max_workers=1)
        self._jobs: dict[str, _Job] = {}

    def __enter__(self) -> WeightHashes:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        for job in self._jobs.values():
            job.stop.set()  # a no-op for a finished hash; else the export failed, or a guess was wrong
        self._hasher.shutdown(wait=True)

    def start(self, name: str, tensors: list[TensorIR]) -> None:
        """Hash the file `name` that holds `tensors`, unless the same file is being hashed already."""
        ordered = layout(tensors)
        head, memory = header(ordered), tuple(_memory(t.tensor) for t in ordered)
        job = self._jobs.get(name)
        if job is not None and job.head == head and job.memory == memory:
            return
        if job is not None:
            job.stop.set()
        stop = threading.Event()
        self._jobs[name] = _Job(head, memory, self._hasher.submit(safetensors_digest, ordered, None, stop), stop)

    def start_package(self, package: PackageIR) -> None:
        """Hash every weight file of `package` (a right guess goes on)."""
        for name in package.weight_files:
            self.start(name, file_tensors(package, name))

    def result(self, name: str) -> Digest:
        """The digest of the weight file `name`, once computed."""
        found = self._jobs[name].digest.result()
        assert found is not None, "a hash is stopped only when replaced or on exit"
        return found


def file_tensors(package: PackageIR, name: str) -> list[TensorIR]:
    """The entries of the weight file `name`."""
    return [t for t in package.stored if t.file == name]


def guess(hashes: WeightHashes, root: object) -> None:
    """Start hashing the single weight file an export of `root` will most likely write."""
    try:
        tensors = _guessed_tensors(root) if isinstance(root, nn.Module) else []
    except Exception:  # noqa: BLE001 - a guess only: collect hashes what it writes anyway
        tensors = []
    if tensors and sum(t.nbytes for t in tensors) >= GUESS_BYTES:
        hashes.start(SINGLE, tensors)


def _guessed_tensors(root: nn.Module) -> list[TensorIR]:
    """Each parameter, buffer and tensor attribute once, under its first path; none off the CPU."""
    seen: set[int] = set()
    found: list[TensorIR] = []
    for path, module in root.named_modules(remove_duplicate=False):
        if is_guards_module(module):
            continue
        held = [*module._parameters.items(), *module._buffers.items(), *((k, v) for k, v in vars(module).items() if isinstance(v, torch.Tensor))]
        for name, tensor in held:
            if tensor is None or id(tensor) in seen:
                continue
            if tensor.device.type != "cpu" or tensor.is_quantized or type(tensor) not in (torch.Tensor, nn.Parameter):
                return []  # not stored as it is held (quantized tensors, subclasses are stored as their parts): no guess
            seen.add(id(tensor))
            data = tensor.detach()
            found.append(TensorIR(f"{path}.{name}" if path else name, "", tuple(data.shape), str(data.dtype).removeprefix("torch."), False, True, data))
    return found
