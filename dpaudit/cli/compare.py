"""``dpaudit compare``: epsilon of k-fold composition under every accounting method.

    dpaudit compare "Laplace(10)" --k 1,10,100,1000 --delta 1e-6 --plot compare.png

For each k the accountant is asked for the guarantee of ``SelfComposed(MECH, k)`` at
``delta``; every candidate it compared (basic, advanced, optimal composition, zCDP, RDP,
PLD, ... whichever theorems are registered) becomes a column.  Every number is an upper
bound rounded up.
"""

from __future__ import annotations

import argparse

from dpaudit.accountant import Accountant
from dpaudit.cli.exit_codes import dumps
from dpaudit.events import SelfComposed
from dpaudit.numeric import EvaluationError, float_up
from dpaudit.parse import parse_event, parse_number

DEFAULT_K = "1,2,5,10,20,50,100,200,500,1000"
#: Most k values in one table, and the largest k.
MAX_K_VALUES = 100
MAX_K = 10**12


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="epsilon of k-fold composition under each accounting method",
        description="Table (and PNG plot) of epsilon against k for k-fold composition of a "
        "mechanism, one column per accounting method the accountant knows.",
    )
    p.add_argument(
        "mechanism",
        nargs="?",
        default="Laplace(10)",
        help="an event expression (default 'Laplace(10)')",
    )
    p.add_argument("--k", default=DEFAULT_K, help=f"comma-separated k values ({DEFAULT_K})")
    p.add_argument("--delta", default="1e-6", help="target delta (default 1e-6)")
    p.add_argument("--plot", help="write a PNG plot of epsilon against k to this path")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def compare(mechanism: str, ks: list[int], delta: str) -> dict[str, dict[int, float]]:
    """epsilon (rounded up) by method and k.

    Raises:
        ValueError: for a malformed mechanism, k or delta.
    """
    event = parse_event(mechanism)
    d = parse_number(delta)
    table: dict[str, dict[int, float]] = {}
    if not 1 <= len(ks) <= MAX_K_VALUES:
        raise ValueError(f"--k must list between 1 and {MAX_K_VALUES} values, got {len(ks)}")
    for k in ks:
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an integer in [1, {MAX_K:.0e}], got {k}")
        g = Accountant().guarantee(SelfComposed(event, k), d)
        for c in g.candidates:
            try:
                value = float_up(c.epsilon)
            except (EvaluationError, ValueError):
                continue
            column = table.setdefault(c.label, {})
            column[k] = min(value, column.get(k, value))
    return table


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit compare``."""
    try:
        ks = [int(x) for x in args.k.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--k must be comma-separated integers, got {args.k[:80]!r}") from None
    table = compare(args.mechanism, ks, args.delta)
    if args.json:
        print(dumps({m: {str(k): v for k, v in col.items()} for m, col in table.items()}, indent=2))
    else:
        methods = sorted(table)
        width = max([len(m) for m in methods] + [10])
        print(
            f"epsilon (upper bound, rounded up) of SelfComposed({args.mechanism}, k) at "
            f"delta = {args.delta}"
        )
        print(f"{'method':<{width}} " + " ".join(f"{k:>10}" for k in ks))
        for m in methods:
            cells = [f"{table[m][k]:>10.4g}" if k in table[m] else f"{'-':>10}" for k in ks]
            print(f"{m:<{width}} " + " ".join(cells))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for m in sorted(table):
            pts = sorted(table[m].items())
            ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=m)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("k (number of compositions)")
        ax.set_ylabel(f"epsilon at delta = {args.delta} (upper bound)")
        ax.set_title(f"k-fold composition of {args.mechanism}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        print(f"plot written to {args.plot}")
    return 0
