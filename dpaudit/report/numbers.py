"""Numbers meant for people: a fixed number of significant digits, rounded the safe way.

A report's numbers come out of floating-point work whose last bits depend on the machine
(the BLAS build, the CPU's vector unit, the order of a sum), so ``1e-05`` can come out as
``9.999999999999999e-06`` on one machine and not on another.  Reports are meant to be
reproducible from their seed on any machine, so every float a report stores or prints is
first rounded to :data:`SIGNIFICANT_DIGITS` significant decimal digits, far above any
float noise and far below what a reader uses, in the direction its meaning allows:

* a value whose key says it is an **upper** bound (``epsilon_upper``, ``p_denominator_upper``,
  ...) is rounded up (towards +inf);
* a value whose key says it is a **lower** bound (``epsilon_lower``, ``delta_lower``, ...)
  is rounded down (towards -inf);
* anything else (estimates, parameters, the delta of a claim) is rounded to nearest.

The decimal chosen is stored as its nearest float, which is still on the safe side of the
input float (rounding to nearest is monotone), so an upper bound in memory is still an upper
bound; and rounding is idempotent, so a stored report recomputes to itself.
Integers, strings, booleans and None pass through unchanged.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from typing import Any

__all__ = ["SIGNIFICANT_DIGITS", "for_people", "round_significant"]

#: Significant digits kept in reports (a float carries ~15.9; BLAS noise lives in the last 1-3).
SIGNIFICANT_DIGITS = 10

_MODES = {"up": ROUND_CEILING, "down": ROUND_FLOOR, "nearest": ROUND_HALF_EVEN}


def round_significant(
    x: float, direction: str = "nearest", digits: int = SIGNIFICANT_DIGITS
) -> float:
    """``x`` rounded to ``digits`` significant decimal digits in ``direction``.

    Args:
        x: a float (non-finite values are returned unchanged).
        direction: ``"up"`` (the result is >= x), ``"down"`` (<= x) or ``"nearest"``.
        digits: significant digits, >= 1.

    Returns:
        The float nearest to the rounded decimal: >= x for "up", <= x for "down".

    Raises:
        ValueError: for an unknown direction or digits < 1.
    """
    if direction not in _MODES:
        raise ValueError(f"direction must be one of {sorted(_MODES)}, got {direction!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    if not math.isfinite(x) or x == 0:
        return x
    # Round the shortest decimal that reads back as x (repr), so that rounding is idempotent
    # (a stored number rounds to itself).  Still on the safe side: for "up", D >= repr(x)
    # and rounding to the nearest float is monotone, so float(D) >= float(repr(x)) = x.
    dec = Context(prec=digits, rounding=_MODES[direction]).plus(Decimal(repr(x)))
    return float(dec)


def _direction(key: str) -> str:
    words = key.lower().split("_")
    if "upper" in words:
        return "up"
    if "lower" in words:
        return "down"
    return "nearest"


def for_people(data: Any, direction: str = "nearest") -> Any:
    """A copy of ``data`` (dicts, lists, tuples) with every float rounded for people.

    The direction of each float comes from the innermost dict key naming it an upper or a
    lower bound (see the module docstring); lists inherit their key's direction.
    """
    if isinstance(data, bool) or data is None or isinstance(data, (int, str)):
        return data
    if isinstance(data, float):
        return round_significant(data, direction)
    if isinstance(data, dict):
        return {
            k: for_people(v, _direction(str(k)) if _direction(str(k)) != "nearest" else direction)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [for_people(v, direction) for v in data]
    if isinstance(data, tuple):
        return tuple(for_people(v, direction) for v in data)
    return data
