"""Approximate DP at the statistical limit: the auditor against the most one event certifies.

    PYTHONPATH=$PWD python bench/approx_dp_limit.py > bench/approx_dp_limit.md

Gaussian mechanism, sigma 1, sensitivity 1, delta 1e-5 (exact epsilon 4.377, Balle & Wang
2018), 95% confidence, vectorised sampling.  For each sample count (per dataset) it prints the
statistical limit (:func:`dpaudit.audit.statistical_limit` over the exact threshold events)
twice -- "ideal": all samples certify one test; "design": at the audit's own certification
samples and Bonferroni count -- for the Clopper-Pearson rectangle (the issue's reference) and
for the joint exact test (:mod:`dpaudit.audit.joint`), and the median certified lower bound
over several seeds, before (``certification="clopper-pearson"``) and after (the joint test,
the default).  Certified bounds scatter
around the limit (the counts are random), hence medians and the spread.  Then the
trade-off-curve view's mu lower bound (true mu = 1) at the same sample counts.
"""

from __future__ import annotations

import math
import platform
import statistics
import sys
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
from dpaudit.audit.estimators import bound_level
from dpaudit.audit.joint import predicted_joint_bounds
from dpaudit.audit.options import default_selection_fraction
from dpaudit.audit.outputs import infer_schema
from dpaudit.audit.selection import search_events

DELTA = 1e-5
EPSILON = 4.377
CONFIDENCE = 0.95
#: (samples per dataset, seeds)
RUNS = ((10**5, 40), (10**6, 20), (10**7, 10))


class Laplace:
    """``d + Laplace(0, 1)``, batched (epsilon 1 at distance 1)."""

    name = "laplace(b=1)"
    arithmetic = "real"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.laplace(0.0, 1.0, n)


class Gaussian:
    """``d + N(0, 1)``, batched."""

    name = "gaussian(sigma=1)"
    arithmetic = "real"  # the Gaussian of the issue; its float outputs leak more (bits family)

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.normal())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.normal(0.0, 1.0, n)


def _audits(
    n: int, seeds: int, **extra: object
) -> tuple[list[float], list[float], float, int, int]:
    """Certified bounds and printed limits of ``seeds`` audits, seconds per audit, and the
    certification samples and tests of the last."""
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
            **extra,  # type: ignore[arg-type]
        )
        elapsed += time.perf_counter() - start
        values.append(r.epsilon_lower)
        if r.epsilon_limit is not None:
            printed.append(r.epsilon_limit)
    return values, printed, elapsed / seeds, r.samples_d0, r.tests


