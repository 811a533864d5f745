"""Events for stable and private *prediction* (Dagan and Feldman 2020, document 003).

A prediction algorithm answers a query point x with a random label A_S(x) in {0, 1}.  Its
*prediction mechanism at x* is the map S -> A_S(x); every event in this module describes that
mechanism, so the accountant's (epsilon, delta)-DP guarantee for such an event is exactly
(epsilon, delta)-private prediction (Dwork and Feldman 2018) and, with epsilon = 0,
delta-uniform stability (Bousquet and Elisseeff 2002): for binary outputs the events
{0}, {1} are the only non-trivial ones, so "P[A_S(x)=y] <= P[A_S'(x)=y] + gamma for all y"
is (0, gamma)-DP of the prediction mechanism (003, Section 2: "(0, delta)-private
prediction is exactly the same as delta-stability").

Events here describe; :mod:`dpaudit.theorems.stability` states the bounds and registers the
accountant rules.  All events are stated under the replace-one relation, as 003 is.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from dpaudit.events.base import Event, Relation, _truth, ranged, validate_ranges
from dpaudit.events.combinators import Wrapper, _one_event

__all__ = [
    "LabelFlipped",
    "RelabeledSubsampleSelection",
    "SubsampledCandidates",
    "UniformlyStable",
]


def _replace_one(owner: str, event: Event) -> None:
    if event.relation is not Relation.REPLACE_ONE:
        raise ValueError(
            f"{owner}: event must be stated under the replace_one relation "
            f"(003 states its results for replace-one neighbours), got {event} "
            f"under {event.relation.value}"
        )


def _sample_at_most_population(owner: str, sample: Any, population: Any) -> None:
    if _truth(sample <= population) is False:
        raise ValueError(
            f"{owner}: sample must be in [1, population] = [1, {population}], got {sample}"
        )


@dataclasses.dataclass(frozen=True)
class UniformlyStable(Event):
    """A prediction algorithm declared ``gamma``-uniformly stable (Bousquet and Elisseeff
    2002; 003, Section 2).

    Privacy: for replace-one neighbours S, S', every x and y in {0, 1},
    P[A_S(x) = y] <= P[A_S'(x) = y] + gamma, i.e. its prediction mechanism is (0, gamma)-DP.
    """

    gamma: Any = ranged(low=0, high=1, high_open=False, first_positional=True)

    def __post_init__(self) -> None:
        validate_ranges(self)

    @property
    def relation(self) -> Relation:
        return Relation.REPLACE_ONE


@dataclasses.dataclass(frozen=True)
class SubsampledCandidates(Wrapper):
    """003, Section 3.1, steps 1-3: draw a uniformly random subset T of ``sample`` of the
    ``population`` records, build the candidate class H_T (one hypothesis per labeling of T),
    then run ``event`` (a selection among H_T that reads the *whole* dataset, e.g. the
    exponential mechanism) and predict with the selected hypothesis.

    ``event`` describes the selection for a *fixed* candidate class; the combinator adds the
    dependence of the class on the subsample.  Only stability follows in general (a record in
    T can change the class arbitrarily): see
    :func:`dpaudit.theorems.stability.subsampled_candidates_stability`.
    """

    sample: Any = ranged(low=1, low_open=False, integer=True)
    population: Any = ranged(low=1, low_open=False, integer=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        _sample_at_most_population(self.kind, self.sample, self.population)
        _replace_one(self.kind, self.event)

    @property
    def relation(self) -> Relation:
        return Relation.REPLACE_ONE


@dataclasses.dataclass(frozen=True)
class LabelFlipped(Wrapper):
    """A binary prediction mechanism whose output is flipped with probability ``flip``
    (003, proof of Corollary 1 and the last step of Theorem 2).

    Equivalently: with probability 1 - 2 flip output the inner prediction, otherwise a fair
    coin.  Every label then has probability at least ``flip``, which turns additive
    (stability, delta) slack into multiplicative slack.
    """

    # 1/2 as a Fraction: sympy compares it as Rational(1, 2), and defining the class does
    # not import sympy
    flip: Any = ranged(low=0, high=Fraction(1, 2))


@dataclasses.dataclass(frozen=True)
class RelabeledSubsampleSelection(Event):
    """The (epsilon, delta)-private prediction algorithm of 003, Section 4.2 (Lemma 8):

    1. draw a uniformly random subset I of ``sample`` of the ``population`` indices;
    2. build H_{S_I}, one hypothesis per labeling of S_I by a class of VC dimension
       ``vc_dimension``;
    3. select h in H_{S_I} with ``selection`` (an exponential mechanism whose score is minus
       the number of errors on the whole S, i.e. weights exp(-L_S(h)/eta) when its epsilon
       is 2/(eta n));
    4. relabel S by h and answer the query with ``relabel``, a realizable learner with pure
       private prediction trained on the relabeled S.

    ``net_radius`` is the eta of the paper's eta-net condition on I minus one record (the
    matching argument of Lemma 10).  Both children must be pure and replace-one.
    """

    selection: Event = dataclasses.field(metadata={"positional": True})
    relabel: Event = dataclasses.field(metadata={"positional": True})
    sample: Any = ranged(low=2, low_open=False, integer=True)
    population: Any = ranged(low=2, low_open=False, integer=True)
    vc_dimension: Any = ranged(low=1, low_open=False, integer=True)
    net_radius: Any = ranged(low=0, high=1)

    def __post_init__(self) -> None:
        self._set("selection", _one_event(self.kind, self.selection))
        self._set("relabel", _one_event(self.kind, self.relabel))
        validate_ranges(self)
        if _truth(self.sample < self.population) is False:
            raise ValueError(
                f"{self.kind}: sample must be in [2, population - 1] = "
                f"[2, {self.population - 1}], got {self.sample}"
            )
        _replace_one(self.kind, self.selection)
        _replace_one(self.kind, self.relabel)

    @property
    def relation(self) -> Relation:
        return Relation.REPLACE_ONE

    def children(self) -> tuple[Event, ...]:
        return (self.selection, self.relabel)
