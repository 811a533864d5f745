"""The currencies of the tight rules (:mod:`dpaudit.accountant.tight`): statements that are
whole privacy profiles, evaluated at the requested delta.

* :class:`LossDistribution` -- a :class:`~dpaudit.pld.PLDPair` with certified upper and lower
  profiles.
* :class:`OptimalComposition` -- k-fold composition by the exact Kairouz-Oh-Viswanath formula.
* :class:`AdvancedComposition` -- Dwork-Rothblum-Vadhan.
* :class:`RenyiCurve` -- an RDP curve on integer orders (and real ones where it is known).
* :class:`BoundedRangeComposition` -- composition of bounded-range mechanisms.

Also the accountant's memo of built privacy-loss distributions (:func:`_memo`).
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpaudit import events as ev
from dpaudit.accountant.domains import admit, with_params
from dpaudit.accountant.statements import (
    Candidate,
    Statement,
    Step,
    exact_zero,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import is_sympy_object
from dpaudit.numeric import (
    EvaluationError,
    exact_value,
    float_down,
    float_up,
    from_float,
)
from dpaudit.theorems import advanced, optimal, rdp
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems.accounting import PLD_ACCOUNTING

if TYPE_CHECKING:  # the pld package (and numpy) is imported where a PLD is built
    from dpaudit import pld

#: Grid step of the privacy-loss distributions built by the accountant.
VALUE_DISCRETIZATION = 1e-4


def _number(value: Any) -> float | None:
    """A finite float for a numeric exact value; None for a symbolic one or one beyond the
    float range (10**400 became inf, and ``int(inf)`` in a PLD builder an OverflowError):
    the float-based constructions then do not apply, the exact theorems still do."""
    expr = exact_value(value)
    if expr.free_symbols:
        return None
    try:
        x = float(expr)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) else None


def _rational_up(x: float) -> sympy.Expr:
    return from_float(x)


@dataclasses.dataclass(frozen=True)
class LossDistribution(Statement):
    """A privacy loss distribution (both directions) of the event, built on demand.

    ``build(h)`` returns the event's :class:`~dpaudit.pld.PLDPair` on the grid of step h (or
    None when the construction does not apply, e.g. the support is too large for the grid);
    :meth:`candidates` refines the grid until the certified bounds are close enough.
    """

    build: Callable[[float], pld.PLDPair | None]
    tight: bool = True
    currency = "pld"
    costly = True

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = _number(delta) if delta is not None else None
        if d is None or not (0 < d < 1):
            return []
        checks = admit(PLD_ACCOUNTING, self.step.event, {"delta": delta})
        if checks is None:
            return []
        found = refined_epsilon_bounds(self.build, d)
        if found is None:
            return []
        lo, hi, h = found
        upper = from_float(max(hi, 0.0))
        lower = from_float(lo) if self.tight and self.exact_profile and lo > 0 else None
        step = Step(
            PLD_ACCOUNTING,
            self.step.event,
            f"({show(upper)}, {show(delta)})-DP",
            f"epsilon in [{lo:.10g}, {hi:.10g}] at delta = {show(delta)} (grid {h:g})",
            (self.step,),
            note=(
                "upper: connect-the-dots dominating pair; lower: post-processed pair"
                if self.tight
                else "dominating pair of a family: upper bound only"
            ),
            checks=checks,
        )
        return [Candidate(upper, delta, step, lower)]


#: While True, a PLD's bounds are computed on the first (coarsest) grid only, not refined:
#: certified, looser and several times faster.  A calibration's search sets it for its first
#: phase (:mod:`dpaudit.accountant.calibration_search`); a context variable, so each thread
#: and task has its own.
COARSEST_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dpaudit_coarsest_only", default=False
)

#: While False, a PLD composed in blocks is not recomputed in one transform for a small delta
#: (:meth:`dpaudit.pld.PrivacyLossDistribution.epsilon_bounds`, ``reserve``): that sharpens
#: only the lower bound (and the upper one by a hair), which a calibration's search does not
#: decide on; its evaluation at the value found keeps it (DP-SGD at 10^6 steps, delta 1e-6:
#: a calibration took 5.6 CPU s with it in every evaluation, against 1.5 s without).  A
#: context variable, so each thread and task has its own.
ONE_TRANSFORM_RESERVE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dpaudit_one_transform_reserve", default=True
)


@dataclasses.dataclass
class GridHint:
    """Where to start refining a PLD's grid: a calibration's evaluations at nearby values end
    on about the same grid, so each one after the first starts on the grid the previous one
    ended on (``start``, written back by :func:`refined_epsilon_bounds` unless ``fixed``)
    instead of building the coarser grids again.  Any grid's bounds are certified; this only
    saves their cost."""

    start: float | None = None
    fixed: bool = False
    #: whether ``start`` is the grid a refined evaluation ended on (else a coarse evaluation's
    #: guess, :func:`next_grid` from its gap)
    refined: bool = False


#: The grid hint of the current context (None: start on :data:`COARSEST_GRID`); a calibration
#: sets its own for its evaluations (:mod:`dpaudit.accountant.pld_probe`).
GRID_HINT: contextvars.ContextVar[GridHint | None] = contextvars.ContextVar(
    "dpaudit_grid_hint", default=None
)


#: The PLD grid: the first (coarsest) step tried, the finest step (:data:`VALUE_DISCRETIZATION`)
#: and the target: the grid is refined while the certified gap ``upper - lower`` exceeds
#: ``TARGET_GAP * upper``.
COARSEST_GRID = 1e-3
FINEST_GRID = VALUE_DISCRETIZATION
TARGET_GAP = 3e-4


def refined_epsilon_bounds(
    build: Callable[[float], pld.PLDPair | None], delta: float
) -> tuple[float, float, float] | None:
    """Certified ``(lower, upper, h)`` for the PLD ``build(h)`` at ``delta``.

    Starts on the coarse grid :data:`COARSEST_GRID` (and stays there while
    :data:`COARSEST_ONLY` is set) and refines while the gap between the
    certified bounds is above :data:`TARGET_GAP` times the upper bound, down to
    :data:`FINEST_GRID`.  Every grid gives certified bounds, so the best of each side is
    kept.  The discretisation error of the connect-the-dots pair shrinks about like h^2, so
    the next step is ``h sqrt(target / gap)`` (with a safety factor), at most h / 2, or ``h
    (target / gap)^(1/p)`` once two grids have shown the gap shrinking like ``h^p`` with
    ``p < 2`` (long compositions of distinct parts, where rounding and the lower side's error
    terms weigh more than discretisation); a fine
    grid is built only when a coarse one is not accurate enough (for bounded losses, such as
    Laplace's, the coarse grid is also the tighter one: the FFT's rounding bound grows with
    the grid's length).

    With a :data:`GRID_HINT` set, starts on its grid instead and records there the grid the
    upper bound came from.

    Returns None when no grid gives a finite upper bound.
    """
    hint = GRID_HINT.get()
    h = COARSEST_GRID
    if hint is not None and hint.start is not None:
        h = min(COARSEST_GRID, max(FINEST_GRID, hint.start))
    best_lo, best_hi, used = 0.0, math.inf, h
    previous: tuple[float, float] | None = None  # (h, gap) of the grid before
    coarsest_only = COARSEST_ONLY.get()
    reserve = ONE_TRANSFORM_RESERVE.get()
    while True:
        pair = build(h)
        coarsened = False
        if pair is not None:
            lo, hi = pair.epsilon_bounds(delta, reserve=reserve)
            best_lo = max(best_lo, lo)
            # the composition outgrew the grid budget (dpaudit.pld.GRID_BUDGET) and was
            # computed on a coarser grid: a finer leaf grid would be coarsened the same way
            # (a composition in blocks, dpaudit.pld.blocks, also ends on a coarser grid, but
            # one that a finer leaf grid refines)
            coarsened = pair.budgeted
            if hi < best_hi:
                best_hi, used = hi, (pair.h if coarsened else h)
        gap = best_hi - best_lo
        if h <= FINEST_GRID or gap <= TARGET_GAP * best_hi or coarsened or coarsest_only:
            break
        # the gap's order in h, measured on the last two grids (2 for one composition; about
        # 0.5 for a thousand distinct DP-SGD phases, where assuming 2 cost a grid more)
        order = 2.0
        if previous is not None and 0 < gap < previous[1] and math.isfinite(previous[1]):
            order = min(2.0, max(0.5, math.log(previous[1] / gap) / math.log(previous[0] / h)))
        previous = (h, gap)
        h = next_grid(h, gap, best_hi, order)
    if not math.isfinite(best_hi):
        return None
    if hint is not None and not (coarsest_only or hint.fixed):
        hint.start, hint.refined = used, True
    return min(best_lo, best_hi), best_hi, used


def next_grid(h: float, gap: float, upper: float, order: float = 2.0) -> float:
    """The grid :func:`refined_epsilon_bounds` builds after one of step ``h`` whose certified
    gap ``upper - lower`` is ``gap`` (above :data:`TARGET_GAP` times ``upper``), the gap taken
    to shrink like ``h^order``: ``h (target / gap)^(1/order)`` with a safety factor 0.7, at
    least ten and at most two times finer, never finer than :data:`FINEST_GRID`."""
    ratio = TARGET_GAP * upper / gap if math.isfinite(gap) else 0.0
    shrink = 0.7 * ratio ** (1 / order) if ratio > 0 else 0.1
    return max(FINEST_GRID, h * min(0.5, max(0.1, shrink)))


@dataclasses.dataclass(frozen=True)
class OptimalComposition(Statement):
    """k-fold composition of an (epsilon0, delta0)-DP mechanism, resolved at the target delta."""

    epsilon0: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    delta0: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    count: int = 1
    currency = "optimal"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or _number(delta) is None or _number(self.epsilon0) is None:
            return []
        checks = admit(
            optimal.OPTIMAL_COMPOSITION,
            self.step.event,
            {"epsilon": self.epsilon0, "delta": self.delta0, "k": self.count, "delta_g": delta},
        )
        if checks is None:
            return []
        # certified floats first (fast); the exact closed form only when they are unavailable
        try:
            bounds = optimal.optimal_epsilon_bounds(self.epsilon0, self.delta0, self.count, delta)
            if bounds is not None:
                eps, eps_low = from_float(bounds[1]), from_float(bounds[0])
                how = f"eps_g in [{bounds[0]:.12g}, {bounds[1]:.12g}] (interval-verified)"
            else:
                eps = eps_low = optimal.optimal_epsilon(
                    self.epsilon0, self.delta0, self.count, delta
                )
                how = "exact closed form"
        except (ValueError, EvaluationError):
            return []
        step = Step(
            optimal.OPTIMAL_COMPOSITION,
            self.step.event,
            f"({show(eps)}, {show(delta)})-DP",
            f"smallest eps_g with delta_g(eps_g) <= {show(delta)}, k = {self.count}, "
            f"eps_0 = {show(self.epsilon0)}, delta_0 = {show(self.delta0)}: {how}",
            (self.step,),
            checks=with_params(checks, {"epsilon_g": eps}),
        )
        # the bound is attained by k-fold binary randomized response, so for that event, and
        # for a generic eps-DP event (whose worst case is randomized response), it is also the
        # exact value (a certified lower bound), as the PLD of those events would certify
        exact_here = self.delta0 == 0 and _copies_binomial_exact(self.step.event, self.count)
        return [Candidate(eps, delta, step, eps_low if exact_here else None)]


@dataclasses.dataclass(frozen=True)
class AdvancedComposition(Statement):
    """k-fold advanced composition, with slack delta' = target delta - k delta0."""

    epsilon0: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    delta0: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    count: int = 1
    currency = "advanced"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or _number(delta) is None or _number(self.epsilon0) is None:
            return []
        slack = exact_value(delta) - self.count * self.delta0
        checks = admit(
            advanced.ADVANCED_COMPOSITION,
            self.step.event,
            {"epsilon": self.epsilon0, "delta": self.delta0, "k": self.count, "delta'": slack},
        )
        if checks is None:
            return []
        eps, dlt = advanced.advanced_composition(self.epsilon0, self.delta0, self.count, slack)
        step = Step(
            advanced.ADVANCED_COMPOSITION,
            self.step.event,
            f"({show(eps)}, {show(dlt)})-DP",
            f"eps = sqrt(2k ln(1/delta')) eps_0 + k eps_0 (e^eps_0 - 1), k = {self.count},"
            f" delta' = {show(slack)}",
            (self.step,),
            checks=checks,
        )
        return [Candidate(eps, dlt, step)]


@dataclasses.dataclass(frozen=True)
class RenyiCurve(Statement):
    """An RDP curve tau(alpha) on integer orders (numeric values, exact at the chosen order).

    ``tau_upper``, when given, is a callable order -> a rational upper bound on tau (an
    interval evaluation rounded up), used instead of the exact expression for speed: the
    conversion to (eps, delta) increases with tau, so the result is still an upper bound.

    ``tau_real``, when given, is tau at any real order > 1 in floats (only to choose the
    order): the curve is then known in closed form between its integer orders (Gaussian,
    Laplace, randomized response: Mironov 2017, Table II holds for every alpha > 1, and so
    for their k-fold compositions) and ``exact_tau`` and ``tau_upper`` accept rational
    orders; the conversion is then made at the best real order near the best integer one
    (:func:`~dpaudit.theorems.rdp.choose_real_order`).
    """

    orders: tuple[int, ...] = ()
    taus: tuple[sympy.Expr, ...] = ()
    exact_tau: Any = None  # callable order -> exact tau, used for the chosen order
    tau_upper: Any = None
    tau_real: Any = None  # callable real order -> tau in floats (None: integer orders only)
    currency = "rdp"

    def order(self, delta: sympy.Expr) -> Any:
        """The order to convert at: the best integer order (floats: only a choice), refined
        to a real order when the curve is known between integers."""
        order = rdp.choose_order(self.orders, self.taus, delta)
        if self.tau_real is None:
            return order
        return rdp.choose_real_order(self.tau_real, order, delta)

    def estimate(self, delta: sympy.Expr | None) -> float | None:
        """The chosen integer order's conversion in floats (None with a real-order curve: the
        real order's conversion may be smaller)."""
        d = None if delta is None else _number(delta)
        if d is None or not 0 < d < 1 or self.tau_real is not None or not self.taus:
            return None
        try:
            found = rdp.conversion_estimate(self.orders, self.taus, delta)[1]
        except (TypeError, ValueError, OverflowError):
            return None
        return found if math.isfinite(found) else None

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = None if delta is None else _number(delta)
        if d is None or not 0 < d < 1:
            return []
        order = self.order(delta)
        checks = admit(rdp.RDP_CONVERSION, self.step.event, {"alpha": order, "delta": delta})
        if checks is None:
            return []
        tau = (self.tau_upper or self.exact_tau)(order)
        # no finite divergence: no (eps, delta)
        if is_sympy_object(tau) and tau in (sympy.oo, sympy.zoo, sympy.nan):
            return []
        eps, _ = rdp.rdp_to_approx([order], [tau], delta)
        step = Step(
            rdp.RDP_CONVERSION,
            self.step.event,
            f"({show(eps)}, {show(delta)})-DP",
            f"order alpha = {show(order)}",
            (self.step,),
            checks=with_params(checks, {"tau": tau}),
        )
        return [Candidate(eps, delta, step)]


@dataclasses.dataclass(frozen=True)
class BoundedRangeComposition(Statement):
    """k adaptively composed eps-BR mechanisms (Dong, Durfee, Rogers 2020), resolved at the
    target delta by the dynamic programme of :func:`~dpaudit.theorems.bounded_range.
    bounded_range_composition_bounds`: an upper bound, and a certified lower bound on the
    optimum for the class (an adaptive composition of exponential mechanisms attains it)."""

    epsilon0: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    count: int = 1
    currency = "bounded_range"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = _number(delta) if delta is not None else None
        if d is None or _number(self.epsilon0) is None or not (0 < d < 1):
            return []
        checks = admit(
            br.BR_ADAPTIVE_COMPOSITION,
            self.step.event,
            {"epsilon": self.epsilon0, "k": self.count, "delta": delta},
        )
        if checks is None:
            return []
        # the class grows with eps: the upper side runs with eps rounded up, the lower side
        # with eps rounded down
        e_up, e_dn = float_up(self.epsilon0), float_down(self.epsilon0)

        def bounds() -> tuple[float, float] | None:
            if e_up == e_dn:
                return br.bounded_range_composition_bounds(e_up, self.count, d)
            hi = br.bounded_range_composition_bounds(e_up, self.count, d, sides="upper")[1]
            lo = (
                br.bounded_range_composition_bounds(e_dn, self.count, d, sides="lower")[0]
                if e_dn > 0
                else 0.0
            )
            return lo, hi

        found = _memo(("br_dp", self.epsilon0, self.count, d), lambda: _safe(bounds))
        if found is None or not math.isfinite(found[1]):
            return []
        lo, hi = found
        eps = from_float(hi)
        step = Step(
            br.BR_ADAPTIVE_COMPOSITION,
            self.step.event,
            f"({show(eps)}, {show(delta)})-DP",
            f"V_{self.count}(eps) <= {show(delta)} for {self.count} adaptive "
            f"{show(self.epsilon0)}-BR mechanisms: optimum in [{lo:.6g}, {hi:.6g}] "
            "(grid dynamic programme)",
            (self.step,),
            note=(
                "lower: an adaptive composition of exponential mechanisms with "
                "these parameters is not (lower, delta)-DP"
            ),
            checks=checks,
        )
        return [Candidate(eps, delta, step, from_float(lo) if lo > 0 else None)]


_PLD_MEMO: collections.OrderedDict[tuple[Any, ...], Any] = collections.OrderedDict()
_PLD_MEMO_SIZE = 48


_PLD_MEMO_LOCK = threading.Lock()  # get/move/evict race between threads without it


def _memo(key: tuple[Any, ...], build: Any) -> Any:
    """``build()`` memoised on ``key`` (an event, what is done to it, and the grid step): a PLD
    is a function of its event, and the same sub-events recur across queries.  Thread-safe:
    the memo is read and updated under a lock (``build`` runs outside it; two threads may
    both build the same PLD, and either result is the same)."""
    try:
        with _PLD_MEMO_LOCK:
            hit = _PLD_MEMO.get(key)
            if hit is not None:
                _PLD_MEMO.move_to_end(key)
    except TypeError:  # unhashable parameters: no memo
        return build()
    if hit is not None:
        return hit
    value = build()
    if value is not None:
        with _PLD_MEMO_LOCK:
            _PLD_MEMO[key] = value
            while len(_PLD_MEMO) > _PLD_MEMO_SIZE:
                _PLD_MEMO.popitem(last=False)
    return value


def _safe(fn: Any) -> Any:
    """Run a PLD construction; a ValueError (grid too large, extreme parameters) means the
    PLD result does not apply here, and the other results still do."""
    try:
        return fn()
    except (ValueError, OverflowError, MemoryError):
        return None


def _copies_binomial_exact(event: Event, count: int) -> bool:
    """Whether ``event`` (a composition, or a wrapper such as a k-fold self-composition)
    consists of copies of one event that :func:`_binomial_exact` resolves exactly."""
    parts = getattr(event, "events", None) or (getattr(event, "event", None),)
    first = parts[0]
    return (
        all(p == first for p in parts)
        and isinstance(first, Event)
        and _binomial_exact(first, count)
    )


def _binomial_exact(event: Event, count: int) -> bool:
    """Whether ``count`` copies of ``event`` are resolved exactly by :class:`OptimalComposition`:
    binary randomized response, and a generic eps-DP mechanism (whose dominating pair is
    binary randomized response; Kairouz, Oh, Viswanath 2015, Theorem 3.3), have a two-point
    privacy loss, so their k-fold loss is binomial and the FFT PLD would only approximate it."""
    if count > optimal.MAX_EXACT_COUNT:
        return False
    if isinstance(event, ev.RandomizedResponse):
        return _number(event.categories) == 2 and _number(event.epsilon) is not None
    return isinstance(event, ev.PureDP) and _number(event.epsilon) is not None
