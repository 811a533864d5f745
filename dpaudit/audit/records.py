"""Record-level neighbour search: audit a function over datasets, with no hand-designed pair.

:func:`audit_records` takes a function over datasets (``fn(data, rng)``, ``data`` a 2-D float
array with one row per record), a record domain (:mod:`dpaudit.audit.domain`) and a
neighbouring relation, and looks for the two neighbouring datasets on which ``fn`` leaks the
most against its claim. It then audits that one pair with :func:`dpaudit.audit.audit`.

The search:

1. structured candidates, most promising first (:mod:`dpaudit.audit.record_pairs`): the
   all-low and all-high records exchanged in small, equal, duplicated and mixed datasets;
   with ``edge_values`` (the default) records holding NaN, infinities, values outside the
   declared range, -0.0, the smallest subnormal or the largest double, as the differing
   record and as the rest of the dataset; the centre, zero and corner records;
2. a local search: the best pairs so far are perturbed (a record moved towards a corner, an
   edge or onto an edge value, the other records made equal or duplicated, the dataset
   resized);
3. successive halving (:mod:`dpaudit.audit.racing`): every candidate is scored on a few
   search samples, the best quarter again on four times as many fresh ones, until a few
   remain; the best of the last stage is audited. The search draws at most
   :data:`~dpaudit.audit.racing.SEARCH_FACTOR` times the final audit's samples.

A candidate's score is how far the bound its best event predicts for certification exceeds
its own pair's claim (a claim may depend on the dataset: :mod:`dpaudit.audit.claims`), as in
DP-Sniper's and Delta-Siege's searches (Bichsel et al., S&P 2021; Lokna et al., S&P 2023) and
DP-Auditorium's dataset generators (Kong et al. 2024). A candidate on which ``fn`` raises is
refused and the search goes on (``on_error``).

Privacy of the verdict (why the bound stays valid however many candidates are tried, at
however many stages): every search sample, at every stage, comes from the search's own seed
stream (``SeedSequence`` children apart from the final audit's), so the chosen pair is a
function of samples independent of those the final audit draws. The final audit selects its
event on its own selection samples and certifies it once, on fresh samples, at the stated
confidence (Bonferroni over its two directions only), against the chosen pair's claim.
Conditionally on the pair chosen, its guarantee is that of :func:`dpaudit.audit.audit`; so the
certified bound is a lower bound on ``fn``'s epsilon on that pair with probability at least
``confidence``, and no correction for the number of candidates or stages is needed. Edge
values change which pairs are searched, not this argument: a pair holding NaN is a pair of
datasets like any other, and the claim is read on it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.audit.batches import ErrorsAsOutputs, seed_sequence
from dpaudit.audit.claims import Claim, ClaimValue
from dpaudit.audit.domain import ON_ERROR, RELATIONS, RecordDomain, check_domain
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.estimators import bound_level
from dpaudit.audit.limits import DEFAULT_MAX_MEMORY_BYTES, MAX_SAMPLES, MAX_WORKERS, worker_limit
from dpaudit.audit.monte_carlo import _check_size, audit
from dpaudit.audit.options import check_certification, resolve_families
from dpaudit.audit.racing import SEARCH_FACTOR, Race, plan
from dpaudit.audit.record_pairs import rows, structured
from dpaudit.audit.record_search import (
    CHILDREN,
    PARENTS,
    ROUNDS,
    every_candidate_refused,
    local_search,
    probe_first,
    unique_pairs,
)
from dpaudit.audit.records_result import RecordsAuditResult, edge_values_of_pair
from dpaudit.audit.runner import DEFAULT_BATCH_SIZE, Runner
from dpaudit.audit.selection import FAMILIES
from dpaudit.audit.streaming import held_samples
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import check_confidence
from dpaudit.audit.validation import is_int as _is_int
from dpaudit.audit.validation import is_number as _is_number

__all__ = [
    "MAX_DATASET_SIZE",
    "MAX_REFUSALS_LISTED",
    "ON_ERROR",
    "RELATIONS",
    "RecordsAuditResult",
    "audit_records",
]

#: Largest dataset size ``sizes`` may ask for.
MAX_DATASET_SIZE = 100_000
#: Structured candidates wanted in the race (the first ones in priority order; fewer when the
#: budget is small: :func:`dpaudit.audit.racing.plan`).
MAX_STRUCTURED = 48
#: ... and with edge values.
MAX_STRUCTURED_EDGE = 72
#: Share of the final audit's samples used to select its event (as in :func:`audit`).
SELECTION_FRACTION = 0.25
#: Refused candidates listed in the result (all are counted).
MAX_REFUSALS_LISTED = 20

# Seed streams below the root: search samples, the final audit, model fitting, moves, corners
# and the probe runs.
_SEARCH, _FINAL, _MODELS, _MOVES, _CORNERS, _PROBE = 0, 1, 2, 3, 4, 5


def _check_sizes(sizes: Any, relation: str) -> tuple[int, int]:
    ok = (
        isinstance(sizes, (tuple, list))
        and len(sizes) == 2
        and all(_is_int(v) for v in sizes)
        and 0 <= sizes[0] <= sizes[1] <= MAX_DATASET_SIZE
    )
    _check(
        "sizes",
        sizes,
        ok,
        f"a (min, max) pair of integers with 0 <= min <= max <= {MAX_DATASET_SIZE:,} "
        "(MAX_DATASET_SIZE)",
    )
    smin, smax = int(sizes[0]), int(sizes[1])
    if relation == "replace-one":
        _check("sizes", sizes, smax >= 1, "a (min, max) pair with max >= 1 for replace-one")
    else:
        _check(
            "sizes",
            sizes,
            smax >= smin + 1,
            "a (min, max) pair with max >= min + 1 for add-remove (a dataset and the same "
            "dataset with one more record must both fit)",
        )
    return smin, smax


def _check_arguments(
    fn: Any,
    relation: Any,
    samples: Any,
    confidence: Any,
    workers: Any,
    batch_size: Any,
    budget_seconds: Any,
    edge_values: Any,
    on_error: Any,
) -> None:
    """The checks of :func:`audit_records`'s scalar arguments (each naming its parameter)."""
    _check("fn", fn, callable(fn), "callable as fn(data, rng)")
    _check("relation", relation, relation in RELATIONS, f"one of {RELATIONS}")
    _check(
        "samples",
        samples,
        _is_int(samples) and 10 <= samples <= MAX_SAMPLES,
        f"an integer in [10, {MAX_SAMPLES:.0e}] (MAX_SAMPLES)",
    )
    check_confidence(confidence)
    limit = worker_limit()
    _check(
        "workers",
        workers,
        _is_int(workers) and 1 <= workers <= limit,
        f"an integer in [1, {limit}] (the machine's CPUs, at least 2, at most {MAX_WORKERS})",
    )
    _check("batch_size", batch_size, _is_int(batch_size) and batch_size >= 1, "an integer >= 1")
    _check(
        "budget_seconds",
        budget_seconds,
        budget_seconds is None or (_is_number(budget_seconds) and 0 < budget_seconds < math.inf),
        "None or a number of seconds > 0",
    )
    _check("edge_values", edge_values, isinstance(edge_values, bool), "True or False")
    _check("on_error", on_error, on_error in ON_ERROR, f"one of {ON_ERROR}")


