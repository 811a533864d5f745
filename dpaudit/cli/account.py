"""``dpaudit account EXPR``: the guarantee of an event expression, with its derivation.

Also ``--plan FILE`` (the event from a plan file, :mod:`dpaudit.plans`), ``--opacus FILE``
(the DP-SGD schedule of an Opacus accountant's history saved as JSON,
:mod:`dpaudit.integrations.opacus`), ``--epsilon E``
(certified bounds on delta at E instead of epsilon at delta) and ``--curve PATH`` (the privacy
profile epsilon(delta) with its certified band, as a figure, or as data for ``.json``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import exact_option


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "account",
        help="account an event expression",
        description="Print the tightest proved (epsilon, delta) guarantee of an event "
        "expression (or of a plan file, or of an Opacus history) and its derivation; with "
        "--epsilon, certified bounds on delta at that epsilon; with --curve, the whole privacy "
        "profile.  Example: dpaudit "
        'account "SelfComposed(Laplace(scale=10), 100)" --delta 1e-6',
    )
    p.add_argument(
        "expression",
        nargs="?",
        help="an event expression, e.g. 'SelfComposed(Laplace(10), 100)' (or use --plan)",
    )
    p.add_argument("--plan", help="read the event (and delta/epsilon) from a JSON/YAML plan file")
    p.add_argument(
        "--opacus",
        metavar="FILE",
        help="read the event from an Opacus accountant history saved as JSON "
        "(json.dump(accountant.history) or its state_dict())",
    )
    p.add_argument("--delta", help="target delta in [0, 1) (default: the natural guarantee)")
    p.add_argument(
        "--epsilon", help="report certified bounds on delta at this epsilon >= 0 instead"
    )
    p.add_argument(
        "--curve",
        metavar="PATH",
        help="write the privacy profile epsilon(delta) with its certified band: a figure "
        "(.png, .svg, .pdf) or data (.json)",
    )
    p.add_argument(
        "--symbols", default="", help="comma-separated names to treat as symbols (positive reals)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.add_argument("--latex", action="store_true", help="print the derivation as LaTeX")
    p.set_defaults(func=run)


def _inputs(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The event, delta and epsilon of the command line (a plan's unless overridden)."""
    from dpaudit.parse import parse_event

    sources = {"an event expression": args.expression, "--plan": args.plan}
    sources["--opacus"] = getattr(args, "opacus", None)
    given = [name for name, value in sources.items() if value is not None]
    if len(given) != 1:
        raise ValueError(
            "give exactly one of an event expression and --plan FILE (or --opacus FILE), got "
            + (" and ".join(given) if given else "neither")
        )
    delta = epsilon = None
    if args.plan is not None:
        from dpaudit.plans import load_plan

        plan = load_plan(args.plan)
        event, delta, epsilon = plan.event, plan.delta, plan.epsilon
    elif args.expression is None:
        from dpaudit.integrations.opacus import from_opacus, load_opacus_history

        event = from_opacus(load_opacus_history(args.opacus))
    else:
        symbols = [s.strip() for s in args.symbols.split(",") if s.strip()]
        event = parse_event(args.expression, symbols=symbols)
    if args.delta is not None:
        delta = exact_option("--delta", args.delta, 0.0, 1.0)
    if args.epsilon is not None:
        epsilon = exact_option("--epsilon", args.epsilon, 0.0)
    return event, delta, epsilon


def run(args: argparse.Namespace) -> int:
    from dpaudit.accountant import Accountant

    event, delta, epsilon = _inputs(args)
    acc = Accountant()
    if args.curve is not None:
        return _curve(acc, event, Path(args.curve), args.json)
    if epsilon is not None:
        if args.latex:
            raise ValueError("--latex shows a derivation; with --epsilon use --json or text")
        bounds = acc.delta_for_epsilon(event, epsilon)
        print(dumps(bounds.to_dict(), indent=2) if args.json else bounds.text())
        return 0
    guarantee = acc.guarantee(event, delta)
    if args.json:
        print(dumps(guarantee.to_dict(), indent=2))
    elif args.latex:
        print(guarantee.latex())
    else:
        print(guarantee.text())
    return 0


def _curve(acc: Any, event: Any, path: Path, as_json: bool) -> int:
    suffix = path.suffix.lower()
    if suffix not in (".json", ".png", ".svg", ".pdf"):
        raise ValueError(f"--curve must end in .json, .png, .svg or .pdf, got {str(path)!r}")
    curve = acc.curve(event)
    if suffix == ".json":
        path.write_text(curve.to_json() + "\n", encoding="utf-8")
    else:
        curve.plot().savefig(path)
    print(dumps({**curve.to_dict(), "written": str(path)}, indent=2) if as_json else curve.text())
    return 0
