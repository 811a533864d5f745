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
from typing import Any

import sympy

from dpaudit import events as ev
from dpaudit import pld
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
from dpaudit.numeric import EvaluationError
from dpaudit.theorems import advanced, optimal, rdp
from dpaudit.theorems import amplification as amp
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems.base import Theorem, register

__all__ = ["PLD_ACCOUNTING", "AdvancedComposition", "BoundedRangeComposition", "LossDistribution",
           "OptimalComposition", "RenyiCurve"]

PLD_ACCOUNTING = register(Theorem(
    key="pld_fft",
    name="privacy loss distribution",
    citation=("Sommer, Meiser, Mohammadi 2019, Theorem 1 (PLD composition by convolution); "
              "Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Theorem 4.3 (connect-the-dots "
              "pessimistic discretisation); Zhu, Dong, Wang 2022, Theorems 10-11 (dominating "
              "pairs, Poisson subsampling)"),
    assumptions=("adaptive composition of mechanisms whose dominating pairs are known; "
                 "Poisson subsampling under add/remove; both directions are accounted"),
    statement=("delta_lower(eps) <= delta(eps) <= delta_upper(eps) with every discretisation, "
               "truncation and FFT rounding error bounded and added"),
))

#: Grid step of the privacy-loss distributions built by the accountant.
VALUE_DISCRETIZATION = 1e-4


def _number(value: Any) -> float | None:
    """A float for a numeric exact value, None for a symbolic one."""
    expr = sympy.sympify(value)
    if expr.free_symbols:
        return None
    try:
        return float(expr)
    except (TypeError, ValueError):
        return None


def _rational_up(x: float) -> sympy.Expr:
    return sympy.nsimplify(x, rational=True) if x == 0 else sympy.Rational(x)


@dataclasses.dataclass(frozen=True)
class LossDistribution(Statement):
    """A privacy loss distribution (both directions) of the event."""

    pair: pld.PLDPair | None = None
    tight: bool = True
    currency = "pld"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = _number(delta) if delta is not None else None
        if self.pair is None or d is None or not (0 < d < 1):
            return []
        lo, hi = self.pair.epsilon_bounds(d)
        if not math.isfinite(hi):
            return []
        upper = sympy.Rational(max(hi, 0.0))
        lower = sympy.Rational(lo) if self.tight and self.exact_profile and lo > 0 else None
        step = Step(PLD_ACCOUNTING, self.step.event, f"({show(upper)}, {show(delta)})-DP",
                    f"epsilon in [{lo:.10g}, {hi:.10g}] at delta = {show(delta)} "
                    f"(grid {self.pair.h:g})", (self.step,),
                    note=("upper: connect-the-dots dominating pair; lower: post-processed pair"
                          if self.tight else "dominating pair of a family: upper bound only"))
        return [Candidate(upper, delta, step, lower)]


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
        # certified floats first (fast); the exact closed form only when they are unavailable
        try:
            bounds = optimal.optimal_epsilon_bounds(self.epsilon0, self.delta0, self.count,
                                                    delta)
            if bounds is not None:
                eps, eps_low = sympy.Rational(bounds[1]), sympy.Rational(bounds[0])
                how = f"eps_g in [{bounds[0]:.12g}, {bounds[1]:.12g}] (interval-verified)"
            else:
                eps = eps_low = optimal.optimal_epsilon(self.epsilon0, self.delta0, self.count,
                                                        delta)
                how = "exact closed form"
        except (ValueError, EvaluationError):
            return []
        step = Step(optimal.OPTIMAL_COMPOSITION, self.step.event,
                    f"({show(eps)}, {show(delta)})-DP",
                    f"smallest eps_g with delta_g(eps_g) <= {show(delta)}, k = {self.count}, "
                    f"eps_0 = {show(self.epsilon0)}, delta_0 = {show(self.delta0)}: {how}",
                    (self.step,))
        # the bound is attained by k-fold binary randomized response, so for that event it is
        # also the exact value (a certified lower bound)
        event = self.step.event
        inner = getattr(event, "event", None)
        exact_here = (isinstance(inner, ev.RandomizedResponse) and self.delta0 == 0
                      and _number(getattr(inner, "categories", 2)) == 2)
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
        slack = sympy.sympify(delta) - self.count * self.delta0
        if _number(slack) is None or not (0 < _number(slack) < 1):
            return []
        eps, dlt = advanced.advanced_composition(self.epsilon0, self.delta0, self.count, slack)
        step = Step(advanced.ADVANCED_COMPOSITION, self.step.event,
                    f"({show(eps)}, {show(dlt)})-DP",
                    f"eps = sqrt(2k ln(1/delta')) eps_0 + k eps_0 (e^eps_0 - 1), k = {self.count},"
                    f" delta' = {show(slack)}", (self.step,))
        return [Candidate(eps, dlt, step)]


