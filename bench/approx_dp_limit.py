"""Approximate DP at the statistical limit: the auditor against the most one event certifies.

    PYTHONPATH=$PWD python bench/approx_dp_limit.py > bench/approx_dp_limit.md

Gaussian mechanism, sigma 1, sensitivity 1, delta 1e-5 (exact epsilon 4.377, Balle & Wang
2018), 95% confidence, vectorised sampling.  For each sample count (per dataset) it prints the
statistical limit (:func:`dpaudit.audit.statistical_limit` over the exact threshold events)
twice -- "ideal": all samples certify one test; "design": at the audit's own certification
samples and Bonferroni count -- and the median certified lower bound over several seeds,
before (selection_fraction 0.25, both directions certified: the defaults until this change)
and after (the defaults for delta > 0 now: selection on max(5%, 10^5) samples, both
directions), and a third variant certifying only the direction selection prefers (one test:
a higher limit for one event, but one chance instead of two).  Certified bounds scatter
around the limit (the counts are random), hence medians and the spread.  Then the
trade-off-curve view's mu lower bound (true mu = 1) at the same sample counts.
"""

from __future__ import annotations

import platform
import statistics
import time

import numpy as np
from scipy.special import ndtr

from dpaudit.audit import (
    audit,
    samples_needed,
    statistical_limit,
    threshold_probabilities,
    tradeoff_curve,
)
from dpaudit.audit.estimators import bound_level, predicted_bounds
from dpaudit.audit.monte_carlo import default_selection_fraction
from dpaudit.audit.outputs import infer_schema
from dpaudit.audit.selection import search_events

DELTA = 1e-5
EPSILON = 4.377
CONFIDENCE = 0.95
#: (samples per dataset, seeds)
RUNS = ((10**5, 40), (10**6, 20), (10**7, 10))


class Gaussian:
    """``d + N(0, 1)``, batched."""

    name = "gaussian(sigma=1)"
    arithmetic = "real"  # the Gaussian of the issue; its float outputs leak more (bits family)

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.normal())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.normal(0.0, 1.0, n)


