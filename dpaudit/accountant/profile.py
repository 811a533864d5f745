"""Delta for a given epsilon: the privacy profile ``delta(eps)`` of an event, certified.

The accountant's statements are whole privacy profiles or points of one; here each currency
is read at a given epsilon instead of a given delta.  Every number is certified:
``delta_upper`` is an upper bound on the smallest delta for which the event is
(epsilon, delta)-DP, rounded up; ``delta_lower`` a lower bound on it, rounded down (0.0 when
nothing better is certified: no delta is negative).  Which result gives what:

* pure ``eps0``-DP and ``(eps0, delta0)``-DP -- Kairouz, Oh, Viswanath 2015, Theorem 3.3 with
  k = 1 (:func:`~dpaudit.theorems.optimal.optimal_delta`): ``delta(eps) = delta0 + (1 - delta0)
  (e^eps0 - e^eps)_+ / (1 + e^eps0)``, so 0 for pure DP at ``eps >= eps0``;
* k-fold optimal composition -- the same theorem at k (exact, and certified on both sides
  where the composed mechanism attains it);
* rho-zCDP -- Bun and Steinke 2016, Proposition 1.3 solved for delta
  (``delta = exp(-(eps - rho)^2 / (4 rho))`` for ``eps > rho``) and Canonne, Kamath, Steinke
  2020, Corollary 13 at a chosen order;
* an RDP curve -- Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 21 solved for delta at the
  best order: ``delta = exp((alpha - 1)(tau - eps)) ((alpha - 1)/alpha)^(alpha - 1) / alpha``;
* mu-GDP (Gaussian mechanisms) -- Balle and Wang 2018, Theorem 8, exact, so certified on both
  sides;
* a privacy loss distribution -- its certified upper and lower profiles
  (:meth:`dpaudit.pld.PLDPair.delta_bounds`), on a grid refined until the two agree.

A conversion "solved for delta" is the theorem itself: it holds for every delta in (0, 1), and
at the delta it returns its epsilon equals the given one.

Privacy:
    ``delta_lower <= delta*(eps) <= delta_upper`` where ``delta*(eps)`` is the smallest delta
    such that the event is (eps, delta)-DP; every candidate compared is such an upper bound
    and the smallest is returned, the largest certified lower bound beside it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from typing import Any

from dpaudit.accountant import currencies as cur
from dpaudit.accountant.domains import admit
from dpaudit.accountant.statements import (
    Approx,
    Concentrated,
    GaussianDP,
    Pure,
    Statement,
    band_settled,
    compare,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import ExactNumber, is_sympy_object, rational
from dpaudit.numeric import EvaluationError, exact, exact_value, float_down, float_up
from dpaudit.numeric import functions as fn
from dpaudit.theorems import optimal, rdp, zcdp
from dpaudit.theorems import primitives as prim
from dpaudit.theorems.accounting import PLD_ACCOUNTING
from dpaudit.theorems.base import Theorem

__all__ = ["DeltaCandidate", "DeltaGuarantee", "check_epsilon", "delta_for_epsilon"]

#: Relative gap between the certified PLD profiles below which the grid is not refined.
TARGET_DELTA_GAP = 1e-3


@dataclasses.dataclass(frozen=True)
class DeltaCandidate:
    """One result's bounds on delta at the requested epsilon.

    Attributes:
        theorem: the result applied.
        upper: an upper bound on delta (a float rounded up).
        lower: a certified lower bound on delta (rounded down), or None when the result is
            not exact for the event.
        formula: how it was obtained, with the numbers substituted.
    """

    theorem: Theorem
    upper: float
    lower: float | None
    formula: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "theorem": self.theorem.name,
            "citation": self.theorem.citation,
            "delta_upper": self.upper,
            "delta_lower": self.lower,
            "formula": self.formula,
        }


@dataclasses.dataclass(frozen=True)
class DeltaGuarantee:
    """Certified bounds on the smallest delta at which an event is (epsilon, delta)-DP.

    Attributes:
        event: the event accounted.
        epsilon: the epsilon asked about (exact).
        delta_upper: the event is (epsilon, delta_upper)-DP (a float rounded up; 1.0 when no
            result bounds it below the trivial 1).
        delta_lower: the event is not (epsilon, d)-DP for any d < delta_lower (rounded down;
            0.0 when nothing is certified).
        theorem: the result that gave ``delta_upper`` (None for the trivial bound 1).
        lower_theorem: the result that gave ``delta_lower`` (None when it is 0.0).
        candidates: every result compared.
    """

    event: Event
    epsilon: sympy.Expr
    delta_upper: float
    delta_lower: float
    theorem: Theorem | None
    lower_theorem: Theorem | None
    candidates: tuple[DeltaCandidate, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (floats rounded in the safe direction)."""
        return {
            "event": self.event.expression(),
            "epsilon": float_down(self.epsilon),
            "epsilon_exact": str(self.epsilon),
            "delta_upper": self.delta_upper,
            "delta_lower": self.delta_lower,
            "theorem": None if self.theorem is None else self.theorem.name,
            "citation": None if self.theorem is None else self.theorem.citation,
            "lower_theorem": None if self.lower_theorem is None else self.lower_theorem.name,
            "candidates": [c.to_dict() for c in self.candidates],
            "kind": "delta_upper: upper bound (rounded up); delta_lower: lower bound "
            "(rounded down)",
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def text(self) -> str:
        """The bounds and the results compared, as text."""
        lines = [
            f"{self.event}",
            f"  at epsilon = {show(self.epsilon)}: delta in [{self.delta_lower:.6g}, "
            f"{self.delta_upper:.6g}]",
            f"  upper bound by {self.theorem.name if self.theorem else 'none (delta <= 1)'}"
            + (f" [{self.theorem.citation}]" if self.theorem else ""),
        ]
        if self.lower_theorem is not None:
            lines.append(f"  lower bound by {self.lower_theorem.name} (certified)")
        lines.append("candidates:")
        for c in self.candidates:
            low = "" if c.lower is None else f", lower {c.lower:.6g}"
            lines.append(f"  {c.theorem.name}: upper {c.upper:.6g}{low}  ({c.formula})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return (
            f"{self.event} at epsilon = {show(self.epsilon)}: delta in "
            f"[{self.delta_lower:.6g}, {self.delta_upper:.6g}]"
        )


def check_epsilon(epsilon: Any) -> sympy.Expr:
    """An epsilon to ask about: an exact number >= 0.

    Raises:
        ValueError: naming the admissible range and the value, for anything else.
    """
    if epsilon is None:
        raise ValueError("epsilon must be a number >= 0, got None")
    e = exact(epsilon, "epsilon")
    try:  # an exact number: decided by interval arithmetic, without sympy
        admissible = not is_sympy_object(e) and e >= 0
    except TypeError:  # undecided by intervals (0 written as log(2) - log(2)): sympy decides
        admissible = False
    if not admissible:
        s = e.to_sympy() if isinstance(e, ExactNumber) else e
        admissible = not s.free_symbols and s.is_real is True and bool(s >= 0)
    if not admissible:
        raise ValueError(f"epsilon must be a number >= 0, got {epsilon!r}")
    return e


def delta_for_epsilon(
    event: Event, statements: list[Statement], epsilon: sympy.Expr
) -> DeltaGuarantee:
    """Certified bounds on delta at ``epsilon`` from the statements proved for ``event``.

    Args:
        event: the (numeric) event.
        statements: what the accountant proved for it (:meth:`Accountant.statements`).
        epsilon: an exact epsilon >= 0 (:func:`check_epsilon`).

    Returns:
        A :class:`DeltaGuarantee`.

    Raises:
        ArithmeticError: if a certified lower bound exceeds a certified upper bound (a bug:
            nothing is returned rather than a contradiction).
    """
    found: list[DeltaCandidate] = []
    # costly currencies (privacy loss distributions) last, and not at all once a cheaper
    # result is exact (as in Accountant.guarantee: statements.SETTLED)
    for s in sorted(statements, key=lambda s: s.costly):
        if s.costly and any(_exact(c) for c in found):
            continue
        for kind, rule in _RULES:
            if isinstance(s, kind):
                found.extend(_applied(rule, s, epsilon))
                break
    upper = min(found, key=lambda c: c.upper, default=None)
    lowers = [c for c in found if c.lower is not None and c.lower > 0]
    lower = max(lowers, key=lambda c: c.lower or 0.0, default=None)
    d_up = 1.0 if upper is None else min(1.0, upper.upper)
    d_lo = 0.0 if lower is None else float(lower.lower or 0.0)
    if d_lo > d_up:
        raise ArithmeticError(
            f"certified delta bounds disagree for {event} at epsilon = {epsilon}: "
            f"lower {d_lo!r} > upper {d_up!r}; please report this"
        )
    return DeltaGuarantee(
        event,
        epsilon,
        d_up,
        d_lo,
        None if upper is None or upper.upper >= 1 else upper.theorem,
        None if lower is None else lower.theorem,
        tuple(found),
    )


def _exact(c: DeltaCandidate) -> bool:
    """Whether a candidate settles delta: 0 (nothing is smaller), or a certified band within
    :data:`SETTLED` of its upper bound."""
    if c.upper == 0:
        return True
    return c.lower is not None and band_settled(c.upper, c.lower)


def _applied(rule: Any, statement: Statement, eps: sympy.Expr) -> list[DeltaCandidate]:
    """``rule(statement, eps)``; a result that cannot be evaluated here (interval arithmetic
    undecided, an overflow) gives no candidate, and the others still do."""
    try:
        return rule(statement, eps)
    except (EvaluationError, ValueError, OverflowError, ZeroDivisionError):
        return []


# ---- one reader per currency -----------------------------------------------------------


def _kov(epsilon0: sympy.Expr, delta0: sympy.Expr, count: int, eps: sympy.Expr) -> sympy.Expr:
    """Kairouz, Oh, Viswanath 2015, Theorem 3.3: the exact delta of k-fold composition."""
    return optimal.optimal_delta(epsilon0, delta0, count, eps)


def _pure(s: Pure, eps: sympy.Expr) -> list[DeltaCandidate]:
    if exact_value(s.epsilon).free_symbols:
        return []
    if compare(eps, s.epsilon) in (0, 1):  # eps >= eps0: eps0-DP implies (eps, 0)-DP
        return [
            DeltaCandidate(
                s.step.theorem,
                0.0,
                0.0,
                f"({show(s.epsilon)}, 0)-DP and eps = {show(eps)} >= {show(s.epsilon)}",
            )
        ]
    return _approx_point(s.step.event, s.epsilon, rational(0), eps)


def _approx(s: Approx, eps: sympy.Expr) -> list[DeltaCandidate]:
    if exact_value(s.epsilon).free_symbols or exact_value(s.delta).free_symbols:
        return []
    return _approx_point(s.step.event, s.epsilon, s.delta, eps)


def _approx_point(
    event: Event, e0: sympy.Expr, d0: sympy.Expr, eps: sympy.Expr
) -> list[DeltaCandidate]:
    """An (e0, d0)-DP mechanism is (eps, delta)-DP at KOV15 Theorem 3.3's delta with k = 1."""
    if not d0 < 1:
        return []
    if admit(optimal.OPTIMAL_COMPOSITION, event, {"epsilon": e0, "delta": d0, "k": 1}) is None:
        return []
    value = _kov(e0, d0, 1, eps)
    return [
        DeltaCandidate(
            optimal.OPTIMAL_COMPOSITION,
            float_up(value),
            None,
            f"k = 1, eps_0 = {show(e0)}, delta_0 = {show(d0)}: "
            "delta = delta_0 + (1 - delta_0)(e^eps_0 - e^eps)_+/(1 + e^eps_0)",
        )
    ]


def _optimal(s: cur.OptimalComposition, eps: sympy.Expr) -> list[DeltaCandidate]:
    if s.count > optimal.MAX_EXACT_COUNT or cur._number(s.epsilon0) is None:
        return []
    value = _kov(s.epsilon0, s.delta0, s.count, eps)
    attained = s.delta0 == 0 and cur._copies_binomial_exact(s.step.event, s.count)
    return [
        DeltaCandidate(
            optimal.OPTIMAL_COMPOSITION,
            float_up(value),
            float_down(value) if attained else None,
            f"k = {s.count}, eps_0 = {show(s.epsilon0)}, delta_0 = {show(s.delta0)}",
        )
    ]


def _zcdp(s: Concentrated, eps: sympy.Expr) -> list[DeltaCandidate]:
    r = exact_value(s.rho)
    if r.free_symbols:
        return []
    if r == 0:
        return [DeltaCandidate(s.step.theorem, 0.0, 0.0, "rho = 0: the two laws are equal")]
    out: list[DeltaCandidate] = []
    if compare(eps, r) == 1:  # Bun-Steinke Prop 1.3 solved for delta (eps > rho)
        value = fn.exp(-((eps - r) ** 2) / (4 * r))
        out.append(
            DeltaCandidate(
                zcdp.ZCDP_TO_APPROX,
                float_up(value),
                None,
                f"delta = exp(-(eps - rho)^2/(4 rho)), rho = {show(r)}",
            )
        )
    # Canonne-Kamath-Steinke 2020, Cor 13: delta = exp((a-1)(a rho - eps)) (1-1/a)^a / (a-1)
    import numpy as np  # here: ``dpaudit account`` at delta 0 needs no numpy

    rf, ef = float(r), float(eps)
    a = _best_order(lambda x: (x - 1) * (x * rf - ef) + x * np.log1p(-1 / x) - np.log(x - 1))
    if a is not None:
        a_q = rational(Fraction(a).limit_denominator(1000))
        if a_q > 1:
            # (1 - 1/a)^a as exp(a log(1 - 1/a)): sympy would factor a rational power
            log_value = (a_q - 1) * (a_q * r - eps) + a_q * fn.log(1 - 1 / a_q)
            value = fn.exp(log_value) / (a_q - 1)
            out.append(
                DeltaCandidate(
                    zcdp.ZCDP_TO_APPROX_OPTIMAL,
                    float_up(value),
                    None,
                    f"alpha = {show(a_q)}, rho = {show(r)}",
                )
            )
    return out


def _best_order(log_delta: Any) -> float | None:
    """The order alpha > 1 minimising ``log_delta(alpha)`` (floats: only a choice; the bound
    at the chosen order is then evaluated exactly)."""
    import numpy as np

    grid = 1 + np.logspace(-4, 5, 400)
    with np.errstate(all="ignore"):
        values = log_delta(grid)
    if not np.any(np.isfinite(values)):
        return None
    i = int(np.nanargmin(np.where(np.isfinite(values), values, np.inf)))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(60):  # golden-section refinement inside the bracketing cell
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        with np.errstate(all="ignore"):
            f1, f2 = log_delta(np.array([m1, m2]))
        if f1 < f2:
            hi = m2
        else:
            lo = m1
    return float((lo + hi) / 2)


def _renyi(s: cur.RenyiCurve, eps: sympy.Expr) -> list[DeltaCandidate]:
    import numpy as np

    a = np.asarray(s.orders, dtype=float)
    t = np.asarray([float(x) for x in s.taus])
    ef = float(eps)
    with np.errstate(all="ignore"):
        log_d = (a - 1) * (t - ef) + (a - 1) * np.log((a - 1) / a) - np.log(a)
    if not np.any(np.isfinite(log_d)):
        return []
    order: Any = int(s.orders[int(np.nanargmin(np.where(np.isfinite(log_d), log_d, np.inf)))])
    if s.tau_real is not None:  # the curve is known between integers: the best real order
        tau_real = s.tau_real

        def log_delta(x: float) -> float:
            return (x - 1) * (tau_real(x) - ef) + (x - 1) * math.log((x - 1) / x) - math.log(x)

        order = rdp.best_real_order(log_delta, order)
    tau = (s.tau_upper or s.exact_tau)(order)
    if is_sympy_object(tau) and tau in (sympy.oo, sympy.zoo, sympy.nan):
        return []
    alpha = exact(order, "order")
    # BBGHS20 Thm 21 solved for delta; increasing in tau, so tau rounded up is sound
    value = fn.exp((alpha - 1) * (tau - eps)) * ((alpha - 1) / alpha) ** (alpha - 1) / alpha
    up = float_up(value)
    if up < 1 and admit(rdp.RDP_CONVERSION, s.step.event, {"alpha": alpha}) is None:
        return []
    return [
        DeltaCandidate(
            rdp.RDP_CONVERSION,
            up,
            None,
            f"order alpha = {show(alpha)}: delta = exp((alpha-1)(tau - eps)) "
            "((alpha-1)/alpha)^(alpha-1)/alpha",
        )
    ]


def _gdp(s: GaussianDP, eps: sympy.Expr) -> list[DeltaCandidate]:
    if exact_value(s.mu).free_symbols:
        return []
    if admit(prim.GAUSSIAN_ANALYTIC, s.step.event, {"epsilon": eps}) is None:
        return []
    value = prim.gdp_delta(s.mu, eps)
    return [
        DeltaCandidate(
            prim.GAUSSIAN_ANALYTIC,
            max(0.0, float_up(value)),
            max(0.0, float_down(value)) if s.exact_profile else None,
            f"delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), mu = {show(s.mu)}",
        )
    ]


def _pld(s: cur.LossDistribution, eps: sympy.Expr) -> list[DeltaCandidate]:
    if admit(PLD_ACCOUNTING, s.step.event, {}) is None:
        return []
    # the profile decreases in eps: the upper side is read at eps rounded down, the lower
    # side at eps rounded up
    e_dn, e_up = float_down(eps), float_up(eps)
    found = refined_delta_bounds(s.build, e_dn, e_up)
    if found is None:
        return []
    lo, hi, h = found
    exact_here = s.tight and s.exact_profile
    return [
        DeltaCandidate(
            PLD_ACCOUNTING,
            hi,
            lo if exact_here else None,
            f"delta in [{lo:.6g}, {hi:.6g}] (grid {h:g})"
            + ("" if exact_here else "; dominating pair of a family: upper bound only"),
        )
    ]


def refined_delta_bounds(
    build: Any, eps_for_upper: float, eps_for_lower: float
) -> tuple[float, float, float] | None:
    """Certified ``(lower, upper, h)`` on the profile of ``build(h)`` at epsilon.

    The grid starts at :data:`~dpaudit.accountant.currencies.COARSEST_GRID` and halves (at
    least) while the certified gap exceeds :data:`TARGET_DELTA_GAP` times the upper bound
    (not at all while :data:`~dpaudit.accountant.currencies.COARSEST_ONLY` is set),
    down to :data:`~dpaudit.accountant.currencies.FINEST_GRID`; every grid gives certified
    bounds, so the best of each side is kept.

    Returns None when no grid can be built.
    """
    h = cur.COARSEST_GRID
    best_lo, best_hi, used = 0.0, math.inf, h
    reserve = cur.ONE_TRANSFORM_RESERVE.get()
    while True:
        pair = build(h)
        if pair is not None:
            best_lo = max(best_lo, pair.delta_bounds(eps_for_lower, reserve=reserve)[0])
            hi = pair.delta_bounds(eps_for_upper, reserve=reserve)[1]
            if hi < best_hi:
                best_hi, used = hi, h
        gap = best_hi - best_lo
        if h <= cur.FINEST_GRID or gap <= TARGET_DELTA_GAP * best_hi or cur.COARSEST_ONLY.get():
            break
        h = max(cur.FINEST_GRID, h * 0.25)
    if not math.isfinite(best_hi):
        return None
    return min(best_lo, best_hi), best_hi, used


_RULES: tuple[tuple[type, Any], ...] = (
    (Pure, _pure),
    (Approx, _approx),
    (cur.OptimalComposition, _optimal),
    (Concentrated, _zcdp),
    (cur.RenyiCurve, _renyi),
    (GaussianDP, _gdp),
    (cur.LossDistribution, _pld),
)