@dataclasses.dataclass(frozen=True)
class RenyiCurve(Statement):
    """An RDP curve tau(alpha) on integer orders (numeric values, exact at the chosen order)."""

    orders: tuple[int, ...] = ()
    taus: tuple[sympy.Expr, ...] = ()
    exact_tau: Any = None  # callable order -> exact tau, used for the chosen order
    currency = "rdp"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or _number(delta) is None or not (0 < _number(delta) < 1):
            return []
        order = rdp.choose_order(self.orders, self.taus, delta)  # floats: only a choice
        eps, _ = rdp.rdp_to_approx([order], [self.exact_tau(order)], delta)
        step = Step(rdp.RDP_CONVERSION, self.step.event, f"({show(eps)}, {show(delta)})-DP",
                    f"order alpha = {order}", (self.step,))
        return [Candidate(eps, delta, step)]


@dataclasses.dataclass(frozen=True)
class BoundedRangeComposition(Statement):
    """k adaptively composed eps-BR mechanisms (Dong, Durfee, Rogers 2020), resolved at the
    target delta by the dynamic programme of :func:`~dpaudit.theorems.bounded_range.
    bounded_range_composition_epsilon` (an upper bound)."""

    epsilon0: sympy.Expr = sympy.Integer(0)
    count: int = 1
    currency = "bounded_range"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        d = _number(delta) if delta is not None else None
        e = _number(self.epsilon0)
        if d is None or e is None or not (0 < d < 1):
            return []
        value = _memo(("br_dp", e, self.count, d),
                      lambda: _safe(lambda: br.bounded_range_composition_epsilon(
                          e, self.count, d)))
        if value is None or not math.isfinite(value):
            return []
        eps = sympy.Rational(value)
        step = Step(br.BR_ADAPTIVE_COMPOSITION, self.step.event,
                    f"({show(eps)}, {show(delta)})-DP",
                    f"V_{self.count}(eps) <= {show(delta)} for {self.count} adaptive "
                    f"{show(self.epsilon0)}-BR mechanisms (grid upper bound)", (self.step,))
        return [Candidate(eps, delta, step)]


# ---------------------------------------------------------------------------- PLD builders


