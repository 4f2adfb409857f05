"""The command line: exports, and one clear line with exit code 2 for each user error."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import fxexport
from fxexport.cli import main
from fxexport.errors import user_code
from tests.user_files import USER_FILES, forget_user_modules, run_cli, torch_logs_to, write_user_files

REPO = Path(__file__).resolve().parent.parent

BAD_SPECS = [
    ("no_colon", "fxexport.examples", "bad spec"),
    ("missing_module", "no_such_module_xyz:model", "cannot import module"),
    ("missing_attr", "fxexport.examples:nope", "has no attribute"),
    ("not_a_module", "fxexport.examples:torch", "not a GraphModule"),
    ("missing_file", "does/not/exist.py:model", "no such file"),
]


@pytest.mark.parametrize("name,spec,message", BAD_SPECS, ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, spec: str, message: str) -> None:
    assert main(["export", spec, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fxexport: error: ") and message in err
    assert not (tmp_path / "out").exists()


def test_existing_folder_needs_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pkg"
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "-q"]) == 0
    before = (out / "module.py").read_bytes()
    assert main(["export", "fxexport.examples:mlp", "-o", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "--overwrite", "-q"]) == 0
    assert (out / "module.py").read_bytes() == before


def test_foreign_folder_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["export", "fxexport.examples:mlp", "-o", str(out), "--overwrite"]) == 2
    assert "not written by fxexport" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "keep me" and len(list(out.iterdir())) == 1


def test_file_spec_and_debug_traceback(tmp_path: Path) -> None:
    source = tmp_path / "user_model.py"
    source.write_text("import torch\nmodel = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run([sys.executable, "-m", "fxexport", "export", f"{source}:model", "-o", str(tmp_path / "pkg")],
                        capture_output=True, text=True, env=env)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "pkg" / "module.py").is_file()
    bad = [sys.executable, "-m", "fxexport", "export", f"{source}:nothing", "-o", str(tmp_path / "x")]
    quiet = subprocess.run(bad, capture_output=True, text=True, env=env)
    loud = subprocess.run([*bad, "--debug"], capture_output=True, text=True, env=env)
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr and quiet.stderr.count("\n") == 1
    assert "Traceback" in loud.stderr


def test_diff_reads_old_then_new_and_check_shows_golden_as_old(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, actual = tmp_path / "golden" / "mlp_pkg", tmp_path / "actual" / "mlp_pkg"  # README.md names the package
    assert main(["export", "fxexport.examples:mlp", "-o", str(golden), "-q"]) == 0
    assert main(["export", "fxexport.examples:mlp", "-o", str(actual), "-q", "--check", str(golden)]) == 0
    assert main(["diff", str(golden), str(actual), "-q"]) == 0
    from safetensors.torch import load_file, save_file

    weights = load_file(str(actual / "weights.safetensors"))
    weights["layers.0.bias"] = weights["layers.0.bias"] + 1
    del weights["layers.2.bias"]
    save_file(weights, str(actual / "weights.safetensors"))
    (actual / "module.py").write_text((actual / "module.py").read_text().replace("nn.GELU()", "nn.ReLU()"))
    (actual / "extra.txt").write_text("x")
    (golden / "gone.txt").write_text("x")
    capsys.readouterr()
    assert main(["diff", str(golden), str(actual)]) == 1  # as `diff -u OLD NEW`: `+` marks what NEW has
    out = capsys.readouterr().out
    assert f"--- {golden / 'module.py'}" in out and f"+++ {actual / 'module.py'}" in out
    assert "-            self.act = nn.GELU()" in out and "+            self.act = nn.ReLU()" in out
    assert f"only in {actual}: extra.txt" in out and f"only in {golden}: gone.txt" in out
    assert "tensor 'layers.0.bias': values differ" in out and "tensor 'layers.2.bias': removed" in out
    rerun = ["export", "fxexport.examples:mlp", "-o", str(actual), "--overwrite", "-q", "--check", str(golden)]
    assert main(rerun) == 1  # the golden's extra file: golden is the old side
    assert capsys.readouterr().out == f"only in {golden}: gone.txt\n"
    assert main(["diff", str(golden), str(tmp_path)]) == 2
    assert "is not an fxexport export folder" in capsys.readouterr().err


STANDALONE_CASES = [
    ("imported_function", "module.py would import configured_scale from tests.models"),
    ("user_leaves", "module.py would import Limiter from tests.models"),
]


@pytest.mark.parametrize("case_name,message", STANDALONE_CASES, ids=[c[0] for c in STANDALONE_CASES])
def test_standalone_refuses_non_torch_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str], case_name: str, message: str) -> None:
    spec = f"tests.cases:CASES_BY_NAME.{case_name}.build"
    assert main(["export", spec, "-o", str(tmp_path / "strict"), "--standalone"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "standalone" in err
    assert not (tmp_path / "strict").exists()
    assert main(["export", spec, "-o", str(tmp_path / "lenient"), "-q"]) == 0
    assert "fxexport: warning: module.py imports" in capsys.readouterr().err


def test_standalone_accepts_torch_only_models(tmp_path: Path) -> None:
    assert main(["export", "fxexport.examples:transformer_block", "-o", str(tmp_path / "pkg"), "--standalone", "-q"]) == 0


def _line(name: str, text: str) -> int:
    """The line of USER_FILES[name] that contains `text`."""
    return next(i for i, line in enumerate(USER_FILES[name].splitlines(), 1) if text in line)


# Each error a user can cause: argv ({t}: the user's folder, {pkg}: an export folder), then the one line printed.
USER_ERRORS = [
    ("import_raises", ["export", "{t}/broken.py:model", "-o", "{t}/out"],
     f"cannot import '{{t}}/broken.py': RuntimeError: boom (at {{t}}/broken.py:{_line('broken.py', 'boom')})"),
    ("import_syntax_error", ["export", "{t}/syntax_error.py:model", "-o", "{t}/out"],
     "cannot import '{t}/syntax_error.py': SyntaxError: invalid syntax (at {t}/syntax_error.py:1)"),
    ("import_exits", ["export", "{t}/exits.py:model", "-o", "{t}/out"],
     f"cannot import '{{t}}/exits.py': SystemExit: usage: exits.py FILE (at {{t}}/exits.py:{_line('exits.py', 'exit')})"),
    ("module_import_raises", ["export", "userpkg.broken:model", "-o", "{t}/out"],
     "cannot import module 'userpkg.broken' from spec 'userpkg.broken:model': ZeroDivisionError: division by zero (at {t}/userpkg/broken.py:1)"),
    ("relative_module", ["export", ".broken:model", "-o", "{t}/out"],
     "cannot import module '.broken' from spec '.broken:model': TypeError: the 'package' argument is required"),
    ("attribute_raises", ["export", "{t}/user_model.py:lazy.model", "-o", "{t}/out"],
     f"reading 'lazy.model' of '{{t}}/user_model.py' failed (spec '{{t}}/user_model.py:lazy.model'): RuntimeError: lazy model failed (at {{t}}/user_model.py:{_line('user_model.py', 'lazy model failed')})"),
    ("trace_fails", ["export", "{t}/user_model.py:branchy", "-o", "{t}/out"],
     f"torch.fx.symbolic_trace failed on '{{t}}/user_model.py:branchy': TraceError: symbolically traced variables cannot be used as inputs to control flow (at {{t}}/user_model.py:{_line('user_model.py', 'x.sum() > 0')}); try --via export"),
    ("spec_is_a_folder", ["export", "{t}/somedir/:model", "-o", "{t}/out"],
     "'{t}/somedir' is a folder, not a Python file; name a file (path/to/file.py:attr), a module (package.module:attr) or a .pt2 file"),
    ("missing_pt2", ["export", "{t}/nothere.pt2", "-o", "{t}/out"], "no such file: '{t}/nothere.pt2'"),
    ("pt2_is_a_folder", ["export", "{t}/somedir.pt2", "-o", "{t}/out"], "no such file: '{t}/somedir.pt2'"),
    ("export_inputs_raise", ["export", "{t}/user_model.py:model", "--via", "export", "--example-inputs", "{t}/user_model.py:raising_inputs", "-o", "{t}/out"],
     f"calling example inputs '{{t}}/user_model.py:raising_inputs' with no arguments failed: ValueError: no inputs today (at {{t}}/user_model.py:{_line('user_model.py', 'no inputs today')})"),
    ("export_inputs_not_inputs", ["export", "{t}/user_model.py:model", "--via", "export", "--example-inputs", "{t}/user_model.py:not_inputs", "-o", "{t}/out"],
     "example inputs '{t}/user_model.py:not_inputs' must be a tuple of args, a tensor, or a dict with 'args' (a tuple) and 'kwargs' (a dict with string keys)"),
    ("verify_inputs_raise", ["verify", "{pkg}", "--against", "{t}/user_model.py:model", "--example-inputs", "{t}/user_model.py:raising_inputs"],
     "calling example inputs '{t}/user_model.py:raising_inputs' with no arguments failed: ValueError: no inputs today"),
    ("verify_inputs_exit", ["verify", "{pkg}", "--against", "{t}/user_model.py:model", "--example-inputs", "{t}/user_model.py:exiting"],
     "calling example inputs '{t}/user_model.py:exiting' with no arguments failed: SystemExit: 3"),
    ("verify_source_fails_on_inputs", ["verify", "{pkg}", "--against", "{t}/user_model.py:model", "--example-inputs", "{t}/user_model.py:wrong_inputs"],
     "running the source on the example inputs failed: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)"),
    ("verify_not_an_export", ["verify", "{t}/somedir", "--against", "{t}/broken.py:model", "--example-inputs", "{t}/broken.py:x"],
     "'{t}/somedir' is not an fxexport export folder (no fxexport.json)"),
    ("empty_output", ["export", "{t}/broken.py:model", "-o", ""], "argument -o/--output: the path is empty (see: fxexport export --help)"),
    ("output_without_a_name", ["export", "{t}/broken.py:model", "-o", "{t}/somedir/.."],
     "output path '{t}/somedir/..' does not end in a package name; name the folder to write, e.g. exports/my_model"),
    ("class_name_shadows_torch", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--name", "torch"],
     "class name 'torch' is a name module.py uses already; choose another, e.g. 'TorchModel'"),
    ("class_name_shadows_the_loader", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--name", "load_tensors"],
     "class name 'load_tensors' is a name module.py uses already"),
    ("class_name_shadows_a_builtin", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--name", "super"],
     "class name 'super' is a name module.py uses already"),
    ("shard_size_zero", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--max-shard-size", "0"],
     "max shard size '0' is under the 1MB minimum (a tensor is never split, so smaller shards only multiply files); use e.g. '500MB' or '2GB'"),
    ("shard_size_huge_number", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--max-shard-size", "9" * 5000], "bad size '999"),
    ("check_is_not_an_export", ["export", "{t}/broken.py:model", "-o", "{t}/out", "--check", "{t}/somedir"],
     "'{t}/somedir' is not an fxexport export folder (no fxexport.json)"),
    ("garbage_pt2", ["export", "{t}/garbage.pt2", "-o", "{t}/out"],
     "cannot load '{t}/garbage.pt2' as a torch.export program: BadZipFile: File is not a zip file"),
    ("torch_export_fails", ["export", "{t}/user_model.py:model", "--via", "export", "--example-inputs", "{t}/user_model.py:wrong_inputs", "-o", "{t}/out"],
     "torch.export.export failed on '{t}/user_model.py:model': RuntimeError: a and b must have same reduction dim, but got [2, 5] X [3, 4]."),
    ("bad_template", ["export", "{t}/user_model.py:model", "-o", "{t}/out", "--templates", "{t}/templates_bad"],
     "template {t}/templates_bad/module.py.jinja:1 failed: TemplateSyntaxError: Expected an expression, got 'end of statement block'"),
    ("classes_from_not_a_model", ["export", "{t}/features.py:extractor", "-o", "{t}/out", "--classes-from", "{t}/user_model.py:not_inputs"],
     "'{t}/user_model.py:not_inputs' is a dict, not an nn.Module or a callable returning one"),
    ("classes_from_raises", ["export", "{t}/features.py:extractor", "-o", "{t}/out", "--classes-from", "{t}/user_model.py:raising_inputs"],
     "calling '{t}/user_model.py:raising_inputs' with no arguments failed: ValueError: no inputs today"),
    ("classes_from_missing", ["export", "{t}/features.py:extractor", "-o", "{t}/out", "--classes-from", "{t}/features.py:Nett"],
     "'{t}/features.py' has no attribute 'Nett'"),
    ("usage", ["export", "{t}/broken.py:model"], "the following arguments are required: -o/--output (see: fxexport export --help)"),
    ("no_command", [], "the following arguments are required: command (see: fxexport --help)"),
    ("unknown_option", ["show", "{pkg}", "--depht", "1"], "unrecognized arguments: --depht 1 (see: fxexport --help)"),
]  # fmt: skip


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> Iterator[Path]:
    torch_logs_to(sys.stderr, monkeypatch)  # torch's handlers keep the stderr of when torch was imported
    monkeypatch.syspath_prepend(str(tmp_path))  # also undoes what importing a file spec adds to sys.path
    monkeypatch.chdir(tmp_path)  # '.broken' must not find anything of the repository's
    yield write_user_files(tmp_path)
    forget_user_modules(tmp_path)


@pytest.fixture(scope="module")
def export_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("exports") / "linear_pkg"
    fxexport.export(torch.fx.symbolic_trace(torch.nn.Linear(3, 4)), folder, bytecode=False)
    return folder


@pytest.mark.parametrize("name,argv,message", USER_ERRORS, ids=[case[0] for case in USER_ERRORS])
def test_user_errors_are_one_line_exit_2(user_folder: Path, export_folder: Path, capfd: pytest.CaptureFixture[str], name, argv, message) -> None:
    fill = {"t": str(user_folder), "pkg": str(export_folder)}
    code, out, err = run_cli([arg.format(**fill) for arg in argv], capfd)
    assert (code, out) == (2, ""), err
    assert err.startswith("fxexport: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert message.format(**fill) in err, err
    assert not (user_folder / "out").exists()


def _raise(error: BaseException):
    def handler(*args, **kwargs):
        raise error

    return handler


# What is not the user's doing: a bug of ours is one line and exit 1, Ctrl-C is one line and 130.
UNEXPECTED = [
    ("internal_error", RuntimeError("kaboom\nmore torch detail"), 1,
     "fxexport: internal error: RuntimeError: kaboom; rerun with --debug for the traceback, and please report it\n"),
    ("interrupted", KeyboardInterrupt(), 130, "fxexport: interrupted\n"),
]  # fmt: skip


@pytest.mark.parametrize("name,error,code,line", UNEXPECTED, ids=[case[0] for case in UNEXPECTED])
def test_unexpected_exceptions_are_one_line(export_folder: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name, error, code, line) -> None:
    monkeypatch.setattr("fxexport.cli.show", _raise(error))
    assert run_cli(["show", str(export_folder)], capfd) == (code, "", line)
    debug_code, _, debug_err = run_cli(["show", str(export_folder), "--debug"], capfd)
    assert debug_code == code and debug_err.startswith("Traceback") and debug_err.endswith(line)


def test_torch_logs_are_held_until_the_users_code_succeeds(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    torch_logs_to(sys.stderr, monkeypatch)
    log = logging.getLogger("torch.export")
    with user_code("loading"):
        log.warning("worth knowing")
        assert capfd.readouterr().err == ""
    assert "worth knowing" in capfd.readouterr().err
    with pytest.raises(fxexport.FxExportError, match=r"^loading: RuntimeError: archive damaged \(at .*test_cli.py:\d+\)$"):
        with user_code("loading"):
            log.error("a traceback torch prints before it raises")
            raise RuntimeError("archive damaged")
    assert capfd.readouterr().err == ""


# Run as real processes, all at once: stdout is a pipe whose reader is gone, as in `fxexport show DIR | head`.
CLOSED_PIPE = [
    ["show", "{pkg}"],
    ["diff", "{pkg}", "{pkg}"],
    ["verify", "{pkg}"],
    ["export", "fxexport.examples:mlp", "-o", "{t}/out"],
]


def test_every_command_exits_quietly_when_its_output_pipe_closes(tmp_path: Path, export_folder: Path) -> None:
    fill = {"t": str(tmp_path), "pkg": str(export_folder)}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    running = []
    for argv in CLOSED_PIPE:
        read, write = os.pipe()
        os.close(read)  # the reader is gone before anything is written
        command = [sys.executable, "-m", "fxexport", *(arg.format(**fill) for arg in argv)]
        running.append(subprocess.Popen(command, stdout=write, stderr=subprocess.PIPE, text=True, env=env))
        os.close(write)
    for argv, process in zip(CLOSED_PIPE, running):
        _, stderr = process.communicate(timeout=300)
        assert (process.returncode, stderr) == (1, ""), argv  # exit 1 as Python's own EPIPE handling does; no message
    assert (tmp_path / "out" / "module.py").is_file()  # the export was done; only its last line had nowhere to go


@pytest.mark.parametrize("flags, classes", [([], ["Block", "FxModule"]), (["--flat"], ["FxModule"])])
def test_flat_flag_writes_one_class(tmp_path: Path, flags: list[str], classes: list[str]) -> None:
    assert main(["export", "fxexport.examples:resnet", "-o", str(tmp_path / "pkg"), "-q", *flags]) == 0
    text = (tmp_path / "pkg" / "module.py").read_text()
    assert re.findall(r"^class (\w+)\(nn\.Module\)", text, re.MULTILINE) == classes


@pytest.mark.parametrize("flags, classes", [([], ["Gate", "FxModule"]), (["--classes-from", "features.py:Net"], ["SwishGate", "FxModule"])])
def test_classes_from_names_the_blocks_of_a_graph_that_recorded_none(user_folder: Path, flags: list[str], classes: list[str]) -> None:
    """A feature extractor's holders are plain nn.Modules: named after where they are held, or after the classes
    of the model `--classes-from` names, each then saying where its class is defined."""
    assert main(["export", "features.py:extractor", "-o", str(user_folder / "pkg"), "-q", *flags]) == 0
    text = (user_folder / "pkg" / "module.py").read_text()
    assert re.findall(r"^class (\w+)\(nn\.Module\)", text, re.MULTILINE) == classes
    assert ("class SwishGate(nn.Module):  # features.py:5 SwishGate\n" in text) == bool(flags)
    assert "self.gates = nn.ModuleList([" in text


def test_a_module_is_traced_recording_the_lines_its_nodes_ran(tmp_path: Path) -> None:
    """An nn.Module spec is traced as symbolic_trace does, each node recording its statement (fxexport.trace):
    the export quotes the source's lines and takes its names, as for torch.export; --no-annotate drops the quotes."""
    assert main(["export", "fxexport.examples:resnet", "-o", str(tmp_path / "pkg"), "-q"]) == 0
    text = (tmp_path / "pkg" / "module.py").read_text()
    assert "Producer: torch.fx.symbolic_trace;" in text
    assert re.search(r"^        # [\w/]*examples\.py:\d+ in forward: ", text, re.MULTILINE)
    assert main(["export", "fxexport.examples:resnet", "-o", str(tmp_path / "bare"), "-q", "--no-annotate"]) == 0
    assert " in forward: " not in (tmp_path / "bare" / "module.py").read_text()
