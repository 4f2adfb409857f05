"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 160; buffers: 0; 640 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(tokens)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

WEIGHT_FILES = ("weights.safetensors",)


class FxModule(nn.Module):
    def __init__(self, *, load_weights: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        with torch.device("meta"):
            self.embed = nn.Embedding(11, 8, padding_idx=0)
            self.proj = nn.Linear(8, 8)
            self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.embed.weight
        self.eval()
        if load_weights:
            load_tensors(self, device=device, dtype=dtype)

    def forward(self, tokens):
        embed = self.embed(tokens)
        del tokens
        proj = self.proj(embed)
        del embed
        tanh = torch.tanh(proj)
        del proj
        head = self.head(tanh)
        del tanh
        return head


def load_tensors(module: nn.Module, *, device=None, dtype=None) -> None:
    """Fill every parameter, buffer and tensor constant of `module` from the weight files.

    The files sit next to this module. A tensor held in several places (tied weights)
    is stored once and assigned to every place that holds it.
    """
    from safetensors import safe_open

    places: dict[int, tuple[torch.Tensor, list[tuple[nn.Module, str]]]] = {}
    paths: dict[int, str] = {}
    for owner_path, owner in module.named_modules():
        held = {**owner._parameters, **owner._buffers}
        held.update(
            (k, v) for k, v in vars(owner).items() if isinstance(v, torch.Tensor)
        )
        for name, tensor in held.items():
            if tensor is not None:
                places.setdefault(id(tensor), (tensor, []))[1].append((owner, name))
                paths.setdefault(id(tensor), f"{owner_path}.{name}".lstrip("."))
    folder = Path(__file__).resolve().parent
    target = str(torch.device(device if device is not None else "cpu"))
    for file_name in WEIGHT_FILES:
        try:
            weights = safe_open(folder / file_name, framework="pt", device=target)
        except Exception as error:
            raise RuntimeError(
                f"cannot read weights {file_name} in {folder}: {error}; the file is damaged "
                f"or incomplete (check the folder with: python -m fxexport verify {folder})"
            ) from error
        with weights:
            for key in weights.keys():
                owner_path, _, name = key.rpartition(".")
                stub = getattr(module.get_submodule(owner_path), name)
                tensor = weights.get_tensor(key)
                if dtype is not None and tensor.is_floating_point():
                    tensor = tensor.to(dtype)
                if isinstance(stub, nn.Parameter):
                    tensor = nn.Parameter(tensor, requires_grad=stub.requires_grad)
                for owner, attr in places.pop(id(stub))[1]:
                    setattr(owner, attr, tensor)
    missing = [paths[key] for key, (tensor, _) in places.items() if tensor.is_meta]
    if missing:
        raise RuntimeError(f"no values in {WEIGHT_FILES} for {', '.join(missing)}")
