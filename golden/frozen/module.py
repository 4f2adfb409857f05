"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 32; buffers: 0; 176 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

WEIGHT_FILES = ("weights.safetensors",)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.backbone = nn.Linear(4, 4)
            self.head = nn.Linear(4, 2, dtype=torch.float64)
            self.gain = nn.Parameter(
                torch.empty(2, dtype=torch.float64), requires_grad=False
            )
        self.backbone.weight.requires_grad_(False)
        self.backbone.bias.requires_grad_(False)
        self.eval()
        if load_weights:
            load_tensors(self, weights, device=device, dtype=dtype)

    def forward(self, x):
        backbone = self.backbone(x)
        del x
        double = backbone.double()
        del backbone
        head = self.head(double)
        del double
        gain = self.gain
        mul = head * gain
        del head, gain
        return mul


def load_tensors(module: nn.Module, weights=None, *, device=None, dtype=None) -> None:
    """Fill every parameter, buffer and tensor constant of `module` with its saved values.

    `weights` is None for the safetensors files beside this module, the path of a
    safetensors file or of a folder of them, or a state_dict-like mapping of tensors.
    A tensor held in several places (tied weights) is stored once and assigned to every
    place that holds it.
    """
    places: dict[int, tuple[torch.Tensor, list[tuple[nn.Module, str]]]] = {}
    paths: dict[int, str] = {}
    owners = dict(module.named_modules())
    for owner_path, owner in owners.items():
        held = {**owner._parameters, **owner._buffers}
        held.update(
            (k, v) for k, v in vars(owner).items() if isinstance(v, torch.Tensor)
        )
        for name, tensor in held.items():
            if tensor is not None:
                places.setdefault(id(tensor), (tensor, []))[1].append((owner, name))
                paths.setdefault(id(tensor), f"{owner_path}.{name}".lstrip("."))
    for key, tensor in saved_tensors(weights, device):
        owner_path, _, name = key.rpartition(".")
        stub = getattr(owners[owner_path], name)
        if id(stub) not in places:
            continue  # a second name for a tensor already filled (tied weights in a state_dict)
        if dtype is not None and tensor.is_floating_point():
            tensor = tensor.to(dtype)
        if isinstance(stub, nn.Parameter):
            tensor = nn.Parameter(tensor, requires_grad=stub.requires_grad)
        for owner, attr in places.pop(id(stub))[1]:
            setattr(owner, attr, tensor)
    missing = [paths[key] for key, (tensor, _) in places.items() if tensor.is_meta]
    if missing:
        raise RuntimeError(f"no saved values for {', '.join(missing)}")


@contextmanager
def skip_init():
    """Make torch.nn.init's in-place initialisers no-ops while the (meta) skeleton is built."""
    saved = {
        name: fn
        for name, fn in vars(nn.init).items()
        if name.endswith("_") and not name.startswith("_")
    }
    for name in saved:
        setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(nn.init, name, fn)


def saved_tensors(weights, device):
    """(name, tensor) pairs from safetensors files, memory-mapped, or from a mapping."""
    target = str(torch.device(device if device is not None else "cpu"))
    if isinstance(weights, Mapping):
        yield from ((key, value.to(target)) for key, value in weights.items())
        return
    if weights is None:
        if not WEIGHT_FILES:
            raise RuntimeError(
                "this export was written without weights: pass weights=<safetensors path or "
                "state_dict>, or load_weights=False"
            )
        files = [Path(__file__).resolve().parent / name for name in WEIGHT_FILES]
    else:
        path = Path(weights)
        files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    from safetensors import safe_open

    for file in files:
        try:
            handle = safe_open(file, framework="pt", device=target)
        except Exception as error:
            raise RuntimeError(
                f"cannot read weights {file.name} in {file.parent}: {error}; the file is damaged "
                f"or incomplete (check the folder with: python -m fxexport verify {file.parent})"
            ) from error
        with handle:
            for key in handle.keys():
                yield key, handle.get_tensor(key)
