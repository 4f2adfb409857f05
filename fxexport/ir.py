"""The typed, frozen data that collect hands to render and write."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch

from .names import without_number


@dataclass(frozen=True)
class ViewIR:
    """Where a tensor that shares its storage lives in it (`storage` is the key that storage is saved under)."""

    storage: str
    offset: int  # storage offset, in elements of the tensor's dtype
    stride: tuple[int, ...]


@dataclass(frozen=True)
class QuantizedIR:
    """A quantized tensor, stored as its integer values with its scales and zero points as entries of their own."""

    dtype: str  # "qint8", "quint8", "qint32": the dtype it is rebuilt as
    qscheme: str  # "per_tensor_affine", "per_channel_affine", "per_channel_affine_float_qparams"
    axis: int | None  # the channel axis; None for one scale and zero point
    scale: str  # the key of its scale(s)
    zero_point: str  # the key of its zero point(s)


@dataclass(frozen=True)
class SubclassIR:
    """A tensor subclass (torchao's `Int8Tensor`), stored as its inner tensors (`<key>.<name>`) and rebuilt
    with `cls.__tensor_unflatten__`; `cls` and `context` are code."""

    qualname: str  # where the class is defined: `torchao.quantization.Int8Tensor`
    cls: str  # the class as code: `Int8Tensor`
    names: tuple[str, ...]  # its inner tensors, as `__tensor_flatten__` names them
    context: str  # the flatten context as code: `{"block_size": [1, 16], "dtype": torch.float32}`
    size: tuple[int, ...]
    stride: tuple[int, ...]


@dataclass(frozen=True)
class PackedIR:
    """A quantized layer whose weights are packed for its kernel: the loader sets them through `setter`."""

    path: str
    setter: str  # "set_weight_bias", "set_weight"
    names: tuple[str, ...]  # its tensors, in the setter's order (keys `<path>.<name>`)
    by_name: bool  # the setter takes one dict of them (nnqd.LSTM), not positional arguments


@dataclass(frozen=True)
class PackedObjectIR:
    """Packed weights held as an attribute, not by a quantized layer (packed_objects.py): the loader packs
    its tensors `<path>.<name>` again with `torch.ops.quantized.<op>(*tensors, *settings)`."""

    path: str
    op: str  # "linear_prepack", "conv2d_prepack", ...
    names: tuple[str, ...]  # its tensors, in the op's order
    settings: tuple[object, ...]  # the op's arguments after the tensors: stride, padding, ...
    in_state_dict: bool  # the source's state_dict lists it (FX quantization's hook), so the package's does


@dataclass(frozen=True)
class TensorIR:
    """One tensor of the module tree (or, kind "storage", a storage that views share), keyed by its dotted path."""

    key: str
    kind: str  # "parameter", "buffer", "constant", "packed" (a quantized layer's or object's), "storage" (see storages.py) or "part"
    shape: tuple[int, ...]
    dtype: str
    requires_grad: bool
    persistent: bool
    tensor: torch.Tensor = field(repr=False, compare=False)
    file: str = ""  # the weight file that holds it (a view: that of its storage); "" when the export has no weight files
    view: ViewIR | None = None  # set when it is rebuilt as a view of a saved storage, keeping strides and sharing
    quantized: QuantizedIR | None = None  # set for a quantized tensor: `dtype` and `tensor` are then its integer values
    subclass: SubclassIR | None = None  # set for a tensor subclass: stored only as its inner tensors (parts)

    @functools.cached_property
    def nbytes(self) -> int:
        """Size of the tensor's data in bytes."""
        return self.tensor.numel() * self.tensor.element_size()

    def in_file(self, name: str) -> TensorIR:
        """This tensor, held by the weight file `name`: `dataclasses.replace` without its checks (5 µs a
        call, a tenth of the export of a model of thousands of small tensors)."""
        placed = object.__new__(TensorIR)
        placed.__dict__.update(self.__dict__, file=name)  # nbytes, once cached, comes along
        return placed

    @property
    def is_stored(self) -> bool:
        """True when its own bytes are an entry of a weight file (not only a view of another entry)."""
        return self.subclass is None and (self.view is None or self.view.storage == self.key)


@dataclass(frozen=True)
class ClassIR:
    """One generated `nn.Module` class; every string here is finished Python code."""

    name: str
    is_root: bool
    init_lines: tuple[str, ...]
    fixup_lines: tuple[str, ...]
    forward_params: tuple[str, ...]
    forward_lines: tuple[str, ...]
    comment: str = ""  # where the source class is defined: "# torchvision/models/resnet.py:59 BasicBlock"
    init_params: tuple[str, ...] = ()  # `__init__` parameters as code, without self: "in_channels", "stride=1"
    is_sequential: bool = False  # a subclass of nn.Sequential with nothing of its own (the source's Sequential subclass)
    base: str = "Module"  # the torch.nn class it subclasses: "Module", or "Sequential" for a source Sequential subclass
    parent: str = ""  # a generated class whose `__init__` this one shares (a variant of the same source class), or ""
    takes_children: bool = False  # a container subclass without `__init__`: its callers pass its children
    super_args: str = ""  # the arguments of its `super().__init__(...)` call, as code (a Sequential subclass's children)
    layer_lines: tuple[str, ...] = ()  # lines before that call that build the list of layers it passes (`layers = [...]`)
    whole_children: frozenset[str] = frozenset()  # attributes whose child callers pass whole (an nn.Identity in some instances)
    source_name: str = ""  # the name asked for it, after its source class (`Block_1` for a class an export named so), or ""
    source_forward: str = ""  # its source class's `forward` as written there (where literals' names are read), or ""

    @property
    def source(self) -> tuple[str, str]:
        """The source class it comes from: its comment and its name without a namespace's number."""
        return self.comment, without_number(self.name)


@dataclass(frozen=True)
class InlineModule:
    """A module whose calls stay written out in its caller's forward, and why."""

    path: str
    class_name: str
    reason: str


@dataclass(frozen=True)
class ValueIR:
    """One forward input or output as the graph recorded it (`node.meta`); for documentation only."""

    name: str  # "x", "*args", "output", "output[0]", "output['logits']"
    kind: str = ""  # "tensor", a Python type name such as "int", or "" when nothing was recorded
    dtype: str = ""  # "float32" for a tensor, else ""
    shape: tuple[str, ...] | None = None  # a tensor's sizes as text ("3", "s0"); None when not a tensor

    @property
    def description(self) -> str:
        """`float32, shape (3, 16)`, `int`, or `not recorded`."""
        if not self.kind:
            return "not recorded"
        if self.shape is None:
            return self.kind
        dims = ", ".join(self.shape) + ("," if len(self.shape) == 1 else "")
        return f"{self.dtype} {self.kind}, shape ({dims})"


@dataclass(frozen=True)
class SignatureIR:
    """How to call the exported class: the forward parameters, and what goes in and comes out."""

    params: tuple[str, ...] = ()  # the root forward's parameters as code, without self: "x", "*args", "scale=2.0"
    call: str = "model()"  # an example call as code: "model(x, y)" (required positional parameters)
    inputs: tuple[ValueIR, ...] = ()  # one per parameter, in order
    outputs: tuple[ValueIR, ...] = ()  # one per tensor or value the forward returns, flattened

    @property
    def recorded(self) -> bool:
        """True when the graph recorded shapes or types for any input or output."""
        return any(v.kind for v in (*self.inputs, *self.outputs))


@dataclass(frozen=True)
class ModuleIR:
    """One module of the exported tree (shared modules once, at their first path)."""

    path: str  # dotted path from the root, "" for the root itself
    class_name: str  # "Linear", "Module", or a generated class such as "FxModule"


@dataclass(frozen=True)
class PackageIR:
    """Everything needed to render and write one exported package."""

    module_name: str
    class_name: str
    imports: tuple[str, ...]
    definitions: tuple[str, ...]  # library code written into module.py: functions, output classes
    classes: tuple[ClassIR, ...]
    tensors: tuple[TensorIR, ...]  # every parameter, buffer and constant (tied tensors once)
    ties: tuple[tuple[str, str], ...]  # (second key, first key): a tensor held in two places, saved under the first
    weight_files: tuple[str, ...]
    parameter_count: int
    buffer_count: int
    torch_version: str
    warnings: tuple[str, ...]
    producer: str = "torch.fx GraphModule"  # what made the graph: "torch.fx.symbolic_trace", "torch.export", ...
    signature: SignatureIR = SignatureIR()
    modules: tuple[ModuleIR, ...] = ()
    storages: tuple[TensorIR, ...] = ()  # kind "storage": bytes shared by views that no single tensor covers
    inline_modules: tuple[InlineModule, ...] = ()  # modules not cut out as a class of their own
    # kind "part": entries that rebuild another tensor: a quantized tensor's scales and zero points, a tensor subclass's inner tensors
    parts: tuple[TensorIR, ...] = ()
    packed: tuple[PackedIR, ...] = ()  # quantized layers whose weights the loader sets through their setter
    packed_objects: tuple[PackedObjectIR, ...] = ()  # packed weights held as attributes, which the loader packs again
    build_device: str = "meta"  # where the module tree is built: "cpu" when quantized layers pack weights there
    checks_inputs: bool = False  # a forward calls loader.py's check_input

    @property
    def stored(self) -> tuple[TensorIR, ...]:
        """The entries of the weight files: tensors saved as themselves, shared storages, then parts of other tensors."""
        return (*(t for t in self.tensors if t.is_stored), *self.storages, *self.parts)


    @property
    def parameter_bytes(self) -> int:
        """Bytes of parameter data."""
        return sum(t.nbytes for t in self.tensors if t.kind == "parameter")

    @property
    def weight_bytes(self) -> int:
        """Bytes of all tensor data written: parameters, buffers, constants and shared storages."""
        return sum(t.nbytes for t in self.stored)
