"""The command line: thin; errors are printed once at this boundary."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Callable, Sequence

from .api import __version__, export
from .capture import capture
from .errors import FxExportError


def _export(args: argparse.Namespace) -> int:
    gm = capture(args.spec)
    result = export(gm, args.output, module_name=args.name, overwrite=args.overwrite)
    for warning in result.warnings:
        print(f"fxexport: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(f"exported {args.spec} to {result.folder} ({len(result.files)} files, {result.parameter_count:,} parameters)")
    return 0


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(prog="fxexport", description="Export torch.fx GraphModules as standalone Python packages.")
    main_parser.add_argument("--version", action="version", version=f"fxexport {__version__}")
    commands = main_parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show a traceback on errors")
    common.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors and warnings")

    run = commands.add_parser("export", parents=[common], help="export a GraphModule or nn.Module to a package folder")
    run.add_argument("spec", help="package.module:attr or path/to/file.py:attr (GraphModule, nn.Module, or a callable returning one)")
    run.add_argument("-o", "--output", required=True, type=Path, help="the package folder to write")
    run.add_argument("--name", default="FxModule", help="the generated class name (default: FxModule)")
    run.add_argument("--overwrite", action="store_true", help="replace an earlier fxexport export at the output folder")
    run.set_defaults(handler=_export)
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except FxExportError as error:
        if args.debug:
            traceback.print_exc()
        print(f"fxexport: error: {error}", file=sys.stderr)
        return 2
