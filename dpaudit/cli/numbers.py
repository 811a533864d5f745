"""Numbers given as command-line options (``--epsilon``, ``--delta``, ``--confidence``, ...):
one rule for every command.

An option's number is read from its text and must be *finite*: ``inf``, ``nan`` and a value
beyond a double's range (``1e999``, which a float reads as infinity) are refused, whatever the
command (a claim of infinite epsilon claims nothing, so no command takes one), and so is a
value outside the option's range.  The message names the option, its range and the text given:

    --epsilon must be a finite number in [0, inf), got '1e999'

:func:`float_option` is for commands that compute in floating point (``audit``, ``learn``);
:func:`exact_option` reads the text exactly with the restricted parser (``"1/3"``,
``"log(2)"``, decimals as written) for the accountant (``account``, ``explain``, ``compare``).
"""

from __future__ import annotations

import math
import sys
from typing import Any

__all__ = ["LARGEST", "exact_option", "float_option", "range_text"]

#: The largest finite double: an option's value must not exceed it in magnitude.
LARGEST = sys.float_info.max


def range_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """Interval notation with ASCII ``inf``: ``[0, inf)``, ``(0, 1)``."""
    lo = "-inf" if math.isinf(low) else f"{low:g}"
    hi = "inf" if math.isinf(high) else f"{high:g}"
    return f"{'(' if low_open or math.isinf(low) else '['}{lo}, {hi}" + (
        ")" if high_open or math.isinf(high) else "]"
    )


def _inside(value: float, low: float, high: float, low_open: bool, high_open: bool) -> bool:
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    return math.isfinite(value) and above and below


def _refuse(flag: str, text: str, low: float, high: float, lo_open: bool, hi_open: bool) -> None:
    shown = text if len(text) <= 60 else text[:60] + "..."
    raise ValueError(
        f"{flag} must be a finite number in {range_text(low, high, lo_open, hi_open)}, "
        f"got {shown!r}"
    )


def float_option(
    flag: str,
    text: str | None,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = True,
) -> float | None:
    """The float an option's text gives, checked (None when the option was not given).

    Args:
        flag: the option, e.g. ``"--epsilon"``, for the message.
        text: the text given (None: not given).
        low: the lower end of the admissible range.
        high: the upper end.
        low_open: whether ``low`` is excluded.
        high_open: whether ``high`` is excluded.

    Returns:
        The value, or None.

    Raises:
        ValueError: naming the option, its range and the text, for text that is not a
            number, or is infinite, NaN, beyond a double's range or outside the range.
    """
    if text is None:
        return None
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if not _inside(value, low, high, low_open, high_open):
        _refuse(flag, str(text), low, high, low_open, high_open)
    return value


def exact_option(
    flag: str,
    text: str | None,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = True,
) -> Any:
    """The exact number an option's text gives (:func:`dpaudit.parse.parse_number`: decimals
    as written, ``"1/3"``, ``"log(2)"``), checked by the rule of :func:`float_option`.

    Args:
        flag: the option, for the message.
        text: the text given (None: not given).
        low: the lower end of the admissible range.
        high: the upper end.
        low_open: whether ``low`` is excluded.
        high_open: whether ``high`` is excluded.

    Returns:
        The exact value, or None.

    Raises:
        ValueError: as :func:`float_option` (a malformed text: the parser's message too).
    """
    if text is None:
        return None
    from dpaudit.parse import ExpressionError, parse_number

    if str(text).strip().lower().lstrip("+-") in ("inf", "infinity", "nan", "oo"):
        _refuse(flag, str(text), low, high, low_open, high_open)
    try:
        value = parse_number(str(text))
    except ExpressionError as err:
        shown = text if len(text) <= 60 else text[:60] + "..."
        why = str(err).removeprefix(f"not a number: {shown!r} ").strip("()")
        raise ValueError(
            f"{flag} must be a finite number in {range_text(low, high, low_open, high_open)}, "
            f"got {shown!r} ({why})"
        ) from None
    try:
        finite = abs(float(value)) <= LARGEST
    except (OverflowError, TypeError, ValueError):
        finite = False  # beyond a double's range, or not a real number
    # the range is decided on the exact value (0.99999999999999999999 is below 1, though its
    # nearest double is 1.0)
    if not finite or not _exactly_inside(value, low, high, low_open, high_open):
        _refuse(flag, str(text), low, high, low_open, high_open)
    return value


def _exactly_inside(value: Any, low: float, high: float, low_open: bool, high_open: bool) -> bool:
    from fractions import Fraction

    checks = []
    if not math.isinf(low):
        lo = Fraction(low)
        checks.append(value > lo if low_open else value >= lo)
    if not math.isinf(high):
        hi = Fraction(high)
        checks.append(value < hi if high_open else value <= hi)
    return all(bool(c) for c in checks)
