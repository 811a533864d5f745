"""The accountant's rule for EMCover (004, Appendix A.1), and the cover bound compared with
composing the rounds.

The bounds live in :mod:`dpaudit.theorems.cover` (the corrected Lemma A.1 and the coin lemma
it rests on); this module applies them to an :class:`~dpaudit.events.cover.EMCover` event,
each only where :func:`~dpaudit.accountant.domains.admit` verifies its domain.  It is
registered when :mod:`dpaudit.accountant` is imported.
"""

from __future__ import annotations

from typing import Any

from dpaudit.accountant.core import Accountant
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, register_rule
from dpaudit.accountant.statements import Approx, Concentrated, Pure, Statement, Step, show
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Relation
from dpaudit.events.cover import EMCover
from dpaudit.numeric import exact
from dpaudit.theorems import advanced, zcdp
from dpaudit.theorems import bounded_range as br
from dpaudit.theorems import composition as comp
from dpaudit.theorems import primitives as prim
from dpaudit.theorems.cover import COIN_LEMMA, EM_COVER, cover_epsilon

__all__ = ["compare_with_composition"]


def compare_with_composition(event: EMCover, delta_: Any) -> dict[str, sympy.Expr]:
    """Epsilon of an EMCover run at delta by the cover bound and by composing its T rounds as
    a plain T-fold composition: basic and advanced composition (Dwork, Rothblum, Vadhan 2010,
    slack delta' = delta), and every other method the accountant compares for the T rounds
    (optimal, zCDP, bounded range, ...; each an upper bound), plus the tightest of them.

    Raises:
        ValueError: when the event's number of rounds is not given.
    """
    composed = event.as_composition()
    rounds = composed.count
    per_round = event.round_event().epsilon
    tightest = Accountant().guarantee(composed, delta_)
    table = {
        "cover (corrected Lemma A.1)": cover_epsilon(
            event.inverse_temperature, delta_, event.score_change
        ),
        "basic composition": comp.self_composition(per_round, sympy.Integer(0), rounds)[0],
        "advanced composition": advanced.advanced_composition(
            per_round, 0, rounds, exact(delta_, "delta")
        )[0],
    }
    for cand in tightest.candidates:
        if cand.label not in table:
            table[cand.label] = cand.epsilon
    table[f"composition: {tightest.theorem.name}"] = tightest.epsilon
    return table


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
    tail = Step(
        COIN_LEMMA,
        event,
        f"P[sum_i p_i N_i > ln(1/delta)] <= {show(budget)}",
        f"y = ln(1/delta) = {show(sympy.log(1 / budget))}: exp(-y) = delta",
        checks=coin,
    )
    eps = cover_epsilon(event.inverse_temperature, budget, event.score_change)
    out.append(
        Approx(
            Step(
                EM_COVER,
                event,
                f"({show(eps)}, {show(budget)})-DP",
                f"eps = c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1) = {show(eps)}",
                (tail,),
                note="independent of the number of rounds (coin lemma, Gupta et al. 2010)",
                checks=checks,
            ),
            epsilon=eps,
            delta=budget,
        )
    )
    return out


def _rounds_composed(event: EMCover, a: sympy.Expr) -> list[Statement]:
    """The T rounds as T exponential mechanisms with privacy parameter 2 c lambda: pure DP by
    basic composition, and zCDP since each round is (2 c lambda)-bounded range, hence
    ((2 c lambda)^2 / 8)-zCDP (Cesar and Rogers 2021, Lemma 3.2), composed over T rounds
    (Bun and Steinke 2016)."""
    out: list[Statement] = []
    one = event.round_event()
    per_round = one.epsilon
    round_checks = admit(prim.EXPONENTIAL, one, {"epsilon": per_round, "Delta": event.score_change})
    count = admit(comp.BASIC_COMPOSITION, event, {"k": event.rounds})
    if round_checks is None or count is None:
        return out
    round_step = Step(
        prim.EXPONENTIAL,
        one,
        f"({show(per_round)})-DP",
        f"eps = 2 c lambda = {show(per_round)}",
        checks=round_checks,
    )
    eps, _ = comp.self_composition(per_round, sympy.Integer(0), event.rounds)
    out.append(
        Pure(
            Step(
                comp.BASIC_COMPOSITION,
                event,
                f"({show(eps)})-DP",
                f"eps = T x 2 c lambda = {show(event.rounds)} x {show(per_round)} = {show(eps)}",
                (round_step,),
                checks=count,
            ),
            epsilon=eps,
        )
    )
    br_checks = admit(br.BR_ZCDP, one, {"epsilon": per_round})
    z_checks = admit(zcdp.ZCDP_COMPOSITION, event, {"k": event.rounds})
    if br_checks is None or z_checks is None:
        return out
    rho0 = br.bounded_range_zcdp(per_round)
    round_zcdp = Step(
        br.BR_ZCDP,
        one,
        f"({show(rho0)})-zCDP",
        f"rho = (2 c lambda)^2 / 8 = {show(rho0)}",
        checks=br_checks,
    )
    rho = event.rounds * rho0
    out.append(
        Concentrated(
            Step(
                zcdp.ZCDP_COMPOSITION,
                event,
                f"({show(rho)})-zCDP",
                f"rho = T (2 c lambda)^2 / 8 = {show(rho)}",
                (round_zcdp,),
                checks=z_checks,
            ),
            rho=rho,
        )
    )
    return out
