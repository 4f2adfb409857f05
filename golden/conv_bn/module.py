"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 589; buffers: 6; 2,500 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

import gc
import json
import math
import struct
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 15
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2, stride=2)
            self.conv2 = nn.Conv2d(
                8, 8, 3, stride=2, padding=1, groups=2, padding_mode="reflect"
            )
            self.bn2 = nn.BatchNorm2d(8, eps=0.001, momentum=0.2)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.flat = nn.Flatten()
            self.fc = nn.Linear(8, 5)
        self.eval()
        if load_weights:
            load_tensors(self, weights, device=device, dtype=dtype)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.relu(x, inplace=False)
        x = self.pool(x)
        x = self.conv2(x)
        x = self.bn2(x)
        x = torch.relu(x)
        x = self.gap(x)
        x = self.flat(x)
        x = self.fc(x)
        return x


def load_tensors(module: nn.Module, weights=None, *, device=None, dtype=None) -> None:
    """Fill every parameter, buffer and tensor constant of `module` with saved values.

    `weights` is None for the safetensors files beside this module, the path of a
    safetensors file or of a folder of them, or a state_dict-like mapping of tensors.
    A tensor held in several places (TIED_TENSORS) is stored once and assigned to each.
    """
    owners = dict(module.named_modules())
    loaded: dict[str, torch.Tensor] = {}
    views: dict[str, list] = {}
    for name, (storage, *layout) in TENSOR_VIEWS.items():
        views.setdefault(storage, []).append((name, *layout))
    with gc_paused():
        for saved_key, saved in saved_tensors(weights, device):
            for key, tensor in rebuilt_views(saved_key, saved, views.get(saved_key)):
                # A tied tensor, under any of its names, fills the place of its first name.
                key = TIED_TENSORS.get(key, key)
                if key in loaded:
                    continue
                if dtype is not None and tensor.is_floating_point():
                    tensor = tensor.to(dtype)
                loaded[key] = place_tensor(owners, key, tensor)
    for key, first in TIED_TENSORS.items():
        if first in loaded:
            place_tensor(owners, key, loaded[first])
    if len(loaded) != TENSOR_COUNT:
        missing = [name for name, value in held_tensors(module) if value.is_meta]
        raise RuntimeError(
            f"no saved values for {', '.join(missing) or 'some tensors'}"
        )


def rebuilt_views(key: str, saved: torch.Tensor, views):
    """(key, tensor) pairs for a saved tensor: itself, or each tensor that views it
    (TENSOR_VIEWS) with the source's shape, stride and offset, sharing its storage."""
    if views is None:
        yield key, saved
        return
    if saved.storage_offset() or not saved.is_contiguous():
        # Given as a view itself (a caller's mapping): the offsets count from a storage's start.
        saved = saved.clone()
    for name, dtype, shape, stride, offset in views:
        yield name, torch.empty(0, dtype=dtype, device=saved.device).set_(
            saved.untyped_storage(), offset, shape, stride
        )


def place_tensor(
    owners: dict[str, nn.Module], key: str, tensor: torch.Tensor
) -> torch.Tensor:
    """Put `tensor` where the stub `key` is (a parameter as a Parameter); returns it."""
    owner_path, _, name = key.rpartition(".")
    owner = owners.get(owner_path)
    if owner is not None and owner._parameters.get(name) is not None:
        # A tied tensor's second place is given the Parameter of its first.
        if not isinstance(tensor, nn.Parameter):
            grad = owner._parameters[name].requires_grad
            tensor = nn.Parameter(tensor, requires_grad=grad)
        owner._parameters[name] = tensor
    elif owner is not None and owner._buffers.get(name) is not None:
        owner._buffers[name] = tensor
    elif owner is not None and isinstance(vars(owner).get(name), torch.Tensor):
        setattr(owner, name, tensor)
    else:
        raise RuntimeError(f"the weights hold {key!r}, which this model does not have")
    return tensor


def held_tensors(module: nn.Module):
    """(key, tensor) of each parameter, buffer and tensor attribute, at every place."""
    for owner_path, owner in module.named_modules(remove_duplicate=False):
        held = {**owner._parameters, **owner._buffers}
        held.update(
            (k, v) for k, v in vars(owner).items() if isinstance(v, torch.Tensor)
        )
        for name, tensor in held.items():
            if tensor is not None:
                yield f"{owner_path}.{name}".lstrip("."), tensor