def audit_records(
    fn: Callable[..., Any],
    domain: list[Any],
    *,
    epsilon: ClaimValue,
    delta: ClaimValue = 0.0,
    relation: str = "replace-one",
    sizes: tuple[int, int] = (1, 8),
    samples: int,
    confidence: float = 0.95,
    seed: int | np.random.SeedSequence | None = None,
    budget_seconds: float | None = None,
    workers: int = 1,
    executor: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
    arithmetic: str | None = None,
    certification: str = "auto",
    edge_values: bool = True,
    on_error: str = "skip",
) -> RecordsAuditResult:
    """Search neighbouring datasets over a record domain, then certify the worst pair found.

    Privacy:
        If ``fn`` is (epsilon', delta)-DP under ``relation`` for datasets of records in
        ``domain`` (with ``edge_values``, also holding edge values) with sizes in ``sizes``,
        then ``epsilon_lower <= epsilon'`` with probability at least ``confidence``: the pair
        is chosen on search samples apart from the final audit's, whose event is selected on
        its own selection samples and certified once on fresh ones (see the module
        docstring). A function meeting its claim on every pair is flagged (``violation``)
        with probability at most ``1 - confidence``.

    Args:
        fn: ``fn(data, rng)`` returning one output (as for :func:`audit`), where ``data`` is
            a read-only 2-D float array, one row per record; ``fn.batch(data, n, rng)`` is
            used when present.
        domain: one entry per column: a ``(low, high)`` tuple of finite numbers (numeric) or
            a list of allowed values (categorical); see :mod:`dpaudit.audit.domain`.
        epsilon: the claimed epsilon (>= 0), or a function ``epsilon(data)`` of one dataset
            returning it (e.g. from its size): a pair is checked against the larger claim of
            its two datasets.
        delta: the claimed delta, in [0, 1), or a function ``delta(data)`` (as ``epsilon``).
        relation: ``"replace-one"`` (same size, one record replaced) or ``"add-remove"`` (one
            record more).
        sizes: ``(min, max)`` dataset sizes searched, inclusive (replace-one searches sizes
            >= 1; add-remove needs ``max >= min + 1``).
        samples: samples per dataset of the final audit (selection and certification), in
            [10, MAX_SAMPLES]; required (no default: it sets the run time; 50,000 catches a
            tenfold noise bug in seconds, ``dpaudit audit --records`` uses 10^6). The search
            draws at most ``4 * samples`` outputs in all (both
            datasets of every candidate at every stage), twice the final audit's
            ``2 * samples`` (:mod:`dpaudit.audit.racing`).
        confidence: confidence of the certified bound, in (0, 1).
        seed: int, ``SeedSequence`` or None (fresh entropy, recorded in the result).
        budget_seconds: wall-clock budget of the search (None: the whole planned search);
            the final audit is not counted. The result is a function of the seed alone unless
            the budget cuts the search short.
        workers: local worker processes, as for :func:`audit`.
        executor: an executor or Dask client/address, as for :func:`audit`.
        batch_size: samples per seeded batch, as for :func:`audit` (the result depends on
            the seed and the batch size, never on ``workers``; search samples are spread over
            the workers batch by batch, so a slow ``fn`` wants small batches).
        max_memory_bytes: memory limit of the final audit's samples, as for :func:`audit`
            (the search holds at most as many samples per candidate as its selection does).
        arithmetic: ``"float"``, ``"real"`` or None (``fn.arithmetic``, else ``"float"``), as
            for :func:`audit`: with ``"float"`` the search and the final audit also search
            events over the outputs' bit patterns.
        certification: ``"auto"`` (the default: ``"joint"`` when the pair's delta is > 0,
            else ``"clopper-pearson"``), ``"clopper-pearson"`` or ``"joint"``: how the final
            audit certifies its event, as for :func:`audit`.
        edge_values: also try records holding NaN, +inf, -inf, values well and just outside
            the declared range, -0.0, the smallest subnormal and the largest finite double
            (categorical columns: NaN and numbers beyond the list's ends), as the differing
            record and as the rest of the dataset (default True; False for code whose inputs
            are validated upstream).
        on_error: ``"skip"`` (default: a candidate on which ``fn`` raises is refused, listed
            in ``refused``, and the search goes on), ``"raise"`` (abort with a
            :class:`MechanismError` naming the datasets) or ``"output"`` (an exception is an
            outcome of ``fn``: passed on to :func:`audit`, and a pair on which one dataset
            raises and the other does not is ranked first).

    Returns:
        A :class:`RecordsAuditResult`: the fields of :func:`audit`'s result (the claim: the
        pair's), with ``pair`` the two datasets (2-D arrays), ``pair_edge_values`` the edge
        values they hold, ``refused`` the candidates refused, ``search_samples`` the samples
        the search drew and ``pairs_searched`` the candidates tried.

    Raises:
        ValueError: for a parameter out of range (naming it, the range and the value); a bad
            domain entry names ``domain[i]``; a claim function raising or returning a bad
            value names ``epsilon(dataset)`` (or ``delta``), the dataset and the value.
        MechanismError: (a ValueError) with ``on_error="raise"`` if ``fn`` raises or returns
            outputs the auditor cannot handle (naming the datasets); otherwise if it does so
            on every candidate tried, or on the final audit's samples of the pair chosen.
        EngineError: if the engine running the batches fails.
    """
    start = time.perf_counter()
    _check_arguments(
        fn,
        relation,
        samples,
        confidence,
        workers,
        batch_size,
        budget_seconds,
        edge_values,
        on_error,
    )
    checked = check_domain(domain)
    smin, smax = _check_sizes(sizes, relation)
    claim = Claim(epsilon, delta)
    searched = resolve_families(fn, FAMILIES, arithmetic)  # refuses a bad arithmetic up front
    check_certification(certification)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    n_sel = max(1, int(samples * SELECTION_FRACTION))
    held = held_samples(n_sel, batch_size)
    race_plan = plan(
        SEARCH_FACTOR * 2 * samples,
        MAX_STRUCTURED_EDGE if edge_values else MAX_STRUCTURED,
        ROUNDS * PARENTS * CHILDREN,
        held,
    )
    width = checked.width
    seen: set[tuple[bytes, bytes]] = set()
    corner_rng = np.random.default_rng(seed_sequence(root, _CORNERS))
    proposals = unique_pairs(
        structured(checked, relation, (smin, smax), corner_rng, edge_values=edge_values),
        width,
        seen,
    )

    def out_of_time() -> bool:
        return budget_seconds is not None and time.perf_counter() - start > budget_seconds

    # Entering the runner first checks that Dask workers can import fn (before any sampling).
    # Edge values make fn's arithmetic overflow and produce NaN: NumPy's warnings about it
    # (context-local, in this thread only) are the expected, not news, while searching.
    # With on_error="output" the search samples the outcomes the final audit certifies on:
    # an exception is an output (ErrorsAsOutputs), so no candidate is refused for raising.
    searched_fn = ErrorsAsOutputs(fn) if on_error == "output" else fn
    with (
        Runner(searched_fn, seed_sequence(root, _SEARCH), batch_size, workers, executor) as runner,
        np.errstate(all="ignore"),
    ):
        probed, first, probe_refused = probe_first(
            searched_fn, proposals, race_plan.structured, seed_sequence(root, _PROBE), on_error
        )
        _check_size(probed, held, min(batch_size, samples), max_memory_bytes, samples)
        # scalars: the learned scores add little to thresholds on one number and cost a fit
        # per candidate pair; the bits family (unless the claim is about real arithmetic) is
        # cheap and finds the pairs whose float rounding leaks most
        scalar_families = ("threshold", "outcomes", "bits")
        runner.schema = probed.schema
        race = Race(
            runner,
            root,
            _MODELS,
            claim,
            tuple(f for f in searched if probed.schema.kind != "scalar" or f in scalar_families),
            probed.schema,
            samples - n_sel,
            bound_level(1.0 - confidence, 2),
            on_error,
            proposed=len(probe_refused),
            refused=probe_refused,
        )
        n0 = race_plan.first_samples
        race.enter(*first, n0)
        for candidate, pair in proposals:
            if race.proposed >= race_plan.structured or out_of_time():
                break
            race.enter(candidate, pair, n0)
        moves = np.random.default_rng(seed_sequence(root, _MOVES))
        local_search(
            race, checked, (smin, smax), race_plan.local, n0, seen, moves, edge_values, out_of_time
        )
        if not race.entries:
            raise every_candidate_refused(race.refused, race.proposed)
        stages = race.halve(race_plan, out_of_time)
    winner = race.winner()
    if winner is None:
        raise every_candidate_refused(race.refused, race.proposed)
    return _final(
        fn,
        checked,
        claim,
        winner,
        race,
        stages,
        start,
        root,
        relation=relation,
        samples=samples,
        confidence=confidence,
        workers=workers,
        batch_size=batch_size,
        executor=executor,
        max_memory_bytes=max_memory_bytes,
        arithmetic=arithmetic,
        certification=certification,
        edge_values=edge_values,
        on_error=on_error,
    )


