"""Prefix audits (dpaudit.audit.one_run_subsets): Steinke et al.'s bound no longer falls with m,
the default prefix rule, the plan of tests and its validation, and the false-alarm rate of
an audit over several prefixes (alpha and sample sizes stated)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.audit import audit_one_run
from dpaudit.audit.one_run import default_guesses
from dpaudit.audit.one_run_subsets import (
    MIN_SUBSET,
    default_subsets,
    plan_candidates,
    steinke_prefix,
)
from mechanisms.one_run_training import IdealizedGaussianTrainer

DELTA = 1e-5


def test_steinke_bound_does_not_fall_with_m():
    """Steinke et al.'s bound (Theorem 5.2 / Corollary 5.4) on the idealized trainer at
    sigma 1 (theoretical epsilon 4.377 at delta 1e-5), seeds 2024-2026.  Before prefixes it
    fell with m (bench/one_run.md: 0.373, 0.335, 0.290 of the theoretical epsilon at
    m = 10^3, 10^4, 10^5): its delta term grows with 2 m delta.  Now the default audits the
    first min(m, 10^4) canaries, so: for every seed the bound at m = 10^5 is at least that at
    10^3 (the prefix of 10^4 certifies more than 10^3 canaries: median 0.515 against 0.393
    of the theoretical epsilon); the medians never fall from 10^3 to 10^6; and m = 10^5 and
    10^6 certify exactly what m = 10^4 does with the same seed (the mask and the trainer's
    noise are drawn in order, so the first 10^4 canaries of every run are the same; 10^6
    with the first seed only, to stay fast).
    Without the prefix the medians fall from 10^4 to 10^6 (0.515, 0.475, 0.439 of the
    theoretical epsilon with the same grid): the test fails."""
    trainer = IdealizedGaussianTrainer(1.0)
    claimed = trainer.claimed_epsilon(DELTA)
    kw = {"epsilon": claimed, "delta": DELTA, "method": "steinke"}
    seeds = {1_000: (2024, 2025, 2026), 10_000: (2024, 2025, 2026)}
    seeds |= {100_000: (2024, 2025, 2026), 1_000_000: (2024,)}  # 10^6: one seed (time)
    bounds = {m: [audit_one_run(trainer, m, seed=s, **kw) for s in seeds[m]] for m in seeds}
    for low, high in zip(bounds[1_000], bounds[100_000], strict=True):
        assert high.epsilon_lower >= low.epsilon_lower
    medians = [float(np.median([r.epsilon_lower for r in bounds[m]])) for m in seeds]
    assert medians == sorted(medians) and medians[-1] <= claimed
    for m in (100_000, 1_000_000):
        assert [r.subset for r in bounds[m]] == [10_000] * len(seeds[m])
        same = [r.epsilon_lower for r in bounds[10_000][: len(seeds[m])]]
        assert [r.epsilon_lower for r in bounds[m]] == same


def test_default_prefix_rule():
    assert steinke_prefix(1e-5) == 10_000 and steinke_prefix(1e-6) == 100_000
    assert steinke_prefix(1e-3) == steinke_prefix(0.5) == MIN_SUBSET  # at least 1000
    assert default_subsets(10**6, 1e-5, "steinke") == (10_000,)
    assert default_subsets(500, 1e-5, "steinke") == (500,)
    assert default_subsets(10**6, 0.0, "steinke") == (10**6,)  # pure DP: nothing grows with m
    assert default_subsets(10**6, 1e-5, "f-dp") == default_subsets(10**6, 1e-5, "gaussian")
    assert default_subsets(10**6, 1e-5, "f-dp") == (10**6,)


def test_plan_of_tests():
    """Default: the default guess counts of the default prefix; given guesses without
    subsets: all m canaries; given both: each pair on every prefix it fits."""
    plan = plan_candidates(10**5, DELTA, "steinke", None, None)
    assert plan == [(10_000, kp, km) for kp, km in default_guesses(10_000)]
    assert plan_candidates(10**5, DELTA, "steinke", [(5, 5)], None) == [(10**5, 5, 5)]
    both = plan_candidates(1000, DELTA, "f-dp", [(40, 40), (200, 200)], [100, 1000, 100])
    assert both == [(100, 40, 40), (1000, 40, 40), (1000, 200, 200)]
    several = plan_candidates(1000, DELTA, "steinke", None, [1000, 250])
    assert len(several) == len(default_guesses(250)) + len(default_guesses(1000))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"subsets": [0]}, ValueError, r"subsets must be prefix sizes in \[1, m\] = \[1, 10\]"),
        ({"subsets": [11]}, ValueError, r"prefix sizes in \[1, m\] = \[1, 10\], got 11"),
        ({"subsets": [2.5]}, TypeError, r"subsets must hold integer prefix sizes, got 2.5"),
        ({"subsets": []}, ValueError, r"subsets must hold at least one prefix size"),
        (
            {"subsets": [4], "guesses": [(3, 3)]},
            ValueError,
            r"guesses must be pairs with k_plus \+ k_minus <= the largest prefix audited \(4\)",
        ),
    ],
)
def test_bad_subsets_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        audit_one_run(lambda inc, rng: np.zeros(len(inc)), 10, epsilon=1.0, **kwargs)


def test_a_prefix_audit_guesses_among_the_prefix_only():
    """Scores that reveal every bit beyond the first 100 canaries and are noise on the first
    100: audited on the prefix of 100 nothing is certified; on all canaries the bound is
    far above the claim.  The guesses and counts are the prefix's."""

    def train(included, rng):
        scores = included.astype(float)
        scores[:100] = rng.random(100)
        return scores

    prefix = audit_one_run(train, 1000, epsilon=1.0, seed=3, method="steinke", subsets=[100])
    whole = audit_one_run(train, 1000, epsilon=1.0, seed=3, method="steinke", subsets=[1000])
    assert prefix.subset == 100 and sum(prefix.guesses) <= 100 and not prefix.violation
    assert all(c[0] == 100 for c in prefix.candidates)
    assert "among the first 100 canaries" in str(prefix) and "first 100 canaries" in prefix.event
    assert whole.subset == 1000 and whole.violation and whole.epsilon_lower > 3.0


