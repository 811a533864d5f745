"""Optimal composition of (eps, delta)-DP mechanisms (Kairouz, Oh, Viswanath 2015).

The k-fold adaptive composition of (eps_i, delta_i)-DP mechanisms is dominated by the product
of the pairs ``(P_i, Q_i)`` that output "revealed" with probability delta_i and otherwise a
randomized-response bit with bias ``e^{eps_i}/(1 + e^{eps_i})``; the privacy profile of that
product is therefore the tightest possible bound (Kairouz, Oh, Viswanath 2015, Theorems 3.3
and 3.4; Murtagh and Vadhan 2016 for the heterogeneous case).  This module computes it exactly:
the homogeneous case as a closed-form sympy expression, the heterogeneous case by an exact
enumeration of the loss lattice in high-precision arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import mpmath

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import (
    PRECISION_LOCK,
    endpoints,
    exact,
    float_down,
    float_up,
    interval,
    iv_precision,
    mp_precision,
)
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = [
    "OPTIMAL_COMPOSITION",
    "optimal_delta",
    "optimal_epsilon",
    "optimal_epsilon_bounds",
    "optimal_epsilon_heterogeneous",
]


def _optimal_bound() -> dict[str, sympy.Expr]:
    """The card's bound (Kairouz, Oh, Viswanath 2015, Theorem 3.3), built on first read."""
    eps, delta, eps_g, k = sympy.symbols("epsilon delta epsilon_g k", positive=True)
    l_ = sympy.Symbol("l", integer=True, nonnegative=True)
    return {
        "delta": 1
        - (1 - delta) ** k
        + (1 - delta) ** k
        * sympy.Sum(
            sympy.binomial(k, l_)
            * sympy.Max(0, sympy.exp((k - l_) * eps) - sympy.exp(eps_g + l_ * eps)),
            (l_, 0, k),
        )
        / (1 + sympy.exp(eps)) ** k
    }


OPTIMAL_COMPOSITION = register(
    Theorem(
        key="optimal_composition",
        name="optimal composition",
        citation="Kairouz, Oh, Viswanath 2015, Theorem 3.3 (homogeneous), Theorem 3.4; Murtagh "
        "and Vadhan 2016 (heterogeneous, exact computation)",
        assumptions="k adaptively chosen (eps_i, delta_i)-DP mechanisms, any neighbouring relation",
        statement=(
            "the composition is (eps_g, delta_g)-DP for delta_g = 1 - prod(1 - delta_i) "
            "+ prod(1 - delta_i) * sum_l binom(k, l) [e^{(k-l) eps} - e^{eps_g + l eps}]_+ "
            "/ (1 + e^eps)^k (homogeneous form), and no smaller delta_g holds in general"
        ),
        bound=Bound(_optimal_bound),
        domain=("epsilon >= 0", "0 <= delta < 1", "k >= 1", "0 < delta_g < 1"),
        latex=(
            r"\delta_g = 1-(1-\delta)^k + (1-\delta)^k\frac{\sum_{l}\binom{k}{l}"
            r"[e^{(k-l)\varepsilon}-e^{\varepsilon_g+l\varepsilon}]_+}{(1+e^\varepsilon)^k}"
        ),
    )
)

#: Largest k handled by the exact closed form (beyond it, use the PLD accountant).
MAX_EXACT_COUNT = 5000


def _check(epsilon: sympy.Expr, delta_: sympy.Expr, count: int) -> tuple[sympy.Expr, sympy.Expr]:
    e, d = exact(epsilon, "epsilon"), exact(delta_, "delta")
    if e.free_symbols or d.free_symbols:
        raise ValueError("optimal composition needs numeric epsilon and delta")
    if not e >= 0:
        raise ValueError(f"epsilon must be >= 0, got {e}")
    if not (0 <= d < 1):
        raise ValueError(f"delta must be in [0, 1), got {d}")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_EXACT_COUNT:
        raise ValueError(f"count must be an integer in [1, {MAX_EXACT_COUNT}], got {count!r}")
    return e, d


