"""``dpaudit compare``: epsilon of k-fold composition under every accounting method.

    dpaudit compare "Laplace(10)" --k 1,10,100,1000 --delta 1e-6 --plot compare.png

For each k the accountant is asked for the guarantee of ``SelfComposed(MECH, k)`` at
``delta``; every candidate it compared (basic, advanced, optimal composition, zCDP, RDP,
PLD, ... whichever theorems are registered) becomes a column.  Every number is an upper
bound rounded up.  Each method's theorem, citation, assumptions and formula follow the
table, with the numbers of one k (``--at``) substituted, and notes on why the methods order
as they do (:mod:`dpaudit.teaching.comparison`).
"""

from __future__ import annotations

import argparse

from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import exact_option
from dpaudit.teaching.comparison import MAX_K, MAX_K_VALUES, compare_methods

__all__ = ["DEFAULT_K", "MAX_K", "MAX_K_VALUES", "compare", "register", "run"]

DEFAULT_K = "1,2,5,10,20,50,100,200,500,1000"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="epsilon of k-fold composition under each accounting method",
        description="Table (and PNG plot) of epsilon against k for k-fold composition of a "
        "mechanism, one column per accounting method the accountant knows; each method's "
        "theorem, citation, assumptions and formula with the numbers of one k, and notes on "
        "why the methods order as they do.",
    )
    p.add_argument(
        "mechanism",
        nargs="?",
        default="Laplace(10)",
        help="an event expression (default 'Laplace(10)')",
    )
    p.add_argument("--k", default=DEFAULT_K, help=f"comma-separated k values ({DEFAULT_K})")
    p.add_argument("--delta", default="1e-6", help="target delta (default 1e-6)")
    p.add_argument(
        "--at",
        type=int,
        default=None,
        help="the k whose numbers are substituted into the formulas (one of --k; default: "
        "the largest listed k up to 100)",
    )
    p.add_argument("--plot", help="write a PNG plot of epsilon against k to this path")
    p.add_argument(
        "--latex",
        action="store_true",
        help="print the table, each method's formula with the numbers of one k, the methods "
        "without a column and the notes as a LaTeX fragment",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print JSON: "epsilon" (by method and k), "methods" (each with "theorem", '
        '"citation", "assumptions", "formula", "latex", "values", ...), "notes" and "absent" '
        "(expected methods without a column, with the reason)",
    )
    p.set_defaults(func=run)


def compare(mechanism: str, ks: list[int], delta: str) -> dict[str, dict[int, float]]:
    """epsilon (rounded up) by method and k.

    Raises:
        ValueError: for a malformed mechanism, k or delta.
    """
    return compare_methods(mechanism, ks, delta).table()


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit compare``."""
    try:
        ks = [int(x) for x in args.k.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--k must be comma-separated integers, got {args.k[:80]!r}") from None
    exact_option("--delta", args.delta, 0.0, 1.0)  # the rule of every number option
    if args.json and args.latex:
        raise ValueError("give --json or --latex, not both")
    result = compare_methods(args.mechanism, ks, args.delta, k_ref=args.at)  # shown as given
    # files first: a reader that stops early (``| head``) must not cost the plot
    if args.plot:
        result.plot(args.plot)
    if args.json:
        print(dumps(result.to_dict(), indent=2))
    elif args.latex:
        print(result.latex())
    else:
        print(result.text())
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0
