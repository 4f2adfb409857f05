"""The safetensors loader of an fxexport package: fills the model that module.py builds,
and checks the inputs of a torch.export graph as the export traced them (`check_input`).

The same text in every export; it needs only torch and the standard library. The header
of a safetensors file is JSON (no code runs on load), and each tensor is a view of the
file mapped copy-on-write: nothing is read until used, and writing to a tensor never
changes the file.
"""

import functools
import gc
import json
import math
import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

# safetensors dtype codes and the torch dtypes they stand for.
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

# What JSON counts as whitespace between tokens.
JSON_SPACE = re.compile(r"[ \t\n\r]*")
# Headers up to this size are parsed whole; a larger one member by member, as a dict of
# thousands of entries would take more memory than their tensors.
WHOLE_HEADER_CHARS = 1 << 16


def load_tensors(
    module: nn.Module,
    weights=None,
    *,
    device=None,
    dtype=None,
    folder: Path,
    weight_files: tuple[str, ...],
    tensor_count: int,
    tied_tensors: dict[str, str],
    tensor_views: dict[str, tuple],
    quantized_tensors: dict[str, int | None] | None = None,
    packed_weights: dict[str, tuple] | None = None,
    packed_objects: dict[str, tuple] | None = None,
    tensor_subclasses: dict[str, tuple] | None = None,
) -> None:
    """Fill every parameter, buffer and tensor constant of `module` with saved values.

    `weights` is None for `weight_files` in `folder` (the safetensors files beside
    module.py), the path of a safetensors file or of a folder of them, or a
    state_dict-like mapping of tensors (a quantized model's own state_dict is read
    through `load_state_dict`). The export's tables: `tensor_count` tensors in
    all; a tensor held in several places is stored once, under its first name
    (`tied_tensors` maps each other name to it) and assigned to each; `tensor_views`
    maps each tensor rebuilt as a view to (storage key, dtype, shape, stride, offset);
    `quantized_tensors` maps each quantized tensor to its axis (None: one scale for the
    whole tensor), saved as its integer values with `<key>.q_scale` and
    `<key>.q_zero_point` beside it; `packed_weights` maps each quantized layer to
    (setter, tensor names, by name): its weights are packed for its kernel, so they
    are handed to its setter once loaded; `packed_objects` maps each packed object
    held as an attribute to (op, tensor names, settings): it is packed again by
    `torch.ops.quantized.<op>(*tensors, *settings)`; `tensor_subclasses` maps each
    tensor subclass to (class, inner tensor names, flatten context, size, stride),
    saved as its inner tensors `<key>.<name>`.
    """
    if isinstance(weights, Mapping) and any(map(read_by_layers, weights.values())):
        load_own_state_dict(module, weights, device, dtype)
        return
    owners = dict(module.named_modules())
    packed_weights = packed_weights or {}
    packed_objects = packed_objects or {}
    tensor_subclasses = tensor_subclasses or {}
    loaded: dict[str, torch.Tensor] = {}
    packed: dict[str, torch.Tensor] = {}
    views: dict[str, list] = {}
    for name, (storage, *layout) in tensor_views.items():
        views.setdefault(storage, []).append((name, *layout))
    with gc_paused():
        saved_pairs = saved_tensors(weights, device, folder, weight_files)
        if tensor_subclasses:
            saved_pairs = rebuilt_subclasses(saved_pairs, tensor_subclasses)
        if quantized_tensors:
            saved_pairs = rebuilt_quantized(saved_pairs, quantized_tensors)
        for saved_key, saved in saved_pairs:
            viewed = views.get(saved_key)
            pairs = rebuilt_views(saved, viewed) if viewed else [(saved_key, saved)]
            for key, tensor in pairs:
                # A tied tensor, under any of its names, fills the place of its first name.
                key = tied_tensors.get(key, key)
                if key in loaded:
                    continue
                owner = key.rpartition(".")[0]
                if owner in packed_weights or owner in packed_objects:
                    loaded[key] = packed[key] = tensor  # set or packed once loaded
                    continue
                subclassed = key in tensor_subclasses  # its dtype is its own to change
                if dtype is not None and tensor.is_floating_point() and not subclassed:
                    tensor = tensor.to(dtype)
                loaded[key] = place_tensor(owners, key, tensor)
    for key, first in tied_tensors.items():
        if first in loaded:
            place_tensor(owners, key, loaded[first])
    if len(loaded) != tensor_count:
        missing = [name for name, value in held_tensors(module) if value.is_meta]
        raise RuntimeError(
            f"no saved values for {', '.join(missing) or 'some tensors'}"
        )
    for path, (setter, names, by_name) in packed_weights.items():
        values = [packed.get(f"{path}.{name}".lstrip(".")) for name in names]
        if by_name:
            getattr(owners[path], setter)(dict(zip(names, values)))
        else:
            getattr(owners[path], setter)(*values)
    for path, (op, names, settings) in packed_objects.items():
        values = [packed.get(f"{path}.{name}") for name in names]
        owner, _, name = path.rpartition(".")
        packer = getattr(torch.ops.quantized, op)
        setattr(owners[owner], name, packer(*values, *settings))


