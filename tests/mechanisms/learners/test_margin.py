"""001 (Bassily, Mohri, Suresh): ledgers within plans, a label-DP audit sandwich, utility on
synthetic data at toy sizes (the shortfall against the paper's sample sizes is stated)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from mechanisms.ledger import Ledger
from mechanisms.margin import (
    EfficientLinearLearner,
    KernelLearner,
    LabelDPLearner,
    MarginSelection,
    NeuralNetLearner,
    PureLinearLearner,
    random_fourier_features,
)
from mechanisms.synthetic_margin import margin_sample, rings_sample

M = 400


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(21)
    X, y, w = margin_sample(M, 10, 0.5, rng, label_noise=0.05)
    Xt, yt, _ = margin_sample(4000, 10, 0.5, rng, w=w, label_noise=0.05)
    return X, y, Xt, yt


@pytest.mark.parametrize(
    "learner",
    [PureLinearLearner(1.0, 0.25, 2), NeuralNetLearner(1.0, 0.1), MarginSelection(1.0, 3, 2)],
    ids=["algorithm-1", "neural-net", "margin-selection"],
)
def test_pure_learners_spend_exactly_their_plan(learner, data) -> None:
    X, y, _, _ = data
    rng = np.random.default_rng(1)
    with Ledger() as ledger:
        learner.fit(X, y, rng)
    spent, planned = ledger.check_within(learner.plan(M))
    assert spent == pytest.approx(planned) and planned == pytest.approx(1.0)


def test_pure_linear_and_selection_utility(data) -> None:
    """m = 400, rho = 0.25, k = 2, eps = 1, 5% label noise: test error of the median of 5
    runs below 0.3 (Theorem 3.1's k = O(log(m/beta)/rho^2) ~ 100 cannot be enumerated; with
    k = 2 the projection loses most of the margin)."""
    X, y, Xt, yt = data
    rng = np.random.default_rng(2)
    errs = [PureLinearLearner(1.0, 0.25, 2).fit(X, y, rng).error(Xt, yt) for _ in range(5)]
    assert np.median(errs) < 0.3
    model, rho = MarginSelection(1.0, 3, 2).fit(X, y, rng)
    assert rho in (0.5, 0.25, 0.125) and model.error(Xt, yt) < 0.45


def test_neural_net_utility(data) -> None:
    """Toy network (k = 2, N = 2, cover scale 0.5, ~20k networks), eps = 1, m = 400: median
    error of 3 runs below 0.45 (recorded 0.31; the paper's k, N and cover scale are far
    beyond enumeration)."""
    X, y, Xt, yt = data
    rng = np.random.default_rng(3)
    errs = [NeuralNetLearner(1.0, 0.1).fit(X, y, rng).error(Xt, yt) for _ in range(3)]
    assert np.median(errs) < 0.45


@pytest.mark.slow
def test_efficient_learner_ledger_and_utility(data) -> None:
    """Algorithm 2 (rho = 1, k = 8) with 2 runs of 4000 noisy steps.  Shortfall: BST14's step
    size eta(t) ~ 1/sqrt(t m^2 L^2 + t k sigma^2) is tuned for m^2 = 160000 steps; after 4000
    the iterate is mostly noise, so at eps = 8 the median error over 3 runs is only below 0.5
    (recorded 0.14-0.50).  The same code with the noise made negligible (eps = 1e4) reaches
    < 0.1: the algorithm is right, the sample/step budget is what falls short."""
    X, y, Xt, yt = data
    rng = np.random.default_rng(4)
    learner = EfficientLinearLearner(8.0, 1e-5, 1.0, 8, steps=4000, optimizer="bst14")
    errs = []
    for i in range(3):
        with Ledger() as ledger:
            errs.append(learner.fit(X, y, rng).error(Xt, yt))
        if i == 0:
            spent, planned = ledger.check_within(learner.plan(M), 1e-5)
            assert spent <= planned
    print("Algorithm 2 errors at eps = 8:", errs)
    assert np.median(errs) < 0.5
    free = EfficientLinearLearner(1e4, 1e-5, 0.25, 8, steps=4000, optimizer="bst14").fit(X, y, rng)
    assert free.error(Xt, yt) < 0.1


def test_kernel_learner_separates_rings() -> None:
    """Rings are not linearly separable; RFF (D = 50) + Algorithm 2 with the noise made
    negligible (eps = 1e4) separates them (error < 0.2).  Privately (eps = 8, m = 400, 4000
    steps per run) the error is recorded, not asserted below chance: same shortfall as
    Algorithm 2 (recorded 0.26-0.54)."""
    rng = np.random.default_rng(5)
    X, y = rings_sample(M, rng)
    Xt, yt = rings_sample(3000, rng)
    free = KernelLearner(1e4, 1e-5, 0.5, 50, 20, steps=4000, optimizer="bst14").fit(X, y, rng)
    assert free.error(Xt, yt) < 0.2
    private = (
        KernelLearner(8.0, 1e-5, 0.5, 50, 20, steps=4000, optimizer="bst14")
        .fit(X, y, rng)
        .error(Xt, yt)
    )
    print("kernel learner error at eps = 8:", private)
    assert 0 <= private <= 1


def test_random_fourier_features_approximate_the_kernel() -> None:
    """Theorem 4.1: ||Psi(x)|| = r and <Psi(x), Psi(x')> ~ K(x, x') (D = 4000; Hoeffding
    deviation at alpha = 1e-6 is ~0.06)."""
    rng = np.random.default_rng(6)
    X = rng.uniform(-0.5, 0.5, (6, 2))
    freq = rng.normal(0, 1 / 0.5, (4000, 2))
    P = random_fourier_features(X, freq)
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0)
    K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=2) / (2 * 0.5**2))
    assert np.max(np.abs(P @ P.T - K)) < 0.06


def test_label_dp_audit_and_utility() -> None:
    """Designed pair: same public features, the label of the point nearest the boundary
    flipped.  100k samples, confidence 0.95; lower bound recorded against the upper bound."""
    rng = np.random.default_rng(7)
    X, y, w = margin_sample(10, 2, 0.05, rng)
    y1 = y.copy()
    j = int(np.argmin(np.abs(X @ w)))
    y1[j] = -y1[j]
    learner = LabelDPLearner(1.0, 0.1)
    upper = Accountant().guarantee(learner.plan(10)).epsilon_upper
    result = audit(learner.mechanism(), (X, y), (X, y1), epsilon=1.0, samples=100_000, seed=3)
    print(f"label-DP audit lower {result.epsilon_lower:.3f}, upper {upper:.3f}")
    assert not result.violation and result.epsilon_lower <= upper
    assert result.epsilon_lower > 0.2
    Xb, yb, wb = margin_sample(M, 2, 0.1, rng)
    Xt, yt, _ = margin_sample(3000, 2, 0.1, rng, w=wb)
    with Ledger() as ledger:
        model = learner.fit(Xb, yb, rng)
    ledger.check_within(learner.plan(M))
    assert model.error(Xt, yt) < 0.05


def test_bad_inputs_name_the_parameter() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="y must be"):
        PureLinearLearner(1.0, 0.25, 2).fit(np.zeros((3, 2)), np.array([0, 1, 2]), rng)
    with pytest.raises(ValueError, match="dimension must be"):
        PureLinearLearner(1.0, 0.25, 0).fit(np.eye(3) / 2, np.array([1, -1, 1]), rng)
    with pytest.raises(ValueError, match="rng must be"):
        LabelDPLearner(1.0, 0.1).fit(np.eye(2) / 2, np.array([1, -1]), 0)
