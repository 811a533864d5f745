"""Directed rounding: an exact value becomes a Python ``float`` only here, rounded *up* for
every epsilon or delta the accountant reports and *down* for every lower bound the auditor
reports."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

import mpmath

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.numeric.enclosures import _precision_ladder, endpoints, interval
from dpaudit.numeric.values import EvaluationError

Direction = Literal["up", "down"]


def mpf_to_float(x: Any, direction: Direction) -> float:
    """Convert an mpmath real to the nearest float in the given direction.

    Args:
        x: an ``mpmath.mpf`` (or anything mpmath accepts exactly).
        direction: ``"up"`` gives the smallest float ``>= x``; ``"down"`` the largest float
            ``<= x``.

    Returns:
        The float; ``inf`` / ``-inf`` when ``x`` is beyond the float range in that direction.
    """
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    if not isinstance(x, mpmath.mpf):
        if isinstance(x, (int, Fraction, ExactNumber)) or is_sympy_object(x):
            lo, hi = endpoints(interval(x))
            x = hi if direction == "up" else lo
        else:
            x = mpmath.mpf(x)
    if mpmath.isnan(x):
        raise ValueError("cannot round NaN")
    f = float(x)
    if math.isinf(f):
        if direction == "up" and f < 0:
            return -sys_float_max()
        if direction == "down" and f > 0:
            return sys_float_max()
        return f
    if direction == "up" and mpmath.mpf(f) < x:
        f = math.nextafter(f, math.inf)
    elif direction == "down" and mpmath.mpf(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def sys_float_max() -> float:
    """The largest finite float."""
    return 1.7976931348623157e308


def to_float(expr: Any, direction: Direction, subs: Mapping[Any, Any] | None = None) -> float:
    """Evaluate ``expr`` rigorously and round it to a float in ``direction``.

    Args:
        expr: an exact expression (anything :func:`exact` accepts); ``sympy.oo`` gives inf.
        direction: ``"up"`` (upper bounds) or ``"down"`` (lower bounds).
        subs: values for free symbols.

    Returns:
        A float that is ``>=`` (``"up"``) or ``<=`` (``"down"``) the true value.
    """
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    if is_sympy_object(expr) and expr in (sympy.oo, -sympy.oo):
        return math.inf if expr is sympy.oo else -math.inf
    result = math.nan
    for prec in _precision_ladder():
        lo, hi = endpoints(interval(expr, subs, prec=prec))
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            continue
        result = mpf_to_float(hi if direction == "up" else lo, direction)
        # tight when both ends of the enclosure round to the same float in this direction
        if mpf_to_float(lo if direction == "up" else hi, direction) == result:
            return result
    if math.isnan(result):
        raise EvaluationError(f"cannot enclose {expr} in a finite interval")
    return result


def float_up(expr: Any, subs: Mapping[Any, Any] | None = None) -> float:
    """:func:`to_float` rounded up: the float to report for an upper bound."""
    return to_float(expr, "up", subs)


def float_down(expr: Any, subs: Mapping[Any, Any] | None = None) -> float:
    """:func:`to_float` rounded down: the float to report for a lower bound."""
    return to_float(expr, "down", subs)