def optimal_delta(
    epsilon: sympy.Expr, delta_: sympy.Expr, count: int, target_epsilon: sympy.Expr
) -> sympy.Expr:
    """The exact smallest delta_g for which k-fold composition is (target_epsilon, delta_g)-DP.

    Privacy: Kairouz, Oh, Viswanath 2015, Theorem 3.3 -- the returned delta_g is achieved by
    the composition of randomized responses, and suffices for every adaptive composition of
    (eps, delta)-DP mechanisms.

    Args:
        epsilon: eps >= 0 of each mechanism.
        delta_: delta in [0, 1) of each mechanism.
        count: k in [1, MAX_EXACT_COUNT].
        target_epsilon: eps_g.

    Returns:
        delta_g as an exact sympy expression.

    Raises:
        ValueError: on parameters out of range.
    """
    e, d = _check(epsilon, delta_, count)
    g = exact(target_epsilon, "target_epsilon")
    z = (1 + sympy.exp(e)) ** count
    terms = []
    # Which terms are active ([x]_+ > 0, i.e. (k - 2i) eps > eps_g) is decided on rigorous
    # enclosures of eps and eps_g; a term whose sign the enclosures cannot decide (eps_g within
    # their width of a lattice point) is kept as the exact Max(term, 0).  (Comparing floats
    # rounded from irrational eps_g could drop a positive term, making delta_g too small.)
    with PRECISION_LOCK:
        e_iv, g_iv = interval(e, prec=256), interval(g, prec=256)
        with iv_precision(256):
            for i in range(count + 1):
                gap_lo, gap_hi = endpoints((count - 2 * i) * e_iv - g_iv)
                if gap_hi <= 0:
                    continue
                # built unevaluated: the same exact value, without sympy's assumption
                # queries per term (seconds for k in the thousands)
                if gap_lo > 0:
                    with sympy.evaluate(False):
                        terms.append(
                            sympy.Integer(math.comb(count, i))
                            * (sympy.exp((count - i) * e) - sympy.exp(g + i * e))
                        )
                else:  # rare: evaluated, so that an exact tie simplifies to Max(0, 0) = 0
                    terms.append(
                        sympy.Max(
                            sympy.binomial(count, i)
                            * (sympy.exp((count - i) * e) - sympy.exp(g + i * e)),
                            0,
                        )
                    )
    keep = (1 - d) ** count
    with sympy.evaluate(False):
        total = sympy.Add(*terms) if terms else sympy.Integer(0)
    return 1 - keep + keep * total / z


def optimal_epsilon(
    epsilon: sympy.Expr, delta_: sympy.Expr, count: int, target_delta: sympy.Expr
) -> sympy.Expr:
    """The exact smallest eps_g for which k-fold composition is (eps_g, target_delta)-DP.

    On the lattice segment where the active terms are ``l <= i``, ``delta_g(eps_g) = A - e^{eps_g}
    B``, so ``eps_g = log((A - delta')/B)`` in closed form.

    Privacy: Kairouz, Oh, Viswanath 2015, Theorem 3.3 (optimal: no smaller eps_g is valid for
    all (eps, delta)-DP mechanisms).

    Returns:
        eps_g as an exact sympy expression (0 when even eps_g = 0 suffices).

    Raises:
        ValueError: on parameters out of range, or if target_delta < 1 - (1 - delta)^k (no
            finite epsilon).
    """
    e, d = _check(epsilon, delta_, count)
    t = exact(target_delta, "target_delta")
    if not (0 < t < 1):
        raise ValueError(f"target_delta must be in (0, 1), got {t}")
    keep = (1 - d) ** count
    residual = (t - 1 + keep) / keep
    if not residual > 0:
        raise ValueError(
            f"target_delta {t} is below 1 - (1 - delta)^k = {1 - keep}: no finite epsilon exists"
        )
    with mp_precision(_precision(e, count)):
        ee = mpmath.mpf(float_up(e)) if not e.is_Rational else mpmath.mpf(e.p) / e.q
        active, _ = _segment(ee, mpmath.mpf(float_down(residual)), count)
    if active < 0:
        return sympy.Integer(count) * e
    # built unevaluated: the same exact value, without sympy's assumption queries per term
    big_a = sympy.Add(
        *[
            sympy.Mul(
                sympy.binomial(count, i), sympy.exp((count - i) * e, evaluate=False), evaluate=False
            )
            for i in range(active + 1)
        ],
        evaluate=False,
    )
    big_b = sympy.Add(
        *[
            sympy.Mul(sympy.binomial(count, i), sympy.exp(i * e, evaluate=False), evaluate=False)
            for i in range(active + 1)
        ],
        evaluate=False,
    )
    z = (1 + sympy.exp(e)) ** count
    value = sympy.log((big_a - residual * z) / big_b, evaluate=False)
    low_end = (count - 2 * active - 2) * e
    if float_up(optimal_delta(e, d, count, 0)) <= t:  # (0, t)-DP already (log arg may be <= 0)
        return sympy.Integer(0)
    with mp_precision(128):
        if float_up(value) <= 0:
            return sympy.Integer(0)
        if float_up(value) < float_down(low_end):
            return low_end
    return value


