"""Exact privacy loss of finite-output mechanisms, and a check of their samplers.

A mechanism whose output probabilities can be computed offers
``mechanism.probabilities(dataset) -> {outcome: probability}`` (e.g. the exponential mechanism
over a finite set, randomized response). For a pair (d0, d1) the exact epsilon at ``delta`` is

    eps(delta) = max over events E and both directions of ln((P[E] - delta) / Q[E]),

and by the Neyman-Pearson lemma the maximum is attained by a prefix of the outcomes ordered by
likelihood ratio (if E is optimal with ratio r, adding an outcome of ratio > r or removing one
of ratio < r would improve it). This is the quantity the Monte Carlo auditor bounds from below,
so :func:`exact_audit` gives the value a perfect auditor would certify on that pair, and
:func:`check_sampler` tests that the sampled outputs follow the computed probabilities.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from dpaudit.audit.batches import draw
from dpaudit.audit.events import OutcomeSetEvent
from dpaudit.audit.outputs import OutputSchema, to_array
from dpaudit.audit.pairs import NeighbouringPair, resolve_pairs
from dpaudit.audit.result import AuditResult
from dpaudit.audit.validation import check_confidence, check_delta, check_epsilon
from dpaudit.deferred_imports import scipy_stats
from dpaudit.numeric import mp_precision, mpf_to_float

__all__ = ["SamplerCheck", "check_sampler", "exact_audit", "exact_epsilon"]

#: Working precision (bits) of the exact computation.
PRECISION = 200
#: Outcomes with expected count below this are pooled in the chi-square test.
MIN_EXPECTED = 5.0


def _validated(probs: Mapping[Hashable, float], name: str) -> dict[Hashable, Any]:
    total = mpmath.fsum(mpmath.mpf(float(p)) for p in probs.values())
    if any(float(p) < 0 for p in probs.values()) or abs(total - 1) > 1e-9:
        raise ValueError(
            f"{name} must be probabilities >= 0 summing to 1, got a total of {float(total)!r}"
        )
    return {o: mpmath.mpf(float(p)) for o, p in probs.items()}


def _best_prefix(p: dict, q: dict, delta: float) -> tuple[Any, tuple[Hashable, ...]]:
    """max over likelihood-ratio prefixes of ln((P - delta)/Q), and the maximising set."""
    outcomes = set(p) | set(q)
    zero = mpmath.mpf(0)

    def ratio(o: Hashable) -> Any:
        qo, po = q.get(o, zero), p.get(o, zero)
        return mpmath.inf if qo == 0 and po > 0 else (po / qo if qo > 0 else zero)

    order = sorted(outcomes, key=lambda o: (-ratio(o), -p.get(o, zero)))
    best, best_set, P, Q = mpmath.mpf(-1), (), zero, zero
    for i, o in enumerate(order):
        P += p.get(o, zero)
        Q += q.get(o, zero)
        if P - delta <= 0:
            continue
        value = mpmath.inf if Q == 0 else mpmath.log((P - delta) / Q)
        if value > best:
            best, best_set = value, tuple(order[: i + 1])
    return best, best_set


def exact_epsilon(
    p: Mapping[Hashable, float], q: Mapping[Hashable, float], delta: float = 0.0
) -> float:
    """The exact epsilon at ``delta`` between two output distributions, both directions.

    Args:
        p: output probabilities on d0.
        q: output probabilities on d1.
        delta: in [0, 1).

    Returns:
        The epsilon, rounded down (it is a lower bound on the mechanism's epsilon over all
        neighbours); ``inf`` when an outcome has probability above ``delta`` on one side only.

    Raises:
        ValueError: if ``p`` or ``q`` is not a distribution or ``delta`` is outside [0, 1).
    """
    return _exact(p, q, delta)[0]


def _exact(p: Mapping, q: Mapping, delta: float) -> tuple[float, tuple, str]:
    check_delta(delta)
    with mp_precision(PRECISION):
        pp, qq = _validated(p, "p"), _validated(q, "q")
        forward = _best_prefix(pp, qq, delta)
        backward = _best_prefix(qq, pp, delta)
        value, event, direction = max(
            (forward[0], forward[1], "P[M(d0) in E] / P[M(d1) in E]"),
            (backward[0], backward[1], "P[M(d1) in E] / P[M(d0) in E]"),
            key=lambda t: t[0],
        )
        eps = math.inf if value == mpmath.inf else max(0.0, mpf_to_float(value, "down"))
    return eps, event, direction


def exact_audit(
    mechanism: Any,
    d0: Any = None,
    d1: Any = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    pairs: Iterable[NeighbouringPair | Sequence[Any]] | None = None,
) -> AuditResult:
    """Audit with exact output probabilities instead of samples.

    Privacy:
        The result's ``epsilon_lower`` is the exact privacy loss of the best event on the worst
        of the given pairs (rounded down), a lower bound on the mechanism's epsilon with no
        sampling error: ``violation`` is then a proof that the claim is false (for the
        probabilities the mechanism reports; use :func:`check_sampler` to tie them to its
        sampler).

    Args:
        mechanism: offers ``probabilities(dataset) -> {outcome: probability}``.
        d0: first dataset (None with ``pairs``).
        d1: its neighbour.
        epsilon: the claimed epsilon (>= 0).
        delta: the claimed delta, in [0, 1).
        pairs: further pairs; the worst is reported.

    Returns:
        An :class:`AuditResult` with ``method="exact"`` (counts are 0, confidence 1).

    Raises:
        ValueError: if the mechanism has no ``probabilities`` method or a parameter is invalid.
    """
    if not callable(getattr(mechanism, "probabilities", None)):
        raise ValueError(
            "mechanism must offer probabilities(dataset) -> {outcome: probability} for an"
            f" exact audit, got {type(mechanism).__name__} without it"
        )
    check_epsilon(epsilon)
    start = time.perf_counter()
    candidates = resolve_pairs(d0, d1, pairs)
    best: tuple[tuple[float, tuple, str], NeighbouringPair] | None = None
    for pair in candidates:
        found = _exact(mechanism.probabilities(pair.d0), mechanism.probabilities(pair.d1), delta)
        if best is None or found[0] > best[0][0]:
            best = (found, pair)
    assert best is not None  # resolve_pairs returns at least one pair
    (eps, event, direction), pair = best
    schema = OutputSchema("categorical")
    return AuditResult(
        epsilon_lower=eps,
        epsilon_estimate=eps,
        epsilon_claimed=float(epsilon),
        delta=float(delta),
        violation=eps > epsilon,
        event=OutcomeSetEvent(tuple(event), schema).describe(),
        direction=direction,
        pair=pair.describe(),
        hits_d0=0,
        hits_d1=0,
        samples_d0=0,
        p_numerator_lower=math.nan,
        p_denominator_upper=math.nan,
        confidence=1.0,
        tests=0,
        correction="none (exact probabilities)",
        seed=None,
        selection_samples=0,
        pairs_searched=len(candidates),
        wall_time=time.perf_counter() - start,
        method="exact",
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)),
        family="exact",
    )


@dataclass(frozen=True)
class SamplerCheck:
    """Chi-square goodness of fit of a sampler to its exact probabilities.

    Attributes:
        p_value: the test's p-value.
        passed: ``p_value >= 1 - confidence`` (a correct sampler fails with probability
            ``1 - confidence``).
        samples: number of outputs drawn.
        observed: counts per outcome (pooled rare outcomes under ``"other"``).
        expected: expected counts per outcome.
    """

    p_value: float
    passed: bool
    samples: int
    observed: dict
    expected: dict


def check_sampler(
    mechanism: Any,
    dataset: Any,
    *,
    samples: int,
    confidence: float = 0.99,
    seed: int | None = None,
) -> SamplerCheck:
    """Test that ``mechanism``'s sampled outputs follow its ``probabilities(dataset)``.

    Args:
        mechanism: a mechanism with ``probabilities`` (and optionally ``batch``).
        dataset: the dataset.
        samples: outputs to draw, >= 1.
        confidence: a correct sampler passes with this probability, in (0, 1).
        seed: seed of the draw.

    Returns:
        A :class:`SamplerCheck`.

    Raises:
        ValueError: on invalid parameters or outputs outside the declared support.
    """
    if not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be an integer >= 1, got {samples!r}")
    check_confidence(confidence)
    probs = dict(mechanism.probabilities(dataset))
    raw = draw(mechanism, dataset, samples, np.random.SeedSequence(seed))
    outputs = to_array(raw, OutputSchema("categorical"))
    observed = {o: 0 for o in probs}
    for o in outputs:
        key = o.item() if isinstance(o, np.generic) else o
        if key not in observed:
            raise ValueError(f"mechanism produced {key!r}, which probabilities() gives no mass")
        observed[key] += 1
    expected = {o: p * samples for o, p in probs.items()}
    obs: dict[Hashable, int] = {}
    exp: dict[Hashable, float] = {}
    for o in probs:
        key = o if expected[o] >= MIN_EXPECTED else "other"
        obs[key] = obs.get(key, 0) + observed[o]
        exp[key] = exp.get(key, 0.0) + expected[o]
    f_obs = np.array(list(obs.values()), dtype=float)
    f_exp = np.array(list(exp.values()), dtype=float)
    f_exp *= f_obs.sum() / f_exp.sum()
    p_value = 1.0 if len(f_obs) < 2 else float(scipy_stats.chisquare(f_obs, f_exp).pvalue)
    return SamplerCheck(p_value, p_value >= 1 - confidence, samples, obs, exp)
