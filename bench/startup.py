"""Start-up time of the dpaudit command (issue 19, part 4): wall-clock medians.

Runs each command ``REPEATS`` times in a fresh interpreter, for this checkout and (when given)
a baseline checkout, and prints a Markdown table.  The interpreter's own start and
``import sympy`` are shown as floors: the accountant computes in exact arithmetic, so every
``dpaudit account`` imports sympy.

    python bench/startup.py [--baseline /path/to/other/checkout] > bench/startup.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 5

COMMANDS: list[tuple[str, list[str]]] = [
    ("python -c pass (floor)", ["-c", "pass"]),
    ("python -c 'import sympy' (floor of account)", ["-c", "import sympy"]),
    ("python -c 'import dpaudit'", ["-c", "import dpaudit"]),
    ("dpaudit --help", ["-m", "dpaudit", "--help"]),
    ('dpaudit account "Laplace(1)"', ["-m", "dpaudit", "account", "Laplace(1)"]),
    (
        'dpaudit account "SelfComposed(Laplace(10), 100)" --delta 1e-6',
        ["-m", "dpaudit", "account", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    ),
    (
        'dpaudit account "Gaussian(sigma=3)" --epsilon 1',
        ["-m", "dpaudit", "account", "Gaussian(sigma=3)", "--epsilon", "1"],
    ),
]


def wall(checkout: Path, args: list[str]) -> float | None:
    """Median wall time (s) of ``python ARGS`` with ``checkout`` first on the path (None when
    the command fails there, e.g. an option the baseline does not have)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *args], env=env, cwd=checkout, capture_output=True)
        if done.returncode != 0:
            return None
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cell(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with (e.g. main)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# Start-up time of the dpaudit command\n")
    print(
        f"Median of {REPEATS} runs, wall clock, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} cores, 1-min load average at start "
        f"{load:.2f} (the machine is shared).  Produced by `python bench/startup.py"
        f"{' --baseline ...' if args.baseline else ''}`.\n"
    )
    head = "| command | this checkout (s) |"
    rule = "|---|---:|"
    if args.baseline:
        head += " baseline (s) |"
        rule += "---:|"
    print(head)
    print(rule)
    for label, argv in COMMANDS:
        row = f"| `{label}` | {_cell(wall(ROOT, argv))} |"
        if args.baseline:
            row += f" {_cell(wall(args.baseline, argv))} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
