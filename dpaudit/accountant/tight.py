"""Tight accounting rules: PLD, optimal, advanced and Renyi composition, bounded range.

Importing this module adds rules to :data:`~dpaudit.accountant.rules.RULES`; they sit beside
the basic rules, so every node keeps all the results whose assumptions hold and the
accountant chooses the tightest, listing the candidates it compared.  The new currencies
compute their epsilon at the requested delta (they are whole privacy profiles, not one
(eps, delta) point):

* :class:`LossDistribution` -- a :class:`~dpaudit.pld.PLDPair` with certified upper and lower
  profiles; its candidates carry ``epsilon_lower`` when the discretised pair is the event's
  own (not merely a dominating pair of a family).
* :class:`OptimalComposition` -- k-fold composition of an (eps, delta)-DP mechanism by the
  exact Kairouz-Oh-Viswanath formula.
* :class:`AdvancedComposition` -- Dwork-Rothblum-Vadhan with the slack delta' equal to the
  requested delta minus k delta_0.
* :class:`RenyiCurve` -- an RDP curve on integer orders, converted with Balle et al. 2020.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import threading
from collections.abc import Callable
from typing import Any

import sympy

from dpaudit import events as ev
from dpaudit import pld
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, best_candidate, of_currency, register_rule
from dpaudit.accountant.statements import (
    Approx,
    Candidate,
    Concentrated,
    Pure,
    Statement,
    Step,
    compare,
    show,
)
from dpaudit.events.base import Event
from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, float_down, float_up, from_float
from dpaudit.theorems import advanced, optimal, rdp
from dpaudit.theorems import amplification as amp
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems.accounting import PLD_ACCOUNTING, PLD_PAIRS
from dpaudit.theorems.base import Theorem

__all__ = [
    "LEAF_ORDERS",
    "PLD_ACCOUNTING",
    "PLD_PAIRS",
    "AdvancedComposition",
    "BoundedRangeComposition",
    "LossDistribution",
    "OptimalComposition",
    "RenyiCurve",
]

#: Grid step of the privacy-loss distributions built by the accountant.
VALUE_DISCRETIZATION = 1e-4


def _number(value: Any) -> float | None:
    """A float for a numeric exact value, None for a symbolic one."""
    expr = as_expr(value)
    if expr.free_symbols:
        return None
    try:
        return float(expr)
    except (TypeError, ValueError):
        return None


def _rational_up(x: float) -> sympy.Expr:
    return from_float(x)


@dataclasses.dataclass(frozen=True)
class LossDistribution(Statement):
    """A privacy loss distribution (both directions) of the event, built on demand.

    ``build(h)`` returns the event's :class:`~dpaudit.pld.PLDPair` on the grid of step h (or
    None when the construction does not apply, e.g. the support is too large for the grid);
    :meth:`candidates` refines the grid until the certified bounds are close enough.
    """

    build: Callable[[float], pld.PLDPair | None] | None = None
    tight: bool = True
    currency = "pld"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = _number(delta) if delta is not None else None
        if self.build is None or d is None or not (0 < d < 1):
            return []
        checks = admit(PLD_ACCOUNTING, self.step.event, {"delta": delta})
        if checks is None:
            return []
        found = refined_epsilon_bounds(self.build, d)
        if found is None:
            return []
        lo, hi, h = found
        upper = sympy.Rational(max(hi, 0.0))
        lower = sympy.Rational(lo) if self.tight and self.exact_profile and lo > 0 else None
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

    Starts on the coarse grid :data:`COARSEST_GRID` and refines while the gap between the
    certified bounds is above :data:`TARGET_GAP` times the upper bound, down to
    :data:`FINEST_GRID`.  Every grid gives certified bounds, so the best of each side is
    kept.  The discretisation error of the connect-the-dots pair shrinks about like h^2, so
    the next step is ``h sqrt(target / gap)`` (with a safety factor), at most h / 2; a fine
    grid is built only when a coarse one is not accurate enough (for bounded losses, such as
    Laplace's, the coarse grid is also the tighter one: the FFT's rounding bound grows with
    the grid's length).

    Returns None when no grid gives a finite upper bound.
    """
    h = COARSEST_GRID
    best_lo, best_hi, used = 0.0, math.inf, h
    while True:
        pair = build(h)
        if pair is not None:
            lo, hi = pair.epsilon_bounds(delta)
            best_lo = max(best_lo, lo)
            if hi < best_hi:
                best_hi, used = hi, h
        gap = best_hi - best_lo
        if h <= FINEST_GRID or gap <= TARGET_GAP * best_hi:
            break
        shrink = 0.7 * math.sqrt(TARGET_GAP * best_hi / gap) if math.isfinite(gap) else 0.1
        h = max(FINEST_GRID, h * min(0.5, max(0.1, shrink)))
    if not math.isfinite(best_hi):
        return None
    return min(best_lo, best_hi), best_hi, used


