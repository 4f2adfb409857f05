"""source_blocks: a block's end read off the indentation is inspect.getblock's, or is not used."""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
import torch

from fxexport import annotations, source_blocks

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


        @other(0)
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
    ("unreachable_string_at_the_margin", '''
        def f(x):  # <-
            return x
            """
        text at the margin
        """
        z = 1
    ''', False),
    ("class_docstring_at_the_margin", '''
        class A:  # <-
            """A docstring
        with a line at the margin, and no method to check the end against.
        """
        z = 1
    ''', False),
    ("form_feed_before_unreachable_code", '''
        def f(x):  # <-
            return x
        \f    y = 1
        z = 1
    ''', False),
    ("form_feed_hiding_a_dedent", '''
        def f(x):  # <-
            return x
                \fz = 1
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


def _block_object(module: ModuleType, start: int) -> object:
    """The function or class whose source starts at line `start` (a method's function for a method)."""
    candidates = []
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == module.__name__:
            candidates.append(value)
            candidates += [getattr(f, "__func__", f) for f in vars(value).values()]
        elif inspect.isfunction(value):
            candidates.append(value)
    for candidate in candidates:
        if inspect.isfunction(candidate) or isinstance(candidate, type):
            if inspect.getsourcelines(candidate)[1] == start:
                return candidate
    raise AssertionError(f"nothing starts at line {start}")


@pytest.mark.parametrize("name, source, quick", CASES, ids=[c[0] for c in CASES])
def test_quick_source_is_inspects_or_is_refused(name: str, source: str, quick: bool, tmp_path: Path) -> None:
    """Where the quick block is taken it is inspect's; where it is refused, inspect's is used."""
    module, lines, start = _load(name, source, tmp_path)
    found = _block_object(module, start)
    if isinstance(found, type):
        block = source_blocks.block(lines, start)
        taken = block is not None and source_blocks.parsed(block) is not None
        expected = inspect.getblock(lines[start - 1 :])
        assert taken == quick
        assert not taken or block == expected
        span = annotations._class_span(found)
        assert span is not None and span[1:] == (start, start + len(expected) - 1)
        return
    assert source_blocks.source_lines(found) == inspect.getsourcelines(found)
    assert (source_blocks._quick_source_lines(found) is not None) == quick


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
    assert quick >= 0.8 * len(functions)
    assert torch.nn.Linear.forward  # the modules were imported by torch itself
