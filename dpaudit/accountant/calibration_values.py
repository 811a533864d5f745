"""The values a calibration's search tries: the admissible range (:class:`Range`) and the
exact decimals it snaps estimates to (the shortest decimal near an estimate whose nearest float
lies on the private side of it), for :mod:`~dpaudit.accountant.calibration_search`.

Privacy:
    Nothing here is a bound.  :func:`_float_safe` keeps the float a user copies on the
    private side of the exact decimal that is certified, so the certificate covers it by
    monotonicity.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

__all__ = ["SIGNIFICANT_DIGITS", "Range"]

#: A continuous value is a decimal of this many significant digits.
SIGNIFICANT_DIGITS = 6


@dataclasses.dataclass(frozen=True)
class Range:
    """The admissible values: ``low``/``high`` (None: unbounded; 0 is never reached), whether
    each end is admissible itself, and whether values are integers."""

    low: Fraction | None
    high: Fraction | None
    low_closed: bool
    high_closed: bool
    integer: bool

    def text(self, name: str) -> str:
        """The range as ``name in [a, b)``."""
        lo = "0" if self.low is None else _text(self.low)
        hi = "oo" if self.high is None else _text(self.high)
        left = "[" if self.low is not None and self.low_closed else "("
        right = "]" if self.high is not None and self.high_closed else ")"
        kind = "an integer " if self.integer else ""
        return f"{kind}{name} in {left}{lo}, {hi}{right}"


def _text(v: Fraction) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    return repr(float(v))


def _decimal(x: float, digits: int, up: bool) -> Fraction:
    """``x`` (> 0) as a decimal of ``digits`` significant digits, rounded up or down."""
    exponent = math.floor(math.log10(x)) - digits + 1
    scale = Fraction(10) ** exponent
    units = Fraction(x) / scale
    n = math.ceil(units) if up else math.floor(units)
    return max(n, 1) * scale


def _shortest(x: float, window: float, up: bool) -> Fraction:
    """The decimal with the fewest significant digits within a factor ``e^window`` of ``x``
    (the nearer of its two roundings at that length); ``x`` rounded towards ``up`` to
    :data:`SIGNIFICANT_DIGITS` digits when no shorter one is that close.  Round values are
    what a user writes down."""
    lo, hi = x * math.exp(-window) * (1 - 1e-12), x * math.exp(window) * (1 + 1e-12)
    for digits in range(1, SIGNIFICANT_DIGITS):
        inside = [
            v for v in (_decimal(x, digits, up), _decimal(x, digits, not up)) if lo <= v <= hi
        ]
        if inside:
            return min(inside, key=lambda v: abs(float(v) - x))
    return _decimal(x, SIGNIFICANT_DIGITS, up)


def _float_safe(v: Fraction, private_up: bool) -> Fraction:
    """Move the decimal ``v`` by one unit of its last digit towards the private side until its
    nearest float also lies on the private side of it (at most a few steps)."""
    unit = Fraction(10) ** (math.floor(math.log10(v)) - SIGNIFICANT_DIGITS + 1)
    for _ in range(8):
        f = Fraction(float(v))
        if (f >= v) if private_up else (f <= v):
            return v
        v = v + unit if private_up else v - unit
    return v