def main() -> None:
    _, p_num, p_den = threshold_probabilities("gaussian")
    print("# Approximate DP at the statistical limit\n")
    print(
        f"Gaussian mechanism, sigma 1, delta {DELTA:g}, true epsilon 4.377, confidence "
        f"{CONFIDENCE}; machine: {platform.machine()}, {platform.python_version()}.\n"
    )
    print(
        "| samples/side | limit ideal (1 test, all samples) | before: median (min-max) "
        "| before: design limit | after: median (min-max) | after: design limit "
        "| after gap to design limit | after gap to ideal | printed limit (median) "
        "| seeds | s/audit (after) | one direction: median (design limit) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, seeds in RUNS:
        ideal = statistical_limit(p_num, p_den, samples=n, delta=DELTA).epsilon
        rows = {}
        for label, extra in (
            ("before", dict(selection_fraction=0.25, directions="both")),
            ("after", {}),
            ("best", dict(directions="best")),
        ):
            values, printed, elapsed = [], [], 0.0
            for seed in range(seeds):
                start = time.perf_counter()
                r = audit(
                    Gaussian(),
                    0.0,
                    1.0,
                    epsilon=EPSILON,
                    delta=DELTA,
                    samples=n,
                    confidence=CONFIDENCE,
                    seed=seed,
                    progress=False,
                    **extra,
                )
                elapsed += time.perf_counter() - start
                values.append(r.epsilon_lower)
                if r.epsilon_limit is not None:
                    printed.append(r.epsilon_limit)
            design = statistical_limit(
                p_num,
                p_den,
                samples=r.samples_d0,
                delta=DELTA,
                confidence=CONFIDENCE,
                tests=r.tests,
            ).epsilon
            rows[label] = (
                statistics.median(values),
                min(values),
                max(values),
                design,
                statistics.median(printed) if printed else float("nan"),
                elapsed / seeds,
            )
        b, a, o = rows["before"], rows["after"], rows["best"]
        print(
            f"| {n:.0e} | {ideal:.3f} | {b[0]:.3f} ({b[1]:.2f}-{b[2]:.2f}) | {b[3]:.3f} "
            f"| {a[0]:.3f} ({a[1]:.2f}-{a[2]:.2f}) | {a[3]:.3f} | {a[3] - a[0]:+.3f} "
            f"| {ideal - a[0]:+.3f} | {a[4]:.3f} | {seeds} | {a[5]:.1f} "
            f"| {o[0]:.3f} ({o[3]:.3f}) |",
            flush=True,
        )
    print("\nGap = limit - certified median (positive: below the limit).\n")
    print("## Samples a target needs (ideal limit: one test, all samples certify)\n")
    print("| target epsilon_lower | samples per side |")
    print("|---|---|")
    for target in (3.5, 4.0, 4.2, 4.3):
        need = samples_needed(target, p_num, p_den, delta=DELTA, confidence=CONFIDENCE)
        print(f"| {target} | {need:.3g} |")
    print("\n## Trade-off-curve view (true GDP mu = 1)\n")
    print("| samples/side | mu_lower | epsilon_lower(1e-5) | s |")
    print("|---|---|---|---|")
    for n in (10**5, 10**6, 10**7):
        start = time.perf_counter()
        c = tradeoff_curve(Gaussian(), 0.0, 1.0, samples=n, confidence=CONFIDENCE, seed=0)
        print(
            f"| {n:.0e} | {c.mu_lower:.4f} | {c.epsilon_lower(DELTA):.4f} "
            f"| {time.perf_counter() - start:.1f} |",
            flush=True,
        )


def selection_loss(n: int, seeds: int) -> tuple[float, float, float]:
    """Design limit, and mean and median of the limit of the event selection picks (its exact
    probabilities at the audit's certification samples): the loss due to selection alone."""
    n_sel = max(1, int(n * default_selection_fraction(n, DELTA)))
    n_cert = n - n_sel
    level = bound_level(1 - CONFIDENCE, 2)
    _, p_num, p_den = threshold_probabilities("gaussian")
    design = statistical_limit(p_num, p_den, samples=n_cert, delta=DELTA, tests=2).epsilon
    values = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        x0, x1 = rng.normal(size=n_sel), 1 + rng.normal(size=n_sel)
        found = search_events(
            x0,
            x1,
            infer_schema(x0[:5]),
            lambda a, b, m: predicted_bounds(a, b, m, n_cert, level, DELTA),
            families=("threshold",),
            rng=rng,
        )
        event, numerator = found[0].event, found[0].numerator
        t = event.threshold
        p0, p1 = (ndtr(-t), ndtr(1 - t)) if event.above else (ndtr(t), ndtr(t - 1))
        p, q = (p0, p1) if numerator == 0 else (p1, p0)
        values.append(statistical_limit([p], [q], samples=n_cert, delta=DELTA, tests=2).epsilon)
    return design, float(np.mean(values)), float(np.median(values))


def gap_sources() -> None:
    print("\n## Where the gap to the ideal limit comes from\n")
    print(
        "Design: the limit at the audit's certification samples with 2 tests, against the "
        "ideal one (all samples, 1 test). Selection: the limit of the event the threshold "
        "search picks on the selection samples (exact probabilities of that event), against "
        "the design limit. Two certified directions are two such picks, the certified bound "
        "the larger: that recovers most of the selection loss.\n"
    )
    print(
        "| samples/side | ideal | design | design loss | picked event: mean | median "
        "| selection loss (mean) | seeds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    _, p_num, p_den = threshold_probabilities("gaussian")
    for n, seeds in ((10**5, 40), (10**6, 30), (10**7, 10)):
        ideal = statistical_limit(p_num, p_den, samples=n, delta=DELTA).epsilon
        design, mean, median = selection_loss(n, seeds)
        print(
            f"| {n:.0e} | {ideal:.3f} | {design:.3f} | {ideal - design:.3f} | {mean:.3f} "
            f"| {median:.3f} | {design - mean:.3f} | {seeds} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
    gap_sources()
