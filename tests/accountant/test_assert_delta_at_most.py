"""The pytest helper assert_delta_at_most: passes on a proved claim, fails on the others."""

from __future__ import annotations

import pytest

from dpaudit.events import Gaussian, SelfComposed
from dpaudit.pytest_plugin import PrivacyAssertions, assert_delta_at_most

# Balle-Wang at mu = sqrt(50)/10, eps = 2: delta = 0.00126011693...
TRUE_DELTA = 0.0012601169324970846


def test_passes_when_the_upper_bound_is_within_the_claim():
    b = assert_delta_at_most(SelfComposed(Gaussian(10), 50), epsilon=2, delta=TRUE_DELTA * 1.001)
    assert b.delta_upper <= TRUE_DELTA * 1.001


def test_fails_and_says_refuted_below_the_certified_lower_bound():
    with pytest.raises(AssertionError, match=r"is NOT \(2, .*certified lower bound exceeds"):
        assert_delta_at_most(SelfComposed(Gaussian(10), 50), epsilon=2, delta=TRUE_DELTA * 0.999)


def test_fails_as_not_proved_when_only_an_upper_bound_exists():
    # a declared zCDP mechanism: conversions give upper bounds only
    with pytest.raises(AssertionError, match=r"not proved .* in \[0, "):
        assert_delta_at_most("ZCDP(0.5)", epsilon=1, delta=1e-9)


def test_fixture_method_and_expression_text():
    PrivacyAssertions(seed=0).assert_delta_at_most("Laplace(1)", epsilon=1, delta=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 1, "delta": 2}, r"delta must be a number in \[0, 1\], got 2"),
        ({"epsilon": -1, "delta": 0.1}, r"epsilon must be a number >= 0, got -1"),
    ],
)
def test_bad_claims_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        assert_delta_at_most("Laplace(1)", **kwargs)
