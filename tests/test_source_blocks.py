"""source_blocks: a block's end read off the indentation is inspect.getblock's, or is not used."""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import sys
import textwrap
from pathlib import Path
from types import CodeType, ModuleType

import pytest
import torch

from fxexport import source_blocks

# name, source (the block under test starts at the line marked `# <-`), whether the quick end holds
CASES = [
    ("plain_def", '''
        def f(x):  # <-
            y = x + 1
            return y

        z = 1
    ''', True),
    ("method_then_method", '''
        class A:
            def f(self, x):  # <-
                return x

            def g(self):
                return 2
    ''', True),
    ("header_over_lines", '''
        class A:
            def forward(  # <-
                self, x
            ) -> int:
                return x
        z = 1
    ''', True),
    ("closing_bracket_at_the_margin", '''
        def f(x):  # <-
            return g(
                x
        )
        z = 1
    ''', True),
    ("argument_at_the_margin", '''
        def f(x):  # <-
            return g(
        x)
        z = 1
    ''', False),
    ("decorated", '''
        def other(n):
            return lambda f: f


        @staticmethod
        @other(
            1,
        )
        def f(x):  # <- (the decorators)
            return x
    ''', True),
    ("trailing_comment_as_deep_as_the_body", '''
        class A:
            def f(self):  # <-
                return 1
                # kept, as inspect keeps it
            # not kept: less deep than the body

            def g(self):
                return 2
    ''', True),
    ("comment_at_the_margin_inside", '''
        def f(x):  # <-
            y = x
        # a comment at the margin does not end the block
            return y
        z = 1
    ''', True),
    ("docstring_at_the_margin", '''
        def f(x):  # <-
            """A docstring
        with a line at the margin.
        """
            return x
        z = 1
    ''', False),
    ("string_at_the_margin_last", '''
        def f(x):  # <-
            return """
        text
        """
        z = 1
    ''', False),
    ("body_on_the_header_line", '''
        def f(x): return x  # <-
        z = 1
    ''', False),
    ("class", '''
        class A(object):  # <-
            size = 3

            def f(self):
                return self.size
        z = 1
    ''', True),
]


def _load(name: str, source: str, tmp_path: Path) -> tuple[ModuleType, list[str], int]:
    text = textwrap.dedent(source).lstrip("\n")
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"blocks_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    lines = linecache.getlines(str(path))
    marked = next(n for n, line in enumerate(lines, 1) if "# <-" in line)
    if "(the decorators)" in lines[marked - 1]:
        marked = next(n for n, line in enumerate(lines, 1) if line.startswith("@"))
    return module, lines, marked


def _codes(module: ModuleType) -> list[CodeType]:
    out = []
    for value in vars(module).values():
        if inspect.isfunction(value):
            out.append(value.__code__)
        elif isinstance(value, type):
            out += [getattr(f, "__func__", f).__code__ for f in vars(value).values() if inspect.isfunction(getattr(f, "__func__", f))]
    return out


@pytest.mark.parametrize("name, source, quick", CASES, ids=[c[0] for c in CASES])
def test_quick_block_is_inspects_or_is_refused(name: str, source: str, quick: bool, tmp_path: Path) -> None:
    module, lines, start = _load(name, source, tmp_path)
    expected = inspect.getblock(lines[start - 1 :])
    found = source_blocks.block(lines, start)
    end = start + len(found) - 1 if found is not None else None
    codes = [c for c in _codes(module) if start <= c.co_firstlineno <= start + len(expected)]
    checked = found is not None and end >= source_blocks.last_code_line(codes)  # type: ignore[operator]
    if sys.version_info < (3, 11):
        assert not checked  # no end lines in the code to check against
        return
    assert checked == quick
    if checked:
        assert found == expected


def test_source_lines_match_inspect_for_torch_nn() -> None:
    """Every function of torch.nn's modules whose quick block checks out reads as inspect reads it, and
    most do (else the quick path buys nothing)."""
    functions = {
        f.__code__: f
        for module in list(sys.modules.values())
        if getattr(module, "__name__", "").startswith("torch.nn.modules.")
        for value in list(vars(module).values())
        if isinstance(value, type) and value.__module__ == module.__name__
        for f in vars(value).values()
        if inspect.isfunction(f)
    }
    assert len(functions) > 300
    quick = 0
    for function in functions.values():
        found = source_blocks._quick_source_lines(inspect.unwrap(function))
        if found is not None:
            quick += 1
            assert found == inspect.getsourcelines(function), function.__qualname__
    assert quick >= (0.8 * len(functions) if sys.version_info >= (3, 11) else 0)
    assert torch.nn.Linear.forward  # the modules were imported by torch itself
