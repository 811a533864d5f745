"""Rounds of the exponential mechanism that localise a data-independent candidate set: the
practical regime of the learners that select a halfspace (or a network) by the exponential
mechanism over a finite set -- 000 Algorithm 2, 001 Algorithm 1, Appendix E (label DP),
Appendix F (margin selection) and Section 5 (networks).

Why.  Those learners run one exponential mechanism over a net (or random points) of the
sphere.  Its utility is that of the best candidate, and a data-independent set close to an
unknown direction of R^d needs about (1/angle)^d points: at d = 20, 20,000 random unit
vectors leave the best one about 37 degrees from the target (test error about 0.2 on
margin-0.1 data) and 0.15 would take millions.  Localising fixes this: each round draws its
candidates around the previous round's released choice, so R rounds of N candidates reach
an angle that shrinks geometrically with R at R N candidates in all.

What runs (:class:`Localisation`, :func:`localised_select`):

1. a random permutation of the n record positions (drawn from the learner's randomness,
   independently of the data) is cut into R consecutive parts of sizes n_1, ..., n_R
   (``numpy.array_split``: n // R or n // R + 1);
2. round 1: the exponential mechanism at epsilon over N candidates drawn independently of
   the data (uniform on the sphere, or the caller's first set), scored on part 1 by minus a
   loss in [0, 1] that one record of the part moves by at most 1/n_1 (a fraction of the
   part's rows);
3. round r > 1: the previous round's selection and N - 1 candidates drawn near it, in the
   cap of angular radius ``first_angle`` x ``shrink``^(r - 2) around it (a data-independent
   schedule), scored on part r, the exponential mechanism at epsilon, sensitivity 1/n_r;
4. the output is round R's selection (the learner post-processes it).

Privacy (epsilon-DP under replace-one, for every R, N, angle schedule and loss of range
[0, 1] computed as a fraction of the part's rows):

* each round is the exponential mechanism over a finite set with a sensitivity-1/n_r score,
  epsilon-DP (McSherry, Talwar 2007, Theorem 6; Dwork, Roth 2014, Theorem 3.10); its
  candidate set is a function of the earlier rounds' *released* selections and of
  randomness independent of the data, so it is the same set on neighbouring datasets;
* a record at position i lies in exactly one part (the partition is of positions, fixed
  independently of the data; replace-one neighbours differ at one position).  The output
  density factors over the rounds given the earlier outputs, and only the factor of the
  record's own round depends on it, by a ratio of at most e^epsilon: adaptive parallel
  composition (McSherry 2009, Theorem 4, for disjoint parts; adaptively, the same
  chain-rule argument as phased SGD's parallel phases, docs/learners.md row 28).  The plan
  is ``Parallel([Exponential(eps, 1/n_r)]_r, partition="positions")``; with R = 1 it is the
  single ``Exponential(eps, 1/n)`` of the papers, and nothing else is drawn;
* label DP (001 Appendix E): the same argument with one *label* changed (features public).

The rounds are recorded through :func:`mechanisms.ledger.recorded_jointly`: the R
exponential-mechanism runs become one run of the declared ``Parallel`` event, so the
ledger equals the plan.  What is not claimed: the papers' utility theorems (a net point near
the target); the utility is measured (tests, learning curves).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms.halfspace_inputs import REPLACE, _check_rng, _int
from mechanisms.ledger import recorded_jointly
from mechanisms.primitives import ExponentialMechanism

__all__ = [
    "Localisation",
    "cap_points",
    "localised_select",
    "part_sizes",
]


def part_sizes(n: int, rounds: int) -> list[int]:
    """The sizes of ``numpy.array_split`` of n positions into ``rounds`` parts (n // R + 1
    for the first n % R parts, n // R for the rest).

    Raises:
        ValueError: if n < rounds (a part would be empty) or either is not a positive int.
    """
    n, rounds = _int("n", n), _int("rounds", rounds)
    if n < rounds:
        raise ValueError(
            f"rounds must be an integer in [1, {n}] (at most the number of rows n = {n}: each "
            f"round scores its own part of the rows), got {rounds}"
        )
    q, r = divmod(n, rounds)
    return [q + 1] * r + [q] * (rounds - r)


def cap_points(
    center: np.ndarray, angle: float, count: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` points of the sphere of radius ||center|| within angle ``angle`` of
    ``center``: the angle to the centre is ``angle`` U^(1/(m-1)) (U uniform; the cap's
    uniform law for small angles, where the sphere is locally flat) and the direction
    orthogonal to the centre uniform.  Data-independent given the centre.

    Raises:
        ValueError: if the centre is zero or not finite.
    """
    c = np.asarray(center, dtype=float).ravel()
    radius = float(np.linalg.norm(c))
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"center must be a non-zero finite vector, got norm {radius}")
    u0 = c / radius
    m = c.size
    if m == 1:
        return np.tile(c, (count, 1))
    a = float(angle) * rng.random(count) ** (1.0 / (m - 1))
    v = rng.standard_normal((count, m))
    v -= np.outer(v @ u0, u0)
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-300)
    return radius * (np.cos(a)[:, None] * u0 + np.sin(a)[:, None] * v)