@contextmanager
def skip_init():
    """While the skeleton is built on this thread, nn.init's initialisers do nothing.

    Every value is loaded afterwards (or the skeleton stays on meta), so initialising
    would be wasted work. Other threads keep the real initialisers, and one skeleton is
    built at a time. Garbage collection waits meanwhile: each collection would walk
    every object in the process.
    """
    lock = vars(nn.init).setdefault("_skip_init_lock", threading.RLock())
    builder = threading.get_ident()

    def skipping(initialise):
        def skip(tensor, *args, **kwargs):
            if threading.get_ident() == builder:
                return tensor
            return initialise(tensor, *args, **kwargs)

        return skip

    with lock, gc_paused():
        saved = {
            name: fn
            for name, fn in vars(nn.init).items()
            if name.endswith("_") and not name.startswith("_") and callable(fn)
        }
        for name, fn in saved.items():
            setattr(nn.init, name, skipping(fn))
        try:
            yield
        finally:
            for name, fn in saved.items():
                setattr(nn.init, name, fn)


@contextmanager
def gc_paused():
    """Hold off garbage collection: loading makes many objects and no garbage cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def saved_tensors(weights, device):
    """(name, tensor) pairs from safetensors files, memory-mapped, or from a mapping."""
    target = torch.device(device if device is not None else "cpu")
    if isinstance(weights, Mapping):
        for key, value in weights.items():
            value = value.detach().to(target)
            if value.device.type == "cpu" and value.untyped_storage().data_ptr() % 64:
                value = value.clone()  # read by a library into memory not on 64 bytes
            yield key, value
        return
    if weights is None:
        if not WEIGHT_FILES:
            raise RuntimeError(
                "this export was written without weights: pass weights=<safetensors "
                "path or state_dict>, or load_weights=False"
            )
        files = [Path(__file__).resolve().parent / name for name in WEIGHT_FILES]
    else:
        path = Path(weights)
        files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    for file in files:
        for key, tensor in read_safetensors(file):
            yield key, tensor if target.type == "cpu" else tensor.to(target)


SAFETENSORS_DTYPES = {
    "BOOL": torch.bool,
    "U8": torch.uint8,
    "I8": torch.int8,
    "I16": torch.int16,
    "I32": torch.int32,
    "I64": torch.int64,
    "U16": torch.uint16,
    "U32": torch.uint32,
    "U64": torch.uint64,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "F32": torch.float32,
    "F64": torch.float64,
    "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2,
    "C64": torch.complex64,
}


def read_safetensors(file: Path):
    """(name, tensor) pairs of a safetensors file, each a view of the file mapped
    copy-on-write (read lazily, page by page, on first use), or a copy where it is not
    64-byte aligned.

    The header is JSON (no code runs on load); each entry is checked against the file's
    size.
    """
    try:
        size = file.stat().st_size
        with open(file, "rb") as stream:
            (length,) = struct.unpack("<Q", stream.read(8))
            if length > size - 8:
                raise ValueError(
                    f"its header claims {length} bytes, the file has {size}"
                )
            header = json.loads(stream.read(length))
        if not isinstance(header, dict):
            raise ValueError("its header is not a JSON object")
        entries = [
            tensor_entry(key, info, 8 + length, size)
            for key, info in header.items()
            if key != "__metadata__"
        ]
        storage = torch.UntypedStorage.from_file(str(file), shared=False, nbytes=size)
    except (OSError, ValueError, struct.error, RuntimeError) as error:
        raise RuntimeError(
            f"cannot read weights {file.name} in {file.parent}: {error}; the file is "
            f"damaged or incomplete (check the folder with: python -m fxexport verify "
            f"{file.parent})"
        ) from error
    for key, dtype, shape, start, end in entries:
        data = storage[start:end]
        tensor = torch.empty(0, dtype=dtype, device="cpu").set_(data, 0, shape)
        if tensor.data_ptr() % 64 == 0:
            yield key, tensor
        else:
            # Kernels pick their paths by alignment: a tensor not on a 64-byte boundary (as the
            # allocator would give) is copied, so it computes exactly as the source's did.
            copy = torch.empty(shape, dtype=dtype, device="cpu")
            torch.empty(0, dtype=torch.uint8).set_(copy.untyped_storage()).copy_(
                torch.empty(0, dtype=torch.uint8).set_(data)
            )
            yield key, copy


def tensor_entry(key: str, info, data_start: int, size: int):
    """(key, dtype, shape, start, end) of an entry; ValueError if it does not fit."""
    try:
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        shape, (start, end) = list(info["shape"]), info["data_offsets"]
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"tensor {key!r} has a malformed entry ({error!r})") from None
    if dtype is None:
        raise ValueError(
            f"tensor {key!r} has dtype {info['dtype']!r}, which this loader cannot read"
        )
    if not all(isinstance(n, int) and n >= 0 for n in (*shape, start, end)):
        raise ValueError(f"tensor {key!r} has a bad shape or offsets")
    if end - start != math.prod(shape) * dtype.itemsize or data_start + end > size:
        raise ValueError(
            f"tensor {key!r} does not fit its offsets {start}..{end} in {size} bytes"
        )
    return key, dtype, shape, data_start + start, data_start + end
