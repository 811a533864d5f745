"""Goodness-of-fit helpers for the sampler distribution tests.

Each helper returns a p-value for the null hypothesis "the samples were drawn from the
stated exact distribution".  The callers fix the significance level and sample size as
named constants and pair every acceptance test with a rejection test on a sampler whose
scale is 30% wrong (STYLE.md, "Statistical tests are designed, not hoped for").

Binning rule for chi-square tests: every bin has an expected count of at least
``MIN_EXPECTED`` (the usual validity condition of the chi-square approximation); rare
outcomes are pooled into tail bins whose probabilities are computed exactly, so the
bins always cover the whole support.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping

import mpmath
import numpy as np
from scipy import stats

MIN_EXPECTED = 5.0
# Terms of a pmf below this are treated as the end of its tail when summing tails.
_TAIL_EPS = mpmath.mpf("1e-40")


def chi_square_pvalue(observed: np.ndarray, expected_probs: np.ndarray) -> float:
    """Pearson chi-square p-value of bin counts against exact bin probabilities.

    Args:
        observed: Counts per bin.
        expected_probs: Probability of each bin; must sum to 1 (checked to 1e-9).

    Returns:
        The p-value (0.0 if an outcome of probability zero was observed).

    Raises:
        ValueError: If the probabilities do not sum to 1 or shapes differ.
    """
    observed = np.asarray(observed, dtype=float)
    probs = np.asarray(expected_probs, dtype=float)
    if observed.shape != probs.shape:
        raise ValueError(f"shape mismatch: {observed.shape} vs {probs.shape}")
    if abs(probs.sum() - 1.0) > 1e-9:
        raise ValueError(f"bin probabilities must sum to 1, got {probs.sum()!r}")
    if np.any((probs == 0) & (observed > 0)):
        return 0.0
    keep = probs > 0
    expected = probs[keep] * observed.sum()
    return float(stats.chisquare(observed[keep], expected).pvalue)


def integer_pvalue(
    samples: np.ndarray,
    pmf: Callable[[int], mpmath.mpf],
    *,
    center: int = 0,
) -> float:
    """Chi-square p-value of integer samples against an exact pmf on the integers.

    Bins are the single integers around ``center`` whose expected count is at least
    ``MIN_EXPECTED``, plus two pooled tail bins whose probabilities are summed exactly
    (with mpmath) until the terms fall below 1e-40.  The pmf must be unimodal around
    ``center``.

    Args:
        samples: Integer samples.
        pmf: Exact probability mass function (e.g. ``discrete_gaussian_pmf``).
        center: A mode of the pmf.

    Returns:
        The p-value.
    """
    samples = np.asarray(samples)
    if samples.dtype.kind not in "iu":
        raise ValueError(f"integer samples required, got dtype {samples.dtype}")
    n = samples.size
    lo = hi = center
    while float(pmf(lo - 1)) * n >= MIN_EXPECTED:
        lo -= 1
    while float(pmf(hi + 1)) * n >= MIN_EXPECTED:
        hi += 1
    central = [pmf(x) for x in range(lo, hi + 1)]
    left, right = _tail_mass(pmf, lo - 1, -1), _tail_mass(pmf, hi + 1, +1)
    probs = np.array([float(left), *(float(p) for p in central), float(right)])
    counts = np.array(
        [
            np.count_nonzero(samples < lo),
            *np.bincount(samples[(samples >= lo) & (samples <= hi)] - lo, minlength=hi - lo + 1),
            np.count_nonzero(samples > hi),
        ]
    )
    probs = probs / probs.sum()  # removes only the < 1e-38 truncation of the tails
    return chi_square_pvalue(*_pool_small(counts, probs, n))


def categorical_pvalue(outcomes: Iterable[Hashable], probs: Mapping[Hashable, float]) -> float:
    """Chi-square p-value of categorical outcomes against exact probabilities.

    Categories with expected count below ``MIN_EXPECTED`` are pooled; an outcome that
    is not a key of ``probs`` (or has probability 0) gives p-value 0.

    Args:
        outcomes: The observed outcomes.
        probs: Exact probability of each possible outcome.

    Returns:
        The p-value.
    """
    counts = Counter(outcomes)
    if any(key not in probs or probs[key] == 0 for key in counts):
        return 0.0
    keys = sorted(probs, key=lambda k: -probs[k])
    observed = np.array([counts.get(k, 0) for k in keys])
    p = np.array([float(probs[k]) for k in keys])
    return chi_square_pvalue(*_pool_small(observed, p, observed.sum()))


def ks_pvalue(samples: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """One-sample Kolmogorov-Smirnov p-value (exact distribution of the statistic).

    Args:
        samples: Real samples.
        cdf: Vectorised exact cumulative distribution function.

    Returns:
        The p-value.
    """
    return float(stats.kstest(np.asarray(samples, dtype=float), cdf, method="exact").pvalue)


def binomial_pvalue(successes: int, trials: int, probability: float) -> float:
    """Exact two-sided binomial test p-value.

    Args:
        successes: Observed successes.
        trials: Number of trials.
        probability: Success probability under the null hypothesis.

    Returns:
        The p-value.
    """
    return float(stats.binomtest(int(successes), int(trials), float(probability)).pvalue)


def _tail_mass(pmf: Callable[[int], mpmath.mpf], start: int, step: int) -> mpmath.mpf:
    total = mpmath.mpf(0)
    x = start
    while True:
        term = pmf(x)
        total += term
        if term < _TAIL_EPS:
            return total
        x += step


def _pool_small(counts: np.ndarray, probs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Merge bins, in order, until each has expected count >= MIN_EXPECTED."""
    out_c, out_p = [], []
    acc_c, acc_p = 0, 0.0
    for c, p in zip(counts, probs, strict=True):
        acc_c += int(c)
        acc_p += float(p)
        if acc_p * n >= MIN_EXPECTED:
            out_c.append(acc_c)
            out_p.append(acc_p)
            acc_c, acc_p = 0, 0.0
    if acc_p > 0 or acc_c > 0:
        if out_c:
            out_c[-1] += acc_c
            out_p[-1] += acc_p
        else:
            out_c.append(acc_c)
            out_p.append(acc_p)
    return np.array(out_c), np.array(out_p)
