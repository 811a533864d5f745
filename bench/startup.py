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
REPEATS = 7

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


def wall(checkout: Path, args: list[str]) -> float:
    """Median wall time (s) of ``python ARGS`` with ``checkout`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, *args], env=env, cwd=checkout, capture_output=True, check=True
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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
        row = f"| `{label}` | {wall(ROOT, argv):.2f} |"
        if args.baseline:
            row += f" {wall(args.baseline, argv):.2f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
