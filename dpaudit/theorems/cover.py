"""The cover-style privacy bound of EMCover and the coin (martingale) lemma it rests on.

Source: Bun and Fang, "Privately Learning Decision Lists and a Differentially Private Winnow"
(document 004), Appendix A.1: Lemma A.1 (privacy of EMCover, Algorithm A.1) and Lemma A.3
(the coin lemma of Gupta, Ligett, McSherry, Roth, Talwar 2010, "Differentially private
combinatorial optimization", the private set cover analysis).

What holds, and what does not (checked by ``dpaudit verify --all``):

* Lemma A.1 *as stated* ("(2 eps (ln(1/delta) + 3/2), delta)-DP for every delta > 0", with
  eps the inverse temperature lambda) is **false for large lambda**.  Its proof uses
  1 + (e^eps - 1) x <= e^(2 eps x) for all eps > 0 and x in [0, 1], which fails once
  e^eps - 1 > 2 eps (eps > 1.2564...; e.g. eps = 3, x = 1/4).  A concrete score family
  meeting both cover conditions then violates the stated guarantee: see
  :func:`cover_lower_bound` (one covering candidate, T rounds, the output set "z is never
  covered").
* The **correct statement** (same proof, with log(1 + (e^a - 1) p) <= (e^a - 1) p instead):
  EMCover is (c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1), delta)-DP for every lambda > 0
  and delta in (0, 1), where c is the cover conditions' score change (1 in the paper).  For
  c lambda <= 5/4 (where e^a - 1 <= 2a) this is at most the stated 2 lambda (ln(1/delta) +
  3/2), so Lemma A.1 holds there -- which covers its use in DP-GreedyCover, whose lambda is
  eps / (2 (ln(1/delta) + 3/2)) <= 1/3 for eps <= 1.

The accountant applies :func:`cover_epsilon` to an :class:`~dpaudit.events.cover.EMCover`
event (:mod:`dpaudit.accountant.cover`), with basic composition of the T rounds (each an
exponential mechanism with privacy parameter 2 c lambda) when T is known.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import exact
from dpaudit.theorems.base import Bound, Theorem, lazy_constants, register

__all__ = [
    "COIN_LEMMA",
    "EM_COVER",
    "EM_COVER_STATED",
    "LAMBDA_STATED_MAX",
    "coin_tail",
    "cover_epsilon",
    "cover_lower_bound",
    "stated_cover_epsilon",
]

#: The largest inverse temperature (times c) for which this module verifies Lemma A.1 as
#: stated: e^a - 1 <= 2 a holds for a in (0, 1.2564...]; 5/4 is a rational below the root.
#: A sympy Rational, made on first read (a module ``__getattr__``).
__getattr__ = lazy_constants(globals(), LAMBDA_STATED_MAX=lambda: sympy.Rational(5, 4))
if TYPE_CHECKING:
    LAMBDA_STATED_MAX: sympy.Rational

COIN_LEMMA = register(
    Theorem(
        key="coin_lemma",
        name="coin lemma (adaptive coin tosses until the first head)",
        citation=(
            "Gupta, Ligett, McSherry, Roth, Talwar 2010, Lemma (private set cover); "
            "Bun and Fang (004), Lemma A.3"
        ),
        assumptions=(
            "T rounds; in round i an adversary picks p_i in [0, 1] from the past, a coin "
            "with P[heads] = p_i is tossed; N_i = 1 if no head in rounds 1..i"
        ),
        statement="Y = sum_i p_i N_i satisfies P[Y > y] <= exp(-y) for every y > 0",
        bound=Bound.over_positive("y", lambda y: {"probability": sympy.exp(-y)}),
        domain=("y > 0",),
        latex=r"\Pr\left[\textstyle\sum_i p_i N_i > y\right] \le e^{-y}",
    )
)


def coin_tail(threshold: Any) -> sympy.Expr:
    """exp(-y): the coin lemma's bound on P[sum_i p_i N_i > y] (Gupta et al. 2010; 004
    Lemma A.3).

    Raises:
        ValueError: if the threshold is not positive.
    """
    t = exact(threshold, "threshold")
    if not t.free_symbols and not t > 0:
        raise ValueError(f"threshold must be in (0, inf), got {threshold!r}")
    return sympy.exp(-t)


EM_COVER = register(
    Theorem(
        key="em_cover",
        name="cover-style bound for EMCover (corrected Lemma A.1)",
        citation=(
            "Bun and Fang (004), Lemma A.1, proof corrected: log(1 + (e^a - 1) p) <= "
            "(e^a - 1) p in place of 1 + (e^a - 1) p <= e^(2 a p); after Gupta et al. 2010"
        ),
        assumptions=(
            "add/remove neighbours; every score q satisfies the cover conditions: a "
            "candidate covering z moves by at most c when z is added, others not at all; "
            "any number of adaptive rounds; 0 < delta < 1"
        ),
        statement=(
            "(c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1), delta)-DP, independent of "
            "the number of rounds"
        ),
        bound=Bound.over_positive(
            "lambda delta c",
            lambda lam, delta, c: {
                "epsilon": c * lam + (sympy.exp(c * lam) - 1) * (sympy.log(1 / delta) + 1),
                "delta": delta,
            },
        ),
        domain=("lambda > 0", "c > 0", "0 < delta < 1"),
        latex=(
            r"\varepsilon = c\lambda + (e^{c\lambda} - 1)\left(\ln\tfrac{1}{\delta} + 1"
            r"\right)"
        ),
    )
)

EM_COVER_STATED = register(
    Theorem(
        key="em_cover_stated",
        name="Lemma A.1 as stated (EMCover)",
        citation="Bun and Fang (004), Lemma A.1",
        assumptions=(
            "as for em_cover, with c = 1; valid only for lambda <= 5/4 (false for large "
            "lambda, see dpaudit.theorems.cover)"
        ),
        statement="(2 lambda (ln(1/delta) + 3/2), delta)-DP",
        bound=Bound.over_positive(
            "lambda delta",
            lambda lam, delta: {
                "epsilon": 2 * lam * (sympy.log(1 / delta) + sympy.Rational(3, 2)),
                "delta": delta,
            },
        ),
        domain=("0 < lambda <= 5/4", "0 < delta < 1"),
        latex=r"\varepsilon = 2\lambda\left(\ln\tfrac{1}{\delta} + \tfrac{3}{2}\right)",
    )
)


def cover_epsilon(inverse_temperature: Any, delta_: Any, score_change: Any = 1) -> sympy.Expr:
    """c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1): EMCover's epsilon at delta.

    Privacy: for neighbours S, S' = S u {z} and an output sequence whose coin sum
    sum_i p_i N_i is at most ln(1/delta) (coin lemma: all but delta of the mass), the
    likelihood ratio is at most e^(c lambda) prod_{i <= t} (1 + (e^(c lambda) - 1) p_i) <=
    exp(c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1)) (004, proof of Lemma A.1, with the
    corrected last inequality).

    Raises:
        ValueError: for delta outside (0, 1) or non-positive lambda or c.
    """
    a = exact(inverse_temperature, "inverse_temperature") * exact(score_change, "score_change")
    d = exact(delta_, "delta")
    if not d.free_symbols and not (0 < d < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta_!r}")
    if not a.free_symbols and not a > 0:
        raise ValueError(f"inverse_temperature * score_change must be in (0, inf), got {a}")
    return a + (sympy.exp(a) - 1) * (sympy.log(1 / d) + 1)


def stated_cover_epsilon(inverse_temperature: Any, delta_: Any) -> sympy.Expr:
    """2 lambda (ln(1/delta) + 3/2): Lemma A.1 of 004 as stated (valid for lambda <= 5/4)."""
    lam_ = exact(inverse_temperature, "inverse_temperature")
    return 2 * lam_ * (sympy.log(1 / exact(delta_, "delta")) + sympy.Rational(3, 2))


def cover_lower_bound(
    inverse_temperature: Any, delta_: Any, rounds: Any, score_change: Any = 1
) -> sympy.Expr:
    """A certified lower bound on the true epsilon (at delta) of EMCover in the worst case
    over score families meeting the cover conditions.

    Construction: universe {z}; candidates h1 (covers z) and h0 (does not); one score for
    every round, q(S, h0) = 0 and q(S, h1) = s + c [z in S], with s chosen so that h1 is drawn
    with probability p = y / (T + y), y = ln(1/delta)/2, on S = {} (both cover conditions
    hold).  On S' = {z} it is drawn with p' = e^(c lambda) p / (1 - p + e^(c lambda) p).  The
    output set R = "h0 in every round" has P_S(R) = (1 - p)^T >= e^(-y) = sqrt(delta) > delta
    and P_S'(R) = (1 - p')^T, so any (eps, delta) guarantee needs
    eps >= ln(P_S(R) - delta) - ln P_S'(R).

    Returns:
        That bound as an exact expression in the arguments.
    """
    a = exact(inverse_temperature, "inverse_temperature") * exact(score_change, "score_change")
    d = exact(delta_, "delta")
    t = exact(rounds, "rounds")
    y_ = sympy.log(1 / d) / 2
    p = y_ / (t + y_)
    keep = (1 - p) ** t  # P_S(R)
    return (
        sympy.log(keep - d) - t * sympy.log(1 - p) + t * sympy.log(1 + (sympy.exp(a) - 1) * p)
    )  # - ln P_S'(R)