def _final(
    fn: Any,
    domain: RecordDomain,
    claim: Claim,
    winner: Any,
    race: Race,
    stages: list[tuple[int, int]],
    start: float,
    root: np.random.SeedSequence,
    **options: Any,
) -> RecordsAuditResult:
    """Audit the pair the search chose and assemble the result."""
    d0, d1 = winner.pair
    on_error = options.pop("on_error")
    relation = options.pop("relation")
    edge_values = options.pop("edge_values")
    passed: dict[str, Any] = {"on_error": "output"} if on_error == "output" else {}
    try:
        result = audit(
            fn,
            d0,
            d1,
            epsilon=winner.epsilon,
            delta=winner.delta,
            seed=seed_sequence(root, _FINAL),
            selection_fraction=SELECTION_FRACTION,
            **options,
            **passed,
        )
    except MechanismError as err:
        raise MechanismError(
            f"{err} (on the pair the search chose, d0={rows(d0)}, d1={rows(d1)}, on which fn "
            "did not raise on the search's samples"
            + (
                "; on_error='output' makes an exception an outcome the audit certifies on)"
                if on_error != "output"
                else ")"
            ),
            raised=err.raised,
        ) from err
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    count = race.proposed
    edges = edge_values_of_pair(domain, d0, d1)
    edge_text = "; edge values: " + "; ".join(map(str, edges)) if edges else ""
    fields.update(
        pair=(d0, d1),
        pair_description=(
            f"{relation}, {winner.candidate.name} (best of {count} candidate pairs): "
            f"d0={rows(d0)}, d1={rows(d1)}{edge_text}"
        ),
        relation=relation,
        candidates_searched=count,
        search_samples=race.drawn,
        search_stages=tuple(stages),
        edge_values=edge_values,
        pair_edge_values=edges,
        refused=tuple(race.refused[:MAX_REFUSALS_LISTED]),
        refused_count=len(race.refused),
        claim_description=claim.describe_pair(d0, d1),
        pairs_searched=count,
        seed=int(root.entropy) if isinstance(root.entropy, int) else None,
        samples_drawn=result.samples_drawn + race.drawn,
        wall_time=time.perf_counter() - start,
        correction=(
            f"{result.correction}; the pair was chosen among {count} candidate pairs on "
            "separate search samples, so certifying it needs no further correction"
        ),
    )
    return RecordsAuditResult(**fields)
