"""Certified brackets of where a decreasing function crosses a level (epsilon for a delta)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object, rational
from dpaudit.numeric.enclosures import endpoints, interval
from dpaudit.numeric.values import EvaluationError, exact


def bracket_decreasing(
    expr: Any,
    symbol: sympy.Symbol | None,
    target: Any,
    *,
    rel_tol: Any = "1e-12",
    max_steps: int = 400,
    guess: float | None = None,
) -> tuple[ExactNumber, ExactNumber]:
    """Rigorously bracket where a decreasing function of ``symbol >= 0`` crosses ``target``.

    For a function f decreasing on [0, oo), returns exact rationals ``(lower, upper)`` with
    ``f(upper) <= target`` verified by interval arithmetic and ``f(lower) > target`` verified
    (or ``lower == 0``), so the smallest x with f(x) <= target lies in (lower, upper].  Used
    to turn a privacy profile delta(eps) into an epsilon for a given delta: ``upper`` is a
    sound upper bound, ``lower`` a certified lower bound for that profile.

    Args:
        expr: f as a sympy expression in ``symbol`` (closed otherwise), or f itself: a
            callable taking an exact rational x >= 0 and returning the exact value f(x)
            (written with :mod:`dpaudit.numeric.functions`, it needs no sympy for plain
            numbers).
        symbol: the variable of a sympy ``expr`` (None for a callable).
        target: the level (exact conversion).
        rel_tol: stop when ``upper - lower <= rel_tol * upper``.
        max_steps: a cap on the bisection and doubling steps.
        guess: an approximate crossing point (e.g. from a floating-point root finder); when
            given, a bracket of relative width ``rel_tol/2`` around it is certified first
            with two rigorous evaluations, and bisection is the fallback.

    Returns:
        ``(lower, upper)`` as exact rationals (:class:`~dpaudit.exact_numbers.ExactNumber`).

    Raises:
        EvaluationError: if no point with f <= target is found below 2**max_steps.
    """
    target = exact(target, "target")
    rel_tol = exact(rel_tol, "rel_tol")
    value_at = _evaluator(expr, symbol)

    t_lo, t_hi = endpoints(interval(target))

    def decide(enclosure: Any) -> bool | None:
        lo, hi = endpoints(enclosure)
        if hi <= t_lo:
            return True
        if lo > t_hi:
            return False
        return None

    def below(x: ExactNumber) -> bool | None:
        # refined only until the comparison is decided (interval's ``enough``)
        return decide(value_at(x, lambda enclosure: decide(enclosure) is not None))

    zero = rational(0)
    if guess is not None and guess > 0:
        # certify a bracket around a floating-point guess with two rigorous evaluations (the
        # lower end certified above the target, f(0) is too: f decreases)
        g = exact(guess, "guess")
        hi_try = g * (1 + rel_tol / 4)
        lo_try = g * (1 - rel_tol / 4)
        if below(hi_try) is True and below(lo_try) is False:
            return lo_try, hi_try
    if below(zero) is True:
        return zero, zero
    lower, upper = zero, rational(1)
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


def _evaluator(expr: Any, symbol: Any) -> Callable[[ExactNumber, Callable[[Any], bool]], Any]:
    """``(x, enough) -> interval enclosing f(x)`` (refined until ``enough`` holds or to
    :func:`interval`'s default width) for f a callable or a sympy expression in ``symbol``."""
    if callable(expr) and not is_sympy_object(expr):
        return lambda x, enough: interval(expr(x), enough=enough)
    if symbol is None:
        raise TypeError("bracket_decreasing: a sympy expression needs its symbol")
    return lambda x, enough: interval(expr, {symbol: x}, enough=enough)
