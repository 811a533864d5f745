"""The ``dpaudit`` command.

Each subcommand lives in its own module ``dpaudit/cli/<name>.py`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` (called with the parsed
arguments, returning the exit status).  Exit statuses (:mod:`dpaudit.cli.exit_codes`): 0
success, 1 a privacy finding (violation, refuted claim), 2 bad input, 3 an internal error or
engine failure, 4 a verification left undecided; each error is one clear line on stderr
(and a JSON object on stdout under ``--json``); the full trace with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from dpaudit import __version__
from dpaudit.cli.exit_codes import BUG_HINT, EPILOG, ExitCode, dumps, error_object

#: Subcommand modules, in the order ``dpaudit --help`` lists them, with a one-line summary.
#: A command's module is imported only when that command runs (start-up stays fast).
COMMANDS = {
    "demo": "a short tour on built-in examples",
    "account": "account an event expression (guarantee and derivation)",
    "explain": "walk through the derivation of an event expression step by step",
    "compare": "compare composition methods for k-fold composition (table and plot)",
    "calibrate": "the best noise, steps or rate whose certified guarantee meets a target",
    "verify": "verify privacy claims over their parameter domains",
    "audit": "audit a mechanism's code for a certified epsilon lower bound",
    "report": "write audit reports (Markdown/HTML) for mechanisms and algorithms",
    "learn": "list the private learners, or fit one on a CSV file",
}

EXIT_OK = ExitCode.OK
EXIT_FINDING = ExitCode.FINDING
EXIT_INPUT = ExitCode.BAD_INPUT
EXIT_INTERNAL = ExitCode.INTERNAL
EXIT_UNDECIDED = ExitCode.UNDECIDED

#: Exceptions that mean bad input (exit code 2): a ValueError names the parameter, its
#: admissible range and the value received (ExpressionError, MechanismError and the auditor's
#: limits are ValueErrors); KeyError an unknown name; OSError a file or address that cannot
#: be used; MemoryError an input too large for this machine.
BAD_INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, KeyError, OSError, MemoryError)


class UsageError(Exception):
    """A command line that argparse refuses (exit code 2, JSON under ``--json``)."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors raise :class:`UsageError` instead of exiting,
    so that :func:`main` reports them like every other error (one line; JSON under --json)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _module(name: str) -> ModuleType | None:
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
    parser = _Parser(
        prog="dpaudit",
        description="Formal privacy accounting and Monte Carlo auditing of differentially "
        "private algorithms.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=summary, add_help=False)
            continue
        module = _module(name)
        if module is not None:
            module.register(sub)
    for p in sub.choices.values():
        if p.epilog is None:
            p.epilog = EPILOG
    return parser


def _wants(args_list: list[str], flag: str) -> bool:
    """Whether ``flag`` (or an abbreviation argparse would accept) is on the command line."""
    return any(
        len(a.split("=")[0]) >= 4 and flag.startswith(a.split("=")[0])
        for a in args_list
        if a.startswith("--")
    )


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        text = " ".join(err.args[0].split())  # not the repr KeyError's str() gives
    if len(text) > 1000:
        text = text[:1000] + "... (message cut at 1000 characters)"
    return text or type(err).__name__


def _option_of(path: str, args_list: list[str]) -> str | None:
    """The option whose value is ``path`` (or a directory containing it), e.g. ``--plan``;
    None when no option names it."""
    from pathlib import Path

    def within(value: str) -> bool:
        if not value:
            return False
        if value == path:
            return True
        try:
            return Path(path).resolve().is_relative_to(Path(value).resolve())
        except (OSError, ValueError):
            return False

    for i, arg in enumerate(args_list):
        flag, eq, value = arg.partition("=")
        if arg.startswith("--") and eq and within(value):
            return flag
        if i > 0 and args_list[i - 1].startswith("--") and within(arg):
            return args_list[i - 1]
    return None


def _os_error_line(err: OSError, args_list: list[str]) -> str:
    """An OSError in one line naming the option that gave the file (``--plan 'x.json':
    No such file or directory``) instead of Python's ``[Errno 2] ...``."""
    if err.filename is None:
        return _one_line(err)
    name = str(err.filename)
    option = _option_of(name, args_list)
    reason = err.strerror or _one_line(err)
    return f"{option + ' ' if option else ''}{name!r}: {reason}"


def _fail(code: ExitCode, message: str, command: str | None, as_json: bool) -> int:
    try:
        print(f"dpaudit{' ' + command if command else ''}: error: {message}", file=sys.stderr)
        if as_json:
            print(dumps(error_object(code, message, command), indent=2))
    except OSError:  # a closed stdout or stderr: the exit code still tells
        pass
    return int(code)


def _stdout_closed() -> int:
    """The reader of stdout went away (``dpaudit ... | head``): end quietly."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return int(ExitCode.OK)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (:class:`ExitCode`).

    No exception escapes for any input: usage errors and bad input give 2, a finding 1, an
    engine failure or a bug in dpaudit 3, each as one line on stderr (and a JSON object on
    stdout under ``--json``); ``--debug`` re-raises instead, with the traceback.
    """
    args_list = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    as_json = _wants(args_list, "--json")
    debug = "--debug" in args_list
    command = next((a for a in args_list if not a.startswith("-")), None)
    if command not in COMMANDS:
        command = None
    try:
        # only the command that runs is imported; for --help alone none is
        parser = build_parser(only=command if command is not None else "")
        args = parser.parse_args(args_list)
        command, debug = args.command, args.debug
        as_json = bool(getattr(args, "json", as_json))
        if not hasattr(args, "func"):  # a placeholder: that command is not installed
            raise UsageError(f"the {args.command} command is not available in this installation")
        return int(args.func(args) or EXIT_OK)
    except SystemExit as exc:  # --help and --version exit 0 through argparse
        if isinstance(exc.code, int) or exc.code is None:
            return int(exc.code or 0)
        return _fail(ExitCode.BAD_INPUT, str(exc.code), command, as_json)
    except UsageError as err:
        return _fail(ExitCode.BAD_INPUT, _one_line(err), command, as_json)
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _stdout_closed()
    except Exception as err:  # the last line of defence: no traceback leaks
        if debug:
            raise
        errors = sys.modules.get("dpaudit.audit.errors")  # not imported for its own sake
        if errors is not None and isinstance(err, errors.EngineError):
            return _fail(ExitCode.INTERNAL, f"engine failure: {_one_line(err)}", command, as_json)
        plugins = sys.modules.get("dpaudit.plugins")
        if plugins is not None and isinstance(err, plugins.PluginError):
            # an installed plugin (claims, report targets, demos) failed to load
            return _fail(ExitCode.INTERNAL, f"plugin failure: {_one_line(err)}", command, as_json)
        if isinstance(err, OSError):
            return _fail(ExitCode.BAD_INPUT, _os_error_line(err, args_list), command, as_json)
        if isinstance(err, BAD_INPUT_ERRORS):
            return _fail(ExitCode.BAD_INPUT, _one_line(err), command, as_json)
        return _fail(
            ExitCode.INTERNAL,
            f"internal error: {type(err).__name__}: {_one_line(err)} ({BUG_HINT})",
            command,
            as_json,
        )


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
