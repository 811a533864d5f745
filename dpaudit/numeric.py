"""Exact numbers, rigorous interval evaluation and directed rounding.

This is layer 1 of dpaudit.  Privacy parameters live inside the toolkit as *exact* sympy
expressions (integers, rationals and closed forms such as ``log(3)/2``); a float never
appears inside an exact value.  Values are evaluated with mpmath interval arithmetic, the
working precision being raised until the enclosing interval is narrow enough, and become a
Python ``float`` only at the edge, rounded in an explicit direction: *up* for every epsilon or
delta the accountant reports, *down* for every lower bound the auditor reports.

How a float enters:
    A Python ``float`` given to :func:`exact` is converted to the rational number it *is*
    (its binary value, e.g. ``0.1`` becomes ``3602879701896397/36028797018963968``), which
    involves no rounding at all.  A decimal *string* such as ``"0.1"`` is read as the decimal
    it spells (``1/10``).  So ``10 * exact(0.1)`` is slightly above 1, and rounding it up gives
    a float ``>= 1.0``, never ``0.999...``.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from numbers import Integral, Rational
from typing import Any, Literal

import mpmath
import sympy

from dpaudit.expressions import ExpressionError, as_expr, parse_expression

Direction = Literal["up", "down"]

#: Starting and maximal working precision (bits) of the interval evaluator.
START_PRECISION = 80
MAX_PRECISION = 4000

__all__ = [
    "MAX_PRECISION",
    "START_PRECISION",
    "EvaluationError",
    "bracket_decreasing",
    "decide_relation",
    "endpoints",
    "exact",
    "exact_max",
    "exact_min",
    "float_down",
    "float_up",
    "from_float",
    "interval",
    "is_exact_number",
    "iv_precision",
    "mpf_to_float",
    "to_float",
]


#: Extended-real mode of the interval evaluator (see :func:`interval`'s ``extended``).
_EXTENDED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dpaudit_iv_extended", default=False
)


class EvaluationError(ArithmeticError):
    """Raised when an expression cannot be enclosed rigorously (unsupported or undefined)."""


def _describe(value: Any) -> str:
    return repr(value)


def exact(value: Any, name: str = "value") -> sympy.Expr:
    """Convert ``value`` to an exact sympy expression.

    Args:
        value: an ``int``, ``fractions.Fraction``, numeric string read by the restricted
            parser of :mod:`dpaudit.expressions` (``"0.1"``,
            ``"1/3"``, ``"1e-6"``), finite ``float`` (converted to its exact binary value),
            or a sympy expression (sympy ``Float`` atoms inside it are replaced by their exact
            binary values).
        name: the parameter's name, used in error messages.

    Returns:
        An exact sympy expression with no floating-point atoms.

    Raises:
        ValueError: for NaN, infinities, booleans, complex numbers or unparsable strings.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got the boolean {value!r}")
    if isinstance(value, sympy.Basic):
        expr = as_expr(value)
        if expr.has(sympy.nan, sympy.zoo) or expr in (sympy.oo, -sympy.oo):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        floats = expr.atoms(sympy.Float)
        if floats:
            expr = expr.xreplace({f: sympy.Rational(f) for f in floats})
        if expr.is_real is False:
            raise ValueError(f"{name} must be a real number, got {value!r}")
        return expr
    if isinstance(value, Integral):
        return sympy.Integer(int(value))
    if isinstance(value, (Fraction, Rational)):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, float) or type(value).__name__.startswith("float"):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        num, den = f.as_integer_ratio()
        return sympy.Rational(num, den)
    if isinstance(value, str):
        # the restricted parser (never Fraction(text): "1e999999999" would hang it)
        try:
            expr = parse_expression(value, symbols=False, name=name)
        except ExpressionError as err:
            raise ExpressionError(
                f"{name} must be a number such as '0.1', '1/3' or 'log(2)', got "
                f"{value[:60]!r} ({err})"
            ) from None
        return exact(expr, name)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return exact(value.item(), name)
    raise ValueError(f"{name} must be a real number, got {_describe(value)}")


