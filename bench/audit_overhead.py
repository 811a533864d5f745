"""Benchmark: the auditor's own cost at small and medium sample sizes, this checkout against
an earlier commit, in the same run.

    python bench/audit_overhead.py > bench/audit_overhead.md        # against ccd4f28
    python bench/audit_overhead.py --against COMMIT --repeat 7

Each audit runs in a fresh Python process (its imports are not timed: the wall time is
measured around ``audit(...)`` inside the process) on one worker, with the tree of this
checkout or of ``--against`` (a temporary ``git worktree``) first on its path. The two trees
alternate, run by run, so both see the same load; the table gives the median wall times,
their ratio, and whether the two certified bounds are equal (the changes measured are meant
to change speed only). Workloads: the catalogue's ``LaplaceCount`` at epsilon 1 (delta 0:
Clopper-Pearson certification) and ``GaussianSum(0.9, 1e-3)`` at delta 1e-3 (the joint exact
test), seed 1.
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
from dpaudit.audit import audit
from mechanisms.catalogue import GaussianSum, LaplaceCount
kind, n = sys.argv[1], int(sys.argv[2])
if kind == "laplace":
    m, extra = LaplaceCount(1.0), dict(epsilon=1.0)
else:
    m, extra = GaussianSum(0.9, 1e-3), dict(epsilon=1.0, delta=1e-3)
start = time.perf_counter()
r = audit(m, pairs=m.pairs, samples=n, seed=1, progress=False, **extra)
print(json.dumps(dict(wall=time.perf_counter() - start, bound=r.epsilon_lower)))
"""


def _one(tree: Path, kind: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(n)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(against: str, repeat: int) -> None:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), against],
            check=True,
        )
        try:
            rows = []
            for kind, n in CELLS:
                runs: dict[str, list[dict[str, float]]] = {"before": [], "now": []}
                for _ in range(repeat):
                    runs["before"].append(_one(old, kind, n))
                    runs["now"].append(_one(ROOT, kind, n))
                    print(f"done {kind} {n:.0e}", file=sys.stderr)
                rows.append((kind, n, runs))
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
    print("# The auditor's own cost: this checkout against an earlier commit\n")
    print(
        f"`python bench/audit_overhead.py --against {against} --repeat {repeat}` on "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"now = {head}; 1-min load {load:.1f} at the start. One worker, seed 1, a fresh process "
        "per audit, the two trees alternating; medians over the runs.\n"
    )
    print(
        "| workload | samples per dataset | before (s) | now (s) | before / now | "
        "same certified bound |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for kind, n, runs in rows:
        before = statistics.median(r["wall"] for r in runs["before"])
        now = statistics.median(r["wall"] for r in runs["now"])
        same = {r["bound"] for r in runs["before"]} == {r["bound"] for r in runs["now"]}
        print(
            f"| {kind} | {n:,} | {before:.3f} | {now:.3f} | {before / now:.2f} "
            f"| {'yes' if same else 'NO'} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    parser.add_argument("--repeat", type=int, default=5, help="runs per tree and cell")
    args = parser.parse_args()
    main(args.against, args.repeat)
