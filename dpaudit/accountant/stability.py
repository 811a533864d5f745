"""The accountant's rules for the stability and private-prediction events of 003.

Dagan and Feldman, "PAC learning with stable and private predictions" (COLT 2020; document
003).  The bounds live in :mod:`dpaudit.theorems.stability`, one function each; the rules
below apply them to the events of :mod:`dpaudit.events.stability` (and to sampling without
replacement of a pure-DP prediction, 003 Lemma 5), each only where
:func:`~dpaudit.accountant.domains.admit` verifies its domain.  They are registered when
:mod:`dpaudit.accountant` is imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, best_candidate, of_currency, register_rule
from dpaudit.accountant.statements import Approx, Pure, Statement, Step, compare, show
from dpaudit.deferred_imports import sympy
from dpaudit.events import Exponential, SampledWithoutReplacement
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
    SubsampledCandidates,
    UniformlyStable,
)
from dpaudit.theorems.stability import (
    DP_TO_STABILITY,
    LABEL_FLIP,
    LEMMA8_PREDICTION,
    PREDICTION_SUBSAMPLING,
    RANDOMIZED_FLIP,
    STABILITY_DECLARED,
    SUBSAMPLED_CANDIDATES,
    dp_to_stability,
    flipped_epsilon,
    lemma8_guarantee,
    prediction_subsampling_epsilon,
    randomized_flip_epsilon,
    selection_beta,
    subsampled_candidates_stability,
)

__all__: list[str] = []


def _candidates(statements: Sequence[Statement], budget: sympy.Expr | None) -> list:
    found = []
    for st in statements:
        found.extend(st.candidates(budget))
    if not found:
        for st in statements:
            found.extend(st.candidates(None))
    return found


@register_rule(UniformlyStable)
def _uniformly_stable(
    event: UniformlyStable, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    checks = admit(STABILITY_DECLARED, event, {"gamma": event.gamma})
    if checks is None:
        return []
    step = Step(
        STABILITY_DECLARED,
        event,
        f"(0, {show(event.gamma)})-private prediction",
        f"gamma = {show(event.gamma)}",
        checks=checks,
    )
    return [Approx(step, epsilon=sympy.Integer(0), delta=event.gamma)]


@register_rule(SubsampledCandidates)
def _subsampled_candidates(
    event: SubsampledCandidates, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    (inner,) = children
    cand = best_candidate(inner, None)
    best: Approx | None = None
    for c in _candidates(inner, budget) + ([cand] if cand else []):
        binary = admit(DP_TO_STABILITY, event.event, {"epsilon": c.epsilon, "delta": c.delta})
        if binary is None:
            continue
        inner_stab = dp_to_stability(c.epsilon, c.delta)
        checks = admit(
            SUBSAMPLED_CANDIDATES,
            event,
            {"n'": event.sample, "n": event.population, "s": inner_stab},
        )
        if checks is None:
            continue
        stab = subsampled_candidates_stability(event.sample, event.population, inner_stab)
        stable = Step(
            DP_TO_STABILITY,
            event.event,
            f"{show(inner_stab)}-uniformly stable",
            f"s = (e^eps - 1 + 2 delta)/(e^eps + 1) = {show(inner_stab)}",
            (c.step,),
            checks=binary,
        )
        step = Step(
            SUBSAMPLED_CANDIDATES,
            event,
            f"{show(stab)}-uniformly stable",
            f"gamma = n'/n + (1 - n'/n) s = {show(stab)}",
            (stable,),
            checks=checks,
        )
        st = Approx(step, epsilon=sympy.Integer(0), delta=stab)
        if best is None or _smaller(st.delta, best.delta):
            best = st
    return [best] if best is not None else []


def _undecided(x: sympy.Expr, y: sympy.Expr) -> bool:
    return compare(x, y) is None


def _smaller(x: sympy.Expr, y: sympy.Expr) -> bool:
    return compare(x, y) == -1


@register_rule(LabelFlipped)
def _label_flipped(
    event: LabelFlipped, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    (inner,) = children
    rr_checks = admit(RANDOMIZED_FLIP, event, {"a": event.flip})
    if rr_checks is None:
        return []
    rr = randomized_flip_epsilon(event.flip)
    out = Pure(
        Step(
            RANDOMIZED_FLIP,
            event,
            f"({show(rr)})-private prediction",
            f"eps = ln((1 - a)/a) = {show(rr)}",
            checks=rr_checks,
        ),
        epsilon=rr,
    )
    for c in _candidates(inner, None):
        checks = admit(LABEL_FLIP, event, {"a": event.flip, "epsilon": c.epsilon, "delta": c.delta})
        if checks is None:
            continue
        e = flipped_epsilon(c.epsilon, c.delta, event.flip)
        if _smaller(e, out.epsilon) or (e.free_symbols and not out.epsilon.free_symbols):
            out = Pure(
                Step(
                    LABEL_FLIP,
                    event,
                    f"({show(e)})-private prediction",
                    f"eps = ln(e^eps + (1 - 2a) delta / a) = {show(e)}",
                    (c.step,),
                    checks=checks,
                ),
                epsilon=e,
            )
        elif out.epsilon.free_symbols and _undecided(e, out.epsilon):
            # symbolic and neither is always smaller: both hold, so their minimum does (the
            # verifier tries each argument of the Min over a claim's domain)
            both = sympy.Min(e, out.epsilon)
            out = Pure(
                Step(
                    LABEL_FLIP,
                    event,
                    f"({show(both)})-private prediction",
                    f"eps = min(ln(e^eps + (1 - 2a) delta / a), {show(out.epsilon)}) "
                    f"= {show(both)}",
                    (c.step,),
                    checks=checks,
                ),
                epsilon=both,
            )
    return [out]


@register_rule(RelabeledSubsampleSelection)
def _relabeled(
    event: RelabeledSubsampleSelection, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    if not isinstance(event.selection, Exponential):
        return []
    _, relabel = children
    pures = of_currency(relabel, Pure)
    if not pures:
        return []
    sel = event.selection
    checks = admit(
        LEMMA8_PREDICTION,
        event,
        {
            "n'": event.sample,
            "n": event.population,
            "epsilon_R": pures[0].epsilon,
            "epsilon_EM": sel.epsilon,
            "beta": selection_beta(sel),
            "eta": event.net_radius,
            "d": event.vc_dimension,
        },
    )
    if checks is None:
        return []
    e, d = lemma8_guarantee(event, pures[0].epsilon)
    step = Step(
        LEMMA8_PREDICTION,
        event,
        f"({show(e)}, {show(d)})-private prediction",
        f"eps = {show(e)}, delta = (n'/n) p_fail = {show(d)}",
        (pures[0].step,),
        checks=checks,
    )
    return [Approx(step, epsilon=e, delta=d)]


@register_rule(SampledWithoutReplacement)
def _df_lemma5(
    event: SampledWithoutReplacement, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    (inner,) = children
    pures = of_currency(inner, Pure)
    if not pures:
        return []
    e0 = pures[0].epsilon
    if e0.free_symbols:
        return []  # a conditional eps <= 1 would burden every symbolic claim
    checks = admit(
        PREDICTION_SUBSAMPLING, event, {"epsilon": e0, "m": event.sample, "n": event.population}
    )
    if checks is None:
        return []
    e = prediction_subsampling_epsilon(e0, event.sample, event.population)
    return [
        Pure(
            Step(
                PREDICTION_SUBSAMPLING,
                event,
                f"({show(e)})-DP",
                f"eps = 2 eps_0 m/n = {show(e)}",
                (pures[0].step,),
                checks=checks,
            ),
            epsilon=e,
        )
    ]
