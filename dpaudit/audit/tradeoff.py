"""The trade-off-curve view of an audit: certified f-DP, epsilon at any delta, and GDP mu.

A mechanism's privacy on a pair ``(d0, d1)`` is its trade-off function (Dong, Roth & Su,
"Gaussian differential privacy", JRSS-B 2022, Definition 2.1)

    T(alpha) = inf { beta : a test of M(d0) against M(d1) with type I error alpha has type II
                     error beta }.

Every threshold test "say d1 when the output >= t" (and its mirror "say d1 when the output
< t") has a false-positive rate ``FPR(t) = P[M(d0) >= t]`` and a false-negative rate
``FNR(t) = P[M(d1) < t]``, so ``T(FPR(t)) <= FNR(t)``.  Here both rates get one-sided
Clopper-Pearson bounds on fresh samples, *simultaneously* over every threshold (Bonferroni:
``4 m`` one-sided bounds for ``m`` thresholds, each at ``alpha / (4 m)``), so with probability
at least ``confidence`` every point ``(FPR_upper(t), FNR_upper(t))`` lies on or above ``T``.
``T`` is convex and decreasing, so it also lies below the lower convex envelope of these
points: the **certified curve**.  The mechanism is no more private than that curve says.

Derived certified lower bounds (all holding together, at the same confidence):

* epsilon at any delta: ``M`` is (epsilon, delta)-DP iff ``T >= f_{eps,delta}`` with
  ``f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a))`` (Dong, Roth & Su
  2022, Proposition 2.5; Wasserman & Zhou 2010, Theorem 2.4).  A point ``(a, b)`` above
  ``T`` gives ``eps >= ln((1 - delta - b) / a)`` and ``eps >= ln((1 - delta - a) / b)``;
* the GDP parameter: ``M`` is mu-GDP iff ``T >= G_mu``, ``G_mu(a) = Phi(Phi^-1(1 - a) - mu)``
  (Dong, Roth & Su 2022, Definition 2.6), so ``mu >= Phi^-1(1 - a) - Phi^-1(b)`` (Nasr et al.,
  "Tight auditing of differentially private machine learning", USENIX Security 2023,
  Section 4).

Numbers are rounded down and carry the confidence.  Thresholds are fixed before the counted
samples are drawn: given by the caller, or chosen on separate selection samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from scipy.special import ndtr, ndtri

from dpaudit.audit.estimators import clopper_pearson, epsilon_lower_bound
from dpaudit.audit.events import Identity, ThresholdEvent
from dpaudit.audit.limits import MAX_SAMPLES
from dpaudit.audit.runner import DEFAULT_BATCH_SIZE, Runner
from dpaudit.audit.validation import check_confidence, check_delta
from dpaudit.numeric import mp_precision, mpf_to_float

__all__ = ["TradeoffCurve", "gaussian_tradeoff", "tradeoff_curve"]

#: Thresholds chosen on the selection samples when none are given.
DEFAULT_THRESHOLDS = 100
#: Most thresholds accepted (each adds four bounds to the Bonferroni count).
MAX_THRESHOLDS = 10_000
#: Share of the samples used to choose thresholds when none are given.
SELECTION_FRACTION = 0.1
_SELECT, _COUNT = 10, 11


def gaussian_tradeoff(mu: float, alpha: np.ndarray | float) -> np.ndarray:
    """The mu-GDP trade-off function ``G_mu(a) = Phi(Phi^-1(1 - a) - mu)`` (Dong, Roth & Su
    2022, Definition 2.6): the exact trade-off function of ``N(0, 1)`` against ``N(mu, 1)``,
    i.e. of the Gaussian mechanism with ``mu = sensitivity / sigma``."""
    a = np.asarray(alpha, dtype=float)
    return np.asarray(ndtr(-ndtri(a) - mu))  # Phi^-1(1 - a) = -Phi^-1(a), exact in the tails


@dataclass(frozen=True)
class TradeoffCurve:
    """Simultaneous bands on the error rates of threshold tests, and what they certify.

    Attributes:
        thresholds: thresholds ``t`` of the tests "say d1 when the output >= t" (sorted).
        fpr_lower: lower bounds on ``P[M(d0) >= t]``.
        fpr_upper: upper bounds on ``P[M(d0) >= t]``.
        fnr_lower: lower bounds on ``P[M(d1) < t]``.
        fnr_upper: upper bounds on ``P[M(d1) < t]``.
        mirror_fpr_lower: lower bounds on ``P[M(d0) < t]``, the false-positive rate of the
            mirror test "say d1 unless the output >= t" (bounds on the complementary count,
            so no float ``1 - x`` enters a bound; a missing output, NaN, counts as ``< t``).
        mirror_fpr_upper: upper bounds on ``P[M(d0) < t]``.
        mirror_fnr_lower: lower bounds on ``P[M(d1) >= t]`` (the mirror test's type II).
        mirror_fnr_upper: upper bounds on ``P[M(d1) >= t]``.
        samples: counted samples per dataset.
        selection_samples: samples per dataset used to choose the thresholds (0 if given).
        confidence: probability that every band holds at once.
        level: level of each one-sided Clopper-Pearson bound (``(1 - confidence) / (4 m)``).
        mechanism: the mechanism's name.
    """

    thresholds: np.ndarray
    fpr_lower: np.ndarray
    fpr_upper: np.ndarray
    fnr_lower: np.ndarray
    fnr_upper: np.ndarray
    mirror_fpr_lower: np.ndarray
    mirror_fpr_upper: np.ndarray
    mirror_fnr_lower: np.ndarray
    mirror_fnr_upper: np.ndarray
    samples: int
    selection_samples: int
    confidence: float
    level: float
    mechanism: str = ""

    def _points(self) -> tuple[np.ndarray, np.ndarray]:
        """Certified points ``(a, b)`` with ``T(a) <= b``, from both test orientations."""
        return (
            np.r_[self.fpr_upper, self.mirror_fpr_upper],
            np.r_[self.fnr_upper, self.mirror_fnr_upper],
        )

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """The certified curve: the lower convex envelope of the certified points with
        ``(0, 1)`` and ``(1, 0)``, as vertices ``(fpr, fnr)`` sorted by fpr.  With probability
        at least ``confidence`` the mechanism's trade-off function lies on or below the
        piecewise-linear curve through them."""
        a, b = self._points()
        xs = np.r_[0.0, a, 1.0]
        ys = np.r_[1.0, b, 0.0]
        ux, first = np.unique(xs, return_inverse=True)
        uy = np.full(len(ux), np.inf)
        np.minimum.at(uy, first, ys)  # lowest certified fnr at each fpr
        hull: list[tuple[float, float]] = []
        for x, y in zip(ux, uy, strict=True):
            while len(hull) >= 2:
                (x1, y1), (x2, y2) = hull[-2], hull[-1]
                if (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1) <= 0:  # not a left turn
                    hull.pop()
                else:
                    break
            hull.append((float(x), float(y)))
        pts = np.asarray(hull)
        return pts[:, 0], pts[:, 1]

    def tradeoff_upper(self, alpha: float | np.ndarray) -> np.ndarray:
        """Certified upper bound on the trade-off function at ``alpha`` (the curve)."""
        x, y = self.curve()
        return np.asarray(np.interp(np.asarray(alpha, dtype=float), x, y))

    def epsilon_lower(self, delta: float = 0.0) -> float:
        """Certified lower bound on the mechanism's epsilon at ``delta`` (rounded down).

        Both directions: ``max ln((1 - delta - b) / a)`` and ``max ln((1 - delta - a) / b)``
        over the certified points (Dong, Roth & Su 2022, Proposition 2.5).  ``1 - b`` and
        ``1 - a`` are bounded directly (the complementary counts' bounds), and each term is
        :func:`dpaudit.audit.estimators.epsilon_lower_bound`, rounded down.

        Raises:
            ValueError: if ``delta`` is not in [0, 1).
        """
        check_delta(delta)
        best = 0.0
        # (lower bound on the numerator event, upper bound on the denominator event)
        for num, den in (
            (self.mirror_fnr_lower, self.fpr_upper),  # x >= t: P1 over P0
            (self.mirror_fpr_lower, self.fnr_upper),  # x < t: P0 over P1
            (self.fnr_lower, self.mirror_fpr_upper),  # x < t: P1 over P0
            (self.fpr_lower, self.mirror_fnr_upper),  # x >= t: P0 over P1
        ):
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.log(np.maximum(num - delta, 1e-300) / den)
            i = int(np.argmax(values))
            best = max(best, epsilon_lower_bound(float(num[i]), float(den[i]), float(delta)))
        return best

    @property
    def mu_lower(self) -> float:
        """Certified lower bound on the GDP parameter mu (rounded down; 0.0 if none).

        ``max Phi^-1(1 - a) - Phi^-1(b)`` over the certified points (Nasr et al. 2023, from
        ``G_mu(a) <= T(a) <= b``; ``G_mu`` is symmetric, so one orientation serves both
        directions), evaluated at 50 digits and rounded down.
        """
        a, b = self._points()
        with np.errstate(divide="ignore"):
            approx = -ndtri(a) - ndtri(b)
        i = int(np.argmax(np.where(np.isfinite(approx), approx, -np.inf)))
        if not np.isfinite(approx[i]) or approx[i] <= 0:
            return 0.0
        with mp_precision(170):
            two = mpmath.mpf(2)

            def probit(p: float) -> Any:
                return mpmath.sqrt(two) * mpmath.erfinv(2 * mpmath.mpf(p) - 1)

            value = -probit(float(a[i])) - probit(float(b[i]))
            return max(0.0, mpf_to_float(value, "down"))

    def plot(self, ax: Any = None, *, reference_mu: float | None = None) -> Any:
        """Draw the bands, the certified curve and the mu-GDP curve of :attr:`mu_lower`.

        Args:
            ax: a matplotlib Axes (a new Figure's when None; pyplot is not used).
            reference_mu: also draw ``G_mu`` for this mu (e.g. the claimed one).

        Returns:
            The Axes.
        """
        if ax is None:
            from matplotlib.figure import Figure

            ax = Figure(figsize=(4.5, 4.5)).add_subplot()
        grid = np.linspace(0.0, 1.0, 401)
        ax.fill_between(grid, 0, self.tradeoff_upper(grid), color="tab:blue", alpha=0.1)
        x, y = self.curve()
        ax.plot(x, y, color="tab:blue", label=f"certified curve ({self.confidence:g})")
        ax.plot(self.fpr_upper, self.fnr_upper, ".", color="tab:blue", ms=3)
        if self.mu_lower > 0:
            ax.plot(
                grid,
                gaussian_tradeoff(self.mu_lower, grid),
                "--",
                color="tab:red",
                label=f"G_mu, mu_lower={self.mu_lower:.3f}",
            )
        if reference_mu is not None:
            ax.plot(
                grid,
                gaussian_tradeoff(reference_mu, grid),
                ":",
                color="black",
                label=f"G_mu, mu={reference_mu:g}",
            )
        ax.plot([0, 1], [1, 0], color="grey", lw=0.5)
        ax.set_xlabel("false-positive rate (type I)")
        ax.set_ylabel("false-negative rate (type II)")
        ax.set_title(f"trade-off of {self.mechanism or 'mechanism'}")
        ax.legend(fontsize=7)
        return ax

    def __str__(self) -> str:
        x, y = self.curve()
        shown = ", ".join(f"({a:.3g}, {b:.3g})" for a, b in list(zip(x, y, strict=True))[1:-1][:6])
        eps = ", ".join(f"{_down(self.epsilon_lower(d))} at delta={d:g}" for d in (0.0, 1e-5, 1e-3))
        chosen = (
            f"chosen on {self.selection_samples:,} separate samples per dataset"
            if self.selection_samples
            else "given"
        )
        return "\n".join(
            [
                f"trade-off curve of {self.mechanism or 'mechanism'} "
                f"(certified at confidence {self.confidence:g}, all bounds at once)",
                f"  thresholds       : {len(self.thresholds)} ({chosen})",
                f"  samples          : {self.samples:,} per dataset (fresh)",
                f"  correction       : Bonferroni over {4 * len(self.thresholds)} one-sided "
                f"Clopper-Pearson bounds, each at level {self.level:.3g}",
                f"  mu lower bound   : {_down(self.mu_lower)} (GDP; certified, rounded down)",
                f"  epsilon lower    : {eps}",
                f"  certified curve  : T(fpr) <= fnr at {shown}" + (" ..." if len(x) > 8 else ""),
            ]
        )


def _down(x: float) -> str:
    return f"{math.floor(x * 1e4) / 1e4:.4f}"


def _choose_thresholds(x0: np.ndarray, x1: np.ndarray, count: int) -> np.ndarray:
    """Pooled order statistics, geometric from both ends (the tails decide large epsilon)
    and linear in between."""
    pooled = np.sort(np.concatenate([x0, x1]))
    n = len(pooled)
    if n == 0:
        raise ValueError(
            "mechanism outputs must include numbers to choose thresholds from, got only "
            "missing values (NaN); pass thresholds="
        )
    half = count // 3
    geo = np.geomspace(1, max(1, n // 2), half).astype(int) - 1
    lin = np.linspace(0, n - 1, count - 2 * half).astype(int)
    ranks = np.unique(np.r_[geo, n - 1 - geo, lin])
    return np.unique(pooled[ranks])


def tradeoff_curve(
    mechanism: Callable[..., Any],
    d0: Any,
    d1: Any,
    *,
    samples: int,
    confidence: float = 0.95,
    seed: int | np.random.SeedSequence | None = None,
    thresholds: Sequence[float] | np.ndarray | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> TradeoffCurve:
    """Estimate the trade-off curve of a scalar-output mechanism with simultaneous confidence.

    Privacy:
        With probability at least ``confidence`` every band of the result holds at once, so
        the certified curve lies on or above the mechanism's trade-off function on
        ``(d0, d1)``, and ``epsilon_lower(delta)`` and ``mu_lower`` are below the
        mechanism's true epsilon at delta and GDP mu (for this pair; rounded down).

    Args:
        mechanism: ``mechanism(dataset, rng)`` returning a number (``.batch`` used if present).
        d0: first dataset.
        d1: its neighbour.
        samples: samples per dataset, an integer in [10, MAX_SAMPLES]; without
            ``thresholds``, 10% of them choose the thresholds and the rest are counted.
        confidence: simultaneous confidence of all bands, a float in (0, 1).
        seed: int, ``SeedSequence`` or None.
        thresholds: the thresholds (1-D, finite, at most 10,000); None chooses
            :data:`DEFAULT_THRESHOLDS` on separate samples.
        batch_size: samples per seeded batch, >= 1.

    Returns:
        A :class:`TradeoffCurve`.

    Raises:
        ValueError: on a parameter outside its range (the message names it), or outputs that
            are not single numbers.
        MechanismError: if the mechanism raises.
    """
    if (
        isinstance(samples, bool)
        or not isinstance(samples, (int, np.integer))
        or not (10 <= samples <= MAX_SAMPLES)
    ):
        raise ValueError(f"samples must be an integer in [10, {MAX_SAMPLES:.0e}], got {samples!r}")
    check_confidence(confidence)
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, (int, np.integer))
        or (batch_size < 1)
    ):
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as mechanism(dataset, rng), got {mechanism!r}")
    given = None
    if thresholds is not None:
        given = np.asarray(thresholds, dtype=float)
        if given.ndim != 1 or not 1 <= len(given) <= MAX_THRESHOLDS:
            raise ValueError(
                f"thresholds must be a 1-D sequence of 1 to {MAX_THRESHOLDS} numbers, got shape "
                f"{given.shape}"
            )
        if not np.all(np.isfinite(given)):
            raise ValueError("thresholds must be finite numbers, got a NaN or infinity")
        given = np.unique(given)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    n_sel = 0 if given is not None else max(1, int(samples * SELECTION_FRACTION))
    n = int(samples) - n_sel
    name = str(getattr(mechanism, "name", None) or getattr(mechanism, "__name__", "") or "")
    with Runner(mechanism, root, int(batch_size), 1, None, False, 2 * int(samples)) as runner:
        x0 = runner.sample(d0, min(n_sel or 10, n), (_SELECT, 0))
        if runner.output_schema.kind != "scalar":
            raise ValueError(
                "mechanism outputs must be single numbers for a trade-off curve, got "
                f"{runner.output_schema.kind} outputs"
            )
        if given is None:
            x1 = runner.sample(d1, n_sel, (_SELECT, 1))
            given = _choose_thresholds(x0[~np.isnan(x0)], x1[~np.isnan(x1)], DEFAULT_THRESHOLDS)
        events = [ThresholdEvent(Identity(), float(t), True) for t in given]
        ge0 = runner.count(d0, n, (_COUNT, 0), events)
        ge1 = runner.count(d1, n, (_COUNT, 1), events)
    # 4 one-sided bounds per threshold (two per dataset): Bonferroni
    level = (1.0 - confidence) / (4 * len(given))
    # one event per threshold and dataset: the complement's bounds are the same statement
    fpr = clopper_pearson(ge0, n, level)
    mirror_fnr = clopper_pearson(ge1, n, level)
    mirror_fpr = clopper_pearson(n - ge0, n, level)
    fnr = clopper_pearson(n - ge1, n, level)
    return TradeoffCurve(
        thresholds=given,
        fpr_lower=fpr[0],
        fpr_upper=fpr[1],
        fnr_lower=fnr[0],
        fnr_upper=fnr[1],
        mirror_fpr_lower=mirror_fpr[0],
        mirror_fpr_upper=mirror_fpr[1],
        mirror_fnr_lower=mirror_fnr[0],
        mirror_fnr_upper=mirror_fnr[1],
        samples=n,
        selection_samples=n_sel,
        confidence=confidence,
        level=level,
        mechanism=name,
    )
