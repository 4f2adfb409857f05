"""The tools compared: how each one saves a model and loads it back, as data.

A tool's `save` gets the source model three ways (the nn.Module, its symbolic trace and the
example inputs) and writes its artifact at `path`; `load` reads it back. A tool without
`save` (the safetensors baseline) reads a file of another tool's artifact; a tool without
`load` (the f.write baseline) is only timed writing. `prepare`, when given, turns the source
into what `save` gets, before the clock starts. Importing this module does not import torch.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from torch import fx, nn


@dataclass(frozen=True)
class Source:
    """The model a save starts from."""

    model: nn.Module
    gm: fx.GraphModule
    args: tuple[torch.Tensor, ...]


Details = dict[str, float]


@dataclass(frozen=True)
class Tool:
    """One way to save and load a model; `load` alone for a baseline that reads another's artifact,
    `save` alone for one that is only timed writing."""

    name: str
    artifact: str  # path of the artifact inside the model's work folder
    load: Callable[[Path], Any] | None
    save: Callable[[Any, Path], Details | None] | None = None  # gets the Source, or what `prepare` made of it
    source: str | None = None  # for a tool without `save`: the tool whose export it reads
    save_imports: tuple[str, ...] = ()  # imported before the clock starts, like torch itself
    load_imports: tuple[str, ...] = ()
    prepare: Callable[[Source], Any] | None = None  # untimed, before the save
    weights_digest: Callable[[Path], str] | None = None  # untimed, after the save: the weight file's digest, as fxexport's manifest records one


def _import_package(path: Path, **options: Any) -> nn.Module:
    """`from <package> import FxModule; FxModule(**options)` for the package folder at `path`."""
    sys.path.insert(0, str(path.parent))
    return importlib.import_module(path.name).FxModule(**options)


def _import_skeleton(path: Path) -> nn.Module:
    """`FxModule(load_weights=False)`: the module tree alone, built on meta, no weights read."""
    return _import_package(path, load_weights=False)


def _fxexport_save(src: Source, path: Path) -> None:
    import fxexport

    fxexport.export(src.gm, path)


def _fxexport_source_save(src: Source, path: Path) -> None:
    import fxexport

    fxexport.export(src.gm, path, bytecode=False)


def _fxexport_weights_digest(path: Path) -> str:
    """The digest of the package's weights.safetensors, as its manifest records it."""
    return json.loads((path / "fxexport.json").read_text(encoding="utf-8"))["files"]["weights.safetensors"]


def _file_digest(path: Path) -> str:
    from fxexport.digests import file_digest

    return str(file_digest(path))


def _fxexport_weight_chunks(src: Source) -> list[memoryview]:
    """The bytes of fxexport's weights.safetensors for this model, as fxexport lays them out: its
    header, then each stored tensor's bytes in the file's order, each a view of the tensor's own
    memory (no copy for a contiguous CPU tensor, as every tensor of the bench models is)."""
    import torch

    import fxexport
    from fxexport.weights import header, layout

    package, _ = fxexport.generate(src.gm, package_name="fwrite")  # collect, render, format: nothing written
    if package.weight_files != ("weights.safetensors",):
        raise ValueError(f"the f.write baseline expects one weights.safetensors, not {package.weight_files}")
    ordered = layout(package.stored)
    chunks = [memoryview(header(ordered))]
    for item in ordered:
        flat = item.tensor.detach().reshape(-1).cpu().contiguous()
        chunks.append(flat.view(torch.uint8).numpy().data)
    return chunks


def _plain_write(chunks: list[memoryview], path: Path) -> None:
    """`open(path, "wb")` and one `f.write` per chunk: nothing but the bytes going to the file."""
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(chunk)


def _to_folder_save(src: Source, path: Path) -> None:
    src.gm.to_folder(path, module_name="FxModule")


def _torch_save(src: Source, path: Path) -> None:
    import torch

    torch.save(src.gm, path)


def _torch_load(path: Path) -> nn.Module:
    import torch

    return torch.load(path, weights_only=False)


def _torch_export_save(src: Source, path: Path) -> Details:
    import torch.export

    start = time.perf_counter()
    program = torch.export.export(src.model, src.args)
    traced = time.perf_counter()
    torch.export.save(program, path)
    return {"export()": traced - start, "save()": time.perf_counter() - traced}


def _torch_export_load(path: Path) -> nn.Module:
    import torch.export

    return torch.export.load(path).module()


def _load_file(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(path)


TOOLS: tuple[Tool, ...] = (
    Tool(
        "fxexport",
        "fx_pkg",
        _import_package,
        _fxexport_save,
        save_imports=("fxexport",),
        weights_digest=_fxexport_weights_digest,
    ),
    # The same package without its __pycache__: what the first import costs where the shipped
    # bytecode cannot be used (another Python version), as module.py is compiled on import.
    Tool("fxexport-nopyc", "fx_src_pkg", _import_package, _fxexport_source_save, save_imports=("fxexport",)),
    Tool("to_folder", "tofolder_pkg", _import_package, _to_folder_save),
    Tool("torch.save", "graph_module.pt", _torch_load, _torch_save),
    Tool(
        "torch.export",
        "program.pt2",
        _torch_export_load,
        _torch_export_save,
        save_imports=("torch.export",),
        load_imports=("torch.export",),
    ),
    Tool("load_file", "fx_pkg/weights.safetensors", _load_file, source="fxexport", load_imports=("safetensors.torch",)),
    # Building fxexport's module tree without reading any weights: what any loader of this
    # model pays before its first tensor; the load targets are over skeleton + load_file.
    Tool("skeleton", "fx_pkg", _import_skeleton, source="fxexport"),
    # The floor under fxexport's export of a weight-heavy model: the bytes of fxexport's
    # weights.safetensors (header and tensors, prepared before the clock) written with plain
    # f.write, one call per tensor, into one file. No load: it is only timed writing.
    Tool(
        "f.write",
        "fwrite.safetensors",
        None,
        _plain_write,
        save_imports=("fxexport",),
        prepare=_fxexport_weight_chunks,
        weights_digest=_file_digest,
    ),
)
REFERENCE = "fxexport"  # ratios are each tool's time over this tool's


def tool(name: str) -> Tool:
    return next(t for t in TOOLS if t.name == name)
