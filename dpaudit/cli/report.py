"""``dpaudit report``: audit reports for mechanisms and algorithms, and the up-to-date check.

    dpaudit report all --out reports --seed 2024      every built-in target (reports/)
    dpaudit report catalogue/laplace-count --out out  one target
    dpaudit report broken --out out --format html     a group, as HTML
    dpaudit report mypkg.mech:MECH --out out          a user's Target, or a mechanism with
                                                      its claim (epsilon, pairs attributes)
    dpaudit report mymod:fn --epsilon 1 --d0 '[1,2]' --d1 '[1]' --out out
    dpaudit report mymod:fn --epsilon 1 --records "(-1,10)" --out out
                                                      a function, its claim given as in audit
    dpaudit report mymod:fn --epsilon 1 --records "(-1,10)" --no-edge-values --on-error output
                        --out out                     ... and the search's options as in audit
    dpaudit report --check reports                    are the stored reports up to date?
    dpaudit report --check reports --curves           ... privacy curves recomputed too
    dpaudit report --list [PATTERN ...]               the known targets (those matched)

Exit status: 0 when every report matches its expectation, 1 on a finding (a private target
with a violation or a refuted claim, a broken target not caught; with ``--check``: stale
reports), 2 on bad input, 3 when an installed plugin fails to load (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from dpaudit.cli.datasets import add_search_options, json_dataset, record_sizes, search_options
from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import float_option
from dpaudit.report.settings import REGENERATE_COMMAND, REPORTS_SEED

if TYPE_CHECKING:
    from dpaudit.report import MechanismClaim

# The report machinery (accountant, auditor, matplotlib) and the targets' code are imported
# in run(), after the arguments are checked: ``--list`` reads the plugins' target index
# (dpaudit.report.listing) and a usage error or an unknown target answers at once.


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
    mech = p.add_argument_group(
        "a bare mechanism named as MODULE:OBJECT (a function or object called as "
        "mechanism(dataset, rng)): its claim and datasets, as `dpaudit audit` takes them "
        "(default: the object's epsilon, delta, pairs and samples attributes)"
    )
    mech.add_argument("--epsilon", help="claimed epsilon, a finite number >= 0")
    mech.add_argument("--delta", help="claimed delta in [0, 1) (default 0)")
    mech.add_argument("--d0", help="first dataset as JSON")
    mech.add_argument("--d1", help="neighbouring dataset as JSON")
    mech.add_argument(
        "--records",
        metavar="DOMAIN",
        help="search the neighbouring datasets over this record domain instead, e.g. "
        '"(-1,10),{0,1}" (see dpaudit audit --help)',
    )
    mech.add_argument("--relation", help="with --records: replace-one (the default) or add-remove")
    mech.add_argument("--sizes", metavar="MIN,MAX", help="with --records (default 1,8)")
    add_search_options(mech)
    mech.add_argument(
        "--samples",
        type=int,
        help="samples per dataset of the audit (default: the object's samples, else 200,000)",
    )
    p.add_argument("--list", action="store_true", help="list the known targets")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="show progress and an estimate of the time left on stderr: a bar on a terminal, "
        "one line per target elsewhere (default: on; `report all` takes about 15 minutes on "
        "2 cores)",
    )
    p.set_defaults(func=run)


#: The options of a bare mechanism's claim, as (flag, attribute).
MECHANISM_OPTIONS = (
    ("--epsilon", "epsilon"),
    ("--delta", "delta"),
    ("--d0", "d0"),
    ("--d1", "d1"),
    ("--records", "records"),
    ("--relation", "relation"),
    ("--sizes", "sizes"),
    ("--no-edge-values", "no_edge_values"),
    ("--on-error", "on_error"),
    ("--samples", "samples"),
)


def _mechanism_claim(args: argparse.Namespace) -> MechanismClaim | None:
    """The claim and datasets the command line gives a bare mechanism (None: none given).

    Raises:
        ValueError: for a malformed or inconsistent option (named).
    """
    given = [(flag, getattr(args, attr)) for flag, attr in MECHANISM_OPTIONS]
    given = [(flag, value) for flag, value in given if value is not None and value is not False]
    if not given:
        return None
    # a switch (--no-edge-values) is one word, an option with its value two
    arguments = tuple(
        word for flag, value in given for word in ((flag,) if value is True else (flag, str(value)))
    )
    if (args.d0 is None) != (args.d1 is None):
        raise ValueError("--d0 and --d1 must be given together, got only one")
    if args.records is not None and args.d0 is not None:
        raise ValueError("--records must not be combined with --d0/--d1 (it searches the pair)")
    if args.records is None and (args.relation is not None or args.sizes is not None):
        raise ValueError("--relation and --sizes apply to --records only")
    options = search_options(args)
    from dpaudit.audit.limits import MAX_SAMPLES
    from dpaudit.report import MechanismClaim, Records

    if args.samples is not None and not 10 <= args.samples <= MAX_SAMPLES:
        raise ValueError(
            f"--samples must be an integer in [10, {MAX_SAMPLES:,}], got {args.samples}"
        )
    records = None
    if args.records is not None:
        from dpaudit.audit.records_text import parse_records

        records = Records(
            tuple(parse_records(args.records)),
            relation=args.relation or "replace-one",
            sizes=record_sizes(args.sizes) if args.sizes is not None else (1, 8),
        )
    pairs = None
    if args.d0 is not None:
        pairs = ((json_dataset(args.d0, "--d0"), json_dataset(args.d1, "--d1")),)
    return MechanismClaim(
        epsilon=float_option("--epsilon", args.epsilon, 0.0),
        delta=float_option("--delta", args.delta, 0.0, 1.0),
        pairs=pairs,
        records=records,
        samples=args.samples,
        audit_options=options,
        arguments=arguments,
    )


def _check_arguments(args: argparse.Namespace) -> None:
    """The usage errors found without building a target (they answer at once).

    Raises:
        ValueError: naming the option.
    """
    if args.list and (args.check or args.out):
        raise ValueError("--list takes no --check or --out (only TARGET patterns to list)")
    if args.curves and not args.check:
        raise ValueError("--curves applies to --check DIR only")
    if not (args.list or args.check or args.out):
        raise ValueError("--out DIR is required (or give --check DIR or --list)")


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit report``; see the module docstring for the exit status."""
    from dpaudit.report.listing import matches, target_index, unknown_specs

    _check_arguments(args)
    claim = _mechanism_claim(args)
    # a broken installed plugin: PluginError, exit 3 (dpaudit.cli.main)
    listed = target_index()
    unknown = unknown_specs(args.targets, listed)
    if unknown is not None:
        raise ValueError(unknown)
    if args.list:
        if args.targets:  # the targets the patterns name
            listed = [t for t in listed if any(matches(s, t) for s in args.targets)]
        if args.json:
            rows = [{"target": t.name, "group": t.group, "title": t.title} for t in listed]
            print(dumps(rows, indent=2))
            return 0
        for t in listed:
            print(f"{t.name:<48} {t.group:<18} {t.title}")
        return 0
    from dpaudit.report import (
        UnknownTargetError,
        check_up_to_date,
        generate,
        load_targets,
        resolve_targets,
    )

    load_targets()
    try:
        targets = resolve_targets(args.targets or None, claim=claim)
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
        out: list[dict[str, object]] = []
        for r in reports:
            a = r.get("audit") or {}
            out.append(
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
        print(dumps(out, indent=2, default=str))
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
