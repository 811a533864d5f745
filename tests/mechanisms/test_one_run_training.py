"""One-run trainers (noisy gradient descent with white-box gradient canaries and black-box
input canaries) and their one-run audits: the honest trainer is not flagged, the broken one
(noise 10x too small) is.  Seeds are fixed; sample sizes and alpha are stated per test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.audit import audit_one_run
from mechanisms.broken_training import BrokenNoisyGDTooLittleNoise
from mechanisms.ledger import Ledger
from mechanisms.one_run_training import NoisyGDCanaryTrainer, learner_canary_trainer

DELTA = 1e-5
#: noise multiplier 10 over 25 full-batch steps: mu-GDP with mu = 0.5, about (1.99, 1e-5)-DP
SIGMA, STEPS = 10.0, 25


def test_trainer_spends_exactly_its_plan():
    trainer = NoisyGDCanaryTrainer(m=20, noise_multiplier=SIGMA, steps=STEPS)
    with Ledger() as ledger:
        trainer(np.ones(20, dtype=bool), np.random.default_rng(0))
    spent, planned = ledger.check_within(trainer.plan(), DELTA)
    assert spent == pytest.approx(planned)
    assert trainer.claimed_epsilon(DELTA) == pytest.approx(1.993, abs=1e-3)


@pytest.mark.parametrize("cls", [NoisyGDCanaryTrainer, BrokenNoisyGDTooLittleNoise])
def test_gradient_canary_scores_have_the_gaussian_law(cls):
    """White-box score of canary i: (1/T) (T L b_i + N(0, T sigma^2)), i.e. b_i plus
    N(0, sigma^2/T) (L = 1, learning rate 1/T).  m = 4000 canaries, 2000 included: the
    sample standard deviation of the 2000 excluded scores is within 10% of sigma/sqrt(T) = 2
    (a 10% deviation is 4.5 standard errors: alpha < 1e-5).  The broken trainer's scores have
    a tenth of it, so the same check fails on it."""
    m = 4000
    mask = np.arange(m) < m // 2
    scores = cls(m=m, noise_multiplier=SIGMA, steps=STEPS)(mask, np.random.default_rng(1))
    expected = SIGMA / math.sqrt(STEPS)
    sd = float(np.std(scores[~mask]))
    mean_gap = float(scores[mask].mean() - scores[~mask].mean())
    honest = abs(sd / expected - 1) < 0.1 and abs(mean_gap - 1.0) < 0.5
    assert honest == (cls is NoisyGDCanaryTrainer)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gradient", "input"])
def test_one_run_audit_passes_the_honest_trainer_and_catches_the_broken(kind):
    """m = 500 canaries, confidence 0.95 (alpha 0.05 per audit).  The honest trainer is
    flagged with probability <= 0.05 per audit (gradient canaries: the Gaussian-score
    certification, their scores being Gaussian: over 10 seeds at most 3 flags,
    P[Binomial(10, 0.05) > 3] < 0.002; input canaries, slower to train: the f-DP recursion on
    the mu-GDP curve, one seed, not flagged); the
    broken one (mu = 5 instead of 0.5) separates included canaries by 5 standard deviations
    and certifies far above the claimed 1.99."""
    honest = NoisyGDCanaryTrainer(m=500, canaries=kind, noise_multiplier=SIGMA, steps=STEPS)
    claimed = honest.claimed_epsilon(DELTA)
    expected = "gaussian" if kind == "gradient" else "f-dp"
    flags = 0
    for seed in range(10) if kind == "gradient" else (11,):
        ok = audit_one_run(honest, 500, epsilon=claimed, delta=DELTA, seed=seed)
        assert ok.certified_by == expected
        flags += ok.violation
    assert flags <= (3 if kind == "gradient" else 0)
    broken = BrokenNoisyGDTooLittleNoise(m=500, canaries=kind, noise_multiplier=SIGMA, steps=STEPS)
    bad = audit_one_run(broken, 500, epsilon=claimed, delta=DELTA, seed=11, name=broken.name)
    assert bad.violation and bad.epsilon_lower > claimed + 1.0
    assert broken.claimed_epsilon(DELTA) == claimed  # the broken plan claims the same


def test_noisy_sgd_spends_its_subsampled_plan_and_its_bug_is_caught():
    """Noisy SGD on Poisson(0.2) batches (noise multiplier 4, 50 steps, accounted (1.453,
    1e-5)-DP by the privacy loss distribution), white-box canaries, m = 500, confidence 0.95
    (alpha 0.05), seed fixed: the ledger holds exactly the plan, the honest trainer is not
    flagged, the broken one (noise / 10) is."""
    kwargs = {"noise_multiplier": 4.0, "steps": 50, "sample_rate": 0.2}
    honest = NoisyGDCanaryTrainer(m=500, **kwargs)
    claimed = honest.claimed_epsilon(DELTA)
    assert claimed == pytest.approx(1.453, abs=1e-3)
    with Ledger() as ledger:
        ok = audit_one_run(honest, 500, epsilon=claimed, delta=DELTA, seed=5)
    spent, planned = ledger.check_within(honest.plan(), DELTA)
    assert spent == pytest.approx(planned)
    assert not ok.violation
    bad = audit_one_run(
        BrokenNoisyGDTooLittleNoise(m=500, **kwargs), 500, epsilon=claimed, delta=DELTA, seed=5
    )
    assert bad.violation


def test_input_canaries_are_fixed_by_the_data_seed_only():
    t = NoisyGDCanaryTrainer(m=50, canaries="input", n=30)
    X, _, Xc, yc = t.data()
    assert X.shape == (30, 200) and Xc.shape == (50, 200) and set(np.unique(yc)) <= {-1, 1}
    assert np.allclose(np.linalg.norm(Xc, axis=1), 1.0)
    X2, _, Xc2, _ = t.data()
    assert np.array_equal(Xc, Xc2) and np.array_equal(X, X2)


class _Memorizer:
    """A non-private "learner": the label of the nearest training row, weighted by
    exp(-distance) (an included canary is its own nearest row: score exactly 1)."""

    def __init__(self, random_state=None, **params):
        self.params = params

    def fit(self, X, y):
        self.X_, self.y_ = np.asarray(X, dtype=float), np.asarray(y)
        self.classes_ = np.unique(self.y_)
        return self

    def decision_function(self, X):
        dist = np.linalg.norm(np.asarray(X)[:, None, :] - self.X_[None, :, :], axis=2)
        near = dist.argmin(axis=1)
        sign = np.where(self.y_[near] == self.classes_[1], 1.0, -1.0)
        return sign * np.exp(-dist[np.arange(len(X)), near])


@pytest.mark.slow
def test_registered_learner_with_input_canaries_is_not_flagged_but_a_memorizer_is():
    """Black-box canaries on the registered noisy-sgd-margin learner (epsilon 1, delta 1e-5,
    200 steps, one run): one audit of m = 100 canaries at confidence 0.95 (alpha 0.05) does
    not flag it.  The same audit of a nearest-neighbour memorizer claiming epsilon 1 flags
    it (its included canaries all score 1, above every excluded one)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    kwargs = {"epsilon": 1.0, "delta": DELTA}
    train = learner_canary_trainer(
        "noisy-sgd-margin",
        X,
        y,
        100,
        steps=200,
        dimension=10,
        repetitions=1,
        feature_norm=3.0,
        **kwargs,
    )
    res = audit_one_run(train, 100, epsilon=1.0, delta=DELTA, seed=0)
    assert not res.violation and res.epsilon_lower <= 1.0
    assert "noisy-sgd-margin" in res.mechanism
    leaky = learner_canary_trainer(_Memorizer, X, y, 100, **kwargs)
    caught = audit_one_run(leaky, 100, epsilon=1.0, delta=DELTA, seed=0)
    assert caught.violation and caught.epsilon_lower > 2.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"canaries": "weights"}, r"canaries must be one of gradient, input, got 'weights'"),
        ({"steps": 0}, r"steps must be an integer >= 1, got 0"),
        ({"noise_multiplier": 0.0}, r"noise_multiplier must be a number > 0, got 0.0"),
        ({"dimension": 0}, r"dimension must be None or an integer >= 1, got 0"),
        (
            {"m": 10_000, "canaries": "input"},
            r"\(n \+ m\) x dimension must be at most 50,000,000 floats \(MAX_DESIGN\), got",
        ),
        ({"sample_rate": 0.0}, r"sample_rate must be a number in \(0, 1\], got 0.0"),
    ],
)
def test_trainer_parameters_are_validated(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NoisyGDCanaryTrainer(**({"m": 10} | kwargs))
