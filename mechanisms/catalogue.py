"""A catalogue of correct, auditable mechanisms and their neighbouring pairs.

Every entry is a callable ``mechanism(dataset, rng)`` with a vectorised
``mechanism.batch(dataset, n, rng)`` (the auditor's mechanism contract in ARCHITECTURE.md), plus:

* ``name``, ``epsilon`` and ``delta``: the privacy claim;
* ``true_epsilon``: the mechanism's actual epsilon at ``delta`` where it is known in closed
  form (over all neighbouring datasets), else None with the known bound in the docstring;
* ``pairs``: the neighbouring pairs to audit it on (:class:`dpaudit.audit.NeighbouringPair`);
* ``probabilities(dataset)`` for finite-output mechanisms, giving exact output probabilities
  (used by :func:`dpaudit.audit.exact_audit` and to check the sampler).

Query-answer mechanisms (report-noisy-max, sparse vector) take the vector of query answers as
their dataset; neighbouring datasets move every answer by at most the sensitivity (1).

Deliberately broken variants live in :mod:`mechanisms.broken`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_softmax, ndtr

from dpaudit.audit.pairs import NeighbouringPair, query_pairs

__all__ = [
    "AuditableMechanism",
    "ExponentialMechanism",
    "GaussianSum",
    "LaplaceCount",
    "LaplaceHistogram",
    "OnPrimitive",
    "RandomizedResponse",
    "ReportNoisyMax",
    "SparseVector",
    "correct_mechanisms",
    "gaussian_epsilon",
    "primitive_mechanisms",
    "sparse_vector_outputs",
]

#: Number of queries of the query-answer mechanisms in the catalogue.
QUERIES = 5
SVT_QUERIES = 10


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


class AuditableMechanism:
    """Base class: a mechanism with a privacy claim, a batch sampler and pairs to audit on.

    Subclasses set the attributes in ``__init__`` and implement :meth:`batch`.
    """

    name: str = "mechanism"
    #: The claims here are about the algorithms in real arithmetic (textbook float noise is not
    #: DP as it runs in doubles: Mironov 2012), so the auditor leaves out its
    #: ``bits`` family; the floating-point realisations are audited in
    #: :mod:`mechanisms.floating_point`, which declares ``"float"``.
    arithmetic: str = "real"
    epsilon: float = 1.0
    delta: float = 0.0
    true_epsilon: float | None = None
    pairs: tuple[NeighbouringPair, ...] = ()

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent outputs on ``dataset`` (an array with one row per output)."""
        raise NotImplementedError

    def __call__(self, dataset: Any, rng: np.random.Generator) -> Any:
        """One output on ``dataset``."""
        return self.batch(dataset, 1, rng)[0]

    def __repr__(self) -> str:
        return f"{self.name}(epsilon={self.epsilon:g}, delta={self.delta:g})"


class LaplaceCount(AuditableMechanism):
    """Count of records (each clipped to [0, 1]) plus Laplace(1/epsilon) noise.

    Privacy:
        Under add/remove-one neighbours the count has sensitivity 1, so the Laplace mechanism
        is epsilon-DP (Dwork, McSherry, Nissim, Smith 2006; Dwork & Roth 2014, Theorem 3.6),
        and exactly so: the output density ratio reaches e^epsilon.
    """

    record_bound = 1.0

    def __init__(self, epsilon: float = 1.0, noise_scale: float | None = None) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.scale = self.record_bound / self.epsilon if noise_scale is None else noise_scale
        self.true_epsilon = self.record_bound / self.scale
        self.name = type(self).__name__
        self.pairs = (
            NeighbouringPair(
                np.ones(5) * self.record_bound, np.ones(4) * self.record_bound, "remove one record"
            ),
        )

    def query(self, dataset: Any) -> float:
        """The exact count: sum of the records clipped to [0, record_bound]."""
        return float(np.clip(np.asarray(dataset, dtype=float), 0.0, self.record_bound).sum())

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.query(dataset) + rng.laplace(0.0, self.scale, n)


