"""Zero-concentrated differential privacy (Bun and Steinke 2016).

Each function computes one bound exactly and is the only place its formula lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import endpoints, exact, interval, minimize_bounded
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register


def _sum_rho() -> sympy.Expr:
    """sum_{i=1}^k rho[i], over the k composed mechanisms."""
    i = sympy.Symbol("i", integer=True, positive=True)
    return sympy.Sum(sympy.IndexedBase("rho")[i], (i, 1, sympy.Symbol("k", positive=True)))


PURE_TO_ZCDP = register(
    Theorem(
        key="pure_to_zcdp",
        name="pure DP implies zCDP",
        citation="Bun and Steinke 2016, Proposition 1.4",
        assumptions="an eps-DP mechanism",
        statement="M is (eps^2/2)-zCDP",
        bound=Bound.over_positive("epsilon", lambda eps: {"rho": eps**2 / 2}),
        domain=("epsilon >= 0",),
        latex=r"\rho = \varepsilon^2/2",
    )
)


def pure_to_zcdp(epsilon: sympy.Expr) -> sympy.Expr:
    """eps^2 / 2 (Bun and Steinke 2016, Proposition 1.4)."""
    return exact(epsilon, "epsilon") ** 2 / 2


ZCDP_COMPOSITION = register(
    Theorem(
        key="zcdp_composition",
        name="zCDP composition",
        citation="Bun and Steinke 2016, Lemma 1.7 (Lemma 2.3 in the full version)",
        assumptions="k adaptively composed mechanisms, each rho_i-zCDP",
        statement="the composition is (sum rho_i)-zCDP",
        bound=Bound(lambda: {"rho": _sum_rho()}),
        domain=("k >= 1",),
        latex=r"\rho = \sum_i \rho_i",
    )
)


def zcdp_composition(rhos: Sequence[sympy.Expr]) -> sympy.Expr:
    """sum rho_i (Bun and Steinke 2016, Lemma 1.7)."""
    return fn.Add(*rhos)


ZCDP_TO_APPROX = register(
    Theorem(
        key="zcdp_to_approx",
        name="zCDP to (eps, delta)",
        citation="Bun and Steinke 2016, Proposition 1.3",
        assumptions="a rho-zCDP mechanism; 0 < delta < 1",
        statement="M is (rho + 2 sqrt(rho log(1/delta)), delta)-DP",
        bound=Bound.over_positive(
            "rho delta",
            lambda rho, delta: {"epsilon": rho + 2 * sympy.sqrt(rho * sympy.log(1 / delta))},
        ),
        domain=("rho >= 0", "0 < delta < 1"),
        latex=r"\varepsilon = \rho + 2\sqrt{\rho \log(1/\delta)}",
    )
)


def zcdp_to_approx(rho_: sympy.Expr, delta_: sympy.Expr) -> sympy.Expr:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Proposition 1.3).

    Raises:
        ValueError: if delta is not in (0, 1).
    """
    d = exact(delta_, "delta")
    if not d.free_symbols and not (0 < d < 1):
        raise ValueError(f"zCDP conversion: delta must be in (0, 1), got {d}")
    r = exact(rho_, "rho")
    return r + 2 * fn.sqrt(r * fn.log(1 / d))


def _cks20_epsilon(alpha: Any, rho_: Any, delta_: Any) -> Any:
    """alpha rho + (log(1/delta) + alpha log(1 - 1/alpha) - log(alpha - 1))/(alpha - 1): the
    epsilon of rho-zCDP at delta through order alpha (Canonne, Kamath, Steinke 2020,
    Corollary 13), on exact numbers or sympy (the card shows it at a symbol alpha)."""
    return alpha * rho_ + (
        fn.log(1 / delta_) + alpha * fn.log(1 - 1 / alpha) - fn.log(alpha - 1)
    ) / (alpha - 1)


