"""The typed, frozen data that collect hands to render and write."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class TensorIR:
    """One tensor written to the weights file, keyed by its dotted path from the root."""

    key: str
    kind: str  # "parameter", "buffer" or "constant"
    shape: tuple[int, ...]
    dtype: str
    requires_grad: bool
    persistent: bool
    tensor: torch.Tensor = field(repr=False, compare=False)
    file: str = ""  # the weight file that holds it; "" when the export has no weight files

    @property
    def nbytes(self) -> int:
        return self.tensor.numel() * self.tensor.element_size()


@dataclass(frozen=True)
class ClassIR:
    """One generated `nn.Module` class; every string here is finished Python code."""

    name: str
    is_root: bool
    init_lines: tuple[str, ...]
    fixup_lines: tuple[str, ...]
    forward_params: tuple[str, ...]
    forward_lines: tuple[str, ...]


@dataclass(frozen=True)
class PackageIR:
    """Everything needed to render and write one exported package."""

    module_name: str
    class_name: str
    imports: tuple[str, ...]
    definitions: tuple[str, ...]  # library code written into module.py: functions, output classes
    classes: tuple[ClassIR, ...]
    tensors: tuple[TensorIR, ...]
    weight_files: tuple[str, ...]
    parameter_count: int
    buffer_count: int
    torch_version: str
    warnings: tuple[str, ...]

    @property
    def weight_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)
