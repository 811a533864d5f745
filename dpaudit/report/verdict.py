"""One verdict per report: what the accountant, the verifier and the auditor say together.

Outcomes (``kind``):

* ``violation`` -- the audit certified a lower bound above the claimed epsilon: the code does
  not have the claimed guarantee (at the stated confidence).
* ``refuted`` -- the verifier refuted the claim with a counterexample.
* ``unsupported`` -- the accountant's upper bound for the declared plan exceeds the claim, or
  the accountant cannot bound the plan (not a proof that the claim is false).
* ``consistent`` -- audit lower bound <= claim (and accountant upper bound <= claim): nothing
  found. A lower bound cannot prove a claim; the accountant's bound (on the *declared* plan)
  and the verification can.
* ``not audited`` -- no auditable form (the target's stated reason, if any, is in the line);
  the row reports the accountant and the verifier only.

A report's ``finding`` is True when the outcome differs from the target's expectation: a
private target with a violation or a refuted claim, a broken target the audit did not catch,
or a claim known to be false as stated (``expect="refuted"``) that the verifier did not
refute. ``dpaudit report`` exits with status 1 when any report has a finding.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["down", "verdict"]


def down(x: Any, digits: int = 4) -> str:
    """``x`` printed with ``digits`` decimals rounded *down* (for lower bounds)."""
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    q = 10**digits
    return f"{math.floor(x * q) / q:.{digits}f}"


def up(x: Any, digits: int = 4) -> str:
    """``x`` printed with ``digits`` decimals rounded *up* (for upper bounds)."""
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    if math.isinf(x):
        return "inf"
    q = 10**digits
    return f"{math.ceil(x * q) / q:.{digits}f}"


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """The verdict of a collected report (see the module docstring).

    Args:
        report: a dict from :func:`dpaudit.report.contents.collect`.

    Returns:
        ``{"kind": ..., "finding": bool, "line": one sentence}``.
    """
    t = report["target"]
    eps, expect = t["epsilon"], t["expect"]
    g = report.get("guarantee") or {}
    v = report.get("verification") or {}
    a = report.get("audit") or {}
    upper = g.get("epsilon_upper")
    parts: list[str] = []
    if upper is not None:
        parts.append(f"accountant upper {up(upper)}")
    if v:
        parts.append(f"claim {v.get('status', 'n/a')}")
    kind = "consistent"
    if a and "error" not in a:
        lower = a["epsilon_lower"]
        conf = a["confidence"]
        what = "audit"
        if a.get("method") == "one-run":  # dpaudit.report.one_run: m canaries, one run
            what = f"one-run audit (m = {a['m']:,} canaries)"
        parts.insert(0, f"{what} lower {down(lower)} ({conf:.0%} conf.)")
        if a["violation"]:
            kind = "violation"
    elif a and "error" in a:
        kind = "not audited"
        parts.insert(0, "audit failed")
    else:
        kind = "not audited"
    if kind != "violation":
        if v.get("status") == "refuted":
            kind = "refuted"
        elif "error" in g or (upper is not None and upper > eps * (1 + 1e-12) + 1e-15):
            kind = "unsupported" if kind == "consistent" else kind
    claim = f"claim ({eps:g}, {t['delta']:g})-DP"
    if kind == "violation":
        head = (
            f"VIOLATION: the code has epsilon >= {down(a['epsilon_lower'])} "
            f"(certified, {a['confidence']:.0%}) > claimed {eps:g}"
        )
    elif kind == "refuted":
        head = "CLAIM REFUTED by the verifier"
    elif kind == "unsupported":
        head = "claim not established by the accountant"
    elif kind == "not audited":
        reason = t.get("not_audited")
        head = (
            "audit could not run"
            if a
            else f"not audited: {reason}"
            if reason
            else "not audited (no auditable form)"
        )
    else:
        head = "consistent: nothing found"
    if expect == "private":
        finding = kind in ("violation", "refuted")
    elif expect == "broken":
        finding = kind != "violation"
        head += "; expected: broken" + (" (caught)" if kind == "violation" else " (NOT caught)")
    else:
        finding = kind != "refuted"
        head += "; expected: the statement is known not to hold" + (
            "" if kind == "refuted" else " (NOT refuted)"
        )
    line = f"{head} -- {claim}; " + ", ".join(parts)
    return {"kind": kind, "finding": bool(finding), "line": line}
