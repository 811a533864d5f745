"""pytest plugin: privacy claims as test assertions in a user's own CI.

Installed with dpaudit (entry point ``pytest11``), so in any test suite::

    from dpaudit.pytest_plugin import assert_claim_verified, assert_private

    def test_my_mechanism_is_private(dpaudit_seed):
        assert_private(my_mechanism, d0, d1, epsilon=1.0, samples=200_000, seed=dpaudit_seed)

    def test_my_plan_meets_its_claim():
        assert_claim_verified(plan=my_plan(), epsilon=1.0, delta=1e-6)

or through the ``privacy`` fixture, whose methods use the session's seed by default::

    def test_private(privacy):
        privacy.assert_private(my_mechanism, d0, d1, epsilon=1.0, samples=200_000)

``assert_private`` is :func:`dpaudit.testing.assert_private` (confidence 0.99 by default).
Options: ``--dpaudit-seed N`` (default 0) sets the seed the fixtures hand out; a privacy test
is deterministic under its seed, and a correct mechanism fails it with probability at most
``1 - confidence`` over the choice of seed (the auditor's bound is certified at that
confidence), so with a fixed seed it either always passes or always fails.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dpaudit.testing import DEFAULT_CONFIDENCE, assert_delta_at_most, assert_private

__all__ = [
    "DEFAULT_CONFIDENCE",
    "ClaimUndecidedError",
    "PrivacyAssertions",
    "assert_claim_verified",
    "assert_delta_at_most",
    "assert_private",
]


class ClaimUndecidedError(AssertionError):
    """The verifier neither proved nor refuted a claim within its budgets (the verdict
    "unknown"): a failing assertion of its own kind, not a pass.  ``dpaudit verify`` exits 4
    on the same outcome.  Catch it (``pytest.raises(ClaimUndecidedError)``) or pass
    ``allow_unknown=True`` to accept an open question explicitly."""


def assert_claim_verified(
    claim: Any = None,
    *,
    plan: Any = None,
    epsilon: Any = None,
    delta: Any = 0,
    domain: Any = None,
    allow_unknown: bool = False,
    time_limit: float = 20.0,
    max_boxes: int = 4000,
) -> Any:
    """Fail unless the verifier proves a privacy claim (over its whole domain).

    Give a :class:`dpaudit.verify.Claim`, a registered claim key, or ``plan=``, ``epsilon=``
    (and ``delta=``, ``domain=``) to state one inline: "``plan`` is (epsilon, delta)-DP for
    every point of ``domain``" (the plan may be symbolic in the domain's parameters).

    Args:
        claim: a Claim or a registered key (or None with ``plan``).
        plan: the declared event tree.
        epsilon: the claimed epsilon (expression or number).
        delta: the claimed delta.
        domain: a :class:`dpaudit.verify.Domain` or its text (``"0 < eps <= 1"``); default:
            no parameters.
        allow_unknown: also pass when the verifier can neither prove nor refute (an explicit
            choice: by default an undecided claim fails, with :class:`ClaimUndecidedError`).
        time_limit: CPU-seconds safety net per inequality (the box and work budgets decide
            the verdict, so a CI run gives the same answer on any machine).
        max_boxes: branch-and-bound budget per inequality.

    Returns:
        The :class:`dpaudit.verify.prove.ClaimVerdict`.

    Raises:
        AssertionError: when the claim is refuted (with the counterexample).
        ClaimUndecidedError: (an AssertionError) when it is neither proved nor refuted within
            the budgets, unless ``allow_unknown``; the message says what was left and how to
            give the verifier more room.
        ValueError: when neither a claim nor a plan with an epsilon is given.
    """
    __tracebackhide__ = True  # pytest shows the verdict, not this function's source
    from dpaudit.verify import Claim, Domain, get_claim, load_claim_modules
    from dpaudit.verify.prove import verify_claim

    if isinstance(claim, str):
        load_claim_modules()
        claim = get_claim(claim)
    elif claim is None:
        if plan is None or epsilon is None:
            raise ValueError("give a Claim, a registered claim key, or plan= and epsilon=")
        if domain is None:
            domain = Domain({})
        elif isinstance(domain, str):
            domain = Domain.parse(domain)
        claim = Claim(
            key="test/inline",
            document="test",
            theorem="inline claim",
            statement=f"{plan} is ({epsilon}, {delta})-DP",
            plan=plan,
            epsilon=epsilon,
            delta=delta,
            domain=domain,
        )
    v = verify_claim(claim, time_limit=time_limit, max_boxes=max_boxes)
    if v.status == "proved" or (allow_unknown and v.status == "unknown"):
        return v
    if v.status == "unknown":
        raise ClaimUndecidedError(
            f"claim {claim.key} ({claim.statement}) is undecided: neither proved nor refuted "
            f"(max_boxes={max_boxes}, time_limit={time_limit:g} s): {v.detail}. Not a pass: "
            "give the verifier more room (max_boxes, time_limit), split the domain, state a "
            "certified lower bound to refute it, or accept the open question with "
            "allow_unknown=True"
        )
    raise AssertionError(f"claim {claim.key} ({claim.statement}) is {v.status}: {v.detail}")


@dataclasses.dataclass(frozen=True)
class PrivacyAssertions:
    """The ``privacy`` fixture: the assertions with the session's seed as default."""

    seed: int

    def assert_private(self, mechanism: Any, d0: Any = None, d1: Any = None, **kwargs: Any) -> Any:
        """:func:`dpaudit.testing.assert_private` with ``seed`` defaulting to the session's
        seed."""
        __tracebackhide__ = True
        kwargs.setdefault("seed", self.seed)
        return assert_private(mechanism, d0, d1, **kwargs)

    def assert_claim_verified(self, claim: Any = None, **kwargs: Any) -> Any:
        """:func:`assert_claim_verified`."""
        __tracebackhide__ = True
        return assert_claim_verified(claim, **kwargs)

    def assert_delta_at_most(self, event: Any, **kwargs: Any) -> Any:
        """:func:`dpaudit.testing.assert_delta_at_most` (deterministic: no seed)."""
        __tracebackhide__ = True
        return assert_delta_at_most(event, **kwargs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--dpaudit-seed``."""
    group = parser.getgroup("dpaudit", "privacy assertions (dpaudit)")
    group.addoption(
        "--dpaudit-seed",
        type=int,
        default=0,
        help="seed handed to privacy tests by the dpaudit_seed/privacy fixtures (default 0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``privacy`` marker."""
    config.addinivalue_line("markers", "privacy: a privacy-claim test (dpaudit)")


@pytest.fixture
def dpaudit_seed(request: pytest.FixtureRequest) -> int:
    """The seed for privacy tests (``--dpaudit-seed``, default 0)."""
    return int(request.config.getoption("--dpaudit-seed"))


@pytest.fixture
def privacy(dpaudit_seed: int) -> PrivacyAssertions:
    """``privacy.assert_private(...)`` and ``privacy.assert_claim_verified(...)``."""
    return PrivacyAssertions(dpaudit_seed)
