"""The Gaussian one-run audit: the canary scores' own Gaussian shape, where it is assumed.

In white-box noisy gradient descent with Dirac gradient canaries (and in the idealized trainer
"score = inclusion bit + N(0, sigma^2)") each canary's score is a Gaussian whose mean moves
when the canary is included; Agrawal et al. (2026, "Let's Ask Gauss: Improved One-Run Privacy
Auditing") audit from these asymptotically Gaussian canary statistics.  We could not read that
paper; the statistic and the proof below are our own derivation under an assumption we state,
not a reproduction of the paper's method.

Assumption G (stated by the caller, see :func:`gaussian_mu_lower`): given the inclusion bits
b, the scores X_1..X_m are independent and ``X_j ~ N(a + Delta b_j, s^2)`` (a, Delta, s
unknown).

Soundness under G.  (i) The score vector is a post-processing of the output, and with respect
to canary j (the other bits fixed) it is exactly (|Delta|/s)-GDP: only X_j's law depends on
b_j, N(a, s^2) against N(a + Delta, s^2) (Dong, Roth, Su 2022, Definition 2.6).  By
post-processing the trainer's trade-off curve lies below G_{Delta/s}: it is not mu-GDP for any
mu < Delta/s and not (eps, delta)-DP for eps < eps_GDP(Delta/s, delta) (Balle and Wang 2018,
Theorem 8, the exact profile of G_mu).  (ii) A lower confidence bound on d = Delta/s from the
n1 included and n0 excluded scores: ``D = mean1 - mean0 ~ N(Delta, s^2 c^2)`` with
``c^2 = 1/n1 + 1/n0``, and the pooled variance S^2 satisfies ``(N - 2) S^2 / s^2 ~
chi^2(N - 2)`` independently (N = n1 + n0).  With probability >= 1 - alpha/2 each,
``Delta >= D - z s c`` (z the 1 - alpha/2 normal quantile) and ``s <= s_U = S sqrt((N - 2) /
chi2_{alpha/2}(N - 2))``; on both (a union bound, probability >= 1 - alpha),
``d >= D / s - z c >= D / s_U - z c`` when D >= 0.  The mask b is independent of the
noise, so conditioning on the group sizes changes nothing.

The assumption is the whole matter: for Laplace-shaped scores the same statistic can
exceed the trainer's true epsilon (tests/audit/test_one_run_methods.py shows one), so this
method is used only when the trainer declares Gaussian scores, and
:func:`gaussian_diagnostics` reports how well the observed scores fit G (a check that can
refute the assumption, never prove it).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.deferred_imports import scipy_stats

__all__ = ["gaussian_diagnostics", "gaussian_mu_lower"]

#: Relative allowance on the quantiles (SciPy's are accurate to ~1e-14; this is far above).
_ROUND = 1e-9


def gaussian_mu_lower(scores: np.ndarray, included: np.ndarray, alpha: float) -> float:
    """Lower confidence bound on d = Delta / s under assumption G (module docstring).

    Args:
        scores: the m finite scores.
        included: the inclusion mask (bool, length m).
        alpha: the error probability (1 - confidence).

    Returns:
        A float >= 0, holding with probability >= 1 - alpha under G; 0.0 when either group
        has fewer than 2 scores, the scores are constant, or the included mean is not above
        the excluded one.
    """
    x1 = np.asarray(scores[included], dtype=float)
    x0 = np.asarray(scores[~included], dtype=float)
    n1, n0 = len(x1), len(x0)
    if n1 < 2 or n0 < 2:
        return 0.0
    diff = float(x1.mean() - x0.mean())
    dof = n1 + n0 - 2
    pooled = (float(((x1 - x1.mean()) ** 2).sum()) + float(((x0 - x0.mean()) ** 2).sum())) / dof
    if diff <= 0 or pooled <= 0:
        return 0.0
    z = float(scipy_stats.norm.isf(alpha / 2)) * (1 + _ROUND)
    chi_low = float(scipy_stats.chi2.ppf(alpha / 2, dof)) * (1 - _ROUND)
    s_upper = math.sqrt(pooled * dof / chi_low) * (1 + _ROUND)
    c = math.sqrt(1.0 / n1 + 1.0 / n0) * (1 + _ROUND)
    return max(0.0, diff / s_upper * (1 - _ROUND) - z * c)


def gaussian_diagnostics(scores: np.ndarray, included: np.ndarray) -> dict[str, float]:
    """How well the scores fit assumption G: p-values of two classical tests (evidence
    against G when small; a large p-value does not prove G).

    Returns:
        ``{"normality_p": ..., "equal_variance_p": ...}``: D'Agostino and Pearson's test on
        the pooled residuals (each score minus its group's mean) and Levene's test of equal
        variances of the two groups; empty when a group has fewer than 8 scores (no NaN, so
        the result stays valid JSON).
    """
    x1 = np.asarray(scores[included], dtype=float)
    x0 = np.asarray(scores[~included], dtype=float)
    if len(x1) < 8 or len(x0) < 8:
        return {}
    residuals = np.concatenate([x1 - x1.mean(), x0 - x0.mean()])
    normality = float(scipy_stats.normaltest(residuals).pvalue)
    variance = float(scipy_stats.levene(x1, x0).pvalue)
    return {"normality_p": normality, "equal_variance_p": variance}
