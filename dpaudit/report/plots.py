"""The two plots of a report (matplotlib, PNG without timestamps).

* the privacy curve delta(eps): the accountant's upper bound (and its certified lower bound
  where the chosen method is exact), with the points the audit certifies under the true
  curve and the claimed (eps, delta);
* the audit's certified lower bound as the number of samples grows, against the claim and
  the accountant's upper bound;
* for a one-run audit (:mod:`dpaudit.report.one_run`), the paper's theory beside the measured
  bound: the bound certified by each number of correct guesses, and the bound a mechanism
  exactly at the claim certifies as the number of canaries grows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

__all__ = ["DELTA_FLOOR", "growth_plot", "one_run_plot", "privacy_curve_plot"]

#: delta = 0 is drawn at this height on the log axis (labelled as such).
DELTA_FLOOR = 1e-14
_SAVE = {"format": "png", "dpi": 96, "metadata": {"Software": None}}


def _figure(width: float, height: float) -> Any:
    """A matplotlib Figure outside pyplot: importing or plotting switches no backend (a
    notebook keeps its own) and no figure is left registered; matplotlib is imported here,
    not with the reports."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _finish(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, **_SAVE)


def privacy_curve_plot(report: dict[str, Any], path: Path) -> bool:
    """Draw the privacy curve of ``report`` to ``path``.

    Args:
        report: a collected report.
        path: the PNG file to write.

    Returns:
        False (nothing written) when there is no numeric curve and no audit point.
    """
    curve = (report.get("curve") or {}).get("points") or []
    audit = report.get("audit") or {}
    certified = audit.get("certified_curve") or []
    if not curve and not certified:
        return False
    t = report["target"]
    fig = _figure(6.4, 4.2)
    ax = fig.subplots()
    if curve:
        ups = sorted((p["epsilon_upper"], max(p["delta"], DELTA_FLOOR)) for p in curve)
        ax.step(
            [e for e, _ in ups],
            [d for _, d in ups],
            where="post",
            color="C0",
            label="accountant: upper bound on delta(eps)",
        )
        lows = sorted(
            (p["epsilon_lower"], max(p["delta"], DELTA_FLOOR))
            for p in curve
            if p.get("epsilon_lower") is not None
        )
        if lows:
            ax.plot(
                [e for e, _ in lows],
                [d for _, d in lows],
                "--",
                color="C2",
                label="accountant: certified lower bound",
            )
    if certified:
        ax.plot(
            [p["epsilon"] for p in certified],
            [max(p["delta_lower"], DELTA_FLOOR) for p in certified],
            "o",
            color="C3",
            label=f"audit: certified lower points ({audit.get('confidence', 0):.0%})",
        )
    if "epsilon_lower" in audit:
        ax.axvline(
            audit["epsilon_lower"],
            color="C3",
            lw=0.8,
            ls=":",
            label=f"audit: eps >= {audit['epsilon_lower']:.3f} at delta={t['delta']:g}",
        )
    ax.plot(
        [t["epsilon"]],
        [max(t["delta"], DELTA_FLOOR)],
        "*",
        ms=12,
        color="k",
        label="claimed (eps, delta)",
    )
    ax.set_yscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel(f"delta  (delta = 0 drawn at {DELTA_FLOOR:g})")
    ax.set_title(f"Privacy curve: {t['name']}", fontsize=10)
    ax.set_ylim(DELTA_FLOOR / 3, 2.0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    _finish(fig, path)
    return True


def growth_plot(report: dict[str, Any], path: Path) -> bool:
    """Draw the audit's certified lower bound against the number of samples.

    Returns:
        False (nothing written) when the report has no audit.
    """
    audit = report.get("audit") or {}
    growth = audit.get("growth") or []
    if not growth:
        return False
    t = report["target"]
    fig = _figure(6.4, 3.6)
    ax = fig.subplots()
    xs = [p["samples"] for p in growth]
    ys = [p["epsilon_lower"] for p in growth]
    ax.plot(
        xs,
        ys,
        "o-",
        color="C3",
        label=f"audit: certified lower bound ({audit.get('confidence', 0):.0%})",
    )
    ax.axhline(t["epsilon"], color="k", ls="--", label=f"claimed epsilon {t['epsilon']:g}")
    upper = (report.get("guarantee") or {}).get("epsilon_upper")
    if upper is not None and math.isfinite(upper) and abs(upper - t["epsilon"]) > 1e-9:
        ax.axhline(upper, color="C0", ls=":", label=f"accountant upper {upper:.4g}")
    true_eps = t.get("true_epsilon")
    if isinstance(true_eps, (int, float)) and math.isfinite(true_eps):
        ax.axhline(true_eps, color="C2", ls="-.", lw=0.8, label=f"true epsilon {true_eps:.4g}")
    ax.set_xscale("log")
    ax.set_xlabel("samples per dataset (selection + certification)")
    ax.set_ylabel("epsilon")
    ax.set_title(f"Audit lower bound vs samples: {t['name']}", fontsize=10)
    ax.set_ylim(bottom=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _finish(fig, path)
    return True


def one_run_plot(report: dict[str, Any], path: Path) -> bool:
    """Draw a one-run audit beside the paper's theory (Steinke, Nasr, Jagielski 2023).

    Left: the bound certified by v correct guesses out of the r guesses made (Theorem 3.1,
    or Theorem 5.2 / Corollary 5.4 with delta > 0), the observed count marked, and the
    median count of a mechanism exactly at the claim.  Right: the median bound such a
    mechanism certifies against the number of canaries m, the measured bound marked.

    Returns:
        False (nothing written) when the report has no one-run audit.
    """
    audit = report.get("audit") or {}
    if audit.get("method") != "one-run" or not audit.get("count_curve"):
        return False
    t = report["target"]
    conf = f"{audit.get('confidence', 0):.0%}"
    r = sum(audit["guesses"])
    fig = _figure(9.6, 3.9)
    left, right = fig.subplots(1, 2)
    counts, theory = audit["count_curve"], audit["theory_curve"]
    # one vertical range for both panels, the measured point and the claim inside it
    top = 1.08 * max(
        t["epsilon"],
        audit["epsilon_lower"],
        *(p["epsilon_lower"] for p in counts),
        *(p["theory"] for p in theory),
    )
    left.plot(
        [p["correct"] for p in counts],
        [p["epsilon_lower"] for p in counts],
        "-",
        color="C0",
        label=f"certified bound for v correct ({conf})",
    )
    left.axhline(t["epsilon"], color="k", ls="--", label=f"claimed epsilon {t['epsilon']:g}")
    left.axvline(
        audit["expected_correct"],
        color="C2",
        ls=":",
        label=f"median v of a mechanism exactly at the claim ({audit['expected_correct']})",
    )
    left.plot(
        [audit["correct"]],
        [audit["epsilon_lower"]],
        "*",
        ms=13,
        color="C3",
        label=f"measured: {audit['correct']} correct, eps >= {audit['epsilon_lower']:.3f}",
    )
    left.set_xlabel(f"correct guesses v (of r = {r} guesses, m = {audit['m']} canaries)")
    left.set_ylabel("certified lower bound on epsilon")
    left.set_title("Bound vs correct guesses", fontsize=10)
    left.set_xlim(0, r)
    left.set_ylim(-0.04 * top, top)
    left.grid(True, alpha=0.3)
    left.legend(fontsize=7, loc="upper left")
    right.plot(
        [p["m"] for p in theory],
        [p["theory"] for p in theory],
        "o-",
        color="C0",
        label=f"theory: median bound of a mechanism at the claim ({conf})",
    )
    right.axhline(t["epsilon"], color="k", ls="--", label=f"claimed epsilon {t['epsilon']:g}")
    right.plot(
        [audit["m"]],
        [audit["epsilon_lower"]],
        "*",
        ms=13,
        color="C3",
        label=f"measured: eps >= {audit['epsilon_lower']:.3f} (m = {audit['m']})",
    )
    right.set_xscale("log")
    right.set_xlabel("canaries m")
    right.set_ylabel("epsilon")
    right.set_title("Theory curve (Steinke, Nasr, Jagielski 2023)", fontsize=10)
    right.set_ylim(-0.04 * top, top)
    right.grid(True, alpha=0.3)
    right.legend(fontsize=7, loc="best")
    fig.suptitle(f"One-run audit: {t['name']}", fontsize=10)
    _finish(fig, path)
    return True
