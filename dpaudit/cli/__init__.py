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

#: Subcommand modules, in the order ``dpaudit --help`` lists them, with a one-line summary.
#: A command's module is imported only when that command runs (start-up stays fast).
COMMANDS = {
    "demo": "a short tour on built-in examples",
    "account": "account an event expression (guarantee and derivation)",
    "explain": "walk through the derivation of an event expression step by step",
    "compare": "compare composition methods for k-fold composition (table and plot)",
    "verify": "verify privacy claims over their parameter domains",
    "audit": "audit a mechanism's code for a certified epsilon lower bound",
    "report": "write audit reports (Markdown/HTML) for mechanisms and algorithms",
}

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_INPUT = 2


def _module(name: str) -> object | None:
    module_name = f"dpaudit.cli.{name.replace('-', '_')}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name == module_name:  # that command is not part of this build
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser.

    Args:
        only: register this command fully and the others as summary-only placeholders (so
            ``--help`` lists them all without importing them; ``""``: placeholders only);
            None registers all fully.
    """
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Formal privacy accounting and Monte Carlo auditing of differentially "
                    "private algorithms.",
    )
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=summary, add_help=False)
            continue
        module = _module(name)
        if module is not None:
            module.register(sub)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    # only the command that runs is imported; for --help alone none is
    parser = build_parser(only=command if command in COMMANDS else "")
    args = parser.parse_args(args_list)
    if not hasattr(args, "func"):  # a placeholder: that command is not installed
        parser.error(f"the {args.command} command is not available in this installation")
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
