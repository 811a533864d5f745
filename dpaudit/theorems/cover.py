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

The accountant rule at the end applies :func:`cover_epsilon` to an
:class:`~dpaudit.events.cover.EMCover` event, and basic composition of the T rounds (each an
exponential mechanism with privacy parameter 2 c lambda) when T is known; it is registered
when :mod:`dpaudit.accountant` is imported.
"""

from __future__ import annotations

from typing import Any

import sympy

from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, register_rule
from dpaudit.accountant.statements import Approx, Concentrated, Pure, Statement, Step, show
from dpaudit.events.base import Relation
from dpaudit.events.cover import EMCover
from dpaudit.numeric import exact
from dpaudit.theorems import advanced, zcdp
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems import composition as comp
from dpaudit.theorems import primitives as prim
from dpaudit.theorems.base import Theorem, register

__all__ = [
    "COIN_LEMMA",
    "EM_COVER",
    "EM_COVER_STATED",
    "LAMBDA_STATED_MAX",
    "coin_tail",
    "compare_with_composition",
    "cover_epsilon",
    "cover_lower_bound",
    "stated_cover_epsilon",
]

lam, delta, c, y, T = sympy.symbols("lambda delta c y T", positive=True)

#: The largest inverse temperature (times c) for which this module verifies Lemma A.1 as
#: stated: e^a - 1 <= 2 a holds for a in (0, 1.2564...]; 5/4 is a rational below the root.
LAMBDA_STATED_MAX = sympy.Rational(5, 4)

COIN_LEMMA = register(Theorem(
    key="coin_lemma",
    name="coin lemma (adaptive coin tosses until the first head)",
    citation=("Gupta, Ligett, McSherry, Roth, Talwar 2010, Lemma (private set cover); "
              "Bun and Fang (004), Lemma A.3"),
    assumptions=("T rounds; in round i an adversary picks p_i in [0, 1] from the past, a coin "
                 "with P[heads] = p_i is tossed; N_i = 1 if no head in rounds 1..i"),
    statement="Y = sum_i p_i N_i satisfies P[Y > y] <= exp(-y) for every y > 0",
    bound={"probability": sympy.exp(-y)},
    domain=("y > 0",),
    latex=r"\Pr\left[\textstyle\sum_i p_i N_i > y\right] \le e^{-y}",
))


def coin_tail(threshold: Any) -> sympy.Expr:
    """exp(-y): the coin lemma's bound on P[sum_i p_i N_i > y] (Gupta et al. 2010; 004
    Lemma A.3).

    Raises:
        ValueError: if the threshold is not positive.
    """
    t = exact(threshold, "threshold")
    if not t.free_symbols and not t > 0:
        raise ValueError(f"threshold must be in (0, oo), got {threshold!r}")
    return sympy.exp(-t)


EM_COVER = register(Theorem(
    key="em_cover",
    name="cover-style bound for EMCover (corrected Lemma A.1)",
    citation=("Bun and Fang (004), Lemma A.1, proof corrected: log(1 + (e^a - 1) p) <= "
              "(e^a - 1) p in place of 1 + (e^a - 1) p <= e^(2 a p); after Gupta et al. 2010"),
    assumptions=("add/remove neighbours; every score q satisfies the cover conditions: a "
                 "candidate covering z moves by at most c when z is added, others not at all; "
                 "any number of adaptive rounds; 0 < delta < 1"),
    statement=("(c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1), delta)-DP, independent of "
               "the number of rounds"),
    bound={"epsilon": c * lam + (sympy.exp(c * lam) - 1) * (sympy.log(1 / delta) + 1),
           "delta": delta},
    domain=("lambda > 0", "c > 0", "0 < delta < 1"),
    latex=(r"\varepsilon = c\lambda + (e^{c\lambda} - 1)\left(\ln\tfrac{1}{\delta} + 1"
           r"\right)"),
))

EM_COVER_STATED = register(Theorem(
    key="em_cover_stated",
    name="Lemma A.1 as stated (EMCover)",
    citation="Bun and Fang (004), Lemma A.1",
    assumptions=("as for em_cover, with c = 1; valid only for lambda <= 5/4 (false for large "
                 "lambda, see dpaudit.theorems.cover)"),
    statement="(2 lambda (ln(1/delta) + 3/2), delta)-DP",
    bound={"epsilon": 2 * lam * (sympy.log(1 / delta) + sympy.Rational(3, 2)),
           "delta": delta},
    domain=("0 < lambda <= 5/4", "0 < delta < 1"),
    latex=r"\varepsilon = 2\lambda\left(\ln\tfrac{1}{\delta} + \tfrac{3}{2}\right)",
))


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
        raise ValueError(f"inverse_temperature * score_change must be in (0, oo), got {a}")
    return a + (sympy.exp(a) - 1) * (sympy.log(1 / d) + 1)


def stated_cover_epsilon(inverse_temperature: Any, delta_: Any) -> sympy.Expr:
    """2 lambda (ln(1/delta) + 3/2): Lemma A.1 of 004 as stated (valid for lambda <= 5/4)."""
    lam_ = exact(inverse_temperature, "inverse_temperature")
    return 2 * lam_ * (sympy.log(1 / exact(delta_, "delta")) + sympy.Rational(3, 2))


def cover_lower_bound(inverse_temperature: Any, delta_: Any, rounds: Any,
                      score_change: Any = 1) -> sympy.Expr:
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
    keep = (1 - p) ** t                       # P_S(R)
    return (sympy.log(keep - d) - t * sympy.log(1 - p)
            + t * sympy.log(1 + (sympy.exp(a) - 1) * p))  # - ln P_S'(R)


def compare_with_composition(event: EMCover, delta_: Any) -> dict[str, sympy.Expr]:
    """Epsilon of an EMCover run at delta by the cover bound and by composing its T rounds as
    a plain T-fold composition: basic and advanced composition (Dwork, Rothblum, Vadhan 2010,
    slack delta' = delta), and every other method the accountant compares for the T rounds
    (optimal, zCDP, bounded range, ...; each an upper bound), plus the tightest of them.

    Raises:
        ValueError: when the event's number of rounds is not given.
    """
    from dpaudit.accountant import Accountant

    composed = event.as_composition()
    rounds = composed.count
    per_round = event.round_event().epsilon
    tightest = Accountant().guarantee(composed, delta_)
    table = {
        "cover (corrected Lemma A.1)": cover_epsilon(event.inverse_temperature, delta_,
                                                     event.score_change),
        "basic composition": comp.self_composition(per_round, sympy.Integer(0), rounds)[0],
        "advanced composition": advanced.advanced_composition(per_round, 0, rounds,
                                                              exact(delta_, "delta"))[0],
    }
    for cand in tightest.candidates:
        if cand.label not in table:
            table[cand.label] = cand.epsilon
    table[f"composition: {tightest.theorem.name}"] = tightest.epsilon
    return table


# ------------------------------------------------------------------------------------------
# Accountant rule
# ------------------------------------------------------------------------------------------


@register_rule(EMCover)
def _em_cover(event: EMCover, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    """Basic composition and zCDP of the T rounds (when T is known) and the cover bound.

    Each theorem is applied only where :func:`~dpaudit.accountant.domains.admit` verifies its
    domain at this event's parameters: the round's exponential mechanism (epsilon = 2 c
    lambda > 0, Delta = c > 0), composition (k = T >= 1), the coin lemma at y = ln(1/delta)
    (y > 0, i.e. delta < 1) and the corrected Lemma A.1 (lambda > 0, c > 0, 0 < delta < 1).
    """
    out: list[Statement] = []
    a = event.score_change * event.inverse_temperature
    if event.rounds is not None:
        out += _rounds_composed(event, a)
    if event.relation is not Relation.ADD_REMOVE:
        return out  # Lemma A.1 compares S with S u {z}: add/remove only
    if budget is None:
        return out
    params = {"lambda": event.inverse_temperature, "c": event.score_change, "delta": budget}
    checks = admit(EM_COVER, event, params)
    coin = admit(COIN_LEMMA, event, {"y": sympy.log(1 / budget)}) if budget != 0 else None
    if checks is None or coin is None:
        return out
    tail = Step(COIN_LEMMA, event, f"P[sum_i p_i N_i > ln(1/delta)] <= {show(budget)}",
                f"y = ln(1/delta) = {show(sympy.log(1 / budget))}: exp(-y) = delta",
                checks=coin)
    eps = cover_epsilon(event.inverse_temperature, budget, event.score_change)
    out.append(Approx(Step(EM_COVER, event, f"({show(eps)}, {show(budget)})-DP",
                           f"eps = c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1) = {show(eps)}",
                           (tail,), note="independent of the number of rounds (coin lemma, "
                           "Gupta et al. 2010)", checks=checks), epsilon=eps, delta=budget))
    return out


def _rounds_composed(event: EMCover, a: sympy.Expr) -> list[Statement]:
    """The T rounds as T exponential mechanisms with privacy parameter 2 c lambda: pure DP by
    basic composition, and zCDP since each round is (2 c lambda)-bounded range, hence
    ((2 c lambda)^2 / 8)-zCDP (Cesar and Rogers 2021, Lemma 3.2), composed over T rounds
    (Bun and Steinke 2016)."""
    out: list[Statement] = []
    one = event.round_event()
    per_round = one.epsilon
    round_checks = admit(prim.EXPONENTIAL, one, {"epsilon": per_round,
                                                 "Delta": event.score_change})
    count = admit(comp.BASIC_COMPOSITION, event, {"k": event.rounds})
    if round_checks is None or count is None:
        return out
    round_step = Step(prim.EXPONENTIAL, one, f"({show(per_round)})-DP",
                      f"eps = 2 c lambda = {show(per_round)}", checks=round_checks)
    eps, _ = comp.self_composition(per_round, sympy.Integer(0), event.rounds)
    out.append(Pure(Step(comp.BASIC_COMPOSITION, event, f"({show(eps)})-DP",
                         f"eps = T x 2 c lambda = {show(event.rounds)} x {show(per_round)}"
                         f" = {show(eps)}", (round_step,), checks=count), epsilon=eps))
    br_checks = admit(br.BR_ZCDP, one, {"epsilon": per_round})
    z_checks = admit(zcdp.ZCDP_COMPOSITION, event, {"k": event.rounds})
    if br_checks is None or z_checks is None:
        return out
    rho0 = br.bounded_range_zcdp(per_round)
    round_zcdp = Step(br.BR_ZCDP, one, f"({show(rho0)})-zCDP",
                      f"rho = (2 c lambda)^2 / 8 = {show(rho0)}", checks=br_checks)
    rho = event.rounds * rho0
    out.append(Concentrated(Step(zcdp.ZCDP_COMPOSITION, event, f"({show(rho)})-zCDP",
                                 f"rho = T (2 c lambda)^2 / 8 = {show(rho)}", (round_zcdp,),
                                 checks=z_checks), rho=rho))
    return out
