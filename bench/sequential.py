"""Benchmark of sequential (anytime-valid) certification against the fixed-size test.

    python bench/sequential.py > bench/sequential.md

Prints Markdown.  Each mechanism is audited twice with the same budget, seed and settings:
``certification="auto"`` (the fixed-size test: Clopper-Pearson at delta = 0, the joint exact
test at delta > 0, on all the certification samples) and ``certification="sequential"``
(:mod:`dpaudit.audit.sequential`: Robbins' confidence sequences on batches of 1,000, 2,000,
4,000, ... certification samples a side, stopping on a violation or once the rest of the
budget cannot reach the claim).  Columns: the certified bound and verdict of each, the
certification samples per dataset each drew, the mechanism runs over the whole audit
(selection included, both datasets) and their ratio, and the wall times.  Part 1: the
mechanism catalogue, broken (a violation to find) and correct, at 10^6 samples a dataset.
Part 2: a library function slow per call (diffprivlib's mean, one Python call per output)
on a fixed pair at 2 x 10^4 samples.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from dpaudit.audit import audit
from mechanisms.broken import broken_mechanisms
from mechanisms.catalogue import correct_mechanisms

SEED, CONFIDENCE = 2024, 0.95
CATALOGUE_SAMPLES = 1_000_000
LIBRARY_SAMPLES = 20_000


def _pair(run: Any) -> tuple[Any, float, Any, float]:
    out = []
    for certification in ("auto", "sequential"):
        start = time.perf_counter()
        result = run(certification)
        out += [result, time.perf_counter() - start]
    return tuple(out)  # type: ignore[return-value]


def _row(name: str, fixed: Any, t_fixed: float, seq: Any, t_seq: float) -> str:
    def verdict(r: Any) -> str:
        return f"{r.epsilon_lower:.3f} ({'**flagged**' if r.violation else 'ok'})"

    ratio = seq.samples_drawn / fixed.samples_drawn
    return (
        f"| {name} | {fixed.epsilon_claimed:g} | {verdict(fixed)} | {verdict(seq)} | "
        f"{fixed.samples_d0:,} | {seq.samples_d0:,} | {fixed.samples_drawn:,} | "
        f"{seq.samples_drawn:,} | {ratio:.3f} | {t_fixed:.1f} s | {t_seq:.1f} s |"
    )


HEADER = (
    "| mechanism | claimed eps | fixed: bound | sequential: bound | fixed: cert. samples | "
    "sequential: cert. samples | fixed: runs | sequential: runs | runs ratio | fixed: time | "
    "sequential: time |\n" + "|---" * 11 + "|"
)


def catalogue() -> list[float]:
    print(f"\n## 1. The catalogue, {CATALOGUE_SAMPLES:,} samples a dataset\n")
    print(HEADER)
    ratios = []
    for m in [*broken_mechanisms(1.0), *correct_mechanisms(1.0)]:

        def run(certification: str, m: Any = m) -> Any:
            return audit(
                m,
                pairs=m.pairs,
                epsilon=m.epsilon,
                delta=m.delta,
                samples=CATALOGUE_SAMPLES,
                confidence=CONFIDENCE,
                seed=SEED,
                progress=False,
                certification=certification,
            )

        fixed, t_fixed, seq, t_seq = _pair(run)
        ratios.append(seq.samples_drawn / fixed.samples_drawn)
        print(_row(m.name, fixed, t_fixed, seq, t_seq), flush=True)
    return ratios


def libraries() -> list[float]:
    print(f"\n## 2. A slow library function (diffprivlib), {LIBRARY_SAMPLES:,} samples\n")
    try:
        import numpy as np

        from mechanisms.libraries import diffprivlib_adapters as dpl
    except ImportError:  # pragma: no cover - diffprivlib is a test dependency
        print("diffprivlib does not import here.")
        return []
    print(
        "``diffprivlib.tools.mean(x, epsilon=1, bounds=(0, 1))`` (one Python call per output) "
        "on the replace-one pair [0, 0] / [0, 1], audited in real arithmetic (its claim holds) "
        "and, by default, over the outputs' bit patterns too (its floating-point leak, "
        "docs/libraries.md).\n"
    )
    print(HEADER)
    ratios = []
    adapter = dpl.diffprivlib_mean
    d0, d1 = np.array([[0.0], [0.0]]), np.array([[0.0], [1.0]])
    for arithmetic in ("real", "float"):

        def run(certification: str, arithmetic: str = arithmetic) -> Any:
            return audit(
                adapter,
                d0,
                d1,
                epsilon=adapter.epsilon,
                delta=adapter.delta,
                samples=LIBRARY_SAMPLES,
                confidence=CONFIDENCE,
                seed=SEED,
                progress=False,
                arithmetic=arithmetic,
                certification=certification,
            )

        fixed, t_fixed, seq, t_seq = _pair(run)
        ratios.append(seq.samples_drawn / fixed.samples_drawn)
        print(_row(f"{adapter.name} ({arithmetic})", fixed, t_fixed, seq, t_seq), flush=True)
    return ratios


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# Sequential certification benchmark\n")
    print(
        f"Generated by `python bench/sequential.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at start "
        f"{load:.1f} (shared machine: wall times are upper bounds). Confidence {CONFIDENCE}, "
        f"seed {SEED}, one worker.\n"
    )
    print(" ".join(line.strip() for line in (__doc__ or "").splitlines()[4:]))
    ratios = catalogue() + libraries()
    if ratios:
        ratios.sort()
        print(
            f"\nMechanism runs, sequential / fixed: median {ratios[len(ratios) // 2]:.3f}, "
            f"smallest {ratios[0]:.3f}, largest {ratios[-1]:.3f} over {len(ratios)} audits."
        )


if __name__ == "__main__":
    main()
