"""A user's files for the command-line tests: models and inputs that work, and ones that fail in each way.

`write_user_files(folder)` writes them; `run_cli(argv, capture)` runs `fxexport.cli.main` in this process.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TextIO

import pytest

from fxexport.cli import main

USER_MODEL = """\
import torch
from torch import nn

model = nn.Linear(3, 4)


def raising_inputs():
    raise ValueError("no inputs today")


def wrong_inputs():
    return (torch.randn(2, 5),)


def good_inputs():
    return (torch.randn(2, 3),)


def not_inputs():
    return {"args": 5}


def exiting():
    raise SystemExit(3)


class _Lazy:
    @property
    def model(self):
        raise RuntimeError("lazy model failed")


lazy = _Lazy()


class Branchy(nn.Module):
    def forward(self, x):
        return x if x.sum() > 0 else -x


branchy = Branchy()
"""

# A feature extractor as torchvision's and timm's build it: a GraphModule of plain holders that recorded no
# module calls; `--classes-from features.py:Net` names its blocks after Net's classes.
FEATURES = """\
import torch
from torch import fx, nn


class SwishGate(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x * torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gates = nn.ModuleList([SwishGate(4), SwishGate(4)])

    def forward(self, x):
        for gate in self.gates:
            x = torch.relu(gate(x)) * 2
        return x


def extractor():
    model = Net()
    graph = fx.Tracer().trace(model)
    for node in graph.nodes:
        node.meta.pop("nn_module_stack", None)
    return fx.GraphModule(model, graph, "Net")
"""

USER_FILES = {
    "user_model.py": USER_MODEL,
    "features.py": FEATURES,
    "broken.py": 'import torch\n\nraise RuntimeError("boom")\n',
    "syntax_error.py": "def model(:\n    pass\n",
    "exits.py": "import sys\n\nsys.exit('usage: exits.py FILE')\n",
    "userpkg/__init__.py": "",
    "userpkg/broken.py": "x = 1 / 0\n",
    "somedir/notes.txt": "a folder, not a file\n",
    "garbage.pt2": "not a zip archive\n",
    "templates_ok/README.md.jinja": "{% extends 'fxexport/README.md.jinja' %}\n",
    "templates_bad/module.py.jinja": "{% if %}\n",
}


def write_user_files(folder: Path) -> Path:
    """Write USER_FILES under `folder` and return it."""
    for relative, text in USER_FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def forget_user_modules(folder: Path) -> None:
    """Drop from sys.modules what importing the files under `folder` left there."""
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(folder)):
            del sys.modules[name]


def torch_logs_to(stream: TextIO, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point torch's log handlers at `stream` (a captured stderr), so a test sees what torch logs."""
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if name.split(".")[0] == "torch" and isinstance(logger, logging.Logger):
            for handler in logger.handlers:
                if type(handler) is logging.StreamHandler:  # not pytest's own handlers
                    monkeypatch.setattr(handler, "stream", stream)


def run_cli(argv: list[str], capture: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`fxexport ARGV` in this process: exit code, stdout and stderr (argparse's SystemExit included)."""
    capture.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse: --help, --version, usage errors
        code = exit.code if isinstance(exit.code, int) else 1
    out, err = capture.readouterr()
    return code, out, err