@dataclasses.dataclass(frozen=True)
class OptimalComposition(Statement):
    """k-fold composition of an (epsilon0, delta0)-DP mechanism, resolved at the target delta."""

    epsilon0: sympy.Expr = sympy.Integer(0)
    delta0: sympy.Expr = sympy.Integer(0)
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
                eps, eps_low = sympy.Rational(bounds[1]), sympy.Rational(bounds[0])
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
            checks=checks,
        )
        # the bound is attained by k-fold binary randomized response, so for that event, and
        # for a generic eps-DP event (whose worst case is randomized response), it is also the
        # exact value (a certified lower bound), as the PLD of those events would certify
        event = self.step.event
        parts = getattr(event, "events", None) or (getattr(event, "event", None),)
        exact_here = (
            self.delta0 == 0
            and all(p == parts[0] for p in parts)
            and _binomial_exact(parts[0], self.count)
        )
        return [Candidate(eps, delta, step, eps_low if exact_here else None)]


@dataclasses.dataclass(frozen=True)
class AdvancedComposition(Statement):
    """k-fold advanced composition, with slack delta' = target delta - k delta0."""

    epsilon0: sympy.Expr = sympy.Integer(0)
    delta0: sympy.Expr = sympy.Integer(0)
    count: int = 1
    currency = "advanced"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or _number(delta) is None or _number(self.epsilon0) is None:
            return []
        slack = as_expr(delta) - self.count * self.delta0
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
    """

    orders: tuple[int, ...] = ()
    taus: tuple[sympy.Expr, ...] = ()
    exact_tau: Any = None  # callable order -> exact tau, used for the chosen order
    tau_upper: Any = None
    currency = "rdp"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or _number(delta) is None or not (0 < _number(delta) < 1):
            return []
        order = rdp.choose_order(self.orders, self.taus, delta)  # floats: only a choice
        checks = admit(rdp.RDP_CONVERSION, self.step.event, {"alpha": order, "delta": delta})
        if checks is None:
            return []
        tau = (self.tau_upper or self.exact_tau)(order)
        if tau in (sympy.oo, sympy.zoo, sympy.nan):  # no finite divergence: no (eps, delta)
            return []
        eps, _ = rdp.rdp_to_approx([order], [tau], delta)
        step = Step(
            rdp.RDP_CONVERSION,
            self.step.event,
            f"({show(eps)}, {show(delta)})-DP",
            f"order alpha = {order}",
            (self.step,),
            checks=checks,
        )
        return [Candidate(eps, delta, step)]


@dataclasses.dataclass(frozen=True)
class BoundedRangeComposition(Statement):
    """k adaptively composed eps-BR mechanisms (Dong, Durfee, Rogers 2020), resolved at the
    target delta by the dynamic programme of :func:`~dpaudit.theorems.bounded_range.
    bounded_range_composition_bounds`: an upper bound, and a certified lower bound on the
    optimum for the class (an adaptive composition of exponential mechanisms attains it)."""

    epsilon0: sympy.Expr = sympy.Integer(0)
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
        eps = sympy.Rational(hi)
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
        return [Candidate(eps, delta, step, sympy.Rational(lo) if lo > 0 else None)]


# ---------------------------------------------------------------------------- PLD builders


Builder = Callable[[float], "pld.PLDPair | None"]


def _leaf_builder(
    event: Event, rate: float = 1.0
) -> tuple[Builder, bool, Theorem, dict[str, Any]] | None:
    """How to build the PLD of a leaf (optionally Poisson-subsampled) on a grid of step h,
    whether it is the event's own PLD (not a dominating pair of a family), the card of its
    dominating pair and the card's parameters at this event (for
    :func:`~dpaudit.accountant.domains.admit`); None when no PLD construction applies
    (symbolic parameters, no PLD for the mechanism)."""
    make: Callable[[float], pld.PLDPair] | None = None
    own = True
    params: dict[str, Any] = {}
    if isinstance(event, ev.Gaussian):
        s, d = _number(event.sigma), _number(event.sensitivity)
        params = {"sigma": event.sigma, "Delta": event.sensitivity}
        if None not in (s, d):

            def make(h: float) -> pld.PLDPair:
                return pld.gaussian(s, d, sampling_probability=rate, value_discretization=h)
    elif isinstance(event, ev.Laplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        params = {"b": event.scale, "Delta": event.sensitivity}
        if None not in (b, d):

            def make(h: float) -> pld.PLDPair:
                return pld.laplace(b, d, sampling_probability=rate, value_discretization=h)
    elif isinstance(event, ev.RandomizedResponse):
        e, k = _number(event.epsilon), _number(event.categories)
        params = {"epsilon": event.epsilon, "k": event.categories}
        if None not in (e, k):

            def make(h: float) -> pld.PLDPair:
                return pld.randomized_response(
                    e, int(k), sampling_probability=rate, value_discretization=h
                )
    elif isinstance(event, (ev.PureDP, ev.ApproxDP)):
        e, d = _number(event.epsilon), _number(getattr(event, "delta", 0))
        params = {"epsilon": event.epsilon, "delta": getattr(event, "delta", 0)}
        if None not in (e, d):

            def make(h: float) -> pld.PLDPair:
                return pld.generic(e, d, sampling_probability=rate, value_discretization=h)
    elif isinstance(event, ev.DiscreteLaplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        params = {"b": event.scale, "Delta": event.sensitivity}
        if None not in (b, d) and d == int(d):

            def make(h: float) -> pld.PLDPair:
                return pld.discrete_laplace(
                    b, int(d), sampling_probability=rate, value_discretization=h
                )
    elif isinstance(event, ev.DiscreteGaussian):
        s, d = _number(event.sigma), _number(event.sensitivity)
        params = {"sigma": event.sigma, "Delta": event.sensitivity}
        if None not in (s, d) and d == int(d):

            def make(h: float) -> pld.PLDPair:
                return pld.discrete_gaussian(
                    s, int(d), sampling_probability=rate, value_discretization=h
                )
    elif isinstance(event, ev.Exponential) and rate == 1.0:
        e = _number(event.epsilon)
        own = False
        params = {"epsilon": event.epsilon}
        if e is not None:

            def make(h: float) -> pld.PLDPair:
                return pld.bounded_range(e, value_discretization=h)

    if make is None:
        return None
    build = make
    return (
        (lambda h: _memo(("leaf", event, rate, h), lambda: _safe(lambda: build(h)))),
        own,
        PLD_PAIRS[type(event)],
        params,
    )


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


def _pld_statement(
    event: Event, build: Builder, tight: bool, premises: tuple[Step, ...], formula: str, count: int
) -> LossDistribution | None:
    """The composition of ``count`` PLDs (None outside the card's domain, k >= 1); delta is
    checked where the PLD is converted (:meth:`LossDistribution.candidates`)."""
    checks = admit(PLD_ACCOUNTING, event, {"k": count})
    if checks is None:
        return None
    return LossDistribution(
        Step(PLD_ACCOUNTING, event, "privacy loss distribution", formula, premises, checks=checks),
        build=build,
        tight=tight,
        exact_profile=tight,
    )


def _safe(fn: Any) -> Any:
    """Run a PLD construction; a ValueError (grid too large, extreme parameters) means the
    PLD result does not apply here, and the other results still do."""
    try:
        return fn()
    except (ValueError, OverflowError, MemoryError):
        return None


def _power(build: Builder, count: int, key: Any) -> Builder:
    """The builder of ``count`` composed copies of ``build``'s PLD (memoised on ``key``)."""

    def make(h: float) -> pld.PLDPair | None:
        def compose() -> pld.PLDPair | None:
            pair = build(h)
            return None if pair is None else _safe(lambda: pair.self_compose(count))

        return _memo(("power", key, count, h), compose)

    return make


def _sequence(builds: list[Builder]) -> Builder:
    """The builder of the composition of the parts' PLDs, in order."""

    def make(h: float) -> pld.PLDPair | None:
        acc = builds[0](h)
        for b in builds[1:]:
            nxt = b(h)
            if acc is None or nxt is None:
                return None
            acc = _safe(lambda acc=acc, nxt=nxt: acc.compose(nxt))
        return acc

    return make


def _pair_statement(
    event: Event, found: tuple[Builder, bool, Theorem, dict[str, Any]], rate: Any, what: str
) -> LossDistribution | None:
    """The PLD statement of a (sampled) leaf, when its dominating pair's card admits the
    leaf's parameters and the sampling rate."""
    build, own, card, params = found
    checks = admit(card, event, {**params, "q": rate})
    if checks is None:
        return None
    return LossDistribution(
        Step(card, event, "privacy loss distribution", what, checks=checks),
        build=build,
        tight=own,
        exact_profile=own,
    )


def _leaf_rule(event: Event, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    found = _leaf_builder(event)
    if found is None:
        return []
    st = _pair_statement(event, found, 1, f"PLD of {type(event).__name__}")
    return [] if st is None else [st]


for _cls in (
    ev.Gaussian,
    ev.Laplace,
    ev.RandomizedResponse,
    ev.PureDP,
    ev.ApproxDP,
    ev.DiscreteLaplace,
    ev.DiscreteGaussian,
    ev.Exponential,
):
    register_rule(_cls)(_leaf_rule)


@register_rule(ev.Exponential)
def _exponential_bounded_range(
    event: ev.Exponential, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """eps-BR implies eps^2/8-zCDP (the exponential mechanism is eps-BR)."""
    checks = admit(br.BR_ZCDP, event, {"epsilon": event.epsilon})
    if checks is None:
        return []
    rho = br.bounded_range_zcdp(event.epsilon)
    return [
        Concentrated(
            Step(
                br.BR_ZCDP,
                event,
                f"({show(rho)})-zCDP",
                f"rho = eps^2/8 = {show(rho)}",
                checks=checks,
            ),
            rho=rho,
        )
    ]


@register_rule(ev.PoissonSampled)
def _poisson(
    event: ev.PoissonSampled, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    rate = _number(event.rate)
    if rate is None:
        return []
    out: list[Statement] = []
    found = _leaf_builder(event.event, rate)
    st = (
        None
        if found is None
        else _pair_statement(
            event,
            found,
            event.rate,
            f"PLD of Poisson({show(event.rate)})-sampled {type(event.event).__name__}",
        )
    )
    if st is not None:
        out.append(st)
    inner = event.event
    if isinstance(inner, ev.Gaussian) and None not in (
        _number(inner.sigma),
        _number(inner.sensitivity),
    ):
        curve = _renyi_subsampled_gaussian(event, inner, 1)
        if curve.step.checks is not None:
            out.append(curve)
    return out


#: Orders of the RDP curves of leaves (the conversion picks the best; Mironov 2017).
LEAF_ORDERS: tuple[int, ...] = rdp.DEFAULT_ORDERS[:48]


def _leaf_renyi(event: Event, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    """The RDP curve of a numeric Laplace (exact, Mironov 2017 Table II), Gaussian
    (Proposition 7) or binary randomized response (Table II) leaf, on :data:`LEAF_ORDERS`;
    k-fold composition multiplies it (:func:`_renyi_power`) and RDP_CONVERSION resolves it at
    the target delta.  The card's domain is checked at the smallest order (every order used
    is at least that)."""
    a0 = LEAF_ORDERS[0]
    if isinstance(event, ev.Laplace):
        card, params = rdp.RDP_LAPLACE, {"b": event.scale / event.sensitivity}

        def tau(a: int) -> sympy.Expr:
            return rdp.laplace_rdp(a, event.scale, event.sensitivity)
    elif isinstance(event, ev.Gaussian):
        card, params = rdp.RDP_GAUSSIAN, {"sigma": event.sigma, "Delta": event.sensitivity}

        def tau(a: int) -> sympy.Expr:
            return rdp.gaussian_rdp(a, event.sigma, event.sensitivity)
    elif isinstance(event, ev.RandomizedResponse) and event.categories == 2:
        truth = sympy.exp(event.epsilon) / (1 + sympy.exp(event.epsilon))
        card, params = rdp.RDP_RANDOMIZED_RESPONSE, {"p": truth}

        def tau(a: int) -> sympy.Expr:
            return rdp.randomized_response_rdp(a, truth)
    else:  # a declared eps-DP leaf: its k-fold composition is exact by optimal composition
        return []
    if any(_number(v) is None for v in params.values()):
        return []
    checks = admit(card, event, {"alpha": a0, **params})
    if checks is None:
        return []
    try:
        taus = _curve_floats(tau)
    except (EvaluationError, ValueError, OverflowError, TypeError):
        return []

    def tau_upper(a: int) -> sympy.Expr:
        # a rational rounded up: the conversion increases with tau, and the exact closed
        # forms (powers of e/(1+e), ...) make sympy's Max in the conversion crawl
        return from_float(float_up(tau(a)))

    return [
        RenyiCurve(
            Step(
                card,
                event,
                "RDP curve",
                f"tau(alpha) exact (rounded up), integer orders {a0}..{LEAF_ORDERS[-1]}",
                checks=checks,
            ),
            orders=LEAF_ORDERS,
            taus=taus,
            exact_tau=tau,
            tau_upper=tau_upper,
        )
    ]


for _cls in (ev.Laplace, ev.Gaussian, ev.RandomizedResponse):
    register_rule(_cls)(_leaf_renyi)


def _curve_floats(tau: Callable[[Any], sympy.Expr]) -> tuple[float, ...]:
    """tau at :data:`LEAF_ORDERS` in 30-digit floats, only to choose the order (the chosen
    order's tau is then bounded rigorously): the closed form at a symbolic order, evaluated
    with mpmath (an interval evaluation per order takes ~0.1 s)."""
    import mpmath

    order = sympy.Symbol("alpha", positive=True)
    fn = sympy.lambdify(order, tau(order), "mpmath")
    with mpmath.workdps(30):
        return tuple(float(fn(mpmath.mpf(a))) for a in LEAF_ORDERS)


def _renyi_subsampled_gaussian(event: Event, inner: ev.Gaussian, count: int) -> RenyiCurve:
    orders = rdp.DEFAULT_ORDERS[:48]

    def exact_tau(order: int) -> sympy.Expr:
        return count * rdp.subsampled_gaussian_rdp(
            order, inner.sigma, event.rate, inner.sensitivity
        )

    def tau_upper(order: int) -> sympy.Expr:
        return count * rdp.subsampled_gaussian_rdp_upper(
            order, inner.sigma, event.rate, inner.sensitivity
        )

    taus = tuple(
        count
        * rdp.subsampled_gaussian_rdp(a, inner.sigma, event.rate, inner.sensitivity, numeric=True)
        for a in orders
    )
    # the domain's order condition is checked at the smallest order (alpha > 1 holds for all)
    checks = admit(
        rdp.RDP_SUBSAMPLED_GAUSSIAN,
        event,
        {"alpha": orders[0], "q": event.rate, "sigma": inner.sigma},
    )
    return RenyiCurve(
        Step(
            rdp.RDP_SUBSAMPLED_GAUSSIAN,
            event,
            "RDP curve",
            f"tau(alpha) = {count} x MTZ19 bound, integer orders 2..{orders[-1]}",
            checks=checks,
        ),
        orders=orders,
        taus=taus,
        exact_tau=exact_tau,
        tau_upper=tau_upper,
    )


#: Orders of the RDP curve of a Gaussian sampled without replacement (WBK19's bound sums
#: alpha terms, so very large orders are left out).
WOR_ORDERS: tuple[int, ...] = tuple(range(2, 65))


@register_rule(ev.SampledWithoutReplacement)
def _without_replacement(
    event: ev.SampledWithoutReplacement, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """RDP of a Gaussian run on m of n records sampled without replacement (replace-one):
    Wang, Balle, Kasiviswanathan 2019, Theorem 9, with the Gaussian's RDP
    tau(j) = j Delta^2 / (2 sigma^2) (Mironov 2017, Proposition 7) and tau(oo) = oo."""
    inner = event.event
    if not isinstance(inner, ev.Gaussian):
        return []
    if None in (
        _number(inner.sigma),
        _number(inner.sensitivity),
        _number(event.sample),
        _number(event.population),
    ):
        return []
    ratio = event.sample / event.population

    def base(j: int) -> sympy.Expr:
        return rdp.gaussian_rdp(j, inner.sigma, inner.sensitivity)

    def exact_tau(order: int) -> sympy.Expr:
        return rdp.without_replacement_rdp(order, ratio, base)

    taus = tuple(
        _wor_gaussian_tau_float(a, float(ratio), float(inner.sensitivity**2 / (2 * inner.sigma**2)))
        for a in WOR_ORDERS
    )
    checks = admit(
        rdp.RDP_WITHOUT_REPLACEMENT,
        event,
        {"alpha": WOR_ORDERS[0], "m": event.sample, "n": event.population},
    )
    if checks is None:
        return []
    return [
        RenyiCurve(
            Step(
                rdp.RDP_WITHOUT_REPLACEMENT,
                event,
                "RDP curve",
                f"tau(alpha) = WBK19 Thm 9 bound, gamma = m/n = {show(ratio)}, "
                f"integer orders 2..{WOR_ORDERS[-1]}",
                checks=checks,
            ),
            orders=WOR_ORDERS,
            taus=taus,
            exact_tau=exact_tau,
        )
    ]


#: Fractions of a without-replacement node's delta budget at which its (eps, delta)
#: statements are derived: all of it (a lone node) and half of it (so that a k-fold
#: composition above keeps half of its budget as the slack of advanced composition).
WOR_BUDGET_SHARES: tuple[sympy.Expr, ...] = (sympy.Integer(1), sympy.Rational(1, 2))


@register_rule(ev.SampledWithoutReplacement)
def _without_replacement_approx(
    event: ev.SampledWithoutReplacement, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """Balle, Barthe, Gaboardi 2018, Theorem 9 on any child with an (eps, delta) guarantee
    (pure, approximate, or a whole profile such as a Gaussian's, resolved at the delta the
    budget leaves it), symbolic parameters allowed.

    Privacy: with gamma = m/n, if the child is (eps, delta)-DP under replace-one on m-record
    datasets, the sampled mechanism is (log(1 + gamma (e^eps - 1)), gamma delta)-DP under
    replace-one.  The child's delta is taken at each share of :data:`WOR_BUDGET_SHARES` of
    budget / gamma (falling back to the child's own delta, which the parent then compares)."""
    (inner,) = children
    checks = admit(
        amp.WITHOUT_REPLACEMENT_AMPLIFICATION, event, {"m": event.sample, "n": event.population}
    )
    if checks is None:
        return []
    ratio = event.sample / event.population
    out: list[Statement] = []
    for p in of_currency(inner, Pure)[:1]:
        e, _ = amp.without_replacement_amplification(p.epsilon, 0, event.sample, event.population)
        out.append(
            Pure(
                Step(
                    amp.WITHOUT_REPLACEMENT_AMPLIFICATION,
                    event,
                    f"({show(e)})-DP",
                    f"eps = log(1 + (m/n)(e^eps_0 - 1)), m/n = {show(ratio)}",
                    (p.step,),
                    checks=checks,
                ),
                epsilon=e,
            )
        )
        if e.free_symbols:
            # log(1 + x) <= x: a looser bound in a form the verifier factors (gamma times a
            # function of eps alone), kept beside the exact one as an (eps, 0) statement
            x = ratio * (sympy.exp(p.epsilon) - 1)
            out.append(
                Approx(
                    Step(
                        amp.WITHOUT_REPLACEMENT_AMPLIFICATION,
                        event,
                        f"({show(x)}, 0)-DP",
                        "eps = (m/n)(e^eps_0 - 1) >= log(1 + (m/n)(e^eps_0 - 1))",
                        (p.step,),
                        checks=checks,
                    ),
                    epsilon=x,
                    delta=sympy.Integer(0),
                )
            )
    if out:
        return out
    targets = [None] if budget is None else [share * budget / ratio for share in WOR_BUDGET_SHARES]
    for target in targets:
        if target is not None and not target.free_symbols and not target < 1:
            continue  # (a symbolic target is left to the conversions, as for zCDP)
        cand = best_candidate(inner, target)
        if cand is None and target is targets[-1] and not out:
            cand = best_candidate(inner, None)  # the child's own delta; the parent decides
        if cand is None:
            continue
        e, d = amp.without_replacement_amplification(
            cand.epsilon, cand.delta, event.sample, event.population
        )
        out.append(
            Approx(
                Step(
                    amp.WITHOUT_REPLACEMENT_AMPLIFICATION,
                    event,
                    f"({show(e)}, {show(d)})-DP",
                    f"eps = log(1 + (m/n)(e^eps_0 - 1)), delta = (m/n) delta_0, "
                    f"m/n = {show(ratio)}",
                    (cand.step,),
                    checks=checks,
                ),
                epsilon=e,
                delta=d,
            )
        )
    return out


@register_rule(ev.SelfComposed)
def _self_composed_advanced(
    event: ev.SelfComposed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """Advanced composition of k copies of the child's (eps, delta) statements."""
    return _advanced_approx(event, children[0], event.count, budget)


@register_rule(ev.Composed)
def _composed_advanced(
    event: ev.Composed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """The same for k identical parts (each gets budget / k, as in k-fold self-composition,
    so composing k at once and k times agree)."""
    parts = event.events
    if len(parts) < 2 or any(p != parts[0] for p in parts[1:]):
        return []
    k = len(parts)
    out = _advanced_approx(event, children[0], k, budget)
    # the RDP curve too, as SelfComposed composes it
    out += [
        r
        for s in of_currency(children[0], RenyiCurve)
        if (r := _renyi_power(event, s, k)) is not None
    ]
    return out


def _renyi_power(event: Event, s: RenyiCurve, k: int) -> RenyiCurve | None:
    """k-fold composition of an RDP curve: tau_k(alpha) = k tau(alpha) (Mironov 2017,
    Proposition 1); None outside the theorem's domain (checked at the smallest order: every
    order used is at least that)."""
    checks = admit(rdp.RDP_COMPOSITION, event, {"alpha": s.orders[0], "k": k})
    if checks is None:
        return None
    base, up = s.exact_tau, s.tau_upper
    return RenyiCurve(
        Step(
            rdp.RDP_COMPOSITION,
            event,
            "RDP curve",
            f"tau(alpha) = {k} x tau_0(alpha)",
            (s.step,),
            checks=checks,
        ),
        orders=s.orders,
        taus=tuple(k * t for t in s.taus),
        exact_tau=lambda a: k * base(a),
        tau_upper=None if up is None else lambda a: k * up(a),
    )


def _advanced_approx(
    event: Event, inner: list[Statement], k: Any, budget: sympy.Expr | None
) -> list[Statement]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010) of k copies of each (eps, delta)
    statement of one part, symbolic parameters allowed, with slack delta' = budget - k delta
    when that is provably positive (it is below the budget, itself a share of a target delta
    < 1; a numeric slack is checked).  The numeric pure case is :func:`_homogeneous_pure`.

    Privacy: Dwork and Roth 2014, Theorem 3.20: k adaptive (eps, delta)-DP steps are
    (sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta')-DP."""
    if budget is None:
        return []
    out: list[Statement] = []
    for s in of_currency(inner, Approx):
        slack = as_expr(budget - k * s.delta)
        if compare(slack, 0) != 1:
            continue
        checks = admit(
            advanced.ADVANCED_COMPOSITION,
            event,
            {"epsilon": s.epsilon, "delta": s.delta, "k": k, "delta'": slack},
        )
        if checks is None:
            continue
        eps, dlt = advanced.advanced_composition(s.epsilon, s.delta, k, slack)
        out.append(
            Approx(
                Step(
                    advanced.ADVANCED_COMPOSITION,
                    event,
                    f"({show(eps)}, {show(dlt)})-DP",
                    f"eps = sqrt(2k ln(1/delta')) eps_0 + k eps_0 (e^eps_0 - 1), "
                    f"k = {show(k)}, delta' = {show(slack)}",
                    (s.step,),
                    checks=checks,
                ),
                epsilon=eps,
                delta=dlt,
            )
        )
    return out


def _wor_gaussian_tau_float(order: int, ratio: float, rho: float) -> float:
    """WBK19 Theorem 9 for a Gaussian (tau(j) = j rho), in floats: only used to choose the
    order; the chosen order is then evaluated exactly and rounded up."""
    import mpmath

    with mpmath.workdps(30):
        g, r = mpmath.mpf(ratio), mpmath.mpf(rho)
        t2 = 2 * r
        total = 1 + g**2 * mpmath.binomial(order, 2) * min(
            4 * (mpmath.exp(t2) - 1), 2 * mpmath.exp(t2)
        )
        for i in range(3, order + 1):
            total += g**i * mpmath.binomial(order, i) * mpmath.exp((i - 1) * i * r) * 2
        return float(mpmath.log(total) / (order - 1))


@register_rule(ev.SelfComposed)
def _self_composed_tight(
    event: ev.SelfComposed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    (inner,) = children
    k = _number(event.count)
    if k is None:
        return []
    k = int(k)
    out: list[Statement] = []
    for s in [] if _binomial_exact(event.event, k) else of_currency(inner, LossDistribution):
        composed = _pld_statement(
            event,
            _power(s.build, k, s.step.event),
            s.tight,
            (s.step,),
            f"{k}-fold FFT self-composition",
            k,
        )
        out += [composed] if composed is not None else []
    out += [
        r for s in of_currency(inner, RenyiCurve) if (r := _renyi_power(event, s, k)) is not None
    ]
    out += _homogeneous_pure(event, inner, k)
    if isinstance(event.event, ev.Exponential) and _number(event.event.epsilon) is not None:
        out.append(
            BoundedRangeComposition(
                Step(
                    br.BR_ADAPTIVE_COMPOSITION,
                    event,
                    "bounded-range composition",
                    f"k = {k}",
                    checks=admit(
                        br.BR_ADAPTIVE_COMPOSITION, event, {"epsilon": event.event.epsilon, "k": k}
                    ),
                ),
                epsilon0=event.event.epsilon,
                count=k,
            )
        )
    return out


def _homogeneous_pure(event: Event, inner: Any, k: int) -> list[Statement]:
    """Optimal and advanced composition of k copies of a pure-DP part."""
    out: list[Statement] = []
    pures = of_currency(inner, Pure)
    if pures and _number(pures[0].epsilon) is not None:
        p = pures[0]
        params = {"epsilon": p.epsilon, "delta": 0, "k": k}
        checks = admit(optimal.OPTIMAL_COMPOSITION, event, params)
        if k <= optimal.MAX_EXACT_COUNT and checks is not None:
            out.append(
                OptimalComposition(
                    Step(
                        optimal.OPTIMAL_COMPOSITION,
                        event,
                        "optimal composition",
                        f"k = {k}",
                        (p.step,),
                        checks=checks,
                    ),
                    epsilon0=p.epsilon,
                    delta0=sympy.Integer(0),
                    count=k,
                )
            )
        checks = admit(advanced.ADVANCED_COMPOSITION, event, params)
        if checks is not None:
            out.append(
                AdvancedComposition(
                    Step(
                        advanced.ADVANCED_COMPOSITION,
                        event,
                        "advanced composition",
                        f"k = {k}",
                        (p.step,),
                        checks=checks,
                    ),
                    epsilon0=p.epsilon,
                    delta0=sympy.Integer(0),
                    count=k,
                )
            )
    return out


@register_rule(ev.Composed)
def _composed_tight(
    event: ev.Composed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    parts = list(getattr(event, "events", None) or getattr(event, "parts", None) or [])
    same = bool(parts) and all(e == parts[0] for e in parts[1:])
    extra = _homogeneous_pure(event, children[0], len(children)) if same else []
    if same and isinstance(parts[0], ev.Exponential) and _number(parts[0].epsilon) is not None:
        extra.append(
            BoundedRangeComposition(
                Step(
                    br.BR_ADAPTIVE_COMPOSITION,
                    event,
                    "bounded-range composition",
                    f"k = {len(parts)}",
                    checks=admit(
                        br.BR_ADAPTIVE_COMPOSITION,
                        event,
                        {"epsilon": parts[0].epsilon, "k": len(parts)},
                    ),
                ),
                epsilon0=parts[0].epsilon,
                count=len(parts),
            )
        )
    plds = [of_currency(c, LossDistribution) for c in children]
    if not plds or any(not p for p in plds):
        return extra
    steps_events = [p[0].step.event for p in plds]
    if all(e == steps_events[0] for e in steps_events[1:]):
        # identical parts: the same computation as k-fold self-composition, so that composing
        # k at once and k times give the same number
        if _binomial_exact(parts[0], len(parts)):
            return extra
        composed = _pld_statement(
            event,
            _power(plds[0][0].build, len(plds), steps_events[0]),
            plds[0][0].tight,
            tuple(p[0].step for p in plds),
            f"FFT composition of {len(plds)} identical parts",
            len(plds),
        )
    else:
        tight = all(p[0].tight for p in plds)
        composed = _pld_statement(
            event,
            _sequence([p[0].build for p in plds]),
            tight,
            tuple(p[0].step for p in plds),
            f"FFT composition of {len(plds)} parts",
            len(plds),
        )
    return [*extra, composed] if composed is not None else extra


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
