"""Selection in the auditor's own worker processes (``workers > 1``).

With one process, the parent draws the selection samples (or the pilot of a streamed
selection) and searches them. With its own pool, that search was the serial part of an audit
(measured at 10^7 samples per dataset: about a tenth of a one-dimensional audit's second of
CPU, and 1-1.4 s of a ten-dimensional one's 15), so it runs in the workers, in parts:

* the search is cut into independent parts (:data:`~dpaudit.audit.selection.SEARCH_PARTS`,
  :data:`~dpaudit.audit.streaming.PARTS`), each depending on the samples alone (the one part
  that fits a model with the rng gets a copy of it in the state the one-process search would
  give it), and one task runs one part; the bits search of vector outputs, the costliest
  part (0.5-0.6 s at ten dimensions), runs as one piece per coordinate
  (:func:`~dpaudit.audit.selection.part_pieces`), longest tasks first, so the workers
  finish the proposal together;
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

from dpaudit.audit.batches import Pilot
from dpaudit.audit.certifiable import threshold_frequencies
from dpaudit.audit.events import Feature, ThresholdEvent
from dpaudit.audit.pairs import NeighbouringPair
from dpaudit.audit.runner import Runner
from dpaudit.audit.selection import (
    Candidate,
    Scorer,
    part_pieces,
    rank,
    search_part,
    search_parts,
)
from dpaudit.audit.streaming import (
    PART_COST,
    Proposal,
    others_piece,
    others_pieces,
    others_proposal,
    proposal_parts,
    propose_part,
)

__all__ = ["feature_frequencies", "limit_feature", "propose_in_workers", "search_in_workers"]

#: Relative cost of the search parts (10-dimensional Laplace samples: bits 0.6 s, the two
#: learned scores 0.4 s, thresholds 0.2 s); a speed hint only: costly parts start first (a
#: piece of a part costs its share).
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


def _ordered(costs: list[float]) -> list[int]:
    """Indices of ``costs``, the costly first (a stable order): the pool's workers take
    tasks in submission order, so the longest start first and the short ones fill in
    (longest processing time first)."""
    return sorted(range(len(costs)), key=lambda j: -costs[j])


def _run_units(runner: Runner, fn: Any, costs: list[float], jobs: list[tuple]) -> list:
    """``fn(*jobs[j])`` for every unit of work ``j`` of cost ``costs[j]``, on the runner's
    pool, the costly units submitted first; results in the order of ``jobs``."""
    order = _ordered(costs)
    done = runner.run(fn, [jobs[j] for j in order], [0] * len(order))
    by_unit = dict(zip(order, done, strict=True))
    return [by_unit[j] for j in range(len(jobs))]


def _propose_task(
    part: str,
    piece: tuple[str, int] | None,
    pilot: Pilot,
    scorer: Scorer,
    families: tuple[str, ...],
    max_outcomes: int,
    rng: np.random.Generator,
    observe: bool,
) -> Proposal | list[Candidate]:
    """Worker task: :func:`~dpaudit.audit.streaming.propose_part` on the pilot drawn here;
    with ``piece``, the candidates of that piece of the ``others`` part
    (:func:`~dpaudit.audit.streaming.others_piece`)."""
    x0, x1 = pilot.outputs()
    if piece is not None:
        return others_piece(piece, x0, x1, pilot.schema, scorer, max_outcomes=max_outcomes, rng=rng)
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
    part: str,
    piece: int | None,
    pilot: Pilot,
    scorer: Scorer,
    max_outcomes: int,
    rng: np.random.Generator,
) -> list[Candidate]:
    """Worker task: :func:`~dpaudit.audit.selection.search_part` (of one piece) on the
    samples drawn here."""
    x0, x1 = pilot.outputs()
    return search_part(
        part, x0, x1, pilot.schema, scorer, max_outcomes=max_outcomes, rng=rng, piece=piece
    )


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
    schema = pilot.schema
    parts = proposal_parts(schema, families, held)
    units: list[tuple[str, tuple[str, int] | None]] = []
    costs: list[float] = []
    for part in parts:
        pieces = others_pieces(schema, families, held) if part == "others" else []
        if len(pieces) > 1:  # the others part in pieces: the workers share it
            units += [(part, piece) for piece in pieces]
            costs += [PART_COST[part] / len(pieces)] * len(pieces)
        else:
            units.append((part, None))
            costs.append(PART_COST[part])
    # the thinned pilot (scalar outputs) comes with the costliest whole part
    whole = [j for j, (_, piece) in enumerate(units) if piece is None]
    first = min(whole, key=lambda j: -costs[j]) if whole and schema.kind == "scalar" else -1
    jobs = [
        (part, piece, pilot, scorer, families, max_outcomes, rng, j == first)
        for j, (part, piece) in enumerate(units)
    ]
    done = _run_units(runner, _propose_task, costs, jobs)
    runner.advance(2 * held)
    proposals = []
    for part in parts:
        mine = [r for (p, _), r in zip(units, done, strict=True) if p == part]
        if isinstance(mine[0], Proposal):
            proposals.append(mine[0])
        else:  # the pieces' candidates, in piece order
            proposals.append(others_proposal([c for found in mine for c in found], schema))
    observed = done[first].observed if first >= 0 else None
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
    schema = pilot.schema
    units = []
    costs: list[float] = []
    for part in search_parts(schema, families, n):
        pieces = part_pieces(part, schema)
        units += [(part, piece if pieces > 1 else None) for piece in range(pieces)]
        costs += [SEARCH_COST[part] / pieces] * pieces
    jobs = [(part, piece, pilot, scorer, max_outcomes, rng) for part, piece in units]
    found = rank(
        [c for unit in _run_units(runner, _search_task, costs, jobs) for c in unit], schema
    )
    runner.advance(2 * n)
    feature = limit_feature(found) if frequencies else None
    if feature is None:
        return found, None
    return found, runner.run(_frequencies_task, [(feature, pilot)], [0])[0]