def is_exact_number(expr: sympy.Expr) -> bool:
    """True when ``expr`` is a closed expression (no free symbols) with no float atoms."""
    return not expr.free_symbols and not expr.atoms(sympy.Float)


# --------------------------------------------------------------------------------------
# Rigorous interval evaluation
# --------------------------------------------------------------------------------------


def endpoints(enclosure: Any) -> tuple[Any, Any]:
    """The exact endpoints of an ``mpmath.iv.mpf`` as ``mpmath.mpf`` numbers (no rounding)."""
    lo, hi = enclosure._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _iv_const(value: sympy.Expr) -> Any:
    """Enclose an exact rational constant in an interval at the current iv precision."""
    p, q = int(value.p), int(value.q)
    return mpmath.iv.mpf(p) / mpmath.iv.mpf(q)


def _monotone(fn_name: str, increasing: bool, span: tuple[int, int]) -> Callable[[Any], Any]:
    """Interval extension of a monotone special function that mpmath.iv lacks.

    The function is evaluated with ordinary mpmath at 30 extra bits at both endpoints; the
    results are widened outwards by a relative ``2**-(prec+10)`` (far above mpmath's error at
    that precision) so the enclosure stays rigorous.  The padding is relative even for tiny
    values: mpmath's erf/erfc are accurate relative to the value in the tails (asymptotic
    series; checked against the Abramowitz-Stegun 7.1.13 bounds and higher precision in
    tests/numeric/test_numeric_layer.py); an absolute pad made ``erfc(70) ~ 1e-2130`` the
    interval [-1e-97, 1e-97], and the Gaussian mechanism at sigma 1e-4 uncertifiable.  Only an
    exact zero (no relative information) gets an absolute pad.  Where mpmath itself overflows
    (erfc of a 10^800 argument), that end takes the function's bound over its whole range
    (``span``): wide, still valid.
    """
    mp_fn = getattr(mpmath.mp, fn_name)

    def at(value: Any, fallback: int) -> Any:
        try:
            return mp_fn(value)
        except OverflowError:
            return mpmath.mpf(fallback)

    def extension(x: Any) -> Any:
        prec = mpmath.iv.prec
        a, b = endpoints(x)
        with mpmath.workprec(prec + 30):
            if increasing:
                lo, hi = at(a, span[0]), at(b, span[1])
            else:
                lo, hi = at(b, span[0]), at(a, span[1])
            pad_lo = abs(lo) * mpmath.mpf(2) ** (-(prec + 10)) or mpmath.mpf(2) ** (-(prec * 4))
            pad_hi = abs(hi) * mpmath.mpf(2) ** (-(prec + 10)) or mpmath.mpf(2) ** (-(prec * 4))
            return mpmath.iv.mpf([lo - pad_lo, hi + pad_hi])

    return extension


_iv_erf = _monotone("erf", increasing=True, span=(-1, 1))
_iv_erfc = _monotone("erfc", increasing=False, span=(0, 2))


def _iv_pow(base: Any, exponent: sympy.Expr, env: Mapping[sympy.Symbol, Any]) -> Any:
    if exponent.is_Integer:
        n = int(exponent)
        if n >= 0:
            return base**n
        return mpmath.iv.mpf(1) / base ** (-n)
    if exponent == sympy.Rational(1, 2):
        return mpmath.iv.sqrt(base)
    if exponent == sympy.Rational(-1, 2):
        return mpmath.iv.mpf(1) / mpmath.iv.sqrt(base)
    e = _iv_eval(exponent, env)
    lo = endpoints(base)[0]
    if lo < 0 or (lo == 0 and not _EXTENDED.get()):
        raise EvaluationError("power with non-integer exponent of a possibly non-positive base")
    return mpmath.iv.exp(e * mpmath.iv.log(base))


def _iv_min(values: list[Any]) -> Any:
    ends = [endpoints(v) for v in values]
    return mpmath.iv.mpf([min(e[0] for e in ends), min(e[1] for e in ends)])


def _iv_max(values: list[Any]) -> Any:
    ends = [endpoints(v) for v in values]
    return mpmath.iv.mpf([max(e[0] for e in ends), max(e[1] for e in ends)])


