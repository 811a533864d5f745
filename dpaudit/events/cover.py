"""The cover-style iteration of the exponential mechanism (EMCover).

Bun and Fang, "Privately Learning Decision Lists and a Differentially Private Winnow"
(source document 004), Appendix A.1, Algorithm A.1, after Gupta, Ligett, McSherry, Roth,
Talwar 2010 (private set cover): for t = 1..T, choose a score q_t from a family Q (adaptively),
draw h_t with probability proportional to exp(lambda q_t(S, h)), and remove from S every point
that h_t covers.  Its privacy does not grow with T when Q satisfies the *cover conditions*,
which this module states as declared, checkable properties of the score family.

Convention: ``inverse_temperature`` is lambda, the factor in exp(lambda q) (the proof of
Lemma A.1 samples proportionally to exp(eps q), so the lemma's eps is lambda).  One round is
the exponential mechanism with privacy parameter 2 lambda c in dpaudit's convention
(:class:`~dpaudit.events.Exponential` with ``epsilon = 2 lambda c``, ``sensitivity = c``),
where c is ``score_change``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction
from typing import Any

from dpaudit.events.base import Event, Relation, as_relation, ranged, validate_ranges
from dpaudit.events.combinators import SelfComposed
from dpaudit.events.primitives import Exponential

__all__ = ["CoverConditions", "CoverViolation", "EMCover", "check_cover_conditions"]


@dataclasses.dataclass(frozen=True)
class CoverViolation:
    """One instance where a score family breaks a cover condition."""

    condition: int
    score: int
    candidate: Hashable
    point: Hashable
    dataset: tuple[Hashable, ...]
    before: Any
    after: Any

    def __str__(self) -> str:
        rule = (
            "|q(S+z, h) - q(S, h)| <= c for h covering z"
            if self.condition == 1
            else "q(S+z, h) = q(S, h) for h not covering z"
        )
        return (
            f"condition {self.condition} ({rule}) fails for score #{self.score}, "
            f"h = {self.candidate!r}, z = {self.point!r}, S = {list(self.dataset)!r}: "
            f"q(S, h) = {self.before}, q(S+z, h) = {self.after}"
        )


@dataclasses.dataclass(frozen=True)
class CoverConditions:
    """The hypotheses of Lemma A.1 (004) on a score family Q, for every q in Q, candidate h,
    point z and dataset S:

    1. if h covers z: q(S, h) - c <= q(S u {z}, h) <= q(S, h) + c  (the paper has c = 1);
    2. if h does not covers z: q(S u {z}, h) = q(S, h).

    Attributes:
        score_change: c, the most a covering candidate's score moves.
    """

    score_change: Any = 1

    def check(
        self,
        scores: Sequence[Callable[[Sequence[Hashable], Hashable], Any]],
        candidates: Iterable[Hashable],
        covers: Callable[[Hashable, Hashable], bool],
        points: Iterable[Hashable],
        datasets: Iterable[Sequence[Hashable]],
    ) -> list[CoverViolation]:
        """Check both conditions on every combination given (exactly, with Fractions).

        Args:
            scores: score functions q(S, h) (S a sequence of points).
            candidates: the candidate set H.
            covers: covers(h, z) is True when h covers z.
            points: the points z to add.
            datasets: the datasets S to add them to.

        Returns:
            Every violation found (empty when the family satisfies the conditions on the
            instances given).
        """
        return check_cover_conditions(
            scores, candidates, covers, points, datasets, self.score_change
        )


def _exact(value: Any) -> Fraction:
    if isinstance(value, float):
        return Fraction(value)
    return Fraction(value) if not isinstance(value, Fraction) else value


def check_cover_conditions(
    scores: Sequence[Callable[[Sequence[Hashable], Hashable], Any]],
    candidates: Iterable[Hashable],
    covers: Callable[[Hashable, Hashable], bool],
    points: Iterable[Hashable],
    datasets: Iterable[Sequence[Hashable]],
    score_change: Any = 1,
) -> list[CoverViolation]:
    """Check the cover conditions of Lemma A.1 (004) on finitely many instances.

    See :class:`CoverConditions`; scores are compared exactly (floats by their binary value).

    Raises:
        ValueError: if score_change is not positive.
    """
    c = _exact(score_change)
    if c <= 0:
        raise ValueError(f"score_change must be in (0, inf), got {score_change!r}")
    hs, zs, ss = list(candidates), list(points), [tuple(s) for s in datasets]
    found: list[CoverViolation] = []
    for qi, q in enumerate(scores):
        for s in ss:
            for z in zs:
                grown = (*s, z)
                for h in hs:
                    before, after = _exact(q(s, h)), _exact(q(grown, h))
                    if covers(h, z):
                        if not (before - c <= after <= before + c):
                            found.append(CoverViolation(1, qi, h, z, s, before, after))
                    elif after != before:
                        found.append(CoverViolation(2, qi, h, z, s, before, after))
    return found


@dataclasses.dataclass(frozen=True)
class EMCover(Event):
    """T adaptive rounds of the exponential mechanism over a score family that satisfies the
    cover conditions (Bun and Fang, 004, Algorithm A.1; Gupta et al. 2010).

    Attributes:
        inverse_temperature: lambda > 0; round t samples h with probability proportional to
            exp(lambda q_t(S, h)).
        rounds: T, the number of rounds (an integer >= 1), or None for "any number": the
            cover bound does not depend on it.
        score_change: c > 0 of the cover conditions (1 in the paper).
        relation: the neighbouring relation; the cover conditions and Lemma A.1 are stated
            for adding or removing one point (add/remove).

    Privacy:
        (c lambda + (e^(c lambda) - 1)(ln(1/delta) + 1), delta)-DP for every delta in (0, 1)
        (:mod:`dpaudit.theorems.cover`), and (2 c lambda T)-DP by basic composition when T is
        known.
    """

    inverse_temperature: Any = ranged(low=0, first_positional=True)
    rounds: Any = None
    score_change: Any = ranged(low=0, default=1)
    relation: Relation = dataclasses.field(default=Relation.ADD_REMOVE, kw_only=True)

    _always_shown = ("rounds",)

    def __post_init__(self) -> None:
        validate_ranges(self)
        if self.rounds is not None:
            from dpaudit.events.base import parameter

            self._set(
                "rounds",
                parameter(self.kind, "rounds", self.rounds, low=1, low_open=False, integer=True),
            )
        self._set("relation", as_relation(self.relation))

    @property
    def conditions(self) -> CoverConditions:
        """The declared cover conditions of the score family."""
        return CoverConditions(self.score_change)

    def round_event(self) -> Exponential:
        """One round as an exponential mechanism event (privacy parameter 2 c lambda)."""
        c = self.score_change
        return Exponential(2 * c * self.inverse_temperature, sensitivity=c, relation=self.relation)

    def as_composition(self) -> SelfComposed:
        """The T rounds as a plain T-fold composition (for comparison with basic, advanced
        or optimal composition).

        Raises:
            ValueError: when the number of rounds is not given.
        """
        if self.rounds is None:
            raise ValueError(
                "EMCover: rounds must be given (an integer in [1, inf)) to compare "
                "with composition, got None"
            )
        return SelfComposed(self.round_event(), self.rounds)

    def constraints(self) -> tuple[Any, ...]:
        found = list(super().constraints())
        if self.rounds is not None and getattr(self.rounds, "free_symbols", None):
            found.append(self.rounds >= 1)
        return tuple(found)
