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

import math
from collections.abc import Callable
from typing import Any

from dpaudit import events as ev
from dpaudit.accountant.currencies import (
    AdvancedComposition,
    BoundedRangeComposition,
    LossDistribution,
    OptimalComposition,
    RenyiCurve,
    _binomial_exact,
    _number,
)
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, of_currency, register_rule
from dpaudit.accountant.statements import (
    Concentrated,
    Statement,
    Step,
    show,
)
from dpaudit.accountant.tight_builders import (
    _advanced_approx,
    _homogeneous_pure,
    _leaf_builder,
    _pair_statement,
    _pld_statement,
    _power,
    _renyi_power,
    _renyi_subsampled_gaussian,
    _sequence,
    _wor_gaussian_tau_float,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import ExactNumber
from dpaudit.numeric import EvaluationError, float_up, from_float, mp_digits
from dpaudit.numeric import functions as fn
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems import rdp
from dpaudit.theorems.accounting import PLD_ACCOUNTING, PLD_PAIRS

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
    register_rule(_cls, pld=True)(_leaf_rule)


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


@register_rule(ev.PoissonSampled, pld=True)
def _poisson(
    event: ev.PoissonSampled, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    rate = _number(event.rate)
    if rate is None:
        return []
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
    return [] if st is None else [st]


@register_rule(ev.PoissonSampled)
def _poisson_renyi(
    event: ev.PoissonSampled, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    inner = event.event
    if _number(event.rate) is None or not isinstance(inner, ev.Gaussian):
        return []
    if None in (_number(inner.sigma), _number(inner.sensitivity)):
        return []
    curve = _renyi_subsampled_gaussian(event, inner, 1)
    return [curve] if curve.step.checks is not None else []


#: Orders of the RDP curves of leaves (the conversion picks the best; Mironov 2017).
LEAF_ORDERS: tuple[int, ...] = rdp.DEFAULT_ORDERS[:48]


def _leaf_renyi(event: Event, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    """The RDP curve of a numeric Laplace (exact, Mironov 2017 Table II), Gaussian
    (Proposition 7) or binary randomized response (Table II) leaf: closed forms for every real
    order alpha > 1, tabulated on :data:`LEAF_ORDERS` to start the choice of the order;
    k-fold composition multiplies it (:func:`_renyi_power`) and RDP_CONVERSION resolves it at
    the target delta, at the best real order.  The card's domain (alpha > 1 and the
    mechanism's parameters) is checked at the smallest tabulated order: every order used is
    above 1."""
    a0 = LEAF_ORDERS[0]
    tau_real: Callable[[float], float]
    if isinstance(event, ev.Laplace):
        card, params = rdp.RDP_LAPLACE, {"b": event.scale / event.sensitivity}

        def tau(a: Any) -> sympy.Expr:
            return rdp.laplace_rdp(a, event.scale, event.sensitivity)

        lam = _number(event.scale / event.sensitivity) or 1.0

        def tau_real(a: float) -> float:
            return math.log(
                a / (2 * a - 1) * math.exp((a - 1) / lam)
                + (a - 1) / (2 * a - 1) * math.exp(-a / lam)
            ) / (a - 1)
    elif isinstance(event, ev.Gaussian):
        card, params = rdp.RDP_GAUSSIAN, {"sigma": event.sigma, "Delta": event.sensitivity}

        def tau(a: Any) -> sympy.Expr:
            return rdp.gaussian_rdp(a, event.sigma, event.sensitivity)

        mu = _number(event.sensitivity / event.sigma) or 0.0

        def tau_real(a: float) -> float:
            # mu ** 2 overflows (OverflowError) for mu beyond 1e154: _curve_floats below
            # then leaves this leaf to the exact theorems, as for every float construction
            return a * (mu**2 / 2)
    elif isinstance(event, ev.RandomizedResponse) and event.categories == 2:
        truth = fn.exp(event.epsilon) / (1 + fn.exp(event.epsilon))
        card, params = rdp.RDP_RANDOMIZED_RESPONSE, {"p": truth}

        def tau(a: Any) -> sympy.Expr:
            return rdp.randomized_response_rdp(a, truth)

        e_rr = _number(event.epsilon) or 0.0
        # log of p^a (1-p)^(1-a) + (1-p)^a p^(1-a), p = e^eps/(1+e^eps)
        log_p, log_q = -math.log1p(math.exp(-e_rr)), -math.log1p(math.exp(min(e_rr, 700.0)))

        def tau_real(a: float) -> float:
            top = a * log_p + (1 - a) * log_q
            return (top + math.log1p(math.exp(a * log_q + (1 - a) * log_p - top))) / (a - 1)
    else:  # a declared eps-DP leaf: its k-fold composition is exact by optimal composition
        return []
    if any(_number(v) is None for v in params.values()):
        return []
    checks = admit(card, event, {"alpha": a0, **params})
    if checks is None:
        return []
    try:
        taus = _curve_floats(tau, tau_real)
    except (EvaluationError, ValueError, OverflowError, TypeError):
        return []

    def tau_upper(a: Any) -> sympy.Expr:
        # a rational rounded up: the conversion increases with tau, and the exact closed
        # forms (powers of e/(1+e), ...) make sympy's Max in the conversion crawl
        return from_float(float_up(tau(a)))

    return [
        RenyiCurve(
            Step(
                card,
                event,
                "RDP curve",
                f"tau(alpha) exact (rounded up), every order alpha > 1 (closed form; integer "
                f"orders {a0}..{LEAF_ORDERS[-1]} to start the choice)",
                checks=checks,
            ),
            orders=LEAF_ORDERS,
            taus=taus,
            exact_tau=tau,
            tau_upper=tau_upper,
            tau_real=tau_real,
        )
    ]


for _cls in (ev.Laplace, ev.Gaussian, ev.RandomizedResponse):
    register_rule(_cls)(_leaf_renyi)


def _curve_floats(
    tau: Callable[[Any], sympy.Expr], tau_real: Callable[[float], float]
) -> tuple[float, ...]:
    """tau at :data:`LEAF_ORDERS` in floats, only to choose the order (the chosen order's tau
    is then bounded rigorously): the closed form in floats (microseconds) where it stays
    finite; else for plain-number parameters each order's exact value (an
    :class:`~dpaudit.exact_numbers.ExactNumber`, ~0.3 ms an order); otherwise the closed form
    at a symbolic order in 30-digit mpmath (an interval evaluation of a sympy expression per
    order took ~0.1 s)."""
    import mpmath

    try:
        floats = tuple(tau_real(float(a)) for a in LEAF_ORDERS)
        if all(math.isfinite(t) for t in floats):
            return floats
    except (ValueError, OverflowError, ZeroDivisionError):
        pass
    first = tau(LEAF_ORDERS[0])
    if isinstance(first, ExactNumber):  # numeric parameters: the exact values, in floats
        return (float(first), *(float(tau(a)) for a in LEAF_ORDERS[1:]))
    order = sympy.Symbol("alpha", positive=True)
    curve = sympy.lambdify(order, tau(order), "mpmath")
    with mp_digits(30):
        return tuple(float(curve(mpmath.mpf(a))) for a in LEAF_ORDERS)


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


@register_rule(ev.SelfComposed, pld=True)
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
            f"{k}-fold FFT self-composition (long ones in blocks moved to a coarser grid, "
            "dpaudit.pld.blocks)",
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


@register_rule(ev.Composed, pld=True)
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
            _sequence([p[0].build for p in plds], event),
            tight,
            tuple(p[0].step for p in plds),
            f"FFT composition of {len(plds)} parts",
            len(plds),
        )
    return [*extra, composed] if composed is not None else extra
