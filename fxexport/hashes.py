"""The digest of each large weight file, computed from the tensors' memory on a thread while the export goes on;
and the guess, made before collect, of the weight file the export will write (prewrite.py writes it early).

BLAKE3 runs at 5-10 GB/s here, about as fast as the page cache takes writes: run after the writes, the
hash would still be a good share of a weight-heavy export. blake3 (for large inputs) and file writes
release the GIL, so the hash runs beside rendering, formatting and writing; it starts once collect has
planned the file (started before, it waits for the interpreter lock on each tensor beside a busy collect,
and slows it). A file of less than GUESS_BYTES is hashed as it is written instead. The guess (each
parameter, buffer and tensor attribute of the module tree once, under its first path) is kept when
collect's file has the same header and the same memory behind each entry (`file_identity`).
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

import torch
from torch import nn

from .digests import Digest
from .guards import is_guards_module
from .ir import PackageIR, TensorIR
from .weights import header, layout, safetensors_digest

# Below this many bytes a weight file hashes in milliseconds: not worth guessing it, nor a thread of its own.
GUESS_BYTES = 8 << 20


@dataclass(frozen=True)
class _Job:
    identity: tuple[bytes, tuple[tuple[object, ...], ...]]  # see file_identity
    digest: Future[Digest | None]
    stop: threading.Event


def file_identity(tensors: list[TensorIR]) -> tuple[bytes, tuple[tuple[object, ...], ...]]:
    """The header of the weight file holding `tensors` and where each entry's bytes are: equal for two
    lists of tensors only where their files are the same bytes."""
    ordered = layout(tensors)
    return header(ordered), tuple(_memory(t.tensor) for t in ordered)


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
        identity = file_identity(tensors)
        job = self._jobs.get(name)
        if job is not None and job.identity == identity:
            return
        if job is not None:
            job.stop.set()
        stop = threading.Event()
        self._jobs[name] = _Job(identity, self._hasher.submit(safetensors_digest, tensors, None, stop), stop)

    def start_package(self, package: PackageIR) -> None:
        """Hash every weight file of `package` of GUESS_BYTES or more; a smaller one is left to be hashed as
        it is written (getting at thousands of small tensors' bytes holds the interpreter: done on two
        threads at once, the writing and the hashing wait for each other)."""
        for name in package.weight_files:
            tensors = file_tensors(package, name)
            if sum(t.nbytes for t in tensors) >= GUESS_BYTES:
                self.start(name, tensors)
            elif name in self._jobs:
                self._jobs.pop(name).stop.set()

    def hashes(self, name: str) -> bool:
        """True when the weight file `name` is hashed here (see start_package)."""
        return name in self._jobs

    def result(self, name: str) -> Digest:
        """The digest of the weight file `name`, once computed."""
        found = self._jobs[name].digest.result()
        assert found is not None, "a hash is stopped only when replaced or on exit"
        return found


def file_tensors(package: PackageIR, name: str) -> list[TensorIR]:
    """The entries of the weight file `name`."""
    return [t for t in package.stored if t.file == name]


def guess(root: object) -> list[TensorIR]:
    """The entries of the single weight file an export of `root` will most likely write, where it holds
    GUESS_BYTES or more (else none: not worth a thread)."""
    try:
        held = _guessed_tensors(root) if isinstance(root, nn.Module) and _held_bytes(root) >= GUESS_BYTES else []
    except Exception:  # noqa: BLE001 - a guess only: collect plans what is written
        held = []
    if not held or sum(t.nbytes for _, t in held) < GUESS_BYTES:
        return []
    return [_entry(key, tensor.detach()) for key, tensor in held]


def _held_bytes(root: nn.Module) -> int:
    """The bytes of the parameters and buffers: a third of the time of walking every attribute of a model of
    thousands of modules, which is wasted where the file is too small to guess."""
    return sum(t.nbytes for t in itertools.chain(root.parameters(), root.buffers()))


def _entry(key: str, data: torch.Tensor) -> TensorIR:
    return TensorIR(key, "", tuple(data.shape), str(data.dtype).removeprefix("torch."), False, True, data)


def _guessed_tensors(root: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """Each parameter, buffer and tensor attribute once, under its first path; none off the CPU."""
    seen: set[int] = set()
    found: list[tuple[str, torch.Tensor]] = []
    for path, module in root.named_modules(remove_duplicate=False):
        if is_guards_module(module):
            continue
        held = [*module._parameters.items(), *module._buffers.items(), *((k, v) for k, v in vars(module).items() if isinstance(v, torch.Tensor))]
        for name, tensor in held:
            if tensor is None or id(tensor) in seen:
                continue
            if not tensor.is_cpu or tensor.is_quantized or type(tensor) not in (torch.Tensor, nn.Parameter):
                return []  # not stored as it is held (quantized tensors, subclasses are stored as their parts): no guess
            seen.add(id(tensor))
            found.append((f"{path}.{name}" if path else name, tensor))
    return found
