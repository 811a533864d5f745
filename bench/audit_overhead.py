"""Benchmark: the auditor's own cost at small and medium sample sizes, this checkout against
an earlier commit, in the same run.

    python bench/audit_overhead.py > bench/audit_overhead.md        # against ccd4f28
    python bench/audit_overhead.py --against COMMIT --repeat 7
    python bench/audit_overhead.py --against COMMIT --cells laplace:1e7 --workers 1,2 --repeat 14

Each audit runs in a fresh Python process (its imports are not timed: the wall time is
measured around ``audit(...)`` inside the process) on one worker, with the tree of this
checkout or of ``--against`` (a temporary ``git worktree``) first on its path. The two trees
alternate, run by run, so both see the same load; the table gives the median wall times,
their ratio, and whether the two certified bounds are equal (the changes measured are meant
to change speed only). Workloads: the catalogue's ``LaplaceCount`` at epsilon 1 (delta 0:
Clopper-Pearson certification) and ``GaussianSum(0.9, 1e-3)`` at delta 1e-3 (the joint exact
test), seed 1.  With ``--workers 1,2`` every cell runs with each worker count (the runs of
one round back to back), and a second table gives, per tree, the median over rounds of the
one-worker wall time over the two-worker one: the speed-up of two workers before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The commit before the estimator and restating-grid speed-ups of 2026-11-27.
BEFORE = "ccd4f28"
#: (workload, samples per dataset)
CELLS = (
    ("laplace", 10_000),
    ("laplace", 20_000),
    ("laplace", 100_000),
    ("laplace", 1_000_000),
    ("gaussian-delta", 10_000),
    ("gaussian-delta", 100_000),
)

_CHILD = """
import json, sys, time
import scipy.stats  # imported on first use by the joint test: imports are not timed
from dpaudit.audit import audit
from mechanisms.catalogue import GaussianSum, LaplaceCount
kind, n, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind == "laplace":
    m, extra = LaplaceCount(1.0), dict(epsilon=1.0)
else:
    m, extra = GaussianSum(0.9, 1e-3), dict(epsilon=1.0, delta=1e-3)
start = time.perf_counter()
r = audit(m, pairs=m.pairs, samples=n, seed=1, progress=False, workers=workers, **extra)
print(json.dumps(dict(wall=time.perf_counter() - start, bound=r.epsilon_lower)))
"""


def _one(tree: Path, kind: str, n: int, workers: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(n), str(workers)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(
    against: str,
    repeat: int,
    cells: tuple[tuple[str, int], ...] = CELLS,
    worker_counts: tuple[int, ...] = (1,),
) -> None:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), against],
            check=True,
        )
        try:
            rows: list[tuple[str, int, int, dict[str, list[dict[str, float]]]]] = []
            for kind, n in cells:
                for workers in worker_counts:
                    rows.append((kind, n, workers, {"before": [], "now": []}))
                for _ in range(repeat):
                    for tree, name in ((old, "before"), (ROOT, "now")):
                        for row in rows[-len(worker_counts) :]:
                            row[3][name].append(_one(tree, kind, n, row[2]))
                    print(f"done {kind} {n:.0e}", file=sys.stderr)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=True
            )
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    options = ""
    if cells != CELLS:
        options += " --cells " + ",".join(f"{kind}:{n:.0e}".replace("+0", "") for kind, n in cells)
    if worker_counts != (1,):
        options += " --workers " + ",".join(map(str, worker_counts))
    print("# The auditor's own cost: this checkout against an earlier commit\n")
    print(
        f"`python bench/audit_overhead.py --against {against} --repeat {repeat}{options}` on "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"now = {head}; 1-min load {load:.1f} at the start. Seed 1, a fresh process per "
        "audit, the two trees alternating; medians over the runs.\n"
    )
    print(
        "| workload | samples per dataset | workers | before (s) | now (s) | before / now | "
        "same certified bound |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for kind, n, workers, runs in rows:
        before = statistics.median(r["wall"] for r in runs["before"])
        now = statistics.median(r["wall"] for r in runs["now"])
        same = {r["bound"] for r in runs["before"]} == {r["bound"] for r in runs["now"]}
        print(
            f"| {kind} | {n:,} | {workers} | {before:.3f} | {now:.3f} | {before / now:.2f} "
            f"| {'yes' if same else 'NO'} |"
        )
    if 1 in worker_counts and 2 in worker_counts:
        print("\n| workload | samples per dataset | tree | workers 1 / 2 (median) | range |")
        print("|---|---:|---|---:|---|")
        for kind, n, workers, runs in rows:
            if workers != 2:
                continue
            (one,) = [r for k, m, w, r in rows if (k, m, w) == (kind, n, 1)]
            for name in ("before", "now"):
                ratios = [a["wall"] / b["wall"] for a, b in zip(one[name], runs[name], strict=True)]
                print(
                    f"| {kind} | {n:,} | {name} | {statistics.median(ratios):.2f} | "
                    f"{min(ratios):.2f}-{max(ratios):.2f} |"
                )


def _cell(text: str) -> tuple[str, int]:
    kind, _, n = text.partition(":")
    if kind not in ("laplace", "gaussian-delta") or not n:
        raise argparse.ArgumentTypeError(f"a cell is laplace:N or gaussian-delta:N, got {text!r}")
    return kind, int(float(n))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    parser.add_argument("--repeat", type=int, default=5, help="runs per tree and cell")
    parser.add_argument(
        "--cells", help="comma-separated KIND:SAMPLES, e.g. laplace:1e7 (default: the table's)"
    )
    parser.add_argument("--workers", default="1", help="worker counts, e.g. 1,2 (default 1)")
    args = parser.parse_args()
    chosen = tuple(_cell(c) for c in args.cells.split(",")) if args.cells else CELLS
    counts = tuple(int(w) for w in args.workers.split(","))
    main(args.against, args.repeat, chosen, counts)
