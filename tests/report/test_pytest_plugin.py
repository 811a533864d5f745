"""The pytest plugin, exercised the way a user's project uses it (pytester runs a small
test suite in a temporary directory, with the plugin loaded through its entry point)."""

from __future__ import annotations

import pytest

import dpaudit.events as ev
from dpaudit.pytest_plugin import ClaimUndecidedError, assert_claim_verified, assert_private
from mechanisms.broken import BrokenLaplaceTooLittleNoise
from mechanisms.catalogue import LaplaceCount

pytest_plugins = ["pytester"]

USER_SUITE = """
import numpy as np
import sympy
import dpaudit.events as ev
from dpaudit.pytest_plugin import assert_claim_verified


def noisy_count(data, rng):
    return float(np.sum(data) + rng.laplace(0.0, 1.0))


def leaky_count(data, rng):
    return float(np.sum(data) + rng.laplace(0.0, 0.5))  # bug: half the noise


# claims about real arithmetic (in doubles the auditor's bit-pattern events flag both)
noisy_count.arithmetic = leaky_count.arithmetic = "real"


def test_plan(privacy):
    privacy.assert_claim_verified(plan=ev.Laplace(1), epsilon=1)


def test_private(privacy):
    privacy.assert_private(noisy_count, [1, 1, 1], [1, 1], epsilon=1.0, samples=20_000)


def test_leaky(privacy):
    privacy.assert_private(leaky_count, [1, 1, 1], [1, 1], epsilon=1.0, samples=20_000)


def test_symbolic_claim():
    eps = sympy.Symbol("eps", positive=True)
    k = sympy.Symbol("k", positive=True, integer=True)
    assert_claim_verified(plan=ev.SelfComposed(ev.Laplace(k / eps), k), epsilon=eps,
                          domain="eps > 0, k >= 1 integer")
"""


@pytest.mark.slow
def test_plugin_in_a_user_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpaudit-seed", "3")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_user.py::test_leaky*"])


def test_assert_private_passes_and_fails_deterministically() -> None:
    good = LaplaceCount(1.0)
    r = assert_private(good, pairs=good.pairs, epsilon=1.0, samples=20_000, seed=1)
    assert not r.violation
    bad = BrokenLaplaceTooLittleNoise(1.0)
    for _ in range(2):  # same seed, same outcome
        with pytest.raises(AssertionError, match="privacy claim refuted"):
            assert_private(bad, pairs=bad.pairs, epsilon=1.0, samples=20_000, seed=1)


def test_assert_claim_verified_outcomes() -> None:
    v = assert_claim_verified("002/private-pac-learner")
    assert v.status == "proved"
    # the accountant's bound 1 is above 1/2 but nothing refutes the claim: undecided, which
    # fails (its own kind of failure, an AssertionError) unless accepted explicitly
    with pytest.raises(ClaimUndecidedError, match="is undecided: neither proved nor refuted"):
        assert_claim_verified(plan=ev.Laplace(1), epsilon="1/2")
    assert issubclass(ClaimUndecidedError, AssertionError)
    v = assert_claim_verified(plan=ev.Laplace(1), epsilon="1/2", allow_unknown=True)
    assert v.status == "unknown"
    with pytest.raises(ValueError, match="give a Claim"):
        assert_claim_verified(epsilon=1)


FAILING_SUITE = """
import numpy as np
from dpaudit.testing import assert_private


def naive_laplace(data, rng):  # textbook Laplace noise in doubles (Mironov 2012)
    return float(np.sum(data) + rng.laplace(0.0, 1.0))


def leaky_count(data, rng):
    return float(np.sum(data) + rng.laplace(0.0, 0.25))


leaky_count.arithmetic = "real"


def test_float_naive():
    assert_private(naive_laplace, [1, 1, 1], [1, 1], epsilon=1.0, samples=20_000)


def test_leaky(privacy):
    privacy.assert_private(leaky_count, [1, 1, 1], [1, 1], epsilon=1.0, samples=20_000)
"""


def _failure_section(lines: list[str], name: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.strip("_ ") == name)
    end = next(
        i
        for i, line in enumerate(lines)
        if i > start and (line.startswith("_____") or "short test summary" in line)
    )
    return lines[start:end]


def test_a_failing_privacy_test_shows_the_verdict_not_dpaudit_frames(
    pytester: pytest.Pytester,
) -> None:
    """The failure shows the test's own line and the verdict; dpaudit's frames are hidden
    (``__tracebackhide__``): a failing ``assert_private`` printed about 105 lines, most of
    them its own source."""
    pytester.makepyfile(test_user=FAILING_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    for name in ("test_float_naive", "test_leaky"):
        section = _failure_section(result.outlines, name)
        text = "\n".join(section)
        assert "VIOLATION: epsilon >=" in text
        assert "result = audit(" not in text and "dpaudit/testing.py" not in text, text
        assert "kwargs.setdefault" not in text and "dpaudit/pytest_plugin.py" not in text, text
        assert len(section) < 45, text
    naive = "\n".join(_failure_section(result.outlines, "test_float_naive"))
    leaky = "\n".join(_failure_section(result.outlines, "test_leaky"))
    # found through the floating-point bit patterns: the message says how to claim reals
    assert "bit patterns" in naive and 'arithmetic = "real"' in naive
    assert "bit patterns" not in leaky  # a real-arithmetic violation: no such hint


def test_claim_assertions_hide_their_frames_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_claims="""
import dpaudit.events as ev
from dpaudit.pytest_plugin import assert_claim_verified
from dpaudit.testing import assert_delta_at_most


def test_claim(privacy):
    privacy.assert_claim_verified(plan=ev.Laplace(1), epsilon="1/2")


def test_delta():
    assert_delta_at_most(ev.Laplace(1), epsilon=0.5, delta=0.01)
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    text = "\n".join(result.outlines)
    assert "is undecided" in text and "is NOT (0.5, 0.01)-DP" in text
    assert "the accountant's bound is above the claim" in text and "1.0 > 0.5" in text
    assert "verify_claim(claim" not in text and "Accountant().delta_for_epsilon" not in text