def read_by_layers(value) -> bool:
    """True for an entry of a quantized model's own state_dict that only its quantized
    layers read: a quantized tensor, packed weights, a dtype."""
    return not isinstance(value, torch.Tensor) or value.is_quantized


def load_own_state_dict(module: nn.Module, state_dict, device, dtype) -> None:
    """Fill `module` from a state_dict the model it was exported from gave, through
    `load_state_dict`: a quantized layer keeps its weights packed, and lists them as
    packed entries and settings (`_packed_params`, `dtype`) that only it reads."""

    def placed(value):
        if not isinstance(value, torch.Tensor):
            return value
        value = value.detach() if device is None else value.detach().to(device)
        if dtype is not None and value.is_floating_point():
            value = value.to(dtype)
        return value

    given = OrderedDict((key, placed(value)) for key, value in state_dict.items())
    given._metadata = getattr(state_dict, "_metadata", {})  # layer versions: formats
    module.load_state_dict(given, assign=True)
    missing = [name for name, value in held_tensors(module) if value.is_meta]
    if missing:
        raise RuntimeError(f"no saved values for {', '.join(missing)}")


def keep_packed_in_state_dict(module: nn.Module, names: tuple[str, ...]) -> None:
    """List the packed objects `module` holds as attributes `names` in its state_dict,
    after its tensors (as a model FX quantization lowered lists them), and take them
    back from a state_dict in `load_state_dict`."""
    module.register_state_dict_post_hook(functools.partial(packed_into, names=names))
    load = functools.partial(packed_from, names=names)
    module.register_load_state_dict_pre_hook(load)


def packed_into(module, state_dict, prefix, local_metadata, *, names):
    for name in names:  # None where built without weights: the keys are the same
        state_dict[prefix + name] = getattr(module, name)


def packed_from(module, state_dict, prefix, *args, names):
    for name in names:
        if isinstance(state_dict.get(prefix + name), torch.ScriptObject):
            setattr(module, name, state_dict.pop(prefix + name))


def rebuilt_quantized(pairs, quantized_tensors: dict[str, int | None]):
    """(key, tensor) pairs with each quantized tensor rebuilt from its integer values,
    scale and zero point, which may come in any order (or given as itself, in a
    mapping)."""
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in pairs:
        base = key.removesuffix(".q_scale").removesuffix(".q_zero_point")
        if base not in quantized_tensors or tensor.is_quantized:
            yield key, tensor
            continue
        found = parts.setdefault(base, {})
        found[key[len(base) :] or "values"] = tensor
        if len(found) == 3:
            yield base, quantized_tensor(found, quantized_tensors[base])


