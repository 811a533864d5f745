"""The search behind :func:`dpaudit.accountant.calibrate`: the best value of one parameter whose
certified bound meets a target, found with few evaluations of the accountant.

The searched function is ``v -> (lower, upper)``: certified bounds on the measured quantity
(epsilon at a delta, or delta at an epsilon) of the event at parameter value ``v``; ``v`` is
*feasible* when ``upper <= target``.  The true quantity is monotone in ``v``
(:mod:`dpaudit.accountant.parameter_roles`); the certified upper bound is so up to its grid
error, and monotonicity is checked on every pair of evaluations (a certified contradiction,
or an upper bound that moves the wrong way by more than :data:`MONOTONE_SLACK`, is an error).

1. *Bracket*: from a start value, move towards the other side, half again as far as the
   crossing is extrapolated to be (the first step assumes ``epsilon ~ v^(+-2)``, later ones
   extrapolate the last two evaluations in ``log v`` against ``log upper``), at most a factor
   :data:`MAX_STEP` at a time, until a feasible and an
   infeasible value are found -- or an end of the admissible range is reached: the range's
   least private end when it is feasible (the best value is that end), an error when its most
   private end is not.
2. *Close*: the secant of ``log upper`` against ``log v`` through the bracket's ends gives an
   estimate of the crossing; the next value lies between the estimate and half the tolerance
   beyond it towards the farther end, so that once the estimate is right within that, two
   evaluations close the bracket to :data:`RELATIVE_TOLERANCE` (bisection when the secant
   leaves the bracket).  Integers close when the ends are adjacent.

Values are exact: a continuous value is a decimal of :data:`SIGNIFICANT_DIGITS` digits whose
nearest float also lies on the private side of it (so the float a user copies is covered by
the same certificate, by monotonicity), an integer parameter an integer.

Privacy:
    Nothing here is a bound: every decision uses the certified bounds the caller computed at
    exactly the value decided; the value returned is one whose certified upper bound meets
    the target.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dpaudit.accountant.calibration_values import (
    SIGNIFICANT_DIGITS,
    Range,
    _float_safe,
    _shortest,
    _text,
)
from dpaudit.accountant.parameter_roles import INCREASING, CalibrationError, NotMonotoneError

__all__ = [
    "MAX_EVALUATIONS",
    "RELATIVE_TOLERANCE",
    "SIGNIFICANT_DIGITS",
    "Probe",
    "Range",
    "SearchResult",
    "search",
]

#: The bracket of a continuous parameter is closed when its ends are within this factor - 1.
RELATIVE_TOLERANCE = 1e-4
#: The most evaluations of the accountant one calibration makes.
MAX_EVALUATIONS = 80
#: The largest factor one bracketing step moves the value by.
MAX_STEP = 1e3
#: How far (as a factor) from its start the bracket search goes on an unbounded side.
SPAN = 1e12
#: The quick phase stops once its bracket is this narrow (in log v) or as narrow as the quick
#: band: the first full evaluation is placed by extrapolating from its feasible end, which is
#: then close enough that the curve's bending does not matter (2e-2 with FIRST_SLOPE 3: 249
#: evaluations on the 42 DP-SGD schedules of bench/calibration_search.py, against 286 at 3e-3
#: with FIRST_SLOPE 2).
QUICK_WIDTH = 2e-2
#: |d log epsilon / d log v| assumed for the first bracketing step (DP-SGD's noise multiplier:
#: 1.3-10 on the schedules of bench/calibration_search.py, steepest where the noise is small;
#: 1 for a Gaussian's sigma, whose calibration is analytic and cheap).
FIRST_SLOPE = 3.0
#: Where the full bound is guessed to lie in the quick band ``[lower, upper]`` before any full
#: evaluation: a guess for where to evaluate first, never a bound (0.32-0.41 on the DP-SGD
#: schedules of bench/calibrate.py, and chosen on them: 7 full evaluations in all there,
#: against 11 at 0.45).
BAND_SHARE = 0.38
#: The most full evaluations a search from a forecast makes before it searches as usual.
SETTLE_EVALUATIONS = 4
#: An upper bound may move the wrong way by this relative amount (grid error) before the
#: dependence is called non-monotone.
MONOTONE_SLACK = 1e-2
#: A bracket that the last two evaluations did not shrink to this share of its width is
#: halved next (in log v), whatever the secant says: the safeguard of Dekker's and Brent's
#: methods against regula falsi stalling on one end.  The bound at a delta equal to the
#: sampling rate is a cliff (about 1e-11 on one side, 2.4 on the other, of a 2% bracket), and
#: the secant moved 0.1-3% a step.
STALL_SHARE = 0.5
#: ``log(upper / target)`` below which a feasible bound is not extrapolated from along a slope:
#: a bound a million times below the target is the foot of a cliff (DP-SGD's epsilon at a delta
#: equal to its sampling rate is 0, certified as about 1e-11, while 2% less noise gives 2.4),
#: where a slope read elsewhere jumped to half the noise (a PLD evaluation of 19 s).
CLIFF = math.log(1e-6)


def _stalled(widths: list[float]) -> bool:
    """Whether the bracket's widths (in log v, one per evaluation, the latest last) show the
    last two evaluations not shrinking it to :data:`STALL_SHARE` of its width."""
    return len(widths) >= 3 and widths[-1] > STALL_SHARE * widths[-3]


@dataclasses.dataclass(frozen=True)
class Probe:
    """One evaluation: certified ``lower <= quantity(value) <= upper`` (``upper`` is inf when
    no result bounds it, ``lower`` 0.0 when nothing is certified); ``result`` is what the
    caller's evaluation returned (a guarantee); ``full``: whether the bounds are the
    accountant's tightest (else the quick bounds of the search's first phase)."""

    value: Fraction
    lower: float
    upper: float
    result: Any
    full: bool = True


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """The best feasible probe, the nearest infeasible one beyond it (None when the best is an
    end of the range), the nearest one whose certified *lower* bound exceeds the target (no
    accountant can certify it; None if none was seen), and every probe in order."""

    best: Probe
    rejected: Probe | None
    infeasible: Probe | None
    probes: tuple[Probe, ...]


class _Search:
    def __init__(
        self,
        quick: Callable[[Fraction], Probe],
        full: Callable[[Fraction], Probe],
        target: float,
        sign: int,
        where: Range,
        name: str,
        quantity: str,
    ) -> None:
        self.quick = quick
        self.full = full
        self.target = target  # rounded down: feasible means upper <= target
        self.sign = sign  # INCREASING: the quantity grows with v
        self.range = where
        self.name = name
        self.quantity = quantity
        self.probes: list[Probe] = []

    # ---- values -----------------------------------------------------------------------

    def private(self, v: Fraction, w: Fraction) -> bool:
        """Whether v is on the private side of w (the quantity is smaller at v)."""
        return v < w if self.sign == INCREASING else v > w

    def snap(self, x: float, toward_private: bool, window: float = 0.0) -> Fraction:
        """The value at log-coordinate x: an integer, or the shortest decimal within
        ``window`` of it whose float is safe; kept inside the range."""
        v_float = math.exp(min(max(x, -700.0), 700.0))
        private_up = self.sign != INCREASING
        up = toward_private == private_up
        if self.range.integer:
            v = Fraction(math.ceil(v_float - 1e-9) if up else math.floor(v_float + 1e-9))
        else:
            v = _float_safe(_shortest(v_float, window, up), private_up)
        return self.clip(v)

    def clip(self, v: Fraction) -> Fraction:
        r = self.range
        if r.integer:
            v = max(v, Fraction(1))
        if r.low is not None and (v < r.low or (v == r.low and not r.low_closed)):
            v = r.low if r.low_closed else self.inside(r.low, up=True)
        if r.high is not None and (v > r.high or (v == r.high and not r.high_closed)):
            v = r.high if r.high_closed else self.inside(r.high, up=False)
        return v

    def inside(self, end: Fraction, up: bool) -> Fraction:
        """The nearest representable value strictly inside an open end."""
        if self.range.integer:
            return end + 1 if up else end - 1
        unit = Fraction(1, 10**SIGNIFICANT_DIGITS)
        return end * (1 + unit) if up else end * (1 - unit)

    # ---- evaluations --------------------------------------------------------------------

    def probe(self, v: Fraction, full: bool) -> Probe:
        for p in self.probes:
            if p.value == v and (p.full or not full):
                return p
        if len(self.probes) >= MAX_EVALUATIONS:
            raise CalibrationError(
                f"calibrating {self.name}: no answer within {MAX_EVALUATIONS} evaluations of "
                f"the accountant (last values tried: "
                + ", ".join(_text(p.value) for p in self.probes[-3:])
                + "); give a narrower range with low/high"
            )
        p = (self.full if full else self.quick)(v)
        self.check_monotone(p)
        self.probes.append(p)
        return p

    def check_monotone(self, new: Probe) -> None:
        for old in self.probes:
            a, b = (new, old) if self.private(new.value, old.value) else (old, new)
            # a is the more private value: its quantity should not exceed b's
            certified = a.lower > b.upper
            grossly = (
                a.full == b.full  # quick and full upper bounds differ by their grids
                # both meeting the target: their order does not move the search (a delta
                # equal to the sampling rate gives epsilon 0 at every sigma, bounds ~1e-11
                # apart by grid rounding)
                and not (a.upper <= self.target and b.upper <= self.target)
                and math.isfinite(a.upper)
                and math.isfinite(b.upper)
                and b.upper > 0
                and a.upper > b.upper * (1 + MONOTONE_SLACK)
                and a.upper - b.upper > 1e-12
            )
            if certified or grossly:
                how = "certified" if certified else "upper bounds"
                raise NotMonotoneError(
                    f"{self.quantity} is not monotone in {self.name} ({how}): "
                    f"{self.name} = {_text(a.value)} gives {self.quantity} in "
                    f"[{a.lower:.6g}, {a.upper:.6g}] but {self.name} = {_text(b.value)} gives "
                    f"[{b.lower:.6g}, {b.upper:.6g}]; no best value can be searched for"
                )

    def feasible(self, p: Probe) -> bool:
        return p.upper <= self.target

    def y(self, p: Probe) -> float:
        """log(upper / target): <= 0 when feasible (-inf at 0, inf when unbounded)."""
        if p.upper <= 0:
            return -math.inf
        if not math.isfinite(p.upper) or self.target <= 0:
            return math.inf
        return math.log(p.upper / self.target)

    # ---- the search -----------------------------------------------------------------------

    def run(self, start: Fraction) -> SearchResult:
        first = self.probe(self.clip(start), full=False)
        good, bad = self.bracket(first, full=False)
        if bad is None:  # the least private end is feasible even on the quick bounds
            return self.result(self.probe(good.value, full=True), None)
        good, bad = self.close(good, bad, full=False)
        return self.refine(good, bad)

    def settle(self, guess: Fraction, slope: float) -> SearchResult | None:
        """The search from a forecast: full evaluations only, the first at ``guess``, the next
        ones where the latest full bound puts the crossing along the forecast's ``slope``
        (``d log upper / d log v``), then by the secant of two full bounds once they bracket
        it; done when the bracket is closed or the best feasible value is within the
        tolerance of the crossing extrapolated from it.  None (the caller searches as usual,
        these evaluations kept) when that takes more than :data:`SETTLE_EVALUATIONS`."""
        if not (math.isfinite(slope) and (slope > 0) == (self.sign == INCREASING)):
            return None
        best: Probe | None = None
        worse: Probe | None = None
        quarter = math.log1p(RELATIVE_TOLERANCE) / 4
        v: Fraction | None = self.snap(math.log(guess), toward_private=True, window=quarter)
        for _ in range(SETTLE_EVALUATIONS):
            if v is None:
                return None
            p = self.probe(v, full=True)
            if self.feasible(p):
                if best is None or self.private(best.value, p.value):
                    best = p
            elif worse is None or self.private(p.value, worse.value):
                worse = p
            if best is not None and worse is not None:
                if self.closed(best, worse):
                    return self.result(best, worse)
                estimate = self.crossing(best, worse)
                if abs(estimate - math.log(best.value)) <= math.log1p(RELATIVE_TOLERANCE):
                    return self.result(best, worse)
                v = self.next_value(estimate, best.value, worse.value)
                continue
            latest = best or worse
            assert latest is not None
            y = self.y(latest)
            if not math.isfinite(y):
                return None
            estimate = math.log(latest.value) - y / slope
            if best is not None and abs(estimate - math.log(best.value)) <= math.log1p(
                RELATIVE_TOLERANCE
            ):
                return self.result(best, None)
            # on the private side of the estimate by a quarter of the tolerance
            toward = 1.0 if (self.sign == INCREASING) else -1.0
            v = self.snap(estimate - toward * quarter, toward_private=True, window=quarter)
            if v == latest.value:  # one representable step towards the estimate
                v = self.clip(self.inside(latest.value, up=estimate > math.log(latest.value)))
        return None

    def end(self, toward_private: bool) -> tuple[Fraction | None, bool]:
        """The end of the range in a direction, and whether that end is itself admissible."""
        r = self.range
        going_up = toward_private == (self.sign != INCREASING)
        return (r.high, r.high_closed) if going_up else (r.low, r.low_closed)

    def bracket(self, first: Probe, full: bool) -> tuple[Probe, Probe | None]:
        """A feasible and an infeasible probe (or the feasible least private end, None)."""
        ok = self.feasible(first)
        toward_private = not ok
        going_up = toward_private == (self.sign != INCREASING)
        end, end_closed = self.end(toward_private)
        limit_x = math.log(first.value) + (1 if going_up else -1) * math.log(SPAN)
        if end is not None:
            end_v = end if end_closed else self.inside(end, up=not going_up)
            limit_x = math.log(end_v) if end_v > 0 else limit_x
        elif self.range.integer and not going_up:
            limit_x = 0.0
        prev, cur = None, first
        while self.feasible(cur) == ok:
            x = math.log(cur.value)
            at_limit = (x >= limit_x - 1e-12) if going_up else (x <= limit_x + 1e-12)
            v = None
            if not at_limit:
                step = self.step(prev, cur)
                x_next = min(x + step, limit_x) if going_up else max(x - step, limit_x)
                v = self.snap(x_next, toward_private, window=0.05 * step)
                if v == cur.value:
                    v = self.clip(self.inside(cur.value, up=going_up))
            if v is None or v == cur.value:  # the end of the range
                if ok:
                    return cur, None
                if not cur.full:  # the quick bounds are looser: ask for the tightest
                    cur = self.probe(cur.value, full=True)
                    if self.feasible(cur):
                        return cur, prev
                raise self.unmet(cur)
            prev, cur = cur, self.probe(v, full)
        if prev is None:  # cannot happen: the loop ran because the first probe had the status
            raise ArithmeticError("calibration search: empty bracket")
        return (prev, cur) if ok else (cur, prev)

    def step(self, prev: Probe | None, cur: Probe) -> float:
        """How far (in log v) to move next: half again the extrapolated distance to the
        crossing (to land beyond it), between log 1.01 and log MAX_STEP."""
        y = self.y(cur)
        slope = FIRST_SLOPE  # |d log upper / d log v| assumed at first
        if prev is not None:
            dy, dx = self.y(cur) - self.y(prev), math.log(cur.value) - math.log(prev.value)
            if math.isfinite(dy) and dx != 0 and dy != 0:
                slope = abs(dy / dx)
        wanted = abs(y) / slope * 1.5 if math.isfinite(y) and slope > 0 else math.log(MAX_STEP)
        return min(max(wanted, math.log(1.01)), math.log(MAX_STEP))

    def close(self, good: Probe, bad: Probe, full: bool) -> tuple[Probe, Probe]:
        """Shrink the bracket [good, bad] until its ends are within the tolerance (for quick
        bounds, or within the band between their lower and upper bounds: the full bound lies
        in that band, so a closer quick crossing says no more; or :data:`QUICK_WIDTH`, or
        until the secant of the latest two values puts the crossing within a quarter of that
        of the latest, feasible, one)."""
        last = (good, bad)  # the two latest probes: their secant, while it stays inside
        width = None if full else max(self.band(good, bad), QUICK_WIDTH)
        widths = [self.width(good, bad)]
        while not self.closed(good, bad, width):
            estimate = self.crossing(*last)
            lo, hi = sorted((math.log(good.value), math.log(bad.value)))
            if _stalled(widths):
                estimate = (lo + hi) / 2
            elif not lo < estimate < hi:  # regula falsi through the bracket's ends
                estimate = self.crossing(good, bad)
            elif (
                width is not None
                and last[1] is good
                and abs(estimate - math.log(good.value)) <= width / 4
            ):
                break  # the latest value is feasible and that near the quick crossing
            v = self.next_value(estimate, good.value, bad.value)
            if v is None:
                break  # no representable value between the ends
            p = self.probe(v, full)
            last = (last[1], p)
            if self.feasible(p):
                good = p
            else:
                bad = p
            widths.append(self.width(good, bad))
        return good, bad

    def width(self, a: Probe, b: Probe) -> float:
        """The distance between two probes' values, in log v."""
        return abs(math.log(a.value) - math.log(b.value))

    def crossing(self, a: Probe, b: Probe) -> float:
        """Where log upper crosses log target, by the secant through two probes (log v); the
        middle when the secant is undefined or a bound lies at the foot of a cliff (below
        :data:`CLIFF`: the secant through it lands next to the other end)."""
        xa, xb = math.log(a.value), math.log(b.value)
        ya, yb = self.y(a), self.y(b)
        if math.isfinite(ya) and math.isfinite(yb) and ya != yb and min(ya, yb) >= CLIFF:
            return xa - ya * (xb - xa) / (yb - ya)
        return (xa + xb) / 2

    def next_value(self, estimate: float, good: Fraction, bad: Fraction) -> Fraction | None:
        """The next value inside (good, bad): the estimate moved half the tolerance towards
        the farther end (so that two evaluations close the bracket once the estimate is right
        within it), kept off the ends; the middle when that collapses onto an end."""
        xg, xb = math.log(good), math.log(bad)
        lo, hi = min(xg, xb), max(xg, xb)
        margin = (hi - lo) * 0.02
        estimate = min(max(estimate, lo + margin), hi - margin)
        # the shortest decimal between the estimate and half the tolerance beyond it
        quarter = math.log1p(RELATIVE_TOLERANCE) / 4
        toward_good = abs(estimate - xg) >= abs(estimate - xb)
        x = estimate + (quarter if (xg > estimate) == toward_good else -quarter)
        v = self.snap(x, toward_private=toward_good, window=quarter)
        if self.between(v, good, bad):
            return v
        if self.range.integer:
            v = Fraction((good + bad) // 2)
        else:
            v = self.snap((xg + xb) / 2, toward_private=True, window=(hi - lo) / 8)
        return v if self.between(v, good, bad) else None

    def band(self, good: Probe, bad: Probe) -> float:
        """The quick band at the crossing, in log v (0 when unknown): the full bound lies
        somewhere in it, so a closer quick crossing says nothing more."""
        if good.lower <= 0 or not math.isfinite(good.upper):
            return 0.0
        slope = abs(self.slope(good, bad))
        return math.log(good.upper / good.lower) / slope if slope > 0 else 0.0

    def refine(self, good: Probe, bad: Probe) -> SearchResult:
        """From the quick bracket to the tightest bounds: the accountant's full evaluation at
        the quick feasible end (feasible: the tightest bound is below the quick one), then at
        the crossing predicted by the quick bounds' slope through the nearest full
        evaluations, until the full evaluations close the bracket or the prediction lies
        within the tolerance of the best full value."""
        slope = self.quick_slope(good)
        worse = bad if bad.full else None  # quick bounds that were the tightest already
        guess = None if worse is not None else self.first_guess(good, slope)
        best = None
        if guess is not None:
            p = self.probe(guess, full=True)
            if self.feasible(p):
                best = p
            else:  # once more from there, along the quick slope, before the sure value
                worse = p
                retry = self.beside(p, slope, good.value)
                q = None if retry is None else self.probe(retry, full=True)
                if q is not None and self.feasible(q):
                    best = q
        if best is None:
            best = self.probe(good.value, full=True)
            if not self.feasible(best):  # a bug in a rule: the tighter bound is larger
                raise ArithmeticError(
                    f"calibration search: the full bound at {self.name} = {_text(good.value)} "
                    f"({best.upper!r}) exceeds its quick bound ({good.upper!r}); please report "
                    "this"
                )
        widths: list[float] = []
        while worse is None or not self.closed(best, worse):
            fulls = [p for p in self.probes if p.full and math.isfinite(self.y(p))]
            if worse is not None:
                widths.append(self.width(best, worse))
                estimate = self.crossing(best, worse)
                if _stalled(widths):
                    estimate = (math.log(best.value) + math.log(worse.value)) / 2
            elif (
                len(fulls) >= 2
                and self.secant_ok(fulls[-1], fulls[-2])
                and min(self.y(fulls[-1]), self.y(fulls[-2])) >= CLIFF
            ):
                estimate = self.crossing(fulls[-1], fulls[-2])
            else:
                y = self.y(best)
                if not math.isfinite(y) or slope == 0 or y < CLIFF:
                    # no slope to extrapolate along (a bound of exactly 0, as for a pure-DP
                    # cliff, or one so far below the target that it is rounding, a cliff
                    # too): the quick bracket's other end, in full, closes the bracket
                    if bad.full or self.private(bad.value, best.value):
                        break
                    p = self.probe(bad.value, full=True)
                    if self.feasible(p):
                        best = p  # feasible in full where the quick bound was not: the
                        break  # best value the quick bracket can show
                    worse = p
                    continue
                estimate = math.log(best.value) - y / slope
            if worse is None:
                gap = abs(estimate - math.log(best.value))
                if gap <= math.log1p(RELATIVE_TOLERANCE) or self.private(
                    self.snap(estimate, True), best.value
                ):
                    break  # the crossing is within the tolerance of the best value
                quarter = math.log1p(RELATIVE_TOLERANCE) / 4
                toward = 1.0 if math.log(best.value) > estimate else -1.0
                v = self.snap(estimate + toward * quarter, toward_private=True, window=quarter)
                if v == best.value:
                    break
            else:
                if abs(estimate - math.log(best.value)) <= math.log1p(RELATIVE_TOLERANCE):
                    break  # the secant of two full bounds puts the crossing that close
                inner = self.next_value(estimate, best.value, worse.value)
                if inner is None:
                    break
                v = inner
            seen = len(self.probes)
            p = self.probe(v, full=True)
            if len(self.probes) == seen:
                break  # a value evaluated before: the estimates go round in a circle
            if self.feasible(p):
                if not self.private(p.value, best.value):
                    best = p
            elif worse is None or self.private(p.value, worse.value):
                worse = p
        return self.result(best, worse)

    def first_guess(self, good: Probe, slope: float) -> Fraction | None:
        """Where the first full evaluation goes: the crossing of the full bound predicted from
        the quick feasible end, the full bound taken :data:`BAND_SHARE` of the way up the
        quick band there and extrapolated along the quick slope; on the private side of that
        by a quarter of the tolerance.  None when it cannot be predicted or lies no further
        than ``good`` (the first full evaluation is then at ``good``, feasible for sure)."""
        if good.lower <= 0 or not math.isfinite(good.upper) or slope == 0 or self.target <= 0:
            return None
        predicted = good.lower + BAND_SHARE * (good.upper - good.lower)
        if predicted <= 0:
            return None
        x = math.log(good.value) - math.log(predicted / self.target) / slope
        quarter = math.log1p(RELATIVE_TOLERANCE) / 4
        toward = 1.0 if math.log(good.value) > x else -1.0
        v = self.snap(x + toward * quarter, toward_private=True, window=quarter)
        return None if not self.private(good.value, v) else v

    def beside(self, p: Probe, slope: float, good: Fraction) -> Fraction | None:
        """The crossing extrapolated from an infeasible full probe along the quick slope, on
        its private side by a quarter of the tolerance; None unless strictly between ``p``
        and the quick feasible value ``good``."""
        y = self.y(p)
        if not math.isfinite(y) or slope == 0:
            return None
        quarter = math.log1p(RELATIVE_TOLERANCE) / 4
        x = math.log(p.value) - y / slope
        toward = 1.0 if math.log(good) > x else -1.0
        v = self.snap(x + toward * quarter, toward_private=True, window=quarter)
        return v if self.between(v, p.value, good) else None

    def slope(self, a: Probe, b: Probe) -> float:
        """d log upper / d log v through two probes (0 when undefined)."""
        dx = math.log(a.value) - math.log(b.value)
        dy = self.y(a) - self.y(b)
        return dy / dx if dx != 0 and math.isfinite(dy) else 0.0

    def quick_slope(self, near: Probe) -> float:
        """d log upper / d log v of the quick bounds near a probe, through two quick probes
        at least 1% apart (closer ones see the grid's wiggles more than the slope)."""
        quick = [p for p in self.probes if not p.full and math.isfinite(self.y(p))]
        x0 = math.log(near.value)
        best: tuple[float, float] | None = None
        for i, a in enumerate(quick):
            for b in quick[i + 1 :]:
                xa, xb = math.log(a.value), math.log(b.value)
                if abs(xa - xb) < 0.01:
                    continue
                cost = abs(xa - x0) + abs(xb - x0)
                if best is None or cost < best[0]:
                    best = (cost, self.slope(a, b))
        return 0.0 if best is None else best[1]

    def secant_ok(self, a: Probe, b: Probe) -> bool:
        """Whether the secant through two full probes has the expected sign of slope."""
        s = self.slope(a, b)
        return s != 0 and (s > 0) == (self.sign == INCREASING)

    def between(self, v: Fraction, a: Fraction, b: Fraction) -> bool:
        return min(a, b) < v < max(a, b)

    def closed(self, good: Probe, bad: Probe, width: float | None = None) -> bool:
        """Whether the ends are adjacent integers or within the tolerance (or ``width``, in
        log v, when larger)."""
        if abs(good.value - bad.value) <= 1 and self.range.integer:
            return True
        ratio = max(good.value, bad.value) / min(good.value, bad.value)
        return math.log(ratio) <= max(math.log1p(RELATIVE_TOLERANCE), width or 0.0)

    def result(self, best: Probe, rejected: Probe | None) -> SearchResult:
        beyond = [
            p
            for p in self.probes
            if p.lower > self.target and not self.private(p.value, best.value)
        ]
        infeasible = None
        if beyond:  # the one nearest to the best value
            infeasible = min(beyond, key=lambda p: abs(math.log(p.value / best.value)))
        return SearchResult(best, rejected, infeasible, tuple(self.probes))

    def unmet(self, p: Probe) -> CalibrationError:
        where = (
            f"no value of {self.name} meets the target: at {self.name} = {_text(p.value)}, the "
            f"most private value searched in {self.range.text(self.name)}, "
        )
        if math.isfinite(p.upper):
            found = f"{self.quantity} <= {p.upper:.6g} is the best certified bound"
        else:
            why = f" ({p.result})" if isinstance(p.result, str) else ""
            found = f"no result bounds {self.quantity}{why}"
        return CalibrationError(f"{where}{found} (the target is {self.target:.6g})")


def search(
    quick: Callable[[Fraction], Probe],
    full: Callable[[Fraction], Probe],
    *,
    target: float,
    sign: int,
    where: Range,
    start: Fraction,
    name: str,
    quantity: str,
    forecast: tuple[Fraction, float] | None = None,
) -> SearchResult:
    """The best value of a parameter whose certified bound meets ``target``.

    Args:
        quick: value -> :class:`Probe`, certified bounds at exactly that value that may be
            loose (the coarsest grid), for the first phase.
        full: value -> :class:`Probe`, the accountant's tightest certified bounds there.
        target: the target, a float rounded down (feasible: ``upper <= target``).
        sign: :data:`~dpaudit.accountant.parameter_roles.INCREASING` when the quantity grows
            with the parameter (the best value is the largest feasible one), else
            ``DECREASING`` (the smallest).
        where: the admissible values.
        start: the first value evaluated.
        name: the parameter's name (for messages).
        quantity: what is bounded ("epsilon" or "delta", for messages).
        forecast: ``(value, slope)``: where a forecast puts the crossing of the full bound and
            its ``d log quantity / d log v`` there (a guess, not a bound): the search starts
            with full evaluations there (:meth:`_Search.settle`), and searches as usual from
            ``start`` only when they do not settle.

    Returns:
        A :class:`SearchResult` whose ``best`` is a full evaluation.

    Raises:
        CalibrationError: when no value in the range meets the target, or after
            :data:`MAX_EVALUATIONS` evaluations.
        NotMonotoneError: when two evaluations contradict monotonicity.
    """
    searching = _Search(quick, full, target, sign, where, name, quantity)
    if forecast is not None:
        settled = searching.settle(*forecast)
        if settled is not None:
            return settled
    return searching.run(start)
