"""Successive halving over candidate pairs: the record search's budget, spent where it tells.

Every candidate pair is scored on a few search samples per dataset (stage 0); the best
quarter is scored again on four times as many fresh samples (stage 1), and so on until at
most :data:`FINALISTS` remain (successive halving: Jamieson and Talwalkar, AISTATS 2016;
Karnin, Koren and Somekh, ICML 2013). Each stage costs about as much as the first, so the
whole search costs a few times the first stage, and :func:`plan` sizes the first stage (and
how many candidates enter it) so that the search draws at most :data:`SEARCH_FACTOR` times
the final audit's samples.

A candidate's score at a stage is how far the bound its best event would certify
(:func:`dpaudit.audit.estimators.predicted_bounds` through the event search of
:mod:`dpaudit.audit.selection`) exceeds the claim of its own pair (a claim may depend on the
dataset: :mod:`dpaudit.audit.claims`); the event "the output is NaN" is scored beside the
searched families (NaN compares false, so no threshold event holds it: a NaN record through a
clamp that passes NaN would otherwise rank low). Candidates are compared only with candidates
scored at the same stage (the prediction is pessimistic by an amount that depends on the
samples).

Seeds: the samples of candidate ``i`` at stage ``j`` on dataset ``side`` come from the
position ``(j, i, side)`` below the search's seed, the models' randomness from ``(j, i)``
below its own: the result is a function of the seed alone (and of ``budget_seconds`` when it
cuts the search short).

A candidate on which the function raises is *refused* (:class:`Refusal`: which dataset, the
exception and its message) and leaves the race, unless ``on_error="raise"``; with
``on_error="output"`` a pair on which exactly one dataset raises (or the two raise different
exceptions) is ranked first, as the exception is then an outcome only one dataset gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.batches import seed_sequence
from dpaudit.audit.claims import Claim
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.estimators import predicted_bounds
from dpaudit.audit.outputs import OutputSchema
from dpaudit.audit.record_pairs import CandidatePair, json_rows, rows
from dpaudit.audit.runner import Runner
from dpaudit.audit.selection import search_events

__all__ = [
    "ETA",
    "FINALISTS",
    "MIN_STAGE_SAMPLES",
    "SEARCH_FACTOR",
    "Entry",
    "Race",
    "RacePlan",
    "Refusal",
    "plan",
    "race_cost",
    "stage_counts",
]

#: The search draws at most this many times the final audit's samples (both datasets).
SEARCH_FACTOR = 2
#: Each stage keeps the best 1/ETA of the candidates and gives them ETA times the samples.
ETA = 4
#: Halving stops once at most this many candidates remain.
FINALISTS = 3
#: Fewest samples per dataset of a first-stage score (fewer candidates enter the race when
#: the budget cannot give each this many).
MIN_STAGE_SAMPLES = 100


def stage_counts(pool: int) -> list[int]:
    """Candidates scored at each stage when ``pool`` enter: ``pool``, then a quarter (rounded
    up) of the previous stage, until at most :data:`FINALISTS` remain."""
    counts = [pool]
    while counts[-1] > FINALISTS:
        counts.append(math.ceil(counts[-1] / ETA))
    return counts


@dataclass(frozen=True)
class RacePlan:
    """How the search's budget is spent.

    Attributes:
        structured: structured candidates entering the race.
        local: local-search candidates entering the race.
        first_samples: samples per dataset of a first-stage score.
        cap: most samples per dataset of any stage (the final audit's held selection
            samples: the search never holds more in memory than the audit does).
        budget: most samples the search may draw, both datasets of every candidate.
    """

    structured: int
    local: int
    first_samples: int
    cap: int
    budget: int

    def samples(self, stage: int) -> int:
        """Samples per dataset of a score at ``stage``."""
        return min(self.cap, self.first_samples * ETA**stage)


def race_cost(pool: int, first: int, cap: int) -> int:
    """Samples a race of ``pool`` candidates draws (both datasets, every stage)."""
    return sum(2 * k * min(cap, first * ETA**j) for j, k in enumerate(stage_counts(pool)))


def plan(budget: int, structured: int, local: int, cap: int) -> RacePlan:
    """The largest race (at most ``structured + local`` candidates, the two in proportion)
    whose first stage gets at least :data:`MIN_STAGE_SAMPLES` per dataset within ``budget``
    samples (one candidate when even that does not fit), with as many first-stage samples as
    the budget then allows (later stages are capped at ``cap``, which frees budget for the
    first ones).

    Args:
        budget: most samples drawn, both datasets of every candidate at every stage.
        structured: structured candidates wanted (>= 1).
        local: local-search candidates wanted (>= 0).
        cap: most samples per dataset of one score (>= 1).

    Returns:
        The :class:`RacePlan`; its cost is at most ``budget``.
    """
    wanted = structured + local
    pool = 1
    for size in range(wanted, 1, -1):
        if race_cost(size, min(MIN_STAGE_SAMPLES, cap), cap) <= budget:
            pool = size
            break
    low, high = 1, max(1, budget // 2)  # the cost grows with the first stage's samples
    while low < high:
        mid = (low + high + 1) // 2
        if race_cost(pool, mid, cap) <= budget:
            low = mid
        else:
            high = mid - 1
    n_local = local * pool // wanted
    return RacePlan(pool - n_local, n_local, min(low, cap), cap, budget)


@dataclass(frozen=True)
class Refusal:
    """A candidate pair the search left out because the function raised on it.

    Attributes:
        d0: the first dataset of the pair.
        d1: the second dataset.
        dataset: which of them raised: ``"d0"``, ``"d1"`` or ``"d0 and d1"``.
        exception: the exception's type name (``"MechanismError"`` for outputs the auditor
            cannot handle).
        message: the exception's message.
    """

    d0: np.ndarray
    d1: np.ndarray
    dataset: str
    exception: str
    message: str

    def __str__(self) -> str:
        data = {"d0": self.d0, "d1": self.d1, "d0 and d1": self.d0}
        return f"{self.exception}: {self.message} (on {self.dataset} = {rows(data[self.dataset])})"

    @classmethod
    def of(cls, pair: tuple[np.ndarray, np.ndarray], dataset: str, err: MechanismError) -> Refusal:
        """The refusal of ``pair`` for the error ``err`` raised on ``dataset``."""
        exception, message = err.raised if err.raised is not None else ("MechanismError", str(err))
        return cls(pair[0], pair[1], dataset, exception, message)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (non-finite values as strings)."""
        return {
            "d0": json_rows(self.d0),
            "d1": json_rows(self.d1),
            "dataset": self.dataset,
            "exception": self.exception,
            "message": self.message,
        }