def rebuilt_subclasses(pairs, tensor_subclasses: dict[str, tuple]):
    """(key, tensor) pairs with each tensor subclass rebuilt from its inner tensors,
    which may come in any order."""
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in pairs:
        base, _, name = key.rpartition(".")
        if base not in tensor_subclasses:
            yield key, tensor
            continue
        cls, names, context, size, stride = tensor_subclasses[base]
        found = parts.setdefault(base, {})
        found[name] = tensor
        if len(found) == len(names):
            yield base, cls.__tensor_unflatten__(found, context, size, stride)


def quantized_tensor(parts: dict[str, torch.Tensor], axis: int | None) -> torch.Tensor:
    """A quantized tensor from its integer values, scales and zero points: one of
    each for the whole tensor, or one per channel along `axis`."""
    values = parts["values"]
    if axis is None:
        scale, zero_point = parts[".q_scale"].item(), parts[".q_zero_point"].item()
        return torch._make_per_tensor_quantized_tensor(values, scale, zero_point)
    scales, zero_points = parts[".q_scale"], parts[".q_zero_point"]
    return torch._make_per_channel_quantized_tensor(values, scales, zero_points, axis)


def rebuilt_views(saved: torch.Tensor, views):
    """(key, tensor) of each tensor that views a saved one (`tensor_views`), with the
    source's shape, stride and offset, sharing its storage."""
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
    # off after the build, as a module imported during it may keep a wrapper
    skipping_now = [True]

    def skipping(initialise):
        def skip(tensor, *args, **kwargs):
            if skipping_now[0] and threading.get_ident() == builder:
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
            skipping_now[0] = False
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


def saved_tensors(weights, device, folder: Path, weight_files: tuple[str, ...]):
    """(name, tensor) pairs from safetensors files, memory-mapped, or from a mapping.

    `weights` is None for `weight_files` in `folder`, a safetensors file or a folder of
    them, or a mapping.
    """
    target = torch.device(device if device is not None else "cpu")
    if isinstance(weights, Mapping):
        for key, value in weights.items():
            value = value.detach().to(target)
            if value.device.type == "cpu" and value.untyped_storage().data_ptr() % 64:
                value = value.clone()  # read by a library into memory not on 64 bytes
            yield key, value
        return
    if weights is None:
        if not weight_files:
            raise RuntimeError(
                "this export was written without weights: pass weights=<safetensors "
                "path or state_dict>, or load_weights=False"
            )
        files = [folder / name for name in weight_files]
    else:
        path = Path(weights)
        files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    for file in files:
        for key, tensor in read_safetensors(file):
            yield key, tensor if target.type == "cpu" else tensor.to(target)


def read_safetensors(file: Path):
    """(name, tensor) pairs of a safetensors file, each a view of the file mapped
    copy-on-write (read lazily, page by page, on first use), or a copy where it is not
    64-byte aligned.

    The header is JSON (no code runs on load; see header_members); each entry is
    checked against the file's size before its tensor is made.
    """
    try:
        size = file.stat().st_size
        with open(file, "rb") as stream:
            (length,) = struct.unpack("<Q", stream.read(8))
            if length > size - 8:
                raise ValueError(
                    f"its header claims {length} bytes, the file has {size}"
                )
            text = stream.read(length).decode("utf-8")
        storage = torch.UntypedStorage.from_file(str(file), shared=False, nbytes=size)
        for key, info in header_members(text):
            if key == "__metadata__":
                continue
            key, dtype, shape, start, end = tensor_entry(key, info, 8 + length, size)
            data = storage[start:end]
            tensor = torch.empty(0, dtype=dtype, device="cpu").set_(data, 0, shape)
            yield key, aligned(tensor, data)
    except (OSError, ValueError, struct.error, RuntimeError) as error:
        raise RuntimeError(
            f"cannot read weights {file.name} in {file.parent}: {error}; the file is "
            f"damaged or incomplete (check the folder with: python -m fxexport verify "
            f"{file.parent})"
        ) from error


