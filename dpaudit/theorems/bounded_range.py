"""The exponential mechanism as a bounded-range mechanism (Durfee and Rogers 2019).

A mechanism is eps-bounded-range (eps-BR) when for neighbours D, D' the privacy loss
``log(P(y)/Q(y))`` ranges over an interval of length at most eps.  The exponential mechanism
with quality sensitivity Delta run as ``exp(eps u / (2 Delta))`` is eps-BR (and so is report
noisy max with Gumbel noise), which is much stronger than eps-DP under composition.
"""

from __future__ import annotations

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import exact
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = ["BR_COMPOSITION", "BR_PROFILE", "BR_ZCDP", "bounded_range_profile", "bounded_range_zcdp"]

BR_ZCDP = register(
    Theorem(
        key="bounded_range_zcdp",
        name="bounded range implies zCDP",
        citation=(
            "Durfee and Rogers 2019 (NeurIPS), Section 3; Cesar and Rogers 2021, Lemma 3.2 "
            "(proof of eps^2/8)"
        ),
        assumptions="an eps-BR mechanism, e.g. the exponential mechanism with parameter eps",
        statement="M is (eps^2/8)-zCDP",
        bound=Bound.over_positive("epsilon", lambda eps: {"rho": eps**2 / 8}),
        domain=("epsilon > 0",),
        latex=r"\rho = \varepsilon^2/8",
    )
)


def bounded_range_zcdp(epsilon: sympy.Expr) -> sympy.Expr:
    """eps^2/8: an eps-BR mechanism is (eps^2/8)-zCDP (Cesar and Rogers 2021, Lemma 3.2).

    Privacy: D_alpha(M(D) || M(D')) <= alpha eps^2 / 8 for all alpha > 1.
    """
    return exact(epsilon, "epsilon") ** 2 / 8


BR_PROFILE = register(
    Theorem(
        key="bounded_range_profile",
        name="privacy profile of bounded-range mechanisms",
        citation=(
            "Dong, Durfee, Rogers 2020 (ICML), Lemma 3.1 (reduction of eps-BR to generalized "
            "randomized response with parameter t); maximised over t in closed form"
        ),
        assumptions="an eps-BR mechanism; 0 <= x <= eps",
        statement=(
            "delta(x) <= (1 - e^{(x - eps)/2})^2 / (1 - e^{-eps}) for 0 <= x <= eps, and the "
            "pair with P-loss density e^{(l - eps)/2} / (2 (1 - e^{-eps})) on (-eps, eps) "
            "dominates every eps-BR pair"
        ),
        bound=Bound.over_positive(
            "epsilon x",
            lambda eps, x: {"delta": (1 - sympy.exp((x - eps) / 2)) ** 2 / (1 - sympy.exp(-eps))},
        ),
        domain=("epsilon > 0", "0 <= x <= epsilon"),
        latex=r"\delta(x) = \frac{(1 - e^{(x-\varepsilon)/2})^2}{1 - e^{-\varepsilon}}",
    )
)


def bounded_range_profile(epsilon: sympy.Expr, level: sympy.Expr) -> sympy.Expr:
    """The exact supremum over eps-BR pairs of the privacy profile at ``level`` in [0, eps].

    The generalized randomized response with parameter t has losses (1-t) eps and -t eps; its
    profile at x is ``(1 - e^{-t eps})(1 - e^{x - (1-t) eps}) / (1 - e^{-eps})``, maximised at
    ``t = (eps - x)/(2 eps)``, which gives the returned value.

    Privacy: for every eps-BR mechanism and neighbours, H_{e^x}(M(D) || M(D')) <= value.

    Raises:
        ValueError: unless 0 <= level <= eps.
    """
    e, lv = exact(epsilon, "epsilon"), exact(level, "level")
    if not (e.free_symbols or lv.free_symbols) and not (0 <= lv <= e and e > 0):
        raise ValueError(f"level must be in [0, epsilon] with epsilon > 0, got {lv} and {e}")
    return (1 - sympy.exp((lv - e) / 2)) ** 2 / (1 - sympy.exp(-e))


