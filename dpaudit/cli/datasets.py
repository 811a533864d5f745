"""Datasets and record domains given on the command line, read the same way by ``dpaudit
audit`` and ``dpaudit report MODULE:OBJECT``: ``--d0``/``--d1`` as JSON, ``--sizes MIN,MAX``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DATASET_TEXT", "json_dataset", "record_sizes"]

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
