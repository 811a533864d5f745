"""Rigorous interval evaluation of exact expressions with mpmath's interval arithmetic.

:func:`interval` encloses the value of an exact sympy expression, raising the working
precision (doubling from :data:`START_PRECISION` up to :data:`MAX_PRECISION` bits) until the
enclosure is narrow enough; :func:`decide_relation` decides a comparison from an enclosure.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable, Mapping
from typing import Any

import mpmath

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, decide_relation, install_enclosure
from dpaudit.numeric.precision import PRECISION_LOCK
from dpaudit.numeric.values import EvaluationError, exact

#: Starting and maximal working precision (bits) of the interval evaluator.
START_PRECISION = 80
MAX_PRECISION = 4000


#: Extended-real mode of the interval evaluator (see :func:`interval`'s ``extended``).
_EXTENDED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dpaudit_iv_extended", default=False
)


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
#: The interval extension of erfc (public: :mod:`dpaudit.theorems.primitives` encloses the
#: Gaussian mechanism's profile with it directly).
iv_erfc = _monotone("erfc", increasing=False, span=(0, 2))
_iv_tanh = _monotone("tanh", increasing=True, span=(-1, 1))


def _iv_pow(base: Any, exponent: Any, env: Mapping[sympy.Symbol, Any]) -> Any:
    if exponent.is_Integer:
        n = int(exponent)
        if n >= 0:
            return base**n
        return mpmath.iv.mpf(1) / base ** (-n)
    if exponent.is_Rational and exponent.q == 2 and abs(exponent.p) == 1:
        if endpoints(base)[0] < 0:
            raise EvaluationError("square root of a possibly negative value")
        root = mpmath.iv.sqrt(base)
        return root if exponent.p == 1 else mpmath.iv.mpf(1) / root
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


def _iv_exact_number(x: ExactNumber, env: Mapping[sympy.Symbol, Any]) -> Any:
    """Enclose an :class:`ExactNumber` (the same rules as its sympy form below)."""
    iv = mpmath.iv
    head, args = x.head, x.operands
    if head == "rational":
        return _iv_const(x)
    if head == "E":
        return iv.e
    if head == "pi":
        return iv.pi
    if head == "pow":
        return _iv_pow(_iv_eval(args[0], env), args[1], env)
    if head in ("add", "mul"):
        values = [_iv_eval(a, env) for a in args]
        total = values[0]
        for v in values[1:]:
            total = total + v if head == "add" else total * v
        return total
    if head in _IV_FUNCTIONS:
        return _IV_FUNCTIONS[head](*[_iv_eval(a, env) for a in args])
    if head in ("floor", "ceiling"):
        return _iv_round(_iv_eval(args[0], env), mpmath.floor if head == "floor" else mpmath.ceil)
    if head in ("binomial", "factorial") and all(a.is_Integer for a in args):
        return _iv_integer_function(head, [int(a) for a in args], x)
    raise EvaluationError(f"unsupported function in rigorous evaluation: {head}")


def _iv_log(arg: Any) -> Any:
    lo = endpoints(arg)[0]
    if lo < 0 or (lo == 0 and not _EXTENDED.get()):
        raise EvaluationError("log of a possibly non-positive value")
    return mpmath.iv.log(arg)  # log of an interval starting at 0 starts at -oo (extended mode)


def _iv_abs(x: Any) -> Any:
    lo, hi = endpoints(x)
    if lo >= 0:
        return x
    if hi <= 0:
        return -x
    return mpmath.iv.mpf([0, max(-lo, hi)])


def _iv_round(x: Any, fn: Callable[[Any], Any]) -> Any:
    lo, hi = endpoints(x)
    with mpmath.workprec(max(mpmath.iv.prec, lo.man.bit_length() + 64 if lo else 64)):
        return mpmath.iv.mpf([fn(lo), fn(hi)])


def _iv_integer_function(name: str, ints: list[int], expr: Any) -> Any:
    if name == "factorial":
        return mpmath.iv.mpf(math.factorial(ints[0])) if ints[0] >= 0 else _unsupported(expr)
    n, r = ints
    return mpmath.iv.mpf(math.comb(n, r)) if n >= 0 and r >= 0 else _unsupported(expr)


#: Interval extensions by function name, shared by both kinds of exact value.
_IV_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp": lambda x: mpmath.iv.exp(x),
    "log": _iv_log,
    "erf": lambda x: _iv_erf(x),
    "erfc": lambda x: iv_erfc(x),
    "tanh": lambda x: _iv_tanh(x),
    "gamma": lambda x: mpmath.iv.gamma(x),  # mpmath's interval gamma ([-inf, inf] at poles)
    "Abs": _iv_abs,
    "Min": lambda *xs: _iv_min(list(xs)),
    "Max": lambda *xs: _iv_max(list(xs)),
}


def _iv_eval(expr: sympy.Expr, env: Mapping[sympy.Symbol, Any]) -> Any:
    if isinstance(expr, ExactNumber):
        return _iv_exact_number(expr, env)
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
        return _iv_log(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.erf):
        return _iv_erf(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.erfc):
        return iv_erfc(_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.Abs):
        return _iv_abs(_iv_eval(expr.args[0], env))
    if isinstance(expr, (sympy.tanh, sympy.gamma)):
        return _IV_FUNCTIONS[type(expr).__name__](_iv_eval(expr.args[0], env))
    if isinstance(expr, sympy.Min):
        return _iv_min([_iv_eval(a, env) for a in expr.args])
    if isinstance(expr, sympy.Max):
        return _iv_max([_iv_eval(a, env) for a in expr.args])
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        fn = mpmath.floor if isinstance(expr, sympy.floor) else mpmath.ceil
        return _iv_round(_iv_eval(expr.args[0], env), fn)
    if isinstance(expr, sympy.Piecewise):
        return _iv_piecewise(expr, env)
    if isinstance(expr, (sympy.binomial, sympy.factorial)) and all(a.is_Integer for a in expr.args):
        # exact integers (an unevaluated binomial(k, i) in a written-out sum); other
        # arguments are not supported
        name = "factorial" if isinstance(expr, sympy.factorial) else "binomial"
        return _iv_integer_function(name, [int(a) for a in expr.args], expr)
    if isinstance(expr, sympy.Lambda):
        raise EvaluationError("cannot evaluate a Lambda without arguments")
    if expr in (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        raise EvaluationError(f"expression is not finite: {expr}")
    raise EvaluationError(f"unsupported function in rigorous evaluation: {type(expr).__name__}")


def _unsupported(expr: sympy.Expr) -> Any:
    raise EvaluationError(f"unsupported arguments in rigorous evaluation: {expr}")


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
    enough: Callable[[Any], bool] | None = None,
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
        enough: stop refining as soon as this returns True for an enclosure (e.g. once it
            decides a comparison: a narrower one would decide it the same way, both being
            rigorous); the precision ladder is otherwise unchanged.

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
            return _interval(expr, subs, rel_width, prec, enough)
    finally:
        _EXTENDED.reset(token)


def _interval(
    expr: sympy.Expr,
    subs: Mapping[Any, Any],
    rel_width: float,
    prec: int | None,
    enough: Callable[[Any], bool] | None = None,
) -> Any:
    precisions = [prec] if prec is not None else _precision_ladder()
    result = None
    for p in precisions:
        saved = mpmath.iv.prec
        mpmath.iv.prec = p
        try:
            env = {sympy.Symbol(k) if isinstance(k, str) else k: v for k, v in subs.items()}
            env = {k: _to_interval_value(v, str(k)) for k, v in env.items()}
            result = _iv_eval(expr, env)
        except OverflowError:  # mpmath converting a number beyond a double's range
            raise EvaluationError(
                "a value beyond the range of a double (an argument too large to evaluate)"
            ) from None
        finally:
            mpmath.iv.prec = saved
        lo, hi = endpoints(result)
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            continue
        if enough is not None and enough(result):
            break
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


def _enclose_exact_number(value: ExactNumber) -> tuple[Any, Any] | None:
    """``(low, high)`` of :func:`interval` for :class:`ExactNumber`'s own comparisons."""
    try:
        return endpoints(interval(value))
    except EvaluationError:
        return None


def _decide_exact_number(value: ExactNumber, op: str) -> bool | None:
    """Decide ``value op 0``, raising the precision until an enclosure does (None when none up
    to :data:`MAX_PRECISION` does, or the value cannot be evaluated)."""
    for p in _precision_ladder():
        try:
            lo, hi = endpoints(interval(value, prec=p))
        except EvaluationError:
            return None
        decided = decide_relation(op, lo, hi)
        if decided is not None:
            return decided
    return None


install_enclosure(_enclose_exact_number, _decide_exact_number)
