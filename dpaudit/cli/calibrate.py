"""``dpaudit calibrate EXPR --epsilon E --delta D --for NAME``: the best value of one parameter.

The smallest noise (or the largest number of steps, sampling rate, ...) at which the
accountant *certifies* the target, with the certified bounds at that value
(:func:`dpaudit.accountant.calibrate`).  ``--delta-target D`` instead of ``--delta`` asks for
a delta target at the fixed epsilon ``--epsilon``; ``--plan FILE`` calibrates one field of a
plan file (``--for`` its path or its name; ``--write PATH`` saves the calibrated plan).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpaudit.cli.exit_codes import dumps


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` subcommand."""
    p = sub.add_parser(
        "calibrate",
        help="the best value of one parameter whose certified guarantee meets a target",
        description="Find the smallest noise (or the largest number of steps, sampling rate, "
        "sensitivity, ...) at which the accountant certifies epsilon <= E at delta D (or, with "
        "--delta-target, delta <= D at epsilon E), and print the certified bounds at that "
        "value.  The direction is decided from the parameter's role and checked on the "
        'certified bounds.  Example: dpaudit calibrate "SelfComposed(PoissonSampled('
        'Gaussian(sigma), 256/60000), 14062)" --epsilon 3 --delta 1e-5 --for sigma',
    )
    p.add_argument(
        "expression",
        nargs="?",
        help="an event expression with one parameter, e.g. 'SelfComposed(Laplace(b), 100)' "
        "(or use --plan)",
    )
    p.add_argument(
        "--for",
        dest="parameter",
        required=True,
        metavar="NAME",
        help="the parameter to calibrate (with --plan: a field's path, e.g. "
        "event.event.event.sigma, or its name when the plan has one such field)",
    )
    p.add_argument("--epsilon", required=True, help="the epsilon target (or the fixed epsilon)")
    p.add_argument("--delta", help="the delta of the epsilon target, in [0, 1)")
    p.add_argument(
        "--delta-target",
        metavar="D",
        help="instead of --delta: a delta target in [0, 1) at the fixed --epsilon",
    )
    p.add_argument("--low", help="the smallest value searched (default: the admissible range)")
    p.add_argument("--high", help="the largest value searched (default: the admissible range)")
    p.add_argument("--plan", help="calibrate one field of a JSON/YAML plan file")
    p.add_argument(
        "--write",
        metavar="PATH",
        help="with --plan: write the calibrated plan (JSON) to this path",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print a JSON object: "parameter", "value", "epsilon_upper", "epsilon_lower", '
        '"epsilon_target", "delta" (with --delta-target: "delta_upper", "delta_lower", '
        '"delta_target", "epsilon"), then how it was found',
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit calibrate``."""
    from dpaudit.accountant.calibration import calibrate
    from dpaudit.parse import parse_number

    given = [n for n, v in (("an event expression", args.expression), ("--plan", args.plan)) if v]
    if len(given) != 1:
        raise ValueError(
            "give exactly one of an event expression and --plan FILE, got "
            + (" and ".join(given) if given else "neither")
        )
    if args.write is not None and args.plan is None:
        raise ValueError("--write saves a calibrated plan: give --plan FILE too")
    numbers = {
        k: None if v is None else parse_number(v)
        for k, v in (
            ("epsilon", args.epsilon),
            ("delta", args.delta),
            ("delta_target", args.delta_target),
            ("low", args.low),
            ("high", args.high),
        )
    }
    if args.plan is not None:
        from dpaudit.accountant.calibration_plan import calibrate_plan, calibrated_plan
        from dpaudit.plans import load_plan, plan_to_data

        plan = load_plan(args.plan)
        result = calibrate_plan(plan, args.parameter, **numbers)
        if args.write is not None:
            data = plan_to_data(calibrated_plan(plan, result))
            Path(args.write).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    else:
        result = calibrate(args.expression, parameter=args.parameter, **numbers)
    if args.json:
        out = result.to_dict()
        if args.write is not None:
            out["written"] = args.write
        print(dumps(out, indent=2))
    else:
        print(result.text())
        if args.write is not None:
            print(f"calibrated plan written to {args.write}")
    return 0
