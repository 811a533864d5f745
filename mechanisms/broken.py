"""Deliberately broken mechanisms: each claims a privacy guarantee its code does not have.

They exist to show that :func:`dpaudit.audit.audit` catches real implementation bugs. Every
class says what is wrong and its true epsilon where known (``true_epsilon``; ``math.inf`` when
no finite epsilon holds). Never use them to protect data.

The sparse-vector variants are the incorrect ones analysed by Lyu, Su and Li, "Understanding
the Sparse Vector Technique for Differentially Private Hierarchical Queries", PVLDB 10(6),
2017 (their Figure 1, Algorithms 3-6); the report-noisy-max variants follow StatDP (Ding,
Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy", CCS 2018, Section 6).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.audit.pairs import query_pairs
from mechanisms.catalogue import (
    QUERIES,
    SVT_QUERIES,
    AuditableMechanism,
    ExponentialMechanism,
    GaussianSum,
    LaplaceCount,
    LaplaceHistogram,
    ReportNoisyMax,
    _positive,
    _scores,
    sparse_vector_outputs,
)

__all__ = [
    "BrokenGaussianWithoutClipping",
    "BrokenHistogramWrongSensitivity",
    "BrokenLaplaceTooLittleNoise",
    "BrokenLaplaceWrongSensitivity",
    "BrokenNoisyMaxReleasesValue",
    "BrokenNoisyMaxWrongNoiseScale",
    "BrokenSparseVectorChen2015",
    "BrokenSparseVectorLeeClifton2014",
    "BrokenSparseVectorRoth2011",
    "BrokenSparseVectorStoddard2014",
    "broken_mechanisms",
]


class BrokenLaplaceTooLittleNoise(LaplaceCount):
    """Counting query with Laplace noise of scale 1/(2 epsilon): half the noise it needs.

    What is wrong: the scale is divided by two (a typical "b = 1/(2 eps)" slip).
    True epsilon: 2 epsilon (the density ratio of Laplace(1/(2 eps)) at shift 1 is e^(2 eps)).
    """

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon, noise_scale=1.0 / (2.0 * _positive("epsilon", epsilon)))


class BrokenLaplaceWrongSensitivity(LaplaceCount):
    """Sum of records clipped to [0, 2] with noise calibrated for sensitivity 1.

    What is wrong: the sensitivity is off by a factor 2 (records may be 2, the noise assumes 1).
    True epsilon: 2 epsilon.
    """

    record_bound = 2.0

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon, noise_scale=1.0 / _positive("epsilon", epsilon))


class BrokenHistogramWrongSensitivity(LaplaceHistogram):
    """Histogram under replace-one neighbours with Laplace(1/epsilon) noise per bin.

    What is wrong: replacing a record moves two bins, so the L1 sensitivity is 2, not 1.
    True epsilon: 2 epsilon (event "bin 0 high and bin 1 low").
    """

    def __init__(self, epsilon: float = 1.0, bins: int = 4) -> None:
        super().__init__(epsilon, bins, "replace", noise_scale=1.0 / _positive("epsilon", epsilon))


class BrokenGaussianWithoutClipping(GaussianSum):
    """Gaussian sum calibrated for records in [-1, 1] that forgets to clip them.

    What is wrong: the noise assumes sensitivity ``clip`` but one record of value v moves the
    sum by v. True epsilon: unbounded over datasets (math.inf); for the catalogue's pair (an
    added record of value 30) it is ``gaussian_epsilon(30 / sigma, delta)`` (about 400 at the
    defaults), far above the claim.
    """

    def __init__(self, epsilon: float = 0.9, delta: float = 1e-5, clip: float = 1.0) -> None:
        super().__init__(epsilon, delta, clip, clips=False)
        self.pair_epsilon = self.true_epsilon
        self.true_epsilon = math.inf


class BrokenNoisyMaxReleasesValue(ReportNoisyMax):
    """Report-noisy-max that releases the noisy maximum *value* instead of its index.

    What is wrong: the value is not covered by the report-noisy-max proof (StatDP's
    "NoisyMax3"/"NoisyMax4"). True epsilon over k queries: with Laplace(2/epsilon) noise,
    k epsilon / 2 (the CDF ratio of each Laplace reaches e^(epsilon/2) when every answer moves
    up by 1, so the density of the maximum reaches e^(k epsilon/2)); with exponential noise,
    infinite (the maximum's support starts at max_i q_i, which moves).
    """

    def __init__(self, epsilon: float = 1.0, noise: str = "laplace") -> None:
        super().__init__(epsilon, noise)
        self.name = f"{type(self).__name__}[{noise}]"
        self.true_epsilon = QUERIES * self.epsilon / 2 if noise == "laplace" else math.inf

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.noisy(dataset, n, rng).max(axis=1)


class BrokenNoisyMaxWrongNoiseScale(ExponentialMechanism):
    """Report-noisy-max with Gumbel(1/epsilon) noise on queries that are not monotone.

    What is wrong: the noise scale 1/epsilon is only enough for monotone queries; general
    sensitivity-1 queries need 2/epsilon. Equivalently, the exponential mechanism with
    ``exp(epsilon q)`` instead of ``exp(epsilon q / 2)``. True epsilon: 2 epsilon (a supremum,
    approached as one score falls far below the others); for k queries all equal in d0 and
    "one down, the rest up" in d1 the exact loss is epsilon + ln((e^-eps + (k-1) e^eps) / k).
    """

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon, score_factor=1.0)


class _SparseVectorVariant(AuditableMechanism):
    """Shared shape of the Lyu-Su-Li variants: thresholds, noise and cutoff differ."""

    release_values = False

    def __init__(self, epsilon: float = 1.0, threshold: float = 0.0) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.threshold = float(threshold)
        self.name = type(self).__name__
        self.pairs = query_pairs(SVT_QUERIES)

    def noise_scales(self) -> tuple[float, float, int | None]:
        """(threshold noise scale, query noise scale or 0, cutoff or None)."""
        raise NotImplementedError

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        answers = _scores(dataset)
        rho_scale, nu_scale, cutoff = self.noise_scales()
        rho = rng.laplace(0.0, rho_scale, (n, 1))
        nu = rng.laplace(0.0, nu_scale, (n, len(answers))) if nu_scale > 0 else 0.0
        return sparse_vector_outputs(
            answers, self.threshold, rho, nu, cutoff, release_values=self.release_values
        )


class BrokenSparseVectorRoth2011(_SparseVectorVariant):
    """Sparse vector that outputs the noisy answer q_i + nu_i when it is above the threshold.

    Lyu, Su, Li 2017, Algorithm 3 (from Roth's 2011 lecture notes): eps1 = eps2 = epsilon/2,
    rho ~ Lap(1/eps1), nu_i ~ Lap(c/eps2), cutoff c = 1. Output: the noisy answer where above,
    NaN for "below" and after the cutoff.
    What is wrong: releasing the noisy answer leaks rho. True epsilon: infinite (not
    epsilon'-DP for any finite epsilon', Lyu et al. Section 3.2); finite but above the claim for
    a fixed number of queries.
    """

    release_values = True
    true_epsilon = math.inf

    def noise_scales(self) -> tuple[float, float, int | None]:
        return 2.0 / self.epsilon, 2.0 / self.epsilon, 1


class BrokenSparseVectorLeeClifton2014(_SparseVectorVariant):
    """Sparse vector whose query noise does not grow with the cutoff.

    Lyu, Su, Li 2017, Algorithm 4 (Lee & Clifton 2014): eps1 = epsilon/4, rho ~ Lap(1/eps1),
    eps2 = 3 epsilon/4, nu_i ~ Lap(1/eps2), cutoff c = 1 (the claim holds only for c = 1 when
    the query noise is Lap(2c/eps2)).
    What is wrong: nu_i is half of what the proof needs. True epsilon: (1 + 6c) epsilon / 4 =
    1.75 epsilon for c = 1 (Lyu et al. Theorem 5).
    """

    def __init__(self, epsilon: float = 1.0, threshold: float = 0.0) -> None:
        super().__init__(epsilon, threshold)
        self.true_epsilon = 1.75 * self.epsilon

    def noise_scales(self) -> tuple[float, float, int | None]:
        return 4.0 / self.epsilon, 4.0 / (3.0 * self.epsilon), 1


class BrokenSparseVectorStoddard2014(_SparseVectorVariant):
    """Sparse vector without noise on the query answers and without a cutoff.

    Lyu, Su, Li 2017, Algorithm 5 (Stoddard, Chen, Machanavajjhala 2014): rho ~ Lap(2/epsilon),
    nu_i = 0, every query answered.
    What is wrong: with no query noise, the pattern of answers pins down rho; answers (above,
    below) for (q, q') and (below, above) for the swapped neighbour have disjoint supports.
    True epsilon: infinite.
    """

    true_epsilon = math.inf

    def noise_scales(self) -> tuple[float, float, int | None]:
        return 2.0 / self.epsilon, 0.0, None


class BrokenSparseVectorChen2015(_SparseVectorVariant):
    """Sparse vector without a cutoff.

    Lyu, Su, Li 2017, Algorithm 6 (Chen, Xiao et al. 2015): eps1 = eps2 = epsilon/2,
    rho ~ Lap(1/eps1), nu_i ~ Lap(1/eps2), every query answered.
    What is wrong: each "above" answer costs privacy and nothing bounds their number. True
    epsilon: infinite (grows linearly with the number of queries).
    """

    true_epsilon = math.inf

    def noise_scales(self) -> tuple[float, float, int | None]:
        return 2.0 / self.epsilon, 2.0 / self.epsilon, None


def broken_mechanisms(epsilon: float = 1.0) -> list[AuditableMechanism]:
    """One instance of every broken catalogue mechanism, claiming ``epsilon``."""
    return [
        BrokenLaplaceTooLittleNoise(epsilon),
        BrokenLaplaceWrongSensitivity(epsilon),
        BrokenHistogramWrongSensitivity(epsilon),
        BrokenGaussianWithoutClipping(min(epsilon, 0.9)),
        BrokenNoisyMaxReleasesValue(epsilon, "laplace"),
        BrokenNoisyMaxReleasesValue(epsilon, "exponential"),
        BrokenNoisyMaxWrongNoiseScale(epsilon),
        BrokenSparseVectorRoth2011(epsilon),
        BrokenSparseVectorLeeClifton2014(epsilon),
        BrokenSparseVectorStoddard2014(epsilon),
        BrokenSparseVectorChen2015(epsilon),
    ]
