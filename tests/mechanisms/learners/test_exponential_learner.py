"""Lecture 4 (002): the exponential mechanism's bounds and the generic private PAC learner."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from dpaudit.events import SelfComposed
from mechanisms.exponential_learner import (
    EXPONENTIAL_MECHANISM_CLAIM,
    PRIVATE_PAC_CLAIM,
    PrivatePACLearner,
    em_utility_gap,
    intervals_on_grid,
    pac_neighbouring_pair,
    plan,
    private_pac_sample_size,
    thresholds_on_grid,
    true_error_threshold,
)
from mechanisms.ledger import Ledger
from mechanisms.synthetic_discrete import grid_threshold_sample

#: Utility check design: TRIALS independent runs at the lecture's sample size; the theorem
#: says each fails with probability <= BETA, so failures ~ Binomial(TRIALS, <= BETA) and we
#: reject when failures > MAX_FAILURES: P[Bin(100, 0.1) > 20] = 0.0008 = the test's alpha.
TRIALS, ALPHA, BETA, MAX_FAILURES = 100, 0.1, 0.1, 20
GRID, TARGET = 100, 37


def test_utility_gap_and_sample_size_formulas() -> None:
    assert em_utility_gap(1, 101, 3) == pytest.approx(2 * (math.log(101) + 3), rel=1e-12)
    assert em_utility_gap(1, 101, 3) >= 2 * (math.log(101) + 3)  # rounded up
    assert em_utility_gap(2, 10, 1, sensitivity=3) == pytest.approx(3 * (math.log(10) + 1))
    m = private_pac_sample_size(ALPHA, BETA, 1.0, 101)
    a1, b1 = ALPHA / 3, BETA / 2
    expected = max(
        3 * (math.log(202) + math.log(1 / b1)) / a1**2, 2 * (math.log(101) + math.log(1 / b1)) / a1
    )
    assert m == math.ceil(expected)
    # privacy is "free" for eps > alpha; below, the 1/(alpha eps) term dominates
    assert private_pac_sample_size(ALPHA, BETA, 1e-3, 101) > 10 * m


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: em_utility_gap(0, 10, 1), r"epsilon must be a number in \(0, inf\), got 0"),
        (lambda: em_utility_gap(1, 0, 1), r"n_candidates must be an integer in \[1, inf\)"),
        (lambda: private_pac_sample_size(0.7, 0.1, 1, 5), r"alpha must be a number in \(0, 0.5"),
        (lambda: thresholds_on_grid(0), r"grid_size must be an integer in \[1, inf\), got 0"),
        (lambda: PrivatePACLearner(thresholds_on_grid(4), -1), r"epsilon must be"),
        (
            lambda: PrivatePACLearner(thresholds_on_grid(4), 1).scores([5], [1]),
            r"x must hold integers in \[0, 3\]",
        ),
        (lambda: PrivatePACLearner(thresholds_on_grid(4), 1).scores([1], [0]), r"y must hold"),
    ],
)
def test_bad_input_is_refused(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_classes() -> None:
    th = thresholds_on_grid(5)
    assert th.size == 6 and th.domain_size == 5
    assert th.table[0].tolist() == [1] * 5 and th.table[5].tolist() == [-1] * 5
    iv = intervals_on_grid(5)
    assert iv.size == 5 * 6 // 2 + 1
    assert len({tuple(r) for r in iv.table.tolist()}) == iv.size  # all distinct


def test_scores_count_correct_labels() -> None:
    learner = PrivatePACLearner(thresholds_on_grid(4), 1)
    scores = learner.scores(np.array([0, 1, 3]), np.array([-1, 1, 1]))
    # t=0 predicts all +1: 2 right; t=1: 3 right; t=2: 2; t=3: 2; t=4 (all -1): 1
    assert scores.tolist() == [2, 3, 2, 2, 1]


def test_run_spends_no_more_than_plan() -> None:
    rng = np.random.default_rng(7)
    learner = PrivatePACLearner(intervals_on_grid(20), 0.5)
    x, y = grid_threshold_sample(500, 20, 7, rng)
    with Ledger() as ledger:
        learner.fit(x, y, rng)
        learner.batch((x, y), 3, rng)
    assert len(ledger) == 2
    spent, planned = ledger.check_within(SelfComposed(plan(0.5), 4))
    assert spent == planned == pytest.approx(2.0)


def test_claims_are_registered_with_replace_one_plans() -> None:
    for claim in (EXPONENTIAL_MECHANISM_CLAIM, PRIVATE_PAC_CLAIM):
        assert claim.plan.relation.value == "replace_one"
        g = Accountant().guarantee(claim.plan)
        assert g.epsilon == claim.epsilon  # the accountant proves the claim exactly


def test_audit_lower_bound_below_accountant_and_exact_pair_epsilon() -> None:
    """Sandwich: audit lower bound <= exact privacy loss of the pair <= accountant bound."""
    epsilon, grid = 1.0, 8
    learner = PrivatePACLearner(thresholds_on_grid(grid), epsilon)
    d0, d1 = pac_neighbouring_pair(grid)
    p0, p1 = learner.probabilities(d0), learner.probabilities(d1)
    exact_pair = float(max(abs(mpmath.log(a / b)) for a, b in zip(p0, p1, strict=True)))
    upper = Accountant().guarantee(plan(epsilon)).epsilon_upper
    result = audit(learner, d0, d1, epsilon=epsilon, samples=200_000, seed=2024)
    assert not result.violation
    assert result.epsilon_lower <= exact_pair <= upper
    # recorded gap (README): lower 0.84, exact 0.886, upper 1.0 for this seed
    assert exact_pair == pytest.approx(0.8857, abs=1e-3)
    assert result.epsilon_lower > 0.7


def _failures(epsilon: float, label_noise: float, seed: int) -> int:
    rng = np.random.default_rng(seed)
    hypotheses = thresholds_on_grid(GRID)
    learner = PrivatePACLearner(hypotheses, epsilon)
    m = private_pac_sample_size(ALPHA, BETA, 1.0, hypotheses.size)
    best = true_error_threshold(TARGET, TARGET, GRID, label_noise)
    failures = 0
    for _ in range(TRIALS):
        x, y = grid_threshold_sample(m, GRID, TARGET, rng, label_noise)
        t = learner.fit(x, y, rng)
        failures += true_error_threshold(t, TARGET, GRID, label_noise) > best + ALPHA
    return failures


@pytest.mark.parametrize("label_noise", [0.0, 0.2])
def test_utility_at_the_lecture_sample_size(label_noise: float) -> None:
    """err(h) <= min err + alpha w.p. >= 1 - beta at m = private_pac_sample_size (eps = 1),
    realizable and agnostic.  The lecture's bound is loose: no trial fails in practice."""
    assert _failures(1.0, label_noise, seed=11) <= MAX_FAILURES


def test_utility_check_can_fail() -> None:
    """The same check rejects a learner run at eps 1000 times smaller than the sample size
    was computed for (its exponential mechanism is then nearly uniform)."""
    assert _failures(1e-3, 0.0, seed=12) > MAX_FAILURES


def test_demo_section_runs_end_to_end() -> None:
    from mechanisms.exponential_learner import demo_section

    text = demo_section()
    assert "verify: claim 002/private-pac-learner" in text and "proved" in text
    assert "certified epsilon >=" in text and "ledger spent 1 of 1" in text
