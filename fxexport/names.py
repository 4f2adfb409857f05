"""One namespace for every name fxexport emits."""

from __future__ import annotations

import builtins
import contextlib
import keyword
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

_ILLEGAL_CHAR = re.compile(r"[^0-9A-Za-z_]")
_SUFFIX = re.compile(r"^(.*)_(\d+)$")
BUILTIN_NAMES = frozenset(dir(builtins))


def is_plain_identifier(name: str) -> bool:
    """True when `name` can be written as-is after a dot: ASCII, an identifier, not a keyword.

    Non-ASCII identifiers are refused because Python NFKC-normalises them, so the
    attribute the code reaches would not be the one that was registered.
    """
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def sanitize(candidate: str) -> str:
    """Turn any string into a valid ASCII identifier that is not a keyword."""
    ascii_text = unicodedata.normalize("NFKD", candidate).encode("ascii", "ignore").decode()
    name = _ILLEGAL_CHAR.sub("_", ascii_text) or "_"
    if name[0].isdigit():
        name = f"_{name}"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name = f"{name}_"
    return name


class Namespace:
    """Hands out unique identifiers; the same object always gets the same name."""

    def __init__(self, reserved: Iterable[str] = (), asked: set[str] | None = None) -> None:
        self._used: set[str] = set(reserved)
        self._by_object: dict[int, str] = {}
        self._objects: list[object] = []  # keeps ids stable while the namespace lives
        # (base, first number tried) -> the number last handed out: the ones before it are taken
        # (names are never freed), so the next search starts there, not at 1 (2,000 `Linear`s).
        self._numbered: dict[tuple[str, int], int] = {}
        self._added: list[str] = []  # names taken since it was made, in order (added_since)
        self._asked = asked  # where given, every name asked about goes in it (asking)

    def is_free(self, name: str) -> bool:
        """True if `name` has not been used or reserved (asked about: see asking)."""
        return not self._taken(name)

    def reserve(self, name: str) -> None:
        """Mark `name` as taken, so `create` never hands it out."""
        self._take(name)

    def create(self, candidate: str, obj: object | None = None) -> str:
        """A fresh identifier from `candidate` (sanitised, `_1`, `_2`... on collision); `obj` always gets the same one."""
        if obj is not None and id(obj) in self._by_object:
            return self._by_object[id(obj)]
        name = sanitize(candidate)
        if self._taken(name):
            match = _SUFFIX.match(name)
            base, first = (match.group(1), int(match.group(2))) if match else (name, 0)
            count = self._numbered.get((base, first), first)
            while self._taken(f"{base}_{count + 1}"):
                count += 1
            self._numbered[base, first] = count + 1
            name = f"{base}_{count + 1}"
        self._take(name)
        if obj is not None:
            self._by_object[id(obj)] = name
            self._objects.append(obj)
        return name

    def child(self, freed: Iterable[str] = ()) -> Namespace:
        """A namespace that starts with every name this one has used but `freed` (asked about as this one is)."""
        return Namespace(self._used.difference(freed), self._asked)

    def mark(self) -> int:
        """Where `added_since` starts from now."""
        return len(self._added)

    def added_since(self, mark: int) -> list[str]:
        """The names taken since `mark`, in order."""
        return self._added[mark:]

    @contextlib.contextmanager
    def asking(self) -> Iterator[set[str]]:
        """Within it, every name this namespace, and any child made within it, is asked about (whether
        taken, or handed out) is added to the set it gives: what could have come out otherwise had they
        been taken. A child made within it keeps adding to that set (collect drops its children after)."""
        saved, asked = self._asked, set[str]()
        self._asked = asked
        try:
            yield asked
        finally:
            self._asked = saved
            if saved is not None:
                saved.update(asked)

    def _taken(self, name: str) -> bool:
        if self._asked is not None:
            self._asked.add(name)
        return name in self._used

    def _take(self, name: str) -> None:
        if name not in self._used:
            self._used.add(name)
            self._added.append(name)


def quote(text: str) -> str:
    """`repr(text)` with the quotes black would choose, so emitted lines are already black-stable."""
    code = repr(text)
    if '"' not in text:
        # repr() quotes with ' unless the text holds one; black prefers " where no escape is added.
        return f'"{code[1:-1]}"' if code.startswith("'") else code
    from black.strings import normalize_string_quotes  # double quotes inside: black's own rule decides

    return normalize_string_quotes(code)


def code_of(value: Any) -> str:
    """A str, int, float, bool, None, torch dtype, or tuple/list/dict of them as code, quoted as black writes it."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, tuple):
        items = ", ".join(map(code_of, value))
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, list):
        return f"[{', '.join(map(code_of, value))}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{code_of(k)}: {code_of(v)}" for k, v in value.items()) + "}"
    return repr(value)  # numbers, booleans, None, torch.float32


def unique_identifier(base: str, taken: set[str], fallback: str, start: int = 1) -> str:
    """`base`, or `base_<n>` (n from `start`) when taken; `fallback` for a keyword, `self` or a non-identifier.
    The name is added to `taken`."""
    base = base if base.isidentifier() and not keyword.iskeyword(base) and base != "self" else fallback
    name, count = base, start - 1
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    taken.add(name)
    return name


def camel_case(name: str) -> str:
    """`BasicBlock` for `basic_block` or `_BasicBlock` ("" for a name of underscores only)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def variant_names(names: Iterable[str]) -> frozenset[str]:
    """The class names that an export gave variants of another class among `names` (`Block_1` beside
    `Block`): exporting that export again, they keep those names, not `Block1`."""
    found = set(names)
    return frozenset(n for n in found if _NUMBERED_CLASS.fullmatch(n) and without_number(n) in found)


_NUMBERED_CLASS = re.compile(r"[A-Z][A-Za-z0-9]*_[1-9][0-9]*")


def without_number(name: str) -> str:
    """`add` for `add_3`, `Block` for `Block_1`: the name a namespace numbered."""
    return re.sub(r"_[0-9]+$", "", name) or name
