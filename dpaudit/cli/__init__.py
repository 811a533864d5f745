"""The ``dpaudit`` command.

Each subcommand lives in its own module ``dpaudit/cli/<name>.py`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` (called with the parsed
arguments, returning the exit status).  Exit statuses: 0 success, 1 a privacy finding
(violation, refuted claim), 2 bad input (one clear line on stderr; the full trace with
``--debug``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dpaudit import __version__

#: Subcommand modules, in the order ``dpaudit --help`` lists them.
COMMANDS = ["demo", "account", "explain", "compare", "verify", "audit", "report"]

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Formal privacy accounting and Monte Carlo auditing of differentially "
                    "private algorithms.",
    )
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module_name = f"dpaudit.cli.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:  # that command is not part of this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or EXIT_OK)
    except (ValueError, KeyError, FileNotFoundError) as err:
        if args.debug:
            raise
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        print(f"dpaudit {args.command}: error: {message}", file=sys.stderr)
        return EXIT_INPUT


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
