"""EMCover: iterated exponential-mechanism covering (source document 004, Bun and Fang,
Appendix A.1, Algorithm A.1 and Lemma A.1).

Each round selects a candidate h_t by the exponential mechanism on a score q_t (chosen
adaptively from the previous outputs), then removes every data point that h_t *covers*.  When
the score family satisfies the two conditions of Lemma A.1 (a candidate's score moves by at
most 1 when a point it covers is added, and not at all when a point it does not cover is
added), the whole run is (lambda + (e^lambda - 1)(ln(1/delta) + 1), delta)-DP for every
delta in (0, 1), *independently of the number of rounds*, where lambda is the exponential
mechanism's inverse temperature (Gupta, Ligett, McSherry, Roth, Talwar 2010's martingale
argument, Lemma A.3).  That is Lemma A.1 with its last inequality corrected
(:mod:`dpaudit.theorems.cover`): the stated (2 lambda (ln(1/delta) + 3/2), delta) relies on
1 + (e^lambda - 1) x <= e^(2 lambda x), false for lambda > 1.2564..., and holds for
lambda <= 5/4, which covers DP-GreedyCover's use.

Reconstructed from the extraction:

* The privacy proof samples h with probability proportional to exp(eps q(S, h)), so the
  lemma's "eps" is the inverse temperature lambda: each round is the exponential mechanism
  with privacy parameter 2 lambda in the usual convention
  (``ExponentialMechanism(2 lambda, sensitivity=1)``).  Proposition 2.1 instead writes
  exp(-eps q / 2): the minus sign is a typo (q is maximised) and its temperature convention
  differs; we follow the proof.
* Lemma A.1 compares S with S' = S u {z}: it is an add/remove statement.  Definition 3.1's
  neighbours differ in one example (replace-one); the proof does not cover that relation
  directly (see :mod:`mechanisms.decision_lists`).

The run's ledger records one cover event for the whole iteration (the primitives it ran are
checked to be exactly the declared exponential mechanisms), so that what the run spends is
compared with the cover bound rather than with a T-fold composition.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms import ledger as _ledger
from mechanisms.primitives import ExponentialMechanism

__all__ = [
    "CoverProblem",
    "EMCover",
    "EMCoverRun",
    "SetCoverMechanism",
    "SetCoverProblem",
    "cover_neighbouring_pair",
    "plan",
]


class CoverProblem(Protocol):
    """A family of score functions for EMCover, with its covering relation.

    ``data`` is whatever the problem works on (e.g. a labelled sample); ``remaining`` is a
    bool mask over its points (the points not yet covered); ``history`` the candidates
    selected so far.
    """

    n_candidates: int

    def available(self, history: Sequence[int]) -> np.ndarray:
        """A bool mask of the candidates that may be selected next (data independent)."""

    def scores(self, data: Any, remaining: np.ndarray, history: Sequence[int]) -> np.ndarray:
        """q_t(S, h) for every candidate h (only available ones are used)."""

    def covered(self, data: Any, candidate: int) -> np.ndarray:
        """A bool mask of the points of ``data`` that ``candidate`` covers."""

    def size(self, data: Any) -> int:
        """The number of points of ``data``."""


@dataclasses.dataclass(frozen=True)
class EMCoverRun:
    """The selected candidates, in order, and the points left uncovered."""

    selected: tuple[int, ...]
    remaining: np.ndarray


def plan(
    inverse_temperature: Any, rounds: Any = None, relation: Any = ev.Relation.ADD_REMOVE
) -> ev.Event:
    """The declared event of an EMCover run: the cover-style iteration of the exponential
    mechanism at privacy parameter 2 lambda (inverse temperature lambda), sensitivity 1.

    The conditions of Lemma A.1 are a property of the score family: check them with
    :func:`dpaudit.events.cover.check_cover_conditions`.
    """
    from dpaudit.events import cover
    from dpaudit.theorems import cover as _rule  # noqa: F401  (registers the cover bound)

    return cover.EMCover(
        exact(inverse_temperature, "inverse_temperature"), rounds, relation=relation
    )


class EMCover:
    """EMCover (004, Algorithm A.1).

    Args:
        inverse_temperature: lambda > 0: round t samples h with probability proportional to
            exp(lambda q_t(S, h)) (Lemma A.1's "eps").
        rounds: T, the number of rounds, >= 1 (the run also stops when no candidate is
            available, a data-independent event).
        relation: the neighbouring relation of the declared event (Lemma A.1: add/remove).

    Privacy:
        For a score family satisfying Lemma A.1's conditions, (lambda + (e^lambda - 1)
        (ln(1/delta) + 1), delta)-DP for every delta in (0, 1) under add/remove, whatever T
        (Lemma A.1, corrected; equal to or below the stated 2 lambda (ln(1/delta) + 3/2) for
        lambda <= 5/4).  The run records one cover event (:func:`plan`) in the active
        ledgers; the accountant also compares it with plain composition of the rounds.

    Raises:
        ValueError: on bad arguments.
    """

    def __init__(
        self, inverse_temperature: Any, rounds: int, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        lam = exact(inverse_temperature, "inverse_temperature")
        if lam.free_symbols or not lam > 0:
            raise ValueError(
                f"inverse_temperature must be a number in (0, inf), got {inverse_temperature!r}"
            )
        if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
            raise ValueError(f"rounds must be an integer in [1, inf), got {rounds!r}")
        self.inverse_temperature = lam
        self.rounds = int(rounds)
        self.relation = ev.as_relation(relation)
        self.mechanism = ExponentialMechanism(2 * lam, 1, relation=self.relation)

    def plan(self) -> ev.Event:
        """The declared event (:func:`plan`) for this run's parameters."""
        return plan(self.inverse_temperature, self.rounds, self.relation)

    def run(
        self,
        problem: CoverProblem,
        data: Any,
        rng: np.random.Generator,
        stop: Callable[[Sequence[int], np.ndarray], bool] | None = None,
    ) -> EMCoverRun:
        """Run the rounds on ``data``.

        Args:
            problem: the score family and covering relation.
            data: the dataset S.
            rng: the randomness.
            stop: optional data-independent stopping rule ``stop(history, remaining)``
                evaluated after each round; it may only look at ``remaining`` in ways that
                are post-processing of the released history (e.g. "the constant-true
                candidate was selected").  Rounds after it would not change the output.

        Returns:
            An :class:`EMCoverRun`.
        """
        remaining = np.ones(problem.size(data), dtype=bool)
        history: list[int] = []

        def as_cover(k: int) -> tuple[ev.Event, int]:
            return plan(self.inverse_temperature, k, self.relation), 1

        with _ledger.recorded_as_one(self.mechanism.event, as_cover):
            for _ in range(self.rounds):
                avail = np.flatnonzero(problem.available(history))
                if avail.size == 0:
                    break
                scores = np.asarray(problem.scores(data, remaining, history), dtype=float)
                choice = int(avail[self.mechanism.select(scores[avail], rng)])
                history.append(choice)
                remaining &= ~problem.covered(data, choice)
                if stop is not None and stop(history, remaining):
                    break
        return EMCoverRun(tuple(history), remaining)

    def run_batch(
        self,
        problem: CoverProblem,
        data: Any,
        n: int,
        rng: np.random.Generator,
        stop: Callable[[Sequence[int], np.ndarray], bool] | None = None,
    ) -> list[tuple[int, ...]]:
        """``n`` independent runs on the same data, for the auditor.

        Runs whose histories give the same scores and availability share one score vector,
        so each round draws, per group, that many independent selections at once from the
        primitive (identical in law to ``n`` separate runs).  Runs are grouped by
        ``problem.state_key(history)`` when the problem defines it (e.g. the *set* of
        selected candidates), else by the history itself.  Records n cover events of at most
        ``rounds`` rounds each.

        Returns:
            The selected candidates of each run.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer in [1, inf), got {n!r}")
        key = getattr(problem, "state_key", tuple)
        size = problem.size(data)
        histories: list[list[int]] = [[] for _ in range(int(n))]
        active = list(range(int(n)))
        with _ledger.recorded_as_one(
            self.mechanism.event,
            lambda k: (plan(self.inverse_temperature, self.rounds, self.relation), int(n)),
        ):
            for _ in range(self.rounds):
                groups: dict[Any, list[int]] = {}
                for i in active:
                    groups.setdefault(key(histories[i]), []).append(i)
                active = []
                for members in groups.values():
                    history = histories[members[0]]
                    avail = np.flatnonzero(problem.available(history))
                    if avail.size == 0:
                        continue
                    remaining = np.ones(size, dtype=bool)
                    for h in history:
                        remaining &= ~problem.covered(data, h)
                    scores = np.asarray(problem.scores(data, remaining, history), dtype=float)
                    draws = avail[self.mechanism.select(scores[avail], rng, size=len(members))]
                    stopped: dict[int, bool] = {}
                    for i, choice in zip(members, draws.tolist(), strict=True):
                        histories[i].append(choice)
                        if stop is not None:
                            if choice not in stopped:
                                stopped[choice] = stop(
                                    histories[i], remaining & ~problem.covered(data, choice)
                                )
                            if stopped[choice]:
                                continue
                        active.append(i)
        return [tuple(h) for h in histories]


@dataclasses.dataclass(frozen=True)
class SetCoverProblem:
    """Private set cover as an EMCover problem: data is an (n, k) bool matrix
    ``membership[i, h]`` (point i lies in set h); the score of set h is the number of
    uncovered points it contains (Gupta et al. 2010's unweighted set cover).  Selected sets
    are not offered again.

    Lemma A.1's conditions hold: adding a point raises the score of each set containing it
    by exactly 1 and leaves the others unchanged.
    """

    n_candidates: int

    def available(self, history: Sequence[int]) -> np.ndarray:
        mask = np.ones(self.n_candidates, dtype=bool)
        mask[list(history)] = False
        return mask

    def state_key(self, history: Sequence[int]) -> frozenset[int]:
        """Scores and availability depend on the set of selected sets only."""
        return frozenset(history)

    def scores(self, data: Any, remaining: np.ndarray, history: Sequence[int]) -> np.ndarray:
        return np.asarray(data, dtype=bool)[remaining].sum(axis=0).astype(float)

    def covered(self, data: Any, candidate: int) -> np.ndarray:
        return np.asarray(data, dtype=bool)[:, candidate]

    def size(self, data: Any) -> int:
        return int(np.asarray(data).shape[0])


def cover_neighbouring_pair(n_sets: int) -> tuple[np.ndarray, np.ndarray]:
    """The issue's stressing pair for EMCover (add/remove): d0 holds one point that no set
    covers; d1 adds a point z that exactly one set (set 0) covers.

    On d0 every round is uniform over the remaining sets; on d1 set 0 is favoured until it is
    chosen.  The privacy loss of the event "set 0 is chosen late (or never)" grows with each
    round in which it is not chosen, which is what the cover bound controls with its delta.

    Raises:
        ValueError: if n_sets < 2.
    """
    if isinstance(n_sets, bool) or not isinstance(n_sets, int) or n_sets < 2:
        raise ValueError(f"n_sets must be an integer in [2, inf), got {n_sets!r}")
    d0 = np.zeros((1, n_sets), dtype=bool)
    z = np.zeros((1, n_sets), dtype=bool)
    z[0, 0] = True
    return d0, np.concatenate([d0, z])


class SetCoverMechanism:
    """Auditable form of EMCover on :class:`SetCoverProblem`: ``mechanism(membership, rng)``
    returns the round (0-based) in which set ``watch`` was selected, or T if never: a
    post-processing of the released sequence aimed at :func:`cover_neighbouring_pair`
    (``watch=None`` returns the whole sequence).
    """

    def __init__(
        self, inverse_temperature: Any, rounds: int, n_sets: int, watch: int | None = 0
    ) -> None:
        self.cover = EMCover(inverse_temperature, rounds)
        self.problem = SetCoverProblem(n_sets)
        self.watch = watch
        self.name = f"EMCover set cover (lambda={inverse_temperature}, T={rounds})"

    def _summary(self, selected: tuple[int, ...]) -> Any:
        if self.watch is None:
            return selected
        return selected.index(self.watch) if self.watch in selected else self.cover.rounds

    def __call__(self, dataset: Any, rng: np.random.Generator) -> Any:
        return self._summary(self.cover.run(self.problem, dataset, rng).selected)

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> list[Any]:
        return [self._summary(s) for s in self.cover.run_batch(self.problem, dataset, n, rng)]
