"""Whole processes timed from outside, as data: what a user waits for at the command line.

Each entry is a command run with the benchmark's own interpreter (`sys.executable`) in a fresh
process, in an empty folder of its own, with the same environment for every entry; run.py
times it from just before the process starts to just after it has exited. A command that
writes something gets `out`, a folder path in that empty folder that does not exist yet.
Importing this module does not import torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GROUP = "process"  # the cells' model name: the "model" column of the tables, and `--only process`


@dataclass(frozen=True)
class Process:
    """One command: its arguments after the interpreter, given the output folder `out`."""

    name: str
    argv: Callable[[Path], list[str]]
    expects: tuple[str, ...] = ()  # paths in `out` that must exist after a successful run

    def command(self) -> str:
        """The command as a user would type it (DIR for `out`)."""
        return " ".join(["python", *(f'"{a}"' if " " in a else a for a in self.argv(Path("DIR")))])


PROCESSES: tuple[Process, ...] = (
    # The floor under any command that uses torch: the interpreter starting and importing it.
    Process("import torch", lambda out: ["-c", "import torch"]),
    # The README's first command: trace the example ResNet, write its package (bytecode included).
    Process(
        "fxexport export",
        lambda out: ["-m", "fxexport", "export", "fxexport.examples:resnet", "-o", str(out)],
        expects=("weights.safetensors", "module.py"),
    ),
)
BASELINE = "import torch"  # the process every other one is compared with


def process(name: str) -> Process:
    return next(p for p in PROCESSES if p.name == name)
