"""Bounded scalar minimisation in floats, without scipy (start-up, issue 19 part 4).

Only ever used to *choose* a parameter (an order alpha, ...) whose exact value is then
certified; a poor choice gives a looser bound, never a wrong one.  Importing ``scipy.optimize``
for the one call took about 1.2 s of ``dpaudit account``'s start-up, so this is the same
algorithm in pure Python.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["minimize_bounded"]

_SQRT_EPS = math.sqrt(2.2e-16)
_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


def minimize_bounded(
    func: Callable[[float], float],
    lower: float,
    upper: float,
    *,
    xatol: float = 1e-5,
    maxiter: int = 500,
) -> float:
    """A local minimiser of ``func`` on ``[lower, upper]`` by Brent's method: golden-section
    steps with parabolic interpolation (Brent 1973, *Algorithms for Minimization without
    Derivatives*, Chapter 5, procedure ``localmin``).

    A line-for-line port of ``scipy.optimize.minimize_scalar(method="bounded")`` (SciPy 1.17,
    ``_minimize_scalar_bounded``, BSD licence): the same steps and stopping rule in IEEE double
    arithmetic, so it returns the same ``x`` (tests/numeric/test_minimize.py compares them).

    Args:
        func: the objective, float to float.
        lower: the left end of the interval (finite).
        upper: the right end (finite, >= lower).
        xatol: absolute tolerance on the minimiser (plus sqrt(machine eps) times |x|).
        maxiter: the most evaluations of ``func``.

    Returns:
        The abscissa of the smallest value found (scipy's ``res.x``).

    Raises:
        ValueError: if a bound is not finite or ``lower > upper``, or ``maxiter < 1``.
    """
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise ValueError(f"bounds must be finite, got lower={lower!r}, upper={upper!r}")
    if lower > upper:
        raise ValueError(f"lower must be <= upper, got lower={lower!r} > upper={upper!r}")
    if maxiter < 1:
        raise ValueError(f"maxiter must be >= 1, got {maxiter!r}")
    a, b = float(lower), float(upper)
    fulc = a + _GOLDEN * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = func(x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # try a parabolic fit
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * _sign_or_one(xm - xf)
            else:
                golden = True
        if golden:
            e = (a - xf) if xf >= xm else (b - xf)
            rat = _GOLDEN * e
        x = xf + _sign_or_one(rat) * max(abs(rat), tol1)
        fu = func(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:  # noqa: SIM109 (NaN: == not in)
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            break
    return xf


def _sign_or_one(v: float) -> float:
    """numpy's ``sign(v) + (v == 0)``: 1 for v >= 0 (and for NaN's sign test), -1 below."""
    if v > 0:
        return 1.0
    if v < 0:
        return -1.0
    if v == 0:
        return 1.0
    return math.nan  # np.sign(nan) + False is nan