def _iv_eval(expr: sympy.Expr, env: Mapping[sympy.Symbol, Any]) -> Any:
    iv = mpmath.iv
    if expr.is_Symbol:
        if expr not in env:
            raise EvaluationError(f"no value given for the symbol {expr}")
        return env[expr]
    if expr.is_Rational:
        return _iv_const(expr)
    if expr is sympy.pi:
        return iv.pi
    if expr is sympy.E:
        return iv.e
    if isinstance(expr, sympy.Float):
        raise EvaluationError(f"float atom {expr} inside an exact expression")
    if expr.is_Add:
        total = iv.mpf(0)
        for arg in expr.args:
            total = total + _iv_eval(arg, env)
        return total
    if expr.is_Mul:
        total = iv.mpf(1)
        for arg in expr.args:
            total = total * _iv_eval(arg, env)
        return total
    if expr.is_Pow:
        base, exponent = expr.args
        if base is sympy.E:
            return iv.exp(_iv_eval(exponent, env))
        return _iv_pow(_iv_eval(base, env), exponent, env)
    if isinstance(expr, sympy.exp):
        return iv.exp(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.log):
        if len(expr.args) != 1:
            raise EvaluationError("log with a base is not supported; use log(x)/log(b)")
        arg = _iv_eval(expr.args[0], env)
        lo = endpoints(arg)[0]
        if lo < 0 or (lo == 0 and not _EXTENDED.get()):
            raise EvaluationError(f"log of a possibly non-positive value in {expr}")
        return iv.log(arg)  # log of an interval starting at 0 starts at -oo (extended mode)
    if isinstance(expr, sympy.erf):
        return _iv_erf(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.erfc):
        return _iv_erfc(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.Abs):
        x = _iv_eval(expr.args[0], env)
        lo, hi = endpoints(x)
        if lo >= 0:
            return x
        if hi <= 0:
            return -x
        return iv.mpf([0, max(-lo, hi)])
    if isinstance(expr, sympy.Min):
        return _iv_min([_iv_eval(a, env) for a in expr.args])
    if isinstance(expr, sympy.Max):
        return _iv_max([_iv_eval(a, env) for a in expr.args])
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        lo, hi = endpoints(_iv_eval(expr.args[0], env))
        fn = mpmath.floor if isinstance(expr, sympy.floor) else mpmath.ceil
        with mpmath.workprec(max(iv.prec, lo.man.bit_length() + 64 if lo else 64)):
            return iv.mpf([fn(lo), fn(hi)])
    if isinstance(expr, sympy.Piecewise):
        return _iv_piecewise(expr, env)
    if isinstance(expr, sympy.Lambda):
        raise EvaluationError("cannot evaluate a Lambda without arguments")
    if expr in (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        raise EvaluationError(f"expression is not finite: {expr}")
    raise EvaluationError(f"unsupported function in rigorous evaluation: {type(expr).__name__}")


def _iv_piecewise(expr: sympy.Piecewise, env: Mapping[sympy.Symbol, Any]) -> Any:
    """Enclose a Piecewise: the hull of every branch whose condition may hold."""
    pieces = []
    for value, cond in expr.args:
        state = _iv_condition(cond, env)
        if state is False:
            continue
        pieces.append(_iv_eval(value, env))
        if state is True:
            break
    if not pieces:
        raise EvaluationError(f"no branch of {expr} applies")
    ends = [endpoints(p) for p in pieces]
    return mpmath.iv.mpf([min(e[0] for e in ends), max(e[1] for e in ends)])


def _iv_condition(cond: Any, env: Mapping[sympy.Symbol, Any]) -> bool | None:
    """Decide a relational condition on intervals: True, False, or None (undecided)."""
    if cond is sympy.true or cond is True:
        return True
    if cond is sympy.false or cond is False:
        return False
    if isinstance(cond, sympy.And):
        states = [_iv_condition(c, env) for c in cond.args]
        if any(s is False for s in states):
            return False
        return True if all(s is True for s in states) else None
    if isinstance(cond, sympy.Or):
        states = [_iv_condition(c, env) for c in cond.args]
        if any(s is True for s in states):
            return True
        return False if all(s is False for s in states) else None
    if isinstance(cond, sympy.core.relational.Relational):
        lo, hi = endpoints(_iv_eval(cond.lhs - cond.rhs, env))
        if cond.rel_op in ("<", "<=", ">", ">=", "=="):
            return decide_relation(cond.rel_op, lo, hi)
    raise EvaluationError(f"unsupported condition {cond}")


def decide_relation(op: str, lo: Any, hi: Any) -> bool | None:
    """Decide ``d op 0`` for a difference ``d = lhs - rhs`` enclosed in ``[lo, hi]``.

    Args:
        op: one of ``"<"``, ``"<="``, ``">"``, ``">="``, ``"=="``.
        lo, hi: a rigorous enclosure of lhs - rhs.

    Returns:
        True or False when the enclosure decides the relation, None when it does not.
    """
    if op in ("<", "<="):
        if hi < 0 or (op == "<=" and hi <= 0):
            return True
        if lo > 0 or (op == "<" and lo >= 0):
            return False
        return None
    if op in (">", ">="):
        if lo > 0 or (op == ">=" and lo >= 0):
            return True
        if hi < 0 or (op == ">" and hi <= 0):
            return False
        return None
    if op == "==":
        if lo == hi == 0:
            return True
        return False if (lo > 0 or hi < 0) else None
    raise ValueError(f"op must be one of <, <=, >, >=, ==, got {op!r}")


def exact_min(*values: Any) -> sympy.Expr:
    """The smallest of exact values, ordered by rigorous interval arithmetic.

    ``sympy.Min`` orders numbers by exact symbolic comparison, which can run for minutes when
    two values are close (``Min(3, log(...)/63)`` for the RDP of a 3-DP mechanism at order 64
    did not finish).  Here numeric arguments are compared through :func:`interval` enclosures
    of their differences; the result is one of the arguments (exactly), or an unevaluated
    ``Min`` of the arguments no enclosure could order (equal, or closer than the precision
    ladder resolves) -- the same value either way.  Arguments with free symbols are passed to
    ``sympy.Min`` unchanged.
    """
    return _extreme(values, "<", sympy.Min)


def exact_max(*values: Any) -> sympy.Expr:
    """The largest of exact values, ordered by rigorous interval arithmetic (see
    :func:`exact_min`)."""
    return _extreme(values, ">", sympy.Max)


def _extreme(values: tuple[Any, ...], op: str, combine: Any) -> sympy.Expr:
    if not values:
        raise ValueError("exact_min/exact_max need at least one value, got none")
    vals = [v if isinstance(v, sympy.Basic) else exact(v, "value") for v in values]
    if any(v.free_symbols for v in vals):
        return combine(*vals)
    infinite = [v for v in vals if v in (sympy.oo, -sympy.oo)]
    if infinite:  # ordered without arithmetic: +-oo against anything finite
        best = sympy.oo if op == ">" else -sympy.oo
        if best in infinite:
            return best
        finite = [v for v in vals if v not in infinite]
        return _extreme(tuple(finite), op, combine) if finite else infinite[0]
    kept: list[sympy.Expr] = []
    for v in vals:
        if any(v == k for k in kept):
            continue
        beaten = False
        survivors = []
        for k in kept:
            lo, hi = endpoints(interval(v - k))
            verdict = decide_relation(op, lo, hi)
            if verdict is True:  # v beats k: drop k
                continue
            if verdict is False:  # k beats or ties v
                beaten = True
            survivors.append(k)
        kept = survivors if beaten else [*survivors, v]
    if len(kept) == 1:
        return kept[0]
    return combine(*kept, evaluate=False)


def _to_interval_value(value: Any, name: str) -> Any:
    """An environment value: a number (exact conversion) or a (lo, hi) pair or an iv.mpf."""
    if isinstance(value, mpmath.ctx_iv.ivmpf):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        lo = _iv_eval(exact(value[0], name), {})
        hi = _iv_eval(exact(value[1], name), {})
        return mpmath.iv.mpf([endpoints(lo)[0], endpoints(hi)[1]])
    return _iv_eval(exact(value, name), {})


def interval(
    expr: Any,
    subs: Mapping[Any, Any] | None = None,
    *,
    rel_width: float = 2.0**-60,
    prec: int | None = None,
    extended: bool = False,
) -> Any:
    """Enclose the value of ``expr`` in a rigorous mpmath interval.

    The precision is raised (doubling from :data:`START_PRECISION`) until the interval's
    width is at most ``rel_width`` times its magnitude (or an absolute ``rel_width`` near 0),
    up to :data:`MAX_PRECISION` bits; the last interval is returned even when it is wider.

    Args:
        expr: a sympy expression (or anything :func:`exact` accepts).
        subs: values of the free symbols: numbers (converted exactly), ``(lo, hi)`` pairs
            meaning the whole closed interval, or ``mpmath.iv.mpf`` intervals.
        rel_width: the target relative width.
        prec: evaluate once at exactly this precision instead of refining.
        extended: evaluate over the extended reals: symbol intervals may have infinite ends
            and ``log`` (and non-integer powers) accept intervals starting exactly at 0, so
            ``log([0, h])`` is ``[-oo, log h]``.  The result may then have infinite ends; it
            still contains every value the expression takes (used by the verifier on boxes
            that touch an open end of a domain).

    Returns:
        An ``mpmath.iv.mpf`` guaranteed to contain the true value (for every value of the
        symbols in their intervals).

    Raises:
        EvaluationError: for unsupported functions, undefined operations or missing symbols.
    """
    expr = exact(expr, "expression")
    subs = subs or {}
    token = _EXTENDED.set(extended)
    try:
        with PRECISION_LOCK:
            return _interval(expr, subs, rel_width, prec)
    finally:
        _EXTENDED.reset(token)


def _interval(expr: sympy.Expr, subs: Mapping[Any, Any], rel_width: float, prec: int | None) -> Any:
    precisions = [prec] if prec is not None else _precision_ladder()
    result = None
    for p in precisions:
        saved = mpmath.iv.prec
        mpmath.iv.prec = p
        try:
            env = {sympy.Symbol(k) if isinstance(k, str) else k: v for k, v in subs.items()}
            env = {k: _to_interval_value(v, str(k)) for k, v in env.items()}
            result = _iv_eval(expr, env)
        finally:
            mpmath.iv.prec = saved
        lo, hi = endpoints(result)
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            continue
        with mpmath.workprec(p + 20):
            width = hi - lo
            scale = max(abs(lo), abs(hi), mpmath.mpf(2) ** -1000)
            if lo <= 0 <= hi:
                scale = max(scale, mpmath.mpf(1))
            if width <= rel_width * scale:
                break
    return result


def _precision_ladder() -> list[int]:
    ladder = []
    p = START_PRECISION
    while p <= MAX_PRECISION:
        ladder.append(p)
        p *= 2
    return ladder


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
        if isinstance(x, (int, Fraction, sympy.Basic)):
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
    if isinstance(expr, sympy.Basic) and expr in (sympy.oo, -sympy.oo):
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


def from_float(x: float) -> sympy.Expr:
    """The exact value of a float as a sympy number: finite floats exactly (``Rational``),
    +-inf as +-oo.

    Use this, never ``sympy.Rational(x)`` on a computed float: sympy maps
    ``Rational(float("inf"))`` to **0**, which turned an infinite upper bound into a zero
    one (an unsound epsilon of 12.4 for ``SelfComposed(Laplace(1e-400), 5)``).

    Raises:
        ValueError: for nan (no number to bound).
    """
    x = float(x)
    if math.isnan(x):
        raise ValueError("cannot bound nan: a computation lost its value")
    if math.isinf(x):
        return sympy.oo if x > 0 else -sympy.oo
    return sympy.Rational(x)


def bracket_decreasing(
    expr: Any,
    symbol: sympy.Symbol,
    target: Any,
    *,
    rel_tol: Any = "1e-12",
    max_steps: int = 400,
    guess: float | None = None,
) -> tuple[sympy.Rational, sympy.Rational]:
    """Rigorously bracket where a decreasing function of ``symbol >= 0`` crosses ``target``.

    For a function f decreasing on [0, oo), returns exact rationals ``(lower, upper)`` with
    ``f(upper) <= target`` verified by interval arithmetic and ``f(lower) > target`` verified
    (or ``lower == 0``), so the smallest x with f(x) <= target lies in (lower, upper].  Used
    to turn a privacy profile delta(eps) into an epsilon for a given delta: ``upper`` is a
    sound upper bound, ``lower`` a certified lower bound for that profile.

    Args:
        expr: f as a sympy expression in ``symbol`` (closed otherwise).
        symbol: the variable.
        target: the level (exact conversion).
        rel_tol: stop when ``upper - lower <= rel_tol * upper``.
        max_steps: a cap on the bisection and doubling steps.
        guess: an approximate crossing point (e.g. from a floating-point root finder); when
            given, a bracket of relative width ``rel_tol/2`` around it is certified first
            with two rigorous evaluations, and bisection is the fallback.

    Returns:
        ``(lower, upper)`` as sympy Rationals.

    Raises:
        EvaluationError: if no point with f <= target is found below 2**max_steps.
    """
    target = exact(target, "target")
    rel_tol = exact(rel_tol, "rel_tol")

    def below(x: sympy.Rational) -> bool | None:
        lo, hi = endpoints(interval(expr, {symbol: x}))
        t_lo, t_hi = endpoints(interval(target))
        if hi <= t_lo:
            return True
        if lo > t_hi:
            return False
        return None

    zero = sympy.Integer(0)
    if below(zero) is True:
        return zero, zero
    if guess is not None and guess > 0:
        # certify a bracket around a floating-point guess with two rigorous evaluations
        g = exact(guess, "guess")
        hi_try = g * (1 + rel_tol / 4)
        lo_try = g * (1 - rel_tol / 4)
        if below(hi_try) is True and below(lo_try) is False:
            return lo_try, hi_try
    lower, upper = zero, sympy.Integer(1)
    steps = 0
    while (state := below(upper)) is not True:
        # only a point certified above the target may become the lower end: where the
        # comparison cannot decide (None), the bracket widens upward and ``lower`` stays
        # (it once moved to 64 for 10 x Gaussian(1) at delta 1e-71: a "lower bound" of 128
        # above the true 61.18)
        if state is False:
            lower = upper
        upper = upper * 2
        steps += 1
        if steps > max_steps:
            raise EvaluationError("no point where the function falls below the target")
    while upper - lower > rel_tol * upper and steps < max_steps:
        mid = (lower + upper) / 2
        state = below(mid)
        if state is True:
            upper = mid
        elif state is False:
            lower = mid
        else:  # undecidable at this precision: the crossing is within rounding; stop here
            break
        steps += 1
    return lower, upper


#: mpmath's working precisions (``mp.prec``, ``iv.prec``) are process-global, not per thread.
#: Code that changes them (:func:`interval`, :func:`iv_precision`, the accountant) holds this
#: reentrant lock, so threads never compute at, or restore, one another's precision.
PRECISION_LOCK = threading.RLock()


@contextlib.contextmanager
def mp_precision(bits: int) -> Iterator[None]:
    """``mpmath.workprec(bits)`` holding :data:`PRECISION_LOCK`: the only way code outside this
    module changes mpmath's (process-global) working precision, so a thread never computes at
    the precision another thread set (tests/numeric/test_precision_lock.py)."""
    with PRECISION_LOCK, mpmath.workprec(bits):
        yield


@contextlib.contextmanager
def mp_digits(dps: int) -> Iterator[None]:
    """``mpmath.workdps(dps)`` holding :data:`PRECISION_LOCK` (see :func:`mp_precision`)."""
    with PRECISION_LOCK, mpmath.workdps(dps):
        yield


@contextlib.contextmanager
def iv_precision(bits: int) -> Iterator[None]:
    """Run a block with mpmath's interval context at ``bits`` of precision (restored after;
    holds :data:`PRECISION_LOCK` meanwhile)."""
    with PRECISION_LOCK:
        old = mpmath.iv.prec
        mpmath.iv.prec = bits
        try:
            yield
        finally:
            mpmath.iv.prec = old