@dataclass(eq=False)
class Entry:
    """A candidate pair in the race.

    Attributes:
        index: its position in the order candidates were proposed (seeds, ties).
        candidate: the pair as built.
        pair: its two datasets.
        epsilon: the pair's claimed epsilon (the larger of its datasets').
        delta: the pair's claimed delta.
        stage: the last stage it was scored at.
        score: predicted bound minus the pair's epsilon at that stage.
    """

    index: int
    candidate: CandidatePair
    pair: tuple[np.ndarray, np.ndarray]
    epsilon: float
    delta: float
    stage: int = 0
    score: float = -math.inf


@dataclass
class Race:
    """Scores candidate pairs on search samples, stage by stage.

    Attributes:
        runner: the runner drawing the search samples (its root is the search's seed).
        root: the audit's root seed (the models' randomness is below it at ``models``).
        models: the seed stream of the event search's model fitting.
        claim: the claim, read per pair.
        families: event families searched.
        schema: the output schema.
        n_certification: certification samples of the final audit (what scores predict).
        level: the per-bound level the final audit certifies at.
        on_error: ``"skip"``, ``"raise"`` or ``"output"``.
        drawn: samples drawn so far (both datasets; a refused dataset counts in full).
        proposed: candidates proposed so far (refused ones included): the next one's index.
        entries: candidates scored (not refused), in proposal order.
        refused: the refused candidates, in order.
    """

    runner: Runner
    root: np.random.SeedSequence
    models: int
    claim: Claim
    families: tuple[str, ...]
    schema: OutputSchema
    n_certification: int
    level: float
    on_error: str
    drawn: int = 0
    proposed: int = 0
    entries: list[Entry] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def refuse(
        self, pair: tuple[np.ndarray, np.ndarray], dataset: str, err: MechanismError
    ) -> None:
        """Record a refused pair (``dataset``: which of its datasets raised)."""
        self.refused.append(Refusal.of(pair, dataset, err))

    def _draw(
        self, pair: tuple[np.ndarray, np.ndarray], side: int, n: int, key: tuple[int, ...]
    ) -> np.ndarray | MechanismError:
        self.drawn += n
        try:
            return self.runner.sample(pair[side], n, (*key, side))
        except MechanismError as err:
            if self.on_error == "raise":
                raise MechanismError(
                    f"{err} (on the neighbouring datasets d0={rows(pair[0])}, d1={rows(pair[1])})",
                    raised=err.raised,
                ) from err
            return err

    def _score(self, entry: Entry, stage: int, n: int) -> bool:
        """Score ``entry`` at ``stage`` on ``n`` fresh samples per dataset; False when the
        pair is refused."""
        key = (stage, entry.index)
        x0 = self._draw(entry.pair, 0, n, key)
        if isinstance(x0, MechanismError) and self.on_error != "output":
            self.refuse(entry.pair, "d0", x0)
            return False
        x1 = self._draw(entry.pair, 1, n, key)
        if isinstance(x0, np.ndarray) and isinstance(x1, np.ndarray):
            entry.stage = stage
            entry.score = self.predicted(x0, x1, n, entry.delta, key) - entry.epsilon
            return True
        if self.on_error == "output" and _one_sided(x0, x1):
            entry.stage, entry.score = stage, math.inf  # an outcome one dataset gives
            return True
        failed = [x for x in (x0, x1) if isinstance(x, MechanismError)]
        which = "d0 and d1" if len(failed) == 2 else ("d0" if x0 is failed[0] else "d1")
        self.refuse(entry.pair, which, failed[0])
        return False

    def predicted(
        self, x0: np.ndarray, x1: np.ndarray, n: int, delta: float, key: tuple[int, ...]
    ) -> float:
        """The bound the best event on these samples predicts for the final audit."""

        def scorer(num: np.ndarray, den: np.ndarray, m: int) -> np.ndarray:
            return predicted_bounds(num, den, m, self.n_certification, self.level, delta)

        found = search_events(
            x0,
            x1,
            self.schema,
            scorer,
            families=self.families,
            rng=np.random.default_rng(seed_sequence(self.root, self.models, *key)),
        )
        best = found[0].predicted if found else -math.inf
        return max(best, _missing_bound(x0, x1, n, scorer))

    def enter(self, candidate: CandidatePair, pair: tuple[np.ndarray, np.ndarray], n: int) -> None:
        """Score a new candidate at stage 0 on ``n`` samples per dataset (refused or entered).

        Raises:
            ValueError: if the claim cannot be read on the pair (a claim function raising or
                returning a bad value).
            MechanismError: with ``on_error="raise"``, if the function raises.
        """
        epsilon, delta = self.claim.of_pair(*pair)
        entry = Entry(self.proposed, candidate, pair, epsilon, delta)
        self.proposed += 1
        if self._score(entry, 0, n):
            self.entries.append(entry)

    def best(self, count: int, stage: int) -> list[Entry]:
        """The ``count`` best entries scored at ``stage`` (ties: proposed first)."""
        at = [e for e in self.entries if e.stage == stage]
        return sorted(at, key=lambda e: (-e.score, e.index))[:count]

    def halve(self, race: RacePlan, out_of_time: Callable[[], bool]) -> list[tuple[int, int]]:
        """Successive halving over the entries scored at stage 0.

        Returns:
            ``(candidates, samples per dataset)`` of each stage run, stage 0 included.
        """
        stages = [(len(self.entries), race.samples(0))]
        pool = list(self.entries)
        stage = 0
        while len(pool) > FINALISTS and not out_of_time():
            stage += 1
            keep = self.best(math.ceil(len(pool) / ETA), stage - 1)
            n = race.samples(stage)
            pool = []
            for entry in keep:
                if self._score(entry, stage, n):
                    pool.append(entry)
                else:  # raised on these samples (it did not on the earlier ones)
                    self.entries.remove(entry)
            stages.append((len(keep), n))
        return stages

    def winner(self) -> Entry | None:
        """The best entry of the last stage reached (None when every candidate was refused)."""
        if not self.entries:
            return None
        last = max(e.stage for e in self.entries)
        return self.best(1, last)[0]


