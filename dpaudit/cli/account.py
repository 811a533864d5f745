"""``dpaudit account EXPR``: the guarantee of an event expression, with its derivation."""

from __future__ import annotations

import argparse

from dpaudit.accountant import Accountant
from dpaudit.cli.exit_codes import dumps
from dpaudit.parse import parse_event, parse_number


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "account",
        help="account an event expression",
        description="Print the tightest proved (epsilon, delta) guarantee of an event "
        "expression and its derivation.  Example: dpaudit account "
        '"SelfComposed(Laplace(scale=10), 100)" --delta 1e-6',
    )
    p.add_argument("expression", help="an event expression, e.g. 'SelfComposed(Laplace(10), 100)'")
    p.add_argument("--delta", help="target delta in [0, 1) (default: the natural guarantee)")
    p.add_argument(
        "--symbols", default="", help="comma-separated names to treat as symbols (positive reals)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.add_argument("--latex", action="store_true", help="print the derivation as LaTeX")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    symbols = [s.strip() for s in args.symbols.split(",") if s.strip()]
    event = parse_event(args.expression, symbols=symbols)
    delta = None if args.delta is None else parse_number(args.delta)
    guarantee = Accountant().guarantee(event, delta)
    if args.json:
        print(dumps(guarantee.to_dict(), indent=2))
    elif args.latex:
        print(guarantee.latex())
    else:
        print(guarantee.text())
    return 0
