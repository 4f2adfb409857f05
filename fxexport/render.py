"""render: PackageIR -> {relative path: source text}, through the Jinja templates."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import torch

from .annotations import EXPORTED_BY
from .errors import FxExportError
from .guards import CHECK_INPUT
from .ir import PackageIR
from .names import code_of, quote
from .packed_objects import KEEP_IN_STATE_DICT
from .user_cache import cache_folder
from .weights import DTYPES
from .wrapping import LINE_LENGTH, wrap
from .write import LOADER, MANIFEST

_HERE = Path(__file__).resolve().parent
# Each generated file and the template that produces it.
OUTPUTS = {
    "__init__.py": "__init__.py.jinja",
    "module.py": "module.py.jinja",
    "loader.py": "loader.py.jinja",
    "README.md": "README.md.jinja",
}
# Our templates stay reachable under this prefix, so a user's `module.py.jinja` can extend ours.
BUILTIN_PREFIX = "fxexport"


def template_dirs() -> list[Path]:
    """The templates shipped in the wheel, or the repository's top-level `templates/`."""
    return [d for d in (_HERE / "templates", _HERE.parent / "templates") if d.is_dir()][:1]


def environment(extra: Sequence[Path] = ()) -> jinja2.Environment:
    """The one Jinja environment: user template folders first, then ours (also as `fxexport/<name>`).

    One per set of folders and process: it keeps the templates compiled (and recompiles one whose
    file changed), so only the first export in a process pays for compiling them.
    """
    return _environment(tuple(str(folder) for folder in extra))


@functools.lru_cache(maxsize=16)
def _environment(extra: tuple[str, ...]) -> jinja2.Environment:
    ours = [str(d) for d in template_dirs()]
    loader = jinja2.ChoiceLoader([
        jinja2.FileSystemLoader([*extra, *ours]),
        jinja2.PrefixLoader({BUILTIN_PREFIX: jinja2.FileSystemLoader(ours)}),
    ])  # fmt: skip
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=_template_cache(),
    )
    env.filters["thousands"] = thousands
    return env


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between processes, as Python keeps `__pycache__`: compiling ours takes
    30 ms, loading them 1 ms. Jinja's own cache, in the per-user folder (user_cache.py); an entry is
    used only for the same template source and Python version. A cache that cannot be read or
    written is skipped."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged entry (marshal raises several types): compile afresh
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _template_cache() -> jinja2.BytecodeCache | None:
    folder = cache_folder()
    return None if folder is None else _TemplateCache(str(folder))


def thousands(number: int) -> str:
    """`12,345`: the one number format of generated text."""
    return f"{number:,}"


# One folder, or several searched in order: `templates="my_templates"` or `templates=["a", "b"]`.
TemplateFolders = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def template_folders(templates: TemplateFolders) -> tuple[Path, ...]:
    """The user's template folders, in order; each must exist (checked before any work)."""
    folders = (Path(templates),) if isinstance(templates, (str, os.PathLike)) else tuple(map(Path, templates))
    check_template_dirs(folders)
    return folders


def check_template_dirs(folders: Sequence[Path]) -> None:
    """Refuse a user template folder that does not exist, before any work."""
    for folder in folders:
        if not Path(folder).is_dir():
            raise FxExportError(f"template folder {str(folder)!r} does not exist or is not a folder")


def _summary(package: PackageIR) -> str:
    weights = ", ".join(package.weight_files) or "no weight file"
    return (
        f"Parameters: {package.parameter_count:,}; buffers: {package.buffer_count}; "
        f"{package.weight_bytes:,} bytes of tensors in {weights}.\n"
        f"Producer: {package.producer}; torch {package.torch_version}."
    )


def docstring_code(text: str) -> str:
    """`text` as a string literal: triple-quoted when that is safe to read as-is, else `repr()`."""
    plain = all(line.isprintable() for line in text.split("\n"))
    if plain and "\\" not in text and '"' not in text:
        return f'"""{text}\n"""'
    return repr(text)


def _docstring(package: PackageIR) -> str:
    return (
        f"{package.class_name}: a torch.fx GraphModule {EXPORTED_BY}\n\n{_summary(package)}\n\n"
        f"    model = {package.class_name}()\n    output = {package.signature.call}\n\n"
        "Inputs, outputs and files: see README.md."
    )


def _files(package: PackageIR) -> tuple[tuple[str, str], ...]:
    weights = tuple(
        (name, "every parameter, buffer and tensor constant (tied tensors once)") for name in package.weight_files
    )
    return (
        ("__init__.py", f"re-exports `{package.class_name}`"),
        ("module.py", "the model code"),
        *([(LOADER, "the loader that fills the model with its tensors and checks its inputs (the same file in every export)")]
          if loader_imports(package) else []),  # fmt: skip
        *weights,
        (MANIFEST, "manifest: versions, the BLAKE3 digest of each file, every tensor's shape and dtype"),
        ("README.md", "this file"),
    )


def requirements(package: PackageIR) -> tuple[str, ...]:
    """What importing the package needs: torch and every other module imported (its loader reads safetensors itself)."""
    imported = (line.split()[1] for line in package.imports if line)
    others = sorted(
        {m for m in imported if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "torch"}
    )
    return ("torch", *others)


def _dtype_table() -> str:
    """The loader's map from safetensors dtype codes to torch dtypes (the inverse of what weights.py
    writes), one entry a line with a trailing comma: as black lays out a dict too long for one line."""
    entries = "".join(f"    {quote(code)}: {getattr(torch, name)!r},\n" for name, code in DTYPES.items())
    return f"{{\n{entries}}}"


