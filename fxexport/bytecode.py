"""The package's hash-checked bytecode, compiled in the exporting process: the same bytes from any interpreter of one Python version.

marshal's current format marks objects it meets twice with back-references, and whether it marks one
depends on its reference count and on which strings the process has interned (single-character
strings are shared by the whole process), so the same source compiled in a busy process and in a
fresh one gives other bytes. Format 2 writes no back-references and no interned flags: its bytes
depend on the code alone, and every interpreter reads it (the loader interns names itself). It costs
a few percent of size and microseconds of load; a fresh interpreter per export, started beside it to
compile in the current format, cost 1-30 ms of the export on two cores (bench, median 16 ms), where
compiling here costs 4-7 ms of the first export in a process and under 1 ms after (the loader's text is kept compiled).
"""

from __future__ import annotations

import functools
import importlib.util
import marshal
import sys
from pathlib import Path

from .errors import FxExportError

# No back-references (format 3) nor short strings (format 4): bytes that depend on the code only.
_MARSHAL_FORMAT = 2
_CHECKED_HASH = 0b11  # PEP 552: a hash-based pyc the interpreter checks against its source


@functools.lru_cache(maxsize=8)  # the loader's fixed text comes in every export
def pyc(source: bytes, relative: str) -> bytes:
    """The hash-checked pyc of `source`, compiled as `relative` (the import system puts the real path in)."""
    code = compile(source, relative, "exec", dont_inherit=True, optimize=0)
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little") + importlib.util.source_hash(source)
    return header + marshal.dumps(code, _MARSHAL_FORMAT)


def write_bytecode(folder: Path, sources: dict[str, bytes]) -> None:
    """Compile each source (relative path -> its bytes, already in `folder`) into `__pycache__`, as
    `pip install` does, so the first import is fast; nothing where this interpreter caches no bytecode.

    Hash-checked pycs: the interpreter uses one only while its source is byte-for-byte the one
    compiled (an edited module.py is compiled afresh), wherever the folder is moved, and reads
    it even where bytecode is never written (PYTHONDONTWRITEBYTECODE, read-only folders).
    """
    tag = sys.implementation.cache_tag
    if tag is None:
        return
    for relative, data in sorted(sources.items()):
        try:
            compiled = pyc(data, relative)
        except (SyntaxError, ValueError) as error:
            raise FxExportError(f"cannot compile the generated {relative} to bytecode: {error}; export with bytecode=False (--no-bytecode)") from None
        target = pyc_path(folder, relative, tag)
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(compiled)


def pyc_path(folder: Path, relative: str, tag: str) -> Path:
    """Where the import system looks for the pyc of `folder/relative` compiled by the interpreter of `tag`."""
    source = Path(relative)
    return folder / source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
