"""``dpaudit audit``: certify a lower bound on a mechanism's epsilon from the command line.

    dpaudit audit mechanisms.broken:BrokenLaplaceTooLittleNoise
    dpaudit audit mymodule:my_mechanism --d0 '[1, 0, 1]' --d1 '[1, 0]' --epsilon 1 --json
    dpaudit audit mymodule:noisy_max --query-pairs 5 --epsilon 1 --samples 1000000
    dpaudit audit mymodule:noisy_sum --records "(-1,10),{0,1}" --relation add-remove --epsilon 1

OBJECT is a mechanism (``mechanism(dataset, rng)``) or a class whose no-argument instance is
one. Datasets come from ``--d0``/``--d1`` (JSON), ``--query-pairs K`` (the standard patterns
for K query answers) or the object's own ``pairs``; or, with ``--records DOMAIN``, the
neighbouring datasets are searched over a record domain (:func:`dpaudit.audit.audit_records`;
the syntax of DOMAIN is in :mod:`dpaudit.audit.domain`). Epsilon and delta default to the
object's ``epsilon``/``delta`` (its claim). OBJECT is imported from an installed module or
from the current directory. Exit status 1 on a violation, 0 otherwise, 2 on bad input.

With ``--records``, the search also tries edge values (NaN, infinities, values outside the
declared range, ...) unless ``--no-edge-values``; a candidate on which OBJECT raises is
refused and listed (``--on-error skip``, the default), aborts the audit (``raise``) or is an
outcome of the mechanism (``output``); an OBJECT whose ``epsilon`` or ``delta`` attribute is a
function of the dataset has its claim read on each pair (the larger of its two datasets').
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpaudit.audit.domain import RELATIONS
from dpaudit.audit.limits import DEFAULT_MAX_MEMORY_BYTES, MAX_SAMPLES
from dpaudit.audit.options import ARITHMETICS, CERTIFICATIONS
from dpaudit.cli.datasets import add_search_options, json_dataset, record_sizes, search_options
from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import float_option
from dpaudit.plugins import load_object

#: Default samples per dataset on the command line.
DEFAULT_SAMPLES = 1_000_000


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``audit`` subcommand."""
    p = subparsers.add_parser(
        "audit",
        help="certify a lower bound on a mechanism's epsilon by running it",
        description="Run a mechanism on neighbouring datasets, choose an output event on "
        "selection samples and certify it on fresh samples (Clopper-Pearson). "
        "Exit status 1 when the certified lower bound exceeds the claim.",
    )
    p.add_argument(
        "target", metavar="MODULE:OBJECT", help="e.g. mechanisms.broken:BrokenLaplaceTooLittleNoise"
    )
    p.add_argument(
        "--epsilon", help="claimed epsilon, a finite number >= 0 (default: OBJECT.epsilon)"
    )
    p.add_argument("--delta", help="claimed delta in [0, 1) (default: OBJECT.delta or 0)")
    p.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help=f"samples per dataset, in [10, {MAX_SAMPLES:.0e}] (default {DEFAULT_SAMPLES})",
    )
    p.add_argument("--confidence", default="0.95", help="confidence level in (0, 1) (0.95)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: fresh, reported)")
    p.add_argument("--d0", help="first dataset as JSON")
    p.add_argument("--d1", help="neighbouring dataset as JSON")
    p.add_argument(
        "--query-pairs",
        type=int,
        metavar="K",
        help="search the standard neighbouring patterns of K query answers",
    )
    p.add_argument(
        "--records",
        metavar="DOMAIN",
        help="search neighbouring datasets over this record domain instead of giving them: "
        "one column each, '(low,high)' numeric or '{a,b,c}' / '[a,b,c]' categorical "
        'numbers, e.g. "(-1,10),(0,1)"; OBJECT is called as fn(data, rng) with a 2-D '
        "float array, one row per record",
    )
    p.add_argument(
        "--relation",
        choices=RELATIONS,
        default="replace-one",
        help="with --records: replace one record, or add/remove one (default replace-one)",
    )
    p.add_argument(
        "--sizes",
        metavar="MIN,MAX",
        default="1,8",
        help="with --records: dataset sizes searched, inclusive (default 1,8)",
    )
    p.add_argument(
        "--budget",
        metavar="SECONDS",
        help="with --records: time budget of the search (default: a fixed number of rounds)",
    )
    add_search_options(p)
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="local worker processes, at most the machine's CPUs (at least 2, at most 64)",
    )
    p.add_argument(
        "--max-memory",
        type=int,
        default=DEFAULT_MAX_MEMORY_BYTES,
        metavar="BYTES",
        help=f"refuse an audit whose samples need more memory (default {DEFAULT_MAX_MEMORY_BYTES})",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the sampling on a Dask scheduler, e.g. tcp://127.0.0.1:8786 (same result)",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="exact mode: use OBJECT.probabilities(dataset) instead of sampling",
    )
    p.add_argument(
        "--arithmetic",
        choices=ARITHMETICS,
        default=None,
        help="what the claim is about: 'float' (the code as it runs, in floats of the outputs' "
        "precision, float64/32/16 or bfloat16: also search events over the outputs' bit "
        "patterns in that format) or 'real' (real arithmetic: leave them out); "
        "default: OBJECT.arithmetic, else float (docs/floating-point.md)",
    )
    p.add_argument(
        "--certification",
        choices=CERTIFICATIONS,
        default="auto",
        help="how the chosen event is certified: 'auto' (default: 'joint' when --delta > 0, "
        "'clopper-pearson' when --delta is 0), 'joint' (one exact test of both counts: "
        "certifies more at delta > 0), 'clopper-pearson' (two one-sided exact binomial "
        "bounds; docs/tradeoff.md) or 'sequential' (anytime-valid bounds on growing "
        "batches, stopping as soon as a violation is certified or the budget cannot reach "
        "the claim; docs/auditing.md)",
    )
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _load(target: str) -> Any:
    obj = load_object(target)
    return obj() if isinstance(obj, type) else obj


