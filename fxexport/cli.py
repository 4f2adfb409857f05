"""The command line: thin; errors are printed once at this boundary."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from .api import __version__, check_class_name, export
from .capture import capture, load_object, model_of, to_graph_module
from .diff import diff_exports, export_manifest
from .errors import FxExportError
from .render import template_folders
from .shards import parse_size
from .show import show
from .verify import example_inputs, verify_against, verify_files
from .write import check_target


def _check_export_options(args: argparse.Namespace) -> None:
    """The options' own errors, reported before the user's code is imported and nothing is written."""
    check_target(args.output, args.overwrite)
    template_folders(args.templates)
    check_class_name(args.name)
    if args.max_shard_size is not None:
        parse_size(args.max_shard_size)
    if args.check is not None:
        export_manifest(args.check)


def _export(args: argparse.Namespace) -> int:
    _check_export_options(args)
    example = None
    if args.example_inputs is not None:
        example = example_inputs(load_object(args.example_inputs), repr(args.example_inputs))
    classes_from = None if args.classes_from is None else model_of(args.classes_from)
    gm = capture(args.spec, args.via, example)
    result = export(
        gm,
        args.output,
        module_name=args.name,
        overwrite=args.overwrite,
        standalone=args.standalone,
        input_checks=args.input_checks,
        annotate=args.annotate,
        shapes=args.shapes,
        bytecode=args.bytecode,
        weights=args.weights,
        max_shard_size=args.max_shard_size,
        progress=None if args.quiet else ProgressBar(sys.stderr),
        templates=args.templates,
        structure="flat" if args.flat else "structured",
        classes_from=classes_from,
    )
    for warning in result.warnings:
        print(f"fxexport: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(f"exported {args.spec} to {result.folder} ({len(result.files)} files, {result.parameter_count:,} parameters)")
    if args.check is not None:
        return _print_diff(args.check, result.folder, args.quiet)
    return 0


class ProgressBar:
    """A one-line progress bar on a terminal, for exports that write more than a few hundred MB."""

    THRESHOLD = 256 << 20

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        """Redraw the bar when the whole percentage changes; silent below THRESHOLD or off a terminal."""
        if total < self.THRESHOLD or not self.stream.isatty():
            return
        percent = done * 100 // max(total, 1)
        if percent != self.shown:
            self.shown = percent
            bar = "#" * (percent // 4)
            end = "\n" if done >= total else ""
            self.stream.write(f"\rwriting weights [{bar:<25}] {percent:3d}% of {total / 1e6:,.0f} MB{end}")
            self.stream.flush()


def _print_diff(old: Path, new: Path, quiet: bool) -> int:
    result = diff_exports(old, new)
    if not result.equal or not quiet:
        print(result.report())
    return 0 if result.equal else 1


def _verify(args: argparse.Namespace) -> int:
    export_manifest(args.folder)  # a wrong folder is reported before any user code is imported
    if args.against is None:
        if args.example_inputs is not None:
            raise FxExportError("--example-inputs needs --against SPEC (the source to compare with)")
        result = verify_files(args.folder)
    else:
        if args.example_inputs is None:
            raise FxExportError("verify --against needs --example-inputs SPEC2 (module:attr of a tuple of args, or a dict with 'args'/'kwargs')")
        source = to_graph_module(load_object(args.against), repr(args.against))
        inputs, kwargs = example_inputs(load_object(args.example_inputs), repr(args.example_inputs))
        result = verify_against(args.folder, source, inputs, kwargs)
    if not result.ok or not args.quiet:
        print(result.report())
    return 0 if result.ok else 1


def _diff(args: argparse.Namespace) -> int:
    return _print_diff(args.old, args.new, args.quiet)


def _show(args: argparse.Namespace) -> int:
    if args.depth is not None and args.depth < 0:
        raise FxExportError(f"--depth must be 0 or more, not {args.depth}")
    result = show(args.folder)
    if not result.ok or not args.quiet:
        print(result.report(args.depth))
    return 0 if result.ok else 1


def parser() -> argparse.ArgumentParser:
    """The `fxexport` argument parser: one subcommand per command, each with its handler."""
    main_parser = _Parser(prog="fxexport", description="Export torch.fx GraphModules as standalone Python packages.")
    main_parser.add_argument("--version", action="version", version=f"fxexport {__version__}")
    commands = main_parser.add_subparsers(dest="command", required=True)
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show a traceback on errors")
    common.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors and warnings")

    run = commands.add_parser("export", parents=[common], help="export a GraphModule or nn.Module to a package folder")
    run.add_argument("spec", help="package.module:attr, path/to/file.py:attr (a GraphModule, nn.Module, ExportedProgram, or a callable returning one), or a .pt2 file")
    run.add_argument("--via", choices=("trace", "export"), default="trace", help="how to capture an nn.Module: torch.fx.symbolic_trace (default) or torch.export.export")
    run.add_argument("--example-inputs", metavar="SPEC2", help="module:attr of example inputs for --via export: a tuple of args, or a dict with 'args'/'kwargs'")
    run.add_argument("--no-annotate", dest="annotate", action="store_false", help="leave out the source-location comments in forward")
    run.add_argument("--shapes", action="store_true", help="add a shape/dtype comment to each statement whose node recorded one")
    run.add_argument("--classes-from", metavar="MODEL",
                     help="module:attr of the model the graph was captured from (or a callable returning it): its classes name the modules the graph records no class for, as in a feature extractor")  # fmt: skip
    run.add_argument("--flat", action="store_true", help="write the whole graph as one forward instead of a class per module")
    run.add_argument("--no-input-checks", dest="input_checks", action="store_false", help="drop the input checks of torch.export graphs (kept by default)")
    run.add_argument("-o", "--output", required=True, type=_path, help="the package folder to write")
    run.add_argument("--name", default="FxModule", help="the generated class name (default: FxModule)")
    run.add_argument("--overwrite", action="store_true", help="replace an earlier fxexport export at the output folder")
    run.add_argument("--standalone", action="store_true", help="fail instead of importing anything but torch and the standard library")
    run.add_argument("--weights", choices=("safetensors", "none"), default="safetensors", help="write the weights (default), or code only")
    run.add_argument("--no-bytecode", dest="bytecode", action="store_false", help="do not write __pycache__ (compiled, hash-checked bytecode that makes the first import fast)")
    run.add_argument("--max-shard-size", metavar="SIZE", help="split weights into safetensors shards of at most SIZE (e.g. 2GB; at least 1MB) with an index")
    run.add_argument("--check", type=_path, metavar="GOLDEN", help="after exporting, show the changes from this golden export folder to the new one, as `fxexport diff GOLDEN DIR` (exit 1 if different)")
    run.add_argument("--templates", type=_path, metavar="DIR", action="append", default=[],
                     help="a folder of Jinja templates searched before fxexport's own (repeatable; the first given wins)")  # fmt: skip
    run.set_defaults(handler=_export)

    diff = commands.add_parser("diff", parents=[common], help="show the changes from export folder OLD to NEW (exit 0 same, 1 different)",
                               description="Show the changes from export folder OLD to NEW, as `diff -u OLD NEW` does: "
                                           "'-' marks what OLD had, '+' what NEW has.")  # fmt: skip
    diff.add_argument("old", type=_path, metavar="OLD", help="the earlier or expected export folder (e.g. a golden one)")
    diff.add_argument("new", type=_path, metavar="NEW", help="the export folder to compare with it")
    diff.set_defaults(handler=_diff)

    check = commands.add_parser("verify", parents=[common], help="check an export against its manifest (and its source)")
    check.add_argument("folder", type=_path, help="an export folder")
    check.add_argument("--against", metavar="SPEC", help="also import the export in a fresh process and compare outputs with this source")
    check.add_argument("--example-inputs", metavar="SPEC2", help="module:attr of the inputs: a tuple of args, or a dict with 'args'/'kwargs'")
    check.set_defaults(handler=_verify)

    summary = commands.add_parser("show", parents=[common], help="summarise an export folder (module tree, tensors, warnings)")
    summary.add_argument("folder", type=_path, help="an export folder (read only: nothing is imported or unpickled)")
    summary.add_argument("--depth", type=int, metavar="N", help="show the module tree N levels deep (0: the root only)")
    summary.set_defaults(handler=_show)
    return main_parser


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line too, naming the help to read."""

    def error(self, message: str) -> NoReturn:
        """Print `fxexport: error: ...` and exit 2, as every user error does."""
        self.exit(2, f"fxexport: error: {message} (see: {self.prog} --help)\n")


