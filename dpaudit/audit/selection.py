"""Event selection: search the selection samples for the event that certifies the most.

Every family proposes many events; each is ranked by the bound it *would* certify on fresh
samples (:func:`dpaudit.audit.estimators.predicted_bounds`), in both directions. Event sizes are
not fixed in advance (DP-Sniper's fixed target probability caps its bounds at ln(1/p0)); tiny
events with zero hits on one side, the strongest witnesses for shifted supports, compete with
large events of moderate ratio.

Families:

* ``threshold``: ``f(x) >= t`` and ``f(x) <= t`` over a grid of thresholds, for the output
  itself (scalars) or for every coordinate, the sum, the maximum and the mean-difference
  projection (vectors);
* ``outcomes``: for discrete outputs, sets of outcomes ordered by estimated likelihood ratio
  (Neyman-Pearson: the best event of each size is a prefix of that order);
* ``classifier``: thresholds on learned scores (:mod:`dpaudit.audit.classifier`);
* ``bits``: for scalar outputs, unions of classes of the outputs' IEEE 754 representation
  (binade with the last 1, 4 or 8 significand bits, or with the lattice ``2^j Z`` the output
  lies on; :mod:`dpaudit.audit.float_bits`), ordered by likelihood ratio like outcome sets.
  Textbook floating-point noise reaches different doubles from neighbouring inputs (Mironov
  2012); DP-Sniper finds this with a classifier on the 64 bits (Bichsel et al. 2021, its
  floating-point experiment). Four partitions, two directions: eight candidates, costing a few
  vectorised passes over the selection samples.

Nothing chosen here is certified here: the auditor certifies the chosen events on fresh
samples only.

Large audits call :func:`search_events` on a pilot only and stream the rest of the selection
samples as per-batch tallies (:mod:`dpaudit.audit.streaming`, whose docstring states the
*sketch* protocol a family implements to be refined on the stream; a family without a sketch
has the events it picks on the pilot re-scored on the stream).
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from dpaudit.audit.classifier import fit_binned_ratio, fit_logistic
from dpaudit.audit.events import (
    NON_FINITE,
    NON_FINITE_COMPLEMENTS,
    Coordinate,
    Feature,
    FloatClassEvent,
    Identity,
    MaxCoordinate,
    NonFiniteEvent,
    OutcomeSetEvent,
    OutputEvent,
    Projection,
    ThresholdEvent,
    count_hits,
    plain_grid,
    plain_intervals,
)
from dpaudit.audit.float_bits import class_keys
from dpaudit.audit.outputs import OutputSchema, row_keys

__all__ = [
    "FAMILIES",
    "SEARCH_PARTS",
    "Candidate",
    "check_families",
    "non_finite_events",
    "outcome_views",
    "part_pieces",
    "pick_thresholds",
    "rank",
    "search_events",
    "search_part",
    "search_parts",
    "threshold_features",
]

FAMILIES = ("threshold", "outcomes", "classifier", "bits")
#: Vector outputs: at most this many coordinates get their own threshold feature.
MAX_COORDINATES = 64
#: Vector outputs: at most this many coordinates are searched for ``bits`` events.
MAX_BITS_COORDINATES = 16
#: Threshold grid: geometric ranks from each end of each sorted sample, plus linear ranks.
GEOMETRIC_RANKS = 80
LINEAR_RANKS = 250

#: ``scorer(numerator_hits, denominator_hits, n)`` -> predicted bounds, for ``n`` samples a side.
Scorer = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Candidate:
    """An event proposed for certification.

    Attributes:
        event: the output event.
        numerator: 0 if the bound is on ``P[M(d0) in E] / P[M(d1) in E]``, 1 for the reverse.
        predicted: the bound the selection samples predict (an estimate, not a bound).
        family: the search family that found it.
    """

    event: OutputEvent
    numerator: int
    predicted: float
    family: str


def _argbest(scorer: Scorer, num: np.ndarray, den: np.ndarray, n: int) -> tuple[int, float]:
    """Index and predicted bound of the best candidate.

    The prediction increases with the numerator hits and decreases with the denominator hits,
    so only Pareto-optimal candidates (no other has more numerator hits and no more
    denominator hits) need to be scored.
    """
    order = np.lexsort((-num, den))  # by den ascending, then num descending
    running = np.maximum.accumulate(num[order])
    keep = np.r_[True, running[1:] > running[:-1]]
    front = order[keep]
    scores = scorer(num[front], den[front], n)
    j = int(np.argmax(scores))
    return int(front[j]), float(scores[j])


@functools.lru_cache(maxsize=64)
def _rank_grid(n: int) -> np.ndarray:
    geo = np.unique(np.geomspace(1, n, GEOMETRIC_RANKS).astype(int)) - 1
    lin = np.linspace(0, n - 1, LINEAR_RANKS).astype(int)
    return np.unique(np.concatenate([geo, n - 1 - geo, lin]))


def _threshold_grid(s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    parts = [s0[_rank_grid(len(s0))], s1[_rank_grid(len(s1))]]
    # Values just beyond the other sample's extremes: events with zero hits on one side.
    for a, b in ((s0, s1), (s1, s0)):
        i = np.searchsorted(a, b[-1], side="right")
        if i < len(a):
            parts.append(a[i : i + 1])
        j = np.searchsorted(a, b[0], side="left")
        if j > 0:
            parts.append(a[j - 1 : j])
    return np.unique(np.concatenate(parts))


def _best_threshold(
    feature: Feature,
    x0: np.ndarray,
    x1: np.ndarray,
    scorer: Scorer,
    family: str,
    plain: np.ndarray | None = None,
) -> list[Candidate]:
    """The best threshold event on ``feature`` for each direction of the ratio; restated as
    intervals of the output on the grid ``plain`` when given (scalar outputs;
    :func:`~dpaudit.audit.events.plain_grid`)."""
    v0, v1 = feature.values(x0), feature.values(x1)
    s0, s1 = np.sort(v0[~np.isnan(v0)]), np.sort(v1[~np.isnan(v1)])
    if len(s0) == 0 or len(s1) == 0:
        return []
    grid = _threshold_grid(s0, s1)
    ge = (len(s0) - np.searchsorted(s0, grid, "left"), len(s1) - np.searchsorted(s1, grid, "left"))
    le = (np.searchsorted(s0, grid, "right"), np.searchsorted(s1, grid, "right"))
    return pick_thresholds(feature, grid, ge, le, len(x0), scorer, family, plain)


def pick_thresholds(
    feature: Feature,
    grid: np.ndarray,
    ge: tuple[np.ndarray, np.ndarray],
    le: tuple[np.ndarray, np.ndarray],
    n: int,
    scorer: Scorer,
    family: str,
    plain: np.ndarray | None = None,
) -> list[Candidate]:
    """The best of the events ``feature >= grid[i]`` and ``feature <= grid[i]`` per direction.

    Args:
        feature: the feature thresholded.
        grid: thresholds.
        ge: hits of ``feature >= grid[i]`` under d0 and under d1 (arrays like ``grid``).
        le: hits of ``feature <= grid[i]`` under d0 and under d1.
        n: samples per dataset behind the hits.
        scorer: the selection scorer.
        family: the family named in the candidates.
        plain: the grid of output values on which to restate the events as intervals
            (scalar outputs; :func:`~dpaudit.audit.events.plain_grid`), or None.

    Returns:
        Two candidates, numerator d0 then numerator d1.
    """
    found = []
    for numerator in (0, 1):
        best: tuple[float, ThresholdEvent] | None = None
        for above, hits in ((True, ge), (False, le)):
            i, score = _argbest(scorer, hits[numerator], hits[1 - numerator], n)
            if best is None or score > best[0]:
                best = (score, ThresholdEvent(feature, float(grid[i]), above))
        assert best is not None  # the loop above ran (twice)
        predicted, event = best
        if plain is not None:  # restate as intervals of the output, for people
            event = replace(event, plain=plain_intervals(event, grid=plain))
        found.append(Candidate(event, numerator, predicted, family))
    return found


def _factorise(pooled: np.ndarray, schema: OutputSchema) -> tuple[list, np.ndarray]:
    if schema.kind == "scalar":
        uniq, inverse = np.unique(pooled, return_inverse=True)
        return [float(u) for u in uniq], inverse.reshape(-1)
    if schema.kind in ("vector", "structured"):
        uniq, inverse = np.unique(row_keys(pooled), return_inverse=True)
        rows = uniq.view(float).reshape(len(uniq), pooled.shape[1])
        return [tuple(r) for r in rows.tolist()], inverse.reshape(-1)
    codes: dict = {}
    inverse = np.fromiter((codes.setdefault(k, len(codes)) for k in pooled), int, len(pooled))
    return list(codes), inverse


def _distinct_at_most(x: np.ndarray, schema: OutputSchema, limit: int) -> bool:
    probe = x[: min(len(x), 4 * limit)]
    if schema.kind == "categorical":
        return len(set(probe)) <= limit
    if schema.kind in ("vector", "structured"):
        # A fixed irrational projection: distinct rows give distinct values (barring exact
        # float ties), and a float sort is much faster than sorting rows as bytes. Only used
        # to decide whether to search outcome sets at all.
        weights = np.sqrt(np.arange(2, probe.shape[1] + 2, dtype=float))
        probe = np.einsum("ij,j->i", np.nan_to_num(probe, nan=-0.5), weights)
    return len(np.unique(probe)) <= limit


def _best_outcome_sets(
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    max_outcomes: int,
    columns: tuple[int, ...] | None = None,
) -> list[Candidate]:
    """Outcome sets of whole outputs, or (``columns``) of the outputs' values in those
    columns: the structure of a structured output."""
    if columns is not None:
        x0, x1 = x0[:, list(columns)], x1[:, list(columns)]
    # Outcomes must repeat to be worth a set: skip when there are too many distinct ones.
    limit = min(max_outcomes, len(x0) // 4)
    if limit < 1 or not (
        _distinct_at_most(x0, schema, limit) and _distinct_at_most(x1, schema, limit)
    ):
        return []
    outcomes, inverse = _factorise(np.concatenate([x0, x1]), schema)
    if len(outcomes) > limit:
        return []
    n = len(x0)
    found = []
    for num, chosen, score in _best_class_sets(inverse[:n], inverse[n:], len(outcomes), scorer):
        event = OutcomeSetEvent(tuple(outcomes[i] for i in chosen), schema, columns)
        found.append(Candidate(event, num, score, "outcomes"))
    return found


def outcome_views(schema: OutputSchema) -> list[tuple[int, ...] | None]:
    """What the ``outcomes`` family factorises: whole outputs (None), and for structured
    outputs also their structure (:meth:`~dpaudit.audit.structured.Layout.structure_columns`:
    the exact key set, the length, None, the exception raised), whose outcomes repeat when
    the values do not."""
    if schema.layout is None or not schema.layout.structure_columns():
        return [None]
    return [None, schema.layout.structure_columns()]


def threshold_features(x0: np.ndarray, x1: np.ndarray, schema: OutputSchema) -> list[Feature]:
    """The fixed features the ``threshold`` family thresholds: the output itself (scalars),
    else :func:`_vector_features`."""
    return [Identity()] if schema.kind == "scalar" else list(_vector_features(x0, x1, schema))


def non_finite_events(x0: np.ndarray, x1: np.ndarray, schema: OutputSchema) -> list[NonFiniteEvent]:
    """NaN, +inf, -inf and "any of them" events on the output (scalars) or on each number
    column of a vector or structured output, where the selection samples hold such values."""
    columns: list[int | None] = [None]
    if schema.kind != "scalar":
        columns = [*_number_columns(schema)][:MAX_COORDINATES]
    events = []
    for j in columns:
        v0 = x0 if j is None else x0[:, j]
        v1 = x1 if j is None else x1[:, j]
        if np.isfinite(v0).all() and np.isfinite(v1).all():
            continue
        name = "the output" if j is None else schema.column_name(j)
        absent, present = _guards(schema, j)
        # a complement under guards ("the key is there and its value is not NaN") is no
        # longer one plain statement: guarded columns get the non-finite kinds only
        guarded = bool(absent) or present is not None
        events += [
            NonFiniteEvent(kind, j, name, absent, present)
            for kind in NON_FINITE
            if not (guarded and kind in NON_FINITE_COMPLEMENTS)
        ]
    return events


def _guards(schema: OutputSchema, column: int | None) -> tuple[tuple[int, ...], int | None]:
    """For a number column of a structured output, the columns that must be 0 (None, raised)
    and the count column that must be >= 1 for a NaN there to be a released NaN
    (:class:`~dpaudit.audit.events.NonFiniteEvent`)."""
    layout = schema.layout
    if layout is None or column is None:
        return (), None
    absent = tuple(c for c in (layout.none_column, layout.raised_column) if c is not None)
    for count, values in layout.label_columns():
        if column in values:
            return absent, count
    return absent, None


def _best_non_finite(
    x0: np.ndarray, x1: np.ndarray, schema: OutputSchema, scorer: Scorer
) -> list[Candidate]:
    """The best :func:`non_finite_events` event per direction (family ``threshold``: listed
    before the learned scores, so a plain event wins over a score as good)."""
    events = non_finite_events(x0, x1, schema)
    if not events:
        return []
    hits = (count_hits(events, x0), count_hits(events, x1))
    found = []
    for numerator in (0, 1):
        j, score = _argbest(scorer, hits[numerator], hits[1 - numerator], len(x0))
        found.append(Candidate(events[j], numerator, score, "threshold"))
    return found


def _number_columns(schema: OutputSchema) -> range | tuple[int, ...]:
    """The columns of numbers the mechanism released: every coordinate of a vector, the
    value columns of a structured output."""
    if schema.layout is not None:
        return schema.layout.value_columns()
    return range(schema.width)


def _best_class_sets(
    codes0: np.ndarray, codes1: np.ndarray, classes: int, scorer: Scorer
) -> list[tuple[int, np.ndarray, float]]:
    """The best union of classes for each direction, from class codes in ``[0, classes)``.

    Classes are ordered by likelihood ratio on the first half of the samples and the prefixes
    of that order scored on the second half (Neyman-Pearson: the best event of each size is a
    prefix of the likelihood-ratio order), so classes seen once by chance do not look like
    perfect witnesses.

    Returns:
        ``(numerator, chosen class indices, predicted bound)`` for numerator 0 and 1.
    """
    n, h = len(codes0), len(codes0) // 2

    def counts(codes: np.ndarray) -> np.ndarray:
        return np.bincount(codes, minlength=classes)

    fit = (counts(codes0[:h]), counts(codes1[:h]))
    held = (counts(codes0[h:]), counts(codes1[h:]))
    found = []
    for numerator in (0, 1):
        num, den = fit[numerator], fit[1 - numerator]
        # Likelihood-ratio order (ties: larger events first).
        order = np.lexsort((-num, -(num + 0.5) / (den + 0.5)))
        j, score = _argbest(
            scorer,
            np.cumsum(held[numerator][order]),
            np.cumsum(held[1 - numerator][order]),
            n - h,
        )
        found.append((numerator, order[: j + 1], score))
    return found


def _best_float_classes(
    x0: np.ndarray,
    x1: np.ndarray,
    scorer: Scorer,
    coordinate: int | None = None,
    precision: str = "float64",
    name: str = "",
) -> list[Candidate]:
    """The ``bits`` family: unions of classes of the outputs' binary representation in their
    format ``precision`` (:func:`dpaudit.audit.float_bits.class_keys`), one candidate per
    partition and direction; ``x0``, ``x1`` are the values (of column ``coordinate``, named
    ``name``, of vector and structured outputs)."""
    found = []
    pooled = np.concatenate([x0, x1])
    n = len(x0)
    for key in class_keys(precision):
        # Codes are below key.size: compact the classes seen with a look-up table (a
        # bincount and a gather, no sort of the samples).
        raw = key.codes(pooled)
        codes = np.flatnonzero(np.bincount(raw, minlength=key.size))
        table = np.zeros(key.size, dtype=np.int64)
        table[codes] = np.arange(len(codes))
        inverse = table[raw]
        for num, chosen, score in _best_class_sets(inverse[:n], inverse[n:], len(codes), scorer):
            event = FloatClassEvent(key, tuple(int(c) for c in codes[chosen]), coordinate, name)
            found.append(Candidate(event, num, score, "bits"))
    return found


def _vector_features(
    x0: np.ndarray, x1: np.ndarray, schema: OutputSchema | None = None
) -> Iterable[Feature]:
    """Each coordinate (of a structured output: each column that holds a number or a count,
    named), and over the numbers of a vector (the core of a structured output) the sum, the
    maximum and the mean-difference projection."""
    layout = None if schema is None else schema.layout
    if layout is not None:
        columns = sorted({*layout.value_columns(), *layout.count_columns()})
        yield from (Coordinate(j, layout.column_name(j), layout) for j in columns[:MAX_COORDINATES])
        if layout.core < 2:
            return
        width = layout.core
        x0, x1 = x0[:, :width], x1[:, :width]
        pad = [0.0] * (layout.width - width)
    else:
        width, pad = x0.shape[1], []
        yield from (Coordinate(j) for j in range(min(width, MAX_COORDINATES)))
    if width > 1:
        yield Projection(tuple([1.0] * width + pad), "the sum")
        yield MaxCoordinate(width if pad else None)
        # means over the finite entries (an infinite output would make the difference NaN)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column with no finite entry
            finite0 = np.where(np.isfinite(x0), x0, np.nan)
            finite1 = np.where(np.isfinite(x1), x1, np.nan)
            diff = np.nanmean(finite0, axis=0) - np.nanmean(finite1, axis=0)
        diff = np.nan_to_num(diff, posinf=0.0, neginf=0.0)
        if np.any(diff != 0):
            yield Projection(
                tuple((diff / np.abs(diff).max()).tolist() + pad), "the mean-difference projection"
            )


#: The parts of a search, in the order their candidates are listed before ranking. Each
#: depends on the selection samples alone (and ``classifier`` on a copy of the search's rng),
#: so the parts can run in any order or at once (in the auditor's workers) and give the
#: same candidates.
SEARCH_PARTS = ("threshold", "outcomes", "classifier", "bits")


def check_families(families: Iterable[str]) -> tuple[str, ...]:
    """``families`` as a tuple.

    Raises:
        ValueError: if a family name is unknown.
    """
    families = tuple(families)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise ValueError(f"families must be a subset of {FAMILIES}, got unknown {sorted(unknown)}")
    return families


def search_parts(schema: OutputSchema, families: Iterable[str], n: int) -> list[str]:
    """The parts of :data:`SEARCH_PARTS` that search ``families`` on ``n`` samples per
    dataset in ``schema``.

    Raises:
        ValueError: if a family name is unknown.
    """
    families = check_families(families)
    numeric = schema.kind != "categorical"
    applies = {
        "threshold": "threshold" in families and numeric,
        "outcomes": "outcomes" in families,
        "classifier": "classifier" in families and numeric and n >= 4,
        "bits": "bits" in families and bool(_bits_columns(schema)),
    }
    return [part for part in SEARCH_PARTS if applies[part]]


def part_pieces(part: str, schema: OutputSchema) -> int:
    """Pieces a part of :data:`SEARCH_PARTS` splits into (:func:`search_part`'s ``piece``):
    the ``bits`` search of vector outputs, one per searched coordinate (the costliest part
    of a ten-dimensional search, about 0.6 s on 250,000 samples per dataset: split, the
    auditor's workers share it); every other part is one piece."""
    if part == "bits" and schema.kind != "scalar":
        return max(1, len(_bits_columns(schema)))
    return 1


def _bits_columns(schema: OutputSchema) -> list[int | None]:
    """The columns the ``bits`` family searches: the output (scalars), else the first
    :data:`MAX_BITS_COORDINATES` number columns."""
    if schema.kind == "scalar":
        return [None]
    if schema.kind == "categorical":
        return []
    return [*_number_columns(schema)][:MAX_BITS_COORDINATES]


def search_part(
    part: str,
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
    piece: int | None = None,
) -> list[Candidate]:
    """The candidates of one part of :data:`SEARCH_PARTS` (unranked; arguments as for
    :func:`search_events`; ``rng`` is used in the state it is given, on a copy).

    With ``piece`` (in ``range(part_pieces(part, schema))``), the candidates of that piece
    only: the pieces' candidates in piece order are the part's.

    Raises:
        ValueError: if ``piece`` is not one of the part's pieces.
    """
    if piece is not None and not (
        isinstance(piece, int) and 0 <= piece < part_pieces(part, schema)
    ):
        raise ValueError(
            f"piece must be None or an integer in [0, {part_pieces(part, schema)}) for part "
            f"{part!r}, got {piece!r}"
        )
    found: list[Candidate] = []
    if part == "threshold":
        for feature in threshold_features(x0, x1, schema):
            found += _best_threshold(feature, x0, x1, scorer, "threshold")
        found += _best_non_finite(x0, x1, schema, scorer)
    elif part == "outcomes":
        for columns in outcome_views(schema):
            found += _best_outcome_sets(x0, x1, schema, scorer, max_outcomes, columns)
    elif part == "classifier":
        # Fit on one half, choose the threshold on the other (as DP-Sniper does), so the
        # predicted bound of a learned event is not inflated by overfitting.
        h = len(x0) // 2
        plain = plain_grid(np.concatenate([x0, x1])) if schema.kind == "scalar" else None
        fitted = fit_logistic(x0[:h], x1[:h], copy.deepcopy(rng))
        for model in (fitted, fit_binned_ratio(x0[:h], x1[:h])):
            found += _best_threshold(model, x0[h:], x1[h:], scorer, "classifier", plain)
    elif part == "bits" and schema.kind == "scalar":
        found += _best_float_classes(x0, x1, scorer, precision=schema.precision)
    elif part == "bits":
        bits_columns = _bits_columns(schema)
        for j in bits_columns if piece is None else [bits_columns[piece]]:
            assert j is not None  # a column of a vector or structured output
            name = schema.column_name(j) if schema.layout is not None else ""
            found += _best_float_classes(x0[:, j], x1[:, j], scorer, j, schema.precision, name)
    return found


def rank(found: list[Candidate], schema: OutputSchema) -> list[Candidate]:
    """The candidates of every part, in the order of :data:`SEARCH_PARTS`, sorted by
    predicted bound (best first; a stable sort); the "none" placeholders when there are
    none."""
    if not found:  # e.g. non-numeric outputs that never repeat: nothing to test
        found = [Candidate(OutcomeSetEvent((), schema), n, -np.inf, "none") for n in (0, 1)]
    return sorted(found, key=lambda c: c.predicted, reverse=True)


def search_events(
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    families: Iterable[str] = FAMILIES,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
) -> list[Candidate]:
    """Propose the best event of every applicable family, in both directions.

    Args:
        x0: selection outputs under d0 (array in ``schema``).
        x1: selection outputs under d1.
        schema: the output schema.
        scorer: maps (numerator hits, denominator hits, samples per side) to predicted bounds.
        families: subset of :data:`FAMILIES` to search.
        max_outcomes: discrete outputs with more distinct outcomes than this are not searched
            as outcome sets.
        rng: randomness for model fitting (subsampling only; each part starts from its
            state, which is left unchanged).

    Returns:
        Candidates sorted by predicted bound, best first.

    Raises:
        ValueError: if a family name is unknown.
    """
    parts = search_parts(schema, families, len(x0))
    return rank(
        [
            c
            for part in parts
            for c in search_part(part, x0, x1, schema, scorer, max_outcomes=max_outcomes, rng=rng)
        ],
        schema,
    )