class LaplaceHistogram(AuditableMechanism):
    """Histogram of records over ``bins`` bins plus Laplace noise on every bin.

    Privacy:
        Adding or removing a record changes one bin by 1 (L1 sensitivity 1); replacing a
        record changes two bins by 1 (L1 sensitivity 2). Noise Laplace(sensitivity/epsilon)
        per bin makes it epsilon-DP (Dwork & Roth 2014, Theorem 3.6), exactly (attained by the
        event "bin a high and bin b low").
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        bins: int = 4,
        neighbouring: str = "replace",
        noise_scale: float | None = None,
    ) -> None:
        if neighbouring not in ("replace", "add-remove"):
            raise ValueError(
                f"neighbouring must be 'replace' or 'add-remove', got {neighbouring!r}"
            )
        if not isinstance(bins, int) or bins < 2:
            raise ValueError(f"bins must be an integer >= 2, got {bins!r}")
        self.epsilon = _positive("epsilon", epsilon)
        self.bins = bins
        sensitivity = 2.0 if neighbouring == "replace" else 1.0
        self.scale = sensitivity / self.epsilon if noise_scale is None else noise_scale
        self.true_epsilon = sensitivity / self.scale
        self.name = type(self).__name__
        base = list(range(bins))
        if neighbouring == "replace":
            self.pairs = (
                NeighbouringPair(
                    np.array([*base, 0]),
                    np.array([*base, 1]),
                    "replace a record of bin 0 by one of bin 1",
                ),
            )
        else:
            self.pairs = (
                NeighbouringPair(np.array(base), np.array([*base, 0]), "add a record to bin 0"),
            )

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        counts = np.bincount(np.asarray(dataset, dtype=int), minlength=self.bins)[: self.bins]
        return counts + rng.laplace(0.0, self.scale, (n, self.bins))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon at ``delta`` of the Gaussian mechanism with ``mu = sensitivity / sigma``.

    Solves ``delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` (Balle & Wang,
    "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, Theorem 8).

    Args:
        mu: sensitivity divided by the noise standard deviation, > 0.
        delta: in (0, 1).

    Returns:
        The smallest epsilon >= 0 for which the mechanism is (epsilon, delta)-DP.
    """

    def gap(eps: float) -> float:
        return float(ndtr(mu / 2 - eps / mu) - math.exp(eps) * ndtr(-mu / 2 - eps / mu) - delta)

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2
    return brentq(gap, 0.0, hi, xtol=1e-12)


class GaussianSum(AuditableMechanism):
    """Sum of records clipped to [-clip, clip] plus Gaussian noise of the classical calibration.

    Privacy:
        sigma = clip * sqrt(2 ln(1.25/delta)) / epsilon gives (epsilon, delta)-DP for
        epsilon < 1 (Dwork & Roth 2014, Theorem A.1). The exact epsilon at delta is smaller
        (``true_epsilon``, from :func:`gaussian_epsilon`).
    """

    def __init__(
        self, epsilon: float = 0.9, delta: float = 1e-5, clip: float = 1.0, clips: bool = True
    ) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        if not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        self.delta = float(delta)
        self.clip = _positive("clip", clip)
        self.clips = clips
        self.sigma = self.clip * math.sqrt(2 * math.log(1.25 / self.delta)) / self.epsilon
        self.outlier = 30.0 * self.clip
        shift = self.clip if clips else self.outlier
        self.true_epsilon = gaussian_epsilon(shift / self.sigma, self.delta)
        self.name = type(self).__name__
        self.pairs = (
            NeighbouringPair(
                np.zeros(5),
                np.r_[np.zeros(5), self.outlier],
                f"add a record of value {self.outlier:g}",
            ),
        )

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(dataset, dtype=float)
        if self.clips:
            values = np.clip(values, -self.clip, self.clip)
        return values.sum() + rng.normal(0.0, self.sigma, n)


def _scores(dataset: Any) -> np.ndarray:
    scores = np.asarray(dataset, dtype=float)
    if scores.ndim != 1 or len(scores) < 1:
        raise ValueError(f"dataset must be a 1-D vector of query answers, got shape {scores.shape}")
    return scores


