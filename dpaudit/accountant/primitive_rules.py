"""Rules for the primitive events (the leaves of an event tree): Laplace, the Gaussian and
their discrete versions, the exponential mechanism, randomized response, report-noisy-max,
AboveThreshold, and the stated PureDP / ApproxDP / ZCDP guarantees.

Importing this module registers them in :data:`~dpaudit.accountant.rules.RULES` (the
package :mod:`dpaudit.accountant` imports it before every other rule module).
"""

from __future__ import annotations

from typing import Any

from dpaudit import events as ev
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, register_rule
from dpaudit.accountant.statements import (
    Approx,
    Concentrated,
    GaussianDP,
    Pure,
    Statement,
    Step,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.theorems import primitives as prim


def _pure_leaf(
    event: Event, theorem: prim.Theorem, epsilon: sympy.Expr, formula: str, params: dict[str, Any]
) -> list[Statement]:
    checks = admit(theorem, event, params)
    if checks is None:
        return []
    step = Step(theorem, event, f"({show(epsilon)})-DP", formula, checks=checks)
    return [Pure(step, epsilon=epsilon)]


@register_rule(ev.Laplace)
def _laplace(event: ev.Laplace, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    eps = prim.laplace_epsilon(event.scale, event.sensitivity)
    return _pure_leaf(
        event,
        prim.LAPLACE,
        eps,
        f"eps = Delta/b = {show(event.sensitivity)}/{show(event.scale)}",
        {"b": event.scale, "Delta": event.sensitivity},
    )


@register_rule(ev.DiscreteLaplace)
def _discrete_laplace(
    event: ev.DiscreteLaplace, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    eps = prim.laplace_epsilon(event.scale, event.sensitivity)
    return _pure_leaf(
        event,
        prim.DISCRETE_LAPLACE,
        eps,
        f"eps = Delta/t = {show(event.sensitivity)}/{show(event.scale)}",
        {"b": event.scale, "Delta": event.sensitivity},
    )


@register_rule(ev.Gaussian)
def _gaussian(event: ev.Gaussian, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    params = {"sigma": event.sigma, "Delta": event.sensitivity}
    out: list[Statement] = []
    checks = admit(prim.GAUSSIAN_GDP, event, params)
    if checks is not None:
        mu = prim.gaussian_mu(event.sigma, event.sensitivity)
        out.append(
            GaussianDP(
                Step(
                    prim.GAUSSIAN_GDP,
                    event,
                    f"({show(mu)})-GDP",
                    f"mu = Delta/sigma = {show(mu)}",
                    checks=checks,
                ),
                mu=mu,
                exact_profile=True,
            )
        )
    checks = admit(prim.GAUSSIAN_ZCDP, event, params)
    if checks is not None:
        rho = prim.gaussian_rho(event.sigma, event.sensitivity)
        out.append(
            Concentrated(
                Step(
                    prim.GAUSSIAN_ZCDP,
                    event,
                    f"({show(rho)})-zCDP",
                    f"rho = Delta^2/(2 sigma^2) = {show(rho)}",
                    checks=checks,
                ),
                rho=rho,
            )
        )
    return out


@register_rule(ev.DiscreteGaussian)
def _discrete_gaussian(
    event: ev.DiscreteGaussian, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    checks = admit(
        prim.DISCRETE_GAUSSIAN_ZCDP, event, {"sigma": event.sigma, "Delta": event.sensitivity}
    )
    if checks is None:
        return []
    rho = prim.gaussian_rho(event.sigma, event.sensitivity)
    return [
        Concentrated(
            Step(
                prim.DISCRETE_GAUSSIAN_ZCDP,
                event,
                f"({show(rho)})-zCDP",
                f"rho = Delta^2/(2 sigma^2) = {show(rho)}",
                checks=checks,
            ),
            rho=rho,
        )
    ]


@register_rule(ev.Exponential)
def _exponential(
    event: ev.Exponential, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    return _pure_leaf(
        event,
        prim.EXPONENTIAL,
        event.epsilon,
        f"eps = {show(event.epsilon)}",
        {"epsilon": event.epsilon, "Delta": event.sensitivity},
    )


@register_rule(ev.RandomizedResponse)
def _randomized_response(
    event: ev.RandomizedResponse, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    return _pure_leaf(
        event,
        prim.RANDOMIZED_RESPONSE,
        event.epsilon,
        f"eps = {show(event.epsilon)}",
        {"epsilon": event.epsilon, "k": event.categories},
    )


@register_rule(ev.ReportNoisyMax)
def _report_noisy_max(
    event: ev.ReportNoisyMax, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    return _pure_leaf(
        event,
        prim.REPORT_NOISY_MAX,
        event.epsilon,
        f"eps = {show(event.epsilon)} ({event.noise} noise)",
        {"epsilon": event.epsilon, "Delta": event.sensitivity},
    )


@register_rule(ev.AboveThreshold)
def _above_threshold(
    event: ev.AboveThreshold, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    eps1 = event.threshold_share * event.epsilon
    return _pure_leaf(
        event,
        prim.ABOVE_THRESHOLD,
        event.epsilon,
        f"eps = eps1 + eps2 = {show(eps1)} + {show(event.epsilon - eps1)}",
        {"epsilon": event.epsilon, "Delta": event.sensitivity, "c": event.cutoff},
    )


@register_rule(ev.PureDP)
def _pure_dp(event: ev.PureDP, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    return _pure_leaf(
        event,
        prim.DECLARED,
        event.epsilon,
        f"eps = {show(event.epsilon)}",
        {"epsilon": event.epsilon, "delta": 0},
    )


@register_rule(ev.ApproxDP)
def _approx_dp(
    event: ev.ApproxDP, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    checks = admit(prim.DECLARED, event, {"epsilon": event.epsilon, "delta": event.delta})
    if checks is None:
        return []
    step = Step(
        prim.DECLARED,
        event,
        f"({show(event.epsilon)}, {show(event.delta)})-DP",
        f"eps = {show(event.epsilon)}, delta = {show(event.delta)}",
        checks=checks,
    )
    if event.delta == 0:
        return [Pure(step, epsilon=event.epsilon)]
    return [Approx(step, epsilon=event.epsilon, delta=event.delta)]


@register_rule(ev.ZCDP)
def _zcdp(event: ev.ZCDP, children: Children, budget: sympy.Expr | None) -> list[Statement]:
    checks = admit(prim.DECLARED, event, {"rho": event.rho})
    if checks is None:
        return []
    step = Step(
        prim.DECLARED, event, f"({show(event.rho)})-zCDP", f"rho = {show(event.rho)}", checks=checks
    )
    return [Concentrated(step, rho=event.rho)]
