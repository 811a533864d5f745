"""One-run audits in reports: a target with a :class:`~dpaudit.report.target.OneRun` is audited
by one training run with m canaries (:func:`dpaudit.audit.audit_one_run`; Steinke, Nasr,
Jagielski 2023, "Privacy auditing with one (1) training run", NeurIPS 2023, arXiv 2305.08846)
instead of by the Monte Carlo auditor on neighbouring pairs.

:func:`one_run_audit` runs the audit and collects, besides the result, the paper's theory
beside the measured bound, for the plot (:func:`dpaudit.report.plots.one_run_plot`) and the
tables (:func:`one_run_blocks`):

* ``count_curve`` -- the bound certified by each number v of correct guesses out of the r
  guesses of the certified guess count (the function of Theorem 3.1 / Theorem 5.2 with
  Corollary 5.4 that the audit evaluated at the observed v: the measured point lies on it),
  each rounded down;
* ``theory_curve`` -- for m' around m, the bound that a mechanism *exactly* at the claimed
  (epsilon, delta) certifies at its median count (randomized response on each inclusion bit,
  the case the theorem is tight for; :func:`dpaudit.audit.one_run_theory` at the best of
  the default guess counts of m', with their Bonferroni split; at m' = m the audit's own
  guess counts, :meth:`~dpaudit.audit.one_run.OneRunAuditResult.theory`): a theory value,
  not a bound.
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.report.markup import Block, md_escape
from dpaudit.report.target import Target
from dpaudit.report.verdict import down, up

__all__ = [
    "COUNT_CURVE_POINTS",
    "THEORY_SCALES",
    "one_run_audit",
    "one_run_blocks",
    "one_run_spec",
]

#: Most counts v at which the count curve is evaluated (evenly spaced over 0..r, plus the
#: observed count and the median count of a mechanism exactly at the claim).
COUNT_CURVE_POINTS = 41
#: The theory curve is evaluated at m' = m * 2^k for these k (m' >= 2).
THEORY_SCALES = (-4, -3, -2, -1, 0, 1, 2, 3, 4)


def _theory_at(epsilon: float, m: int, delta: float, confidence: float) -> float:
    """The median bound of an exactly (epsilon, delta)-DP mechanism with m canaries and
    Steinke et al.'s default tests (prefix and guess counts, their Bonferroni split), at the
    best of them."""
    from dpaudit.audit import one_run_theory
    from dpaudit.audit.one_run_subsets import plan_candidates

    tests = plan_candidates(m, delta, "steinke", None, None)
    return max(
        one_run_theory(epsilon, size, r, delta=delta, confidence=confidence, tests=len(tests))
        for size, r in sorted({(size, kp + km) for size, kp, km in tests})
    )


def one_run_spec(target: Target) -> dict[str, Any]:
    """What a one-run target's audit is, for its report and fingerprint: its canaries and
    guess counts (None: the defaults)."""
    spec = target.one_run
    if spec is None:
        raise ValueError(f"target {target.name}: no one_run")
    return {
        "m": spec.m,
        "guesses": None if spec.guesses is None else [list(g) for g in spec.guesses],
    }


def one_run_audit(target: Target, seed: int, confidence: float) -> dict[str, Any]:
    """The one-run audit of ``target`` with the theory beside it (module docstring).

    Args:
        target: a target with ``one_run`` set.
        seed: the audit's seed (already derived from the run's seed and the target's name).
        confidence: the audit's family-wise confidence.

    Returns:
        The result's dict (``OneRunAuditResult.to_dict`` without the wall time) with
        ``candidates`` as dicts, plus ``theory``, ``expected_correct``, ``count_curve`` and
        ``theory_curve``.

    Raises:
        ValueError: if the target has no ``one_run``; ValueError or TypeError from the audit.
    """
    from scipy.stats import binom

    from dpaudit.audit import audit_one_run, one_run_epsilon_lower

    spec = target.one_run
    if spec is None:
        raise ValueError(f"target {target.name}: no one_run to audit")
    result = audit_one_run(
        spec.train(),
        spec.m,
        epsilon=target.epsilon,
        delta=target.delta,
        confidence=confidence,
        seed=seed,
        guesses=spec.guesses,
        method="steinke",  # the report's count and theory curves are this theorem's
    )
    data = result.to_dict()
    data.pop("wall_time", None)  # reports depend on inputs and seed only
    data.pop("extra", None)
    data["candidates"] = [
        {"canaries": size, "k_plus": kp, "k_minus": km, "correct": v, "epsilon_lower": e}
        for size, kp, km, v, e in result.candidates
    ]
    # the count curve is the theorem's at the certified test: its prefix of canaries
    m, r = result.subset, sum(result.guesses)
    q = 1.0 / (1.0 + math.exp(-target.epsilon))
    expected = int(binom.median(r, q))
    counts = {round(i * r / (COUNT_CURVE_POINTS - 1)) for i in range(COUNT_CURVE_POINTS)}
    counts |= {result.correct, expected}
    data["theory"] = result.theory()
    data["expected_correct"] = expected
    data["count_curve"] = [
        {
            "correct": v,
            "epsilon_lower": one_run_epsilon_lower(
                m, r, v, delta=target.delta, confidence=confidence, tests=result.tests
            ),
        }
        for v in sorted(counts)
    ]
    sizes = sorted({max(2, round(result.m * 2.0**k)) for k in THEORY_SCALES})
    data["theory_curve"] = [
        {
            "m": size,
            "theory": data["theory"]
            if size == result.m  # the audit's own tests
            else _theory_at(target.epsilon, size, target.delta, confidence),
        }
        for size in sizes
    ]
    return data


def _theorem(delta: float) -> str:
    return "Theorem 3.1" if delta == 0 else "Theorem 5.2 in the closed form of Corollary 5.4"


def one_run_blocks(report: dict[str, Any]) -> list[Block]:
    """The blocks of a one-run audit (the "Audit of the code" section of its report).

    Args:
        report: a collected report whose ``audit`` came from :func:`one_run_audit`.

    Returns:
        The blocks: an explanation, the numbers, every guess count tried, and the theory
        curve beside the measured bound.
    """
    t, a = report["target"], report["audit"]
    kp, km = a["guesses"]
    r = kp + km
    conf = f"{a['confidence']:.0%}"
    claim = f"({t['epsilon']:g}, {t['delta']:g})"
    blocks: list[Block] = [
        (
            "p",
            "Audited by **one training run** with m canaries (Steinke, Nasr, Jagielski 2023, "
            f'"Privacy auditing with one (1) training run", {_theorem(t["delta"])}): each '
            "canary is included independently with probability 1/2, the trainer runs once, "
            "the k+ highest scores are guessed included and the k- lowest excluded, and the "
            "number of correct guesses certifies a lower bound on epsilon.",
        ),
        (
            "table",
            ("", ""),
            [
                ("trainer", md_escape(a["mechanism"])),
                (
                    "canaries m",
                    f"{a['m']:,} ({a['included']:,} included, each with probability 1/2)",
                ),
                (
                    "guesses",
                    f"{kp:,} highest scores guessed included, {km:,} lowest guessed excluded "
                    f"({r:,} guesses)"
                    + (
                        f", among the first {a['subset']:,} canaries"
                        if a.get("subset", a["m"]) != a["m"]
                        else ""
                    ),
                ),
                (
                    "correct guesses",
                    f"{a['correct']:,} of {r:,} (a mechanism exactly {claim}-DP: "
                    f"{a['expected_correct']:,}, its median)",
                ),
                (
                    "certified lower bound",
                    f"epsilon >= {down(a['epsilon_lower'])} (rounded down, confidence {conf})",
                ),
                (
                    "point estimate",
                    f"{down(a['epsilon_estimate'])} (logit of the accuracy; an estimate, not a "
                    "bound)"
                    if isinstance(a["epsilon_estimate"], float)
                    else f"{md_escape(a['epsilon_estimate'])} (every guess correct; an "
                    "estimate, not a bound)",
                ),
                (
                    "theory (the paper)",
                    f"{down(a['theory'])}: the bound a mechanism exactly {claim}-DP certifies "
                    "at its median count with the same m and guess counts, at the best of "
                    "them (a theory value, not a bound)",
                ),
                ("verdict of the audit", md_escape(a["verdict"])),
                ("confidence correction", md_escape(a["correction"])),
                ("seed", md_escape(a["seed"])),
                *[("warning", md_escape(w)) for w in a.get("warnings") or []],
            ],
        ),
        (
            "p",
            f"Every guess count tried (each certified at level "
            f"{1 - a['confidence']:.2g} / {a['tests']}):",
        ),
        (
            "table",
            ("k+ (guessed included)", "k- (guessed excluded)", "correct", "certified epsilon >="),
            [
                (
                    f"{c['k_plus']:,}",
                    f"{c['k_minus']:,}",
                    f"{c['correct']:,} of {c['k_plus'] + c['k_minus']:,}",
                    down(c["epsilon_lower"]) + (" (certified)" if _chosen(c, a) else ""),
                )
                for c in a["candidates"]
            ],
        ),
        (
            "p",
            f"The theory curve beside the measured bound: the bound a mechanism exactly "
            f"{claim}-DP certifies at its median count with m canaries and the default guess "
            "counts (randomized response on each inclusion bit, the case the theorem is tight "
            "for). A Gaussian mechanism with the same (epsilon, delta) spreads its privacy "
            "loss over many small likelihood ratios, so one run certifies less of it: a "
            "measured bound below the curve is expected of a correct trainer; a bound above "
            "the claimed epsilon is a violation.",
        ),
        (
            "table",
            ("m (canaries)", "theory: median bound at the claim", "measured (certified)"),
            [
                (
                    f"{p['m']:,}",
                    down(p["theory"]),
                    down(a["epsilon_lower"]) if p["m"] == a["m"] else "",
                )
                for p in a["theory_curve"]
            ],
        ),
    ]
    if a["epsilon_lower"] > t["epsilon"]:
        blocks.append(
            (
                "p",
                f"The certified bound {down(a['epsilon_lower'])} exceeds the claimed epsilon "
                f"{t['epsilon']:g} (accountant upper bound of the declared plan: "
                f"{up((report.get('guarantee') or {}).get('epsilon_upper'))}): the trainer "
                "does not have the claimed guarantee, at confidence " + conf + ".",
            )
        )
    return blocks


def _chosen(c: dict[str, Any], a: dict[str, Any]) -> bool:
    same_prefix = c.get("canaries", a["m"]) == a.get("subset", a["m"])
    return (
        same_prefix
        and [c["k_plus"], c["k_minus"]] == list(a["guesses"])
        and (c["correct"] == a["correct"])
    )