@dataclasses.dataclass(frozen=True)
class Localisation:
    """The round schedule of :func:`localised_select` (module docstring).

    Attributes:
        rounds: R >= 1 (1: the papers' single exponential mechanism).
        candidates: N, candidates per round (round 1: all drawn independently of the data;
            later rounds: the previous selection and N - 1 drawn near it).
        first_angle: the cap's angular radius in round 2, radians in (0, pi].
        shrink: the factor by which the cap shrinks each later round, in (0, 1].
    """

    rounds: int = 1
    candidates: int = 1000
    first_angle: float = 1.0
    shrink: float = 0.5

    def __post_init__(self) -> None:
        _int("rounds", self.rounds)
        _int("candidates", self.candidates)
        if not (0 < float(self.first_angle) <= math.pi):
            raise ValueError(f"first_angle must be a number in (0, pi], got {self.first_angle!r}")
        if not (0 < float(self.shrink) <= 1):
            raise ValueError(f"shrink must be a number in (0, 1], got {self.shrink!r}")

    def events(self, epsilon: Any, n: int) -> tuple[ev.Event, ...]:
        """One Exponential(eps, 1/n_r, replace-one) per round."""
        e = exact(epsilon, "epsilon")
        return tuple(
            ev.Exponential(e, sympy.Rational(1, size), relation=REPLACE)
            for size in part_sizes(n, self.rounds)
        )

    def plan(self, epsilon: Any, n: Any) -> ev.Event:
        """Exponential(eps, 1/n) for one round (n may be symbolic); for R > 1 rounds the
        Parallel of the rounds' events over a partition of positions (n an integer)."""
        if self.rounds == 1:
            return ev.Exponential(exact(epsilon, "epsilon"), 1 / exact(n, "n"), relation=REPLACE)
        return ev.Parallel(list(self.events(epsilon, n)), partition="positions")

    def angle(self, r: int) -> float:
        """The cap's angular radius in round r >= 2."""
        return float(self.first_angle) * float(self.shrink) ** (r - 2)


@functools.lru_cache(maxsize=256)
def _mechanism(epsilon: Any, size: int) -> ExponentialMechanism:
    """The exponential-mechanism primitive at epsilon on a score of sensitivity 1/size,
    replace-one (built once: building validates its event, slow in a loop)."""
    return ExponentialMechanism(epsilon, sympy.Rational(1, size), relation=REPLACE)


@functools.lru_cache(maxsize=256)
def _declared(
    schedule: Localisation, epsilon: Any, n: int
) -> tuple[tuple[ev.Event, ...], ev.Event]:
    """The rounds' events and the plan that records them jointly (built once per shape)."""
    return schedule.events(epsilon, n), schedule.plan(epsilon, n)


def _parts(n: int, rounds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The rounds' parts: a random permutation of the n positions (independent of the data)
    cut into ``rounds`` consecutive blocks of :func:`part_sizes`."""
    return np.array_split(rng.permutation(n), rounds)


def localised_select(
    schedule: Localisation,
    epsilon: Any,
    n: int,
    first: np.ndarray,
    loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    rng: np.random.Generator,
    near: Callable[[np.ndarray, float, int, np.random.Generator], np.ndarray] = cap_points,
) -> tuple[np.ndarray, list[int]]:
    """Run the rounds (module docstring) and return the final selection with the index
    selected in each round.

    Args:
        schedule: the rounds.
        epsilon: each round's privacy parameter (the whole run is epsilon-DP).
        n: the number of records.
        first: round 1's candidates (rows), drawn independently of the data.
        loss: ``loss(C, rows)`` -> the loss in [0, 1] of each candidate (row of C) on the
            records at positions ``rows``, a fraction of them (one record moves it by at most
            1 / len(rows)).
        rng: the learner's randomness (the permutation, the caps, the exponential
            mechanisms' noise).
        near: ``near(center, angle, count, rng)`` -> ``count`` candidates near ``center``
            (data-independent given the centre).

    Returns:
        (the last round's selected candidate, the selected index of every round).
    """
    rng = _check_rng(rng)
    R = schedule.rounds
    if R == 1:
        k = int(_mechanism(epsilon, n).select(-loss(first, np.arange(n)), rng))
        return first[k], [k]
    events, plan = _declared(schedule, epsilon, n)
    parts = _parts(n, R, rng)
    picks: list[int] = []
    chosen = None
    with recorded_jointly(events, plan):
        for r, rows in enumerate(parts, start=1):
            if r == 1:
                C = first
            else:
                assert chosen is not None
                C = np.vstack(
                    [chosen[None], near(chosen, schedule.angle(r), schedule.candidates - 1, rng)]
                )
            k = int(_mechanism(epsilon, len(rows)).select(-loss(C, rows), rng))
            picks.append(k)
            chosen = C[k]
    assert chosen is not None
    return chosen, picks
