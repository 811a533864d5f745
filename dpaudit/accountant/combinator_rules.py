"""Rules for the combinators of an event tree: composition (of different events and of one
event with itself), parallel composition, post-processing and group privacy.

Importing this module registers them in :data:`~dpaudit.accountant.rules.RULES` (the
package :mod:`dpaudit.accountant` imports it, after the primitive rules and before every
other rule module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from dpaudit import events as ev
from dpaudit.accountant.domains import admit, with_params
from dpaudit.accountant.rules import (
    BUDGET_FREE,
    Children,
    best_candidate,
    of_currency,
    register_rule,
)
from dpaudit.accountant.statements import (
    Approx,
    Candidate,
    Concentrated,
    GaussianDP,
    Pure,
    Statement,
    Step,
    compare,
    exact_zero,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.numeric import functions as fn
from dpaudit.theorems import composition as comp
from dpaudit.theorems import zcdp

_S = TypeVar("_S", bound=Statement)


def _all_have(children: Children, cls: type[_S]) -> list[_S] | None:
    """The best statement of currency ``cls`` of each child, or None if one child lacks it."""
    chosen: list[_S] = []
    for statements in children:
        found = of_currency(statements, cls)
        if not found:
            return None
        chosen.append(found[0])
    return chosen


def _approx_inputs(
    children: Children, budgets: Sequence[sympy.Expr | None]
) -> list[Candidate] | None:
    """Each child's best (eps, delta) candidate within its delta budget, or None."""
    chosen = []
    for statements, budget in zip(children, budgets, strict=True):
        cand = best_candidate(statements, budget)
        if cand is None:
            cand = best_candidate(statements, None)
        if cand is None:
            return None
        chosen.append(cand)
    return chosen


def _all_numeric_pld(children: Children) -> bool:
    """Whether every part has a privacy loss distribution: their composition (the tight rule)
    is then at most basic composition of the parts' (eps_i, delta / N) (the composed dominating
    pairs' profile at sum delta_i is at most sum eps_i, Dwork-Roth Thm 3.16 applied to the
    pairs), so basic composition of approximate-DP parts is not derived: it cost each part a
    PLD at delta / N and its amplification candidates, most of the time of a schedule of
    distinct parts (issue 19 part 1).  Pure parts are still composed by basic composition."""
    from dpaudit.accountant.currencies import LossDistribution

    return all(of_currency(statements, LossDistribution) for statements in children)


BUDGET_FREE[ev.Composed] = _all_numeric_pld


def _budgets(count: int, budget: sympy.Expr | None) -> list[sympy.Expr | None]:
    return [None if budget is None else budget / count] * count


