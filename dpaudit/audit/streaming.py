"""Streaming event selection: memory flat in the number of samples.

An audit with more selection samples than :data:`HELD_SELECTION_SAMPLES` per dataset does not
hold them. It selects in two steps, both on selection samples only (certification draws its
own, fresh samples afterwards):

1. a *pilot*: the first batches of the selection samples, at most
   :data:`HELD_SELECTION_SAMPLES` per dataset, held in memory. Every event family looks at it
   and proposes *sketches*: finite families of candidate events (the thresholds of a feature,
   the prefixes of a likelihood-ratio order of outcomes, ...), with the models of learned
   features fitted here. The proposal is made of independent parts (:data:`PARTS`), which the
   auditor's own worker processes run at once (:mod:`dpaudit.audit.parallel`);
2. the *stream*: the other selection batches are drawn in the worker processes, where each
   sketch *tallies* every batch (a histogram of the statistic it needs); only the tallies
   return, and are summed. The candidate events of every sketch are then scored on the summed
   tallies and the best of each goes to certification, like the events of
   :func:`dpaudit.audit.selection.search_events`. The thresholds of fixed features are scored
   on the pilot's tallies too (as the in-memory search scores them on the samples it drew
   them from); learned scores and outcome orders, fitted on the pilot, are scored on the
   stream only, so that their fit does not flatter them.

Sketch protocol (what an event family implements to stream; see :class:`ThresholdSketch`):

* ``tally(outputs) -> numpy int64 array`` of a length fixed when the sketch is made. A tally
  counts, so the tally of several batches is the sum of theirs: exactly additive, hence the
  same however many workers run the batches and in whatever order they finish (the seed of
  each batch is fixed by its position: :mod:`dpaudit.audit.runner`);
* ``candidates(tally0, tally1, n, scorer) -> list[Candidate]``: from the summed tallies of
  ``n`` streamed samples of d0 and of d1, the best events in each direction, scored with
  ``scorer`` (:func:`dpaudit.audit.estimators.predicted_bounds`);
* picklable (a frozen dataclass of arrays and events): sketches travel to the workers.

A family with no sketch of its own still streams: the events it chooses on the pilot
(:func:`~dpaudit.audit.selection.search_events`) are re-scored on the stream by an
:class:`EventSketch`, so new families work unchanged and gain a sketch when they need finer
choices.

Soundness: pilot and stream are both selection samples, seeded apart from the certification
samples, so the chosen events are independent of the samples that certify them; nothing
here certifies anything.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from dpaudit.audit.classifier import fit_binned_ratio_scored, fit_logistic
from dpaudit.audit.events import (
    Feature,
    OutcomeSetEvent,
    OutputEvent,
    ThresholdEvent,
    count_hits,
    plain_grid,
    plain_intervals,
)
from dpaudit.audit.outputs import OutputSchema, row_keys
from dpaudit.audit.selection import (
    FAMILIES,
    Candidate,
    Scorer,
    _argbest,
    _distinct_at_most,
    _factorise,
    _threshold_grid,
    check_families,
    non_finite_events,
    outcome_views,
    part_pieces,
    pick_thresholds,
    rank,
    search_events,
    search_part,
    search_parts,
    threshold_features,
)

__all__ = [
    "HELD_SELECTION_SAMPLES",
    "PARTS",
    "EventSketch",
    "OutcomeSketch",
    "Proposal",
    "Sketch",
    "ThresholdSketch",
    "held_samples",
    "others_piece",
    "others_pieces",
    "others_proposal",
    "pilot_counts",
    "placeholder_sketch",
    "plain_sample",
    "proposal_parts",
    "propose_part",
    "propose_parts",
    "propose_sketches",
    "restate",
    "select_from_tallies",
]

#: Selection samples per dataset held in memory (the pilot); the rest are streamed as tallies.
HELD_SELECTION_SAMPLES = 250_000
#: Thresholds added beyond each end of the pilot's values, at these multiples of the distance
#: between the pilot's extreme and its 10th most extreme value: the stream, larger than the
#: pilot, reaches further into the tails, where zero-hit events live.
TAIL_STEPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Pilot outputs over which a learned event is restated as intervals (a description only).
PLAIN_SAMPLES = 50_000


class Sketch(Protocol):
    """What a family streams (see the module docstring)."""

    def tally(self, outputs: np.ndarray) -> np.ndarray:
        """Counts of a batch of outputs (int64, fixed length, additive over batches)."""
        ...

    def candidates(
        self, tally0: np.ndarray, tally1: np.ndarray, n: int, scorer: Scorer
    ) -> list[Candidate]:
        """The best events in each direction, from the summed tallies of ``n`` samples."""
        ...


def held_samples(n_selection: int, batch_size: int) -> int:
    """Selection samples per dataset held in memory: all of them up to
    :data:`HELD_SELECTION_SAMPLES`, else the whole batches that fit in it (at least one)."""
    if n_selection <= HELD_SELECTION_SAMPLES:
        return n_selection
    return min(n_selection, max(1, HELD_SELECTION_SAMPLES // batch_size) * batch_size)


def _extended(grid: np.ndarray, s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    """``grid`` plus thresholds beyond the pilot's extremes (:data:`TAIL_STEPS`)."""
    pooled = np.concatenate([s0[:10], s0[-10:], s1[:10], s1[-10:]])
    low, high = float(min(s0[0], s1[0])), float(max(s0[-1], s1[-1]))
    inner_low, inner_high = np.sort(pooled)[min(9, len(pooled) - 1)], np.sort(pooled)[-10]
    steps = np.asarray(TAIL_STEPS)
    extra = [low - (inner_low - low) * steps, high + (high - inner_high) * steps]
    out = np.unique(np.concatenate([grid, *extra]))
    return out[np.isfinite(out)]


