"""The Monte Carlo auditor: a certified lower bound on the epsilon a mechanism's code has."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np

from dpaudit.audit.batches import ErrorsAsOutputs, EventCounts, seed_sequence
from dpaudit.audit.certifiable import (
    counted_frequencies,
    statistical_limit,
)
from dpaudit.audit.estimators import (
    bound_level,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    point_estimate,
    predicted_bounds,
)
from dpaudit.audit.joint import joint_epsilon_lower, joint_slope, predicted_joint_bounds
from dpaudit.audit.limits import (
    DEFAULT_MAX_MEMORY_BYTES,
    MAX_SAMPLES,
    MAX_WORKERS,
    estimate_memory,
    worker_limit,
)
from dpaudit.audit.options import (
    check_certification,
    default_selection_fraction,
    resolve_certification,
    resolve_families,
)
from dpaudit.audit.outputs import infer_schema
from dpaudit.audit.pairs import NeighbouringPair, resolve_pairs
from dpaudit.audit.parallel import (
    feature_frequencies,
    limit_feature,
    propose_in_workers,
    search_in_workers,
)
from dpaudit.audit.probe import MAX_PROBE_DRAWS, Probe, probe
from dpaudit.audit.result import AuditResult
from dpaudit.audit.runner import DEFAULT_BATCH_SIZE, PROGRESS_THRESHOLD, Runner
from dpaudit.audit.selection import FAMILIES, Candidate, search_events
from dpaudit.audit.sequential import certify_sequentially, runner_counter
from dpaudit.audit.streaming import (
    ThresholdSketch,
    held_samples,
    placeholder_sketch,
    plain_sample,
    propose_parts,
    restate,
    select_from_tallies,
)
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import check_confidence, check_delta, check_epsilon
from dpaudit.audit.validation import is_int as _is_int

__all__ = ["ON_ERROR", "audit"]

#: The values of ``on_error``: exceptions of the mechanism abort the audit, or are outputs.
ON_ERROR = ("raise", "output")

_SELECTION, _CERTIFICATION, _MODELS, _SCREENING, _PROBE = 0, 1, 2, 3, 4
#: With several candidate pairs, each is first screened on this many samples per dataset;
#: event selection then uses the full selection budget on the most promising pair only.
SCREENING_SAMPLES = 200_000
#: Factors of the certification samples at which the result restates the estimated limit.
LIMIT_FACTORS = (10,)


def _name(mechanism: Any) -> str:
    return str(
        getattr(mechanism, "name", None)
        or getattr(mechanism, "__name__", None)
        or type(mechanism).__name__
    )


def _check_size(probed: Probe, n_sel: int, batch: int, max_memory: int, samples: int) -> None:
    """Refuse samples too many for ``max_memory`` bytes (outputs too wide are refused by
    :func:`~dpaudit.audit.probe.probe`, before it draws again)."""
    width = probed.schema.width
    need = estimate_memory(probed.schema, probed.outputs, n_sel, batch, probed.raw)
    if need > max_memory:
        raise ValueError(
            f"max_memory_bytes: the audit's samples need about {need:,} bytes ({samples:,} "
            f"samples per dataset of {probed.schema.kind} outputs of width {width}), over the "
            f"limit of {max_memory:,} bytes; lower samples or raise max_memory_bytes "
            "(--max-memory)"
        )


def audit(
    mechanism: Callable[..., Any],
    d0: Any = None,
    d1: Any = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    samples: int,
    confidence: float = 0.95,
    seed: int | np.random.SeedSequence | None = None,
    pairs: Iterable[NeighbouringPair | Sequence[Any]] | None = None,
    families: Iterable[str] = FAMILIES,
    arithmetic: str | None = None,
    selection_fraction: float | None = None,
    certify_top: int = 1,
    directions: str | None = None,
    certification: str = "auto",
    max_outcomes: int = 10_000,
    workers: int = 1,
    executor: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool | None = None,
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
    on_error: str = "raise",
) -> AuditResult:
    """Certify a lower bound on the epsilon of ``mechanism``'s actual code.

    Runs the mechanism on neighbouring datasets, chooses an output event (and, with ``pairs``,
    a pair) on *selection* samples, then certifies the chosen events on *fresh* samples with
    one-sided Clopper-Pearson bounds:
    ``epsilon_lower = ln((P_lower[M(d) in E] - delta) / P_upper[M(d') in E])``, in both
    directions ``(d, d') = (d0, d1), (d1, d0)``.

    Privacy:
        If ``mechanism`` is (epsilon', delta)-DP for the given neighbouring pair(s), then
        ``epsilon_lower <= epsilon'`` with probability at least ``confidence``: only the events
        that selection hands over are certified, on samples selection never saw, with every one
        of the ``2 * certify_top`` tests Bonferroni-corrected. So a correct mechanism is
        flagged (``violation``) with probability at most ``1 - confidence``.

    Args:
        mechanism: ``mechanism(dataset, rng)`` returning one output: a number, a bool, a
            tuple or 1-D array (NumPy or torch, of any float precision: the ``bits`` family
            reads the outputs' own format), a dict, a variable-length sequence, None, a
            pandas Series or DataFrame (structured outputs, whose keys, length and
            missingness are searched beside their values: :mod:`dpaudit.audit.structured`),
            or any hashable value; ``mechanism.batch(dataset, n, rng)`` is used when
            present.
        d0: first dataset (None when ``pairs`` is given).
        d1: its neighbour.
        epsilon: the claimed epsilon (>= 0); the verdict compares against it.
        delta: the claimed delta, in [0, 1).
        samples: samples per dataset for the certified pair (selection + certification), in
            [10, MAX_SAMPLES] (:mod:`dpaudit.audit.limits`).
        confidence: family-wise confidence of the bound, in (0, 1).
        seed: int, ``SeedSequence`` or None (fresh entropy, recorded in the result).
        pairs: further candidate pairs to search (e.g. :func:`dpaudit.audit.query_pairs`).
            Each pair is screened on ``min(selection_fraction * samples, SCREENING_SAMPLES)``
            samples per dataset; events are then selected on the most promising pair with the
            full selection budget, and only that pair is certified.
        families: event families to search (subset of ``("threshold", "outcomes",
            "classifier", "bits")``); ``bits`` applies to numbers (a scalar, the first 16
            coordinates or values of a vector or structured output) and is dropped when
            ``arithmetic`` is ``"real"``.
        arithmetic: what the claim is about. ``"float"``: the code as it runs, in IEEE 754
            floats of the outputs' precision (float64, float32, float16, bfloat16), so the
            ``bits`` family searches events over the outputs' binary representation in that
            format (:mod:`dpaudit.audit.float_bits`); ``"real"``: the algorithm in exact
            real arithmetic (a textbook mechanism whose float rounding is out of scope), so
            ``bits`` is not searched, whatever the precision. None: the mechanism's own
            ``arithmetic`` attribute, else ``"float"``.
        selection_fraction: share of ``samples`` used for selection, in (0, 1); None: 0.25,
            and with ``delta > 0`` ``max(0.2, 10^5 / samples)`` when smaller (``max(0.05,
            10^5 / samples)`` with the Clopper-Pearson rectangle;
            :func:`~dpaudit.audit.options.default_selection_fraction`).
        certify_top: events certified per direction (tests = 2 * certify_top), >= 1.
        directions: ``"both"`` certifies ``certify_top`` events in each direction (tests =
            ``2 * certify_top``); ``"best"`` only in the direction whose best event the
            selection samples predict to certify more (tests = ``certify_top``: a smaller
            Bonferroni correction, so a higher statistical limit for one event; but for a
            symmetric mechanism two certified directions are two chances, which measured
            better in bench/approx_dp_limit.md). None: ``"both"``.
        certification: how each chosen event is certified. ``"auto"`` (the default):
            ``"joint"`` when ``delta > 0``, ``"clopper-pearson"`` when ``delta = 0``
            (:func:`~dpaudit.audit.options.resolve_certification`). ``"clopper-pearson"``:
            the rectangle of two one-sided Clopper-Pearson bounds, each at
            ``(1 - confidence) / (2 tests)`` (``ln((P_lower - delta) / P_upper)``);
            ``"joint"``: one exact test of ``P[M(d) in E] <= e^eps P[M(d') in E] + delta``
            from both counts at once (:mod:`dpaudit.audit.joint`, Berger & Boos 1994), at
            level ``(1 - confidence) / tests``. Both are valid; the joint test certifies more
            (Gaussian at delta 1e-5: median +0.08 to +0.13, bench/approx_dp_limit.md), costs about
            0.3-0.5 s more per audit, and its false-alarm rate on a mechanism exactly at its
            claim comes closer to ``1 - confidence`` (the rectangle's is well below it).
            ``"sequential"`` (opt-in): certifies on growing batches of fresh samples with
            anytime-valid confidence sequences and stops at the first batch that certifies a
            violation, or once the rest of the budget cannot reach the claim
            (:mod:`dpaudit.audit.sequential`); the same guarantee, fewer samples when the
            answer is clear, a little less certified when the whole budget is spent.
        max_outcomes: largest number of distinct outcomes searched as outcome sets, >= 1.
        workers: local worker processes (the mechanism must then be picklable), in
            [1, worker_limit()] (the machine's CPUs, at least 2, at most 64).
        executor: an executor with ``submit(fn, *args)`` (overrides ``workers``).
        batch_size: samples per seeded batch, >= 1. The result depends on seed and batch size.
        progress: show a progress bar; None shows one on a terminal for large audits.
        max_memory_bytes: refuse an audit whose samples would need more memory than this
            (estimated from probe runs before sampling; :func:`limits.estimate_memory`),
            >= 1; default 2 GiB.
        on_error: ``"raise"`` (the default): an exception of the mechanism aborts the audit
            (:class:`~dpaudit.audit.errors.MechanismError`). ``"output"``: an exception is
            that sample's output, the outcome "raised <ExceptionType>" (its type, never its
            message), searched beside the values (e.g. "the mechanism raised ValueError");
            when ``mechanism.batch`` raises, that batch falls back to single calls so each
            sample gets its own outcome (:class:`~dpaudit.audit.batches.ErrorsAsOutputs`).
            ``KeyboardInterrupt``, ``SystemExit``, ``MemoryError`` and the auditor's own
            errors are never outputs. Sound: whether and how the code raises is part of
            what an observer sees.

    Returns:
        An :class:`AuditResult`. Before sampling, the mechanism runs twice on a few probe
        samples (:mod:`dpaudit.audit.probe`): a mechanism that draws from NumPy's global
        random state or Python's ``random``, or whose outputs the seed does not fix, gives a
        result with ``reproducible=False`` and a warning naming the cause found (or
        ``reproducible=None`` when its outputs repeat too often to tell).

    Raises:
        ValueError: on a parameter outside its admissible range or over a documented limit
            (the message names it, the limit and the value).
        MechanismError: (a ValueError) if the mechanism raises, returns outputs the auditor
            cannot handle (the message names the accepted types), or cannot be sent to or
            imported by worker processes.
        EngineError: if the engine running the batches fails (a worker process dies, ...).
    """
    check_epsilon(epsilon)
    check_delta(delta)
    _check(
        "samples",
        samples,
        _is_int(samples) and 10 <= samples <= MAX_SAMPLES,
        f"an integer in [10, {MAX_SAMPLES:.0e}] (MAX_SAMPLES)",
    )
    check_confidence(confidence)
    _check(
        "selection_fraction",
        selection_fraction,
        selection_fraction is None
        or (isinstance(selection_fraction, float) and 0.0 < selection_fraction < 1.0),
        "a float in (0, 1) or None",
    )
    _check(
        "directions",
        directions,
        directions in (None, "both", "best"),
        "'both', 'best' or None",
    )
    check_certification(certification)
    certification = resolve_certification(certification, delta)
    _check("certify_top", certify_top, _is_int(certify_top) and certify_top >= 1, "an integer >= 1")
    _check(
        "max_outcomes", max_outcomes, _is_int(max_outcomes) and max_outcomes >= 1, "an integer >= 1"
    )
    limit = worker_limit()
    _check(
        "workers",
        workers,
        _is_int(workers) and 1 <= workers <= limit,
        f"an integer in [1, {limit}] (each worker is a process; the limit is this machine's "
        f"CPUs, at least 2, at most {MAX_WORKERS})",
    )
    _check("batch_size", batch_size, _is_int(batch_size) and batch_size >= 1, "an integer >= 1")
    _check(
        "max_memory_bytes",
        max_memory_bytes,
        _is_int(max_memory_bytes) and max_memory_bytes >= 1,
        "an integer >= 1",
    )
    _check("mechanism", mechanism, callable(mechanism), "callable as mechanism(dataset, rng)")
    _check("on_error", on_error, on_error in ON_ERROR, "'raise' or 'output'")
    families = resolve_families(mechanism, families, arithmetic)
    candidates_pairs = resolve_pairs(d0, d1, pairs)
    name = _name(mechanism)
    raised = on_error == "output"
    if raised:
        mechanism = ErrorsAsOutputs(mechanism)
    if selection_fraction is None:
        selection_fraction = default_selection_fraction(samples, float(delta), certification)
    if directions is None:
        directions = "both"
    n_sel = max(1, int(samples * selection_fraction))
    n_cert = samples - n_sel
    _check(
        "samples",
        samples,
        n_cert >= 1 and n_sel >= 1,
        "large enough to leave samples for both selection and certification",
    )

    start = time.perf_counter()
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    tests = certify_top * (2 if directions == "both" else 1)
    level = bound_level(1.0 - confidence, tests)

    # picklable: the parts of a streamed proposal may run in the workers
    predict = predicted_joint_bounds if certification == "joint" else predicted_bounds
    scorer = partial(predict, n_certification=n_cert, level=level, delta=delta)

    # Several pairs: screen each on a small sample, then select events on the best one only.
    n_pairs = len(candidates_pairs)
    n_screen = min(n_sel, SCREENING_SAMPLES) if n_pairs > 1 else 0
    screening = 0 < n_screen < n_sel
    searched = n_screen if screening else n_sel
    total = 2 * (searched * n_pairs + (n_sel if screening else 0) + n_cert)
    show = (
        progress if progress is not None else (total >= PROGRESS_THRESHOLD and sys.stderr.isatty())
    )
    datasets = [d for pair in candidates_pairs for d in (pair.d0, pair.d1)]
    probed = probe(
        mechanism,
        datasets[0],
        seed_sequence(root, _PROBE, 0),
        also=datasets[1:],
        raised=raised,
        max_draws=min(MAX_PROBE_DRAWS, max(16, samples // 4)),
    )
    held = held_samples(n_sel, batch_size)
    _check_size(probed, held, min(batch_size, samples), max_memory_bytes, samples)
    with Runner(mechanism, root, batch_size, workers, executor, bool(show), total) as runner:
        runner.infer = partial(infer_schema, also=probed.raw, raised=raised)
        family_freq: dict[
            int, tuple[np.ndarray, np.ndarray] | None
        ] = {}  # per pair, from its selection samples
        # per pair, the scalar pilot outputs over which its chosen learned events are
        # restated (streamed selections; the in-memory search restates as it searches)
        observed_of: dict[int, np.ndarray | None] = {}

        def select(i: int, n: int, phase: int) -> list[Candidate]:
            pair = candidates_pairs[i]
            held = held_samples(n, batch_size)
            keys = ((phase, i, 0), (phase, i, 1))
            rng = np.random.default_rng(seed_sequence(root, _MODELS, phase, i))
            observed_of[i] = None
            if held == n and runner.parts_in_engine:  # every selection sample, by parts
                found, frequencies = search_in_workers(
                    runner, pair, n, keys, scorer, families, max_outcomes, rng, phase == _SELECTION
                )
            elif held == n:  # every selection sample in memory
                x0 = runner.sample(pair.d0, held, keys[0])
                x1 = runner.sample(pair.d1, held, keys[1])
                found = search_events(
                    x0,
                    x1,
                    runner.output_schema,
                    scorer,
                    families=families,
                    max_outcomes=max_outcomes,
                    rng=rng,
                )
                feature = limit_feature(found) if phase == _SELECTION else None
                frequencies = None if feature is None else feature_frequencies(feature, x0, x1)
            else:  # a pilot in memory, the other selection batches streamed as tallies
                found, frequencies, observed_of[i] = _stream_select(
                    runner, pair, held, n, keys, scorer, families, max_outcomes, rng
                )
            if phase == _SELECTION:
                family_freq[i] = frequencies
            if directions == "best":
                return [f for f in found if f.numerator == found[0].numerator][:certify_top]
            return [
                c for num in (0, 1) for c in [f for f in found if f.numerator == num][:certify_top]
            ]

        best: tuple[float, int, list[Candidate]] | None = None
        phase = _SCREENING if screening else _SELECTION
        for i in range(n_pairs):
            chosen = select(i, searched, phase)
            score = max(c.predicted for c in chosen)
            if best is None or score > best[0]:
                best = (score, i, chosen)
        assert best is not None  # resolve_pairs returns at least one pair
        if screening:
            best = (best[0], best[1], select(best[1], n_sel, _SELECTION))
        _, index, chosen = best
        pair = candidates_pairs[index]
        events = [c.event for c in chosen]
        # The estimated limits need the selection only: computed while the workers certify
        # (by one of them, ahead of the batches, when the runner has its own pool).
        limits = runner.submit(
            _limits,
            family_freq.get(index),
            n_cert,
            float(delta),
            confidence,
            tests,
            "joint-approx" if certification == "joint" else "clopper-pearson",
        )
        # Restating the chosen learned events for people (4001 quantiles of the pilot)
        # changes neither what they contain nor their order: done beside the counting too.
        observed = observed_of.get(index)
        restated = None if observed is None else runner.submit(restate, chosen, observed)
        sequential = None
        if certification == "sequential":  # batches, stopped when the answer is known
            numerators = [c.numerator for c in chosen]
            sequential = certify_sequentially(
                runner_counter(runner, pair, (_CERTIFICATION, index), events, numerators),
                epsilon=float(epsilon),
                delta=float(delta),
                budget=n_cert,
                confidence=confidence,
                tests=tests,
            )
            hits, n_cert = sequential.hits_by_dataset(numerators), sequential.samples
            total -= 2 * sequential.samples_saved
        else:
            counted = runner.tally(
                [
                    (pair.d0, n_cert, (_CERTIFICATION, index, 0)),
                    (pair.d1, n_cert, (_CERTIFICATION, index, 1)),
                ],
                [EventCounts(tuple(events))],
            )
            hits = (counted[0][0], counted[1][0])
        epsilon_limit, limit_text = runner.result(limits)
        if restated is not None:
            chosen = runner.result(restated)

    certified = []
    # every chosen event's counts bounded in one call per side (the bisection's cost is per
    # call): the numerator's lower bounds and the denominator's upper bounds
    counts = [
        (int(hits[cand.numerator][j]), int(hits[1 - cand.numerator][j]))
        for j, cand in enumerate(chosen)
    ]
    table = np.array(counts, dtype=float)
    lowers = clopper_pearson_lower(table[:, 0], n_cert, level)
    uppers = clopper_pearson_upper(table[:, 1], n_cert, level)
    for j, cand in enumerate(chosen):
        k_num, k_den = counts[j]
        p_num_lower, p_den_upper = lowers[j], uppers[j]
        if sequential is not None:  # its confidence-sequence bound, the one that stopped it
            if j == sequential.event:
                certified.append((sequential.epsilon_lower, j, *sequential.ends))
            continue
        if certification == "joint":
            # one test at alpha / tests; its slope fixed by the selection samples' prediction
            bound = joint_epsilon_lower(
                k_num,
                k_den,
                n_cert,
                delta,
                (1.0 - confidence) / tests,
                slope=joint_slope(cand.predicted),
            )
        else:
            bound = epsilon_lower_bound(float(p_num_lower), float(p_den_upper), delta)
        certified.append((bound, j, float(p_num_lower), float(p_den_upper)))
    bound, j, lower, upper = max(certified, key=lambda t: (t[0], -t[1]))
    cand = chosen[j]
    k0, k1 = int(hits[0][j]), int(hits[1][j])
    num, den = ("d0", "d1") if cand.numerator == 0 else ("d1", "d0")
    return AuditResult(
        epsilon_lower=bound,
        epsilon_estimate=point_estimate(
            (k0, k1)[cand.numerator], (k0, k1)[1 - cand.numerator], n_cert, delta
        ),
        epsilon_claimed=float(epsilon),
        delta=float(delta),
        violation=bound > epsilon,
        event=cand.event.describe(),
        direction=f"P[M({num}) in E] / P[M({den}) in E]",
        pair=pair.describe(),
        hits_d0=k0,
        hits_d1=k1,
        samples_d0=n_cert,
        p_numerator_lower=lower,
        p_denominator_upper=upper,
        confidence=confidence,
        tests=tests,
        correction=(
            f"Bonferroni over {tests} certified tests ({certify_top} event(s) x "
            + ("2 directions" if directions == "both" else "the direction selection preferred")
            + (
                f"); each a joint exact test of both counts at level {(1 - confidence) / tests:.3g}"
                " (Berger-Boos; p_numerator_lower and p_denominator_upper: Clopper-Pearson "
                f"bounds at level {level:.3g}, for information)"
                if certification == "joint"
                else f"); {sequential.describe()}"
                if sequential is not None
                else f"); each one-sided Clopper-Pearson bound at level {level:.3g}"
            )
        ),
        seed=int(root.entropy) if isinstance(root.entropy, int) else None,
        selection_samples=n_sel,
        pairs_searched=n_pairs,
        wall_time=time.perf_counter() - start,
        mechanism=name,
        family=cand.family,
        screening_samples=n_screen if screening else 0,
        samples_drawn=total,
        reproducible=probed.reproducible,
        warnings=probed.warnings,
        epsilon_limit=epsilon_limit,
        limit_scaling=limit_text,
    )


def _limits(
    frequencies: tuple[np.ndarray, np.ndarray] | None,
    n_cert: int,
    delta: float,
    confidence: float,
    tests: int,
    method: str = "clopper-pearson",
) -> tuple[float | None, str]:
    """Estimated statistical limits (:mod:`dpaudit.audit.certifiable`) of the best
    feature's threshold events, from the selection frequencies: at the certification samples,
    and restated at :data:`LIMIT_FACTORS` times them."""
    if frequencies is None:
        return None, ""
    p_num, p_den = frequencies
    epsilon_limit, *later = (
        statistical_limit(
            p_num,
            p_den,
            samples=f * n_cert,
            delta=delta,
            confidence=confidence,
            tests=tests,
            method=method,
        ).epsilon
        for f in (1, *LIMIT_FACTORS)
    )
    text = ", ".join(
        f"about {_floor4(e)} or more at {f}x ({f * n_cert:,} per side; conservative: "
        "rarer events the selection samples cannot resolve may do better)"
        for f, e in zip(LIMIT_FACTORS, later, strict=True)
    )
    return epsilon_limit, text


def _floor4(x: float) -> str:
    return f"{math.floor(x * 1e4) / 1e4:.4f}"


def _stream_select(
    runner: Runner,
    pair: NeighbouringPair,
    held: int,
    n: int,
    keys: tuple[tuple[int, ...], tuple[int, ...]],
    scorer: Any,
    families: Iterable[str],
    max_outcomes: int,
    rng: np.random.Generator,
) -> tuple[list[Candidate], tuple[np.ndarray, np.ndarray] | None, np.ndarray | None]:
    """Streamed selection (:mod:`dpaudit.audit.streaming`): sketches proposed on the pilot
    (the first ``held`` of the ``n`` selection samples of each dataset), tallied in the
    workers over the other selection batches, candidates chosen on the tallies.

    With the runner's own pool or Dask the parts of the proposal run in the workers, each drawing
    the pilot itself (:class:`~dpaudit.audit.runner.Pilot`); otherwise this process holds
    the pilot and proposes. The sketches and tallies are the same either way.

    Returns:
        The candidates, best first, the threshold frequencies of the best threshold
        candidate's feature on the stream (for the statistical limit; None without one),
        and for scalar outputs the thinned pilot outputs over which learned events are
        restated (:func:`~dpaudit.audit.streaming.restate`; the candidates are not), else
        None.
    """
    families = tuple(families)
    if runner.parts_in_engine:
        proposals, observed = propose_in_workers(
            runner, pair, held, keys, scorer, families, max_outcomes, rng
        )
    else:
        x0 = runner.sample(pair.d0, held, keys[0])
        x1 = runner.sample(pair.d1, held, keys[1])
        proposals = propose_parts(
            x0,
            x1,
            runner.output_schema,
            scorer,
            families=families,
            max_outcomes=max_outcomes,
            rng=rng,
        )
        scalar = runner.output_schema.kind == "scalar"
        observed = plain_sample(np.concatenate([x0, x1])) if scalar else None
    schema = runner.output_schema
    sketches = [s for p in proposals for s in p.sketches]
    on_pilot = [t for p in proposals for t in p.pilot_tallies]
    if not sketches:
        sketches, on_pilot = [placeholder_sketch(schema, scorer)], [None]
    skip = held // runner.batch_size
    n_stream = n - held
    tallies = runner.tally([(pair.d0, n, keys[0]), (pair.d1, n, keys[1])], sketches, skip)
    sizes = []
    for j, counted in enumerate(on_pilot):
        sizes.append(n_stream if counted is None else n)
        if counted is not None:
            tallies[0][j] = tallies[0][j] + counted[0]
            tallies[1][j] = tallies[1][j] + counted[1]
    found = select_from_tallies(sketches, tallies[0], tallies[1], sizes, scorer)
    feature = limit_feature(found)
    for sketch, t0, t1 in zip(sketches, tallies[0], tallies[1], strict=True):
        if (
            isinstance(sketch, ThresholdSketch)
            and feature is not None
            and sketch.feature == feature
        ):
            (ge0, le0, m0), (ge1, le1, m1) = sketch.hits(t0), sketch.hits(t1)
            if m0 and m1:
                num, den = counted_frequencies((ge0, ge1), (le0, le1), (m0, m1))
                return found, ((num, den) if len(num) else None), observed
    return found, None, observed
