"""Exit codes of the ``dpaudit`` command and the JSON form of its errors.

Every subcommand ends with one of five exit codes (:class:`ExitCode`); under ``--json`` an
error is printed on stdout as one JSON object (:func:`error_object`) as well as one line on
stderr.  Numbers that JSON cannot hold (infinity, NaN) are written as the strings ``"inf"``,
``"-inf"`` and ``"nan"`` (:func:`json_safe`), so every JSON output is valid RFC 8259 JSON.
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any

__all__ = [
    "BUG_HINT",
    "EPILOG",
    "ExitCode",
    "dumps",
    "error_object",
    "json_safe",
]

#: What an internal error (exit code 3) asks the user to do.
BUG_HINT = (
    "this is a bug in dpaudit: please file an issue with the command line and the "
    "traceback that `dpaudit --debug ...` prints"
)


class ExitCode(enum.IntEnum):
    """The exit codes of every ``dpaudit`` subcommand.

    Attributes:
        OK: success; nothing found (a lower bound cannot prove a claim: see the output).
        FINDING: a privacy finding: a claim violated or refuted, an audit violation, stale
            reports under ``report --check``.
        BAD_INPUT: bad input: a usage error, a malformed expression or number, a value out of
            range or over a documented limit, an unimportable module, a mechanism that raised
            or returned outputs the auditor cannot handle.
        INTERNAL: an internal error (a bug in dpaudit: please report it) or a failure of the
            execution engine (a worker process died, a Dask scheduler failed).
        UNDECIDED: ``verify`` neither proved nor refuted a claim or an inequality within its
            budgets (the verdict "unknown", with what was left).  Not a pass: a CI job that
            must know a claim holds fails on it; one that accepts an open question tests for
            4 explicitly.
    """

    OK = 0
    FINDING = 1
    BAD_INPUT = 2
    INTERNAL = 3
    UNDECIDED = 4


#: The ``type`` of a JSON error, by exit code.
ERROR_TYPES = {
    ExitCode.BAD_INPUT: "bad_input",
    ExitCode.INTERNAL: "internal_error",
}

#: The text ``dpaudit --help`` (and every subcommand's help) ends with.
EPILOG = (
    "exit codes: 0 ok; 1 claim violated or refuted, or an audit violation; 2 bad input "
    "(usage, expression, number out of range or over a limit, mechanism failure); 3 internal "
    "error or engine failure; 4 verify could neither prove nor refute (undecided: not a "
    "pass). Under --json, errors are a JSON object "
    '{"error": {"type", "message", "exit_code", "command"}} on stdout; infinities and NaN are '
    'written as the strings "inf", "-inf", "nan". --debug (before the command) shows '
    "tracebacks."
)


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``"inf"``, ``"-inf"`` or ``"nan"``.

    Args:
        value: a JSON-ready structure (dicts, lists, tuples, numbers, strings, None).

    Returns:
        The same structure (tuples become lists), valid for ``json.dumps(allow_nan=False)``.
    """
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """RFC 8259 JSON text of ``value`` (non-finite floats as strings; see :func:`json_safe`).

    Args:
        value: a JSON-ready structure.
        **kwargs: passed to ``json.dumps`` (``indent``, ``default``, ...).

    Returns:
        The JSON text.
    """
    return json.dumps(json_safe(value), allow_nan=False, **kwargs)


def error_object(code: ExitCode, message: str, command: str | None) -> dict[str, Any]:
    """The JSON object printed on stdout for an error under ``--json``.

    Args:
        code: the exit code (2 or 3).
        message: the one-line message (the same as on stderr).
        command: the subcommand, or None when the command line did not name one.

    Returns:
        ``{"error": {"type": ..., "message": ..., "exit_code": ..., "command": ...}}``.
    """
    return {
        "error": {
            "type": ERROR_TYPES.get(code, "error"),
            "message": message,
            "exit_code": int(code),
            "command": command,
        }
    }
