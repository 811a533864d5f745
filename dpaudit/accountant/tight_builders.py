"""Builders the tight rules (:mod:`dpaudit.accountant.tight`) use: privacy-loss distributions of
leaves and their compositions, Renyi curves of subsampled Gaussians and of compositions, the
advanced-composition approximation, and homogeneous pure composition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dpaudit import events as ev
from dpaudit.accountant.currencies import (
    AdvancedComposition,
    LossDistribution,
    OptimalComposition,
    RenyiCurve,
    _memo,
    _number,
    _safe,
)
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import of_currency
from dpaudit.accountant.statements import (
    Approx,
    Pure,
    Statement,
    Step,
    compare,
    exact_zero,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.numeric import exact_value, mp_digits
from dpaudit.theorems import advanced, optimal, rdp
from dpaudit.theorems.accounting import PLD_ACCOUNTING, PLD_PAIRS
from dpaudit.theorems.base import Theorem

if TYPE_CHECKING:  # imported when a grid is first built: accounting at delta 0 needs no numpy
    from dpaudit import pld

# ---------------------------------------------------------------------------- PLD builders


Builder = Callable[[float], "pld.PLDPair | None"]


def _grid(constructor: str, *args: float, rate: float) -> Callable[[float], pld.PLDPair]:
    """``dpaudit.pld.<constructor>(*args)`` for the mechanism sampled with probability
    ``rate``, as a function of the grid step h (the pld package is imported on the first
    build)."""

    def make(h: float) -> pld.PLDPair:
        from dpaudit import pld

        build: Callable[..., pld.PLDPair] = getattr(pld, constructor)
        return build(*args, sampling_probability=rate, value_discretization=h)

    return make


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
        if s is not None and d is not None:
            make = _grid("gaussian", s, d, rate=rate)
    elif isinstance(event, ev.Laplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        params = {"b": event.scale, "Delta": event.sensitivity}
        if b is not None and d is not None:
            make = _grid("laplace", b, d, rate=rate)
    elif isinstance(event, ev.RandomizedResponse):
        rr_eps, k = _number(event.epsilon), _number(event.categories)
        params = {"epsilon": event.epsilon, "k": event.categories}
        if rr_eps is not None and k is not None:

            def make(h: float) -> pld.PLDPair:  # int(k) here: an overflow means no PLD
                from dpaudit import pld

                return pld.randomized_response(
                    rr_eps, int(k), sampling_probability=rate, value_discretization=h
                )
    elif isinstance(event, (ev.PureDP, ev.ApproxDP)):
        e, d = _number(event.epsilon), _number(getattr(event, "delta", 0))
        params = {"epsilon": event.epsilon, "delta": getattr(event, "delta", 0)}
        if e is not None and d is not None:
            make = _grid("generic", e, d, rate=rate)
    elif isinstance(event, ev.DiscreteLaplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        params = {"b": event.scale, "Delta": event.sensitivity}
        if b is not None and d is not None and d == int(d):
            make = _grid("discrete_laplace", b, int(d), rate=rate)
    elif isinstance(event, ev.DiscreteGaussian):
        s, d = _number(event.sigma), _number(event.sensitivity)
        params = {"sigma": event.sigma, "Delta": event.sensitivity}
        if s is not None and d is not None and d == int(d):
            make = _grid("discrete_gaussian", s, int(d), rate=rate)
    elif isinstance(event, ev.Exponential) and rate == 1.0:
        e = _number(event.epsilon)
        own = False
        params = {"epsilon": event.epsilon}
        if e is not None:

            def make(h: float) -> pld.PLDPair:
                from dpaudit import pld

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


def _power(build: Builder, count: int, key: Any) -> Builder:
    """The builder of ``count`` composed copies of ``build``'s PLD (memoised on ``key``)."""

    def make(h: float) -> pld.PLDPair | None:
        def compose() -> pld.PLDPair | None:
            pair = build(h)
            return None if pair is None else _safe(lambda: pair.self_compose(count))

        return _memo(("power", key, count, h), compose)

    return make


def _sequence(builds: list[Builder], key: Any) -> Builder:
    """The builder of the composition of the parts' PLDs, in order (memoised on ``key``, the
    composed event: a calibration's final accountant evaluation, and a query repeated,
    reuse it)."""

    def make(h: float) -> pld.PLDPair | None:
        return _memo(("sequence", key, h), lambda: build(h))

    def build(h: float) -> pld.PLDPair | None:
        from dpaudit import pld

        def parts() -> Iterator[pld.PLDPair]:
            for b in builds:
                part = b(h)
                if part is None:
                    raise _NoPartError
                yield part

        # one product of spectra, one window per chunk of parts; the parts are built as the
        # product consumes them, so memory stays bounded in their number (issue 19 part 1)
        try:
            return _safe(lambda: pld.PLDPair.compose_stream(parts()))
        except _NoPartError:
            return None

    return make


class _NoPartError(Exception):
    """A part of a sequence has no PLD (so neither has the sequence)."""


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


def _renyi_subsampled_gaussian(
    event: ev.PoissonSampled, inner: ev.Gaussian, count: int
) -> RenyiCurve:
    orders = rdp.DEFAULT_ORDERS[:48]

    def exact_tau(order: int) -> sympy.Expr:
        return count * rdp.subsampled_gaussian_rdp(
            order, inner.sigma, event.rate, inner.sensitivity
        )

    def tau_upper(order: int) -> sympy.Expr:
        return count * rdp.subsampled_gaussian_rdp_upper(
            order, inner.sigma, event.rate, inner.sensitivity
        )

    floats = rdp.subsampled_gaussian_rdp_floats(orders, inner.sigma, event.rate, inner.sensitivity)
    taus = tuple(count * v for v in floats)  # floats: only to choose the order

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


def _renyi_power(event: Event, s: RenyiCurve, k: int) -> RenyiCurve | None:
    """k-fold composition of an RDP curve: tau_k(alpha) = k tau(alpha) (Mironov 2017,
    Proposition 1); None outside the theorem's domain (checked at the smallest order: every
    order used is at least that)."""
    checks = admit(rdp.RDP_COMPOSITION, event, {"alpha": s.orders[0], "k": k})
    if checks is None:
        return None
    base, up, real = s.exact_tau, s.tau_upper, s.tau_real
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
        tau_real=None if real is None else lambda a: k * real(a),
    )


def _advanced_approx(
    event: Event, inner: Sequence[Statement], k: Any, budget: sympy.Expr | None
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
        slack = exact_value(budget - k * s.delta)
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

    with mp_digits(30):
        g, r = mpmath.mpf(ratio), mpmath.mpf(rho)
        t2 = 2 * r
        total = 1 + g**2 * mpmath.binomial(order, 2) * min(
            4 * (mpmath.exp(t2) - 1), 2 * mpmath.exp(t2)
        )
        for i in range(3, order + 1):
            total += g**i * mpmath.binomial(order, i) * mpmath.exp((i - 1) * i * r) * 2
        return float(mpmath.log(total) / (order - 1))


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
                    delta0=exact_zero(),
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
                    delta0=exact_zero(),
                    count=k,
                )
            )
    return out
