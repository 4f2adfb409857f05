"""alone_flags.py: the flag of a loop some modules of a source class run with every period alone
(Res2Net's `if i == 0 or self.is_first:`), named as the source names it, and taken out again where no
class of the other value joins a class."""

from __future__ import annotations

import pytest

from fxexport.alone_flags import flag_in_source, unflagged
from fxexport.ir import ClassIR

TWO_LOOPS = (
    "for i, conv in enumerate(self.others):\n    if i == 0 or self.is_first:\n        sp = spx[i]\n"
    "for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):\n    if i == 0 or self.first_block:\n        sq = spx[i]\n"
)
SOURCES = [
    ("for i, conv in enumerate(self.convs):\n    if i == 0 or self.is_first:\n        sp = spx[i]\n", "is_first"),
    ("for k, conv in enumerate(self.convs):\n    if k == 0 or self.first_block:\n        sp = spx[k]\n", "first_block"),
    (TWO_LOOPS, "first_block"),  # the loop over this container's, not the first loop's
    ("for i, conv in enumerate(self.others):\n    if i == 0 or self.is_first:\n        sp = spx[i]\n", None),  # another loop's
    ("for i, conv in enumerate(self.convs):\n    if i == 0:\n        sp = spx[i]\n", None),  # no flag
    ("for i, conv in enumerate(self.convs):\n    if i == 1 or self.is_first:\n        sp = spx[i]\n", None),  # not the first index
    ("for i, conv in enumerate(self.convs):\n    if i == 0 or is_first:\n        sp = spx[i]\n", None),  # not an attribute
    ("def forward(self, x):\n    return x +\n", None),  # no source that parses
]


@pytest.mark.parametrize(("source", "name"), SOURCES)
def test_the_flag_is_named_as_the_source_names_it(source: str, name: str | None) -> None:
    assert flag_in_source(source, "self.convs") == name


HEADED = ("    if i == 0 or self.is_first:", "        out = spx[i]", "    else:", "        out = out + spx[i]")
LOOP = ("outs = []", "for i, conv in enumerate(self.convs):", *HEADED, "    outs.append(conv(out))", "return torch.cat(outs, 1)")
LATER = ("out = spx[0]", "for i, conv in enumerate(self.convs):", "    if i > 0 and not self.is_first:", "        out = out + spx[i]",
         "    out = conv(out)", "return out")  # fmt: skip


def _cls(init: tuple[str, ...], forward: tuple[str, ...]) -> ClassIR:
    return ClassIR("Block", False, ("self.conv = nn.Conv2d(4, 4, 1)", *init), (), ("x",), forward)


UNFLAGGED = [
    # every instance runs each period alone: the first branch, dedented
    ("alone", _cls(("self.is_first = True",), LOOP),
     ("outs = []", "for i, conv in enumerate(self.convs):", "    out = spx[i]", "    outs.append(conv(out))", "return torch.cat(outs, 1)")),
    # none does: the first period alone
    ("headed", _cls(("self.is_first = False",), LOOP), ("outs = []", "for i, conv in enumerate(self.convs):", "    if i == 0:", *HEADED[1:],
                                                        "    outs.append(conv(out))", "return torch.cat(outs, 1)")),
    # a first value its name holds already: the later periods' `if`, or none
    ("later_headed", _cls(("self.is_first = False",), LATER), tuple(line.replace(" and not self.is_first", "") for line in LATER)),
    ("later_alone", _cls(("self.is_first = True",), LATER), (LATER[0], LATER[1], *LATER[4:])),
]  # fmt: skip


@pytest.mark.parametrize(("name", "cls", "forward"), UNFLAGGED, ids=[u[0] for u in UNFLAGGED])
def test_a_flag_all_instances_share_is_taken_out(name: str, cls: ClassIR, forward: tuple[str, ...]) -> None:
    out = unflagged(cls)
    assert out.forward_lines == forward
    assert out.init_lines == ("self.conv = nn.Conv2d(4, 4, 1)",)


KEPT = [
    ("a parameter", _cls(("self.is_first = is_first",), LOOP)),  # classes of both values joined
    ("the training mode", _cls(("self.training = True",), LOOP)),
    ("another attribute read", _cls(("self.first = True",), LOOP)),
]


@pytest.mark.parametrize(("name", "cls"), KEPT, ids=[k[0] for k in KEPT])
def test_other_flags_stay(name: str, cls: ClassIR) -> None:
    assert unflagged(cls) == cls
