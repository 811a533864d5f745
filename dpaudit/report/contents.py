"""Collecting what a report says about one target.

Two parts, kept apart on purpose:

* :func:`describe` -- the *cheap* part, recomputed in seconds: the claim, the declared plan
  as a tree, the accountant's guarantee with its derivation and every candidate it compared,
  and a fingerprint of every input of the expensive part.  The fast CI check recomputes it
  and compares it with the stored report.
* :func:`collect` -- the whole report: the cheap part plus the verification of the claim, the
  audit of the real code (with its lower bound as samples grow; or, for a target with
  ``one_run``, the one-run audit with the paper's theory curve,
  :mod:`dpaudit.report.one_run`) and the privacy curves.

Every number carries what it is: accountant epsilons are upper bounds rounded up, audit
epsilons certified lower bounds rounded down (with their confidence), estimates are called
estimates.  Nothing depends on the clock: wall times are left out, so a report is a function
of its inputs and its seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sympy

from dpaudit.accountant import Accountant, Guarantee, substitute
from dpaudit.events import Event
from dpaudit.numeric import EvaluationError, exact
from dpaudit.report.fingerprint import FORMAT_VERSION, fingerprint
from dpaudit.report.numbers import for_people
from dpaudit.report.one_run import one_run_audit, one_run_spec
from dpaudit.report.target import Records, Target

__all__ = [
    "AUDIT_CONFIDENCE",
    "CURVE_DELTAS",
    "CURVE_POINT_CPU_SECONDS",
    "FORMAT_VERSION",
    "GROWTH_FRACTIONS",
    "VERIFY_MAX_BOXES",
    "CurveTooSlowError",
    "collect",
    "describe",
    "plan_tree",
    "target_claim",
    "target_curve",
    "target_plan",
    "target_seed",
]

#: Confidence of every audit in a report.
AUDIT_CONFIDENCE = 0.95
#: Fractions of the target's samples at which the audit is repeated for the growth plot.
GROWTH_FRACTIONS = (1 / 8, 1 / 4, 1 / 2)
#: The deltas at which the accountant's privacy curve is evaluated (besides delta = 0).
CURVE_DELTAS = tuple(float(d) for d in np.logspace(-12, -1, 12))
#: Branch-and-bound budget of the claim verification (boxes, and a generous time limit so
#: that the box budget, not the machine's speed, decides the outcome).
VERIFY_MAX_BOXES = 1200
#: CPU-time safety net of one accountant call on the privacy curve (see :func:`_curve`):
#: not a budget that shapes the report (every point is computed to the end), an alarm that
#: stops a runaway computation.  Points take well under a second.
CURVE_POINT_CPU_SECONDS = 120.0
VERIFY_TIME_LIMIT = 60.0


def target_seed(seed: int, target: Target) -> int:
    """The audit seed of ``target``: the run's seed mixed with a stable hash of its name."""
    return (int(seed) * 1_000_003 + zlib.crc32(target.name.encode())) % 2**63


def _claim_object(target: Target) -> Any:
    from dpaudit.verify import CLAIMS, Claim

    if isinstance(target.claim, Claim):
        return target.claim
    if isinstance(target.claim, str):
        if target.claim not in CLAIMS:
            from dpaudit.verify import load_claim_modules

            load_claim_modules()
        if target.claim not in CLAIMS:
            raise KeyError(f"target {target.name}: no registered claim {target.claim!r}")
        return CLAIMS[target.claim]
    return None


def target_plan(target: Target) -> Event | None:
    """The declared plan of ``target`` at its concrete parameters (None if it has none).

    Raises:
        ValueError: if the plan is not an event.
    """
    plan: Any = target.plan
    if callable(plan) and not isinstance(plan, Event):
        plan = plan()
    if plan is None:
        claim = _claim_object(target)
        if claim is None:
            return None
        plan = substitute(claim.plan, target.parameters) if target.parameters else claim.plan
    if not isinstance(plan, Event):
        raise ValueError(f"target {target.name}: plan must be an event, got {plan!r}")
    return plan


