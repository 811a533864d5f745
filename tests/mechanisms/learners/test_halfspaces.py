"""000 (Nguyen, Ullman, Zakynthinou): nets, Algorithm 2 and Algorithm 1/3, the lower-bound
construction.  Statistical tests state their sample size; seeds are fixed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from mechanisms.covers import ball_net, halfspace_labelings_2d
from mechanisms.halfspaces import (
    NetMarginLearner,
    NoisyGDMarginLearner,
    jl_matrix,
    project_to_sphere,
)
from mechanisms.ledger import Ledger
from mechanisms.synthetic_margin import lower_bound_code, lower_bound_sample, margin_sample


@pytest.mark.parametrize("m,radius,scale", [(2, 1.0, 0.05), (3, 1.0, 0.2), (2, 2.0, 0.1)])
def test_ball_net_covers_the_ball(m: int, radius: float, scale: float) -> None:
    rng = np.random.default_rng(0)
    net = ball_net(m, radius, scale)
    assert np.all(np.linalg.norm(net, axis=1) <= radius + 1e-9)
    pts = rng.standard_normal((4000, m))
    pts *= (radius * rng.random(4000) ** (1 / m) / np.linalg.norm(pts, axis=1))[:, None]
    nearest = np.min(np.linalg.norm(pts[:, None, :] - net[None], axis=2), axis=1)
    assert nearest.max() <= scale + 1e-9


def test_ball_net_refuses_beyond_max_points() -> None:
    with pytest.raises(ValueError, match="max_points must be at least"):
        ball_net(6, 1.0, 0.01, max_points=1000)


def test_halfspace_labelings_are_all_and_distinct() -> None:
    rng = np.random.default_rng(1)
    pts = rng.standard_normal((7, 2))
    W = halfspace_labelings_2d(pts)
    labels = {tuple((pts @ w >= 0).astype(int)) for w in W}
    assert len(labels) == len(W) == 2 * len(pts)  # points in general position: 2k labelings
    dense = np.stack([np.cos(t := np.linspace(0, 2 * np.pi, 20_000)), np.sin(t)], axis=1)
    assert {tuple(r) for r in (pts @ dense.T >= 0).T.astype(int)} <= labels


def test_algorithm2_ledger_within_plan_and_utility() -> None:
    """Utility at n = 400, gamma = 0.6, d = 20, m = 2 (the paper's m = O(log(n/alpha beta) /
    gamma^2) ~ 30 is far too large to enumerate a net; m = 2 is the shortfall)."""
    rng = np.random.default_rng(3)
    X, y, w = margin_sample(400, 20, 0.6, rng)
    Xt, yt, _ = margin_sample(4000, 20, 0.6, rng, w=w)
    learner = NetMarginLearner(1.0, 0.6, 2)
    errors = []
    for _ in range(5):
        with Ledger() as ledger:
            model = learner.fit(X, y, rng)
        spent, planned = ledger.check_within(learner.plan(400))
        assert spent == planned == pytest.approx(1.0)
        errors.append(model.error(Xt, yt))
    assert np.median(errors) < 0.15


@pytest.mark.slow  # about 5 s
def test_algorithm2_audit_below_accountant() -> None:
    """Designed pair: n = 8 records, d1 negates the last label, so every net point the last
    record separates by margin gamma/10 moves its score by 1/n in opposite directions (the
    worst case of the EM analysis).  100k samples, confidence 0.95."""
    rng = np.random.default_rng(5)
    X, y, _ = margin_sample(8, 6, 0.5, rng)
    A = jl_matrix(2, 6, rng)
    y1 = y.copy()
    y1[-1] = -y1[-1]
    learner = NetMarginLearner(1.0, 0.5, 2)
    upper = Accountant().guarantee(learner.plan(8)).epsilon_upper
    result = audit(
        learner.selection_mechanism(A), (X, y), (X, y1), epsilon=1.0, samples=100_000, seed=11
    )
    print(f"audit lower {result.epsilon_lower:.3f}, accountant upper {upper:.3f}")
    assert not result.violation
    assert result.epsilon_lower <= upper
    # recorded gap (README): for this seed and pair, lower ~0.43, upper 1.0
    assert result.epsilon_lower > 0.3


@pytest.mark.slow
def test_algorithm1_ledger_and_plan_accounting() -> None:
    """The ledger merges the runs' steps, and the plan is accounted from its steps
    (amplification by sampling without replacement, BBG18 Thm 9, then composition)."""
    rng = np.random.default_rng(4)
    X, y, _ = margin_sample(60, 10, 0.5, rng)
    learner = NoisyGDMarginLearner(1.0, 1e-5, 0.5, 5, repetitions=2, steps=50)
    with Ledger() as ledger:
        learner.fit(X, y, rng)
    merged = ledger.merged()
    # each run records its 50 steps as one block of 50 runs of the step event (drawn at once)
    assert [e.count for e in ledger.entries] == [50, 50, 1] and len(merged) == 2
    assert merged[0].count == 100 and sum(e.count for e in ledger.entries) == 2 * 50 + 1
    spent, planned = ledger.check_within(learner.plan(60), 1e-5)
    assert spent <= planned < 1.0  # eps = 1 claimed at delta = 1e-5


def test_algorithm1_poisson_variant_is_accounted_from_its_steps() -> None:
    """The Poisson-sampled variant (add/remove): the accountant composes the 2 x 500
    subsampled Gaussian steps (RDP/PLD) and the selection; the run's ledger equals the plan.
    The guarantee comes from the steps, not from BST14's closed form: with sigma calibrated
    by BST14 for eps = 1/2 per run the total is ~1.0 at delta = 1e-5, half the target
    (recorded in the README)."""
    rng = np.random.default_rng(8)
    X, y, _ = margin_sample(100, 10, 0.5, rng)
    learner = NoisyGDMarginLearner(2.0, 1e-5, 0.5, 5, repetitions=2, steps=500, sampling="poisson")
    with Ledger() as ledger:
        learner.fit(X, y, rng)
    spent, planned = ledger.check_within(learner.plan(100), 1e-5)
    assert spent == pytest.approx(planned, rel=1e-6)
    assert 0.5 < planned <= 2.0


def test_algorithm1_utility_at_reduced_steps() -> None:
    """n = 300, d = 20, gamma = 0.5, m = 10, eps = 4, 3 runs of 8000 steps (the paper's
    n^2 = 90000 steps per run would take minutes, and its n has polylog factors we cannot
    reach): median test error over 3 seeds below 0.3 (recorded: 0.36, 0.24, 0.24; the
    non-private run of the same code reaches 0.015, so the shortfall is the noise)."""
    errors = []
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        X, y, w = margin_sample(300, 20, 0.5, rng)
        Xt, yt, _ = margin_sample(3000, 20, 0.5, rng, w=w)
        model = NoisyGDMarginLearner(4.0, 1e-5, 0.5, 10, repetitions=3, steps=8000).fit(X, y, rng)
        errors.append(model.error(Xt, yt))
    print("Algorithm 1/3 test errors", errors)
    assert np.median(errors) < 0.3


def test_projection_preserves_margin_of_most_points() -> None:
    """Lemma 3: with m = 200 and gamma = 0.5, nearly all points keep margin 0.96 gamma/..."""
    rng = np.random.default_rng(6)
    X, y, w = margin_sample(500, 300, 0.5, rng)  # exact conditional sampler, no rejection
    A = jl_matrix(200, 300, rng)
    Z = project_to_sphere(X, A)
    wa = A @ w / np.linalg.norm(A @ w)
    assert np.mean(y * (Z @ wa) >= 0.96 * 0.5 * 0.5) > 0.9


def test_lower_bound_construction_and_the_papers_agreement_error() -> None:
    """Theorem 6's codewords have pairwise Hamming distance >= d/10 and inner product <= 4/5;
    two such halfspaces *agree* on ~1 - arccos(4/5)/pi = 0.795 of the sphere, not <= 0.21 as
    the proof states (it computes the disagreement probability)."""
    rng = np.random.default_rng(7)
    d = 100
    code = lower_bound_code(d, rng, size=6)
    inner = code @ code.T
    assert np.all(inner[~np.eye(6, dtype=bool)] <= 0.8 + 1e-12)
    # a pair at the minimum distance the construction allows
    wi = np.full(d, 1 / math.sqrt(d))
    wj = wi.copy()
    wj[: d // 10] *= -1
    x = rng.standard_normal((200_000, d))
    agree = np.mean(np.sign(x @ wi) == np.sign(x @ wj))
    assert agree == pytest.approx(1 - math.acos(0.8) / math.pi, abs=0.01)
    assert agree > 0.21
    X, yy = lower_bound_sample(code, 2, 500, 0.01, rng)
    assert np.all(yy * (X @ code[2]) >= 0.01)


@pytest.mark.slow
def test_demo_shows_a_part2_learner_end_to_end_next_to_part1() -> None:
    """`dpaudit demo` runs the part-1 learner's section and this one (registered by
    mechanisms/demo.py); this one trains, accounts, verifies and audits 000's Algorithm 2."""
    from dpaudit.demo import load_sections
    from mechanisms.halfspaces import demo_section

    titles = [section.title for section in load_sections()]
    assert titles.index("A learner of Lecture 4 / Bun and Fang, end to end") < titles.index(
        "A large-margin / private-prediction learner, end to end"
    )
    text = demo_section()
    for line in (
        "train:",
        "learned: test error",
        "ledger spent 1 of 1",
        "verify: claim 000/theorem-5 (Theorem 5): proved",
        "certified epsilon >=",
    ):
        assert line in text, line


