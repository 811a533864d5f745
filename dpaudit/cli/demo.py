"""``dpaudit demo``: a short tour on built-in examples."""

from __future__ import annotations

import argparse

from dpaudit.demo import run_demo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="a short tour on built-in examples",
        description="Account event trees, derive a symbolic guarantee, record "
        "a run in a ledger, and (when installed) audit and train "
        "the source documents' learners.",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="only the built-in accounting sections (no audit or learners)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # a broken installed plugin raises PluginError: exit 3, one line (dpaudit.cli.main)
    print(run_demo(include_optional=not args.quick))
    return 0