def target_claim(target: Target) -> Any:
    """The claim the report verifies: the target's registered claim, or, for a target with
    only a plan, "the plan is (epsilon, delta)-DP" at its concrete parameters."""
    from dpaudit.verify import Claim, Domain

    claim = _claim_object(target)
    if claim is not None:
        return claim
    plan = target_plan(target)
    if plan is None:
        return None
    key = "report/" + target.name.replace("/", ".")
    return Claim(
        key=key,
        document=target.group,
        theorem=target.title,
        statement=f"{target.title} is ({target.epsilon:g}, {target.delta:g})-DP",
        plan=plan,
        epsilon=sympy.nsimplify(target.epsilon),
        delta=sympy.nsimplify(target.delta),
        domain=Domain({}),
    )


def plan_tree(event: Event) -> str:
    """The event tree, one node per line: combinators with their own parameters, leaves as
    event expressions."""
    lines: list[str] = []

    def walk(e: Event, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("`- " if last else "|- ")
        children = e.children()
        if children:
            own = []
            for f in dataclasses.fields(e):
                v = getattr(e, f.name)
                if isinstance(v, Event) or (isinstance(v, tuple) and v and isinstance(v[0], Event)):
                    continue
                own.append(f"{f.name}={v}")
            label = f"{e.kind}({', '.join(own)})"
        else:
            label = e.expression()
        lines.append(f"{prefix}{branch}{label}")
        inner = prefix + ("" if top else ("   " if last else "|  "))
        for i, c in enumerate(children):
            walk(c, inner, i == len(children) - 1, False)

    walk(event, "", True, True)
    return "\n".join(lines)


def _up(x: Any) -> float | str | None:
    if x is None:
        return None
    try:
        from dpaudit.numeric import float_up

        return float_up(x)
    except (EvaluationError, TypeError, ValueError):
        return str(x)


def _expected_exclusion(r: Any) -> bool:
    """Whether a rejection only says that a conversion needing a positive delta was asked
    for delta = 0 (every failing condition is ``0 < delta...`` on a delta of the card), which
    every pure-DP query produces and a reader learns nothing from."""
    for c in r.checks:
        cond = c.relation
        if c.status != "refuted" or not isinstance(cond, sympy.core.relational.Relational):
            return False
        small, big = (
            (cond.lhs, cond.rhs)
            if cond.rel_op == "<"
            else (cond.rhs, cond.lhs)
            if cond.rel_op == ">"
            else (None, None)
        )
        if small != 0 or not (isinstance(big, sympy.Symbol) and big.name.startswith("delta")):
            return False
    return bool(r.checks)


def _rejections(g: Guarantee) -> tuple[Guarantee, str | None]:
    """``g`` keeping only the rejections a reader learns from (a domain condition failing
    for these parameters), and a one-line summary of the expected ones (or None).  All of
    them remain in ``dpaudit explain``."""
    expected = [r for r in g.rejected if _expected_exclusion(r)]
    if not expected:
        return g, None
    kept = tuple(r for r in g.rejected if r not in expected)
    names = ", ".join(dict.fromkeys(r.theorem.name for r in expected))
    summary = (
        f"{len(expected)} result(s) not applicable only because they need delta > 0 "
        f"({names}); `dpaudit explain` lists them"
    )
    return dataclasses.replace(g, rejected=kept), summary


def _guarantee_dict(g: Guarantee) -> dict[str, Any]:
    chosen = g.theorem.name
    g, expected = _rejections(g)
    return {
        "epsilon_upper": g.epsilon_upper,
        "epsilon_exact": str(g.epsilon),
        "delta": g.delta_upper,
        "epsilon_lower": g.epsilon_lower_float,
        "theorem": chosen,
        "citation": g.theorem.citation,
        "candidates": [
            {
                "method": c.label,
                "epsilon_upper": _up(c.epsilon),
                "delta": _up(c.delta),
                "chosen": bool(g.epsilon_upper is not None and _up(c.epsilon) == g.epsilon_upper),
            }
            for c in g.candidates
        ],
        "derivation": g.text(),
        **({"expected_exclusions": expected} if expected else {}),
    }


def describe(target: Target, seed: int = 0) -> dict[str, Any]:
    """The cheap, recomputable part of a report (see the module docstring).

    Args:
        target: the target.
        seed: the run's seed.

    Returns:
        A JSON-ready dict with ``target``, ``claim``, ``plan``, ``guarantee`` and
        ``fingerprint``.
    """
    plan = target_plan(target)
    claim = target_claim(target)
    out: dict[str, Any] = {
        "target": {
            "name": target.name,
            "title": target.title,
            "group": target.group,
            "summary": target.summary,
            "epsilon": target.epsilon,
            "delta": target.delta,
            "expect": target.expect,
            "source": target.source,
            "true_epsilon": _finite(target.true_epsilon),
            "parameters": {k: str(v) for k, v in target.parameters.items()},
            "seed": target_seed(seed, target),
            "samples": target.samples,
            **({"not_audited": target.not_audited} if target.not_audited else {}),
            **({"one_run": one_run_spec(target)} if target.one_run is not None else {}),
            **({"records": target.records.spec()} if target.records is not None else {}),
            **({"audit_options": _options(target.audit_options)} if target.audit_options else {}),
            **({"regenerate": target.regenerate} if target.regenerate else {}),
        },
        "claim": None
        if claim is None
        else {
            "key": claim.key,
            "document": claim.document,
            "theorem": claim.theorem,
            "statement": claim.statement,
            "epsilon": str(claim.epsilon),
            "delta": str(claim.delta),
            "domain": claim.domain.text(),
            "note": claim.note,
            "correction": claim.correction,
            "registered": isinstance(target.claim, str),
        },
        "plan": None
        if plan is None
        else {"expression": plan.expression(), "tree": plan_tree(plan)},
    }
    guarantee: dict[str, Any] | None = None
    if plan is not None:
        try:
            delta = sympy.nsimplify(target.delta) if target.delta else None
            g = Accountant().guarantee(plan, delta)
            guarantee = _guarantee_dict(g)
        except ValueError as err:  # UnsupportedEventError included
            guarantee = {"error": str(err).splitlines()[0]}
        except (TypeError, ArithmeticError, EvaluationError) as err:  # an accountant bug
            guarantee = {
                "error": f"accountant failed: {type(err).__name__}: {str(err).splitlines()[0]}"
            }
    out["guarantee"] = guarantee
    out["fingerprint"] = fingerprint(target, seed, plan, claim)
    return for_people(out)


def _finite(x: float | None) -> float | str | None:
    if x is None:
        return None
    return x if math.isfinite(x) else "inf"


def _verify(claim: Any) -> dict[str, Any]:
    from dpaudit.verify.prove import verify_claim

    try:
        v = verify_claim(claim, time_limit=VERIFY_TIME_LIMIT, max_boxes=VERIFY_MAX_BOXES)
    except (ValueError, ArithmeticError, TypeError) as err:
        return {"status": "error", "detail": f"{type(err).__name__}: {err}"}
    return {
        "status": v.status,
        "detail": v.detail,
        "steps": [f"{name}: {sv.summary()}" for name, sv in v.steps],
    }


class CurveTooSlowError(BaseException):
    """The accountant exceeded :data:`CURVE_POINT_CPU_SECONDS` on one curve point.

    Raised, never turned into a report line: a report whose content depended on the
    machine's speed would not be reproducible, so none is written.  A BaseException, so that
    no ``except Exception`` inside sympy swallows it."""


@contextlib.contextmanager
def _cpu_safety_net(seconds: float, what: str) -> Iterator[None]:
    """Raise :class:`CurveTooSlowError` if the block uses more than ``seconds`` of CPU time
    (main thread on POSIX only; elsewhere no limit).  An enclosing CPU timer is restored."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise CurveTooSlowError(
            f"{what}: the accountant used more than {seconds:g} s of CPU time (its own "
            "refinement budgets normally end in well under a second); a performance bug, "
            "reported instead of writing a report that would depend on the machine"
        )

    previous = signal.signal(signal.SIGPROF, expire)
    # re-fires every second after the first expiry, in case one raise is lost in a callback
    outer = signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer[0] > 0:
            signal.setitimer(signal.ITIMER_PROF, *outer)


def _no_bound_reason(d: float) -> str:
    return "no pure-DP guarantee (delta = 0)" if d == 0 else "no guarantee at this delta"


def _curve(plan: Event) -> dict[str, Any]:
    """The accountant's privacy curve: for each delta of :data:`CURVE_DELTAS` (and 0), the
    epsilon upper bound (and the certified lower bound where the chosen method is exact).

    Deterministic: every point is computed to the end (the accountant's own work is bounded
    by fixed budgets, e.g. the PLD grid refinement), so the curve does not depend on the
    machine.  A delta the accountant proves no guarantee at is listed under ``unbounded``, an
    accountant error under ``failures``; neither is plotted, both are shown.  A point that
    runs past :data:`CURVE_POINT_CPU_SECONDS` of CPU raises :class:`CurveTooSlowError`.
    """
    points: list[dict[str, Any]] = []
    unbounded: list[dict[str, Any]] = []
    failures: list[str] = []
    acc = Accountant()
    for d in (0.0, *CURVE_DELTAS):
        try:
            with _cpu_safety_net(CURVE_POINT_CPU_SECONDS, f"curve point delta={d:g}"):
                g = acc.guarantee(plan, sympy.Rational(0) if d == 0 else exact(d, "delta"))
                upper, lower = g.epsilon_upper, g.epsilon_lower_float
        except ValueError:
            unbounded.append({"delta": d, "reason": _no_bound_reason(d)})
            continue
        except (TypeError, ArithmeticError, EvaluationError) as err:  # an accountant bug
            failures.append(f"delta={d:g}: {type(err).__name__}: {str(err).splitlines()[0]}")
            continue
        if upper is None:
            unbounded.append({"delta": d, "reason": "symbolic guarantee"})
            continue
        points.append({"delta": d, "epsilon_upper": upper, "epsilon_lower": lower})
    return {"points": points, "unbounded": unbounded, "failures": failures}


def target_curve(target: Target, guarantee: dict[str, Any] | None) -> dict[str, Any] | None:
    """The privacy curve a report of ``target`` shows (:func:`_curve` of its plan), or None
    when it has no numeric plan or its guarantee (``describe(target)["guarantee"]``) is an
    error."""
    plan = target_plan(target)
    if plan is None or plan.free_symbols or "error" in (guarantee or {}):
        return None
    return _curve(plan)


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """A target's audit options, JSON-ready: numbers, strings and booleans as they are, other
    values as their ``repr``."""
    plain = (bool, int, float, str, type(None))
    return {k: v if isinstance(v, plain) else repr(v) for k, v in sorted(options.items())}


def _audit_dict(r: Any) -> dict[str, Any]:
    data = r.to_dict()
    data.pop("wall_time", None)  # reports depend on inputs and seed only
    data.pop("extra", None)
    return data


def _records_audit(target: Target, records: Records, mechanism: Any, seed: int) -> dict[str, Any]:
    """The audit of a target with ``records``: :func:`dpaudit.audit.audit_records` searches
    the pair; the growth points re-audit the pair found with :func:`dpaudit.audit.audit` at
    fewer samples (the search is not repeated)."""
    from dpaudit.audit import audit, audit_records

    s = target_seed(seed, target)
    main = audit_records(
        mechanism,
        list(records.domain),
        epsilon=target.epsilon,
        delta=target.delta,
        relation=records.relation,
        sizes=records.sizes,
        samples=target.samples,
        confidence=AUDIT_CONFIDENCE,
        seed=s,
        **target.audit_options,
    )
    # an exception is an outcome in the growth audits too when it is one in the search
    on_error = "output" if target.audit_options.get("on_error") == "output" else "raise"
    growth = []
    for f in GROWTH_FRACTIONS:
        n = int(target.samples * f)
        if n >= 100:
            r = audit(
                mechanism,
                *main.pair,
                epsilon=target.epsilon,
                delta=target.delta,
                samples=n,
                confidence=AUDIT_CONFIDENCE,
                seed=s,
                progress=False,
                on_error=on_error,
            )
            growth.append({"samples": n, "epsilon_lower": r.epsilon_lower})
    growth.append({"samples": target.samples, "epsilon_lower": main.epsilon_lower})
    out = _audit_dict(main)
    out["datasets"] = out.pop("pair")
    out["pair"] = main.pair_description
    out["growth"] = growth
    out["certified_curve"] = _certified_curve(main.p_numerator_lower, main.p_denominator_upper)
    return out


def _audit(target: Target, seed: int) -> dict[str, Any]:
    from dpaudit.audit import audit

    if target.mechanism is None:
        raise ValueError(f"target {target.name}: no mechanism to audit")
    mechanism = target.mechanism()
    if target.records is not None:
        return _records_audit(target, target.records, mechanism, seed)
    pairs = (
        list(target.pairs()) if target.pairs is not None else list(getattr(mechanism, "pairs", ()))
    )
    if not pairs:
        raise ValueError(f"target {target.name}: no neighbouring pair to audit on")
    s = target_seed(seed, target)

    def run(samples: int) -> Any:
        return audit(
            mechanism,
            pairs=pairs,
            epsilon=target.epsilon,
            delta=target.delta,
            samples=samples,
            confidence=AUDIT_CONFIDENCE,
            seed=s,
            progress=False,
            **target.audit_options,
        )

    main = run(target.samples)
    growth = []
    for f in GROWTH_FRACTIONS:
        n = int(target.samples * f)
        if n >= 100:
            r = run(n)
            growth.append({"samples": n, "epsilon_lower": r.epsilon_lower})
    growth.append({"samples": target.samples, "epsilon_lower": main.epsilon_lower})
    out = _audit_dict(main)
    out["growth"] = growth
    out["certified_curve"] = _certified_curve(main.p_numerator_lower, main.p_denominator_upper)
    return out


def _certified_curve(p_lower: float, q_upper: float, points: int = 8) -> list[dict[str, float]]:
    """Points (eps, delta) under the true privacy curve certified by the audit's event:
    delta(eps) >= P_lower[M(d) in E] - e^eps P_upper[M(d') in E], for every eps at once
    (same confidence as the audit).  Deltas are rounded down."""
    if not (p_lower > 0 and q_upper > 0 and p_lower > q_upper):
        return []
    top = math.log(p_lower / q_upper)
    out = []
    for eps in np.linspace(0.0, top, points + 1)[:-1]:
        d = p_lower - math.exp(eps) * q_upper
        if d > 0:
            out.append({"epsilon": round(float(eps), 6), "delta_lower": math.nextafter(d, 0.0)})
    return out


def collect(
    target: Target, seed: int = 0, *, audit: bool = True, step: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Everything a report shows about ``target``.

    Args:
        target: the target.
        seed: the run's seed (the audit's seed is derived from it and the target's name).
        audit: run the audit (False leaves it out, e.g. for quick previews).
        step: called with a short label before each stage (progress display).

    Returns:
        :func:`describe`'s dict plus ``verification``, ``curve``, ``audit`` (each None or a
        dict with an ``error`` when the stage could not run) and ``verdict``.
    """
    from dpaudit.report.verdict import verdict

    tell = step or (lambda _label: None)
    tell("describe")
    out = describe(target, seed)
    claim = target_claim(target)
    tell("verify")
    out["verification"] = None if claim is None else _verify(claim)
    tell("curve")
    out["curve"] = target_curve(target, out["guarantee"])
    out["audit"] = None
    if audit and (target.mechanism is not None or target.one_run is not None):
        tell("audit")
        try:
            out["audit"] = (
                _audit(target, seed)
                if target.one_run is None
                else one_run_audit(target, target_seed(seed, target), AUDIT_CONFIDENCE)
            )
        except (ValueError, TypeError, RuntimeError) as err:
            out["audit"] = {"error": f"{type(err).__name__}: {str(err).splitlines()[0]}"}
    out = for_people(out)  # machine-independent digits, bounds rounded the safe way
    out["verdict"] = verdict(out)
    return out