BR_COMPOSITION = register(
    Theorem(
        key="bounded_range_composition",
        name="composition of bounded-range mechanisms",
        citation=(
            "Dong, Durfee, Rogers 2020 (ICML), Section 3 (eps-BR reduces to generalized "
            "randomized response); Zhu, Dong, Wang 2022, Theorem 10 (dominating pairs compose "
            "adaptively)"
        ),
        assumptions="k adaptively chosen mechanisms, the i-th eps_i-BR",
        statement=(
            "the composition's privacy profile is bounded by that of the product of the "
            "pairs dominating all eps_i-BR pairs (computed by the PLD accountant)"
        ),
        domain=("epsilon > 0",),
    )
)


BR_ADAPTIVE_COMPOSITION = register(
    Theorem(
        key="bounded_range_adaptive_composition",
        name="optimal adaptive composition of bounded-range mechanisms",
        citation=(
            "Dong, Durfee, Rogers 2020 (ICML; arXiv:1909.13830), Sections 3.1 and 4 (an "
            "eps-BR pair is a post-processing of generalized randomized response with losses "
            "t and t - eps, some t in [0, eps]) and Section 3.3 (under adaptivity t may "
            "depend on the history); evaluated here as a dynamic programme over the "
            "remaining budget"
        ),
        assumptions="k adaptively chosen eps-BR mechanisms (e.g. exponential mechanisms)",
        statement=(
            "delta(x) <= V_k(x) with V_0(x) = (1 - e^x)_+ and V_j(x) = sup_{0<=t<=eps} "
            "[p_t V_{j-1}(x - t) + (1 - p_t) V_{j-1}(x - t + eps)], p_t = (e^eps - e^t) / "
            "(e^eps - 1), V_j convex in e^x; computed on a grid of step eps/M: upper with "
            "chords of V in e^x on each t-cell, lower with t restricted to the grid; each "
            "cell (an upper bound of V_k, tight as M grows)"
        ),
        domain=("epsilon > 0", "k >= 1", "0 < delta < 1"),
    )
)

#: Largest count^2 * cells^2 of the dynamic programme by default (k = 100: 50 cells per eps,
#: about 0.3 s); up to 16 times more when the cells are given.
_DP_BUDGET = 25 * 10**6