@dataclass(frozen=True, eq=False)
class ThresholdSketch:
    """Threshold events ``f(x) >= t`` and ``f(x) <= t`` of one feature on a fixed grid.

    The tally is ``[le_0..le_{G-1}, lt_0..lt_{G-1}, present]``: per threshold ``t_i`` the
    values ``<= t_i`` and ``< t_i``, and the values counted (NaN is in no event); the hits of
    ``f >= t_i`` are ``present - lt_i``. A batch is sorted once and the thresholds located
    in it (a SIMD sort and ``G`` binary searches cost far less than a binary search per
    value).
    """

    feature: Feature
    thresholds: np.ndarray
    family: str

    def tally(self, outputs: np.ndarray) -> np.ndarray:
        """Values at or below, and below, each threshold, and values counted."""
        v = self.feature.values(outputs)
        v = np.sort(v[~np.isnan(v)])
        g = self.thresholds
        return np.concatenate(
            [np.searchsorted(v, g, "right"), np.searchsorted(v, g, "left"), [len(v)]]
        ).astype(np.int64)

    def hits(self, tally: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """``(ge, le, present)``: hits of ``f >= t_i``, of ``f <= t_i``, and values counted."""
        size = len(self.thresholds)
        le, lt, present = tally[:size], tally[size : 2 * size], int(tally[-1])
        return present - lt, le, present

    def candidates(
        self, tally0: np.ndarray, tally1: np.ndarray, n: int, scorer: Scorer
    ) -> list[Candidate]:
        ge0, le0, _ = self.hits(tally0)
        ge1, le1, _ = self.hits(tally1)
        return pick_thresholds(
            self.feature,
            self.thresholds,
            (ge0, ge1),
            (le0, le1),
            n,
            scorer,
            self.family,
        )


@dataclass(frozen=True, eq=False)
class OutcomeSketch:
    """Sets of outcomes: prefixes of each direction's likelihood-ratio order on the pilot.

    The tally counts each outcome seen in the pilot (outcomes outside it are in no event).
    """

    outcomes: tuple[Any, ...]
    orders: tuple[np.ndarray, np.ndarray]
    schema: OutputSchema
    columns: tuple[int, ...] | None = None
    _keys: np.ndarray | None = field(default=None, repr=False)
    _index: np.ndarray | None = field(default=None, repr=False)
    _lookup: dict[Any, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.schema.kind == "categorical":
            object.__setattr__(self, "_lookup", {o: i for i, o in enumerate(self.outcomes)})
            return
        arr = np.asarray(self.outcomes, dtype=float)
        keys = arr if self.schema.kind == "scalar" else row_keys(arr)
        order = np.argsort(keys, kind="stable")
        object.__setattr__(self, "_keys", keys[order])
        object.__setattr__(self, "_index", order)

    def _codes(self, outputs: np.ndarray) -> np.ndarray:
        if self.columns is not None:
            outputs = outputs[:, list(self.columns)]
        if self.schema.kind == "categorical":
            return np.fromiter((self._lookup.get(o, -1) for o in outputs), int, len(outputs))
        assert self._keys is not None and self._index is not None  # set in __post_init__
        keys = outputs + 0.0 if self.schema.kind == "scalar" else row_keys(outputs)
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[at] == keys, self._index[at], -1)

    def tally(self, outputs: np.ndarray) -> np.ndarray:
        """Count of each pilot outcome."""
        codes = self._codes(outputs)
        return np.bincount(codes[codes >= 0], minlength=len(self.outcomes)).astype(np.int64)

    def candidates(
        self, tally0: np.ndarray, tally1: np.ndarray, n: int, scorer: Scorer
    ) -> list[Candidate]:
        found = []
        tallies = (tally0, tally1)
        for numerator in (0, 1):
            order = self.orders[numerator]
            j, score = _argbest(
                scorer,
                np.cumsum(tallies[numerator][order]),
                np.cumsum(tallies[1 - numerator][order]),
                n,
            )
            chosen = tuple(self.outcomes[i] for i in order[: j + 1])
            event = OutcomeSetEvent(chosen, self.schema, self.columns)
            found.append(Candidate(event, numerator, score, "outcomes"))
        return found


@dataclass(frozen=True, eq=False)
class EventSketch:
    """Fixed events (chosen on the pilot by a family without a sketch), re-scored on the
    stream in the direction they were chosen for."""

    events: tuple[OutputEvent, ...]
    numerators: tuple[int, ...]
    families: tuple[str, ...]

    def tally(self, outputs: np.ndarray) -> np.ndarray:
        """Hits of each event."""
        return count_hits(self.events, outputs)

    def candidates(
        self, tally0: np.ndarray, tally1: np.ndarray, n: int, scorer: Scorer
    ) -> list[Candidate]:
        tallies = (tally0, tally1)
        found = []
        for j, (event, num, family) in enumerate(
            zip(self.events, self.numerators, self.families, strict=True)
        ):
            score = scorer(tallies[num][j : j + 1], tallies[1 - num][j : j + 1], n)
            found.append(Candidate(event, num, float(score[0]), family))
        return found


def _threshold_sketch(
    feature: Feature,
    x0: np.ndarray,
    x1: np.ndarray,
    family: str,
    values: tuple[np.ndarray, np.ndarray] | None = None,
) -> ThresholdSketch | None:
    """The threshold sketch of ``feature`` over the pilot; ``values``: the feature's values
    on ``x0`` and ``x1`` when known already."""
    v0, v1 = values if values is not None else (feature.values(x0), feature.values(x1))
    s0, s1 = np.sort(v0[~np.isnan(v0)]), np.sort(v1[~np.isnan(v1)])
    if len(s0) == 0 or len(s1) == 0:
        return None
    grid = _extended(_threshold_grid(s0, s1), s0, s1)
    return ThresholdSketch(feature, grid, family)


def _outcome_sketch(
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    max_outcomes: int,
    columns: tuple[int, ...] | None = None,
) -> OutcomeSketch | None:
    """Outcome sets as :func:`~dpaudit.audit.selection.search_events` searches them, ordered
    on the whole pilot (the stream is the held-out part); of the values in ``columns`` when
    given (:func:`~dpaudit.audit.selection.outcome_views`)."""
    if columns is not None:
        x0, x1 = x0[:, list(columns)], x1[:, list(columns)]
    limit = min(max_outcomes, len(x0) // 4)
    if limit < 1 or not (
        _distinct_at_most(x0, schema, limit) and _distinct_at_most(x1, schema, limit)
    ):
        return None
    outcomes, inverse = _factorise(np.concatenate([x0, x1]), schema)
    if len(outcomes) > limit:
        return None
    n = len(x0)
    fit = (
        np.bincount(inverse[:n], minlength=len(outcomes)),
        np.bincount(inverse[n:], minlength=len(outcomes)),
    )
    orders = []
    for numerator in (0, 1):
        num, den = fit[numerator], fit[1 - numerator]
        orders.append(np.lexsort((-num, -(num + 0.5) / (den + 0.5))))
    return OutcomeSketch(tuple(outcomes), (orders[0], orders[1]), schema, columns)


#: The parts of a proposal, in the order their sketches are listed. Each depends on the
#: pilot alone (and ``logistic`` on a copy of the proposal's rng), so the parts can run in
#: any order or at once (:func:`propose_part` in the workers) and give the same sketches.
#: The ``others`` part also splits into pieces (:func:`others_pieces`).
PARTS = ("threshold", "outcomes", "logistic", "binned", "others")
#: Relative cost of the parts, to start the costly ones first in parallel (10-D pilots of
#: 200,000 per dataset: bits 0.5-0.6 s, binned ratio and thresholds with their pilot
#: tallies 0.4-0.5 s, logistic 0.1 s; a hint only; a piece of ``others`` costs its share).
PART_COST = {"others": 6, "binned": 4, "threshold": 4, "logistic": 1, "outcomes": 0}


def _others(families: tuple[str, ...]) -> list[str]:
    return [f for f in families if f not in ("threshold", "outcomes", "classifier")]


def proposal_parts(schema: OutputSchema, families: Iterable[str], pilot_size: int) -> list[str]:
    """The parts of :data:`PARTS` that propose sketches for ``families`` on a pilot of
    ``pilot_size`` samples per dataset in ``schema``.

    Raises:
        ValueError: if a family name is unknown.
    """
    families = check_families(families)
    numeric = schema.kind != "categorical"
    learned = "classifier" in families and numeric and pilot_size >= 4
    applies = {
        "threshold": "threshold" in families and numeric,
        "outcomes": "outcomes" in families,
        "logistic": learned,
        "binned": learned,
        "others": bool(_others(families)),
    }
    return [part for part in PARTS if applies[part]]


def _part_sketches(
    part: str,
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    families: tuple[str, ...],
    max_outcomes: int,
    rng: np.random.Generator,
) -> list[Any]:
    found: list[Any]
    if part == "threshold":
        features = threshold_features(x0, x1, schema)
        found = [_threshold_sketch(f, x0, x1, "threshold") for f in features]
        special = non_finite_events(x0, x1, schema)  # re-scored on the stream, both ways
        if special:
            found.append(
                EventSketch(
                    tuple(special * 2),
                    (0,) * len(special) + (1,) * len(special),
                    ("threshold",) * (2 * len(special)),
                )
            )
    elif part == "outcomes":
        found = [
            _outcome_sketch(x0, x1, schema, max_outcomes, columns)
            for columns in outcome_views(schema)
        ]
    elif part == "logistic":
        found = [_threshold_sketch(fit_logistic(x0, x1, rng), x0, x1, "classifier")]
    elif part == "binned":
        score, v0, v1 = fit_binned_ratio_scored(x0, x1)
        found = [_threshold_sketch(score, x0, x1, "classifier", (v0, v1))]
    else:  # "others": families without a sketch choose their events on the pilot
        found = [
            c
            for piece in others_pieces(schema, families, len(x0))
            for c in others_piece(piece, x0, x1, schema, scorer, max_outcomes=max_outcomes, rng=rng)
        ]
        return list(others_proposal(found, schema).sketches)
    return [s for s in found if s is not None]


def others_pieces(
    schema: OutputSchema, families: Iterable[str], pilot_size: int
) -> list[tuple[str, int]]:
    """The pieces of the ``others`` part: ``(search part, piece)`` for each piece
    (:func:`~dpaudit.audit.selection.part_pieces`) of the families without a sketch, in
    :func:`~dpaudit.audit.selection.search_events`'s order (ValueError: unknown family)."""
    others = _others(check_families(families))
    return [
        (part, j)
        for part in search_parts(schema, others, pilot_size)
        for j in range(part_pieces(part, schema))
    ]


def others_piece(
    piece: tuple[str, int],
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
) -> list[Candidate]:
    """The pilot's candidates of one piece of :func:`others_pieces` (unranked)."""
    part, j = piece
    return search_part(part, x0, x1, schema, scorer, max_outcomes=max_outcomes, rng=rng, piece=j)


def others_proposal(found: list[Candidate], schema: OutputSchema) -> Proposal:
    """The ``others`` part's proposal from its pieces' candidates, in piece order: the
    events :func:`~dpaudit.audit.selection.search_events` chooses (ranked; the "none"
    placeholders without any), re-scored on the stream."""
    return Proposal((_event_sketch(rank(found, schema)),), (None,))


def _event_sketch(found: list[Candidate]) -> EventSketch:
    return EventSketch(
        tuple(c.event for c in found),
        tuple(c.numerator for c in found),
        tuple(c.family for c in found),
    )


def placeholder_sketch(schema: OutputSchema, scorer: Scorer) -> EventSketch:
    """The sketch of a proposal no part contributed to: the "none" placeholder events of
    :func:`~dpaudit.audit.selection.search_events` (no family applies)."""
    empty = np.empty(0)  # no family: search_events reads no output
    return _event_sketch(
        search_events(empty, empty, schema, scorer, families=(), rng=np.random.default_rng(0))
    )


@dataclass(frozen=True, eq=False)
class Proposal:
    """What one part proposes (:func:`propose_part`).

    Attributes:
        sketches: the part's sketches, in order.
        pilot_tallies: per sketch, its tallies of the pilot under d0 and d1 when its
            candidates are scored on the pilot too (:func:`pilot_counts`), else None.
        observed: the pilot's outputs, thinned to about :data:`PLAIN_SAMPLES`
            (:func:`plain_sample`), when asked for; else None.
    """

    sketches: tuple[Any, ...]
    pilot_tallies: tuple[tuple[np.ndarray, np.ndarray] | None, ...]
    observed: np.ndarray | None = None


def plain_sample(observed: np.ndarray) -> np.ndarray:
    """At most about :data:`PLAIN_SAMPLES` of ``observed``, evenly spaced (thinning twice
    gives what thinning once does)."""
    return observed[:: max(1, len(observed) // PLAIN_SAMPLES)]


def propose_part(
    part: str,
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    families: Iterable[str] = FAMILIES,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
    observe: bool = False,
) -> Proposal:
    """The sketches of one part of :data:`PARTS` from the pilot, with their pilot tallies.

    Args:
        part: one of :func:`proposal_parts`.
        x0: pilot selection outputs under d0 (array in ``schema``).
        x1: pilot selection outputs under d1.
        schema: the output schema.
        scorer: the selection scorer (a picklable callable when parts run in workers).
        families: subset of :data:`~dpaudit.audit.selection.FAMILIES`.
        max_outcomes: as for :func:`~dpaudit.audit.selection.search_events`.
        rng: randomness for model fitting; a part uses the generator in the state it is
            given (a copy), so that parts give the same sketches in any order (in the
            auditor's workers: :mod:`dpaudit.audit.parallel`).
        observe: also return the thinned pilot outputs (:attr:`Proposal.observed`).

    Returns:
        The :class:`Proposal`.
    """
    found = _part_sketches(
        part, x0, x1, schema, scorer, tuple(families), max_outcomes, copy.deepcopy(rng)
    )
    tallies = tuple(
        (np.asarray(s.tally(x0)), np.asarray(s.tally(x1))) if pilot_counts(s) else None
        for s in found
    )
    observed = plain_sample(np.concatenate([x0, x1])) if observe else None
    return Proposal(tuple(found), tallies, observed)


def propose_sketches(
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    families: Iterable[str] = FAMILIES,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
) -> list[Any]:
    """The sketches of every applicable family, from the pilot samples: the sketches of
    every part (:func:`propose_part`) in the order of :data:`PARTS`, or the placeholder
    sketch when no part proposes one.

    Args:
        x0: pilot selection outputs under d0 (array in ``schema``).
        x1: pilot selection outputs under d1.
        schema: the output schema.
        scorer: the selection scorer (for families without a sketch, which choose on the
            pilot).
        families: subset of :data:`~dpaudit.audit.selection.FAMILIES`.
        max_outcomes: as for :func:`~dpaudit.audit.selection.search_events`.
        rng: randomness for model fitting (each part starts from its state).

    Returns:
        The sketches (at least one).

    Raises:
        ValueError: if a family name is unknown.
    """
    proposals = propose_parts(
        x0, x1, schema, scorer, families=families, max_outcomes=max_outcomes, rng=rng
    )
    sketches = [s for p in proposals for s in p.sketches]
    return sketches or [placeholder_sketch(schema, scorer)]


def propose_parts(
    x0: np.ndarray,
    x1: np.ndarray,
    schema: OutputSchema,
    scorer: Scorer,
    *,
    families: Iterable[str] = FAMILIES,
    max_outcomes: int = 10_000,
    rng: np.random.Generator,
) -> list[Proposal]:
    """Every part's proposal (:func:`propose_part`) from the pilot samples held here, in the
    order of :data:`PARTS` (arguments as for :func:`propose_sketches`)."""
    families = tuple(families)
    return [
        propose_part(
            part, x0, x1, schema, scorer, families=families, max_outcomes=max_outcomes, rng=rng
        )
        for part in proposal_parts(schema, families, len(x0))
    ]


def pilot_counts(sketch: Any) -> bool:
    """Whether ``sketch``'s candidates are scored on the pilot's tallies as well as the
    stream's: thresholds of fixed (not learned) features."""
    return isinstance(sketch, ThresholdSketch) and sketch.family == "threshold"


def select_from_tallies(
    sketches: list[Any],
    tallies0: list[np.ndarray],
    tallies1: list[np.ndarray],
    sizes: list[int],
    scorer: Scorer,
    observed: np.ndarray | None = None,
) -> list[Candidate]:
    """Every sketch's best candidates from the stream's summed tallies, best first.

    Args:
        sketches: from :func:`propose_sketches`.
        tallies0: summed tally of each sketch over the streamed samples of d0.
        tallies1: the same under d1.
        sizes: samples per dataset behind each sketch's tallies.
        scorer: the selection scorer.
        observed: scalar outputs (the pilot) over which learned events are restated as
            intervals for people (at most :data:`PLAIN_SAMPLES` of them are used), or None.

    Returns:
        Candidates sorted by predicted bound, best first (the "none" placeholder events when
        no sketch proposes any).
    """
    found: list[Candidate] = []
    for sketch, t0, t1, n in zip(sketches, tallies0, tallies1, sizes, strict=True):
        found += sketch.candidates(t0, t1, n, scorer)
    if observed is not None:
        found = restate(found, observed)
    found.sort(key=lambda c: c.predicted, reverse=True)
    return found


def restate(found: list[Candidate], observed: np.ndarray) -> list[Candidate]:
    """``found`` with its learned threshold events restated as intervals of the (scalar)
    output over ``observed`` (at most :data:`PLAIN_SAMPLES` of them): a description only,
    so the auditor restates the chosen events, beside their counting."""
    grid = plain_grid(plain_sample(observed))  # one grid for every learned event
    return [
        replace(c, event=replace(c.event, plain=plain_intervals(c.event, grid=grid)))
        if c.family == "classifier" and isinstance(c.event, ThresholdEvent)
        else c
        for c in found
    ]
