"""Record-level neighbour search: audit a function over datasets, with no hand-designed pair.

:func:`audit_records` takes a function over datasets (``fn(data, rng)``, ``data`` a 2-D float
array with one row per record), a record domain (:mod:`dpaudit.audit.domain`) and a
neighbouring relation, and looks for the two neighbouring datasets on which ``fn`` leaks the
most. It then audits that one pair with :func:`dpaudit.audit.audit`.

The search, in two stages, each candidate pair scored on *search samples* of its own:

1. structured candidates: the all-low and all-high records, the centre and zero records, the
   corners of the box and records with one column at its other extreme, as the differing
   record; small and degenerate datasets (one record, or none for add/remove), all-equal
   datasets, datasets of duplicates of the differing record, mixed low/high datasets;
2. a local search: the best pairs so far are perturbed (a record moved towards a corner or an
   edge, the other records made equal or duplicated, the dataset size changed), for
   :data:`ROUNDS` rounds or until ``budget_seconds`` run out.

A candidate's score is the bound the event search (:mod:`dpaudit.audit.selection`) predicts
for certification, as in DP-Sniper's and Delta-Siege's searches (Bichsel et al., S&P 2021;
Lokna et al., S&P 2023) and DP-Auditorium's dataset generators (Kong et al. 2024).

Privacy of the verdict (why the bound stays valid however many candidates are tried): the
search samples come from their own seed streams (``SeedSequence`` children apart from the
final audit's), so the chosen pair is independent of the samples the final audit draws. The
final audit selects its event on its own selection samples and certifies it once, on fresh
samples, at the stated confidence (Bonferroni over its two directions only). Conditionally on
the pair chosen, its guarantee is that of :func:`dpaudit.audit.audit`; so the certified bound
is a lower bound on ``fn``'s epsilon with probability at least ``confidence``, and no
correction for the number of candidates is needed.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.batches import seed_sequence
from dpaudit.audit.domain import RELATIONS, RecordDomain, as_records, check_domain
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.estimators import bound_level, predicted_bounds
from dpaudit.audit.limits import DEFAULT_MAX_MEMORY_BYTES, MAX_SAMPLES, MAX_WORKERS, worker_limit
from dpaudit.audit.monte_carlo import _check_size, audit
from dpaudit.audit.options import check_certification, resolve_families
from dpaudit.audit.probe import probe
from dpaudit.audit.result import AuditResult
from dpaudit.audit.runner import DEFAULT_BATCH_SIZE, Runner
from dpaudit.audit.selection import FAMILIES, search_events
from dpaudit.audit.streaming import held_samples
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import check_confidence, check_delta, check_epsilon
from dpaudit.audit.validation import is_int as _is_int
from dpaudit.audit.validation import is_number as _is_number

__all__ = [
    "MAX_DATASET_SIZE",
    "RELATIONS",
    "RecordsAuditResult",
    "audit_records",
]

#: Largest dataset size ``sizes`` may ask for.
MAX_DATASET_SIZE = 100_000
#: Search samples per dataset of each candidate pair: ``samples // 8``, clipped to these.
MIN_SEARCH_SAMPLES, MAX_SEARCH_SAMPLES = 200, 20_000
#: Corners of the domain's box tried as differing records (all of them when there are fewer).
CORNER_LIMIT = 16
#: Structured candidates scored before the local search (the first ones in priority order).
MAX_STRUCTURED = 48
#: Local search: rounds, best pairs perturbed per round, perturbations of each.
ROUNDS, PARENTS, CHILDREN = 4, 3, 6
#: Share of the final audit's samples used to select its event (as in :func:`audit`).
SELECTION_FRACTION = 0.25

# Seed streams below the root: search samples, the final audit, model fitting, moves, corners
# and the probe runs.
_SEARCH, _FINAL, _MODELS, _MOVES, _CORNERS, _PROBE = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True, eq=False)
class RecordsAuditResult(AuditResult):
    """The result of :func:`audit_records`: an :class:`AuditResult` whose ``pair`` holds the
    two datasets found.

    Attributes:
        pair: ``(d0, d1)``, the neighbouring datasets audited, as 2-D float arrays (one row
            per record).
        pair_description: the pair in words.
        relation: the neighbouring relation searched.
        candidates_searched: candidate pairs scored on search samples (also in
            ``pairs_searched``).
        search_samples: search samples per dataset of each candidate.
    """

    # the datasets themselves where AuditResult has the pair in words (see _pair_text)
    pair: tuple[np.ndarray, np.ndarray]  # type: ignore[assignment]
    pair_description: str = ""
    relation: str = "replace-one"
    candidates_searched: int = 0
    search_samples: int = 0

    def _pair_text(self) -> str:
        return self.pair_description

    def to_dict(self) -> dict[str, Any]:
        """All fields plus the verdict, JSON-ready (the datasets as lists of rows)."""
        data = super().to_dict()
        data["pair"] = [d.tolist() for d in self.pair]
        return data

    def __eq__(self, other: object) -> bool:
        """Equal fields, datasets included (the wall time aside)."""
        if not isinstance(other, RecordsAuditResult):
            return NotImplemented
        mine, theirs = self.to_dict(), other.to_dict()
        mine.pop("wall_time"), theirs.pop("wall_time")
        return mine == theirs

    # unhashable, as __eq__ compares arrays (mypy does not accept None for a method)
    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class _Candidate:
    """A neighbouring pair: ``base`` (d0) and, for replace-one, ``base`` with row ``index``
    replaced by ``record``; for add-remove, ``base`` with ``record`` added."""

    base: np.ndarray
    record: np.ndarray
    index: int | None
    name: str

    def datasets(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        if self.index is None:
            return as_records(self.base, width), as_records(
                np.vstack([self.base, self.record[None, :]]), width
            )
        d1 = self.base.copy()
        d1[self.index] = self.record
        return as_records(self.base, width), as_records(d1, width)


def _rows(data: np.ndarray) -> str:
    """A dataset on one line: its size and rows (shortened when long)."""
    text = np.array2string(data, separator=",", threshold=12, edgeitems=2)
    text = "".join(text.split())
    return f"{len(data)} record(s) {text if len(text) <= 120 else text[:117] + '...'}"


def _key(d0: np.ndarray, d1: np.ndarray) -> tuple[bytes, bytes]:
    """The same key for a pair in either order (both directions are always certified)."""
    a, b = d0.tobytes() + bytes([len(d0) % 256]), d1.tobytes() + bytes([len(d1) % 256])
    return (a, b) if (len(d0), a) <= (len(d1), b) else (b, a)


def _opposite(domain: RecordDomain, record: np.ndarray) -> np.ndarray:
    return np.array(
        [c.high if v == c.low else c.low for c, v in zip(domain.columns, record, strict=True)]
    )


def _structured(
    domain: RecordDomain, relation: str, sizes: tuple[int, int], rng: np.random.Generator
) -> Iterator[_Candidate]:
    """Structured candidates, most promising first (duplicates are removed by the caller)."""
    low, high, centre, zero = domain.low(), domain.high(), domain.centre(), domain.zero()
    corners = domain.corners(CORNER_LIMIT, rng)
    changes = domain.single_changes(low, CORNER_LIMIT) + domain.single_changes(high, CORNER_LIMIT)
    smin, smax = sizes
    width = domain.width

    def copies(record: np.ndarray, s: int) -> np.ndarray:
        return np.tile(record, (s, 1)).reshape(s, width)

    def mixed(s: int) -> np.ndarray:
        return np.array([low if i % 2 == 0 else high for i in range(s)]).reshape(s, width)

    if relation == "replace-one":
        lo = max(1, smin)
        counts = sorted({lo, min(lo + 1, smax), smax})
        moves = [(low, high), (high, low)]
        moves += [(r, t) for r in (centre, zero) if r is not None for t in (high, low)]
        firsts = len(moves)
        moves += [(c, _opposite(domain, c)) for c in corners]
        moves += [(low, c) for c in changes] + [(high, c) for c in changes]
        for k, (start, target) in enumerate(moves):
            for s in counts if k < firsts else (lo, smax):
                yield _Candidate(
                    copies(start, s),
                    target,
                    s - 1,
                    "one record replaced" if s == 1 else f"{s} equal records, one replaced",
                )
                if k < 2:
                    other = np.vstack([copies(target, s - 1), start[None, :]])
                    yield _Candidate(other, target, s - 1, f"{s} records, one replaced")
                    yield _Candidate(
                        np.vstack([mixed(s - 1), start[None, :]]),
                        target,
                        s - 1,
                        f"{s} mixed records, one replaced",
                    )
        return
    counts = sorted({smin, min(smin + 1, smax - 1), smax - 1})
    first = [low, high] + ([zero] if zero is not None else []) + [centre]
    others = corners + changes
    for k, record in enumerate(first + others):
        primary = k < len(first)
        for s in counts if primary else (smin, smax - 1):
            if s == 0:
                yield _Candidate(copies(record, 0), record, None, "no records, one added")
                continue
            yield _Candidate(
                copies(record, s),
                record,
                None,
                "one record, a copy added" if s == 1 else f"{s} duplicates, one more added",
            )
            fills = (low, high, centre) if primary else (_opposite(domain, record),)
            for fill in fills:
                yield _Candidate(
                    copies(fill, s),
                    record,
                    None,
                    "one record, another added" if s == 1 else f"{s} equal records, one added",
                )
            if primary:
                yield _Candidate(mixed(s), record, None, f"{s} mixed records, one added")


def _resize(base: np.ndarray, s: int, keep_last: bool) -> np.ndarray:
    """``base`` cut or extended (by repeating its first row) to ``s`` rows."""
    if s <= len(base):
        return base[len(base) - s :] if keep_last else base[:s]
    fill = np.tile(base[:1], (s - len(base), 1))
    return np.vstack([fill, base])


def _perturb(
    parent: _Candidate,
    domain: RecordDomain,
    sizes: tuple[int, int],
    rng: np.random.Generator,
    round_: int,
) -> _Candidate:
    """A neighbour of ``parent``: records moved towards corners and edges, duplicated, the
    dataset resized."""
    base, record, index = parent.base.copy(), parent.record.copy(), parent.index
    replace = index is not None
    s = len(base)
    op = rng.choice(["record", "record", "row", "all", "duplicate", "size"])
    if op == "record":
        record = domain.perturb(record, rng)
    elif op == "row" and s > 0:
        j = index if (replace and rng.random() < 0.5) else int(rng.integers(s))
        base[j] = domain.perturb(base[j], rng)
    elif op == "all" and s > 0:
        row = domain.perturb(base[0], rng) if rng.random() < 0.5 else domain.uniform(rng)
        keep = base[index].copy() if replace else None
        base[:] = row
        if replace:
            base[index] = keep
    elif op == "duplicate" and s > 0:
        source = base[index] if replace else record
        count = int(rng.integers(1, s + 1))
        rows = [i for i in range(s) if i != index][:count]
        base[rows] = source
    else:  # size
        lo, hi = (max(1, sizes[0]), sizes[1]) if replace else (sizes[0], sizes[1] - 1)
        new = int(rng.integers(lo, hi + 1))
        base = _resize(base, new, keep_last=replace)
        if new == 0:
            base = base.reshape(0, domain.width)
        index = new - 1 if replace else None
    return _Candidate(base, record, index, f"local search round {round_}")


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


def audit_records(
    fn: Callable[..., Any],
    domain: list[Any],
    *,
    epsilon: float,
    delta: float = 0.0,
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
) -> RecordsAuditResult:
    """Search neighbouring datasets over a record domain, then certify the worst pair found.

    Privacy:
        If ``fn`` is (epsilon', delta)-DP under ``relation`` for datasets of records in
        ``domain`` with sizes in ``sizes``, then ``epsilon_lower <= epsilon'`` with
        probability at least ``confidence``: the pair is chosen on search samples apart from
        the final audit's, whose event is selected on its own selection samples and certified
        once on fresh ones (see the module docstring). A correct ``fn`` is flagged
        (``violation``) with probability at most ``1 - confidence``.

    Args:
        fn: ``fn(data, rng)`` returning one output (as for :func:`audit`), where ``data`` is
            a read-only 2-D float array, one row per record; ``fn.batch(data, n, rng)`` is
            used when present.
        domain: one entry per column: a ``(low, high)`` tuple (numeric) or a list of allowed
            values (categorical); see :mod:`dpaudit.audit.domain`.
        epsilon: the claimed epsilon (>= 0).
        delta: the claimed delta, in [0, 1).
        relation: ``"replace-one"`` (same size, one record replaced) or ``"add-remove"`` (one
            record more).
        sizes: ``(min, max)`` dataset sizes searched, inclusive (replace-one searches sizes
            >= 1; add-remove needs ``max >= min + 1``).
        samples: samples per dataset of the final audit (selection and certification), in
            [10, MAX_SAMPLES]; required (no default: it sets the run time; 50,000 catches a
            tenfold noise bug in seconds, ``dpaudit audit --records`` uses 10^6). Each
            candidate pair is scored on ``samples // 8`` search samples per dataset (at least
            200, at most 20,000).
        confidence: confidence of the certified bound, in (0, 1).
        seed: int, ``SeedSequence`` or None (fresh entropy, recorded in the result).
        budget_seconds: wall-clock budget of the search (None: :data:`ROUNDS` rounds of local
            search); the final audit is not counted. The result is a function of the seed
            alone unless the budget cuts the search short.
        workers: local worker processes, as for :func:`audit`.
        executor: an executor or Dask client/address, as for :func:`audit`.
        batch_size: samples per seeded batch, as for :func:`audit` (the result depends on
            the seed and the batch size, never on ``workers``; search samples are spread over
            the workers batch by batch, so a slow ``fn`` wants small batches).
        max_memory_bytes: memory limit of the final audit's samples, as for :func:`audit`.
        arithmetic: ``"float"``, ``"real"`` or None (``fn.arithmetic``, else ``"float"``), as
            for :func:`audit`: with ``"float"`` the final audit also searches events over the
            outputs' bit patterns (the pair search does not).
        certification: ``"auto"`` (the default: ``"joint"`` when ``delta > 0``, else
            ``"clopper-pearson"``), ``"clopper-pearson"`` or ``"joint"``: how the final audit
            certifies its event, as for :func:`audit`.

    Returns:
        A :class:`RecordsAuditResult`: the fields of :func:`audit`'s result, with ``pair``
        the two datasets (2-D arrays) and ``pairs_searched`` the candidates scored.

    Raises:
        ValueError: for a parameter out of range (naming it, the range and the value); a bad
            domain entry names ``domain[i]``.
        MechanismError: (a ValueError) if ``fn`` raises or returns outputs the auditor
            cannot handle; the message names the datasets it failed on.
        EngineError: if the engine running the batches fails.
    """
    start = time.perf_counter()
    _check("fn", fn, callable(fn), "callable as fn(data, rng)")
    checked = check_domain(domain)
    _check("relation", relation, relation in RELATIONS, f"one of {RELATIONS}")
    smin, smax = _check_sizes(sizes, relation)
    check_epsilon(epsilon)
    check_delta(delta)
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
    searched = resolve_families(fn, FAMILIES, arithmetic)  # refuses a bad arithmetic up front
    check_certification(certification)
    _check(
        "budget_seconds",
        budget_seconds,
        budget_seconds is None or (_is_number(budget_seconds) and 0 < budget_seconds < math.inf),
        "None or a number of seconds > 0",
    )
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    n_search = min(MAX_SEARCH_SAMPLES, max(MIN_SEARCH_SAMPLES, samples // 8))
    n_sel = max(1, int(samples * SELECTION_FRACTION))
    n_cert = samples - n_sel
    level = bound_level(1.0 - confidence, 2)

    def scorer(num: np.ndarray, den: np.ndarray, n: int) -> np.ndarray:
        return predicted_bounds(num, den, n, n_cert, level, delta)

    width = checked.width
    corner_rng = np.random.default_rng(seed_sequence(root, _CORNERS))
    structured = _structured(checked, relation, (smin, smax), corner_rng)
    first = next(structured)
    scored: list[tuple[float, int, _Candidate, tuple[np.ndarray, np.ndarray]]] = []
    seen: set[tuple[bytes, bytes]] = set()
    # Entering the runner first checks that Dask workers can import fn (before any sampling).
    with Runner(fn, seed_sequence(root, _SEARCH), batch_size, workers, executor) as runner:
        try:
            probed = probe(fn, first.datasets(width)[0], seed_sequence(root, _PROBE))
        except MechanismError as err:
            raise MechanismError(
                f"{err} (on the dataset {_rows(first.datasets(width)[0])})"
            ) from err
        held = held_samples(n_sel, batch_size)
        _check_size(probed, held, min(batch_size, samples), max_memory_bytes, samples)
        # scalars: the learned scores add little to thresholds on one number and cost a fit
        # per candidate pair; the bits family (unless the claim is about real arithmetic) is
        # cheap and finds the pairs whose float rounding leaks most
        scalar_families = ("threshold", "outcomes", "bits")
        families = tuple(
            f for f in searched if probed.schema.kind != "scalar" or f in scalar_families
        )
        runner.schema = probed.schema

        def score(candidate: _Candidate) -> None:
            pair = candidate.datasets(width)
            key = _key(*pair)
            if key in seen:
                return
            seen.add(key)
            i = len(scored)
            try:
                x0 = runner.sample(pair[0], n_search, (i, 0))
                x1 = runner.sample(pair[1], n_search, (i, 1))
            except MechanismError as err:
                raise MechanismError(
                    f"{err} (on the neighbouring datasets d0={_rows(pair[0])}, d1={_rows(pair[1])})"
                ) from err
            found = search_events(
                x0,
                x1,
                runner.output_schema,
                scorer,
                families=families,
                rng=np.random.default_rng(seed_sequence(root, _MODELS, i)),
            )
            scored.append((found[0].predicted, i, candidate, pair))

        def out_of_time() -> bool:
            return budget_seconds is not None and time.perf_counter() - start > budget_seconds

        score(first)
        for candidate in structured:
            if len(scored) >= MAX_STRUCTURED or out_of_time():
                break
            score(candidate)
        moves = np.random.default_rng(seed_sequence(root, _MOVES))
        for round_ in range(1, ROUNDS + 1):
            if out_of_time():
                break
            parents = sorted(scored, key=lambda t: (-t[0], t[1]))[:PARENTS]
            for _, _, parent, _ in parents:
                for _ in range(CHILDREN):
                    if out_of_time():
                        break
                    score(_perturb(parent, checked, (smin, smax), moves, round_))

    _, _, chosen, (d0, d1) = min(scored, key=lambda t: (-t[0], t[1]))
    result = audit(
        fn,
        d0,
        d1,
        epsilon=epsilon,
        delta=delta,
        samples=samples,
        confidence=confidence,
        seed=seed_sequence(root, _FINAL),
        selection_fraction=SELECTION_FRACTION,
        workers=workers,
        batch_size=batch_size,
        executor=executor,
        max_memory_bytes=max_memory_bytes,
        arithmetic=arithmetic,
        certification=certification,
    )
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    count = len(scored)
    fields.update(
        pair=(d0, d1),
        pair_description=(
            f"{relation}, {chosen.name} (best of {count} candidate pairs): d0={_rows(d0)}, "
            f"d1={_rows(d1)}"
        ),
        relation=relation,
        candidates_searched=count,
        search_samples=n_search,
        pairs_searched=count,
        seed=int(root.entropy) if isinstance(root.entropy, int) else None,
        samples_drawn=result.samples_drawn + 2 * n_search * count,
        wall_time=time.perf_counter() - start,
        correction=(
            f"{result.correction}; the pair was chosen among {count} candidate pairs on "
            "separate search samples, so certifying it needs no further correction"
        ),
    )
    return RecordsAuditResult(**fields)
