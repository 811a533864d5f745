"""Renyi differential privacy (Mironov 2017) and its subsampled forms.

A mechanism is (alpha, tau)-RDP when the Renyi divergence of order alpha between its output
laws on neighbouring datasets is at most tau.  Each function computes one RDP curve value
exactly (an exact number for plain numbers, sympy otherwise) or the conversion to
(eps, delta)-DP; it is the only place its formula lives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import is_sympy_object
from dpaudit.expressions import as_expr
from dpaudit.numeric import exact, exact_max, exact_min, float_up
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = [
    "DEFAULT_ORDERS",
    "RDP_CONVERSION",
    "RDP_GAUSSIAN",
    "RDP_LAPLACE",
    "RDP_PURE",
    "RDP_RANDOMIZED_RESPONSE",
    "RDP_SUBSAMPLED_GAUSSIAN",
    "RDP_WITHOUT_REPLACEMENT",
    "best_real_order",
    "choose_order",
    "choose_real_order",
    "gaussian_rdp",
    "laplace_rdp",
    "pure_rdp",
    "randomized_response_rdp",
    "rdp_to_approx",
    "subsampled_gaussian_rdp",
    "subsampled_gaussian_rdp_floats",
    "subsampled_gaussian_rdp_upper",
    "without_replacement_rdp",
]

#: Integer orders used when a whole RDP curve is needed.
DEFAULT_ORDERS: tuple[int, ...] = (*range(2, 65), 80, 96, 128, 160, 192, 256, 384, 512, 1024)


def _order(order: sympy.Expr, *, integer: bool = False) -> sympy.Expr:
    a = exact(order, "order")
    if not a.free_symbols and not a > 1:
        raise ValueError(f"order alpha must be > 1, got {a}")
    if integer and not (a.is_Integer and a >= 2):
        raise ValueError(f"order alpha must be an integer >= 2 here, got {a}")
    return a


RDP_GAUSSIAN = register(
    Theorem(
        key="rdp_gaussian",
        name="RDP of the Gaussian mechanism",
        citation="Mironov 2017, Proposition 7 / Table II",
        assumptions="L2 sensitivity Delta, N(0, sigma^2) noise; any order alpha > 1",
        statement="M is (alpha, alpha Delta^2 / (2 sigma^2))-RDP",
        bound=Bound.over_positive(
            "alpha sigma Delta",
            lambda alpha, sigma, Delta: {"tau": alpha * Delta**2 / (2 * sigma**2)},
        ),
        domain=("alpha > 1", "sigma > 0", "Delta > 0"),
        latex=r"\tau(\alpha) = \alpha\Delta^2/(2\sigma^2)",
    )
)


def gaussian_rdp(order: sympy.Expr, sigma_: sympy.Expr, sensitivity: sympy.Expr = 1) -> sympy.Expr:
    """alpha Delta^2 / (2 sigma^2) (Mironov 2017, Proposition 7).

    Privacy: D_alpha(N(0, s^2) || N(Delta, s^2)) = alpha Delta^2 / (2 s^2) for every alpha > 1.
    """
    scale = exact(sigma_, "sigma") / exact(sensitivity, "sensitivity")
    return _order(order) / (2 * scale**2)


RDP_LAPLACE = register(
    Theorem(
        key="rdp_laplace",
        name="RDP of the Laplace mechanism",
        citation="Mironov 2017, Table II (Laplace row)",
        assumptions="L1 sensitivity Delta, Lap(b) noise, lambda = b / Delta; order alpha > 1",
        statement=(
            "M is (alpha, 1/(alpha-1) log(alpha/(2alpha-1) e^{(alpha-1)/lambda} "
            "+ (alpha-1)/(2alpha-1) e^{-alpha/lambda}))-RDP"
        ),
        bound=Bound.over_positive(
            "alpha b",
            lambda alpha, b: {
                "tau": sympy.log(
                    alpha / (2 * alpha - 1) * sympy.exp((alpha - 1) / b)
                    + (alpha - 1) / (2 * alpha - 1) * sympy.exp(-alpha / b)
                )
                / (alpha - 1)
            },
        ),
        domain=("alpha > 1", "b > 0"),
    )
)


def laplace_rdp(order: sympy.Expr, scale: sympy.Expr, sensitivity: sympy.Expr = 1) -> sympy.Expr:
    """The exact Renyi divergence of order alpha of the Laplace mechanism (Mironov 2017, Table II).

    Privacy: D_alpha(Lap(0, b) || Lap(Delta, b)) equals the returned value (tight).
    """
    a = _order(order)
    lam = exact(scale, "scale") / exact(sensitivity, "sensitivity")
    return fn.log(
        a / (2 * a - 1) * fn.exp((a - 1) / lam) + (a - 1) / (2 * a - 1) * fn.exp(-a / lam)
    ) / (a - 1)


RDP_RANDOMIZED_RESPONSE = register(
    Theorem(
        key="rdp_randomized_response",
        name="RDP of randomized response",
        citation="Mironov 2017, Table II (randomized response row)",
        assumptions="binary randomized response reporting the true bit with probability p > 1/2",
        statement=(
            "M is (alpha, 1/(alpha-1) log(p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha}))-RDP"
        ),
        bound=Bound.over_positive(
            "alpha p",
            lambda alpha, p: {
                "tau": sympy.log(
                    p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)
                )
                / (alpha - 1)
            },
        ),
        domain=("alpha > 1", "1/2 < p < 1"),
    )
)


def randomized_response_rdp(order: sympy.Expr, truth_probability: sympy.Expr) -> sympy.Expr:
    """The exact Renyi divergence of binary randomized response (Mironov 2017, Table II).

    Raises:
        ValueError: if the probability is not in [1/2, 1).
    """
    a = _order(order)
    pp = exact(truth_probability, "truth_probability")
    if not pp.free_symbols and not (Fraction(1, 2) <= pp < 1):
        raise ValueError(f"truth_probability must be in [1/2, 1), got {pp}")
    return fn.log(pp**a * (1 - pp) ** (1 - a) + (1 - pp) ** a * pp ** (1 - a)) / (a - 1)


RDP_PURE = register(
    Theorem(
        key="rdp_pure",
        name="RDP of a pure-DP mechanism",
        citation=(
            "Mironov 2017, Proposition 3 (tau <= eps); the binary randomized response with "
            "p = e^eps/(1+e^eps) dominates every eps-DP pair (Kairouz, Oh, Viswanath 2015, "
            "Theorem 2.1), so its RDP (Mironov 2017, Table II) bounds every eps-DP mechanism"
        ),
        assumptions="an eps-DP mechanism; order alpha > 1",
        statement="M is (alpha, min(eps, tau_RR(alpha, e^eps/(1+e^eps))))-RDP",
        bound=Bound.over_positive(
            "epsilon p",
            lambda eps, p: {
                "tau": sympy.Min(
                    eps,
                    RDP_RANDOMIZED_RESPONSE.bound["tau"].xreplace(
                        {p: sympy.exp(eps) / (1 + sympy.exp(eps))}
                    ),
                )
            },
        ),
        domain=("alpha > 1", "epsilon >= 0"),
    )
)


def pure_rdp(order: sympy.Expr, epsilon: sympy.Expr) -> sympy.Expr:
    """An RDP bound of order alpha for any eps-DP mechanism: min(eps, RDP of RR_eps).

    Privacy: Renyi divergence satisfies the data-processing inequality and every eps-DP pair is
    a post-processing of binary randomized response with parameter eps (KOV15, Theorem 2.1).
    """
    e = exact(epsilon, "epsilon")
    rr = randomized_response_rdp(order, fn.exp(e) / (1 + fn.exp(e)))
    return exact_min(e, rr)


def _subsampled_gaussian_bound() -> dict[str, sympy.Expr]:
    """The card's bound (Mironov, Talwar, Zhang 2019, Theorem 4), built on first read."""
    alpha, q, sigma = sympy.symbols("alpha q sigma", positive=True)
    j = sympy.Symbol("j", integer=True, nonnegative=True)
    return {
        "tau": sympy.log(
            sympy.Sum(
                sympy.binomial(alpha, j)
                * (1 - q) ** (alpha - j)
                * q**j
                * sympy.exp((j**2 - j) / (2 * sigma**2)),
                (j, 0, alpha),
            )
        )
        / (alpha - 1)
    }