def bounded_range_composition_bounds(
    epsilon: float, count: int, delta: float, cells: int | None = None, *, sides: str = "both"
) -> tuple[float, float]:
    """Certified ``(lower, upper)`` around the optimal epsilon at ``delta`` of k adaptively
    composed eps-BR mechanisms (the exact value of the recursion V_k of
    :data:`BR_ADAPTIVE_COMPOSITION`).

    Each eps-BR pair is a post-processing of the binary pair with losses ``t`` and
    ``t - eps`` and ``P(t) = p_t`` (Dong, Durfee, Rogers 2020, Section 4), and the adversary
    picks t from the history, so the composed profile is ``V_k``; conversely every such
    choice is realised by exponential mechanisms (DDR20, Section 4), so ``V_k`` is the
    optimum for the class.  Both sides are computed on the grid ``x = i h``, ``h = eps / M``:

    * upper: every V_j, as a function of ``s = e^x``, is convex (a hockey-stick divergence
      ``E_P[(1 - s e^{-L})_+]``; the recursion takes suprema of convex functions), so on a
      t-cell ``[a, b]`` the values ``V(x - t)`` and ``V(x - t + eps)`` lie below their chords
      in ``e^{-t}`` through the (upper) grid values.  The resulting bound
      ``F(y) = K0 + K1 y + K2 / y`` (``y = e^t``) is maximised exactly: at an end point when
      convex (``K2 >= 0``), else by the tangent lines at both ends (second order in h).
    * lower: t restricted to the grid is an adaptive composition of eps-BR mechanisms, whose
      profile the same recursion computes exactly on the grid (rounded down); a grid point
      where it exceeds delta is a certified lower bound on the optimum.

    Rounding is covered by factors ``1 +- c u`` and absolute margins per step.  Only the
    grid points that can influence ``V_k`` on a window around the answer (the zCDP bound
    from above, half of it from below) are updated, which halves the work.

    Privacy: k adaptively chosen eps-BR mechanisms compose to an (upper, delta)-DP mechanism,
    and some adaptive composition of k exponential mechanisms with parameter eps is not
    (lower, delta)-DP.

    Args:
        epsilon: eps > 0 of each mechanism.
        count: k >= 1.
        delta: target in (0, 1).
        cells: M, cells per eps (default: as many as the cost budget allows, 12 to 200).
        sides: ``"both"``, or ``"lower"`` / ``"upper"`` to compute one side only (the other
            is returned as 0 / inf): callers holding an inexact epsilon run the upper side
            with it rounded up and the lower side with it rounded down.

    Raises:
        ValueError: on parameters out of range or when the programme would be too large.
    """
    import math

    import mpmath
    import numpy as np

    from dpaudit.numeric import endpoints, iv_precision, mpf_to_float

    if not (isinstance(epsilon, float | int) and 0 < epsilon < 50):
        raise ValueError(f"epsilon must be in (0, 50), got {epsilon!r}")
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if sides not in ("both", "lower", "upper"):
        raise ValueError(f"sides must be 'both', 'lower' or 'upper', got {sides!r}")
    want_lower, want_upper = sides != "upper", sides != "lower"
    if cells is None:
        cells = min(200, int(math.isqrt(_DP_BUDGET) // count))
    if cells < 12 or count * count * cells * cells > 16 * _DP_BUDGET:
        raise ValueError(
            f"{count} bounded-range compositions are too many for the dynamic "
            "programme; use the zCDP or PLD bounds"
        )
    u = 2.0**-53
    e = float(epsilon)
    m = cells
    h = e / m
    big, em1 = math.exp(e), math.expm1(e)
    n = 2 * (count + 1) * m + 1  # x from -(count + 1) eps to (count + 1) eps
    lo = -(count + 1) * e
    x = lo + h * np.arange(n)
    with np.errstate(over="ignore"):
        v0 = np.clip(-np.expm1(x), 0.0, 1.0)
    slack = 8 * u * (1 + np.abs(x)) * np.exp(np.minimum(x, 0.0))
    upper = np.minimum(1.0, v0 * (1 + 4 * u) + slack)
    lower = np.maximum(0.0, v0 * (1 - 4 * u) - slack)
    # V_j(x) = 1 - e^x for x <= -j eps and 0 for x >= j eps (exact initial values there)
    ts = h * np.arange(m + 1)
    p = np.exp(ts) * np.expm1(e - ts) / em1  # p_t (floats: steer the tangent bounds only)
    q = np.expm1(ts) / em1  # 1 - p_t
    # p_t and 1 - p_t at the exact t = i eps / M, enclosed in interval arithmetic (a rounded t
    # would move p near t = eps by many ulps), rounded outward
    p_dn, p_up, q_dn, q_up = (np.empty(m + 1) for _ in range(4))
    with iv_precision(80):
        iv = mpmath.iv
        e_iv = iv.mpf(e)
        for i in range(m + 1):
            t_iv = e_iv * i / m
            for value, dn_out, up_out in (
                (iv.expm1(e_iv) - iv.expm1(t_iv), p_dn, p_up),
                (iv.expm1(t_iv), q_dn, q_up),
            ):
                a, b = endpoints(value / iv.expm1(e_iv))
                dn_out[i] = max(0.0, mpf_to_float(a, "down"))
                up_out[i] = min(1.0, mpf_to_float(b, "up"))
    slope = np.exp(ts) / em1 * (1 + 8 * u)  # -dp_t/dt
    eh, emh = math.expm1(h), -math.expm1(-h)
    margin = 64 * u * (2 + big / em1)
    # tangent coefficients: F(a) + max(0, F_t(a)) (e^h - 1) and F(b) + max(0, -F_t(b))
    # (1 - e^{-h}), with F_t = p'_t (A - B) + (p_t dA + (1 - p_t) dB) lambda'_t
    tan_a = (-slope[:-1] * eh, (1 + eh) * p[:-1], (1 + eh) * q[:-1])
    tan_b = (slope[1:] * emh, (1 - emh) * p[1:], (1 - emh) * q[1:])
    centre = (count + 1) * m
    rho = count * e * e / 8  # the zCDP route (eps^2/8 per mechanism) bounds the answer
    top = min(count * e, rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    w_lo, w_hi = centre, min(n - 1, centre + math.ceil(top / h) + 2)
    windows = np.lib.stride_tricks.sliding_window_view
    col = np.newaxis
    for j in range(1, count + 1):
        first = max(centre - j * m + 1, w_lo - (count - j) * m)
        stop = min(centre + j * m, w_hi + (count - j) * m + 1)
        if stop <= first:
            continue
        size = stop - first
        # row i: the values at x - i h (A) and x - i h + eps (B), i = 0..m
        if want_lower:
            a_lo = windows(lower, size)[first - m : first + 1][::-1]
            b_lo = windows(lower, size)[first : first + m + 1][::-1]
            best = (p_dn[:, col] * a_lo + q_dn[:, col] * b_lo).max(axis=0)
            lower[first:stop] = best * (1 - 4 * u)
        if not want_upper:
            continue
        a_up = windows(upper, size)[first - m : first + 1][::-1]
        b_up = windows(upper, size)[first : first + m + 1][::-1]
        f = p_up[:, col] * a_up + q_up[:, col] * b_up  # F at the cell ends t = i h
        fa, fb = f[:-1], f[1:]
        da, db = a_up[:-1] - a_up[1:], b_up[:-1] - b_up[1:]
        gap = a_up - b_up
        ends = np.maximum(fa, fb)
        # concave in y (K2 < 0, K2 proportional to e^eps da - db): tangents at both ends
        ta = fa + np.maximum(
            0.0, tan_a[0][:, col] * gap[:-1] - tan_a[1][:, col] * da - tan_a[2][:, col] * db
        )
        tb = fb + np.maximum(
            0.0, tan_b[0][:, col] * gap[1:] + tan_b[1][:, col] * da + tan_b[2][:, col] * db
        )
        biggest = np.maximum(a_up.max(axis=0), b_up.max(axis=0))  # scale of the rounding
        convex = big * da - db > 256 * u * big * biggest
        cand = np.where(convex, ends, np.maximum(np.minimum(ta, tb), ends))
        upper_new = cand.max(axis=0) * (1 + 64 * u) + 4 * margin * biggest
        upper[first:stop] = np.minimum(1.0, upper_new)
    window = slice(w_lo, w_hi + 1)
    ok = np.nonzero(upper[window] <= delta)[0] if want_upper else np.zeros(0, dtype=int)
    up = float(x[w_lo + int(ok[0])]) if ok.size else math.inf
    above = np.nonzero(lower[window] > delta)[0] if want_lower else np.zeros(0, dtype=int)
    low = float(x[w_lo + int(above[-1])]) if above.size else 0.0
    up = max(0.0, up + 1e-12 * (1 + abs(up)))
    low = max(0.0, low - 1e-12 * (1 + abs(low)))
    return min(low, up), up


def bounded_range_composition_epsilon(
    epsilon: float, count: int, delta: float, cells: int | None = None
) -> float:
    """The upper end of :func:`bounded_range_composition_bounds`.

    Privacy: for k adaptively chosen eps-BR mechanisms the composition is
    (returned value, delta)-DP.

    Raises:
        ValueError: as :func:`bounded_range_composition_bounds`.
    """
    return bounded_range_composition_bounds(epsilon, count, delta, cells)[1]
