"""Deciding a :class:`~dpaudit.verify.claims.Claim`: accountant upper bound, certified lower
bounds, and the inequalities the proof rests on.

A claim (plan, epsilon, delta, domain) is

* **proved** when the accountant's guarantee for the plan at the claimed delta -- an upper
  bound on the true epsilon, symbolic in the parameters -- is at most the claimed epsilon on
  the whole domain -- first by relaxation (:func:`~dpaudit.verify.relax.prove_by_relaxation`:
  Min choices, textbook bounds, delta = e^-t, monotone elimination), then by
  :func:`~dpaudit.verify.engine.verify_inequality` -- and the plan's own parameter
  constraints hold on the domain;
* **refuted** when a certified lower bound on the true epsilon (the claim's ``lower``, with
  its source) exceeds the claimed epsilon at a point of the domain;
* **unknown** otherwise -- including when only a step of the document's *proof* fails
  (status ``"unknown"`` with the failing step reported: a wrong proof does not make a
  theorem false).

Only a genuine counterexample refutes; an accountant bound above the claim does not (the
accountant's bound need not be tight).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import sympy

from dpaudit.accountant import Accountant, Guarantee, UnsupportedEventError
from dpaudit.expressions import as_expr
from dpaudit.verify.claims import Claim
from dpaudit.verify.engine import (
    MAX_BOXES,
    MAX_WORK,
    TIME_LIMIT,
    Verdict,
    check_point,
    verify_inequality,
)
from dpaudit.verify.relax import RELAX_SECONDS, prove_by_relaxation

__all__ = ["ClaimVerdict", "verify_claim"]


@dataclasses.dataclass(frozen=True)
class ClaimVerdict:
    """The outcome of verifying one claim.

    Attributes:
        claim: the claim.
        status: ``"proved"``, ``"refuted"`` or ``"unknown"``.
        detail: the proof method, the counterexample, or what is left.
        bound: the accountant's epsilon for the plan at the claimed delta (None if it has
            none).
        main: the verdict on ``bound <= epsilon`` (or on ``lower <= epsilon`` when that
            refuted the claim).
        steps: (step name, verdict) for each proof step checked.
        seconds: time taken.
    """

    claim: Claim
    status: str
    detail: str
    bound: Any = None
    main: Verdict | None = None
    steps: tuple[tuple[str, Verdict], ...] = ()
    seconds: float = 0.0

    def row(self) -> dict[str, str]:
        """One row of the ``verify --all`` table."""
        return {**self.claim.row(), "status": self.status, "detail": self.detail}


def _accountant_bound(claim: Claim) -> tuple[Guarantee | None, str]:
    try:
        # the domain's conditions let the accountant verify theorem side conditions such as
        # delta < 1 at once; those it cannot verify come back in g.assumptions (step 1)
        g = Accountant(assume=claim.domain.conditions()).guarantee(claim.plan, claim.delta)
    except UnsupportedEventError as err:
        return None, f"the accountant cannot bound the plan: {err}"
    except ValueError as err:
        return None, f"the accountant proves nothing at delta = {claim.delta}: {err}"
    return g, ""


def verify_claim(
    claim: Claim,
    *,
    max_boxes: int = MAX_BOXES,
    time_limit: float = TIME_LIMIT,
    check_steps: bool = True,
    max_work: int = MAX_WORK,
) -> ClaimVerdict:
    """Decide a claim over its domain.

    Args:
        claim: the claim.
        max_boxes: branch-and-bound budget per inequality.
        time_limit: the CPU-seconds safety net per inequality (the box and work budgets
            decide the verdict, so that it is the same on every machine and under any
            load; a verdict the safety net cut short says so).
        max_work: work budget per inequality (see :data:`dpaudit.verify.engine.MAX_WORK`).
        check_steps: also check the claim's proof steps.

    Returns:
        A :class:`ClaimVerdict`.
    """
    start = time.monotonic()
    steps: list[tuple[str, Verdict]] = []
    if check_steps:
        for s in claim.steps:
            steps.append(
                (
                    s.name,
                    verify_inequality(
                        s.relation,
                        s.domain or claim.domain,
                        max_boxes=max_boxes,
                        time_limit=time_limit,
                        max_work=max_work,
                    ),
                )
            )
    step_note = "; ".join(
        f"proof step '{n}' {v.summary()}" for n, v in steps if v.status == "refuted"
    )

    def finish(
        status: str, detail: str, bound: Any = None, main: Verdict | None = None
    ) -> ClaimVerdict:
        if step_note and status != "refuted":
            detail = f"{detail}; {step_note}" if detail else step_note
        return ClaimVerdict(
            claim, status, detail, bound, main, tuple(steps), time.monotonic() - start
        )

    g, why = _accountant_bound(claim)
    # 1. the plan's parameters must be valid on the whole domain, and so must the side
    #    conditions of theorems the accountant applied conditionally (their domain condition
    #    was not verified on the symbols): both are in the guarantee's assumptions
    if g is not None:
        for cond in g.assumptions:
            if as_expr(cond) is sympy.true:
                continue
            if as_expr(cond) is sympy.false:
                why, g = f"the plan's parameters are invalid ({cond})", None
                break
            v = verify_inequality(
                cond, claim.domain, max_boxes=max_boxes, time_limit=time_limit, max_work=max_work
            )
            if v.status != "proved":
                why = f"the plan needs {cond}, which is {v.status} on the domain" + (
                    f" ({v.point_text()})" if v.refuted else ""
                )
                g = None
                break
    # 2. upper bound: any one candidate below the claim proves it
    main: Verdict | None = None
    if g is not None:
        # proof by relaxation first: it settles nested minima and log-ratio asymptotics
        # the branch-and-bound cannot enclose, and gives up quickly otherwise
        relaxed = prove_by_relaxation(
            sympy.Le(g.epsilon, claim.epsilon),
            claim.domain,
            time_limit=min(time_limit, RELAX_SECONDS),
        )
        if relaxed is not None:
            return finish(
                "proved",
                f"accountant: {_theorem_for(g, g.epsilon)}; {relaxed.method}",
                g.epsilon,
                relaxed,
            )
        bounds = list(g.epsilon.args) if isinstance(g.epsilon, sympy.Min) else [g.epsilon]
        if len(bounds) > 1:
            bounds.append(g.epsilon)
        for b in bounds:
            v = verify_inequality(
                # unevaluated, as below: a bound sympy compares at once shows its two values
                sympy.Le(b, claim.epsilon, evaluate=False),
                claim.domain,
                max_boxes=max_boxes,
                time_limit=time_limit,
                max_work=max_work,
            )
            if v.proved:
                return finish(
                    "proved", f"accountant: {_theorem_for(g, b)}; {v.method}", g.epsilon, v
                )
            if main is None or (v.status == "unknown" and main.status != "unknown"):
                main = v
    # 3. lower bound: a certified counterexample refutes
    if claim.lower is not None:
        # unevaluated: sympy decides Le(e, e/2) for a positive e to `false` by itself, and the
        # refutation then printed "(false) > (false)" instead of the two values
        refutes = sympy.Le(claim.lower, claim.epsilon, evaluate=False)
        for w in claim.witnesses:
            v = check_point(refutes, claim.domain, w)
            if v.refuted:
                detail = (
                    f"{_where(v)} the true epsilon is at least {v.lhs_value} "
                    f"({claim.lower_source}) > claimed {v.rhs_value}"
                )
                if claim.correction:
                    detail += f"; correct statement: {claim.correction}"
                return finish("refuted", detail, None if g is None else g.epsilon, v)
        v = verify_inequality(
            refutes,
            claim.domain,
            max_boxes=max_boxes,
            time_limit=time_limit,
            symbolic=False,
            max_work=max_work,
        )
        if v.refuted:
            detail = (
                f"{_where(v)} the true epsilon is at least {v.lhs_value} "
                f"({claim.lower_source}) > claimed {v.rhs_value}"
            )
            if claim.correction:
                detail += f"; correct statement: {claim.correction}"
            return finish("refuted", detail, None if g is None else g.epsilon, v)
    if g is None:
        return finish("unknown", why)
    if main is not None and main.refuted:
        detail = (
            f"the accountant's bound is above the claim {_where(main).removesuffix(',')}: "
            f"{main.lhs_value} > {main.rhs_value}; a bound above the claim refutes only the "
            "bound (a certified lower bound, Claim(lower=...), would refute the claim)"
        )
        return finish("unknown", detail, g.epsilon, main)
    left = main.summary() if main is not None else "no bound to compare"
    return finish("unknown", f"accountant's bound not shown <= claim ({left})", g.epsilon, main)


def _where(v: Verdict) -> str:
    """``at e = 1/2`` for a counterexample point; a claim without parameters has one point."""
    point = v.point_text()
    return f"at {point}" if point else "for its only point (no parameters),"


def _theorem_for(g: Guarantee, bound: Any) -> str:
    for c in g.candidates:
        if c.epsilon == bound or sympy.expand(c.epsilon - bound) == 0:
            return f"{c.label} ({c.step.theorem.citation})"
    return g.theorem.name
