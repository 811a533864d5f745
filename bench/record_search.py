"""Benchmark: what the record search (``audit_records``) costs against the final audit, this
checkout against an earlier commit, in the same run.

    python bench/record_search.py > bench/record_search.md          # against 70b0322
    python bench/record_search.py --against COMMIT --repeat 5

Each audit runs in a fresh Python process (imports not timed) on one worker, seed 0, with the
tree of this checkout or of ``--against`` (exported with ``git archive`` into a temporary
directory) first on its path; the two trees alternate, run by run, and run the same functions
(defined here, as in the test suite's ``tests/audit/_records_mechanisms.py``): Laplace sums
clamped to [-1, 10] with the right noise and with ten times too little, a sum that forgets
its upper clamp, a bug at a corner of a two-column domain, a histogram under both relations,
at 100,000 samples per dataset; and one function without ``batch`` (called once per sample,
as much library code is) at 20,000, where the search's samples are the wall time.

The table gives the search's samples over the final audit's (both datasets counted on both
sides: ``samples_drawn - 2 * samples`` over ``2 * samples``), the certified bounds and the
median wall times. This checkout searches edge values too (the functions read NaN as 0
before their clamp, so their worst pairs are ordinary ones, except for the sum missing its
upper clamp, which leaks without bound on a record past the range); the earlier commit does
not.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: main before the hunt of issue 32 (scoring every candidate on samples // 8 per dataset).
BEFORE = "70b0322"
#: (name, samples per dataset)
CELLS = (
    ("correct sum, replace-one", 100_000),
    ("correct sum, add-remove", 100_000),
    ("sum with 10x too little noise", 100_000),
    ("sum missing its upper clamp", 100_000),
    ("bug at a corner (2 columns)", 100_000),
    ("histogram, add-remove", 100_000),
    ("histogram, replace-one", 100_000),
    ("correct sum, no batch", 20_000),
)

_CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import scipy.stats
from dpaudit.audit import audit_records


def clean(x):  # NaN read as 0, so that the clamp bounds every value (np.clip passes NaN)
    return np.where(x == x, x, 0.0)


class Sum:  # column 0 clamped to [low, high] (upper clamp optional), plus Laplace(scale)
    arithmetic = "real"

    def __init__(self, low, high, scale, upper=True):
        self.low, self.high, self.scale, self.upper = low, high, scale, upper

    def total(self, data):
        x = np.maximum(clean(data[:, 0]), self.low)
        return float((np.minimum(x, self.high) if self.upper else x).sum())

    def __call__(self, data, rng):
        return self.total(data) + rng.laplace(0.0, self.scale)

    def batch(self, data, n, rng):
        return self.total(data) + rng.laplace(0.0, self.scale, n)


class Unbatched(Sum):  # called once per sample, as much library code is
    batch = None


class Corner:  # both columns clamped to [0, 1], noise for one: (0, 0) -> (1, 1) leaks twice
    arithmetic = "real"

    def batch(self, data, n, rng):
        return float(np.clip(clean(data), 0.0, 1.0).sum()) + rng.laplace(0.0, 1.0, n)

    def __call__(self, data, rng):
        return float(self.batch(data, 1, rng)[0])


class Histogram:  # counts of categories 0..3 with Laplace(1) on each (NaN and others raise)
    arithmetic = "real"

    def batch(self, data, n, rng):
        counts = np.bincount(data[:, 0].astype(int), minlength=4)[:4]
        return counts + rng.laplace(0.0, 1.0, (n, 4))

    def __call__(self, data, rng):
        return self.batch(data, 1, rng)[0]


name, n = sys.argv[1], int(sys.argv[2])
two = [(-1.0, 10.0), (0.0, 1.0)]
cases = {
    "correct sum, replace-one": (Sum(-1.0, 10.0, 11.0), two, {}),
    "correct sum, add-remove": (Sum(-1.0, 10.0, 10.0), two, {"relation": "add-remove"}),
    "sum with 10x too little noise": (Sum(-1.0, 10.0, 1.1), two, {}),
    "sum missing its upper clamp": (Sum(0.0, 1.0, 1.0, upper=False), [(-1.0, 5.0)], {}),
    "bug at a corner (2 columns)": (Corner(), [(0.0, 1.0), (0.0, 1.0)], {}),
    "histogram, add-remove": (Histogram(), [[0, 1, 2, 3]], {"relation": "add-remove"}),
    "histogram, replace-one": (Histogram(), [[0, 1, 2, 3]], {}),
    "correct sum, no batch": (Unbatched(-1.0, 10.0, 11.0), two, {}),
}
fn, domain, extra = cases[name]
start = time.perf_counter()
r = audit_records(fn, domain, epsilon=1.0, samples=n, seed=0, **extra)
wall = time.perf_counter() - start
print(json.dumps(dict(wall=wall, bound=r.epsilon_lower, drawn=r.samples_drawn)))
"""


def _one(tree: Path, name: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, name, str(n)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _export(commit: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def main(against: str, repeat: int) -> None:
    load = os.getloadavg()[0]
    runs: dict[tuple[str, int], dict[str, list[dict[str, float]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        _export(against, old)
        for name, n in CELLS:
            cell = runs.setdefault((name, n), {"before": [], "now": []})
            for _ in range(repeat):
                for tree, which in ((old, "before"), (ROOT, "now")):
                    cell[which].append(_one(tree, name, n))
            print(f"done {name}", file=sys.stderr)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print("# What the record search costs: this checkout against an earlier commit\n")
    print(
        f"`python bench/record_search.py --against {against} --repeat {repeat}` on "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"now = {head}; 1-min load {load:.1f} at the start. One worker, seed 0, a fresh "
        "process per audit, the two trees alternating; medians over the runs. Search / final: "
        "the samples the search drew over the final audit's (both datasets).\n"
    )
    print(
        "| workload | samples per dataset | search / final, before | search / final, now | "
        "bound before | bound now | before (s) | now (s) | before / now |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, n), cell in runs.items():
        final = 2 * n
        ratio = {k: (cell[k][0]["drawn"] - final) / final for k in cell}
        wall = {k: statistics.median(r["wall"] for r in cell[k]) for k in cell}
        bound = {k: cell[k][0]["bound"] for k in cell}
        print(
            f"| {name} | {n:,} | {ratio['before']:.2f} | {ratio['now']:.2f} | "
            f"{bound['before']:.4f} | {bound['now']:.4f} | {wall['before']:.2f} | "
            f"{wall['now']:.2f} | {wall['before'] / wall['now']:.2f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tree and workload")
    args = parser.parse_args()
    main(args.against, args.repeat)