def _leaf_pld(event: Event, rate: float = 1.0) -> tuple[pld.PLDPair, bool] | None:
    """The PLD of a leaf (optionally Poisson-subsampled), and whether it is the event's own."""
    h = VALUE_DISCRETIZATION
    kw = {"sampling_probability": rate, "value_discretization": h}
    if isinstance(event, ev.Gaussian):
        s, d = _number(event.sigma), _number(event.sensitivity)
        return (pld.gaussian(s, d, **kw), True) if None not in (s, d) else None
    if isinstance(event, ev.Laplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        return (pld.laplace(b, d, **kw), True) if None not in (b, d) else None
    if isinstance(event, ev.RandomizedResponse):
        e = _number(event.epsilon)
        k = getattr(event, "categories", None) or getattr(event, "k", 2)
        k = int(_number(k) or 2)
        return (pld.randomized_response(e, k, **kw), True) if e is not None else None
    if isinstance(event, (ev.PureDP, ev.ApproxDP)):
        e = _number(event.epsilon)
        d = _number(getattr(event, "delta", 0))
        return (pld.generic(e, d, **kw), True) if None not in (e, d) else None
    if isinstance(event, ev.DiscreteLaplace):
        b, d = _number(event.scale), _number(event.sensitivity)
        if None in (b, d) or d != int(d):
            return None
        return pld.discrete_laplace(b, int(d), **kw), True
    if isinstance(event, ev.DiscreteGaussian):
        s, d = _number(event.sigma), _number(event.sensitivity)
        if None in (s, d) or d != int(d):
            return None
        return pld.discrete_gaussian(s, int(d), **kw), True
    if isinstance(event, ev.Exponential) and rate == 1.0:
        e = _number(event.epsilon)
        return (pld.bounded_range(e, value_discretization=h), False) if e is not None else None
    return None


_PLD_MEMO: collections.OrderedDict[tuple[Any, ...], Any] = collections.OrderedDict()
_PLD_MEMO_SIZE = 24


def _memo(key: tuple[Any, ...], build: Any) -> Any:
    """``build()`` memoised on ``key`` (an event, what is done to it, and the grid step): a PLD
    is a function of its event, and the same sub-events recur across queries."""
    key = (*key, VALUE_DISCRETIZATION)
    try:
        hit = _PLD_MEMO.get(key)
    except TypeError:  # unhashable parameters: no memo
        return build()
    if hit is not None:
        _PLD_MEMO.move_to_end(key)
        return hit
    value = build()
    if value is not None:
        _PLD_MEMO[key] = value
        if len(_PLD_MEMO) > _PLD_MEMO_SIZE:
            _PLD_MEMO.popitem(last=False)
    return value


def _pld_statement(event: Event, pair: pld.PLDPair, tight: bool, premises: tuple[Step, ...],
                   formula: str) -> LossDistribution:
    return LossDistribution(Step(PLD_ACCOUNTING, event, "privacy loss distribution", formula,
                                 premises), pair=pair, tight=tight, exact_profile=tight)


def _safe(fn: Any) -> Any:
    """Run a PLD construction; a ValueError (grid too large, extreme parameters) means the
    PLD result does not apply here, and the other results still do."""
    try:
        return fn()
    except (ValueError, OverflowError, MemoryError):
        return None


def _leaf_rule(event: Event, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    built = _memo(("leaf", event), lambda: _safe(lambda: _leaf_pld(event)))
    if built is None:
        return []
    pair, tight = built
    return [_pld_statement(event, pair, tight, (), f"PLD of {type(event).__name__}")]


for _cls in (ev.Gaussian, ev.Laplace, ev.RandomizedResponse, ev.PureDP, ev.ApproxDP,
             ev.DiscreteLaplace, ev.DiscreteGaussian, ev.Exponential):
    register_rule(_cls)(_leaf_rule)


@register_rule(ev.Exponential)
def _exponential_bounded_range(event: ev.Exponential, children: Children,
                               budget: sympy.Expr | None) -> list[Statement]:
    """eps-BR implies eps^2/8-zCDP (the exponential mechanism is eps-BR)."""
    rho = br.bounded_range_zcdp(event.epsilon)
    return [Concentrated(Step(br.BR_ZCDP, event, f"({show(rho)})-zCDP",
                              f"rho = eps^2/8 = {show(rho)}"), rho=rho)]


@register_rule(ev.PoissonSampled)
def _poisson(event: ev.PoissonSampled, children: Children,
             budget: sympy.Expr | None) -> list[Statement]:
    rate = _number(event.rate)
    if rate is None:
        return []
    out: list[Statement] = []
    built = _memo(("poisson", event), lambda: _safe(lambda: _leaf_pld(event.event, rate)))
    if built is not None:
        out.append(_pld_statement(event, built[0], built[1], (),
                                  f"PLD of Poisson({show(event.rate)})-sampled "
                                  f"{type(event.event).__name__}"))
    inner = event.event
    if isinstance(inner, ev.Gaussian) and None not in (_number(inner.sigma),
                                                       _number(inner.sensitivity)):
        out.append(_renyi_subsampled_gaussian(event, inner, 1))
    return out


def _renyi_subsampled_gaussian(event: Event, inner: ev.Gaussian, count: int) -> RenyiCurve:
    orders = rdp.DEFAULT_ORDERS[:48]

    def exact_tau(order: int) -> sympy.Expr:
        return count * rdp.subsampled_gaussian_rdp(order, inner.sigma, event.rate,
                                                   inner.sensitivity)

    taus = tuple(count * rdp.subsampled_gaussian_rdp(a, inner.sigma, event.rate,
                                                     inner.sensitivity, numeric=True)
                 for a in orders)
    return RenyiCurve(Step(rdp.RDP_SUBSAMPLED_GAUSSIAN, event, "RDP curve",
                           f"tau(alpha) = {count} x MTZ19 bound, integer orders 2..{orders[-1]}"),
                      orders=orders, taus=taus, exact_tau=exact_tau)


#: Orders of the RDP curve of a Gaussian sampled without replacement (WBK19's bound sums
#: alpha terms, so very large orders are left out).
WOR_ORDERS: tuple[int, ...] = tuple(range(2, 65))


@register_rule(ev.SampledWithoutReplacement)
def _without_replacement(event: ev.SampledWithoutReplacement, children: Children,
                         budget: sympy.Expr | None) -> list[Statement]:
    """RDP of a Gaussian run on m of n records sampled without replacement (replace-one):
    Wang, Balle, Kasiviswanathan 2019, Theorem 9, with the Gaussian's RDP
    tau(j) = j Delta^2 / (2 sigma^2) (Mironov 2017, Proposition 7) and tau(oo) = oo."""
    inner = event.event
    if not isinstance(inner, ev.Gaussian):
        return []
    if None in (_number(inner.sigma), _number(inner.sensitivity), _number(event.sample),
                _number(event.population)):
        return []
    ratio = event.sample / event.population

    def base(j: int) -> sympy.Expr:
        return rdp.gaussian_rdp(j, inner.sigma, inner.sensitivity)

    def exact_tau(order: int) -> sympy.Expr:
        return rdp.without_replacement_rdp(order, ratio, base)

    taus = tuple(_wor_gaussian_tau_float(a, float(ratio),
                                         float(inner.sensitivity**2 / (2 * inner.sigma**2)))
                 for a in WOR_ORDERS)
    return [RenyiCurve(Step(rdp.RDP_WITHOUT_REPLACEMENT, event, "RDP curve",
                            f"tau(alpha) = WBK19 Thm 9 bound, gamma = m/n = {show(ratio)}, "
                            f"integer orders 2..{WOR_ORDERS[-1]}"),
                       orders=WOR_ORDERS, taus=taus, exact_tau=exact_tau)]


#: Fractions of a without-replacement node's delta budget at which its (eps, delta)
#: statements are derived: all of it (a lone node) and half of it (so that a k-fold
#: composition above keeps half of its budget as the slack of advanced composition).
WOR_BUDGET_SHARES: tuple[sympy.Expr, ...] = (sympy.Integer(1), sympy.Rational(1, 2))


@register_rule(ev.SampledWithoutReplacement)
def _without_replacement_approx(event: ev.SampledWithoutReplacement, children: Children,
                                budget: sympy.Expr | None) -> list[Statement]:
    """Balle, Barthe, Gaboardi 2018, Theorem 9 on any child with an (eps, delta) guarantee
    (pure, approximate, or a whole profile such as a Gaussian's, resolved at the delta the
    budget leaves it), symbolic parameters allowed.

    Privacy: with gamma = m/n, if the child is (eps, delta)-DP under replace-one on m-record
    datasets, the sampled mechanism is (log(1 + gamma (e^eps - 1)), gamma delta)-DP under
    replace-one.  The child's delta is taken at each share of :data:`WOR_BUDGET_SHARES` of
    budget / gamma (falling back to the child's own delta, which the parent then compares)."""
    (inner,) = children
    ratio = event.sample / event.population
    out: list[Statement] = []
    for p in of_currency(inner, Pure)[:1]:
        e, _ = amp.without_replacement_amplification(p.epsilon, 0, event.sample,
                                                     event.population)
        out.append(Pure(Step(amp.WITHOUT_REPLACEMENT_AMPLIFICATION, event, f"({show(e)})-DP",
                             f"eps = log(1 + (m/n)(e^eps_0 - 1)), m/n = {show(ratio)}",
                             (p.step,)), epsilon=e))
        if e.free_symbols:
            # log(1 + x) <= x: a looser bound in a form the verifier factors (gamma times a
            # function of eps alone), kept beside the exact one as an (eps, 0) statement
            x = ratio * (sympy.exp(p.epsilon) - 1)
            out.append(Approx(Step(amp.WITHOUT_REPLACEMENT_AMPLIFICATION, event,
                                   f"({show(x)}, 0)-DP",
                                   "eps = (m/n)(e^eps_0 - 1) >= log(1 + (m/n)(e^eps_0 - 1))",
                                   (p.step,)), epsilon=x, delta=sympy.Integer(0)))
    if out:
        return out
    targets = [None] if budget is None else [share * budget / ratio
                                              for share in WOR_BUDGET_SHARES]
    for target in targets:
        if target is not None and not target.free_symbols and not target < 1:
            continue  # (a symbolic target is left to the conversions, as for zCDP)
        cand = best_candidate(inner, target)
        if cand is None and target is targets[-1] and not out:
            cand = best_candidate(inner, None)  # the child's own delta; the parent decides
        if cand is None:
            continue
        e, d = amp.without_replacement_amplification(cand.epsilon, cand.delta, event.sample,
                                                      event.population)
        out.append(Approx(Step(amp.WITHOUT_REPLACEMENT_AMPLIFICATION, event,
                               f"({show(e)}, {show(d)})-DP",
                               f"eps = log(1 + (m/n)(e^eps_0 - 1)), delta = (m/n) delta_0, "
                               f"m/n = {show(ratio)}", (cand.step,)), epsilon=e, delta=d))
    return out


@register_rule(ev.SelfComposed)
def _self_composed_advanced(event: ev.SelfComposed, children: Children,
                            budget: sympy.Expr | None) -> list[Statement]:
    """Advanced composition of k copies of the child's (eps, delta) statements."""
    return _advanced_approx(event, children[0], event.count, budget)


@register_rule(ev.Composed)
def _composed_advanced(event: ev.Composed, children: Children,
                       budget: sympy.Expr | None) -> list[Statement]:
    """The same for k identical parts (each gets budget / k, as in k-fold self-composition,
    so composing k at once and k times agree)."""
    parts = event.events
    if len(parts) < 2 or any(p != parts[0] for p in parts[1:]):
        return []
    k = len(parts)
    out = _advanced_approx(event, children[0], k, budget)
    # the RDP curve too, as SelfComposed composes it
    out += [_renyi_power(event, s, k) for s in of_currency(children[0], RenyiCurve)]
    return out


def _renyi_power(event: Event, s: RenyiCurve, k: int) -> RenyiCurve:
    """k-fold composition of an RDP curve: tau_k(alpha) = k tau(alpha) (Mironov 2017)."""
    base = s.exact_tau
    return RenyiCurve(Step(rdp.RDP_COMPOSITION, event, "RDP curve",
                           f"tau(alpha) = {k} x tau_0(alpha)", (s.step,)),
                      orders=s.orders, taus=tuple(k * t for t in s.taus),
                      exact_tau=lambda a: k * base(a))


def _advanced_approx(event: Event, inner: list[Statement], k: Any,
                     budget: sympy.Expr | None) -> list[Statement]:
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
        slack = sympy.sympify(budget - k * s.delta)
        if compare(slack, 0) != 1 or (not slack.free_symbols and not slack < 1):
            continue
        eps, dlt = advanced.advanced_composition(s.epsilon, s.delta, k, slack)
        out.append(Approx(Step(advanced.ADVANCED_COMPOSITION, event,
                               f"({show(eps)}, {show(dlt)})-DP",
                               f"eps = sqrt(2k ln(1/delta')) eps_0 + k eps_0 (e^eps_0 - 1), "
                               f"k = {show(k)}, delta' = {show(slack)}", (s.step,)),
                          epsilon=eps, delta=dlt))
    return out


def _wor_gaussian_tau_float(order: int, ratio: float, rho: float) -> float:
    """WBK19 Theorem 9 for a Gaussian (tau(j) = j rho), in floats: only used to choose the
    order; the chosen order is then evaluated exactly and rounded up."""
    import mpmath

    with mpmath.workdps(30):
        g, r = mpmath.mpf(ratio), mpmath.mpf(rho)
        t2 = 2 * r
        total = 1 + g**2 * mpmath.binomial(order, 2) * min(4 * (mpmath.exp(t2) - 1),
                                                          2 * mpmath.exp(t2))
        for i in range(3, order + 1):
            total += g**i * mpmath.binomial(order, i) * mpmath.exp((i - 1) * i * r) * 2
        return float(mpmath.log(total) / (order - 1))


@register_rule(ev.SelfComposed)
def _self_composed_tight(event: ev.SelfComposed, children: Children,
                         budget: sympy.Expr | None) -> list[Statement]:
    (inner,) = children
    k = _number(event.count)
    if k is None:
        return []
    k = int(k)
    out: list[Statement] = []
    for s in of_currency(inner, LossDistribution):
        composed = _memo(("power", s.step.event, k),
                         lambda s=s: _safe(lambda: s.pair.self_compose(k)))
        if composed is not None:
            out.append(_pld_statement(event, composed, s.tight, (s.step,),
                                      f"{k}-fold FFT self-composition"))
    out += [_renyi_power(event, s, k) for s in of_currency(inner, RenyiCurve)]
    out += _homogeneous_pure(event, inner, k)
    if isinstance(event.event, ev.Exponential) and _number(event.event.epsilon) is not None:
        out.append(BoundedRangeComposition(
            Step(br.BR_ADAPTIVE_COMPOSITION, event, "bounded-range composition", f"k = {k}"),
            epsilon0=event.event.epsilon, count=k))
    return out


def _homogeneous_pure(event: Event, inner: Any, k: int) -> list[Statement]:
    """Optimal and advanced composition of k copies of a pure-DP part."""
    out: list[Statement] = []
    pures = of_currency(inner, Pure)
    if pures and _number(pures[0].epsilon) is not None:
        p = pures[0]
        if k <= optimal.MAX_EXACT_COUNT:
            out.append(OptimalComposition(Step(optimal.OPTIMAL_COMPOSITION, event,
                                               "optimal composition", f"k = {k}", (p.step,)),
                                          epsilon0=p.epsilon, delta0=sympy.Integer(0), count=k))
        out.append(AdvancedComposition(Step(advanced.ADVANCED_COMPOSITION, event,
                                            "advanced composition", f"k = {k}", (p.step,)),
                                       epsilon0=p.epsilon, delta0=sympy.Integer(0), count=k))
    return out


@register_rule(ev.Composed)
def _composed_tight(event: ev.Composed, children: Children,
                    budget: sympy.Expr | None) -> list[Statement]:
    parts = list(getattr(event, "events", None) or getattr(event, "parts", None) or [])
    same = bool(parts) and all(e == parts[0] for e in parts[1:])
    extra = _homogeneous_pure(event, children[0], len(children)) if same else []
    if same and isinstance(parts[0], ev.Exponential) and _number(parts[0].epsilon) is not None:
        extra.append(BoundedRangeComposition(
            Step(br.BR_ADAPTIVE_COMPOSITION, event, "bounded-range composition",
                 f"k = {len(parts)}"), epsilon0=parts[0].epsilon, count=len(parts)))
    plds = [of_currency(c, LossDistribution) for c in children]
    if not plds or any(not p for p in plds):
        return extra
    steps_events = [p[0].step.event for p in plds]
    if all(e == steps_events[0] for e in steps_events[1:]):
        # identical parts: the same computation as k-fold self-composition, so that composing
        # k at once and k times give the same number
        composed = _memo(("power", plds[0][0].step.event, len(plds)),
                         lambda: _safe(lambda: plds[0][0].pair.self_compose(len(plds))))
        if composed is None:
            return extra
        return [*extra, _pld_statement(event, composed, plds[0][0].tight,
                                       tuple(p[0].step for p in plds),
                                       f"FFT composition of {len(plds)} identical parts")]
    acc = plds[0][0].pair
    for p in plds[1:]:
        acc = _safe(lambda acc=acc, p=p: acc.compose(p[0].pair))
        if acc is None:
            return []
    tight = all(p[0].tight for p in plds)
    return [_pld_statement(event, acc, tight, tuple(p[0].step for p in plds),
                           f"FFT composition of {len(plds)} parts")]


