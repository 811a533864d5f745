"""The phases of the record search around the race (:mod:`dpaudit.audit.racing`): candidates
without repeats, the probe of the first candidate that runs, and the local search.

* :func:`unique_pairs` -- each candidate pair once (a pair and its mirror are one);
* :func:`probe_first` -- the probe runs (:mod:`dpaudit.audit.probe`) on the first dataset of
  the first candidate that does not raise; the candidates before it are refused;
* :func:`local_search` -- perturbations of the best first-stage pairs
  (:func:`dpaudit.audit.record_pairs.perturb`), entered into the race.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dpaudit.audit.domain import RecordDomain
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.probe import Probe, probe
from dpaudit.audit.racing import Race, Refusal
from dpaudit.audit.record_pairs import CandidatePair, pair_key, perturb, rows

__all__ = [
    "CHILDREN",
    "PARENTS",
    "ROUNDS",
    "every_candidate_refused",
    "local_search",
    "probe_first",
    "unique_pairs",
]

#: Local search: rounds, best pairs perturbed per round, perturbations of each (at most).
ROUNDS, PARENTS, CHILDREN = 4, 3, 4


def unique_pairs(
    candidates: Iterator[CandidatePair], width: int, seen: set[tuple[bytes, bytes]]
) -> Iterator[tuple[CandidatePair, tuple[np.ndarray, np.ndarray]]]:
    """Each candidate with its datasets, the pairs already seen (in either order) left out."""
    for candidate in candidates:
        pair = candidate.datasets(width)
        key = pair_key(*pair)
        if key not in seen:
            seen.add(key)
            yield candidate, pair


def every_candidate_refused(refused: list[Refusal], count: int) -> MechanismError:
    """The error when ``fn`` raised on all ``count`` candidates tried (a few listed)."""
    shown = "; ".join(str(r) for r in refused[:3])
    return MechanismError(
        f"fn raised on every candidate pair the search tried ({count}), e.g. {shown}: the "
        "audit needs one pair of datasets fn runs on (check the domain and sizes; for code "
        "whose inputs are validated upstream, pass edge_values=False)"
    )


def probe_first(
    fn: Any,
    proposals: Iterator[tuple[CandidatePair, tuple[np.ndarray, np.ndarray]]],
    limit: int,
    seed: np.random.SeedSequence,
    on_error: str,
) -> tuple[Probe, tuple[CandidatePair, tuple[np.ndarray, np.ndarray]], list[Refusal]]:
    """Probe ``fn`` on the first dataset of the first candidates, until one runs (at most
    ``limit`` candidates): the probe's schema and memory estimate serve the whole search.
    With ``on_error="output"``, ``fn`` is the mechanism wrapped in
    :class:`~dpaudit.audit.batches.ErrorsAsOutputs` and the schema has the exception's column.

    Returns:
        The probe, the candidate it ran on, the candidates refused before it.

    Raises:
        MechanismError: with ``on_error="raise"`` when the first candidate raises; otherwise
            when all of the first ``limit`` do (listing a few).
    """
    refused: list[Refusal] = []
    failed: dict[bytes, MechanismError] = {}
    for candidate, pair in proposals:
        key = pair[0].tobytes() + str(pair[0].shape).encode()
        try:
            if key in failed:
                raise failed[key]
            probed = probe(fn, pair[0], seed, raised=on_error == "output")
            return probed, (candidate, pair), refused
        except MechanismError as err:
            if on_error == "raise":
                raise MechanismError(
                    f"{err} (on the dataset {rows(pair[0])})", raised=err.raised
                ) from err
            failed[key] = err
            refused.append(Refusal.of(pair, "d0", err))
        if len(refused) >= limit:
            break
    raise every_candidate_refused(refused, len(refused))


def local_search(
    race: Race,
    domain: RecordDomain,
    sizes: tuple[int, int],
    count: int,
    n: int,
    seen: set[tuple[bytes, bytes]],
    moves: np.random.Generator,
    edge_values: bool,
    out_of_time: Callable[[], bool],
) -> None:
    """Enter up to ``count`` perturbations of the best first-stage pairs into the race, in
    :data:`ROUNDS` rounds of :data:`PARENTS` parents each (fewer when the budget is small)."""
    children = min(CHILDREN, math.ceil(count / (ROUNDS * PARENTS)))
    made = 0
    for round_ in range(1, ROUNDS + 1):
        for parent in race.best(PARENTS, 0):
            for _ in range(children):
                if made >= count or out_of_time():
                    return
                child = perturb(
                    parent.candidate, domain, sizes, moves, round_, edge_values=edge_values
                )
                pair = child.datasets(domain.width)
                key = pair_key(*pair)
                if key not in seen:
                    seen.add(key)
                    race.enter(child, pair, n)
                    made += 1
