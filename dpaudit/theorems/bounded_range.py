"""The exponential mechanism as a bounded-range mechanism (Durfee and Rogers 2019).

A mechanism is eps-bounded-range (eps-BR) when for neighbours D, D' the privacy loss
``log(P(y)/Q(y))`` ranges over an interval of length at most eps.  The exponential mechanism
with quality sensitivity Delta run as ``exp(eps u / (2 Delta))`` is eps-BR (and so is report
noisy max with Gumbel noise), which is much stronger than eps-DP under composition.
"""

from __future__ import annotations

import sympy

from dpaudit.numeric import exact
from dpaudit.theorems.base import Theorem, register

__all__ = ["BR_COMPOSITION", "BR_PROFILE", "BR_ZCDP", "bounded_range_profile",
           "bounded_range_zcdp"]

eps, x = sympy.symbols("epsilon x", positive=True)

BR_ZCDP = register(Theorem(
    key="bounded_range_zcdp",
    name="bounded range implies zCDP",
    citation=("Durfee and Rogers 2019 (NeurIPS), Section 3; Cesar and Rogers 2021, Lemma 3.2 "
              "(proof of eps^2/8)"),
    assumptions="an eps-BR mechanism, e.g. the exponential mechanism with parameter eps",
    statement="M is (eps^2/8)-zCDP",
    bound={"rho": eps**2 / 8},
    domain=("epsilon > 0",),
    latex=r"\rho = \varepsilon^2/8",
))


def bounded_range_zcdp(epsilon: sympy.Expr) -> sympy.Expr:
    """eps^2/8: an eps-BR mechanism is (eps^2/8)-zCDP (Cesar and Rogers 2021, Lemma 3.2).

    Privacy: D_alpha(M(D) || M(D')) <= alpha eps^2 / 8 for all alpha > 1.
    """
    return exact(epsilon, "epsilon") ** 2 / 8


BR_PROFILE = register(Theorem(
    key="bounded_range_profile",
    name="privacy profile of bounded-range mechanisms",
    citation=("Dong, Durfee, Rogers 2020 (ICML), Lemma 3.1 (reduction of eps-BR to generalized "
              "randomized response with parameter t); maximised over t in closed form"),
    assumptions="an eps-BR mechanism; 0 <= x <= eps",
    statement=("delta(x) <= (1 - e^{(x - eps)/2})^2 / (1 - e^{-eps}) for 0 <= x <= eps, and the "
               "pair with P-loss density e^{(l - eps)/2} / (2 (1 - e^{-eps})) on (-eps, eps) "
               "dominates every eps-BR pair"),
    bound={"delta": (1 - sympy.exp((x - eps) / 2)) ** 2 / (1 - sympy.exp(-eps))},
    domain=("epsilon > 0", "0 <= x <= epsilon"),
    latex=r"\delta(x) = \frac{(1 - e^{(x-\varepsilon)/2})^2}{1 - e^{-\varepsilon}}",
))


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


BR_COMPOSITION = register(Theorem(
    key="bounded_range_composition",
    name="composition of bounded-range mechanisms",
    citation=("Dong, Durfee, Rogers 2020 (ICML), Section 3 (eps-BR reduces to generalized "
              "randomized response); Zhu, Dong, Wang 2022, Theorem 10 (dominating pairs compose "
              "adaptively)"),
    assumptions="k adaptively chosen mechanisms, the i-th eps_i-BR",
    statement=("the composition's privacy profile is bounded by that of the product of the "
               "pairs dominating all eps_i-BR pairs (computed by the PLD accountant)"),
    bound={},
    domain=("epsilon > 0",),
))


BR_ADAPTIVE_COMPOSITION = register(Theorem(
    key="bounded_range_adaptive_composition",
    name="optimal adaptive composition of bounded-range mechanisms",
    citation=("Dong, Durfee, Rogers 2020 (ICML; arXiv:1909.13830), Sections 3.1 and 4 (an "
              "eps-BR pair is a post-processing of generalized randomized response with losses "
              "t and t - eps, some t in [0, eps]) and Section 3.3 (under adaptivity t may "
              "depend on the history); evaluated here as a dynamic programme over the "
              "remaining budget"),
    assumptions="k adaptively chosen eps-BR mechanisms (e.g. exponential mechanisms)",
    statement=("delta(x) <= V_k(x) with V_0(x) = (1 - e^x)_+ and V_j(x) = sup_{0<=t<=eps} "
               "[p_t V_{j-1}(x - t) + (1 - p_t) V_{j-1}(x - t + eps)], p_t = (e^eps - e^t) / "
               "(e^eps - 1); computed on a grid of step eps/M with each t rounded up to its "
               "cell (an upper bound of V_k, tight as M grows)"),
    bound={},
    domain=("epsilon > 0", "k >= 1", "0 < delta < 1"),
))

