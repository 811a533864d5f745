"""Advanced composition: Dwork, Rothblum, Vadhan 2010 and Kairouz, Oh, Viswanath 2015.

Each function computes one bound exactly (an exact number for plain numbers, sympy
otherwise) and is the only place its formula lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import exact, exact_min
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = [
    "ADVANCED_COMPOSITION",
    "KOV_HETEROGENEOUS",
    "advanced_composition",
    "heterogeneous_advanced_composition",
]


def _drv10_epsilon(eps: Any, k: Any, dslack: Any) -> Any:
    """sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1): the epsilon of k-fold adaptive
    composition (Dwork, Rothblum, Vadhan 2010, Theorem III.3), on exact numbers or sympy (the
    card shows it at symbols)."""
    return fn.sqrt(2 * k * fn.log(1 / dslack)) * eps + k * eps * (fn.exp(eps) - 1)


ADVANCED_COMPOSITION = register(
    Theorem(
        key="advanced_composition",
        name="advanced composition",
        citation="Dwork, Rothblum, Vadhan 2010, Theorem III.3; Dwork and Roth 2014, Theorem 3.20",
        assumptions=(
            "k adaptively chosen (eps, delta)-DP mechanisms on the same dataset, any "
            "neighbouring relation; slack delta' in (0, 1)"
        ),
        statement=(
            "the composition is (sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), "
            "k delta + delta')-DP"
        ),
        bound=Bound.over_positive(
            "epsilon delta delta' k",
            lambda eps, delta, dslack, k: {
                "epsilon": _drv10_epsilon(eps, k, dslack),
                "delta": k * delta + dslack,
            },
        ),
        domain=("epsilon >= 0", "delta >= 0", "k >= 1", "0 < delta' < 1"),
        latex=(
            r"\varepsilon' = \sqrt{2k\ln(1/\delta')}\,\varepsilon + k\varepsilon(e^\varepsilon-1),"
            r"\ \delta_{tot} = k\delta + \delta'"
        ),
    )
)


def _check_slack(slack: sympy.Expr) -> sympy.Expr:
    s = exact(slack, "delta_slack")
    if not s.free_symbols and not (0 < s < 1):
        raise ValueError(f"delta_slack must be in (0, 1), got {s}")
    return s


def advanced_composition(
    epsilon: sympy.Expr, delta_: sympy.Expr, count: sympy.Expr, delta_slack: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(eps', delta_total) of k-fold adaptive composition of an (eps, delta)-DP mechanism.

    Privacy: Dwork and Roth 2014, Theorem 3.20: for every delta' in (0, 1) the k-fold adaptive
    composition is ``(sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta')``-DP.

    Args:
        epsilon: eps >= 0 of each mechanism.
        delta_: delta >= 0 of each mechanism.
        count: k >= 1.
        delta_slack: delta' in (0, 1).

    Returns:
        ``(epsilon_total, delta_total)`` exact.

    Raises:
        ValueError: if delta_slack is not in (0, 1) or count < 1.
    """
    e, d, n = exact(epsilon, "epsilon"), exact(delta_, "delta"), exact(count, "count")
    s = _check_slack(delta_slack)
    if not n.free_symbols and n < 1:
        raise ValueError(f"count must be >= 1, got {n}")
    return _drv10_epsilon(e, n, s), n * d + s


def _kov_bound() -> dict[str, sympy.Expr]:
    """The card's bound (Kairouz, Oh, Viswanath 2015, Theorem 3.5), built on first read."""
    dslack, k = sympy.symbols("delta' k", positive=True)
    i = sympy.Symbol("i", integer=True, positive=True)
    eps_i, delta_i = sympy.IndexedBase("epsilon"), sympy.IndexedBase("delta")
    squares = sympy.Sum(eps_i[i] ** 2, (i, 1, k))  # sum_i eps_i^2
    drift = sympy.Sum(  # sum_i a_i
        (sympy.exp(eps_i[i]) - 1) * eps_i[i] / (sympy.exp(eps_i[i]) + 1), (i, 1, k)
    )
    return {
        "epsilon": sympy.Min(
            sympy.Sum(eps_i[i], (i, 1, k)),
            drift + sympy.sqrt(2 * squares * sympy.log(sympy.E + sympy.sqrt(squares) / dslack)),
            drift + sympy.sqrt(2 * squares * sympy.log(1 / dslack)),
        ),
        "delta": 1 - (1 - dslack) * sympy.Product(1 - delta_i[i], (i, 1, k)),
    }


KOV_HETEROGENEOUS = register(
    Theorem(
        key="kov_heterogeneous",
        name="heterogeneous advanced composition",
        citation="Kairouz, Oh, Viswanath 2015 (ICML / IEEE Trans. IT 2017), Theorem 3.5",
        assumptions=(
            "k adaptively chosen mechanisms, the i-th (eps_i, delta_i)-DP; slack delta' in (0, 1)"
        ),
        statement=(
            "the composition is (eps', 1 - (1 - delta') prod_i (1 - delta_i))-DP with eps' the "
            "minimum of sum eps_i, sum a_i + sqrt(2 sum eps_i^2 ln(e + sqrt(sum eps_i^2)/"
            "delta')) and sum a_i + sqrt(2 sum eps_i^2 ln(1/delta')), with "
            "a_i = (e^eps_i - 1) eps_i/(e^eps_i + 1)"
        ),
        bound=Bound(_kov_bound),
        domain=("k >= 1", "0 < delta' < 1"),
        latex=(
            r"\varepsilon' = \min\Big\{\sum\varepsilon_i,\ \sum a_i + \sqrt{2\sum\varepsilon_i^2"
            r"\ln(e + \sqrt{\sum\varepsilon_i^2}/\delta')},\ \sum a_i + \sqrt{2\sum\varepsilon_i^2"
            r"\ln(1/\delta')}\Big\}"
        ),
    )
)


def heterogeneous_advanced_composition(
    epsilons: Sequence[sympy.Expr], deltas: Sequence[sympy.Expr], delta_slack: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(eps', delta_total) of Kairouz, Oh, Viswanath 2015, Theorem 3.5 (heterogeneous).

    Privacy: the adaptive composition of (eps_i, delta_i)-DP mechanisms is
    ``(eps', 1 - (1 - delta') prod (1 - delta_i))``-DP with eps' the minimum of the three
    expressions of the theorem (each one is valid on its own).

    Raises:
        ValueError: if the lists differ in length or delta_slack is not in (0, 1).
    """
    if len(epsilons) != len(deltas) or not epsilons:
        raise ValueError(
            f"epsilons and deltas must be non-empty and of equal length, got "
            f"{len(epsilons)} and {len(deltas)}"
        )
    s = _check_slack(delta_slack)
    es = [exact(e, "epsilon") for e in epsilons]
    ds = [exact(d, "delta") for d in deltas]
    sq = sympy.Add(*[e**2 for e in es])
    drift = sympy.Add(*[(sympy.exp(e) - 1) * e / (sympy.exp(e) + 1) for e in es])
    first = sympy.Add(*es)
    second = drift + sympy.sqrt(2 * sq * sympy.log(sympy.E + sympy.sqrt(sq) / s))
    third = drift + sympy.sqrt(2 * sq * sympy.log(1 / s))
    delta_total = 1 - (1 - s) * sympy.Mul(*[1 - d for d in ds])
    return exact_min(first, second, third), delta_total
