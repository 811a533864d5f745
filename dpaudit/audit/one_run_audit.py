"""``audit_one_run``: audit a training algorithm from one run with m canaries.

Three certifications of the same run, each a sound lower bound under what it states:

* ``"steinke"`` -- Steinke, Nasr, Jagielski 2023 (Theorem 3.1; Theorem 5.2 / Corollary 5.4
  with delta), :mod:`dpaudit.audit.one_run`: the claim (epsilon, delta)-DP, any trainer;
* ``"f-dp"`` -- Mahloujifar, Melis, Chaudhuri 2025, :mod:`dpaudit.audit.one_run_fdp`: the
  claim as a trade-off curve, f_{eps,delta} (any trainer) or mu-GDP (a trainer that declares
  its claim Gaussian, ``claimed_tradeoff = "gaussian"``);
* ``"gaussian"`` -- the canary scores' own Gaussian shape, :mod:`dpaudit.audit.one_run_gauss`,
  valid under the assumption that the scores are independent Gaussians with one variance
  given the inclusion bits, which the trainer declares (``score_distribution = "gaussian"``).

``method="auto"`` (the default) takes the tightest that is sound for what the trainer
declares: with delta = 0, ``"steinke"`` (Theorem 3.1 is an exact binomial domination: on
randomized response it certified 0.001-0.005 more than the f-DP recursion at m = 10^2..10^5);
with delta > 0, ``"gaussian"`` when the trainer declares Gaussian scores, otherwise ``"f-dp"``
on its declared curve (mu-GDP when declared, else f_{eps,delta}: in bench/one_run.md it
certified within 0.001 of the theoretical-epsilon fraction of ``"steinke"`` at m <= 2000 and
more at every m >= 10^4 measured, where Theorem 5.2's delta term grows with m delta -- kept
in check by its prefix, :mod:`dpaudit.audit.one_run_subsets` -- while the recursion's delta
stays per canary).
The result's ``certified_by``, ``curve`` and ``assumption`` say which certified and on what.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from dpaudit.audit.limits import MAX_CANARIES
from dpaudit.audit.one_run import _accuracy, _certify, _check_level, one_run_theory
from dpaudit.audit.one_run_fdp import fdp_theta_lower
from dpaudit.audit.one_run_gauss import gaussian_diagnostics, gaussian_mu_lower
from dpaudit.audit.one_run_subsets import correct_counts, plan_candidates
from dpaudit.audit.result import AuditResult, _down
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import check_epsilon
from dpaudit.audit.validation import is_int as _is_int
from dpaudit.numeric.rounding import float_down

__all__ = ["CURVE_CHOICES", "METHODS", "OneRunAuditResult", "audit_one_run"]

#: The certifications ``audit_one_run`` offers (module docstring).
METHODS = ("auto", "steinke", "f-dp", "gaussian")
#: The curves ``"f-dp"`` may test (:data:`dpaudit.audit.one_run_fdp.CURVES`) or ``"auto"``.
CURVE_CHOICES = ("auto", "approx-dp", "gaussian")

_THEOREMS = {
    "steinke": "Steinke, Nasr, Jagielski 2023, Theorem 3.1",
    "steinke-delta": "Steinke, Nasr, Jagielski 2023, Theorem 5.2 / Corollary 5.4",
    "f-dp": "Mahloujifar, Melis, Chaudhuri 2025 (f-DP in one run; recursion re-derived in "
    "dpaudit.audit.one_run_fdp)",
    "gaussian": "Gaussian canary scores (after Agrawal et al. 2026; derivation in "
    "dpaudit.audit.one_run_gauss)",
}


@dataclass(frozen=True)
class OneRunAuditResult(AuditResult):
    """The result of :func:`audit_one_run`: an :class:`AuditResult` of one training run.

    The base fields read as follows: ``hits_d0`` is the number of correct guesses,
    ``samples_d0`` the number of guesses r, ``hits_d1`` the wrong ones (r - correct),
    ``tests`` the number of tests the confidence was split over (Bonferroni),
    ``samples_drawn`` 1 (one run), ``p_numerator_lower`` the accuracy q = e^eps/(1+e^eps) at
    ``epsilon_lower`` and ``p_denominator_upper`` its complement.

    Attributes:
        m: number of canaries.
        subset: the number m' of canaries (the first m') among which the certified guess
            was made (:mod:`dpaudit.audit.one_run_subsets`; m for ``"gaussian"``).
        guesses: ``(k_plus, k_minus)`` of the certified guess: among the first ``subset``
            canaries, the k+ highest scores guessed included, the k- lowest guessed excluded
            ((0, 0) for ``"gaussian"``, which uses every score).
        correct: correct guesses among them.
        included: number of canaries included in the run.
        candidates: every test tried: ``(m', k_plus, k_minus, correct, epsilon_lower)``
            (m' the prefix of canaries guessed among).
        certified_by: the certification that produced ``epsilon_lower``: ``"steinke"``,
            ``"f-dp"`` or ``"gaussian"``.
        curve: the trade-off curve tested by ``"f-dp"``: ``"approx-dp"`` (f_{eps,delta}) or
            ``"gaussian"`` (mu-GDP); ``""`` otherwise.
        mu_lower: the certified GDP parameter (``"gaussian"``, or ``"f-dp"`` on the mu-GDP
            curve; ``epsilon_lower`` is its epsilon at ``delta``, rounded down), else None.
        assumption: what the bound relies on besides the run (empty: nothing).
        diagnostics: ``"gaussian"`` only: p-values of normality and equal variance of the
            scores (evidence against the assumption when small).
    """

    m: int = 0
    subset: int = 0
    guesses: tuple[int, int] = (0, 0)
    correct: int = 0
    included: int = 0
    candidates: tuple[tuple[int, int, int, int, float], ...] = ()
    certified_by: str = "steinke"
    curve: str = ""
    mu_lower: float | None = None
    assumption: str = ""
    diagnostics: tuple[tuple[str, float], ...] = ()

    def theory(self, epsilon: float | None = None) -> float:
        """Steinke, Nasr, Jagielski's theory value beside the measured bound: the median
        bound a mechanism exactly ``epsilon``-DP (default: the claimed epsilon) certifies by
        their theorem with the same confidence, at the best of the tests tried
        (:func:`one_run_theory` with the same Bonferroni split, maximised over their prefix
        sizes m' and totals r = k+ + k-).  A value for ``"steinke"``; the other methods are
        measured against the claimed epsilon in bench/one_run.md."""
        eps = self.epsilon_claimed if epsilon is None else epsilon
        tests = {(size, kp + km) for size, kp, km, _, _ in self.candidates if kp + km > 0}
        return max(
            one_run_theory(
                eps, size, r, delta=self.delta, confidence=self.confidence, tests=self.tests
            )
            for size, r in sorted(tests or {(self.m, self.m)})
        )

    @property
    def theorem(self) -> str:
        """The result the certified bound rests on, in words."""
        if self.certified_by == "steinke":
            return _THEOREMS["steinke-delta" if self.delta > 0 else "steinke"]
        return _THEOREMS[self.certified_by]

    def __str__(self) -> str:
        kp, km = self.guesses
        r = kp + km
        mu = "" if self.mu_lower is None else f" (mu-GDP parameter >= {_down(self.mu_lower)})"
        lines = [
            f"one-run audit of {self.mechanism or 'training'}: {self.verdict}",
            f"  epsilon lower bound : {_down(self.epsilon_lower)} (certified, rounded down)" + mu,
            f"  epsilon estimate    : {self.epsilon_estimate:.4f} (point estimate, not a bound)",
            f"  claim               : epsilon={self.epsilon_claimed:g}, delta={self.delta:g}",
            f"  canaries            : m={self.m:,}, {self.included:,} included (probability 1/2)",
            (
                f"  guesses             : {kp:,} highest included, {km:,} lowest excluded "
                f"among the first {self.subset:,} canaries; {self.correct:,} of {r:,} correct"
                if r
                else "  guesses             : none (every score used)"
            ),
            f"  certified by        : {self.certified_by}"
            + (f" on the {self.curve} curve" if self.curve else ""),
            f"  confidence          : {self.confidence:.4g} ({self.correction})",
            f"  theorem             : {self.theorem}",
            *([f"  assumption          : {self.assumption}"] if self.assumption else []),
            *[f"  diagnostic          : {k} = {v:.3g}" for k, v in self.diagnostics],
            f"  seed                : {self.seed}",
            f"  wall time           : {self.wall_time:.2f} s",
        ]
        lines += [f"  warning             : {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["guesses"] = list(self.guesses)
        data["candidates"] = [list(c) for c in self.candidates]
        data["diagnostics"] = dict(self.diagnostics)
        return data


def audit_one_run(
    train: Callable[[np.ndarray, np.random.Generator], Any],
    m: int,
    *,
    epsilon: float,
    delta: float = 0.0,
    confidence: float = 0.95,
    seed: int | None = None,
    guesses: Iterable[tuple[int, int]] | None = None,
    subsets: Iterable[int] | None = None,
    name: str | None = None,
    method: str = "auto",
    curve: str = "auto",
) -> OneRunAuditResult:
    """Audit a training algorithm in one run with ``m`` canaries.

    Each canary is included independently with probability 1/2 (drawn from a generator
    seeded by ``seed``); ``train(included, rng)`` gets the boolean mask and a generator of
    its own, trains once, and returns one score per canary (higher = more likely included).
    For ``"steinke"`` and ``"f-dp"``, for each prefix size m' in ``subsets`` and each
    ``(k_plus, k_minus)`` in ``guesses`` the k+ highest scores among the first m' canaries
    are guessed included and the k- lowest excluded (ties broken by canary index: a function
    of the output only), the correct guesses are counted and certified with m' canaries at
    level ``(1 - confidence) / T`` (T the number of (m', k+, k-) tried); the largest certified
    bound is returned.  A prefix keeps Steinke et al.'s bound from falling as m grows, where
    its delta term grows with m (soundness and measurements:
    :mod:`dpaudit.audit.one_run_subsets`).
    ``"gaussian"`` uses every score once (one test).

    The trainer may declare (as attributes) ``claimed_tradeoff = "gaussian"`` (its claim is
    mu-GDP, with eps_GDP(mu, delta) = ``epsilon``) and ``score_distribution = "gaussian"``
    (given the mask, its scores are independent Gaussians with one variance); ``method`` and
    ``curve`` ``"auto"`` follow these declarations (module docstring).

    Privacy: if ``train`` satisfies the claim the certification tests -- (epsilon', delta)-DP
    with respect to adding or removing one canary (``"steinke"``, ``"f-dp"`` on
    ``"approx-dp"``), mu'-GDP (``"f-dp"`` on ``"gaussian"``: ``epsilon_lower`` is
    eps_GDP(mu_lower, delta)), or with Gaussian scores (``"gaussian"``, any trainer
    satisfying the assumption) -- then ``epsilon_lower <= epsilon'`` with probability at
    least ``confidence``; so a claimed ``epsilon`` is flagged (``violation``) wrongly with
    probability at most ``1 - confidence``.

    Args:
        train: callable ``train(included, rng)`` returning m finite scores.
        m: number of canaries, an integer in [1, 10^7]
            (:data:`dpaudit.audit.limits.MAX_CANARIES`).
        epsilon: the claimed epsilon, >= 0.
        delta: the claimed delta, in [0, 1); the bound is certified at this delta.
        confidence: family-wise confidence, in (0, 1).
        seed: seed of the root ``SeedSequence`` (None: fresh entropy, reported in the result).
        guesses: the ``(k_plus, k_minus)`` counts to try, fixed before the run, each with
            k+ + k- in [1, m], each tried on every prefix it fits; default
            :func:`~dpaudit.audit.one_run.default_guesses` of each prefix size.
        subsets: the prefix sizes m' to guess among, each in [1, m], fixed before the run
            (several: a union bound over all); default
            :func:`~dpaudit.audit.one_run_subsets.default_subsets` when ``guesses`` is None
            (``"steinke"`` with delta > 0: the first min(m, M) canaries, M = 10^4 at delta
            1e-5; otherwise all m), else ``(m,)``.
        name: the trainer's name in the result (default: its ``name`` or ``__name__``).
        method: ``"auto"``, ``"steinke"``, ``"f-dp"`` or ``"gaussian"``.
        curve: for ``"f-dp"``: ``"auto"``, ``"approx-dp"`` or ``"gaussian"``.

    Returns:
        A :class:`OneRunAuditResult`.

    Raises:
        TypeError: if ``train`` is not callable, ``m`` or a guess count is not an integer,
            or ``train`` returns something that is not an array of numbers.
        ValueError: on a parameter outside its range (``m`` above
            :data:`dpaudit.audit.limits.MAX_CANARIES` included), ``"gaussian"`` (method or
            curve) with delta = 0, or scores that are not m finite numbers (the message
            names the parameter, its range and the value).
    """
    start = time.perf_counter()
    if not callable(train):
        raise TypeError(f"train must be callable as train(included, rng), got {train!r}")
    # one documented limit (dpaudit.audit.limits.MAX_CANARIES), checked before anything is
    # allocated: m = 10**12 was a MemoryError
    m_range = f"an integer in [1, {MAX_CANARIES:,}] (about 40 bytes a canary in memory)"
    if not _is_int(m):
        raise TypeError(f"m must be {m_range}, got {m!r}")
    _check("m", m, 1 <= m <= MAX_CANARIES, m_range)
    check_epsilon(epsilon)
    _check("method", method, method in METHODS, f"one of {', '.join(METHODS)}")
    _check("curve", curve, curve in CURVE_CHOICES, f"one of {', '.join(CURVE_CHOICES)}")
    _check_level(delta, confidence, 1)
    if seed is not None and not (_is_int(seed) and seed >= 0):
        raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")
    method, curve = _resolve(train, float(delta), method, curve)
    candidates = plan_candidates(m, float(delta), method, guesses, subsets)

    root = np.random.SeedSequence(seed)
    mask_seq, train_seq = root.spawn(2)
    included = np.random.default_rng(mask_seq).random(m) < 0.5
    scores = _check_scores(train(included.copy(), np.random.default_rng(train_seq)), m)
    if method == "gaussian":
        fields = _gaussian(scores, included, float(delta), 1.0 - float(confidence))
    else:
        fields = _counting(scores, included, candidates, method, curve, float(delta), confidence)

    eps_lower = fields["epsilon_lower"]
    q_lower = _accuracy(eps_lower)
    kp, km = fields["guesses"]
    subset = fields.pop("subset")
    return OneRunAuditResult(
        epsilon_claimed=float(epsilon),
        delta=float(delta),
        violation=eps_lower > epsilon,
        event=(
            f"guess included for the {kp} highest scores, excluded for the {km} lowest, "
            f"among the first {subset} canaries"
            if kp + km
            else "the mean score of included canaries against excluded ones"
        ),
        direction="higher score = included",
        pair=f"{m} canaries, each included with probability 1/2",
        hits_d0=fields["correct"],
        hits_d1=kp + km - fields["correct"],
        samples_d0=kp + km,
        p_numerator_lower=q_lower,
        p_denominator_upper=1.0 - q_lower,
        confidence=float(confidence),
        seed=int(root.entropy),  # type: ignore[arg-type]
        selection_samples=0,
        pairs_searched=1,
        wall_time=time.perf_counter() - start,
        method="one-run",
        mechanism=name or _name(train),
        family="top/bottom scores" if kp + km else "mean difference",
        samples_drawn=1,
        m=m,
        included=int(included.sum()),
        **{k: v for k, v in fields.items() if k != "guesses"},
        guesses=(kp, km),
        subset=subset,
    )


def _resolve(train: Any, delta: float, method: str, curve: str) -> tuple[str, str]:
    """The method and curve to certify with (module docstring), refusing a Gaussian one
    with delta = 0 (a mu-GDP mechanism with mu > 0 is (eps, 0)-DP for no finite eps)."""
    gaussian_scores = getattr(train, "score_distribution", None) == "gaussian"
    gaussian_claim = getattr(train, "claimed_tradeoff", None) == "gaussian"
    if method == "auto":
        method = ("gaussian" if gaussian_scores else "f-dp") if delta > 0 else "steinke"
    if curve == "auto":
        curve = "gaussian" if gaussian_claim and delta > 0 else "approx-dp"
    if delta == 0 and (method == "gaussian" or (method == "f-dp" and curve == "gaussian")):
        raise ValueError(
            "delta must be > 0 for a Gaussian certification (method or curve 'gaussian'): "
            "a mu-GDP mechanism is (epsilon, 0)-DP for no finite epsilon, got delta=0.0"
        )
    return method, ("" if method != "f-dp" else curve)


@functools.lru_cache(maxsize=1024)
def _gdp_epsilon_down(mu: float, delta: float) -> float:
    """eps_GDP(mu, delta) rounded down (the theorems layer certifies it by intervals)."""
    if mu <= 0.0:
        return 0.0
    from dpaudit.theorems.primitives import gdp_epsilon

    lower, _ = gdp_epsilon(sympy.Rational(mu), sympy.Rational(delta))
    return max(0.0, float_down(lower))


def _gaussian(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float) -> dict:
    mu = gaussian_mu_lower(scores, included, alpha)
    return {
        "epsilon_lower": _gdp_epsilon_down(mu, delta),
        "epsilon_estimate": _gdp_epsilon_estimate(scores, included, delta),
        "guesses": (0, 0),
        "subset": len(scores),
        "correct": 0,
        "candidates": (),
        "tests": 1,
        "correction": "one test (every score used once)",
        "certified_by": "gaussian",
        "curve": "",
        "mu_lower": mu,
        "assumption": "given the inclusion bits, the scores are independent Gaussians with one "
        "variance (declared by the trainer: score_distribution = 'gaussian')",
        "diagnostics": tuple(gaussian_diagnostics(scores, included).items()),
    }


def _gdp_epsilon_estimate(scores: np.ndarray, included: np.ndarray, delta: float) -> float:
    """Point estimate eps_GDP(d, delta), d = mean difference / pooled standard deviation."""
    from dpaudit.theorems.primitives import _gdp_epsilon_guess

    n1, n0 = int(included.sum()), int((~included).sum())
    if n1 < 2 or n0 < 2:
        return 0.0
    diff = float(scores[included].mean() - scores[~included].mean())
    if diff <= 0:
        return 0.0
    pooled = float(np.var(scores[included]) * n1 + np.var(scores[~included]) * n0) / (n1 + n0 - 2)
    if pooled <= 0:
        return math.inf
    return _gdp_epsilon_guess(diff / math.sqrt(pooled), delta) or 0.0


def _counting(
    scores: np.ndarray,
    included: np.ndarray,
    candidates: list[tuple[int, int, int]],
    method: str,
    curve: str,
    delta: float,
    confidence: float,
) -> dict:
    # each (m', k+, k-) certified with m' canaries (dpaudit.audit.one_run_subsets)
    level = (1.0 - confidence) / len(candidates)
    tried = []
    counts = correct_counts(scores, included, candidates)
    for (size, kp, km), v in zip(candidates, counts, strict=True):
        if method == "steinke":
            theta = _certify(size, kp + km, v, delta, level)
        else:
            theta = fdp_theta_lower(size, kp + km, v, level, curve, delta)
        tried.append((size, kp, km, v, theta))
    # the largest bound; among equal bounds (e.g. all 0) the largest excess over chance
    size, kp, km, v, theta = max(tried, key=lambda c: (c[4], c[3] - (c[1] + c[2]) / 2))
    gdp = curve == "gaussian"
    if gdp:  # each candidate's mu as an epsilon at delta: that of mu rounded down to 0.01
        tried = [(*c[:4], _gdp_epsilon_down(math.floor(c[4] * 100) / 100, delta)) for c in tried]
    r = kp + km
    estimate = math.inf if v == r else (math.log(v / (r - v)) if v > 0 else -math.inf)
    theorem = "f-DP recursion" if method == "f-dp" else "binomial"
    return {
        "epsilon_lower": _gdp_epsilon_down(theta, delta) if gdp else theta,
        "epsilon_estimate": max(0.0, estimate),
        "guesses": (kp, km),
        "subset": size,
        "correct": v,
        "candidates": tuple(tried),
        "tests": len(candidates),
        "correction": f"Bonferroni over {len(candidates)} (prefix, guess count) tests ({theorem})",
        "certified_by": method,
        "curve": curve,
        "mu_lower": theta if gdp else None,
        "assumption": "the claim is mu-GDP (declared by the trainer: claimed_tradeoff = 'gaussian')"
        if gdp
        else "",
        "diagnostics": (),
    }


def _check_scores(scores: Any, m: int) -> np.ndarray:
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"train must return an array of m = {m} numbers, got {type(scores).__name__}"
        ) from exc
    if arr.shape != (m,):
        raise ValueError(f"train must return m = {m} scores (shape ({m},)), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"train must return finite scores, got {float(arr[bad])!r} for canary {bad}"
        )
    return arr


def _name(train: Any) -> str:
    return str(
        getattr(train, "name", None) or getattr(train, "__name__", None) or type(train).__name__
    )