RDP_SUBSAMPLED_GAUSSIAN = register(
    Theorem(
        key="rdp_subsampled_gaussian",
        name="RDP of the Poisson-subsampled Gaussian",
        citation="Mironov, Talwar, Zhang 2019, Theorem 4 (integer orders, Section 3.3)",
        assumptions=(
            "Poisson sampling with probability q, Gaussian noise sigma with sensitivity 1, "
            "add/remove relation; integer order alpha >= 2"
        ),
        statement=(
            "M is (alpha, 1/(alpha-1) log sum_j binom(alpha, j) (1-q)^{alpha-j} q^j "
            "exp((j^2 - j)/(2 sigma^2)))-RDP"
        ),
        bound=Bound(_subsampled_gaussian_bound),
        domain=("alpha > 1", "0 < q <= 1", "sigma > 0"),
    )
)


def subsampled_gaussian_rdp(
    order: int,
    sigma_: sympy.Expr,
    sampling_probability: sympy.Expr,
    sensitivity: sympy.Expr = 1,
    *,
    numeric: bool = False,
) -> sympy.Expr:
    """The RDP of order alpha (integer) of the Poisson-subsampled Gaussian mechanism.

    Privacy: Mironov, Talwar, Zhang 2019, Theorem 4 and Section 3.3: for integer alpha the
    Renyi divergence of both directions is at most
    ``1/(alpha-1) log sum_j binom(alpha,j) (1-q)^{alpha-j} q^j exp((j^2-j) Delta^2/(2 sigma^2))``.

    Args:
        order: integer alpha >= 2.
        sigma_: noise standard deviation.
        sampling_probability: q in (0, 1].
        sensitivity: L2 sensitivity.
        numeric: evaluate the same formula in floating point (log-sum-exp; fast, *not* a
            bound: used only to choose the order, whose exact value is then certified)
            instead of building the exact sympy expression.

    Raises:
        ValueError: if alpha is not an integer >= 2 or q is not in (0, 1].
    """
    a = _order(order, integer=True)
    qq = exact(sampling_probability, "sampling_probability")
    if not qq.free_symbols and not (0 < qq <= 1):
        raise ValueError(f"sampling_probability must be in (0, 1], got {qq}")
    s2 = (exact(sigma_, "sigma") / exact(sensitivity, "sensitivity")) ** 2
    n = int(a)
    if numeric:
        return sympy.Float(_subsampled_gaussian_float(n, float(qq), float(s2)), 17)
    total = sympy.Add(
        *[
            sympy.binomial(n, i)
            * (1 - qq) ** (n - i)
            * qq**i
            * sympy.exp(sympy.Integer(i * i - i) / (2 * s2))
            for i in range(n + 1)
        ]
    )
    return sympy.log(total) / (n - 1)


