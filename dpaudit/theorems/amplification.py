"""Privacy amplification by subsampling (Balle, Barthe, Gaboardi 2018).

Each subsampling scheme comes with its own neighbouring relation: Poisson sampling with
add/remove (``D ~_r D'``), sampling without and with replacement with replace-one
(``D ~_s D'``, datasets of the same size n).  Each function computes one bound exactly and is
the only place its formula lives.  Theorem 9 is applied by the accountant (symbolic parameters
allowed) in :mod:`dpaudit.accountant.tight` to any child with a pure, approximate or profile
guarantee, e.g. the Gaussian step of BST14's noisy SGD.
"""

from __future__ import annotations

from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import exact, exact_max, exact_min
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = [
    "POISSON_AMPLIFICATION",
    "WITHOUT_REPLACEMENT_AMPLIFICATION",
    "WITH_REPLACEMENT_AMPLIFICATION",
    "poisson_amplification",
    "with_replacement_amplification",
    "without_replacement_amplification",
]


def _params(epsilon: sympy.Expr, delta_: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    e, d = exact(epsilon, "epsilon"), exact(delta_, "delta")
    if not e.free_symbols and not e >= 0:
        raise ValueError(f"epsilon must be >= 0, got {e}")
    if not d.free_symbols and not (0 <= d <= 1):
        raise ValueError(f"delta must be in [0, 1], got {d}")
    return e, d


POISSON_AMPLIFICATION = register(
    Theorem(
        key="amplification_poisson",
        name="amplification by Poisson subsampling",
        citation="Balle, Barthe, Gaboardi 2018 (NeurIPS), Theorem 8",
        assumptions=(
            "each record included independently with probability q; base mechanism "
            "(eps, delta)-DP under add/remove; result under add/remove"
        ),
        statement="M o S_q is (log(1 + q (e^eps - 1)), q delta)-DP",
        bound=Bound.over_positive(
            "epsilon delta q",
            lambda eps, delta, q: {
                "epsilon": sympy.log(1 + q * (sympy.exp(eps) - 1)),
                "delta": q * delta,
            },
        ),
        domain=("0 < q <= 1", "epsilon >= 0", "delta >= 0"),
        latex=r"\varepsilon' = \log(1 + q(e^\varepsilon - 1)),\ \delta' = q\delta",
    )
)


def poisson_amplification(
    epsilon: sympy.Expr, delta_: sympy.Expr, probability: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(log(1 + q(e^eps - 1)), q delta): Balle, Barthe, Gaboardi 2018, Theorem 8.

    Privacy: if M is (eps, delta)-DP under add/remove, M on a Poisson(q) subsample is
    (eps', delta')-DP under add/remove with the returned values.

    Raises:
        ValueError: if q is not in (0, 1] or eps, delta are out of range.
    """
    e, d = _params(epsilon, delta_)
    p = exact(probability, "probability")
    if not p.free_symbols and not (0 < p <= 1):
        raise ValueError(f"probability must be in (0, 1], got {p}")
    return fn.log(1 + p * (fn.exp(e) - 1)), p * d


WITHOUT_REPLACEMENT_AMPLIFICATION = register(
    Theorem(
        key="amplification_without_replacement",
        name="amplification by sampling without replacement",
        citation="Balle, Barthe, Gaboardi 2018 (NeurIPS), Theorem 9",
        assumptions=(
            "a uniformly random subset of m of the n records; base mechanism (eps, delta)-DP "
            "under replace-one on m-record datasets; result under replace-one"
        ),
        statement="M o S_wo is (log(1 + (m/n)(e^eps - 1)), (m/n) delta)-DP",
        bound=Bound.over_positive(
            "epsilon delta m n",
            lambda eps, delta, m, n: {
                "epsilon": sympy.log(1 + m / n * (sympy.exp(eps) - 1)),
                "delta": m / n * delta,
            },
        ),
        domain=("m >= 1", "n >= m", "epsilon >= 0", "delta >= 0"),
        latex=(
            r"\varepsilon' = \log(1 + \tfrac{m}{n}(e^\varepsilon - 1)),"
            r"\ \delta' = \tfrac{m}{n}\delta"
        ),
    )
)


def _sizes(sample: sympy.Expr, population: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    mm, nn = exact(sample, "sample_size"), exact(population, "population_size")
    if not (mm.free_symbols or nn.free_symbols) and not (mm >= 1 and nn >= 1):
        raise ValueError(f"sample_size and population_size must be >= 1, got {mm} and {nn}")
    return mm, nn


def without_replacement_amplification(
    epsilon: sympy.Expr, delta_: sympy.Expr, sample_size: sympy.Expr, population_size: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """(log(1 + (m/n)(e^eps - 1)), (m/n) delta): Balle, Barthe, Gaboardi 2018, Theorem 9.

    Privacy: under replace-one, M on a uniformly random m-subset of n records is
    (eps', delta')-DP with the returned values.

    Raises:
        ValueError: if m > n or parameters are out of range.
    """
    e, d = _params(epsilon, delta_)
    mm, nn = _sizes(sample_size, population_size)
    if not (mm.free_symbols or nn.free_symbols) and mm > nn:
        raise ValueError(f"sample_size must be <= population_size, got {mm} > {nn}")
    g = mm / nn
    return fn.log(1 + g * (fn.exp(e) - 1)), g * d


WITH_REPLACEMENT_AMPLIFICATION = register(
    Theorem(
        key="amplification_with_replacement",
        name="amplification by sampling with replacement",
        citation="Balle, Barthe, Gaboardi 2018 (NeurIPS), Theorem 10",
        assumptions=(
            "m draws with replacement from the n records; base mechanism (eps0, delta0)-DP "
            "under replace-one on m-record multisets, so a group of k copies is "
            "(k eps0, delta0 sum_{i<k} e^{i eps0})-DP (group privacy); result under "
            "replace-one"
        ),
        statement=(
            "M o S_wr is (eps', sum_k binom(m,k) n^-k (1-1/n)^{m-k} delta_k(eps))-DP with "
            "eps' = log(1 + (1 - (1-1/n)^m)(e^eps - 1)), delta_k the group privacy profile"
        ),
        bound=Bound.over_positive(
            "epsilon m n",
            lambda eps, m, n: {
                "epsilon": sympy.log(1 + (1 - (1 - 1 / n) ** m) * (sympy.exp(eps) - 1))
            },
        ),
        domain=("m >= 1", "n >= 1", "epsilon >= 0"),
    )
)


def with_replacement_amplification(
    epsilon: sympy.Expr,
    base_epsilon: sympy.Expr,
    base_delta: sympy.Expr,
    sample_size: int,
    population_size: sympy.Expr,
) -> tuple[sympy.Expr, sympy.Expr]:
    """(eps', delta') for sampling with replacement (Balle, Barthe, Gaboardi 2018, Theorem 10).

    The group privacy profile for k copies of the differing record is bounded through the
    dominating pair of a (k eps0, delta0 sum_{i<k} e^{i eps0})-DP mechanism:
    ``delta_k(eps) = D_k + (1 - D_k) [e^{k eps0} - e^eps]_+ / (1 + e^{k eps0})``.

    Privacy: under replace-one, M on m draws with replacement is (eps', delta')-DP.

    Re-checked (session 2) against the theorem's statement: the number K of copies of the
    substituted record among the m draws is Binomial(m, 1/n); advanced joint convexity
    (BBG18, Theorem 2) over the event K >= 1 (probability 1 - (1 - 1/n)^m) gives eps', and
    delta' = sum_{k>=1} P(K = k) delta_{M,k}(eps) with delta_{M,k} the group privacy profile
    at distance k.  Implementations that use delta_0 P(K >= 1) instead (no group privacy) are
    wrong; ``tests/theorems/test_with_replacement.py`` brute-forces the mixture's privacy
    profile for a small eps0-DP mechanism and confirms this bound while refuting that one.

    Args:
        epsilon: the level eps >= 0 at which the amplified guarantee is stated.
        base_epsilon: eps0 of the base mechanism.
        base_delta: delta0 of the base mechanism.
        sample_size: m >= 1 (an integer).
        population_size: n >= 1.

    Raises:
        ValueError: on parameters out of range.
    """
    e, _ = _params(epsilon, 0)
    e0, d0 = _params(base_epsilon, base_delta)
    if not isinstance(sample_size, int) or sample_size < 1:
        raise ValueError(f"sample_size must be an integer >= 1, got {sample_size!r}")
    _, nn = _sizes(sample_size, population_size)
    eps_out = fn.log(1 + (1 - (1 - 1 / nn) ** sample_size) * (fn.exp(e) - 1))
    total: Any = fn.Rational(0)
    for k_ in range(1, sample_size + 1):
        group_delta = d0 * sum((fn.exp(i * e0) for i in range(k_)), fn.Rational(0))
        profile = group_delta + (1 - group_delta) * exact_max(0, fn.exp(k_ * e0) - fn.exp(e)) / (
            1 + fn.exp(k_ * e0)
        )
        weight = fn.binomial(sample_size, k_) * nn ** (-k_) * (1 - 1 / nn) ** (sample_size - k_)
        total += weight * exact_min(1, profile)
    return eps_out, total
