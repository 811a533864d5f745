"""Start-up time of the dpaudit command (issue 19, part 4): wall-clock and CPU medians.

Runs each command ``REPEATS`` times in a fresh interpreter, for this checkout and (when given)
a baseline checkout, and prints a Markdown table.  The interpreter's own start and
``import sympy`` are shown as floors: the accountant computes in exact arithmetic, which
imported sympy in every ``dpaudit account`` until plain numbers became exact numbers without
sympy (``dpaudit.exact_numbers``); a command that still needs sympy pays at least this floor
(and sympy's first symbolic sum imports sympy.tensor and sympy.combinatorics, a second floor
row).

Runs alternate between the two checkouts (this, baseline, this, ...) so that the load of a
shared machine falls on both alike; the speed-up columns are baseline / this.  Wall time and
CPU time (user + system of the child, much less sensitive to the machine's other load) are
both shown.  Each command first runs once unmeasured with bytecode writing allowed
(``PYTHONDONTWRITEBYTECODE`` removed), so that both checkouts are timed with compiled
``__pycache__``, as an installed package is; without it every run recompiles every module
(~0.2 s).

    python bench/startup.py [--baseline /path/to/other/checkout] [--repeats N] > bench/startup.md
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
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
    (
        "python -c 'import sympy; x + 1' (floor: sympy's first sum)",
        ["-c", "import sympy; sympy.Symbol('x') + 1"],
    ),
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
    (
        'dpaudit account "Composed([Laplace(1), Exponential(0.5)])"',
        ["-m", "dpaudit", "account", "Composed([Laplace(1), Exponential(0.5)])"],
    ),
    (
        'dpaudit account "SelfComposed(Gaussian(1.1), 100)" --delta 1e-5',
        ["-m", "dpaudit", "account", "SelfComposed(Gaussian(1.1), 100)", "--delta", "1e-5"],
    ),
    (
        'dpaudit account "SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 1000)" --delta 1e-5',
        [
            "-m",
            "dpaudit",
            "account",
            "SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 1000)",
            "--delta",
            "1e-5",
        ],
    ),
    ('dpaudit explain "Laplace(1)"', ["-m", "dpaudit", "explain", "Laplace(1)"]),
    (
        'dpaudit explain "SelfComposed(Laplace(10), 100)" --delta 1e-6',
        ["-m", "dpaudit", "explain", "SelfComposed(Laplace(10), 100)", "--delta", "1e-6"],
    ),
]


def _env(checkout: Path, *, compile_: bool = False) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if compile_:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _once(checkout: Path, args: list[str]) -> tuple[float, float] | None:
    """Wall and CPU (user + system) time (s) of one ``python ARGS`` with ``checkout`` first on
    the path (None when the command fails there, e.g. an option the baseline does not have).
    The CPU time depends much less on the other load of a shared machine than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], env=_env(checkout), cwd=checkout, capture_output=True
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return None if done.returncode != 0 else (elapsed, cpu)


Timing = tuple[float, float] | None


def walls(checkouts: list[Path], args: list[str], repeats: int = REPEATS) -> list[Timing]:
    """Median wall and CPU time of ``python ARGS`` in each checkout, runs interleaved, after
    one unmeasured run that writes the bytecode caches."""
    for checkout in checkouts:
        subprocess.run(
            [sys.executable, *args],
            env=_env(checkout, compile_=True),
            cwd=checkout,
            capture_output=True,
        )
    times: list[list[tuple[float, float]]] = [[] for _ in checkouts]
    failed = [False for _ in checkouts]
    for _ in range(repeats):
        for i, checkout in enumerate(checkouts):
            if failed[i]:
                continue
            t = _once(checkout, args)
            if t is None:
                failed[i] = True
            else:
                times[i].append(t)
    return [
        None if bad else (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))
        for ts, bad in zip(times, failed, strict=True)
    ]


#: Runs one dpaudit command after importing sympy and making its first sum (the floor), and
#: prints the CPU seconds the command took beyond that: what dpaudit itself adds.
ABOVE_FLOOR = """
import contextlib, io, sys, time
import sympy
sympy.Symbol("x") + 1
start = time.process_time()
from dpaudit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
print(time.process_time() - start if status == 0 else -1)
"""


def above_floor(checkouts: list[Path], argv: list[str], repeats: int) -> list[float | None]:
    """Median CPU seconds of a ``dpaudit`` command above the sympy floor, in process (runs
    interleaved between the checkouts; None when the command fails there)."""
    out: list[list[float]] = [[] for _ in checkouts]
    failed = [False for _ in checkouts]
    for _ in range(repeats):
        for i, checkout in enumerate(checkouts):
            if failed[i]:
                continue
            done = subprocess.run(
                [sys.executable, "-c", ABOVE_FLOOR, *argv],
                env=_env(checkout),
                cwd=checkout,
                capture_output=True,
                text=True,
            )
            value = float(done.stdout.strip() or -1) if done.returncode == 0 else -1.0
            if value < 0:
                failed[i] = True
            else:
                out[i].append(value)
    return [None if bad else statistics.median(v) for v, bad in zip(out, failed, strict=True)]


def _cell(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f}"


def _ratio(this: float | None, base: float | None) -> str:
    return "n/a" if this is None or base is None else f"{base / this:.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with (e.g. main)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="runs per command")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# Start-up time of the dpaudit command\n")
    print(
        f"Median of {args.repeats} runs, wall clock and CPU time, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
        "cores, 1-min load average at start "
        f"{load:.2f} (the machine is shared).  Produced by `python bench/startup.py"
        f"{' --baseline ...' if args.baseline else ''}`.\n"
    )
    head = "| command | wall, this (s) |"
    rule = "|---|---:|"
    if args.baseline:
        head += " wall, baseline (s) | speed-up, wall |"
        rule += "---:|---:|"
    head += " CPU, this (s) |"
    rule += "---:|"
    if args.baseline:
        head += " CPU, baseline (s) | speed-up, CPU |"
        rule += "---:|---:|"
    print(head)
    print(rule)
    checkouts = [ROOT, args.baseline] if args.baseline else [ROOT]
    for label, argv in COMMANDS:
        timed = walls(checkouts, argv, args.repeats)
        wall = [None if t is None else t[0] for t in timed]
        cpu = [None if t is None else t[1] for t in timed]
        row = f"| `{label}` | {_cell(wall[0])} |"
        if args.baseline:
            row += f" {_cell(wall[1])} | {_ratio(wall[0], wall[1])} |"
        row += f" {_cell(cpu[0])} |"
        if args.baseline:
            row += f" {_cell(cpu[1])} | {_ratio(cpu[0], cpu[1])} |"
        print(row, flush=True)
    print(
        "\nCPU seconds above the floor, in process: each command run by `dpaudit.cli.main` after"
        " `import sympy` and a first sum in the same interpreter (`time.process_time`)."
        "\n"
    )
    print(
        "| command | above floor, this (s) |"
        + (" baseline (s) | speed-up |" if args.baseline else "")
    )
    print("|---|---:|" + ("---:|---:|" if args.baseline else ""))
    for label, argv in COMMANDS:
        if argv[:2] != ["-m", "dpaudit"] or argv[2:3] == ["--help"]:
            continue
        cpu = above_floor(checkouts, argv[2:], args.repeats)
        row = f"| `{label}` | {_cell(cpu[0])} |"
        if args.baseline:
            row += f" {_cell(cpu[1])} | {_ratio(cpu[0], cpu[1])} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