def subsampled_gaussian_rdp_floats(
    orders: Sequence[int],
    sigma_: sympy.Expr,
    sampling_probability: sympy.Expr,
    sensitivity: sympy.Expr = 1,
) -> tuple[float, ...]:
    """``subsampled_gaussian_rdp(a, ..., numeric=True)`` at every order of ``orders``, as
    floats, with the parameters checked and converted once (the same float per order: a
    thousand DP-SGD phases spent most of a minute converting them 48 times each).

    Not a bound: used only to choose an order, whose exact value is then certified.

    Raises:
        ValueError: as :func:`subsampled_gaussian_rdp`.
    """
    # a Python int >= 2 is an integer order as it stands (the exact check costs 30 us each)
    ns = [a if type(a) is int and a >= 2 else int(_order(a, integer=True)) for a in orders]
    qq = exact(sampling_probability, "sampling_probability")
    if qq.free_symbols or not (0 < qq <= 1):
        raise ValueError(f"sampling_probability must be a number in (0, 1], got {qq}")
    s2 = (exact(sigma_, "sigma") / exact(sensitivity, "sensitivity")) ** 2
    return _subsampled_gaussian_floats(ns, float(qq), float(s2))


def _subsampled_gaussian_floats(ns: Sequence[int], qf: float, s2f: float) -> tuple[float, ...]:
    """Mironov, Talwar, Zhang 2019, Theorem 4 at the integer orders ``ns``, in floating point:
    the binomial expansion's log-terms of every order in one array, then a log-sum-exp per
    order (see :func:`subsampled_gaussian_rdp`; only to choose an order)."""
    if not ns:
        return ()
    import numpy as np

    top_n = max(ns)
    log_fact = _log_factorials(top_n)
    orders = np.asarray(ns)[:, None]
    n = orders.astype(float)
    i = np.arange(top_n + 1, dtype=float)[None, :]
    idx = np.minimum(np.arange(top_n + 1)[None, :], orders)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (
            log_fact[orders]
            - log_fact[idx]
            - log_fact[orders - idx]
            + np.where(i == n, 0.0, (n - i) * np.log1p(-qf))
            + i * math.log(qf)
            + (i * i - i) / (2 * s2f)
        )
    return tuple(_log_sum_exp(terms[k, : m + 1]) / (m - 1) for k, m in enumerate(ns))


