"""Datasets and record domains given on the command line, read the same way by ``dpaudit
audit`` and ``dpaudit report MODULE:OBJECT``: ``--d0``/``--d1`` as JSON, ``--sizes MIN,MAX``,
and the record search's ``--no-edge-values`` and ``--on-error`` (defined here once for both).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dpaudit.audit.errors import ON_ERROR  # no NumPy: report --list stays light

__all__ = [
    "MAX_DATASET_TEXT",
    "add_search_options",
    "json_dataset",
    "record_sizes",
    "search_options",
]

#: Longest ``--d0``/``--d1`` text accepted (characters).
MAX_DATASET_TEXT = 10_000_000


def json_dataset(text: str, name: str) -> Any:
    """A dataset given as JSON text (never evaluated).

    Args:
        text: the option's text, e.g. ``"[1, 0, 1]"``.
        name: the option, for the messages (``"--d0"``).

    Returns:
        The parsed JSON value.

    Raises:
        ValueError: naming the option, for text that is too long, not JSON or nested too
            deeply.
    """
    if len(text) > MAX_DATASET_TEXT:
        raise ValueError(
            f"{name} must be JSON of at most {MAX_DATASET_TEXT:,} characters, got {len(text):,}"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{name} must be JSON (e.g. '[1, 0, 1]'), got {text[:80]!r}: {err}"
        ) from err
    except RecursionError:
        raise ValueError(f"{name} must be JSON nested less deeply, got {text[:80]!r}") from None


def record_sizes(text: str) -> tuple[int, int]:
    """``--sizes MIN,MAX``: the dataset sizes a record search covers.

    Raises:
        ValueError: for text that is not two non-negative integers.
    """
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--sizes must be two integers MIN,MAX such as 1,8, got {text!r}")
    return int(parts[0]), int(parts[1])


def add_search_options(group: argparse._ActionsContainer) -> None:
    """Add ``--no-edge-values`` and ``--on-error`` (read back by :func:`search_options`).

    Args:
        group: the parser or argument group of ``dpaudit audit`` or ``dpaudit report``.
    """
    group.add_argument(
        "--no-edge-values",
        action="store_true",
        help="with --records: try only records of the declared domain; by default the search "
        "also tries NaN, +inf, -inf, -0.0, 5e-324, the largest double and values just and "
        "well outside each range (turn them off for code whose inputs are validated upstream)",
    )
    group.add_argument(
        "--on-error",
        choices=ON_ERROR,
        default=None,
        help="when OBJECT raises: 'skip' (with --records, the default: the candidate pair is "
        "refused and listed, the search goes on), 'raise' (abort the audit naming the datasets: "
        "exit 2 from audit, the error in a report's audit section; the default for a given "
        "pair) or 'output' (the exception's type is that sample's "
        "outcome, e.g. the event 'the mechanism raised ValueError'; a failing OBJECT.batch "
        "falls back to single calls; docs/auditing.md)",
    )


def search_options(args: argparse.Namespace) -> dict[str, Any]:
    """The audit's keyword arguments that ``--no-edge-values`` and ``--on-error`` give, only
    those the command line states (``{"edge_values": False, "on_error": "output"}``).

    Args:
        args: the parsed arguments, with ``records``, ``no_edge_values`` and ``on_error``.

    Returns:
        The keyword arguments for :func:`dpaudit.audit.audit_records` (with ``--records``)
        or :func:`dpaudit.audit.audit` (a given pair).

    Raises:
        ValueError: for ``--no-edge-values`` or ``--on-error skip`` without ``--records``.
    """
    if args.records is None and args.no_edge_values:
        raise ValueError(
            "--no-edge-values must be combined with --records (it steers the record search), "
            "got it without"
        )
    if args.records is None and args.on_error == "skip":
        raise ValueError(
            "--on-error must be 'raise' or 'output' without --records ('skip' leaves out a "
            "candidate pair of the record search), got 'skip'"
        )
    options: dict[str, Any] = {}
    if args.no_edge_values:
        options["edge_values"] = False
    if args.on_error is not None:
        options["on_error"] = args.on_error
    return options