def main() -> None:
    _, p_num, p_den = threshold_probabilities("gaussian")
    print("# Approximate DP at the statistical limit\n")
    print(
        f"Gaussian mechanism, sigma 1, delta {DELTA:g}, true epsilon 4.377, confidence "
        f"{CONFIDENCE}; machine: {platform.machine()}, {platform.python_version()}.\n"
    )
    print(
        "Before: each event certified by the Clopper-Pearson rectangle (two one-sided bounds, "
        "each at alpha / (2 tests)); its limits are the issue's reference numbers. After: the "
        "joint exact test of both counts (dpaudit.audit.joint, each test at alpha / tests), "
        "the default now, with the selection scorer that predicts it. Limits: 'ideal' = one "
        "test on all samples; 'design' = the audit's certification samples and 2 tests.\n"
    )
    print(
        "| samples/side | ideal limit, rectangle (issue) | ideal limit, joint "
        "| before: median (min-max) | before: design limit "
        "| after: median (min-max) | after: design limit | after: gap to design limit "
        "| after: gap to ideal (joint) | after - before | printed limit (median) | seeds "
        "| s/audit before / after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, seeds in RUNS:
        ideal_cp = statistical_limit(p_num, p_den, samples=n, delta=DELTA).epsilon
        ideal = statistical_limit(p_num, p_den, samples=n, delta=DELTA, method="joint").epsilon
        rows = {}
        for label, method in (("before", "clopper-pearson"), ("after", "joint")):
            values, printed, seconds, n_cert, tests = _audits(n, seeds, certification=method)
            design = statistical_limit(
                p_num,
                p_den,
                samples=n_cert,
                delta=DELTA,
                confidence=CONFIDENCE,
                tests=tests,
                method=method,
            ).epsilon
            rows[label] = (
                statistics.median(values),
                min(values),
                max(values),
                design,
                statistics.median(printed) if printed else float("nan"),
                seconds,
            )
        b, a = rows["before"], rows["after"]
        print(
            f"| {n:.0e} | {ideal_cp:.3f} | {ideal:.3f} | {b[0]:.3f} ({b[1]:.2f}-{b[2]:.2f}) "
            f"| {b[3]:.3f} | {a[0]:.3f} ({a[1]:.2f}-{a[2]:.2f}) | {a[3]:.3f} "
            f"| {a[3] - a[0]:+.3f} | {ideal - a[0]:+.3f} | {a[0] - b[0]:+.3f} | {a[4]:.3f} "
            f"| {seeds} | {b[5]:.1f} / {a[5]:.1f} |",
            flush=True,
        )
    print("\nGap = limit - certified median (positive: below the limit).\n")
    print("## Samples a target needs (ideal limit: one test, all samples certify)\n")
    print("| target epsilon_lower | samples per side, rectangle | joint |")
    print("|---|---|---|")
    for target in (3.5, 4.0, 4.2, 4.3):
        need = samples_needed(target, p_num, p_den, delta=DELTA, confidence=CONFIDENCE)
        joint = _joint_samples_needed(target, p_num, p_den)
        print(f"| {target} | {need:.3g} | {joint:.3g} |")
    print("\n## Limits at more samples (ideal: one test, all samples)\n")
    print("| samples/side | rectangle | joint |")
    print("|---|---|---|")
    for n in (10**8, 10**9):
        cp = statistical_limit(p_num, p_den, samples=n, delta=DELTA).epsilon
        joint = statistical_limit(p_num, p_den, samples=n, delta=DELTA, method="joint").epsilon
        print(f"| {n:.0e} | {cp:.3f} | {joint:.3f} |", flush=True)
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


def _joint_samples_needed(target: float, p_num: np.ndarray, p_den: np.ndarray) -> float:
    """Samples per side at which the joint limit reaches ``target`` (bisection on log n to
    about 2%; the joint limit is not exactly monotone in n: rounded counts)."""
    lo, hi = math.log(10**4), math.log(10**12)
    while hi - lo > 0.02:
        mid = (lo + hi) / 2
        limit = statistical_limit(
            p_num, p_den, samples=math.ceil(math.exp(mid)), delta=DELTA, method="joint"
        ).epsilon
        lo, hi = (lo, mid) if limit >= target else (mid, hi)
    return math.exp(hi)


def other_workloads() -> None:
    """Before/after on mechanisms the change must not make worse: Laplace at delta > 0 and
    pure DP (delta = 0), Gaussian at delta = 0."""
    print("\n## Other workloads: rectangle (before) and joint test (after)\n")
    print("| mechanism | delta | samples/side | before: median | after: median | seeds |")
    print("|---|---|---|---|---|---|")
    cases = (
        ("laplace(b=1), true eps 1", Laplace(), 1.0, 1e-5),
        ("laplace(b=1), true eps 1", Laplace(), 1.0, 0.0),
        ("gaussian(sigma=1)", Gaussian(), 4.377, 0.0),
    )
    for name, mechanism, claim, delta in cases:
        for n, seeds in ((10**5, 10), (10**6, 6)):
            medians = []
            for method in ("clopper-pearson", "joint"):
                values = [
                    audit(
                        mechanism,
                        0.0,
                        1.0,
                        epsilon=claim,
                        delta=delta,
                        samples=n,
                        confidence=CONFIDENCE,
                        seed=seed,
                        progress=False,
                        certification=method,
                    ).epsilon_lower
                    for seed in range(seeds)
                ]
                medians.append(statistics.median(values))
            print(
                f"| {name} | {delta:g} | {n:.0e} | {medians[0]:.4f} | {medians[1]:.4f} | {seeds} |",
                flush=True,
            )


def selection_loss(n: int, seeds: int) -> tuple[float, float, float]:
    """Design limit, and mean and median of the limit of the event selection picks (its exact
    probabilities at the audit's certification samples): the loss due to selection alone."""
    n_sel = max(1, int(n * default_selection_fraction(n, DELTA)))
    n_cert = n - n_sel
    level = bound_level(1 - CONFIDENCE, 2)
    _, p_num, p_den = threshold_probabilities("gaussian")
    design = statistical_limit(
        p_num, p_den, samples=n_cert, delta=DELTA, tests=2, method="joint"
    ).epsilon
    values = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        x0, x1 = rng.normal(size=n_sel), 1 + rng.normal(size=n_sel)
        found = search_events(
            x0,
            x1,
            infer_schema(x0[:5]),
            lambda a, b, m: predicted_joint_bounds(a, b, m, n_cert, level, DELTA),
            families=("threshold",),
            rng=rng,
        )
        event, numerator = found[0].event, found[0].numerator
        t = event.threshold
        p0, p1 = (ndtr(-t), ndtr(1 - t)) if event.above else (ndtr(t), ndtr(t - 1))
        p, q = (p0, p1) if numerator == 0 else (p1, p0)
        values.append(
            statistical_limit(
                [p], [q], samples=n_cert, delta=DELTA, tests=2, method="joint"
            ).epsilon
        )
    return design, float(np.mean(values)), float(np.median(values))


def gap_sources() -> None:
    print("\n## Where the gap to the ideal limit comes from\n")
    print(
        "Joint test throughout. "
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
        ideal = statistical_limit(p_num, p_den, samples=n, delta=DELTA, method="joint").epsilon
        design, mean, median = selection_loss(n, seeds)
        print(
            f"| {n:.0e} | {ideal:.3f} | {design:.3f} | {ideal - design:.3f} | {mean:.3f} "
            f"| {median:.3f} | {design - mean:.3f} | {seeds} |",
            flush=True,
        )


def large(n: int = 10**8, seeds: int = 1, workers: int = 1, header: bool = True) -> None:
    """``seeds`` audits a certification at ``n`` samples a side (about 25 s each at 10^9 with
    two workers)."""
    if header:
        print("\n## 10^8 and 10^9 samples a side (few seeds)\n")
        print(
            "| samples/side | ideal limit, rectangle | ideal limit, joint | before: values "
            "| after: values | before: median | after: median | s/audit before / after |"
        )
        print("|---|---|---|---|---|---|---|---|")
    _, p_num, p_den = threshold_probabilities("gaussian")
    ideal_cp = statistical_limit(p_num, p_den, samples=n, delta=DELTA).epsilon
    ideal = statistical_limit(p_num, p_den, samples=n, delta=DELTA, method="joint").epsilon
    before, _, s_before, _, _ = _audits(n, seeds, certification="clopper-pearson", workers=workers)
    after, _, s_after, _, _ = _audits(n, seeds, certification="joint", workers=workers)
    print(
        f"| {n:.0e} | {ideal_cp:.3f} | {ideal:.3f} | {', '.join(f'{v:.3f}' for v in before)} "
        f"| {', '.join(f'{v:.3f}' for v in after)} | {statistics.median(before):.3f} "
        f"| {statistics.median(after):.3f} | {s_before:.0f} / {s_after:.0f} |",
        flush=True,
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--large-row"]:  # a row of the last table: --large-row 1e9 5 2
        n, seeds, workers = int(float(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4])
        large(n, seeds, workers, header=False)
    else:
        main()
        gap_sources()
        other_workloads()
        large(10**8, 5, 2)
        large(10**9, 5, 2, header=False)
