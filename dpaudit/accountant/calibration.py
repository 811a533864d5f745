"""Calibration: the best value of one parameter whose *certified* guarantee meets a target.

    calibrate("SelfComposed(PoissonSampled(Gaussian(sigma), 256/60000), 14062)",
              epsilon=3, delta=1e-5, parameter="sigma")

returns the smallest noise multiplier (a decimal of six significant digits) at which the
accountant proves epsilon <= 3 at delta = 1e-5, with the certified bounds at that value.  The
direction -- the smallest noise, the largest number of steps, sampling rate or sensitivity --
is decided from the parameter's roles in the event (:mod:`~dpaudit.accountant.parameter_roles`)
and checked on the certified bounds as the search goes
(:mod:`~dpaudit.accountant.calibration_search`).  With ``delta_target`` instead of ``delta``
the target is a delta at a fixed epsilon.

Privacy:
    ``Calibration.value`` is a value at which the accountant's certified upper bound is at
    most the target: the search decides on certified bounds only, and the bound at the
    returned value is recomputed at the accountant's full precision and reported
    (``epsilon_upper``, or ``delta_upper``) with its certified lower bound beside it.  The
    float ``value`` lies on the private side of the exact decimal ``value_exact`` that was
    certified, which covers it by the monotonicity of the parameter's role.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dpaudit.accountant.calibration_result import Calibration
from dpaudit.accountant.calibration_search import Probe, Range, SearchResult, search
from dpaudit.accountant.core import Accountant, Guarantee, UnsupportedEventError, substitute
from dpaudit.accountant.currencies import (
    COARSEST_ONLY,
    GRID_HINT,
    ONE_TRANSFORM_RESERVE,
    GridHint,
)
from dpaudit.accountant.parameter_roles import (
    INCREASING,
    CalibrationError,
    NotMonotoneError,
    Occurrence,
    direction,
    occurrences,
)
from dpaudit.accountant.profile import check_epsilon
from dpaudit.accountant.statements import as_delta
from dpaudit.deferred_imports import sympy
from dpaudit.events import EVENT_TYPES, Event
from dpaudit.expressions import FUNCTIONS
from dpaudit.numeric import exact, float_down
from dpaudit.theorems.accounting import PLD_ACCOUNTING

__all__ = ["Calibration", "CalibrationError", "calibrate"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_RESERVED = {"pi", "E", "oo", "True", "False"}


def _check_name(parameter: Any) -> str:
    if not isinstance(parameter, str) or not _NAME.match(parameter):
        raise CalibrationError(
            "parameter must be a name (a letter, then letters, digits or _; at most 64 "
            f"characters), got {parameter!r}"
        )
    if parameter in _RESERVED or parameter in FUNCTIONS or parameter in EVENT_TYPES:
        raise CalibrationError(
            f"parameter must be a name that is not a constant, function or event, got {parameter!r}"
        )
    return parameter


def _event(expression: Any, name: str) -> Event:
    """The event, parsed with the restricted parser when given as text."""
    if isinstance(expression, str):
        from dpaudit.parse import parse_event

        event = parse_event(expression, symbols=[name])
    elif isinstance(expression, Event):
        event = expression
    else:
        raise CalibrationError(
            f"expression must be an event expression or an event, got {type(expression).__name__}"
        )
    names = sorted({s.name for s in event.free_symbols})
    if name not in names:
        raise CalibrationError(
            f"{event} does not depend on {name}: {name} does not appear in it"
            + (f" (its symbols: {', '.join(names)})" if names else "")
        )
    others = [n for n in names if n != name]
    if others:
        raise CalibrationError(
            f"{event} has symbols besides {name}: {', '.join(others)}; substitute values for "
            "them first"
        )
    return event


def _bound(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    q = exact(value, name)
    if q.free_symbols or not q.is_Rational:
        raise CalibrationError(f"{name} must be a rational number, got {value!r}")
    f = Fraction(int(q.p), int(q.q))
    if f <= 0:
        raise CalibrationError(f"{name} must be a number > 0, got {value!r}")
    return f


def _range(name: str, found: list[Occurrence], low: Any, high: Any) -> Range:
    """The admissible values: the fields' ranges where the field is ``c name`` or
    ``c / name`` (others are validated by the event's constructor at each value), intersected
    with ``[low, high]``."""
    symbol = next(s for o in found for s in o.value.free_symbols if s.name == name)
    lo: Fraction | None = None
    hi: Fraction | None = None
    lo_closed = hi_closed = False
    integer = any(o.integer for o in found)

    def tighten(end: Any, closed: bool, is_low: bool) -> None:
        nonlocal lo, hi, lo_closed, hi_closed
        if end is None:
            return
        f = Fraction(end) if not isinstance(end, Fraction) else end
        if is_low and (lo is None or f > lo or (f == lo and not closed)):
            lo, lo_closed = f, closed
        if not is_low and (hi is None or f < hi or (f == hi and not closed)):
            hi, hi_closed = f, closed

    for o in found:
        f_low, f_high, low_open, high_open = o.bounds
        ratio = sympy.cancel(o.value / symbol)  # a rational function: no simplify needed
        inverse = sympy.cancel(o.value * symbol)
        if not ratio.free_symbols and ratio.is_positive:  # field = c name
            c = Fraction(str(ratio))
            if f_low is not None:
                tighten(Fraction(str(f_low)) / c, not low_open, True)
            if f_high is not None:
                tighten(Fraction(str(f_high)) / c, not high_open, False)
        elif not inverse.free_symbols and inverse.is_positive:  # field = c / name
            c = Fraction(str(inverse))
            if f_high is not None:
                tighten(c / Fraction(str(f_high)), not high_open, True)
            if f_low is not None and f_low != 0:
                tighten(c / Fraction(str(f_low)), not low_open, False)
    tighten(_bound(low, "low"), True, True)
    tighten(_bound(high, "high"), True, False)
    if lo is not None and lo <= 0:
        lo, lo_closed = None, False  # log coordinates: 0 is approached, never reached
    where = Range(lo, hi, lo_closed, hi_closed, integer)
    if (
        lo is not None
        and hi is not None
        and (lo > hi or (lo == hi and not (lo_closed and hi_closed)))
    ):
        raise CalibrationError(f"no value is admissible: {where.text(name)}")
    return where


def _start(where: Range, sign: int, low: Any, high: Any) -> Fraction:
    """The first value tried: the middle of a given range, the least private end of the
    admissible range when it is a closed finite end (often the answer, e.g. a rate of 1),
    else a given end, else 1."""
    if low is not None and high is not None and where.low is not None and where.high is not None:
        mid = Fraction(math.sqrt(where.low * where.high))
        return Fraction(round(mid)) if where.integer else mid
    end, closed = (
        (where.high, where.high_closed) if sign == INCREASING else (where.low, where.low_closed)
    )
    if end is not None and closed:
        return end
    for given in (where.low if low is not None else None, where.high if high is not None else None):
        if given is not None:
            return given
    return Fraction(1)


def _roles(found: list[Occurrence]) -> tuple[str, ...]:
    out: list[str] = []
    for o in found:
        text = f"{o.role}: {o.where()}"
        if text not in out:
            out.append(text)
    return tuple(out)


def calibrate(
    expression: Any,
    *,
    epsilon: Any,
    delta: Any = None,
    parameter: str,
    low: Any = None,
    high: Any = None,
    delta_target: Any = None,
) -> Calibration:
    """The best value of ``parameter`` whose certified guarantee meets the target.

    Args:
        expression: an event expression (text, read by dpaudit's restricted parser with
            ``parameter`` as its one symbol) or an event whose one free symbol is named
            ``parameter``.
        epsilon: the epsilon target (with ``delta``), or the fixed epsilon (with
            ``delta_target``); a number >= 0.
        delta: the delta the epsilon target is stated at, in [0, 1).
        parameter: the name of the symbol to calibrate.
        low, high: the range searched (default: the parameter's admissible range).
        delta_target: instead of ``delta``, a delta target in [0, 1) at the fixed ``epsilon``.

    Returns:
        A :class:`Calibration`: ``value`` (the smallest noise, or the largest steps, rate,
        sensitivity or privacy parameter, whose certified upper bound meets the target),
        ``epsilon_upper`` and ``epsilon_lower`` (or ``delta_upper``/``delta_lower``) at it, the
        theorem, and the evidence of the search.

    Raises:
        CalibrationError: (a ValueError) for a bad name, target or range; a parameter the
            event does not depend on; a target no value in the range meets; a dependence
            that is not monotone.
        UnsupportedEventError: when no theorem covers a sub-event.
        ExpressionError: for an expression the parser refuses.
    """
    name = _check_name(parameter)
    event = _event(expression, name)
    if delta_target is None:
        if delta is None:
            raise CalibrationError(
                "give delta (the delta of an epsilon target) or delta_target (a delta target "
                "at a fixed epsilon), got neither"
            )
        mode, goal, fixed = "epsilon", check_epsilon(epsilon), as_delta(delta)
    else:
        if delta is not None:
            raise CalibrationError(
                "give delta (with an epsilon target) or delta_target (with a fixed epsilon), "
                "not both"
            )
        goal = as_delta(delta_target)
        mode, fixed = "delta", check_epsilon(epsilon)
    target = float_down(goal)
    found = occurrences(event, name)
    where = _range(name, found, low, high)
    quick = _evaluator(event, name, mode, fixed, quick=True)
    try:
        sign = direction(name, found)
    except NotMonotoneError:
        _raise_if_constant(quick, where, name, mode)
        raise
    full = _evaluator(event, name, mode, fixed, quick=False)
    start = _start(where, sign, low, high)
    found_by_pld = None
    forecast = None
    if mode == "epsilon":
        hint = GridHint()  # shared: the refined evaluations start where the coarse ones point
        if not where.integer:
            forecast = _forecast(event, name, fixed, target, sign, start, where, hint)
        found_by_pld = _pld_search(
            event, name, fixed, full, target, sign, where, start, forecast, hint
        )
    result = found_by_pld or search(
        quick,
        full,
        target=target,
        sign=sign,
        where=where,
        start=start,
        name=name,
        quantity=mode,
        forecast=forecast,
    )
    return _result(name, event, mode, goal, fixed, sign, found, result, where)


def _pld_search(
    event: Event,
    name: str,
    delta: Any,
    full: Callable[[Fraction], Probe],
    target: float,
    sign: int,
    where: Range,
    start: Fraction,
    forecast: tuple[Fraction, float] | None,
    hint: GridHint,
) -> SearchResult | None:
    """The search on the event's PLD bounds alone (:mod:`~dpaudit.accountant.pld_probe`: the
    accountant's own PLD candidate without its other results, about half the cost of an
    evaluation), then the whole accountant at the value found.  None -- search with the whole
    accountant -- when the event has no PLD, the PLD search fails, or another result is the
    tightest at that value (the PLD's best value need not be the accountant's best then).
    ``forecast``: where the search starts (:func:`_forecast`); ``hint``: the grid hint its
    evaluations share.

    Privacy: the value returned is one where the whole accountant's certified upper bound,
    computed in full, meets the target (checked here and again by :func:`_result`)."""
    from dpaudit.accountant.pld_probe import NoLossDistributionError, pld_evaluator

    def at(v: Fraction) -> Event:
        return _substituted(event, name, v)

    try:
        found = search(
            pld_evaluator(at, delta, quick=True, hint=hint),
            pld_evaluator(at, delta, quick=False, hint=hint),
            target=target,
            sign=sign,
            where=where,
            start=start,
            name=name,
            quantity="epsilon",
            forecast=forecast,
        )
    except (NoLossDistributionError, CalibrationError):
        return None
    # on the grid the PLD search ended on, memoised: the accountant's cost is its other results
    grid = getattr(found.best.result, "grid", None)
    token = GRID_HINT.set(GridHint(grid, fixed=True))
    try:
        final = full(found.best.value)
    finally:
        GRID_HINT.reset(token)
    g = final.result
    if not (final.upper <= target and isinstance(g, Guarantee) and g.theorem is PLD_ACCOUNTING):
        return None
    return dataclasses.replace(found, best=final, probes=(*found.probes, final))


def _forecast(
    event: Event,
    name: str,
    delta: Any,
    target: float,
    sign: int,
    start: Fraction,
    where: Range,
    hint: GridHint,
) -> tuple[Fraction, float] | None:
    """Where the search's first full evaluation goes and the slope it extrapolates along
    (:mod:`~dpaudit.accountant.calibration_forecast`), None when the event has no forecast;
    sets ``hint`` to the grid the forecast expects the refinement to end on, when it does.
    Not for an integer parameter (the caller's check: the forecast's solve moves
    continuously).  The whole accountant's search starts from it too, when the PLD is not
    the tightest result (a Gaussian's analytic bound, exact where the forecast is
    accurate)."""
    from dpaudit.accountant.calibration_forecast import forecast_value

    try:
        found = forecast_value(
            lambda v: _substituted(event, name, v),
            epsilon=target,
            delta=float(delta),
            sign=sign,
            start=start,
            low=where.low,
            high=where.high,
            template=(event, name),
        )
    except (ArithmeticError, ValueError, FloatingPointError):
        return None  # a forecast only chooses where to look: without one, the usual search
    if found is None:
        return None
    if found.grid is not None:
        hint.start = found.grid
    return Fraction(found.aim), found.slope


def _evaluator(
    event: Event, name: str, mode: str, fixed: Any, quick: bool
) -> Callable[[Fraction], Probe]:
    """value -> certified bounds at exactly that value: the accountant's tightest, or (quick)
    those of its coarsest PLD grid (:data:`~dpaudit.accountant.currencies.COARSEST_ONLY`)."""

    def evaluate(v: Fraction) -> Probe:
        at = _substituted(event, name, v)
        token = COARSEST_ONLY.set(quick)
        # quick bounds only locate the answer: no one transform for a small delta's lower bound
        reserve = ONE_TRANSFORM_RESERVE.set(not quick)
        try:
            return _measure(at, mode, fixed, v, full=not quick)
        finally:
            ONE_TRANSFORM_RESERVE.reset(reserve)
            COARSEST_ONLY.reset(token)

    return evaluate


def _substituted(event: Event, name: str, v: Fraction) -> Event:
    try:
        return substitute(event, {name: v})
    except ValueError as err:
        raise CalibrationError(f"{name} = {_number(v, False)}: {err}") from None


def _measure(at: Event, mode: str, fixed: Any, v: Fraction, full: bool) -> Probe:
    acc = Accountant()
    if mode == "epsilon":
        try:
            g = acc.guarantee(at, fixed)
        except UnsupportedEventError:
            raise
        except ValueError as err:  # no result proves a guarantee at this value
            return Probe(v, 0.0, math.inf, str(err), full)
        upper = g.epsilon_upper
        lower = g.epsilon_lower_float or 0.0
        theorems = [c.step.theorem for c in g.candidates]
        return Probe(v, lower, math.inf if upper is None else upper, g, full or _exact(theorems))
    d = acc.delta_for_epsilon(at, fixed)
    theorems = [c.theorem for c in d.candidates]
    return Probe(v, d.delta_lower, d.delta_upper, d, full or _exact(theorems))


def _exact(theorems: list[Any]) -> bool:
    """Whether no candidate came from a privacy loss distribution: the quick bounds (the
    coarsest PLD grid) are then the accountant's tightest."""
    return PLD_ACCOUNTING not in theorems


def _raise_if_constant(
    evaluate: Callable[[Fraction], Probe], where: Range, name: str, mode: str
) -> None:
    """Roles that pull both ways: if the bound is the same at two far-apart values, the event
    does not depend on the parameter (e.g. ``Gaussian(s, sensitivity=s)``)."""
    a = where.low if where.low is not None else Fraction(1)
    b = a * 2 if where.high is None else min(a * 2, where.high)
    if where.integer:
        a, b = Fraction(math.ceil(a)), Fraction(math.floor(b))
    if a >= b:
        return
    pa, pb = evaluate(a), evaluate(b)
    if math.isfinite(pa.upper) and pa.upper == pb.upper and pa.lower == pb.lower:
        raise CalibrationError(
            f"the event does not depend on {name}: {name} = {_number(a, where.integer)} and "
            f"{name} = {_number(b, where.integer)} give the same certified {mode} bounds "
            f"[{pa.lower:.6g}, {pa.upper:.6g}]"
        )


def _number(v: Fraction, integer: bool) -> int | float:
    return int(v) if integer or v.denominator == 1 else float(v)


def _result(
    name: str,
    event: Event,
    mode: str,
    goal: Any,
    fixed: Any,
    sign: int,
    found: list[Occurrence],
    result: SearchResult,
    where: Range,
) -> Calibration:
    """The calibration at the best value (a full evaluation: the accountant's tightest
    bounds, computed at exactly that value)."""
    final = result.best
    if not (final.full and final.upper <= float_down(goal)):
        raise ArithmeticError(
            f"calibrating {name}: the search ended at {final.value} with bound "
            f"{final.upper!r} (full evaluation: {final.full}); please report this"
        )
    best = final
    g = final.result
    theorem = g.theorem
    return Calibration(
        parameter=name,
        value=_private_number(best.value, where.integer, sign),
        value_exact=best.value,
        event=_substituted(event, name, best.value),
        target=mode,
        epsilon_target=goal if mode == "epsilon" else None,
        delta=fixed if mode == "epsilon" else None,
        epsilon=fixed if mode == "delta" else None,
        delta_target=goal if mode == "delta" else None,
        upper=final.upper,
        lower=final.lower,
        direction="largest" if sign == INCREASING else "smallest",
        roles=_roles(found),
        theorem=None if theorem is None else theorem.name,
        citation=None if theorem is None else theorem.citation,
        not_certified=None
        if result.rejected is None
        else _number(result.rejected.value, where.integer),
        impossible=None
        if result.infeasible is None
        else _number(result.infeasible.value, where.integer),
        evaluations=len(result.probes),
        guarantee=g,
    )


def _private_number(v: Fraction, integer: bool, sign: int) -> int | float:
    """``v`` as an int, or as the float nearest to it on its private side (above it for a
    noise scale, below it otherwise): covered by the certificate at ``v`` by monotonicity."""
    if integer or v.denominator == 1:
        return int(v)
    f = float(v)
    if sign == INCREASING and Fraction(f) > v:
        f = math.nextafter(f, -math.inf)
    elif sign != INCREASING and Fraction(f) < v:
        f = math.nextafter(f, math.inf)
    return f
