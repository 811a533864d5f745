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

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_SAMPLES",
    "DEFAULT_SEED",
    "FLOAT_HINT",
    "assert_delta_at_most",
    "assert_private",
]

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
    __tracebackhide__ = True  # pytest shows the verdict, not this function's source
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
            f" (false-alarm rate <= {1 - confidence:.3g}):\n{result}" + _float_hint(result)
        )
    return result


#: What a violation found only in the outputs' floating-point bit patterns means, and how to
#: state a claim about real numbers instead (the event family ``bits``,
#: :mod:`dpaudit.audit.float_bits`).
FLOAT_HINT = (
    "\nThe violation is in the bit patterns of the outputs as the code computes them in "
    "floating point (event family 'bits'; Mironov 2012): the code as it runs in doubles is "
    "not private. If the claim is about the mechanism in real arithmetic, say so: set "
    '`arithmetic = "real"` on the mechanism (or pass arithmetic="real"); to make the '
    "floating-point code private, see docs/floating-point.md."
)


def _float_hint(result: AuditResult) -> str:
    """:data:`FLOAT_HINT` when the certified event is a floating-point bit-pattern event."""
    return FLOAT_HINT if getattr(result, "family", "") == "bits" else ""


def assert_delta_at_most(event: Any, *, epsilon: Any, delta: Any) -> Any:
    """Fail unless the accountant proves ``event`` (epsilon, delta)-DP, read as delta at epsilon.

    Deterministic (no sampling): the certified upper bound on the smallest delta at
    ``epsilon`` (:meth:`dpaudit.accountant.Accountant.delta_for_epsilon`) must be at most
    ``delta``.

    Privacy:
        Passing is a proof (under the accountant's theorems) that the described event is
        (epsilon, delta)-DP. Failing says the accountant cannot prove it; the message says
        whether the claim is refuted (the certified *lower* bound on delta exceeds it).

    Args:
        event: an event, or an event expression such as ``"SelfComposed(Laplace(10), 100)"``.
        epsilon: the claimed epsilon (a number >= 0).
        delta: the claimed delta (a number in [0, 1]).

    Returns:
        The :class:`dpaudit.accountant.DeltaGuarantee`.

    Raises:
        AssertionError: when the upper bound on delta exceeds the claim.
        ValueError: for a malformed event, epsilon or delta.
    """
    __tracebackhide__ = True
    from dpaudit.accountant import Accountant
    from dpaudit.numeric import exact
    from dpaudit.parse import parse_event

    if isinstance(event, str):
        event = parse_event(event)
    claimed = exact(delta, "delta")
    if claimed.free_symbols or not 0 <= claimed <= 1:
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")
    bounds = Accountant().delta_for_epsilon(event, epsilon)
    if bounds.delta_upper > claimed:
        refuted = bounds.delta_lower > claimed
        raise AssertionError(
            f"{event} is {'NOT' if refuted else 'not proved'} ({epsilon}, {delta})-DP: "
            f"delta at epsilon {epsilon} is in [{bounds.delta_lower:.6g}, "
            f"{bounds.delta_upper:.6g}]"
            + (" (the certified lower bound exceeds the claim)" if refuted else "")
        )
    return bounds
