"""The command line: thin; errors are printed once at this boundary."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from .api import __version__, export
from .capture import capture, load_object, to_graph_module
from .diff import diff_exports
from .errors import FxExportError
from .show import show
from .verify import example_inputs, verify_against, verify_files


def _export(args: argparse.Namespace) -> int:
    example = None
    if args.example_inputs is not None:
        example = example_inputs(load_object(args.example_inputs), repr(args.example_inputs))
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
        weights=args.weights,
        max_shard_size=args.max_shard_size,
        progress=None if args.quiet else ProgressBar(sys.stderr),
        templates=args.templates,
    )
    for warning in result.warnings:
        print(f"fxexport: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(f"exported {args.spec} to {result.folder} ({len(result.files)} files, {result.parameter_count:,} parameters)")
    if args.check is not None:
        return _print_diff(result.folder, args.check, args.quiet)
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


def _print_diff(actual: Path, golden: Path, quiet: bool) -> int:
    result = diff_exports(actual, golden)
    if not result.equal or not quiet:
        print(result.report())
    return 0 if result.equal else 1


def _verify(args: argparse.Namespace) -> int:
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
    return _print_diff(args.actual, args.golden, args.quiet)


def _show(args: argparse.Namespace) -> int:
    if args.depth is not None and args.depth < 0:
        raise FxExportError(f"--depth must be 0 or more, not {args.depth}")
    result = show(args.folder)
    if not result.ok or not args.quiet:
        print(result.report(args.depth))
    return 0 if result.ok else 1


def parser() -> argparse.ArgumentParser:
    """The `fxexport` argument parser: one subcommand per command, each with its handler."""
    main_parser = argparse.ArgumentParser(prog="fxexport", description="Export torch.fx GraphModules as standalone Python packages.")
    main_parser.add_argument("--version", action="version", version=f"fxexport {__version__}")
    commands = main_parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show a traceback on errors")
    common.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors and warnings")

    run = commands.add_parser("export", parents=[common], help="export a GraphModule or nn.Module to a package folder")
    run.add_argument("spec", help="package.module:attr, path/to/file.py:attr (a GraphModule, nn.Module, ExportedProgram, or a callable returning one), or a .pt2 file")
    run.add_argument("--via", choices=("trace", "export"), default="trace", help="how to capture an nn.Module: torch.fx.symbolic_trace (default) or torch.export.export")
    run.add_argument("--example-inputs", metavar="SPEC2", help="module:attr of example inputs for --via export: a tuple of args, or a dict with 'args'/'kwargs'")
    run.add_argument("--no-annotate", dest="annotate", action="store_false", help="leave out the source-location comments in forward")
    run.add_argument("--shapes", action="store_true", help="add a shape/dtype comment to each statement whose node recorded one")
    run.add_argument("--no-input-checks", dest="input_checks", action="store_false", help="drop the input checks of torch.export graphs (kept by default)")
    run.add_argument("-o", "--output", required=True, type=Path, help="the package folder to write")
    run.add_argument("--name", default="FxModule", help="the generated class name (default: FxModule)")
    run.add_argument("--overwrite", action="store_true", help="replace an earlier fxexport export at the output folder")
    run.add_argument("--standalone", action="store_true", help="fail instead of importing anything but torch and the standard library")
    run.add_argument("--weights", choices=("safetensors", "none"), default="safetensors", help="write the weights (default), or code only")
    run.add_argument("--max-shard-size", metavar="SIZE", help="split weights into safetensors shards of at most SIZE (e.g. 2GB) with an index")
    run.add_argument("--check", type=Path, metavar="GOLDEN", help="after exporting, diff against this golden export folder (exit 1 if different)")
    run.add_argument("--templates", type=Path, metavar="DIR", action="append", default=[],
                     help="a folder of Jinja templates searched before fxexport's own (repeatable; the first given wins)")  # fmt: skip
    run.set_defaults(handler=_export)

    diff = commands.add_parser("diff", parents=[common], help="compare two export folders (exit 0 same, 1 different)")
    diff.add_argument("actual", type=Path, help="an export folder")
    diff.add_argument("golden", type=Path, help="the expected export folder")
    diff.set_defaults(handler=_diff)

    check = commands.add_parser("verify", parents=[common], help="check an export against its manifest (and its source)")
    check.add_argument("folder", type=Path, help="an export folder")
    check.add_argument("--against", metavar="SPEC", help="also import the export in a fresh process and compare outputs with this source")
    check.add_argument("--example-inputs", metavar="SPEC2", help="module:attr of the inputs: a tuple of args, or a dict with 'args'/'kwargs'")
    check.set_defaults(handler=_verify)

    summary = commands.add_parser("show", parents=[common], help="summarise an export folder (module tree, tensors, warnings)")
    summary.add_argument("folder", type=Path, help="an export folder (read only: nothing is imported or unpickled)")
    summary.add_argument("--depth", type=int, metavar="N", help="show the module tree N levels deep (0: the root only)")
    summary.set_defaults(handler=_show)
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (errors are printed once, here)."""
    args = parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except FxExportError as error:
        if args.debug:
            traceback.print_exc()
        print(f"fxexport: error: {error}", file=sys.stderr)
        return 2
