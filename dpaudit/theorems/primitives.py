"""Privacy guarantees of the primitive mechanisms.

Each function computes one bound exactly (sympy) and is the only place its formula lives;
the matching :class:`~dpaudit.theorems.base.Theorem` card cites it.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import (
    EvaluationError,
    bracket_decreasing,
    endpoints,
    exact,
    interval,
    iv_erfc,
    iv_precision,
    mp_digits,
)
from dpaudit.numeric import functions as fn
from dpaudit.theorems.base import Bound, Theorem, register

LAPLACE = register(
    Theorem(
        key="laplace",
        name="Laplace mechanism",
        citation="Dwork, McSherry, Nissim, Smith 2006; Dwork and Roth 2014, Theorem 3.6",
        assumptions="query of L1 sensitivity Delta under the event's relation; scale b > 0",
        statement="P[M(D) in S] <= exp(Delta/b) P[M(D') in S]",
        bound=Bound.over_positive("b Delta", lambda b, Delta: {"epsilon": Delta / b}),
        domain=("b > 0", "Delta > 0"),
        latex=r"\varepsilon = \Delta / b",
    )
)

DISCRETE_LAPLACE = register(
    Theorem(
        key="discrete_laplace",
        name="discrete Laplace mechanism",
        citation="Ghosh, Roughgarden, Sundararajan 2009; Canonne, Kamath, Steinke 2020, Sec. 1",
        assumptions=(
            "integer query of L1 sensitivity Delta; P(x) proportional to exp(-|x|/t), t > 0"
        ),
        statement="P[M(D) in S] <= exp(Delta/t) P[M(D') in S]",
        bound=Bound.over_positive("b Delta", lambda b, Delta: {"epsilon": Delta / b}),
        domain=("b > 0", "Delta > 0"),
        latex=r"\varepsilon = \Delta / t",
    )
)


def laplace_epsilon(scale: sympy.Expr, sensitivity: sympy.Expr) -> sympy.Expr:
    """Pure-DP epsilon of (discrete or continuous) Laplace noise of ``scale`` on a query of
    L1 sensitivity ``sensitivity``: Delta / b.

    Privacy: P[M(D) in S] <= exp(Delta/b) P[M(D') in S] (Dwork and Roth 2014, Thm 3.6; the
    same ratio bound holds pointwise for the discrete Laplace, CKS20).
    """
    return exact(sensitivity, "sensitivity") / exact(scale, "scale")


GAUSSIAN_ANALYTIC = register(
    Theorem(
        key="gaussian_analytic",
        name="analytic Gaussian mechanism",
        citation="Balle and Wang 2018, Theorem 8",
        assumptions="query of L2 sensitivity Delta; N(0, sigma^2) noise per coordinate",
        statement=(
            "M is (eps, delta(eps))-DP for every eps >= 0 with delta(eps) = "
            "Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - "
            "eps sigma/Delta), and no smaller delta"
        ),
        bound=Bound.over_positive(
            "Delta sigma epsilon",
            lambda Delta, sigma, eps: {
                "delta": sympy.erfc(-(Delta / (2 * sigma) - eps * sigma / Delta) / sympy.sqrt(2))
                / 2
                - sympy.exp(eps)
                * sympy.erfc((Delta / (2 * sigma) + eps * sigma / Delta) / sympy.sqrt(2))
                / 2
            },
        ),
        domain=("sigma > 0", "Delta > 0", "epsilon >= 0", "0 < delta < 1"),
        latex=(
            r"\delta(\varepsilon) = \Phi\left(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right)"
            r" - e^{\varepsilon}\Phi\left(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right),"
            r"\ \mu = \Delta/\sigma"
        ),
    )
)

GAUSSIAN_GDP = register(
    Theorem(
        key="gaussian_gdp",
        name="Gaussian mechanism is mu-GDP",
        citation="Dong, Roth, Su 2022 (Gaussian differential privacy), Theorem 2.7",
        assumptions="query of L2 sensitivity Delta; N(0, sigma^2) noise",
        statement="M is mu-GDP with mu = Delta/sigma: its privacy profile is that of Balle-Wang",
        bound=Bound.over_positive("Delta sigma", lambda Delta, sigma: {"mu": Delta / sigma}),
        domain=("sigma > 0", "Delta > 0"),
        latex=r"\mu = \Delta / \sigma",
    )
)


def gaussian_mu(sigma_: sympy.Expr, sensitivity: sympy.Expr) -> sympy.Expr:
    """The GDP parameter mu = Delta / sigma of the Gaussian mechanism."""
    return exact(sensitivity, "sensitivity") / exact(sigma_, "sigma")


def gdp_delta(mu_: sympy.Expr, epsilon: sympy.Expr) -> sympy.Expr:
    """The exact privacy profile of a mu-GDP mechanism (equivalently of the Gaussian
    mechanism with Delta/sigma = mu): delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 -
    eps/mu), with Phi(z) = erfc(-z/sqrt 2)/2.

    Privacy: Balle and Wang 2018, Theorem 8; Dong, Roth, Su 2022, Corollary 2.13.
    """
    mu_ = exact(mu_, "mu")
    e = exact(epsilon, "epsilon")
    return (
        fn.erfc(-(mu_ / 2 - e / mu_) / fn.sqrt(2)) / 2
        - fn.exp(e) * fn.erfc((mu_ / 2 + e / mu_) / fn.sqrt(2)) / 2
    )


def gdp_epsilon(
    mu_: sympy.Expr, delta_: sympy.Expr, rel_tol: str = "1e-12"
) -> tuple[sympy.Expr, sympy.Expr]:
    """The epsilon of a mu-GDP mechanism at ``delta``, certified on both sides.

    Returns:
        ``(lower, upper)`` exact rationals: the mechanism is (upper, delta)-DP, and it is not
        (lower, delta)-DP (its exact profile exceeds delta there), both checked with interval
        arithmetic on :func:`gdp_delta`.
    """
    try:  # only a starting point: bisection certifies with or without it
        guess = _gdp_epsilon_guess(float(mu_), float(delta_))
    except (ZeroDivisionError, OverflowError, ValueError):  # mu beyond floats or mpmath's erfc
        guess = None
    if guess is not None and guess > 0:
        near = _bracket_near(mu_, delta_, guess, rel_tol)
        if near is not None:
            return near
    return bracket_decreasing(
        lambda eps: gdp_delta(mu_, eps), None, delta_, rel_tol=rel_tol, guess=guess
    )


def _bracket_near(
    mu_: sympy.Expr, delta_: sympy.Expr, guess: float, rel_tol: str
) -> tuple[sympy.Expr, sympy.Expr] | None:
    """The bracket :func:`~dpaudit.numeric.bracket_decreasing` certifies first around a guess,
    ``guess (1 -+ rel_tol / 4)``, certified here by evaluating :func:`gdp_delta`'s formula in
    mpmath interval arithmetic directly (the same enclosures as the expression evaluator, at
    80 then 160 bits, without building and walking an expression tree: about a third of the
    time); None when neither precision decides both ends (the caller then bisects as
    before).  Where both ways decide, they decide alike (both are rigorous), so the bracket is
    the one the expression evaluator would return."""
    g = exact(guess, "guess")
    tol = exact(rel_tol, "rel_tol")
    hi_try, lo_try = g * (1 + tol / 4), g * (1 - tol / 4)
    mu_e, delta_e = exact(mu_, "mu"), exact(delta_, "delta")
    for bits in (80, 160):
        try:
            above, below = _gdp_delta_enclosures(mu_e, (hi_try, lo_try), bits)
            t_lo, t_hi = endpoints(interval(delta_e, prec=bits))
        except (EvaluationError, OverflowError, ZeroDivisionError):
            return None
        if above[1] <= t_lo and below[0] > t_hi:
            return lo_try, hi_try
    return None


def _gdp_delta_enclosures(
    mu_: sympy.Expr, epsilons: tuple[sympy.Expr, ...], bits: int
) -> list[tuple[Any, Any]]:
    """The endpoints of intervals holding :func:`gdp_delta` ``(mu, epsilon)`` at each epsilon
    (the same formula, Balle and Wang 2018, Theorem 8, written for mpmath's interval context),
    at ``bits`` of precision; ``mu`` and the epsilons exact values (``mu`` enclosed once)."""
    m = interval(mu_, prec=bits)
    found = []
    for epsilon in epsilons:
        e = interval(epsilon, prec=bits)
        with iv_precision(bits):
            iv = mpmath.iv
            root2 = iv.sqrt(2)
            value = (
                iv_erfc(-(m / 2 - e / m) / root2) - iv.exp(e) * iv_erfc((m / 2 + e / m) / root2)
            ) / 2
            found.append(endpoints(value))
    return found


def _gdp_epsilon_guess(mu_: float, delta_: float) -> float | None:
    """A floating-point solution of gdp_delta(mu, eps) = delta (certified by the caller).

    Newton's method on ``log delta(eps) - log(delta)`` in floats, safeguarded by the bracket
    ``[0, mu^2/2 + mu sqrt(2 log(1/delta))]`` (the zCDP conversion, Bun and Steinke 2016,
    Proposition 1.3, is an upper bound on the exact epsilon), then two Newton steps at 30
    digits (the certification needs the crossing to about 1e-13); in mpmath throughout
    (:func:`_gdp_epsilon_mp`) where floats under- or overflow.  About six evaluations at 30
    digits, where bisection took 170.
    """
    x = _gdp_epsilon_float(mu_, delta_)
    if x is None:
        return _gdp_epsilon_mp(mu_, delta_)
    with mp_digits(30):
        m, d = mpmath.mpf(mu_), mpmath.mpf(delta_)
        e = mpmath.mpf(x)
        for _ in range(4):
            tail = mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)  # -delta'(eps)
            value = mpmath.ncdf(m / 2 - e / m) - tail
            if value <= 0 or tail <= 0:
                return _gdp_epsilon_mp(mu_, delta_)
            step = (mpmath.log(value) - mpmath.log(d)) * value / tail
            e += step
            if abs(step) <= abs(e) * mpmath.mpf(10) ** -25:
                break
        return float(e)


def _gdp_epsilon_float(mu_: float, delta_: float) -> float | None:
    """The crossing in floats to about 1e-10 (None where floats cannot follow it)."""
    if not (math.isfinite(mu_) and mu_ > 0 and 0 < delta_ < 1):
        return None
    root2 = math.sqrt(2.0)

    def profile(eps: float) -> tuple[float, float] | None:
        a, b = mu_ / 2 - eps / mu_, -mu_ / 2 - eps / mu_
        lower = 0.5 * math.erfc(-b / root2)
        if lower <= 0:
            return None
        try:
            tail = math.exp(eps + math.log(lower))
        except OverflowError:
            return None
        return 0.5 * math.erfc(-a / root2) - tail, tail

    lo, hi = 0.0, mu_**2 / 2 + mu_ * math.sqrt(2 * math.log(1 / delta_))
    at_zero = profile(0.0)
    if at_zero is None or at_zero[0] <= delta_:
        return None
    x = hi
    for _ in range(100):
        found = profile(x)
        if found is None:
            return None
        value, tail = found
        if value > delta_:
            lo = x
        else:
            hi = x
        if value > 0 and tail > 0:
            x_new = x + (math.log(value) - math.log(delta_)) * value / tail
        else:
            x_new = (lo + hi) / 2
        if not lo < x_new < hi:
            x_new = (lo + hi) / 2
        if abs(x_new - x) <= 1e-10 * max(1.0, abs(x)):
            return x_new
        x = x_new
    return None


def _gdp_epsilon_mp(mu_: float, delta_: float) -> float | None:
    """:func:`_gdp_epsilon_guess` in mpmath throughout (where floats under- or overflow).

    Newton's method in ``gamma = e^eps`` from the left, safeguarded by a bracket: the profile
    ``Phi(mu/2 - log(gamma)/mu) - gamma Phi(-mu/2 - log(gamma)/mu)`` is a hockey-stick
    divergence of ``gamma``, convex and decreasing with derivative ``-Phi(-mu/2 -
    log(gamma)/mu)``, so a Newton step from left of the root stays left of it; when a step
    shrinks the bracket by less than half, a bisection step in eps follows.  About twenty
    evaluations at 30 digits, where bisection alone took 170.
    """
    with mp_digits(30):
        m, d = mpmath.mpf(mu_), mpmath.mpf(delta_)

        def lower_tail(e: mpmath.mpf) -> mpmath.mpf:  # Phi(-mu/2 - eps/mu): minus the slope
            return mpmath.ncdf(-m / 2 - e / m)

        def f(e: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * lower_tail(e) - d

        f_lo = f(mpmath.mpf(0))
        if f_lo <= 0:
            return None
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while (f_hi := f(hi)) > 0:  # mpmath numbers do not overflow: eps ~ mu^2/2 for tiny sigma
            lo, hi, f_lo = hi, hi * 2, f_hi
            if hi > mpmath.mpf(2) ** 4000:
                return None
        tiny = mpmath.mpf(10) ** -20
        for _ in range(200):
            width = hi - lo
            if width <= hi * tiny:
                break
            slope = lower_tail(lo)
            x = mpmath.log(mpmath.exp(lo) + f_lo / slope) if slope > 0 else (lo + hi) / 2
            if not lo < x < hi:
                x = (lo + hi) / 2
            value = f(x)
            if value > 0:
                lo, f_lo = x, value
            else:
                hi = x
            if hi - lo > width / 2:  # slow progress: bisect once
                mid = (lo + hi) / 2
                value = f(mid)
                if value > 0:
                    lo, f_lo = mid, value
                else:
                    hi = mid
        return float(hi)


GAUSSIAN_ZCDP = register(
    Theorem(
        key="gaussian_zcdp",
        name="Gaussian mechanism is zCDP",
        citation="Bun and Steinke 2016, Proposition 1.6",
        assumptions="query of L2 sensitivity Delta; N(0, sigma^2) noise",
        statement="D_alpha(M(D)||M(D')) <= alpha rho for all alpha > 1, rho = Delta^2/(2 sigma^2)",
        bound=Bound.over_positive(
            "Delta sigma", lambda Delta, sigma: {"rho": Delta**2 / (2 * sigma**2)}
        ),
        domain=("sigma > 0", "Delta > 0"),
        latex=r"\rho = \Delta^2 / (2\sigma^2)",
    )
)

DISCRETE_GAUSSIAN_ZCDP = register(
    Theorem(
        key="discrete_gaussian_zcdp",
        name="discrete Gaussian mechanism is zCDP",
        citation="Canonne, Kamath, Steinke 2020, Theorem 4",
        assumptions="integer query of L2 sensitivity Delta; discrete Gaussian noise sigma^2",
        statement="D_alpha(M(D)||M(D')) <= alpha rho for all alpha > 1, rho = Delta^2/(2 sigma^2)",
        bound=Bound.over_positive(
            "Delta sigma", lambda Delta, sigma: {"rho": Delta**2 / (2 * sigma**2)}
        ),
        domain=("sigma > 0", "Delta > 0"),
        latex=r"\rho = \Delta^2 / (2\sigma^2)",
    )
)


def gaussian_rho(sigma_: sympy.Expr, sensitivity: sympy.Expr) -> sympy.Expr:
    """zCDP rho = Delta^2 / (2 sigma^2) of (discrete or continuous) Gaussian noise."""
    return exact(sensitivity, "sensitivity") ** 2 / (2 * exact(sigma_, "sigma") ** 2)


EXPONENTIAL = register(
    Theorem(
        key="exponential_mechanism",
        name="exponential mechanism",
        citation="McSherry and Talwar 2007; Dwork and Roth 2014, Theorem 3.10",
        assumptions=(
            "scores of sensitivity Delta; sampling proportional to exp(eps u/(2 Delta)),"
            " or exp(eps u/Delta) for monotone scores"
        ),
        statement="P[M(D) = r] <= exp(eps) P[M(D') = r] for every candidate r",
        bound=Bound.over_positive("epsilon", lambda eps: {"epsilon": eps}),
        domain=("epsilon > 0", "Delta > 0"),
        latex=r"\varepsilon",
    )
)

RANDOMIZED_RESPONSE = register(
    Theorem(
        key="randomized_response",
        name="randomized response",
        citation=(
            "Warner 1965; Dwork and Roth 2014, Section 3.2 (k-ary: Kairouz, Oh, Viswanath 2016)"
        ),
        assumptions="true category kept w.p. e^eps/(e^eps + k - 1), else uniform over the others",
        statement="P[M(x) = y] <= exp(eps) P[M(x') = y] for all categories x, x', y",
        bound=Bound.over_positive("epsilon", lambda eps: {"epsilon": eps}),
        domain=("epsilon > 0", "k >= 2"),
        latex=r"\varepsilon",
    )
)

REPORT_NOISY_MAX = register(
    Theorem(
        key="report_noisy_max",
        name="report noisy max",
        citation=(
            "Dwork and Roth 2014, Claim 3.9 (Laplace noise); McKenna and Sheldon 2020, "
            "Theorem 2 (exponential noise); Gumbel noise = exponential mechanism"
        ),
        assumptions=(
            "scores of sensitivity Delta; noise scale 2 Delta/eps (Delta/eps for monotone "
            "scores); only the argmax is released"
        ),
        statement="P[M(D) = r] <= exp(eps) P[M(D') = r] for every index r",
        bound=Bound.over_positive("epsilon", lambda eps: {"epsilon": eps}),
        domain=("epsilon > 0", "Delta > 0"),
        latex=r"\varepsilon",
    )
)

ABOVE_THRESHOLD = register(
    Theorem(
        key="above_threshold",
        name="sparse vector (AboveThreshold with cutoff c)",
        citation="Lyu, Su, Li 2017, Theorem 2 (Algorithm 1); Dwork and Roth 2014, Theorem 3.23",
        assumptions=(
            "queries of sensitivity Delta; threshold noise Lap(Delta/eps1), query noise "
            "Lap(2 c Delta/eps2) (Lap(c Delta/eps2) monotone); stops after c positives; "
            "releases only the above/below answers"
        ),
        statement="the whole answer sequence is (eps1 + eps2)-DP, for any number of queries",
        bound=Bound.over_positive("epsilon", lambda eps: {"epsilon": eps}),
        domain=("epsilon > 0", "Delta > 0", "c >= 1"),
        latex=r"\varepsilon = \varepsilon_1 + \varepsilon_2",
    )
)

DECLARED = register(
    Theorem(
        key="declared",
        name="declared guarantee",
        citation="the user's declaration (a PureDP, ApproxDP or ZCDP event)",
        assumptions="the mechanism satisfies the guarantee it is declared with",
        statement="as declared",
        domain=("epsilon >= 0", "0 <= delta < 1", "rho > 0"),
        latex=r"\text{as declared}",
    )
)
