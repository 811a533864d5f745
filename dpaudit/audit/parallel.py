"""Selection in the auditor's own worker processes (``workers > 1``).

With one process, the parent draws the selection samples (or the pilot of a streamed
selection) and searches them. With its own pool, that search was the serial part of an audit
(measured at 10^7 samples per dataset: about a tenth of a one-dimensional audit's second of
CPU, and 1-1.4 s of a ten-dimensional one's 15), so it runs in the workers, in parts:

* the search is cut into independent parts (:data:`~dpaudit.audit.selection.SEARCH_PARTS`,
  :data:`~dpaudit.audit.streaming.PARTS`), each depending on the samples alone (the one part
  that fits a model with the rng gets a copy of it in the state the one-process search would
  give it), and one task runs one part;
* a task draws the samples itself (:class:`~dpaudit.audit.runner.Pilot`: position-seeded
  batches, once per worker process) instead of receiving them: sending a ten-dimensional
  pilot (32 MB) to a task took 0.11 s, drawing it 0.1 s, and sends queue through the
  parent's one pipe where the workers draw at the same time;
* the parent merges the parts' results in the one-process order, so the candidates, the
  chosen events and the result are the same for any number of workers.

Memory: a worker holds one copy of the samples (at most
:data:`~dpaudit.audit.streaming.HELD_SELECTION_SAMPLES` per dataset) until its next counting
task; the parent holds none (of scalar outputs, a thinned copy of at most
:data:`~dpaudit.audit.streaming.PLAIN_SAMPLES` to restate learned events).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.audit.events import Feature, ThresholdEvent
from dpaudit.audit.pairs import NeighbouringPair
from dpaudit.audit.runner import Pilot, Runner
from dpaudit.audit.selection import Candidate, Scorer, rank, search_part, search_parts
from dpaudit.audit.statistical_limit import threshold_frequencies
from dpaudit.audit.streaming import (
    PART_COST,
    Proposal,
    proposal_parts,
    propose_part,
)

__all__ = ["feature_frequencies", "limit_feature", "propose_in_workers", "search_in_workers"]

#: Relative cost of the search parts (10-dimensional Laplace samples: bits 0.6 s, the two
#: learned scores 0.4 s, thresholds 0.2 s); a speed hint only: costly parts start first.
SEARCH_COST = {"bits": 3, "classifier": 2, "threshold": 1, "outcomes": 0}


def limit_feature(found: list[Candidate]) -> Feature | None:
    """The feature of the best threshold candidate (whose events the statistical limit is
    estimated on), or None without one."""
    best = next((c.event for c in found if isinstance(c.event, ThresholdEvent)), None)
    return None if best is None else best.feature


def feature_frequencies(
    feature: Feature, x0: np.ndarray, x1: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Selection frequencies of the threshold events of ``feature`` (None when empty)."""
    num, den = threshold_frequencies(feature.values(x0), feature.values(x1))
    return (num, den) if len(num) else None


def _ordered(parts: list[str], cost: dict[str, int]) -> list[int]:
    """Indices of ``parts``, the costly first (a stable order)."""
    return sorted(range(len(parts)), key=lambda j: -cost[parts[j]])


def _run_parts(
    runner: Runner, fn: Any, parts: list[str], cost: dict[str, int], jobs: list[tuple]
) -> list:
    """``fn(*jobs[j])`` for the part ``parts[j]``, every part on the runner's pool, the
    costly parts submitted first; results in the order of ``parts``."""
    order = _ordered(parts, cost)
    done = runner.run(fn, [jobs[j] for j in order], [0] * len(order))
    by_part = dict(zip(order, done, strict=True))
    return [by_part[j] for j in range(len(parts))]


def _propose_task(
    part: str,
    pilot: Pilot,
    scorer: Scorer,
    families: tuple[str, ...],
    max_outcomes: int,
    rng: np.random.Generator,
    observe: bool,
) -> Proposal:
    """Worker task: :func:`~dpaudit.audit.streaming.propose_part` on the pilot drawn here."""
    x0, x1 = pilot.outputs()
    return propose_part(
        part,
        x0,
        x1,
        pilot.schema,
        scorer,
        families=families,
        max_outcomes=max_outcomes,
        rng=rng,
        observe=observe,
    )


def _search_task(
    part: str, pilot: Pilot, scorer: Scorer, max_outcomes: int, rng: np.random.Generator
) -> list[Candidate]:
    """Worker task: :func:`~dpaudit.audit.selection.search_part` on the samples drawn here."""
    x0, x1 = pilot.outputs()
    return search_part(part, x0, x1, pilot.schema, scorer, max_outcomes=max_outcomes, rng=rng)


def _frequencies_task(feature: Feature, pilot: Pilot) -> tuple[np.ndarray, np.ndarray] | None:
    """Worker task: :func:`feature_frequencies` on the samples drawn here."""
    x0, x1 = pilot.outputs()
    return feature_frequencies(feature, x0, x1)


def propose_in_workers(
    runner: Runner,
    pair: NeighbouringPair,
    held: int,
    keys: tuple[tuple[int, ...], tuple[int, ...]],
    scorer: Scorer,
    families: tuple[str, ...],
    max_outcomes: int,
    rng: np.random.Generator,
) -> tuple[list[Proposal], np.ndarray | None]:
    """The proposals of a streamed selection's pilot (the first ``held`` samples at each of
    ``keys``), one part per task; and for scalar outputs the thinned pilot outputs (to
    restate learned events), else None.

    Returns:
        What the one-process proposal gives, part by part, and the thinned outputs.
    """
    pilot = runner.pilot([(pair.d0, held, keys[0]), (pair.d1, held, keys[1])])
    parts = proposal_parts(pilot.schema, families, held)
    scalar = pilot.schema.kind == "scalar"
    first = _ordered(parts, PART_COST)[0] if parts else -1
    jobs = [
        (part, pilot, scorer, families, max_outcomes, rng, scalar and j == first)
        for j, part in enumerate(parts)
    ]
    proposals = _run_parts(runner, _propose_task, parts, PART_COST, jobs)
    runner.advance(2 * held)
    observed = proposals[first].observed if parts else None
    return proposals, observed


def search_in_workers(
    runner: Runner,
    pair: NeighbouringPair,
    n: int,
    keys: tuple[tuple[int, ...], tuple[int, ...]],
    scorer: Scorer,
    families: tuple[str, ...],
    max_outcomes: int,
    rng: np.random.Generator,
    frequencies: bool,
) -> tuple[list[Candidate], tuple[np.ndarray, np.ndarray] | None]:
    """:func:`~dpaudit.audit.selection.search_events` on the ``n`` samples at each of
    ``keys``, one part per task; with ``frequencies``, also the selection frequencies of the
    best threshold candidate's feature (:func:`feature_frequencies`; a task of its own).

    Returns:
        The ranked candidates and the frequencies (None when not asked for or empty).
    """
    pilot = runner.pilot([(pair.d0, n, keys[0]), (pair.d1, n, keys[1])])
    parts = search_parts(pilot.schema, families, n)
    found = rank(
        [
            c
            for part in _run_parts(
                runner,
                _search_task,
                parts,
                SEARCH_COST,
                [(part, pilot, scorer, max_outcomes, rng) for part in parts],
            )
            for c in part
        ],
        pilot.schema,
    )
    runner.advance(2 * n)
    feature = limit_feature(found) if frequencies else None
    if feature is None:
        return found, None
    return found, runner.run(_frequencies_task, [(feature, pilot)], [0])[0]