def _log_sum_exp(terms: Any) -> float:
    """log(sum(exp(terms))) as top + log1p(the others' share): the sum is often 1 + a few
    1e-8 (the largest term not summed with the others)."""
    import numpy as np

    at = int(np.argmax(terms))
    top = float(terms[at])
    if not math.isfinite(top):
        return top
    rest = np.exp(np.concatenate((terms[:at], terms[at + 1 :])) - top)
    return top + math.log1p(float(np.sum(rest)))


def _log_factorials(n: int) -> Any:
    """``log k!`` for ``k = 0..n`` (math.lgamma: scipy.special would cost ~0.2 s of the
    start-up; these values only choose the order, whose bound is then certified exactly)."""
    import numpy as np

    return np.array([math.lgamma(k + 1) for k in range(n + 1)])


def _subsampled_gaussian_float(n: int, qf: float, s2f: float) -> float:
    """:func:`_subsampled_gaussian_floats` at one integer order ``n``."""
    return _subsampled_gaussian_floats([n], qf, s2f)[0]


def subsampled_gaussian_rdp_upper(
    order: int, sigma_: sympy.Expr, sampling_probability: sympy.Expr, sensitivity: sympy.Expr = 1
) -> sympy.Rational:
    """:func:`subsampled_gaussian_rdp` (the same bound) enclosed in mpmath interval arithmetic
    and rounded up to a rational: an upper bound on the exact value, without building the
    sympy expression (whose size grows with the order).

    Privacy: Mironov, Talwar, Zhang 2019, Theorem 4 -- the returned number is >= their bound.

    Raises:
        ValueError: as :func:`subsampled_gaussian_rdp`, or for symbolic parameters.
    """
    import mpmath

    from dpaudit.numeric import endpoints, from_float, interval, iv_precision, mpf_to_float

    n = int(_order(order, integer=True))
    qq = exact(sampling_probability, "sampling_probability")
    s2 = (exact(sigma_, "sigma") / exact(sensitivity, "sensitivity")) ** 2
    if qq.free_symbols or s2.free_symbols:
        raise ValueError("subsampled_gaussian_rdp_upper needs numeric parameters")
    if not (0 < qq <= 1):
        raise ValueError(f"sampling_probability must be in (0, 1], got {qq}")
    iv = mpmath.iv
    with iv_precision(80 + 2 * n.bit_length()):
        qi = iv.mpf(list(endpoints(interval(qq, prec=iv.prec))))
        half = iv.mpf(list(endpoints(interval(1 / (2 * s2), prec=iv.prec))))
        total = iv.mpf(0)
        for i in range(n + 1):
            total += math.comb(n, i) * (1 - qi) ** (n - i) * qi**i * iv.exp((i * i - i) * half)
        _, hi = endpoints(iv.log(total) / (n - 1))
    return from_float(mpf_to_float(hi, "up"))