#: Largest count^2 * cells^2 the dynamic programme may cost (about half a second).
_DP_BUDGET = 4 * 10**8


def bounded_range_composition_epsilon(epsilon: float, count: int, delta: float,
                                      cells: int | None = None) -> float:
    """An upper bound on the optimal epsilon at ``delta`` of k adaptive eps-BR mechanisms.

    Each eps-BR pair is dominated by the binary pair with losses ``t`` and ``t - eps`` and
    ``P(t) = p_t``; with the adversary choosing t from the history, the composed profile is
    at most ``V_k`` of the recursion in :data:`BR_ADAPTIVE_COMPOSITION`.  On the grid
    ``x = i eps / M`` the supremum over t in a cell ``[a, b]`` is bounded by
    ``p_a V(x - b) + (1 - p_a) V(x - b + eps)`` (V is non-increasing and the expression is
    increasing in p), so the computed ``U_k >= V_k`` everywhere; rounding is covered by
    factors ``1 + c u`` per step.

    Privacy: for k adaptively chosen eps-BR mechanisms the composition is
    (returned value, delta)-DP.

    Args:
        epsilon: eps > 0 of each mechanism.
        count: k >= 1.
        delta: target in (0, 1).
        cells: M, cells per eps (default: as many as the cost budget allows, at most 400).

    Raises:
        ValueError: on parameters out of range or when the programme would be too large.
    """
    import math

    import numpy as np

    if not (isinstance(epsilon, float | int) and 0 < epsilon < 50):
        raise ValueError(f"epsilon must be in (0, 50), got {epsilon!r}")
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if cells is None:
        cells = min(400, int(math.isqrt(_DP_BUDGET // 2) // count))
    if cells < 20 or count * count * cells * cells > 4 * _DP_BUDGET:
        raise ValueError(f"{count} bounded-range compositions are too many for the dynamic "
                         "programme; use the zCDP or PLD bounds")
    u = 2.0**-53
    e = float(epsilon)
    h = e / cells
    n = 2 * (count + 1) * cells + 1  # x from -(count + 1) eps to (count + 1) eps
    lo = -(count + 1) * e
    x = lo + h * np.arange(n)
    with np.errstate(over="ignore"):
        values = np.clip(-np.expm1(x - 8 * u * (1 + np.abs(x))), 0.0, 1.0)
    values = np.minimum(1.0, values * (1 + 4 * u))
    # V_j(x) = E_P[1 - e^{x - L}] = 1 - e^x exactly for x <= -j eps (every loss sum exceeds x
    # and the Q-mass is 1), and V_j(x) = 0 for x >= j eps: the initial values are already
    # right there, so step j only updates the grid points strictly between
    em1 = math.expm1(-e)
    grow = 1 + (cells + 16) * u
    probs = [min(1.0, math.expm1((i - 1) * h - e) / em1 * grow) for i in range(1, cells + 1)]
    centre = (count + 1) * cells  # index of x = 0
    for j in range(1, count + 1):
        first, stop = centre - j * cells + 1, centre + j * cells
        best = np.zeros(stop - first)
        for i, a in enumerate(probs, start=1):
            # V(x - i h) and V(x - i h + eps) = V(x + (cells - i) h)
            ahead = cells - i
            cand = a * values[first - i:stop - i]
            cand += (1 - a) * values[first + ahead:stop + ahead]
            np.maximum(best, cand, out=best)
        values[first:stop] = np.minimum(1.0, best * (1 + 4 * u))
    ok = np.nonzero(values <= delta)[0]
    if ok.size == 0:
        return math.inf
    g = int(ok[0])
    value = (lo + g * h) if g else lo
    return max(0.0, value + 1e-12 * (1 + abs(value)))