def test_block_noisy_sgd_is_the_step_by_step_update() -> None:
    """The block-drawn noisy SGD (noise and records drawn per block) computes exactly
    w <- Pi(w - eta(t) (n grad l(w; x_i) + b_t)) step by step on the same draws: a reference
    loop written from 000 Algorithm 3 consumes the generator in the same order (the block's
    noise, then its records) and must give the same iterate to 1e-12; and the ledger holds
    the plan's steps."""
    from mechanisms.halfspaces import (
        MarginLoss,
        _project_ball,
        bst14_sigma,
        noisy_gradient_descent,
    )

    X, y, _ = margin_sample(40, 6, 0.3, np.random.default_rng(1))
    loss = MarginLoss(0.3)
    sigma = bst14_sigma(40, loss.lipschitz, 1, "1/100000")
    steps = 300
    with Ledger() as ledger:
        fast = noisy_gradient_descent(X, y, loss, sigma, steps, np.random.default_rng(9))
    assert sum(e.count for e in ledger.entries) == steps
    rng = np.random.default_rng(9)
    s, n, m = float(sigma), 40, 6
    noise = rng.normal(0.0, s, size=(steps, m))
    rows = rng.integers(n, size=steps)
    L = float(loss.lipschitz)
    w = np.zeros(m)
    for t in range(1, steps + 1):
        x, label = X[rows[t - 1]], int(y[rows[t - 1]])
        eta = 2 / np.sqrt(t * (n**2 * L**2 + m * s**2))
        w = _project_ball(w - eta * (n * loss.gradient(w, x, label) + noise[t - 1]), 1.0)
    assert np.allclose(fast, w, atol=1e-12, rtol=0)
