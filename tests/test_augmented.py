"""In-place tensor methods written as augmented assignments (augmented.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from fxexport.augmented import augmented
from tests.packages import imported

WRITTEN = [  # (line, as written)
    ("out = out.add_(identity)", "out += identity"),
    ("        out = out.add_(self.conv_kxk[0](x))", "        out += self.conv_kxk[0](x)"),
    ("x = x.mul_(1.5)", "x *= 1.5"),
    ("x = x.sub_(y + z)", "x -= y + z"),
    ("x = x.div_(self.scale)", "x /= self.scale"),
]
KEPT = [
    "out = shortcut.add_(out)",  # another tensor's method: `out` is bound to `shortcut`
    "return self.out.add_(identity)",
    "return out.add_(identity, alpha=2)",
    "out = out.add_(identity, alpha=2)",  # no operator takes the keyword
    "out = out.add_(a, b)",
    "out = out.add(identity)",  # not in place: a new tensor
    "out.add_(identity)",  # nothing bound
    "out = self.out.add_(identity)",
    "out = (out + 0).add_(identity)",
    "# a note: out = out.add_(identity)",
    "out = out.add_(*items)",
    "out = out.pow_(2)",
]


@pytest.mark.parametrize("line,written", WRITTEN)
def test_an_in_place_method_rebinding_its_tensor_is_an_augmented_assignment(line: str, written: str) -> None:
    assert augmented((line,)) == (written,)


RETURNED = [  # (line, as written): the source's `out += y` before an identity torch.export left out
    ("return out.add_(identity)", ("out += identity", "return out")),
    ("        return out.mul_(self.gamma)", ("        out *= self.gamma", "        return out")),
    ("return shortcut.add_(out)", ("shortcut += out", "return shortcut")),
]


@pytest.mark.parametrize("line,written", RETURNED)
def test_a_returned_in_place_method_is_an_augmented_assignment_then_the_return(line: str, written: tuple[str, ...]) -> None:
    assert augmented((line,)) == written


FALLING = [  # (forward, as written): an `if` block ending in the return the lines after it make too
    (("if self.residual:", "    return result.add_(x)", "return result"), ("if self.residual:", "    result += x", "return result")),
    (("if a:", "    y = 1", "else:", "    return result.add_(x)", "return result"), ("if a:", "    y = 1", "else:", "    result += x", "return result")),
    # another value returned after it, or a loop's body: the return stays
    (("if self.residual:", "    return result.add_(x)", "return x"), ("if self.residual:", "    result += x", "    return result", "return x")),
    (("for layer in self.layers:", "    return result.add_(x)", "return result"),
     ("for layer in self.layers:", "    result += x", "    return result", "return result")),
]


@pytest.mark.parametrize("lines,written", FALLING)
def test_a_return_the_lines_after_its_block_make_too_is_left_to_them(lines: tuple[str, ...], written: tuple[str, ...]) -> None:
    assert augmented(lines) == written


@pytest.mark.parametrize("line", KEPT)
def test_other_statements_are_kept(line: str) -> None:
    assert augmented((line,)) == (line,)


class _Residual(nn.Module):
    """torchvision's BasicBlock ends `out += identity`; a scale applied in place too."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.conv2(self.conv1(x).relu())
        out += identity
        out *= 0.5
        return out.relu()


class _Blocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Sequential(_Residual(), _Residual())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


class _Summed(nn.Module):
    """fastvit's MobileOneBlock of no activation: `out += rc(x)`, then the identity torch.export leaves out."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.act = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x * 2
        out += self.conv(x)
        return self.act(out)


EXPORTED = [  # (model, what module.py must hold, what it must not)
    (_Blocks, ("out += identity", "out *= 0.5"), (".add_(", ".mul_(")),
    (lambda: nn.Sequential(_Summed(), _Summed()), ("out += self.conv(x)", "return out"), (".add_(",)),
]


def _code(text: str) -> str:
    return re.sub(r"^ *#.*\n", "", text.split("\n", 4)[4], flags=re.MULTILINE)


@pytest.mark.parametrize("model,held,absent", EXPORTED)
def test_torch_exports_in_place_adds_are_written_as_the_source_wrote_them_and_give_the_same_bits(
    model: type[nn.Module], held: tuple[str, ...], absent: tuple[str, ...], tmp_path: Path
) -> None:
    torch.manual_seed(0)
    source = model().eval()
    x = torch.randn(2, 4, 5, 5, generator=torch.Generator().manual_seed(1))
    gm = torch.export.export(source, (x,)).module()
    fxexport.export(gm, tmp_path / "first")
    text = (tmp_path / "first" / "module.py").read_text()
    assert all(t in text for t in held) and not any(t in text for t in absent), text
    with imported(tmp_path / "first") as package, torch.no_grad():
        ours = package.FxModule()
        assert torch.equal(ours(x), gm(x))
        fxexport.export(torch.export.export(ours, (x,)).module(), tmp_path / "again")
    assert _code((tmp_path / "again" / "module.py").read_text()) == _code(text)


class _AddedInPlace(nn.Module):
    """An in-place add the source calls as a method (set q's `inplace_chained`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.lins:
            x = lin(x).relu_().add_(1)
        return x


def test_a_traced_in_place_method_stays_a_method_call_so_a_trace_of_the_export_records_it_again(tmp_path: Path) -> None:
    """symbolic_trace records `x += 1` as `x + 1`: written so, a trace of the export would not be a fixed point."""
    torch.manual_seed(0)
    gm = fx.symbolic_trace(_AddedInPlace().eval())
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    fxexport.export(gm, tmp_path / "first")
    text = (tmp_path / "first" / "module.py").read_text()
    assert "x = x.add_(1)" in text and "+=" not in text, text
    with imported(tmp_path / "first") as package, torch.no_grad():
        ours = package.FxModule()
        assert torch.equal(ours(x), gm(x))
        fxexport.export(fx.symbolic_trace(ours), tmp_path / "again")
    assert (tmp_path / "again" / "module.py").read_text().split("\n", 4)[4] == text.split("\n", 4)[4]