@register_rule(ev.Composed)
def _composed(event: ev.Composed, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    out: list[Statement] = []
    count = {"k": len(children)}
    basic = admit(comp.BASIC_COMPOSITION, event, count)
    pures = _all_have(children, Pure)
    if basic is not None and pures is not None:
        eps, _ = comp.basic_composition([p.epsilon for p in pures])
        out.append(
            Pure(
                Step(
                    comp.BASIC_COMPOSITION,
                    event,
                    f"({show(eps)})-DP",
                    f"eps = sum eps_i = {show(eps)}",
                    tuple(p.step for p in pures),
                    checks=basic,
                ),
                epsilon=eps,
                exact_profile=False,
            )
        )
    elif basic is not None and not _all_numeric_pld(children):
        cands = _approx_inputs(children, _budgets(len(children), budget))
        if cands is not None:
            eps, dlt = comp.basic_composition([c.epsilon for c in cands], [c.delta for c in cands])
            out.append(
                Approx(
                    Step(
                        comp.BASIC_COMPOSITION,
                        event,
                        f"({show(eps)}, {show(dlt)})-DP",
                        f"eps = sum eps_i = {show(eps)}, delta = sum delta_i = {show(dlt)}",
                        tuple(c.step for c in cands),
                        note="delta budget split evenly among the parts",
                        checks=basic,
                    ),
                    epsilon=eps,
                    delta=dlt,
                )
            )
    concs = _all_have(children, Concentrated)
    checks = admit(zcdp.ZCDP_COMPOSITION, event, count) if concs is not None else None
    if concs is not None and checks is not None:
        rho = zcdp.zcdp_composition([c.rho for c in concs])
        out.append(
            Concentrated(
                Step(
                    zcdp.ZCDP_COMPOSITION,
                    event,
                    f"({show(rho)})-zCDP",
                    f"rho = sum rho_i = {show(rho)}",
                    tuple(c.step for c in concs),
                    checks=checks,
                ),
                rho=rho,
            )
        )
    gdps = _all_have(children, GaussianDP)
    checks = admit(comp.GDP_COMPOSITION, event, count) if gdps is not None else None
    if gdps is not None and checks is not None:
        mu = comp.gdp_composition([g.mu for g in gdps])
        out.append(
            GaussianDP(
                Step(
                    comp.GDP_COMPOSITION,
                    event,
                    f"({show(mu)})-GDP",
                    f"mu = sqrt(sum mu_i^2) = {show(mu)}",
                    tuple(g.step for g in gdps),
                    checks=checks,
                ),
                mu=mu,
                exact_profile=all(g.exact_profile for g in gdps),
            )
        )
    return out


@register_rule(ev.SelfComposed)
def _self_composed(
    event: ev.SelfComposed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    (inner,) = children
    k = event.count
    out: list[Statement] = []
    pures = of_currency(inner, Pure)
    basic = admit(comp.BASIC_COMPOSITION, event, {"k": k})
    if basic is not None and pures:
        p = pures[0]
        eps, _ = comp.self_composition(p.epsilon, 0, k)
        out.append(
            Pure(
                Step(
                    comp.BASIC_COMPOSITION,
                    event,
                    f"({show(eps)})-DP",
                    f"eps = k eps_0 = {show(k)} x {show(p.epsilon)} = {show(eps)}",
                    (p.step,),
                    checks=with_params(basic, {"epsilon": p.epsilon, "delta": 0}),
                ),
                epsilon=eps,
            )
        )
    elif basic is not None:
        child_budget = None if budget is None else budget / k
        cand = best_candidate(inner, child_budget) or best_candidate(inner, None)
        if cand is not None:
            eps, dlt = comp.self_composition(cand.epsilon, cand.delta, k)
            out.append(
                Approx(
                    Step(
                        comp.BASIC_COMPOSITION,
                        event,
                        f"({show(eps)}, {show(dlt)})-DP",
                        f"eps = k eps_0 = {show(eps)}, delta = k delta_0 = {show(dlt)}",
                        (cand.step,),
                        note="delta budget split evenly among the k runs",
                        checks=with_params(basic, {"epsilon": cand.epsilon, "delta": cand.delta}),
                    ),
                    epsilon=eps,
                    delta=dlt,
                )
            )
    concs = of_currency(inner, Concentrated)
    checks = admit(zcdp.ZCDP_COMPOSITION, event, {"k": k}) if concs else None
    if concs and checks is not None:
        c = concs[0]
        rho = k * c.rho
        out.append(
            Concentrated(
                Step(
                    zcdp.ZCDP_COMPOSITION,
                    event,
                    f"({show(rho)})-zCDP",
                    f"rho = k rho_0 = {show(k)} x {show(c.rho)} = {show(rho)}",
                    (c.step,),
                    checks=checks,
                ),
                rho=rho,
            )
        )
    gdps = of_currency(inner, GaussianDP)
    checks = admit(comp.GDP_COMPOSITION, event, {"k": k}) if gdps else None
    if gdps and checks is not None:
        g = gdps[0]
        mu = fn.sqrt(k) * g.mu
        out.append(
            GaussianDP(
                Step(
                    comp.GDP_COMPOSITION,
                    event,
                    f"({show(mu)})-GDP",
                    f"mu = sqrt(k) mu_0 = {show(mu)}",
                    (g.step,),
                    checks=checks,
                ),
                mu=mu,
                exact_profile=g.exact_profile,
            )
        )
    return out


@register_rule(ev.Parallel)
def _parallel(event: ev.Parallel, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    out: list[Statement] = []
    checks = admit(comp.PARALLEL_COMPOSITION, event, {"k": len(children)})
    if checks is None:
        return out
    relation, partition = event.relation, event.partition
    if relation is ev.Relation.ADD_REMOVE:
        how = "max over parts (add/remove)"
    elif partition == "positions":
        how = "max over parts (replace-one on a partition of positions: one part changes)"
    else:
        how = "sum of the two largest parts (replace-one: a record may change parts)"
    pures = _all_have(children, Pure)
    if pures is not None:
        eps, _ = comp.parallel_composition(
            [p.epsilon for p in pures], [exact_zero()] * len(pures), relation, partition
        )
        out.append(
            Pure(
                Step(
                    comp.PARALLEL_COMPOSITION,
                    event,
                    f"({show(eps)})-DP",
                    f"eps = {how} = {show(eps)}",
                    tuple(p.step for p in pures),
                    checks=checks,
                ),
                epsilon=eps,
            )
        )
    else:
        cands = _approx_inputs(children, [budget] * len(children))
        if cands is not None:
            eps, dlt = comp.parallel_composition(
                [c.epsilon for c in cands], [c.delta for c in cands], relation, partition
            )
            out.append(
                Approx(
                    Step(
                        comp.PARALLEL_COMPOSITION,
                        event,
                        f"({show(eps)}, {show(dlt)})-DP",
                        f"{how}: eps = {show(eps)}, delta = {show(dlt)}",
                        tuple(c.step for c in cands),
                        checks=checks,
                    ),
                    epsilon=eps,
                    delta=dlt,
                )
            )
    concs = _all_have(children, Concentrated)
    if concs is not None:
        rho, _ = comp.parallel_composition(
            [c.rho for c in concs], [exact_zero()] * len(concs), relation, partition
        )
        out.append(
            Concentrated(
                Step(
                    comp.PARALLEL_COMPOSITION,
                    event,
                    f"({show(rho)})-zCDP",
                    f"rho = {how} = {show(rho)}",
                    tuple(c.step for c in concs),
                    checks=checks,
                ),
                rho=rho,
            )
        )
    return out


@register_rule(ev.PostProcessed)
def _post_processed(
    event: ev.PostProcessed, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    import dataclasses

    (inner,) = children
    out = []
    for s in inner:
        step = Step(comp.POST_PROCESSING, event, s.step.conclusion, "unchanged", (s.step,))
        # post-processing can only lose information: an exact profile becomes a bound
        out.append(dataclasses.replace(s, step=step, exact_profile=False))
    return out


#: Fixed-point rounds used to fit a group's inner delta to the group's delta budget.
GROUP_BUDGET_ROUNDS = 4


def _group_candidate(
    inner: Sequence[Statement], budget: sympy.Expr | None, k: sympy.Expr
) -> Candidate | None:
    """The inner (eps0, delta0) to use for group privacy so that the group's delta,
    k e^((k-1) eps0) delta0, fits ``budget``.

    eps0 depends on the delta0 it is taken at, so delta0 = budget / (k e^((k-1) eps0)) is
    found by a few fixed-point rounds (each round lowers delta0, raising eps0); the final
    check that the group's delta meets the target happens where the candidate is used.
    """
    if budget is None or budget.free_symbols or k.free_symbols:
        return best_candidate(inner, None)
    inner_delta = budget / k
    cand = best_candidate(inner, inner_delta)
    for _ in range(GROUP_BUDGET_ROUNDS):
        if cand is None:
            break
        needed = budget / (k * fn.exp((k - 1) * cand.epsilon))
        if compare(cand.delta, needed) in (-1, 0):
            return cand
        # aim 10% below: eps0 grows only logarithmically as delta0 shrinks, so this settles
        inner_delta = needed * fn.Rational(9, 10)
        cand = best_candidate(inner, inner_delta)
    return cand or best_candidate(inner, None)


@register_rule(ev.Group)
def _group(event: ev.Group, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    (inner,) = children
    k = event.size
    out: list[Statement] = []
    checks = admit(comp.GROUP_PRIVACY, event, {"k": k})
    if checks is None:
        return out
    pures = of_currency(inner, Pure)
    if pures:
        p = pures[0]
        eps, _ = comp.group_approx(p.epsilon, 0, k)
        out.append(
            Pure(
                Step(
                    comp.GROUP_PRIVACY,
                    event,
                    f"({show(eps)})-DP",
                    f"eps = k eps_0 = {show(eps)}",
                    (p.step,),
                    checks=checks,
                ),
                epsilon=eps,
            )
        )
    else:
        cand = _group_candidate(inner, budget, k)
        if cand is not None:
            eps, dlt = comp.group_approx(cand.epsilon, cand.delta, k)
            out.append(
                Approx(
                    Step(
                        comp.GROUP_PRIVACY,
                        event,
                        f"({show(eps)}, {show(dlt)})-DP",
                        f"eps = k eps_0 = {show(eps)}, delta = k e^((k-1) eps_0) "
                        f"delta_0 = {show(dlt)}",
                        (cand.step,),
                        checks=checks,
                    ),
                    epsilon=eps,
                    delta=dlt,
                )
            )
    concs = of_currency(inner, Concentrated)
    if concs:
        rho = comp.group_zcdp(concs[0].rho, k)
        out.append(
            Concentrated(
                Step(
                    comp.GROUP_PRIVACY,
                    event,
                    f"({show(rho)})-zCDP",
                    f"rho = k^2 rho_0 = {show(rho)}",
                    (concs[0].step,),
                    checks=checks,
                ),
                rho=rho,
            )
        )
    gdps = of_currency(inner, GaussianDP)
    gdp_checks = admit(comp.GDP_GROUP, event, {"k": k}) if gdps else None
    if gdps and gdp_checks is not None:
        mu = comp.gdp_group(gdps[0].mu, k)
        out.append(
            GaussianDP(
                Step(
                    comp.GDP_GROUP,
                    event,
                    f"({show(mu)})-GDP",
                    f"mu = k mu_0 = {show(mu)}",
                    (gdps[0].step,),
                    checks=gdp_checks,
                ),
                mu=mu,
            )
        )
    return out
