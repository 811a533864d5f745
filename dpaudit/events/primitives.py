"""Leaf events: one primitive mechanism each.

Every leaf carries the neighbouring relation its sensitivity is measured under (default
add/remove, as in dp_accounting and Opacus).  The guarantee of each leaf is not stated here:
events describe, :mod:`dpaudit.theorems` bound, :mod:`dpaudit.accountant` interprets.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit.events.base import Event, Relation, as_relation, ranged, validate_ranges

__all__ = [
    "NOISES",
    "ZCDP",
    "AboveThreshold",
    "ApproxDP",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Exponential",
    "Gaussian",
    "Laplace",
    "Leaf",
    "PureDP",
    "RandomizedResponse",
    "ReportNoisyMax",
]


@dataclasses.dataclass(frozen=True)
class Leaf(Event):
    """A primitive mechanism.  Subclasses add their parameters before ``relation``."""

    def __post_init__(self) -> None:
        validate_ranges(self)
        self._set("relation", as_relation(self.relation))


def _relation_field() -> Any:
    return dataclasses.field(default=Relation.ADD_REMOVE, kw_only=True)


@dataclasses.dataclass(frozen=True)
class Laplace(Leaf):
    """The Laplace mechanism: adds Laplace noise of ``scale`` b to a query of L1 sensitivity
    ``sensitivity`` Delta (Dwork, McSherry, Nissim, Smith 2006).

    Privacy: (Delta/b)-DP (Dwork and Roth 2014, Theorem 3.6).
    """

    scale: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class Gaussian(Leaf):
    """The Gaussian mechanism: adds N(0, sigma^2) noise per coordinate to a query of L2
    sensitivity ``sensitivity`` Delta.  ``sigma`` is the standard deviation, not the noise
    multiplier (the noise multiplier is sigma / Delta).

    Privacy: (eps, delta(eps))-DP for every eps >= 0 with the exact delta(eps) of Balle and
    Wang 2018, Theorem 8; (Delta^2 / (2 sigma^2))-zCDP (Bun and Steinke 2016, Prop. 1.6).
    """

    sigma: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class DiscreteLaplace(Leaf):
    """The discrete Laplace mechanism: adds integer noise with P(x) proportional to
    exp(-|x| / scale) to an integer query of L1 sensitivity Delta (Canonne, Kamath, Steinke
    2020, Definition 28 / Ghosh, Roughgarden, Sundararajan 2009's geometric mechanism).

    Privacy: (Delta/scale)-DP.
    """

    scale: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class DiscreteGaussian(Leaf):
    """The discrete Gaussian mechanism: adds integer noise with P(x) proportional to
    exp(-x^2 / (2 sigma^2)) to an integer query of L2 sensitivity Delta (Canonne, Kamath,
    Steinke 2020).

    Privacy: (Delta^2 / (2 sigma^2))-zCDP (CKS20, Theorem 4).
    """

    sigma: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class Exponential(Leaf):
    """The exponential mechanism (McSherry and Talwar 2007) over a finite candidate set.

    Convention: ``epsilon`` is the *privacy parameter*, not the temperature.  With scores
    of sensitivity Delta, the mechanism samples candidate r with probability proportional to
    ``exp(epsilon * u(D, r) / (2 Delta))``; with ``monotone=True`` (scores move in the same
    direction on neighbouring datasets, e.g. counts under add/remove) it samples proportional
    to ``exp(epsilon * u(D, r) / Delta)``.

    Privacy: epsilon-DP (Dwork and Roth 2014, Theorem 3.10); also epsilon-bounded-range
    (Durfee and Rogers 2019), hence (epsilon^2/8)-zCDP (Cesar and Rogers 2021, Lemma 3.2).
    """

    epsilon: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    monotone: bool = False
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class RandomizedResponse(Leaf):
    """k-ary randomized response (Warner 1965): reports the true category with probability
    e^eps / (e^eps + k - 1) and each other category with probability 1 / (e^eps + k - 1).

    Privacy: epsilon-DP when one individual's record (its category) changes.
    """

    epsilon: Any = ranged(low=0, first_positional=True)
    categories: Any = ranged(low=2, low_open=False, integer=True, default=2)
    relation: Relation = _relation_field()


NOISES = ("gumbel", "laplace", "exponential")


@dataclasses.dataclass(frozen=True)
class ReportNoisyMax(Leaf):
    """Report noisy max: adds i.i.d. noise to every candidate's score (sensitivity Delta) and
    releases only the index of the largest noisy score.

    Convention: ``epsilon`` is the privacy parameter; the noise scale is ``2 Delta/epsilon``
    (``Delta/epsilon`` with ``monotone=True``).  With Gumbel noise this *is* the exponential
    mechanism; with exponential noise it is permute-and-flip (McKenna and Sheldon 2020, Thm 2);
    with Laplace noise see Dwork and Roth 2014, Claim 3.9.

    Privacy: epsilon-DP for each noise; releasing the noisy value as well is not covered.
    """

    epsilon: Any = ranged(low=0, first_positional=True)
    noise: str = "gumbel"
    sensitivity: Any = ranged(low=0, default=1)
    monotone: bool = False
    relation: Relation = _relation_field()

    def __post_init__(self) -> None:
        if self.noise not in NOISES:
            raise ValueError(
                f"ReportNoisyMax: noise must be one of {', '.join(NOISES)}, got {self.noise!r}"
            )
        super().__post_init__()


@dataclasses.dataclass(frozen=True)
class AboveThreshold(Leaf):
    """The sparse vector technique answering until ``cutoff`` queries are above threshold
    (Lyu, Su, Li 2017, Algorithm 1; Dwork and Roth 2014, Algorithm 1 for cutoff 1).

    The threshold gets Lap(Delta/eps1) noise once, each query Lap(2 c Delta/eps2) noise
    (Lap(c Delta/eps2) with ``monotone=True``), where eps1 = ``threshold_share`` * epsilon,
    eps2 = epsilon - eps1 and c = ``cutoff``.  Only the above/below answers are released.

    Privacy: epsilon-DP for any number of queries (Lyu, Su, Li 2017, Theorem 2).
    """

    epsilon: Any = ranged(low=0, first_positional=True)
    sensitivity: Any = ranged(low=0, default=1)
    cutoff: Any = ranged(low=1, low_open=False, integer=True, default=1)
    monotone: bool = False
    threshold_share: Any = ranged(low=0, high=1, default="1/2")
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class PureDP(Leaf):
    """A generic mechanism declared epsilon-DP.

    Privacy: for all neighbours D, D' and events S, P[M(D) in S] <= e^eps P[M(D') in S].
    """

    epsilon: Any = ranged(low=0, first_positional=True)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class ApproxDP(Leaf):
    """A generic mechanism declared (epsilon, delta)-DP.

    Privacy: P[M(D) in S] <= e^eps P[M(D') in S] + delta for all neighbours and events.
    """

    epsilon: Any = ranged(low=0, low_open=False, first_positional=True)
    delta: Any = ranged(low=0, high=1, low_open=False, high_open=True)
    relation: Relation = _relation_field()


@dataclasses.dataclass(frozen=True)
class ZCDP(Leaf):
    """A generic mechanism declared rho-zCDP (Bun and Steinke 2016, Definition 1.1).

    Privacy: D_alpha(M(D) || M(D')) <= rho * alpha for every alpha > 1.
    """

    rho: Any = ranged(low=0, first_positional=True)
    relation: Relation = _relation_field()