def _path(text: str) -> Path:
    if not text:
        raise argparse.ArgumentTypeError("the path is empty")
    return Path(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (errors are printed once, here).

    0: done (or the same, or OK); 1: differences or problems found, or an internal error;
    2: an error the user can fix; 130: interrupted. Tracebacks only with --debug.
    """
    args = parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except FxExportError as error:
        return _fail(args, f"fxexport: error: {error}", 2)
    except BrokenPipeError:
        _discard_stdout()
        return 1
    except KeyboardInterrupt:
        return _fail(args, "fxexport: interrupted", 130)
    except Exception as error:  # noqa: BLE001 - the boundary: a bug in fxexport is still one line without --debug
        first = (str(error).strip().splitlines() or [""])[0]
        return _fail(args, f"fxexport: internal error: {type(error).__name__}: {first}; rerun with --debug for the traceback, and please report it", 1)


def _fail(args: argparse.Namespace, line: str, code: int) -> int:
    if args.debug:
        traceback.print_exc()
    print(line, file=sys.stderr)
    return code


def _discard_stdout() -> None:
    """The reader of our output went away (`fxexport show DIR | head`): stop without a word.

    What is still buffered goes to /dev/null, so Python's flush at exit cannot fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # stdout is not a real file (captured in-process): nothing is flushed at exit