def aligned(tensor: torch.Tensor, data: torch.UntypedStorage) -> torch.Tensor:
    """The tensor, or a copy of it where it is not on a 64-byte boundary.

    Kernels pick their paths by alignment: a tensor not on a 64-byte boundary (as the
    allocator would give) is copied, so it computes exactly as the source's did.
    """
    if tensor.data_ptr() % 64 == 0:
        return tensor
    copy = torch.empty(tensor.shape, dtype=tensor.dtype, device="cpu")
    torch.empty(0, dtype=torch.uint8).set_(copy.untyped_storage()).copy_(
        torch.empty(0, dtype=torch.uint8).set_(data)
    )
    return copy


def header_members(text: str):
    """(key, value) of each member of the JSON object `text`; ValueError for anything
    but one JSON object with each key once. A header of up to WHOLE_HEADER_CHARS is
    parsed whole (a fifth of the time), a larger one a member at a time."""
    if len(text) <= WHOLE_HEADER_CHARS:
        try:
            header = json.loads(text, object_pairs_hook=unique_members)
        except (ValueError, RecursionError):
            header = None  # the member parser below says where
        if isinstance(header, dict):
            return iter(header.items())
    return parsed_members(text)


def unique_members(pairs: list) -> dict:
    """A JSON object's members; ValueError where one key is given twice."""
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a key is given twice")
    return members


def parsed_members(text: str):
    """header_members of a header parsed one member at a time."""
    value_at, space = json.JSONDecoder().raw_decode, JSON_SPACE.match
    seen: set[str] = set()
    at = space(text).end()
    if text[at : at + 1] != "{":
        raise ValueError("its header is not a JSON object")
    at = space(text, at + 1).end()
    more = text[at : at + 1] != "}"
    while more:
        key, at = value_at(text, at)
        at = space(text, at).end()
        if text[at : at + 1] != ":" or not isinstance(key, str):
            raise ValueError(f"its header is not a JSON object (at character {at})")
        value, at = value_at(text, space(text, at + 1).end())
        if key in seen:
            raise ValueError(f"its header lists {key!r} twice")
        seen.add(key)
        yield key, value
        at = space(text, at).end()
        more = text[at : at + 1] == ","
        if more:
            at = space(text, at + 1).end()
        elif text[at : at + 1] != "}":
            raise ValueError(f"its header is not a JSON object (at character {at})")
    if space(text, at + 1).end() != len(text):
        raise ValueError("its header has more after its JSON object")


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
    # type(n) is int: JSON's true is no size, though isinstance(True, int)
    if not all(type(n) is int and n >= 0 for n in (*shape, start, end)):
        raise ValueError(f"tensor {key!r} has a bad shape or offsets")
    if end - start != math.prod(shape) * dtype.itemsize or data_start + end > size:
        raise ValueError(
            f"tensor {key!r} does not fit its offsets {start}..{end} in {size} bytes"
        )
    return key, dtype, shape, data_start + start, data_start + end


def check_input(value, name: str, dtype: torch.dtype, shape: tuple) -> None:
    """Raise a ValueError unless `value` is a `dtype` tensor of `shape`, as traced.

    Each entry of `shape` is a size, None for any size, or a (least, most) range
    with None for an open end.
    """
    if (
        isinstance(value, torch.Tensor)
        and value.dtype == dtype
        and value.dim() == len(shape)
        and all(size_fits(size, want) for size, want in zip(value.shape, shape))
    ):
        return
    expected = ", ".join(shown_size(want) for want in shape)
    kind = str(dtype).removeprefix("torch.")
    got = (
        f"{value.dtype} {list(value.shape)}"
        if isinstance(value, torch.Tensor)
        else type(value).__name__
    )
    raise ValueError(
        f"{name}: expected a {kind} tensor of shape [{expected}], got {got}"
    )


def size_fits(size, want) -> bool:
    if want is None:
        return True
    if isinstance(want, tuple):
        least, most = want
        return (least is None or size >= least) and (most is None or size <= most)
    return size == want


def shown_size(want) -> str:
    if want is None:
        return ".."
    if isinstance(want, tuple):
        return "..".join("" if end is None else str(end) for end in want)
    return str(want)
