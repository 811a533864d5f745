"""The closest known names to a misspelled one, for error messages.

One place for "did you mean": an unknown event constructor or function in an expression, an
unknown theorem card (``dpaudit explain``), learner, report target or claim key all name the
closest known names the same way (:func:`difflib.get_close_matches`, case-insensitive).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "closest_hint"]

#: How similar a known name must be to be suggested (difflib's ratio, in [0, 1]).
CUTOFF = 0.5


def closest(wanted: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The known names closest to ``wanted``, best first (at most ``n``; none when nothing
    is similar enough).

    Args:
        wanted: the name given.
        names: the known names.
        n: the most names returned.

    Returns:
        Names of ``names``, as spelled there.
    """
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(str(name).lower(), str(name))
    keys = difflib.get_close_matches(str(wanted).lower(), list(by_key), n=n, cutoff=CUTOFF)
    return [by_key[k] for k in keys]


def closest_hint(wanted: str, names: Iterable[str], n: int = 3) -> str:
    """``" (closest: A, B)"`` for an error message, or ``""`` when no name is close.

    Args:
        wanted: the name given.
        names: the known names.
        n: the most names given.

    Returns:
        The hint, with a leading space.
    """
    found = closest(wanted, names, n)
    return f" (closest: {', '.join(found)})" if found else ""