def _one_sided(x0: Any, x1: Any) -> bool:
    """Whether the exceptions ``fn`` raised (on one dataset, or different ones on the two)
    tell the datasets apart. An output the auditor cannot handle is no exception of ``fn``:
    never an outcome."""
    raised = [x.raised for x in (x0, x1) if isinstance(x, MechanismError)]
    types = [r[0] for r in raised if r is not None]
    return len(types) == len(raised) and (len(types) == 1 or types[0] != types[1])


def _missing_bound(
    x0: np.ndarray, x1: np.ndarray, n: int, scorer: Callable[..., np.ndarray]
) -> float:
    """The bound the event "an output is NaN" (or has a NaN coordinate) predicts, in the
    better direction: a NaN released on one dataset only (a NaN record through a clamp that
    passes NaN) is a witness the threshold events never see, as NaN compares false."""
    if x0.dtype.kind != "f" or x1.dtype.kind != "f":
        return -math.inf
    h0 = int(np.isnan(x0.reshape(len(x0), -1)).any(axis=1).sum())
    h1 = int(np.isnan(x1.reshape(len(x1), -1)).any(axis=1).sum())
    if h0 == h1:
        return -math.inf
    bounds = scorer(np.array([h0, h1]), np.array([h1, h0]), n)
    return float(np.max(bounds))
