"""The package's hash-checked bytecode, compiled in the exporting process: the same bytes from any interpreter of one Python version.

marshal's current format marks objects it meets twice with back-references, and whether it marks one
depends on its reference count and on which strings the process has interned (single-character
strings are shared by the whole process), so the same source compiled in a busy process and in a
fresh one gives other bytes. Format 2 writes no back-references and no interned flags: its bytes
depend on the code alone, and every interpreter reads it (the loader interns names itself). It costs
a few percent of size and microseconds of load; a fresh interpreter per export, started beside it to
compile in the current format, cost 1-30 ms of the export on two cores (bench, median 16 ms), where
compiling here costs 4-7 ms of the first export in a process and under 1 ms after (the loader's text is kept compiled).
The loader, the same text in every export and 3-4 ms of that compiling, is compiled once per Python
version and its bytecode kept for later processes in the per-user cache folder (user_cache.py).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import marshal
import sys
from collections.abc import Collection
from pathlib import Path

from .errors import FxExportError
from .user_cache import read_entry, write_entry

# No back-references (format 3) nor short strings (format 4): bytes that depend on the code only.
_MARSHAL_FORMAT = 2
_CHECKED_HASH = 0b11  # PEP 552: a hash-based pyc the interpreter checks against its source


@functools.lru_cache(maxsize=8)  # verify compiles what the export just did
def pyc(source: bytes, relative: str) -> bytes:
    """The hash-checked pyc of `source`, compiled as `relative` (the import system puts the real path in)."""
    code = compile(source, relative, "exec", dont_inherit=True, optimize=0)
    return _header(source) + marshal.dumps(code, _MARSHAL_FORMAT)


def _header(source: bytes) -> bytes:
    """A hash-checked pyc's 16 bytes before its code: this interpreter's magic number, flags, the source's hash."""
    return importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little") + importlib.util.source_hash(source)


@functools.lru_cache(maxsize=8)
def kept_pyc(source: bytes, relative: str) -> bytes:
    """pyc(), kept between processes: for text every export shares (the loader). An entry is used only
    whole (its digest checked first: marshal may take minutes and gigabytes over bytes it did not write)
    and for this very source and interpreter (its name hashes both, its header is checked, its code read
    back); any other is compiled afresh and written over. Its code is trusted as Python trusts a
    `__pycache__` and Jinja its cache: the folder is the user's own (user_cache.py)."""
    name = _entry_name(source, relative)
    entry = read_entry(name) or b""
    kept, digest = entry[:-_DIGEST], entry[-_DIGEST:]
    if hashlib.sha256(kept).digest() == digest and _is_pyc_of(kept, source):
        return kept
    compiled = pyc(source, relative)
    write_entry(name, compiled + hashlib.sha256(compiled).digest())
    return compiled


_DIGEST = 32  # an entry ends in the sha256 of the pyc before it: damage is found before marshal reads any of it


def _entry_name(source: bytes, relative: str) -> str:
    key = hashlib.sha256(f"{sys.version}\0{sys.implementation.cache_tag}\0{_MARSHAL_FORMAT}\0{relative}\0".encode())
    key.update(_compiler_settings() + source)
    return f"fxexport-{key.hexdigest()}.pyc"


@functools.cache
def _compiler_settings() -> bytes:
    """What this interpreter's settings make of a line of code: `-X no_debug_ranges` (PYTHONNODEBUGRANGES)
    compiles the same source into other bytes, so its entries are kept apart."""
    return marshal.dumps(compile("a.b(c)\n", "settings", "exec", dont_inherit=True, optimize=0), _MARSHAL_FORMAT)


def _is_pyc_of(data: bytes, source: bytes) -> bool:
    """`data` has the header pyc() writes for `source` and code marshal reads back to the same bytes."""
    if data[:16] != _header(source):
        return False
    try:
        return marshal.dumps(marshal.loads(data[16:]), _MARSHAL_FORMAT) == data[16:]
    except Exception:  # noqa: BLE001 - marshal raises several types (SystemError too) over bytes it did not write
        return False


def write_bytecode(folder: Path, sources: dict[str, bytes], shared: Collection[str] = ()) -> None:
    """Compile each source (relative path -> its bytes, already in `folder`) into `__pycache__`, as
    `pip install` does, so the first import is fast; nothing where this interpreter caches no bytecode.
    The bytecode of `shared` sources, whose text every export has, is kept between processes (kept_pyc).

    Hash-checked pycs: the interpreter uses one only while its source is byte-for-byte the one
    compiled (an edited module.py is compiled afresh), wherever the folder is moved, and reads
    it even where bytecode is never written (PYTHONDONTWRITEBYTECODE, read-only folders).
    """
    tag = sys.implementation.cache_tag
    if tag is None:
        return
    for relative, data in sorted(sources.items()):
        try:
            compiled = kept_pyc(data, relative) if relative in shared else pyc(data, relative)
        except (SyntaxError, ValueError) as error:
            raise FxExportError(f"cannot compile the generated {relative} to bytecode: {error}; export with bytecode=False (--no-bytecode)") from None
        target = pyc_path(folder, relative, tag)
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(compiled)


def pyc_path(folder: Path, relative: str, tag: str) -> Path:
    """Where the import system looks for the pyc of `folder/relative` compiled by the interpreter of `tag`."""
    source = Path(relative)
    return folder / source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