ZCDP_TO_APPROX_OPTIMAL = register(
    Theorem(
        key="zcdp_to_approx_cks20",
        name="zCDP to (eps, delta) (optimal conversion)",
        citation="Canonne, Kamath, Steinke 2020 (The Discrete Gaussian for DP), Corollary 13",
        assumptions="a rho-zCDP mechanism; 0 < delta < 1; any order alpha > 1",
        statement=(
            "M is (eps, delta)-DP for every alpha > 1 with eps = alpha rho + (log(1/delta) "
            "+ alpha log(1 - 1/alpha) - log(alpha - 1))/(alpha - 1)"
        ),
        bound=Bound.over_positive(
            "rho delta",
            lambda rho, delta: {"epsilon": _cks20_epsilon(sympy.Symbol("alpha"), rho, delta)},
        ),
        domain=("rho >= 0", "0 < delta < 1"),
        latex=(
            r"\varepsilon = \inf_{\alpha>1} \alpha\rho + \frac{\log(1/\delta) + "
            r"\alpha\log(1-1/\alpha) - \log(\alpha-1)}{\alpha-1}"
        ),
    )
)


def zcdp_to_approx_optimal(rho_: sympy.Expr, delta_: sympy.Expr) -> sympy.Expr:
    """The CKS20 conversion of rho-zCDP to (eps, delta)-DP at a near-optimal rational alpha.

    ``delta = exp((alpha-1)(alpha rho - eps)) (1-1/alpha)^alpha / (alpha-1)`` solved for eps; every
    alpha > 1 gives a valid epsilon, so the order is chosen numerically and the value at that
    (rational) order is returned exactly.

    Privacy: Canonne, Kamath, Steinke 2020, Proposition 12 / Corollary 13: rho-zCDP implies
    (eps, delta)-DP with the returned eps (never larger than Bun-Steinke's rho + 2 sqrt(rho
    log(1/delta)) at the optimal order).

    Returns:
        max(eps, 0) at the chosen order (epsilon is never negative).

    Raises:
        ValueError: if delta is not in (0, 1) or rho is not positive.
    """
    d = exact(delta_, "delta")
    r = exact(rho_, "rho")
    if r.free_symbols or d.free_symbols:
        raise ValueError("the optimal zCDP conversion needs numeric rho and delta")
    if not (0 < d < 1):
        raise ValueError(f"delta must be in (0, 1), got {d}")
    if not r > 0:
        raise ValueError(f"rho must be > 0, got {r}")

    order = cks20_order(r, d)
    # the card's formula (one formula), at the order chosen by cks20_order
    eps = _cks20_epsilon(order, r, d)
    # For delta near 1 the formula goes negative (e.g. -8.52 for rho = 9/2 at delta
    # 1 - 1e-12).  (eps, delta)-DP implies (eps', delta)-DP for every eps' >= eps, so the
    # guarantee stated is (max(eps, 0), delta): epsilon is never negative.  The sign is
    # decided rigorously (interval arithmetic), not by a float.
    lo, hi = endpoints(interval(eps, enough=_sign_decided))
    if hi < 0:
        return fn.Rational(0)
    if lo >= 0:
        return eps
    if fn.is_plain_number(eps):
        return fn.Max(0, eps)
    return sympy.Max(sympy.Integer(0), eps, evaluate=False)


def cks20_order(rho_: Any, delta_: Any) -> sympy.Expr:
    """The rational order alpha > 1 at which :func:`zcdp_to_approx_optimal` evaluates the
    CKS20 conversion: the float minimiser of its epsilon over alpha, rounded to 6 decimals
    (any alpha > 1 is valid; this one is near the best).

    Args:
        rho_: rho > 0 (a number).
        delta_: delta in (0, 1) (a number).

    Returns:
        alpha as an exact rational > 1.
    """
    import math

    rf, log_inv_d = float(exact(rho_, "rho")), float(fn.log(1 / exact(delta_, "delta")))

    def objective(log_gap: float) -> float:
        # the same formula in floats: it only chooses the order, _cks20_epsilon at it is exact
        order = 1 + math.exp(log_gap)
        return order * rf + (log_inv_d + order * math.log1p(-1 / order) - math.log(order - 1)) / (
            order - 1
        )

    best = 1 + math.exp(minimize_bounded(objective, -12.0, 12.0, xatol=1e-9))
    order = fn.Rational(round(best * 10**6), 10**6)
    return order if order > 1 else fn.Rational(101, 100)


def _sign_decided(enclosure: Any) -> bool:
    """Whether an enclosure lies on one side of 0 (``hi < 0`` or ``lo >= 0``)."""
    lo, hi = endpoints(enclosure)
    return bool(hi < 0 or lo >= 0)
