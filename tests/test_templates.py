"""Custom templates: a user's folder goes in front of ours; every template variable is documented."""

from __future__ import annotations

import dataclasses
import importlib
import re
import shutil
import sys
from pathlib import Path

import pytest
import torch
from torch import fx

import fxexport
from fxexport import ir
from fxexport.cli import main
from fxexport.render import OUTPUTS, context
from tests import models

REPO = Path(__file__).resolve().parent.parent

# A user module.py.jinja that extends ours: a new header and one more method on the root class.
EXTENDING = '''{% extends "fxexport/module.py.jinja" %}
{% block docstring %}
"""ACME model zoo: {{ package.class_name }}, {{ package.parameter_count }} parameters."""
{% endblock %}
{% block methods %}
{% if cls.is_root %}

    def describe(self) -> str:
        return {{ codes.class_name }} + " from the ACME zoo"
{% endif %}
{% endblock %}
'''


def _folder(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def _load(folder: Path, class_name: str, monkeypatch: pytest.MonkeyPatch) -> torch.nn.Module:
    monkeypatch.syspath_prepend(str(folder.parent))
    module = importlib.import_module(folder.name)
    for name in [n for n in sys.modules if n == folder.name or n.startswith(f"{folder.name}.")]:
        monkeypatch.delitem(sys.modules, name)
    return getattr(module, class_name)()


def test_extending_template_adds_a_method_and_the_package_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = fx.symbolic_trace(models.MLP().eval())
    templates = _folder(tmp_path, "acme_templates", {"module.py.jinja": EXTENDING})
    fxexport.export(source, tmp_path / "acme_mlp", module_name="Mlp", templates=[templates])
    text = (tmp_path / "acme_mlp" / "module.py").read_text()
    assert text.startswith('"""ACME model zoo: Mlp, 736 parameters."""\n')
    model = _load(tmp_path / "acme_mlp", "Mlp", monkeypatch)
    x = torch.randn(3, 16)
    assert model.describe() == "Mlp from the ACME zoo"
    torch.testing.assert_close(model(x), source(x))


# `templates=` as users write it: one folder as a string or a path, or several in a list or tuple.
TEMPLATE_ARGUMENTS = [
    ("one_string", lambda folder: str(folder)),
    ("one_path", lambda folder: folder),
    ("list_of_strings", lambda folder: [str(folder)]),
    ("tuple_of_paths", lambda folder: (folder, folder)),
]


@pytest.mark.parametrize("name,argument", TEMPLATE_ARGUMENTS, ids=[case[0] for case in TEMPLATE_ARGUMENTS])
def test_templates_take_one_folder_or_several(tmp_path: Path, name: str, argument) -> None:
    folder = _folder(tmp_path, "my_templates", {"README.md.jinja": "mine {{ package.module_name }}\n"})
    gm = fx.symbolic_trace(models.MLP().eval())
    _, sources = fxexport.generate(gm, package_name="gen_pkg", templates=argument(folder))
    assert sources["README.md"] == "mine gen_pkg\n"
    fxexport.export(gm, tmp_path / "out_pkg", templates=argument(folder), bytecode=False)
    assert (tmp_path / "out_pkg" / "README.md").read_text() == "mine out_pkg\n"
    with pytest.raises(fxexport.FxExportError, match=r"^template folder '.*nothere' does not exist or is not a folder$"):
        fxexport.generate(gm, package_name="gen_pkg", templates=argument(tmp_path / "nothere"))


def test_cli_templates_are_searched_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _folder(tmp_path, "first", {"README.md.jinja": "first {{ package.module_name }}\n"})
    second = _folder(tmp_path, "second", {"README.md.jinja": "second\n", "module.py.jinja": EXTENDING})
    out = tmp_path / "cli_pkg"
    argv = [
        "export",
        "fxexport.examples:mlp",
        "-o",
        str(out),
        "-q",
        "--templates",
        str(first),
        "--templates",
        str(second),
    ]
    assert main(argv) == 0
    assert (out / "README.md").read_text() == "first cli_pkg\n"
    assert _load(out, "FxModule", monkeypatch).describe() == "FxModule from the ACME zoo"
    assert main(["verify", str(out), "-q"]) == 0


BROKEN = [
    ("missing_folder", None, "does not exist or is not a folder"),
    ("syntax_error", {"module.py.jinja": "{% if %}\n"}, "syntax_error/module.py.jinja:1 failed: TemplateSyntaxError"),
    (
        "undefined_variable",
        {"README.md.jinja": "{{ package.no_such_field }}\n"},
        "undefined_variable/README.md.jinja failed: UndefinedError",
    ),
    ("invalid_python", {"module.py.jinja": "def (:\n"}, "check the custom templates in"),
]


@pytest.mark.parametrize("name,files,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_templates_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                              files: dict[str, str] | None, message: str) -> None:  # fmt: skip
    folder = tmp_path / "missing" if files is None else _folder(tmp_path, name, files)
    assert main(["export", "fxexport.examples:mlp", "-o", str(tmp_path / "out"), "--templates", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def _documented_section() -> str:
    readme = (REPO / "README.md").read_text()
    return readme.split("## Custom templates", 1)[1].split("\n## ", 1)[0]


def _variables() -> list[str]:
    """Every name a template sees: context keys, `codes.*`, and each IR field, as the README writes them."""
    values = context(fxexport.generate(fx.symbolic_trace(models.MLP()), package_name="p")[0])
    names = [f"`{key}`" for key in values] + [f"`codes.{key}`" for key in values["codes"]]
    for cls in (ir.PackageIR, ir.ClassIR, ir.TensorIR, ir.SignatureIR, ir.ValueIR, ir.ModuleIR):
        names += [f"`{f.name}`" for f in dataclasses.fields(cls)]
        names += [f"`{name}`" for name, value in vars(cls).items() if isinstance(value, property)]
    names += [f"`{template}`" for template in OUTPUTS.values()]
    return names


def test_every_template_variable_is_documented() -> None:
    section = _documented_section()
    assert [name for name in _variables() if name not in section] == []


def test_documented_blocks_exist() -> None:
    template = (REPO / "templates" / "module.py.jinja").read_text()
    blocks = set(re.findall(r"{% block (\w+)", template))
    assert blocks and all(f"`{block}`" in _documented_section() for block in blocks)


def test_the_loader_is_one_file_the_same_in_every_export() -> None:
    loaders = set()
    for model in (models.MLP(), models.Tied()):
        package, sources = fxexport.generate(fx.symbolic_trace(model.eval()), package_name="pkg")
        assert "from .loader import load_tensors, skip_init\n" in sources["module.py"]
        assert "def load_tensors" not in sources["module.py"] and "import json" not in sources["module.py"]
        assert "TIED_TENSORS" not in sources["loader.py"] and "WEIGHT_FILES" not in sources["loader.py"]
        loaders.add(sources["loader.py"])
    assert len(loaders) == 1
    _, sources = fxexport.generate(fx.symbolic_trace(torch.nn.ReLU()), package_name="pkg")
    assert "loader.py" not in sources and ".loader" not in sources["module.py"]  # nothing to load


# A user loader.py.jinja: ours, and a function of theirs after it.
LOADER = '''{% include "fxexport/loader.py.jinja" %}


def acme_loader() -> str:
    return "ACME"
'''


def test_a_user_loader_template_replaces_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = fx.symbolic_trace(models.MLP().eval())
    templates = _folder(tmp_path, "acme_templates", {"loader.py.jinja": LOADER})
    fxexport.export(source, tmp_path / "acme_loaded", templates=templates)
    model = _load(tmp_path / "acme_loaded", "FxModule", monkeypatch)
    loader = type(model).__init__.__globals__["load_tensors"].__globals__  # the loader.py that module.py imported
    assert loader["acme_loader"]() == "ACME"
    x = torch.randn(3, 16)
    torch.testing.assert_close(model(x), source(x))
    assert main(["verify", str(tmp_path / "acme_loaded"), "-q"]) == 0


def _render_with_cache(cache_folder: Path) -> dict[str, str]:
    """Our templates through a fresh environment whose compiled templates are kept in `cache_folder`."""
    import jinja2

    from fxexport import render

    loader = jinja2.FileSystemLoader([str(d) for d in render.template_dirs()])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, bytecode_cache=render._TemplateCache(str(cache_folder)))  # fmt: skip
    env.filters["thousands"] = render.thousands
    package, _ = fxexport.generate(fx.symbolic_trace(models.MLP()), package_name="pkg")
    return {path: env.get_template(name).render(context(package)) for path, name in OUTPUTS.items()}


CACHE_DAMAGE = [
    ("kept", lambda folder: None),
    ("truncated", lambda folder: [f.write_bytes(f.read_bytes()[:40]) for f in folder.iterdir()]),
    ("garbage", lambda folder: [f.write_bytes(b"j2" + b"\x00" * 64) for f in folder.iterdir()]),
    ("gone", shutil.rmtree),  # nothing to read, nowhere to write
]


@pytest.mark.parametrize("name,damage", CACHE_DAMAGE, ids=[d[0] for d in CACHE_DAMAGE])
def test_compiled_template_cache_never_changes_the_output(tmp_path: Path, name: str, damage) -> None:
    fresh = _render_with_cache(tmp_path)
    assert len(list(tmp_path.iterdir())) == len(OUTPUTS)  # each template compiled once, kept
    damage(tmp_path)
    assert _render_with_cache(tmp_path) == fresh


class _ManyTies(torch.nn.Module):
    """Six layers sharing one weight: a TIED_TENSORS table too long for one line."""

    def __init__(self) -> None:
        super().__init__()
        self.first_projection = torch.nn.Linear(4, 4)
        self.others = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(5))
        for layer in self.others:
            layer.weight = self.first_projection.weight

    def forward(self, x):
        for layer in self.others:
            x = layer(x)
        return self.first_projection(x)


# A user template placing a table on a comment line: the table must come as one line of code.
TABLE_IN_A_COMMENT = '''{% extends "fxexport/module.py.jinja" %}
{% block footer %}

# ties: {{ codes.tied_tensors }}
{% endblock %}
'''


def test_tables_are_one_line_for_a_users_templates_and_laid_out_for_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = fx.symbolic_trace(_ManyTies().eval())
    fxexport.export(source, tmp_path / "ours")
    ours = (tmp_path / "ours" / "module.py").read_text()
    assert "TIED_TENSORS = {\n" in ours  # laid out when rendered, as black writes it
    templates = _folder(tmp_path, "comment_templates", {"module.py.jinja": TABLE_IN_A_COMMENT})
    fxexport.export(source, tmp_path / "theirs", templates=templates)
    theirs = (tmp_path / "theirs" / "module.py").read_text()
    comment = next(line for line in theirs.splitlines() if line.startswith("# ties: "))
    assert comment.endswith('"first_projection.weight": "others.0.weight"}') and comment.count(': "others.0.weight"') == 5
    model = _load(tmp_path / "theirs", "FxModule", monkeypatch)
    x = torch.randn(2, 4)
    assert torch.equal(model(x), source(x))
