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
    domain=(eps > 0,),
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
    domain=(eps > 0, x >= 0, x <= eps),
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
    domain=(eps > 0,),
))
