"""``dpaudit report``: audit reports for mechanisms and algorithms, and the up-to-date check.

    dpaudit report all --out reports --seed 2024      every built-in target (reports/)
    dpaudit report catalogue/laplace-count --out out  one target
    dpaudit report broken --out out --format html     a group, as HTML
    dpaudit report mypkg.mech:MECH --out out          a user's mechanism (or Target)
    dpaudit report --check reports                    are the stored reports up to date?
    dpaudit report --check reports --curves           ... privacy curves recomputed too
    dpaudit report --list                             the known targets

Exit status: 0 when every report matches its expectation, 1 on a finding (a private target
with a violation or a refuted claim, a broken target not caught; with ``--check``: stale
reports), 2 on bad input, 3 when an installed plugin fails to load (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
import time

from dpaudit.cli.exit_codes import dumps
from dpaudit.report import (
    REGENERATE_COMMAND,
    REPORTS_SEED,
    TARGETS,
    UnknownTargetError,
    check_up_to_date,
    generate,
    load_targets,
    resolve_targets,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser(
        "report",
        help="write audit reports (Markdown or HTML) with an index page",
        description="Write, per target, a report: claim, declared plan, accountant's guarantee "
        "and the alternatives it beat, verification status, the audit's certified "
        "lower bound, and plots; plus an index with one verdict line per target. "
        f"The committed reports: {REGENERATE_COMMAND}",
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help="target names, glob patterns (catalogue/*), groups (catalogue, broken, "
        "'source documents'), 'all' (default), or MODULE:OBJECT",
    )
    p.add_argument("--out", help="output directory (required unless --check or --list)")
    p.add_argument("--format", choices=("md", "html"), default="md", help="default: md")
    p.add_argument(
        "--seed",
        type=int,
        default=REPORTS_SEED,
        help=f"seed of the audits (default {REPORTS_SEED})",
    )
    p.add_argument(
        "--no-audit",
        action="store_true",
        help="skip the audits (accountant and verifier only; fast)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per target (verdict, bounds, report path)",
    )
    p.add_argument(
        "--check",
        metavar="DIR",
        help="check that the reports in DIR are up to date (fast; no audit)",
    )
    p.add_argument(
        "--curves",
        action="store_true",
        help="with --check: also recompute every report's privacy curve (about half a "
        "minute; catches an accountant change)",
    )
    p.add_argument("--list", action="store_true", help="list the known targets")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress (default: when stderr is a terminal)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit report``; see the module docstring for the exit status."""
    load_targets()  # a broken installed plugin: PluginError, exit 3 (dpaudit.cli.main)
    if args.list:
        if args.json:
            print(
                dumps(
                    [
                        {"target": t.name, "group": t.group, "title": t.title}
                        for t in TARGETS.values()
                    ],
                    indent=2,
                )
            )
            return 0
        for t in TARGETS.values():
            print(f"{t.name:<48} {t.group:<18} {t.title}")
        return 0
    try:
        targets = resolve_targets(args.targets or None)
    except UnknownTargetError as err:
        raise ValueError(str(err)) from None
    if args.check:
        problems = check_up_to_date(
            args.check, targets if args.targets else None, curves=args.curves
        )
        if args.json:
            print(dumps({"up_to_date": not problems, "problems": problems}, indent=2))
        else:
            for line in problems:
                print(line)
            print(
                "reports are up to date"
                if not problems
                else f"{len(problems)} problem(s); regenerate with `{REGENERATE_COMMAND}`"
            )
        return 1 if problems else 0
    if args.curves:
        raise ValueError("--curves applies to --check DIR only")
    if not args.out:
        raise ValueError("--out DIR is required (or give --check DIR or --list)")
    start = time.monotonic()
    command = (
        REGENERATE_COMMAND
        if (
            args.targets in ([], ["all"])
            and args.out == "reports"
            and args.seed == REPORTS_SEED
            and args.format == "md"
            and not args.no_audit
        )
        else None
    )
    reports = generate(
        targets,
        args.out,
        fmt=args.format,
        seed=args.seed,
        audit=not args.no_audit,
        progress=args.progress,
        command=command,
    )
    seconds = time.monotonic() - start
    findings = [r for r in reports if r["verdict"]["finding"]]
    if args.json:
        rows = []
        for r in reports:
            a = r.get("audit") or {}
            rows.append(
                {
                    "target": r["target"]["name"],
                    "verdict": r["verdict"]["kind"],
                    "finding": r["verdict"]["finding"],
                    "line": r["verdict"]["line"],
                    "epsilon_claimed": r["target"]["epsilon"],
                    "delta": r["target"]["delta"],
                    "epsilon_upper": (r.get("guarantee") or {}).get("epsilon_upper"),
                    "claim_status": (r.get("verification") or {}).get("status"),
                    "epsilon_lower": a.get("epsilon_lower"),
                    "confidence": a.get("confidence"),
                    "report": f"{args.out}/{r['target']['name'].replace('/', '--')}.{args.format}",
                }
            )
        print(dumps(rows, indent=2, default=str))
    else:
        for r in reports:
            mark = "!" if r["verdict"]["finding"] else " "
            print(f"{mark} {r['target']['name']:<44} {r['verdict']['line']}")
        print(
            f"{len(reports)} reports in {args.out}/ ({seconds:.0f} s); "
            f"{len(findings)} unexpected finding(s)",
            file=sys.stderr,
        )
    return 1 if findings else 0