RDP_WITHOUT_REPLACEMENT = register(
    Theorem(
        key="rdp_without_replacement",
        name="RDP amplification by sampling without replacement",
        citation="Wang, Balle, Kasiviswanathan 2019 (AISTATS), Theorem 9",
        assumptions=(
            "subsample of m out of n records without replacement, gamma = m/n, "
            "replace-one relation; base mechanism with RDP curve tau(j) and "
            "tau(inf) (possibly infinite); integer order alpha >= 2"
        ),
        statement=(
            "tau'(alpha) <= 1/(alpha-1) log(1 + gamma^2 binom(alpha,2) min(4(e^{tau(2)}-1), "
            "e^{tau(2)} min(2, (e^{tau(inf)}-1)^2)) + sum_{j=3}^alpha gamma^j binom(alpha,j) "
            "e^{(j-1) tau(j)} min(2, (e^{tau(inf)}-1)^j))"
        ),
        domain=("alpha > 1", "1 <= m <= n"),
    )
)


def without_replacement_rdp(
    order: int,
    sampling_ratio: sympy.Expr,
    base_rdp: Callable[[int], sympy.Expr],
    base_rdp_infinity: sympy.Expr | None = None,
) -> sympy.Expr:
    """An RDP bound of integer order alpha after sampling m of n records without replacement.

    Privacy: Wang, Balle, Kasiviswanathan 2019, Theorem 9 (replace-one relation).

    Args:
        order: integer alpha >= 2.
        sampling_ratio: gamma = m / n in (0, 1].
        base_rdp: tau(j) of the base mechanism for integers j >= 2.
        base_rdp_infinity: tau(inf) (the pure-DP epsilon), or infinity (``sympy.oo``, or
            None: the default).

    Raises:
        ValueError: on bad order or ratio.
    """
    a = int(_order(order, integer=True))
    g = exact(sampling_ratio, "sampling_ratio")
    if not g.free_symbols and not (0 < g <= 1):
        raise ValueError(f"sampling_ratio must be in (0, 1], got {g}")
    inf_tau = sympy.oo if base_rdp_infinity is None else as_expr(base_rdp_infinity)

    def cap(power: int) -> sympy.Expr:
        if inf_tau is sympy.oo:
            return sympy.Integer(2)
        return exact_min(2, (sympy.exp(inf_tau) - 1) ** power)

    t2 = exact(base_rdp(2), "base_rdp(2)")
    total = 1 + g**2 * sympy.binomial(a, 2) * exact_min(
        4 * (sympy.exp(t2) - 1), sympy.exp(t2) * cap(2)
    )
    for i in range(3, a + 1):
        tau_i = exact(base_rdp(i), "tau")
        total += g**i * sympy.binomial(a, i) * sympy.exp((i - 1) * tau_i) * cap(i)
    return sympy.log(total) / (a - 1)


RDP_COMPOSITION = register(
    Theorem(
        key="rdp_composition",
        name="RDP composition",
        citation="Mironov 2017, Proposition 1",
        assumptions="k adaptively composed mechanisms, each (alpha, tau_i)-RDP at the same order",
        statement="the composition is (alpha, sum tau_i)-RDP for every order alpha > 1",
        bound=Bound.over_positive("k tau", lambda k, tau: {"tau": k * tau}),
        domain=("alpha > 1", "k >= 1"),
        latex=r"\tau(\alpha) = \sum_i \tau_i(\alpha)",
    )
)


def _bbgg20_epsilon(tau: Any, alpha: Any, delta_: Any) -> Any:
    """tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1): the epsilon at delta of
    an (alpha, tau)-RDP mechanism (Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 21), on
    exact numbers or sympy (the card shows it at symbols)."""
    return tau + fn.log((alpha - 1) / alpha) - (fn.log(delta_) + fn.log(alpha)) / (alpha - 1)