def _views_table(package: PackageIR) -> str:
    """Each tensor rebuilt as a view: key -> (storage key, dtype, shape, stride, storage offset)."""
    return code_of({
        t.key: (view.storage, t.tensor.dtype, t.shape, view.stride, view.offset)
        for t in package.tensors
        if (view := t.view) is not None
    })  # fmt: skip


def _quantized_table(package: PackageIR) -> str:
    """Each quantized tensor's key -> its channel axis (None: one scale and zero point for the whole tensor)."""
    return code_of({t.key: t.quantized.axis for t in package.tensors if t.quantized is not None})


def _packed_table(package: PackageIR) -> str:
    """Each quantized layer -> (the setter its weights go through, their names, whether it takes them as one dict)."""
    return code_of({p.path: (p.setter, p.names, p.by_name) for p in package.packed})


def _packed_objects_table(package: PackageIR) -> str:
    """Each packed object held as an attribute -> (the op packing it again, its tensors' names, the op's other arguments)."""
    return code_of({p.path: (p.op, p.names, p.settings) for p in package.packed_objects})


def _subclass_table(package: PackageIR) -> str:
    """Each tensor subclass -> (its class, inner tensor names, flatten context, size, stride); class and context are code."""
    entries = (
        f"{quote(t.key)}: ({s.cls}, {code_of(s.names)}, {s.context}, {code_of(s.size)}, {code_of(s.stride)})"
        for t in package.tensors
        if (s := t.subclass) is not None
    )
    return f"{{{', '.join(entries)}}}"


@dataclass(frozen=True)
class LoaderTable:
    """A table of module.py that the loader takes as a keyword argument, written only when it has entries."""

    name: str  # `QUANTIZED_TENSORS`
    keyword: str  # `quantized_tensors`
    code: str  # the dict literal


def loader_tables(package: PackageIR, laid_out: bool = False) -> tuple[LoaderTable, ...]:
    """The optional tables: quantized tensors, quantized layers' packed weights, packed objects, tensor subclasses (see _laid_out)."""
    tables = (
        ("QUANTIZED_TENSORS", "quantized_tensors", _quantized_table(package)),
        ("PACKED_WEIGHTS", "packed_weights", _packed_table(package)),
        ("PACKED_OBJECTS", "packed_objects", _packed_objects_table(package)),
        ("TENSOR_SUBCLASSES", "tensor_subclasses", _subclass_table(package)),
    )
    return tuple(LoaderTable(name, keyword, _laid_out(name, code, laid_out)) for name, keyword, code in tables if code != "{}")


def _laid_out(name: str, code: str, laid_out: bool) -> str:
    """With `laid_out` (fxexport's own templates, which place it there), `code` as black lays out
    `name = code` at the top of module.py, so formatting finds nothing to do there (wrapping a long
    table means parsing the whole module); else, or where black must decide, `code` on one line (a
    user's template may place it anywhere: in a call, a comment)."""
    prefix = f"{name} = "
    lines = wrap(prefix + code, 0) if laid_out and len(prefix) + len(code) > LINE_LENGTH else None
    return code if lines is None else "\n".join(lines).removeprefix(prefix)


def loader_imports(package: PackageIR) -> list[str]:
    """What module.py imports from loader.py: the input check, the packed objects' state_dict hooks, the tensor loader."""
    return [
        *([CHECK_INPUT] if package.checks_inputs else []),
        *([KEEP_IN_STATE_DICT] if any(p.in_state_dict for p in package.packed_objects) else []),
        *(["load_tensors", "skip_init"] if package.tensors else []),
    ]


def context(package: PackageIR, laid_out: bool = False) -> dict[str, Any]:
    """What every template sees (documented in the top-level README, "Custom templates"); `laid_out`:
    the tables as fxexport's own module.py places them (_laid_out)."""
    codes = {
        "class_name": code_of(package.class_name),
        "weight_files": _laid_out("WEIGHT_FILES", code_of(package.weight_files), laid_out),
        "tied_tensors": _laid_out("TIED_TENSORS", code_of(dict(package.ties)), laid_out),
        "tensor_count": repr(len(package.tensors)),
        "tensor_views": _laid_out("TENSOR_VIEWS", _views_table(package), laid_out),
        "build_device": code_of(package.build_device),
        "safetensors_dtypes": _dtype_table(),
        "docstring": docstring_code(_docstring(package)),
        "loader_imports": ", ".join(loader_imports(package)),
    }
    return {"package": package, "codes": codes, "summary": _summary(package), "files": _files(package),
            "requirements": requirements(package), "loader_tables": loader_tables(package, laid_out)}  # fmt: skip


def outputs(package: PackageIR) -> dict[str, str]:
    """The text files of this export and their templates: the loader only when module.py imports it."""
    return {path: name for path, name in OUTPUTS.items() if path != LOADER or loader_imports(package)}


def render(package: PackageIR, templates: Sequence[Path] = ()) -> dict[str, str]:
    """Every generated text file; a broken user template raises FxExportError naming it."""
    check_template_dirs(templates)
    env = environment(templates)
    values = context(package, laid_out=not templates)
    return {path: _render_one(env, name, values) for path, name in outputs(package).items()}


def _render_one(env: jinja2.Environment, name: str, values: dict[str, Any]) -> str:
    where = name
    try:
        template = env.get_template(name)
        where = template.filename or name
        return template.render(values)
    except jinja2.TemplateSyntaxError as error:
        raise FxExportError(
            f"template {error.filename}:{error.lineno} failed: TemplateSyntaxError: {error.message}"
        ) from error
    except jinja2.TemplateError as error:
        raise FxExportError(f"template {where} failed: {type(error).__name__}: {error.message}") from error