#: The largest working precision (bits) the optimal-composition search may use.  Its terms
#: span e^{k eps}, so it needs about 1.5 k eps bits; beyond this the work (and memory) would
#: be unbounded for huge k eps, where basic composition k eps is the answer anyway.
MAX_PRECISION_BITS = 200_000


def _precision(e: sympy.Expr, count: int) -> int:
    """Bits needed to resolve every lattice term (1.5 k eps plus guard bits).

    Raises:
        ValueError: when that exceeds :data:`MAX_PRECISION_BITS`.
    """
    need = 1.5 * count * float_up(e)
    if not need <= MAX_PRECISION_BITS - 128:
        raise ValueError(
            f"optimal composition: k * epsilon must be at most "
            f"{(MAX_PRECISION_BITS - 128) / 1.5:g} (the working precision grows "
            f"with it), got k = {count}, epsilon = {sympy.N(e, 6)}"
        )
    return 64 + int(need) + 64


def _segment(ee: mpmath.mpf, res: mpmath.mpf, count: int) -> tuple[int, mpmath.mpf]:
    """The last active term index l of the lattice segment holding eps_g (-1 if eps_g >= k eps)
    and the estimate ``max(0, log((A - res Z) / B))`` on it (working precision numbers)."""
    zf = (1 + mpmath.exp(ee)) ** count
    a = mpmath.mpf(0)
    b = mpmath.mpf(0)
    active = -1
    for i in range(count + 1):
        lattice = (count - 2 * i) * ee
        if lattice <= 0:
            break
        # delta_RR at the lattice point (count - 2 i) eps uses terms l < i
        if a - mpmath.exp(lattice) * b > res * zf:
            break
        active = i
        a += mpmath.binomial(count, i) * mpmath.exp((count - i) * ee)
        b += mpmath.binomial(count, i) * mpmath.exp(i * ee)
    if active < 0:
        return active, count * ee
    low_end = (count - 2 * active - 2) * ee
    value = mpmath.log((a - res * zf) / b) if a > res * zf else mpmath.mpf(0)
    return active, max(value, low_end, mpmath.mpf(0))


def optimal_epsilon_bounds(
    epsilon: sympy.Expr, delta_: sympy.Expr, count: int, target_delta: sympy.Expr
) -> tuple[float, float] | None:
    """Certified floats ``(lower, upper)`` around the exact value of :func:`optimal_epsilon`.

    The KOV profile is the profile of k-fold randomized response (a binomial privacy loss);
    :func:`dpaudit.pld.binomial.binomial_epsilon_bounds` finds the lattice segment holding the
    crossing and encloses the segment's closed form in interval arithmetic (milliseconds,
    where evaluating the exact closed form takes seconds).  None when no finite epsilon
    reaches ``target_delta``.

    Privacy: as :func:`optimal_epsilon` (Kairouz, Oh, Viswanath 2015, Theorem 3.3).
    """
    import math

    from dpaudit.pld.binomial import binomial_epsilon_bounds

    e, d = _check(epsilon, delta_, count)
    t = exact(target_delta, "target_delta")
    if t.free_symbols or not (0 < t < 1):
        return None
    lower, upper = binomial_epsilon_bounds(e, count, t, d)
    return (lower, upper) if math.isfinite(upper) else None