RDP_CONVERSION = register(
    Theorem(
        key="rdp_to_approx_bbgg20",
        name="RDP to (eps, delta) (improved conversion)",
        citation="Balle, Barthe, Gaboardi, Hsu, Sato 2020 (AISTATS), Theorem 21",
        assumptions="an (alpha, tau)-RDP mechanism, alpha > 1, 0 < delta < 1",
        statement="M is (tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1), delta)-DP",
        bound=Bound.over_positive(
            "tau alpha delta",
            lambda tau, alpha, delta: {"epsilon": _bbgg20_epsilon(tau, alpha, delta)},
        ),
        domain=("alpha > 1", "0 < delta < 1"),
        latex=(
            r"\varepsilon = \tau + \log\frac{\alpha-1}{\alpha}"
            r" - \frac{\log\delta + \log\alpha}{\alpha - 1}"
        ),
    )
)


def rdp_to_approx(
    orders: Sequence[sympy.Expr], taus: Sequence[sympy.Expr], delta_: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr]:
    """The best (eps, order) over a curve by Balle et al. 2020, Theorem 21.

    Each order gives a valid epsilon (also never worse than Mironov 2017, Proposition 3,
    ``tau + log(1/delta)/(alpha-1)``, which is kept when smaller); the smallest is returned.

    Returns:
        ``(epsilon, alpha)``: the exact epsilon and the order that gave it.

    Raises:
        ValueError: if delta is not in (0, 1) or the lists are empty or of different lengths.
    """
    d = exact(delta_, "delta")
    if not d.free_symbols and not (0 < d < 1):
        raise ValueError(f"delta must be in (0, 1), got {d}")
    if not orders or len(orders) != len(taus):
        raise ValueError("orders and taus must be non-empty and of equal length")
    found: list[tuple[float | None, float, sympy.Expr, sympy.Expr]] = []
    for a_raw, t_raw in zip(orders, taus, strict=True):
        a = _order(a_raw)
        is_float = is_sympy_object(t_raw) and isinstance(t_raw, sympy.Float)
        t = t_raw if is_float else exact(t_raw, "tau")
        estimates = _conversions_float(t, a, d)
        improved = _bbgg20_epsilon(t, a, d)
        mironov = t + fn.log(1 / d) / (a - 1)
        for cand, (value, slack) in zip((improved, mironov), estimates, strict=True):
            found.append((value, slack, cand, a))
    if not found:  # unreachable: orders is non-empty
        raise ValueError("no order given")
    cand, order, value, slack = _smallest(found)
    if value is not None and value > slack:  # certainly positive: the max with 0 is cand
        return cand, order
    return exact_max(cand, 0), order


def _conversions_float(t: Any, a: Any, d: Any) -> tuple[tuple[float | None, float], ...]:
    """Floating-point estimates of Balle et al.'s and Mironov's conversions at one order,
    each with a bound on its error (None where floats cannot follow): only to choose the
    candidate that :func:`rdp_to_approx` keeps; every candidate is a valid bound."""
    try:
        tf, af, df = float(t), float(a), float(d)
        # orders >= 1.001 (alpha - 1 loses at most 10 bits), normal deltas, finite taus
        if not (abs(tf) < 1e300 and df >= 1e-300 and 1.001 <= af < 1e300):
            raise ValueError("beyond floats")
        lf = math.log(df)
        first, second = math.log((af - 1) / af), (lf + math.log(af)) / (af - 1)
        third = lf / (af - 1)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return ((None, 0.0), (None, 0.0))
    # t, a and delta are rounded once and each term is then within about 1e-12 of its size
    # (alpha - 1 >= 0.001 magnifies an ulp of alpha at most 1000 times): 1e-9 of the terms'
    # size is far above the error, so a gap larger than it orders the exact values the same
    # way, and a value above it has the exact value's sign
    return (
        (tf + first - second, 1e-9 * (abs(tf) + abs(first) + abs(second) + 1e-300)),
        (tf - third, 1e-9 * (abs(tf) + abs(third) + 1e-300)),
    )