class ReportNoisyMax(AuditableMechanism):
    """Index of the largest noisy query answer.

    Privacy:
        With Laplace(2/epsilon) noise (any sensitivity-1 queries) it is epsilon-DP (Dwork & Roth
        2014, Claim 3.9 with the factor 2 for non-monotone queries); with exponential(2/epsilon)
        noise it is the permute-and-flip mechanism, epsilon-DP (Ding, Kifer et al., "The
        Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with Exponential Noise",
        2021). The exact epsilon for a fixed number of queries is below epsilon (not known in
        closed form).
    """

    def __init__(self, epsilon: float = 1.0, noise: str = "laplace") -> None:
        if noise not in ("laplace", "exponential"):
            raise ValueError(f"noise must be 'laplace' or 'exponential', got {noise!r}")
        self.epsilon = _positive("epsilon", epsilon)
        self.noise = noise
        self.scale = 2.0 / self.epsilon
        self.name = f"{type(self).__name__}[{noise}]"
        self.pairs = query_pairs(QUERIES)

    def noisy(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` rows of noisy answers."""
        scores = _scores(dataset)
        if self.noise == "laplace":
            return scores + rng.laplace(0.0, self.scale, (n, len(scores)))
        return scores + rng.exponential(self.scale, (n, len(scores)))

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.argmax(self.noisy(dataset, n, rng), axis=1)


class ExponentialMechanism(AuditableMechanism):
    """Index ``i`` with probability proportional to ``exp(epsilon * q_i / (2 sensitivity))``.

    Sampled with the Gumbel-max trick (report-noisy-max with Gumbel(2 sensitivity/epsilon)
    noise). ``score_factor`` is the factor in front of ``q_i`` divided by epsilon (1/2 here).

    Privacy:
        epsilon-DP (McSherry & Talwar 2007, Theorem 6; Dwork & Roth 2014, Theorem 3.10); the
        supremum over score vectors is exactly epsilon but is not attained for finitely many
        candidates.
    """

    def __init__(self, epsilon: float = 1.0, score_factor: float = 0.5) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.factor = score_factor * self.epsilon
        self.true_epsilon = 2 * self.factor
        self.name = type(self).__name__
        self.pairs = query_pairs(QUERIES)

    def probabilities(self, dataset: Any) -> dict[Hashable, float]:
        """Exact output probabilities ``{index: probability}``."""
        logp = log_softmax(self.factor * _scores(dataset))
        return {i: float(np.exp(v)) for i, v in enumerate(logp)}

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        scores = self.factor * _scores(dataset)
        return np.argmax(scores + rng.gumbel(size=(n, len(scores))), axis=1)


class RandomizedResponse(AuditableMechanism):
    """Report a bit truthfully with probability e^epsilon / (1 + e^epsilon).

    Privacy:
        Exactly epsilon-DP (Warner 1965; Dwork & Roth 2014, Section 3.2): the ratio of the
        probabilities of either answer is e^epsilon. The dataset is the respondent's bit.
    """

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.true_epsilon = self.epsilon
        self.truthful = math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
        self.name = type(self).__name__
        self.pairs = (NeighbouringPair(0, 1, "the respondent's bit"),)

    def probabilities(self, dataset: Any) -> dict[Hashable, float]:
        """Exact output probabilities ``{0: p, 1: 1-p}``."""
        bit = int(dataset)
        return {bit: self.truthful, 1 - bit: 1.0 - self.truthful}

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        bit = int(dataset)
        return np.where(rng.random(n) < self.truthful, bit, 1 - bit)


def sparse_vector_outputs(
    answers: np.ndarray,
    threshold: float,
    threshold_noise: np.ndarray,
    query_noise: np.ndarray | float,
    cutoff: int | None,
    release_values: bool = False,
) -> np.ndarray:
    """Vectorised sparse-vector answers for ``n`` runs (one row per run).

    Args:
        answers: the ``k`` exact query answers.
        threshold: the public threshold T.
        threshold_noise: ``(n, 1)`` noise added to T.
        query_noise: ``(n, k)`` noise added to the answers (or 0).
        cutoff: stop after this many positive answers (None: never stop).
        release_values: output the noisy answer instead of "above" (Roth 2011's variant).

    Returns:
        ``(n, k)`` array: 1 above, 0 below, -1 not answered (after the cutoff); with
        ``release_values`` the noisy answer where above and NaN elsewhere.
    """
    noisy = answers + query_noise
    above = noisy >= threshold + threshold_noise
    answered = np.ones_like(above)
    if cutoff is not None:
        answered = (np.cumsum(above, axis=1) - above) < cutoff
    if release_values:
        return np.where(answered & above, noisy, np.nan)
    return np.where(answered, above.astype(np.int8), np.int8(-1))


class SparseVector(AuditableMechanism):
    """Sparse vector technique as corrected by Lyu, Su and Li 2017 (their Algorithm 1).

    rho ~ Lap(sensitivity/eps1), nu_i ~ Lap(2 c sensitivity/eps2) with eps1 = eps2 = epsilon/2;
    answer "above" when q_i + nu_i >= T + rho, stop after c "above" answers.

    Privacy:
        epsilon-DP (Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differentially
        Private Hierarchical Queries", PVLDB 10(6), 2017, Theorem 2). Exact epsilon for a
        fixed number of queries is not known in closed form (at most epsilon).
    """

    def __init__(self, epsilon: float = 1.0, threshold: float = 0.0, cutoff: int = 1) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.threshold = float(threshold)
        self.cutoff = cutoff
        self.name = type(self).__name__
        self.pairs = query_pairs(SVT_QUERIES)

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        answers = _scores(dataset)
        eps1 = eps2 = self.epsilon / 2
        rho = rng.laplace(0.0, 1.0 / eps1, (n, 1))
        nu = rng.laplace(0.0, 2.0 * self.cutoff / eps2, (n, len(answers)))
        return sparse_vector_outputs(answers, self.threshold, rho, nu, self.cutoff)


def correct_mechanisms(epsilon: float = 1.0) -> list[AuditableMechanism]:
    """One instance of every correct catalogue mechanism at ``epsilon``."""
    return [
        LaplaceCount(epsilon),
        LaplaceHistogram(epsilon),
        GaussianSum(min(epsilon, 0.9)),
        ReportNoisyMax(epsilon, "laplace"),
        ReportNoisyMax(epsilon, "exponential"),
        ExponentialMechanism(epsilon),
        RandomizedResponse(epsilon),
        SparseVector(epsilon),
    ]


def _release_sum(primitive: Any, dataset: Any, n: int, rng: np.random.Generator) -> Any:
    return primitive.release(
        float(np.clip(np.asarray(dataset, dtype=float), 0, 1).sum()), rng, size=n
    )


def _select(primitive: Any, dataset: Any, n: int, rng: np.random.Generator) -> Any:
    return primitive.select(_scores(dataset), rng, size=n)


def _respond(primitive: Any, dataset: Any, n: int, rng: np.random.Generator) -> Any:
    return primitive.respond(int(dataset), rng, size=n)


def _above_threshold(primitive: Any, dataset: Any, n: int, rng: np.random.Generator) -> Any:
    return primitive.run_batch(_scores(dataset), rng, n)


class OnPrimitive(AuditableMechanism):
    """A primitive of :mod:`mechanisms.primitives` run on catalogue datasets.

    Auditing these audits the project's real primitive code, not a re-implementation.
    ``sample(primitive, dataset, n, rng)`` is a module-level function (picklable for workers).

    Privacy:
        The primitive's own declared guarantee (its ``event``); ``epsilon`` is that claim.
    """

    def __init__(
        self,
        name: str,
        primitive: Any,
        sample: Any,
        epsilon: float,
        pairs: tuple[NeighbouringPair, ...],
        true_epsilon: float | None = None,
    ) -> None:
        self.name = name
        self.primitive = primitive
        self.sample = sample
        self.epsilon = epsilon
        self.pairs = pairs
        self.true_epsilon = true_epsilon

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(self.sample(self.primitive, dataset, n, rng))


def primitive_mechanisms(epsilon: float = 1.0) -> list[AuditableMechanism]:
    """The correct primitives of :mod:`mechanisms.primitives`, ready to audit at ``epsilon``."""
    from mechanisms import primitives as prim

    eps = _positive("epsilon", epsilon)
    count_pairs = LaplaceCount(eps).pairs
    rr_pairs = RandomizedResponse(eps).pairs
    return [
        OnPrimitive(
            "primitives.LaplaceMechanism",
            prim.LaplaceMechanism(1.0 / eps),
            _release_sum,
            eps,
            count_pairs,
            eps,
        ),
        OnPrimitive(
            "primitives.ExponentialMechanism",
            prim.ExponentialMechanism(eps),
            _select,
            eps,
            query_pairs(QUERIES),
        ),
        OnPrimitive(
            "primitives.RandomizedResponseMechanism",
            prim.RandomizedResponseMechanism(eps),
            _respond,
            eps,
            rr_pairs,
            eps,
        ),
        *(
            OnPrimitive(
                f"primitives.ReportNoisyMaxMechanism[{noise}]",
                prim.ReportNoisyMaxMechanism(eps, noise),
                _select,
                eps,
                query_pairs(QUERIES),
            )
            for noise in ("gumbel", "laplace", "exponential")
        ),
        OnPrimitive(
            "primitives.AboveThresholdMechanism",
            prim.AboveThresholdMechanism(eps, 0.0),
            _above_threshold,
            eps,
            query_pairs(SVT_QUERIES),
        ),
    ]
