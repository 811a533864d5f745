"""Privacy claims as test assertions, for a user's own pytest suite.

    from dpaudit.testing import assert_private

    def test_my_count_is_private():
        assert_private(my_count, [1, 0, 1], [1, 0], epsilon=1.0)

The assertion runs :func:`dpaudit.audit.audit` with a fixed seed, so it is deterministic: the
same code gives the same verdict on every CI run. Its false-alarm rate is stated: a mechanism
that really is (epsilon, delta)-DP fails it with probability at most ``1 - confidence`` over
the choice of seed (0.01 by default), and for a given seed either always or never.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dpaudit.audit import AuditResult, NeighbouringPair, audit

__all__ = ["DEFAULT_CONFIDENCE", "DEFAULT_SAMPLES", "DEFAULT_SEED", "assert_private"]

#: Samples per dataset: enough to flag an epsilon too small by a factor 1.5 on simple
#: mechanisms within a few seconds.
DEFAULT_SAMPLES = 200_000
#: Confidence of the audit: a correct mechanism fails with probability at most 0.01.
DEFAULT_CONFIDENCE = 0.99
#: Seed of the audit (fixed: CI must be deterministic).
DEFAULT_SEED = 0


def assert_private(
    mechanism: Callable[..., Any],
    d0: Any = None,
    d1: Any = None,
    epsilon: float | None = None,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    pairs: Iterable[NeighbouringPair | Sequence[Any]] | None = None,
    **options: Any,
) -> AuditResult:
    """Fail (``AssertionError``) when an audit certifies more epsilon than claimed.

    Privacy:
        Passing is not a proof of privacy: the audit gives a lower bound. Failing is evidence
        at ``confidence``: the mechanism's code is not (epsilon, delta)-DP on the given
        neighbouring pair(s), unless a 1 - ``confidence`` chance event happened for this seed.

    Args:
        mechanism: ``mechanism(dataset, rng)``, optionally with ``.batch(dataset, n, rng)``.
        d0: first dataset (None with ``pairs``).
        d1: its neighbour.
        epsilon: the claimed epsilon (required).
        delta: the claimed delta.
        samples: samples per dataset.
        confidence: confidence of the audit; the false-alarm rate is ``1 - confidence``.
        seed: seed of the audit (the default keeps CI deterministic).
        pairs: further neighbouring pairs to search.
        **options: passed to :func:`dpaudit.audit.audit` (``workers``, ``families``, ...).

    Returns:
        The :class:`dpaudit.audit.AuditResult` when no violation is found.

    Raises:
        AssertionError: with the audit summary, on a certified violation.
        ValueError: on invalid parameters (e.g. ``epsilon`` missing).
    """
    if epsilon is None:
        raise ValueError("epsilon must be given (the claimed epsilon, a number >= 0), got None")
    result = audit(
        mechanism,
        d0,
        d1,
        epsilon=epsilon,
        delta=delta,
        samples=samples,
        confidence=confidence,
        seed=seed,
        pairs=pairs,
        **options,
    )
    if result.violation:
        raise AssertionError(
            f"privacy claim refuted at confidence {confidence:g}"
            f" (false-alarm rate <= {1 - confidence:.3g}):\n{result}"
        )
    return result