def _leaky_rr(eps: float, leak: float):
    """Each inclusion bit revealed with probability ``leak``, otherwise sent through
    eps-randomized response: exactly (eps, leak)-DP for each canary."""
    q = 1.0 / (1.0 + math.exp(-eps))

    def train(included, rng):
        revealed = rng.random(len(included)) < leak
        truthful = revealed | (rng.random(len(included)) < q)
        return np.where(truthful, included, ~included) + 1e-3 * rng.random(len(included))

    return train


#: False alarms of an audit over several prefixes: audits, canaries, claim, alpha per audit.
AUDITS, CANARIES, EPS, LEAK, ALPHA = 100, 1000, 1.0, 1e-4, 0.05


@pytest.mark.slow
def test_false_alarm_rate_over_several_prefixes():
    """An exactly (1, 1e-4)-DP trainer audited at its claim by Steinke et al.'s bound on
    the prefixes 250, 500 and 1000 (one union bound over all their guess counts), AUDITS =
    100 seeds, alpha = 0.05 each: flags ~ Binomial(100, <= 0.05), more than 12 has
    probability < 0.004.  The same audits of the trainer at eps 3 claiming 1 flag at least
    18 of 20: the test can fail."""
    kw = {"epsilon": EPS, "delta": LEAK, "confidence": 1 - ALPHA, "method": "steinke"}
    kw["subsets"] = (250, 500, 1000)
    honest = _leaky_rr(EPS, LEAK)
    flags = [audit_one_run(honest, CANARIES, seed=s, **kw) for s in range(AUDITS)]
    assert flags[0].tests == sum(len(default_guesses(n)) for n in (250, 500, 1000))
    assert sum(r.violation for r in flags) <= 12
    leaky = _leaky_rr(3 * EPS, LEAK)
    assert sum(audit_one_run(leaky, CANARIES, seed=s, **kw).violation for s in range(20)) >= 18
