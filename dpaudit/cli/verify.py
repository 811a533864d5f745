"""``dpaudit verify``: check privacy claims and inequalities over parameter domains.

dpaudit verify --all                      one row per registered claim
dpaudit verify --claim 004/lemma-a1       one claim, with its proof steps
dpaudit verify "exp(x) - 1 <= 2*x" --domain "0 < x <= 5/4"

Exit status: 0 every claim or the inequality proved; 1 one refuted (or a claim that could not
be checked); 4 none refuted but one undecided ("unknown": neither proved nor refuted within the
budgets; not a pass); 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from dpaudit.cli.exit_codes import ExitCode, dumps
from dpaudit.cli.numbers import float_option
from dpaudit.verify.claims import CLAIMS, get_claim, load_claim_modules
from dpaudit.verify.domain import Domain
from dpaudit.verify.engine import MAX_WORK, TIME_LIMIT
from dpaudit.verify.prove import verify_claim
from dpaudit.verify.relax import verify_with_relaxation

#: Per-inequality budgets of ``verify --all`` (keep the whole table under a minute): boxes
#: and work units decide every verdict (the same on any machine, under any load); the time
#: limit (CPU seconds) is a safety net that a verdict it cut short names.
ALL_TIME_LIMIT = 30.0
ALL_MAX_BOXES = 1200
ALL_MAX_WORK = 2500


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``verify`` subcommand."""
    p = subparsers.add_parser(
        "verify",
        help="prove or refute privacy claims and inequalities over a domain",
        description="Prove or refute a privacy claim or an inequality over a parameter domain: "
        "symbolic simplification, then rigorous interval branch-and-bound. Exit status 0 "
        "proved, 1 refuted, 4 undecided (neither: not a pass).",
    )
    p.add_argument("inequality", nargs="?", help="an inequality such as 'exp(x) - 1 <= 2*x'")
    p.add_argument("--domain", default="", help="e.g. '0 < x <= 5/4, k >= 1 integer'")
    p.add_argument("--all", action="store_true", help="verify every registered claim")
    p.add_argument("--claim", help="verify one registered claim by key")
    p.add_argument(
        "--time-limit",
        default=None,
        help="CPU-seconds safety net per inequality (default 30 with --all, else "
        "120); the box and work budgets decide the verdicts",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


#: Largest ``--time-limit`` accepted (CPU seconds per inequality).
MAX_TIME_LIMIT = 3600.0


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit verify``; exit status 1 when something is refuted."""
    args.time_limit = float_option(
        "--time-limit", args.time_limit, 0.0, MAX_TIME_LIMIT, low_open=True, high_open=False
    )
    if args.all or args.claim:
        loads = load_claim_modules()
        errors = [m for m in loads if m.status == "error"]
        for m in errors:
            print(
                f"dpaudit verify: claim module {m.module} failed to import: {m.detail}",
                file=sys.stderr,
            )
        keys = list(CLAIMS) if args.all else [get_claim(args.claim).key]
        limit = args.time_limit or (ALL_TIME_LIMIT if args.all else TIME_LIMIT)
        boxes = ALL_MAX_BOXES if args.all else 4000
        work = ALL_MAX_WORK if args.all else MAX_WORK
        rows: list[dict[str, Any]] = []
        start = time.monotonic()
        for key in keys:
            try:
                v = verify_claim(CLAIMS[key], time_limit=limit, max_boxes=boxes, max_work=work)
            except (ValueError, ArithmeticError, TypeError) as err:
                rows.append(
                    {
                        **CLAIMS[key].row(),
                        "status": "error",
                        "detail": f"{type(err).__name__}: {err}",
                    }
                )
                continue
            rows.append(v.row())
            if args.claim:
                for name, sv in v.steps:
                    rows[-1].setdefault("steps", []).append(f"{name}: {sv.summary()}")
        _print(rows, args.json, time.monotonic() - start)
        refuted = any(r["status"] in ("refuted", "error") for r in rows)
        if refuted or errors:
            return int(ExitCode.FINDING)
        undecided = any(r["status"] == "unknown" for r in rows)
        return int(ExitCode.UNDECIDED if undecided else ExitCode.OK)
    if not args.inequality:
        raise ValueError("give an inequality, --claim KEY or --all")
    domain = Domain.parse(args.domain)
    verdict = verify_with_relaxation(
        args.inequality, domain, time_limit=args.time_limit or TIME_LIMIT
    )
    if args.json:
        print(
            dumps(
                {
                    "status": verdict.status,
                    "summary": verdict.summary(),
                    "counterexample": {
                        k: str(x) for k, x in (verdict.counterexample or {}).items()
                    },
                },
                indent=2,
            )
        )
    else:
        print(verdict)
    if verdict.refuted:
        return int(ExitCode.FINDING)
    return int(ExitCode.OK if verdict.proved else ExitCode.UNDECIDED)


def _print(rows: list[dict], as_json: bool, seconds: float) -> None:
    if as_json:
        print(dumps(rows, indent=2))
        return
    print(f"{'document':<34} {'theorem':<26} {'status':<8} domain / detail")
    for r in rows:
        print(f"{r['document'][:34]:<34} {r['theorem'][:26]:<26} {r['status']:<8} {r['domain']}")
        print(f"{'':<70}{r['detail']}")
        for s in r.get("steps", []):
            print(f"{'':<70}step {s}")
    print(f"{len(rows)} claims in {seconds:.1f} s")