def _run_records(args: argparse.Namespace, fn: Any, epsilon: Any, delta: Any) -> Any:
    given = [
        name
        for name, value in (
            ("--d0", args.d0),
            ("--d1", args.d1),
            ("--query-pairs", args.query_pairs),
            ("--exact", args.exact or None),
        )
        if value is not None
    ]
    if given:
        raise ValueError(
            f"--records must not be combined with {', '.join(given)} (it searches the "
            "datasets itself), got both"
        )
    from dpaudit.audit import audit_records
    from dpaudit.audit.records_text import parse_records

    domain = parse_records(args.records)
    return audit_records(
        fn,
        domain,
        epsilon=epsilon,
        delta=delta,
        relation=args.relation,
        sizes=record_sizes(args.sizes),
        samples=args.samples,
        confidence=args.confidence,
        seed=args.seed,
        budget_seconds=args.budget,
        workers=args.workers,
        executor=args.scheduler,
        max_memory_bytes=args.max_memory,
        arithmetic=args.arithmetic,
        certification=args.certification,
        **search_options(args),
    )


def _claim(
    args: argparse.Namespace, mechanism: Any, claimed: float | None, given_delta: float | None
) -> tuple[Any, Any]:
    """``--epsilon``/``--delta`` (``claimed``/``given_delta``, checked), else OBJECT's
    ``epsilon``/``delta`` (a function of the dataset only with ``--records``)."""
    epsilon = claimed if claimed is not None else getattr(mechanism, "epsilon", None)
    if epsilon is None:
        raise ValueError("--epsilon must be given (OBJECT has no epsilon attribute), got none")
    delta = given_delta if given_delta is not None else getattr(mechanism, "delta", 0.0)
    if args.records is None:
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if callable(value):
                raise ValueError(
                    f"--{name} must be given: OBJECT.{name} is a function of the dataset, "
                    "which only a --records search reads (on each pair it tries), got "
                    f"{getattr(value, '__name__', type(value).__name__)}"
                )
        delta = float(delta)
    return epsilon, delta


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit audit``; exit status 1 on a violation."""
    # one rule for every command's numbers (dpaudit.cli.numbers): finite, in range
    claimed = float_option("--epsilon", args.epsilon, 0.0)
    given_delta = float_option("--delta", args.delta, 0.0, 1.0)
    args.confidence = float_option("--confidence", args.confidence, 0.0, 1.0, low_open=True)
    args.budget = float_option("--budget", args.budget, 0.0, low_open=True)
    # the auditor (SciPy) is imported here, not at start-up: ``dpaudit audit --help`` and
    # argument errors answer at once
    from dpaudit.audit import audit as run_audit
    from dpaudit.audit import exact_audit, query_pairs

    mechanism = _load(args.target)
    options = search_options(args)  # checked before anything runs
    epsilon, delta = _claim(args, mechanism, claimed, given_delta)
    if args.records is not None:
        result = _run_records(args, mechanism, epsilon, delta)
        return _show(result, args)
    d0 = d1 = pairs = None
    if args.d0 is not None or args.d1 is not None:
        if args.d0 is None or args.d1 is None:
            raise ValueError("--d0 and --d1 must be given together, got only one")
        d0, d1 = json_dataset(args.d0, "--d0"), json_dataset(args.d1, "--d1")
    elif args.query_pairs is not None:
        pairs = query_pairs(args.query_pairs)
    else:
        pairs = getattr(mechanism, "pairs", None)
        if not pairs:
            raise ValueError(
                "datasets must be given: --d0/--d1, --query-pairs K, or an"
                " OBJECT with a pairs attribute; got none"
            )
    if args.exact and args.scheduler is not None:
        raise ValueError("--scheduler must not be combined with --exact (nothing to sample)")
    if args.exact:
        result = exact_audit(mechanism, d0, d1, epsilon=epsilon, delta=delta, pairs=pairs)
    else:
        result = run_audit(
            mechanism,
            d0,
            d1,
            epsilon=epsilon,
            delta=delta,
            samples=args.samples,
            confidence=args.confidence,
            seed=args.seed,
            pairs=pairs,
            workers=args.workers,
            executor=args.scheduler,
            progress=False if args.no_progress else None,
            max_memory_bytes=args.max_memory,
            arithmetic=args.arithmetic,
            certification=args.certification,
            **options,
        )
    return _show(result, args)


def _show(result: Any, args: argparse.Namespace) -> int:
    for warning in getattr(result, "warnings", ()):
        print(f"dpaudit audit: warning: {warning}", file=sys.stderr)
    print(dumps(result.to_dict(), indent=2) if args.json else result, file=sys.stdout)
    return 1 if result.violation else 0