def _smallest(
    found: list[tuple[float | None, float, sympy.Expr, sympy.Expr]],
) -> tuple[sympy.Expr, sympy.Expr, float | None, float]:
    """The (candidate, order) of smallest value with its float estimate and error (None when
    not decided in floats): decided in floats when one estimate is below every other by more
    than their errors, else (as before) by the candidates' values rounded up, the first of
    equal ones."""
    if all(value is not None for value, _, _, _ in found):
        i = min(range(len(found)), key=lambda j: (found[j][0], j))
        value, slack = found[i][0], found[i][1]
        if value is not None and all(
            j == i or (other is not None and other - s > value + slack)
            for j, (other, s, _, _) in enumerate(found)
        ):
            return found[i][2], found[i][3], value, slack
    best: tuple[float, sympy.Expr, sympy.Expr] | None = None
    for _, _, cand, a in found:
        has_float = is_sympy_object(cand) and cand.has(sympy.Float)
        value_up = float(cand.evalf(30)) if has_float else float_up(cand)
        if best is None or value_up < best[0]:
            best = (value_up, cand, a)
    if best is None:  # unreachable: found is non-empty
        raise ValueError("no order given")
    return best[1], best[2], None, 0.0


def _conversion_float(tau: float, alpha: float, log_delta: float) -> float:
    """The smaller of Balle et al. 2020, Theorem 21 and Mironov 2017, Proposition 3, in floats
    (as :func:`choose_order` compares them)."""
    improved = tau + math.log((alpha - 1) / alpha) - (log_delta + math.log(alpha)) / (alpha - 1)
    return min(improved, tau - log_delta / (alpha - 1))


def choose_real_order(
    tau_real: Callable[[float], float], order: int, delta_: sympy.Expr
) -> sympy.Expr:
    """The real order near an integer ``order`` where the conversion (as in
    :func:`rdp_to_approx`) of a curve known at every real order is smallest.

    Only a choice: the bound at the returned order is then computed exactly.
    """
    log_d = float(fn.log(exact(delta_, "delta")))
    return best_real_order(lambda a: _conversion_float(tau_real(a), a, log_d), order)


def best_real_order(objective: Callable[[float], float], order: int) -> sympy.Expr:
    """The real order in ``[max(1, order - 1), order + 1]`` minimising ``objective`` (golden
    section, in floats), as a rational of denominator at most 1000 (exact curves evaluate it
    exactly); the integer ``order`` when no real order there does better.  Only a choice."""

    def value(a: float) -> float:
        try:
            return objective(a)
        except (ValueError, OverflowError, ZeroDivisionError):
            return math.inf

    lo, hi = max(1.0 + 1e-6, order - 1.0), order + 1.0
    ratio = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = value(x1), value(x2)
    for _ in range(60):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = value(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = value(x2)
    best = Fraction((lo + hi) / 2).limit_denominator(1000)
    if best <= 1 or not value(float(best)) < value(float(order)):
        return exact(order, "order")
    return exact(best, "order")


def choose_order(orders: Sequence[int], taus: Sequence[float], delta_: sympy.Expr) -> int:
    """The order whose conversion (as in :func:`rdp_to_approx`) is smallest, in floats.

    Only a choice: pass the chosen order's exact tau to :func:`rdp_to_approx` for the bound.

    Raises:
        ValueError: if the lists are empty or of different lengths.
    """
    return conversion_estimate(orders, taus, delta_)[0]


def conversion_estimate(
    orders: Sequence[int], taus: Sequence[float], delta_: sympy.Expr
) -> tuple[int, float]:
    """The order whose conversion (as in :func:`rdp_to_approx`: Balle et al. 2020, Theorem 21,
    or Mironov 2017, Proposition 3, whichever is smaller) is smallest, and that epsilon, in
    floats.  Not a bound: a choice, and an estimate of the bound the chosen order's exact tau
    gives.

    Raises:
        ValueError: if the lists are empty or of different lengths.
    """
    if not orders or len(orders) != len(taus):
        raise ValueError("orders and taus must be non-empty and of equal length")
    import numpy as np  # here: importing the theorems needs no numpy

    a = np.asarray(orders, dtype=float)
    t = np.asarray([float(x) for x in taus])
    log_d = float(fn.log(exact(delta_, "delta")))
    improved = t + np.log((a - 1) / a) - (log_d + np.log(a)) / (a - 1)
    mironov = t - log_d / (a - 1)
    best = np.minimum(improved, mironov)
    at = int(np.argmin(best))
    return int(orders[at]), float(best[at])