def optimal_epsilon_heterogeneous(
    epsilons: Sequence[float | Fraction | int],
    deltas: Sequence[float | Fraction | int],
    target_delta: float,
    *,
    max_support: int = 200_000,
) -> tuple[float, float]:
    """Certified (lower, upper) floats of the optimal heterogeneous composition.

    The loss of the product of randomized responses is ``sum_i +-eps_i``; its law is computed
    exactly over the lattice of distinct sums (eps_i taken as the exact rationals of the
    inputs) with 320-bit arithmetic, and the resulting epsilon is rounded outward.

    Privacy: Kairouz, Oh, Viswanath 2015, Theorem 3.4; Murtagh and Vadhan 2016 -- optimal for
    adaptive composition of (eps_i, delta_i)-DP mechanisms.

    Raises:
        ValueError: on bad parameters, or when the lattice has more than ``max_support`` sums
            (the problem is #P-hard in general; use the PLD accountant instead).
    """
    if len(epsilons) != len(deltas) or not epsilons:
        raise ValueError("epsilons and deltas must be non-empty and of equal length")
    if not (0 < target_delta < 1):
        raise ValueError(f"target_delta must be in (0, 1), got {target_delta!r}")
    fr = [Fraction(x) for x in epsilons]
    if any(x < 0 for x in fr) or any(not (0 <= dd < 1) for dd in deltas):
        raise ValueError("each epsilon must be >= 0 and each delta in [0, 1)")
    with mp_precision(320):
        keep = mpmath.fprod([1 - mpmath.mpf(dd) for dd in deltas])
        residual = (mpmath.mpf(target_delta) - 1 + keep) / keep
        if residual <= 0:
            raise ValueError("target_delta is below 1 - prod(1 - delta_i): no finite epsilon")
        law: dict[Fraction, tuple[mpmath.mpf, mpmath.mpf]] = {
            Fraction(0): (mpmath.mpf(1), mpmath.mpf(1))
        }
        for x in fr:
            ex = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
            hi, lo = ex / (1 + ex), 1 / (1 + ex)
            nxt: dict[Fraction, tuple[mpmath.mpf, mpmath.mpf]] = {}
            for s, (p, q) in law.items():
                for step, pp, qq in ((x, hi, lo), (-x, lo, hi)):
                    a, b = nxt.get(s + step, (mpmath.mpf(0), mpmath.mpf(0)))
                    nxt[s + step] = (a + p * pp, b + q * qq)
            law = nxt
            if len(law) > max_support:
                raise ValueError(
                    f"the loss lattice has more than {max_support} points; use the "
                    "PLD accountant for this composition"
                )
        sums = sorted(law, reverse=True)
        a = mpmath.mpf(0)
        b = mpmath.mpf(0)
        result = mpmath.mpf(0)
        for idx, s in enumerate(sums):
            sv = mpmath.mpf(s.numerator) / s.denominator
            if sv <= 0 or a - mpmath.exp(sv) * b > residual:
                break
            p, q = law[s]
            a, b = a + p, b + q
            nxt_s = sums[idx + 1] if idx + 1 < len(sums) else None
            low_end = mpmath.mpf(nxt_s.numerator) / nxt_s.denominator if nxt_s is not None else 0
            cand = mpmath.log((a - residual) / b) if a > residual else mpmath.mpf(0)
            result = max(cand, low_end, mpmath.mpf(0))
        margin = mpmath.mpf(2) ** -200 * (1 + abs(result))
        lo, hi = result - margin, result + margin
    from dpaudit.numeric import mpf_to_float

    return max(0.0, mpf_to_float(lo, "down")), mpf_to_float(hi, "up")
