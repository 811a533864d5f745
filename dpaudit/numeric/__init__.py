"""Exact numbers, rigorous interval evaluation and directed rounding.

This is layer 1 of dpaudit.  Privacy parameters live inside the toolkit as *exact* values:
plain numbers as :class:`~dpaudit.exact_numbers.ExactNumber` (integers, rationals and closed
forms such as ``log(3)/2``, without sympy), symbolic parameters as sympy expressions; a float
never appears inside an exact value.  Values are evaluated with mpmath interval arithmetic, the
working precision being raised until the enclosing interval is narrow enough, and become a
Python ``float`` only at the edge, rounded in an explicit direction: *up* for every epsilon or
delta the accountant reports, *down* for every lower bound the auditor reports.

How a float enters:
    A Python ``float`` given to :func:`exact` is converted to the rational number it *is*
    (its binary value, e.g. ``0.1`` becomes ``3602879701896397/36028797018963968``), which
    involves no rounding at all.  A decimal *string* such as ``"0.1"`` is read as the decimal
    it spells (``1/10``).  So ``10 * exact(0.1)`` is slightly above 1, and rounding it up gives
    a float ``>= 1.0``, never ``0.999...``.

The layer's modules, by role:

- :mod:`~dpaudit.numeric.values`: exact values (:func:`exact`, :func:`exact_value`,
  :func:`from_float`);
- :mod:`~dpaudit.numeric.functions`: ``exp``, ``log``, ``erfc``, ... on exact values of either
  kind (the theorems' formulas are written with them once);
- :mod:`~dpaudit.numeric.enclosures`: rigorous interval evaluation (:func:`interval`,
  :func:`endpoints`, :func:`decide_relation`);
- :mod:`~dpaudit.numeric.extremes`: :func:`exact_min` and :func:`exact_max`;
- :mod:`~dpaudit.numeric.rounding`: directed rounding (:func:`float_up`, :func:`float_down`);
- :mod:`~dpaudit.numeric.bracketing`: :func:`bracket_decreasing`;
- :mod:`~dpaudit.numeric.minimize`: :func:`minimize_bounded` (Brent's method in floats, for
  choosing a parameter whose exact value is then certified);
- :mod:`~dpaudit.numeric.precision`: mpmath's working precision under
  :data:`PRECISION_LOCK`.
"""

from __future__ import annotations

from dpaudit.numeric.bracketing import bracket_decreasing
from dpaudit.numeric.enclosures import (
    MAX_PRECISION,
    START_PRECISION,
    decide_relation,
    endpoints,
    interval,
    iv_erfc,
)
from dpaudit.numeric.extremes import exact_max, exact_min
from dpaudit.numeric.minimize import minimize_bounded
from dpaudit.numeric.precision import PRECISION_LOCK, iv_precision, mp_digits, mp_precision
from dpaudit.numeric.rounding import (
    Direction,
    float_down,
    float_up,
    mpf_to_float,
    sys_float_max,
    to_float,
)
from dpaudit.numeric.values import (
    EvaluationError,
    exact,
    exact_value,
    from_float,
    is_exact_number,
)

__all__ = [
    "MAX_PRECISION",
    "PRECISION_LOCK",
    "START_PRECISION",
    "Direction",
    "EvaluationError",
    "bracket_decreasing",
    "decide_relation",
    "endpoints",
    "exact",
    "exact_max",
    "exact_min",
    "exact_value",
    "float_down",
    "float_up",
    "from_float",
    "interval",
    "is_exact_number",
    "iv_erfc",
    "iv_precision",
    "minimize_bounded",
    "mp_digits",
    "mp_precision",
    "mpf_to_float",
    "sys_float_max",
    "to_float",
]
