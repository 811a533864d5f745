"""The learners' practical regimes (their defaults, ``regime="practical"``): privacy still
accounted (the plan certified within the request, the ledger equal to the plan, a broken
variant refused or caught), utility at the learning curves' sizes, and DP-Winnow's tie
convention; the streaming exponential mechanism the one-round network regime samples with
(equal to the one-shot sampler, its law, its memory bound)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sympy
from scipy.stats import norm

from dpaudit import events as ev
from dpaudit.accountant import Accountant
from dpaudit.learning_curves.data import breast_cancer, synthetic
from mechanisms import margin_nonlinear
from mechanisms.calibrated_gd import CalibratedGD
from mechanisms.estimators import (
    DPWinnowClassifier,
    EfficientMarginClassifier,
    KernelMarginClassifier,
    MarginSelectionClassifier,
    NetMarginClassifier,
    NeuralNetMarginClassifier,
    NoisySGDMarginClassifier,
    PureMarginClassifier,
)
from mechanisms.halfspaces import NetMarginLearner
from mechanisms.ledger import Ledger, LedgerExceededError
from mechanisms.margin import MarginSelection, NeuralNetLearner
from mechanisms.margin_linear import _em_plan
from mechanisms.noisy_sgd import MarginLoss
from mechanisms.primitives import ExponentialMechanism, GaussianMechanism

REGIME_LEARNERS = [
    NoisySGDMarginClassifier,
    EfficientMarginClassifier,
    KernelMarginClassifier,
    NetMarginClassifier,
    PureMarginClassifier,
    MarginSelectionClassifier,
    NeuralNetMarginClassifier,
]


def _regime(cls):
    """The practical regime's parameters: the defaults (nothing to set)."""
    assert cls().regime == "practical"
    return {}


def _gaussian_delta(mu: float, eps: float) -> float:
    """The exact delta(eps) of a mu-GDP mechanism (Balle, Wang 2018, Theorem 8): the oracle
    the calibration is checked against, independent of the accountant."""
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def test_calibrated_sigma_is_certified_and_matches_the_gaussian_closed_form() -> None:
    """T Gaussian steps of sensitivity 2L/n compose to one Gaussian of sensitivity
    sqrt(T) 2L/n (Dong-Roth-Su 2019, Cor. 3.3): the calibrated sigma's mu must meet delta(0.9)
    <= 1e-6 by Balle-Wang's formula, and 1% less noise must not (the calibration is tight)."""
    gd = CalibratedGD(0.9, 1e-6, MarginLoss(0.1), steps=50)
    n = 500
    sigma = float(gd.sigma(n))
    g = Accountant().guarantee(gd.plan(n), 1e-6)
    assert g.epsilon_upper <= 0.9 and g.delta_upper <= 1e-6
    mu = math.sqrt(50) * float(gd.sensitivity(n)) / sigma
    assert _gaussian_delta(mu, 0.9) <= 1e-6
    assert _gaussian_delta(mu * 1.01, 0.9) > 1e-6


def test_calibrated_gd_records_exactly_its_plan() -> None:
    """The ledger of a run equals the declared plan (T releases of the Gaussian primitive);
    with R = 2 runs the plan adds the exponential mechanism and is still within the request."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    for repetitions in (1, 2):
        gd = CalibratedGD(0.9, 1e-6, MarginLoss(0.2), steps=20, repetitions=repetitions)
        with Ledger() as ledger:
            gd.fit(X, y, rng)
        assert ledger.event() == gd.plan(200)
        assert Accountant().guarantee(gd.plan(200), 1e-6).epsilon_upper <= 0.9


def _margin_data(n: int, seed: int):
    data = synthetic("halfspace", 10, test=1000)
    return data.draw(n, np.random.default_rng(seed))


def test_noisy_sgd_practical_regime_learns_at_n_1000_and_is_accounted() -> None:
    """000's learner in its practical regime at n = 1000, epsilon = 0.9, delta = 1e-6 on the
    curves' synthetic data (R^10, margin 0.1), seed 0: test error <= 0.15 (recorded 0.05;
    the majority class errs 0.5; the paper's optimiser 0.4 at n = 3000); the accounted
    guarantee is within the request and the plan is the calibrated Gaussian composition."""
    X, y, Xt, yt = _margin_data(1000, 0)
    est = NoisySGDMarginClassifier(epsilon=0.9, delta=1e-6, random_state=0, fit_intercept=False)
    est.set_params(**_regime(NoisySGDMarginClassifier)).fit(X, y)
    error = 1 - est.score(Xt, yt)
    print("noisy-sgd-margin practical regime test error", error)
    assert error <= 0.15
    g = est.guarantee_
    assert g.epsilon <= 0.9 and g.delta <= 1e-6 and g.spent_epsilon <= g.epsilon
    assert "SelfComposed(Gaussian(" in g.plan and "SampledWithoutReplacement" not in g.plan


def test_a_regime_with_less_noise_than_calibrated_is_refused(monkeypatch) -> None:
    """The broken variant 'accountant bypassed' (sigma halved after calibration): the plan
    it declares is accounted above the request, so the fit is refused and nothing runs."""
    X, y, _, _ = _margin_data(300, 1)
    calibrated = CalibratedGD.sigma
    monkeypatch.setattr(CalibratedGD, "sigma", lambda self, n: calibrated(self, n) / 2)
    est = NoisySGDMarginClassifier(epsilon=0.9, random_state=0, fit_intercept=False)
    est.set_params(**_regime(NoisySGDMarginClassifier))
    with pytest.raises(ValueError, match="epsilon: the noisy-sgd-margin learner's plan"):
        est.fit(X, y)
    assert not hasattr(est, "guarantee_")


def test_a_run_noisier_on_paper_than_in_fact_is_caught_by_the_ledger(monkeypatch) -> None:
    """The other broken variant: the plan is calibrated but the run releases with half the
    noise; the ledger records Gaussian(sigma/2), its accounted epsilon exceeds the plan's,
    and the fit raises rather than return a model."""
    X, y, _, _ = _margin_data(300, 2)
    real = GaussianMechanism.__init__

    def halved(self, sigma, sensitivity=1, *, relation=None):
        real(self, sympy.nsimplify(sigma) / 2, sensitivity, relation=relation)

    monkeypatch.setattr(GaussianMechanism, "__init__", halved)
    est = EfficientMarginClassifier(epsilon=0.9, random_state=0, fit_intercept=False)
    est.set_params(**_regime(EfficientMarginClassifier))
    with pytest.raises(LedgerExceededError, match="the run spent epsilon"):
        est.fit(X, y)


def test_random_candidates_keep_the_plan_and_are_drawn_before_the_data() -> None:
    """Net-margin's regime declares the same plan as 000's net (one Exponential(eps, 1/n)),
    and its candidates depend only on the learner's randomness, never on the data."""
    net = NetMarginLearner(0.9, 0.3, 10, candidates=500)
    assert net.plan(100) == NetMarginLearner(0.9, 0.3, 2).plan(100)
    a = net.net(np.random.default_rng(7))
    b = net.net(np.random.default_rng(7))
    assert a.shape == (500, 10) and np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    with pytest.raises(ValueError, match="rng must be a numpy Generator"):
        net.net()
    with pytest.raises(ValueError, match=r"candidates must be an integer in \[1, 1000000\]"):
        NetMarginClassifier(candidates=0, dimension=10).fit(*_margin_data(50, 0)[:2])


def test_dp_winnow_ties_predict_the_positive_class() -> None:
    """004's convention sgn(0) = +1: before any update w~ is uniform, every embedded score
    is exactly 0 (x_hat holds z and -z), and every row is predicted positive.  The float
    score this replaces was the sign of rounding noise (+-1e-17), predicting the negative
    class on about half the rows (error 0.67 against the majority class's 0.25 on the
    curves' synthetic data)."""
    data = synthetic("boolean", 10, test=1000)
    X, y, Xt, yt = data.draw(2000, np.random.default_rng(0))
    est = DPWinnowClassifier(epsilon=0.9, random_state=1).fit(X, y)
    assert np.allclose(est.model_, est.model_[0])  # no update at these n (the notes say why)
    assert np.all(est.decision_function(Xt) == 0.5)
    assert np.all(est.predict(Xt) == 1)
    assert 1 - est.score(Xt, yt) == pytest.approx(np.mean(yt == 0))
    # a non-uniform released w~ scores by its integer counts
    est.model_ = np.zeros_like(est.model_)
    est.model_[0] = 1.0  # all m samples on z_0: predicts x0
    assert np.array_equal(est.predict(Xt), Xt[:, 0].astype(int))


# ---- the streaming exponential mechanism and the random-network regime ------------------


def test_streamed_selection_equals_the_one_shot_sampler_for_the_same_seed() -> None:
    """select_stream over any partition of the scores draws the same Gumbel variates as
    select over their concatenation (NumPy draws them one after another), so for the same
    generator state it returns the same index; it records one run."""
    scores = np.random.default_rng(0).uniform(-1, 0, 97)
    em = ExponentialMechanism(0.9, sympy.Rational(1, 50))
    for seed in range(20):
        expected = em.select(scores, np.random.default_rng(seed))
        for cuts in ([], [1], [13, 50], list(range(1, 97))):
            chunks = np.split(scores, cuts)
            with Ledger() as ledger:
                got = em.select_stream(iter(chunks), np.random.default_rng(seed))
            assert got == expected
            assert ledger.event() == em.event
    with pytest.raises(ValueError, match="chunks must yield at least one chunk"):
        em.select_stream(iter([]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="scores must be finite"):
        em.select_stream(iter([np.array([0.0, np.nan])]), np.random.default_rng(0))


def _chi_square_p(em: ExponentialMechanism, scores: np.ndarray, draws: int, seed: int):
    from scipy.stats import chisquare

    rng = np.random.default_rng(seed)
    chunks = [scores[:2], scores[2:5], scores[5:]]
    counts = np.bincount([em.select_stream(iter(chunks), rng) for _ in range(draws)], minlength=6)
    exact = ExponentialMechanism(0.9, sympy.Rational(1, 8))  # the law under test
    probs = np.array([float(p) for p in exact.probabilities(scores)])
    return chisquare(counts, draws * probs).pvalue


@pytest.mark.slow
def test_streamed_selection_has_the_exponential_mechanisms_law() -> None:
    """Chi-square goodness of fit of 10,000 streamed draws (6 candidates in chunks of 2, 3,
    1; epsilon 0.9, sensitivity 1/8, so inverse temperature 3.6) against the closed form
    exp(eps u / (2 Delta)) / sum (mpmath): not rejected at alpha = 0.001 (fixed seed).  The
    broken sampler with the wrong temperature (eps u / Delta, the monotone form) is
    rejected at the same alpha and sample size (p below 1e-12)."""
    scores = np.array([0.0, -0.05, -0.1, -0.2, -0.3, -0.45])
    good = ExponentialMechanism(0.9, sympy.Rational(1, 8))
    assert _chi_square_p(good, scores, 10_000, 1) > 0.001
    broken = ExponentialMechanism(0.9, sympy.Rational(1, 8), monotone=True)
    assert _chi_square_p(broken, scores, 10_000, 1) < 1e-12


def _network_data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)


def test_random_networks_keep_the_plan_and_the_ledger_equals_it() -> None:
    """The regime declares the cover's plan (one Exponential(eps, 1/m), post-processed); a
    fit records exactly that exponential mechanism, once, whatever the chunk size."""
    X, y = _network_data(200, 0)
    cover = NeuralNetLearner(0.9, 0.1)
    for chunk in (None, 7):
        learner = NeuralNetLearner(0.9, 0.05, 4, 3, kappa=3.0, candidates=300, chunk=chunk)
        assert learner.plan(200) == cover.plan(200)
        with Ledger() as ledger:
            learner.fit(X, y, np.random.default_rng(1))
        assert ledger.event() == learner.plan(200).event
    est = NeuralNetMarginClassifier(epsilon=0.9, random_state=0)
    est.set_params(**{**_regime(NeuralNetMarginClassifier), "candidates": 500}).fit(X, y)
    g = est.guarantee_
    assert g.epsilon <= 0.9 and g.spent_epsilon <= g.epsilon
    assert "Exponential(" in g.ledger and "SelfComposed" not in g.ledger


def test_chunked_scoring_selects_the_same_network_as_unchunked() -> None:
    """The candidates come from a seed drawn before the data are read, one row of normals
    each, so the stream is the same in chunks of 1, 7, 64 or all 300 at once; with the same
    generator the selected network is the same.  The network re-drawn by index is the one
    drawn in the stream (data-independent: the same for other data)."""
    X, y = _network_data(150, 2)
    models = [
        NeuralNetLearner(0.9, 0.05, 3, 2, candidates=300, chunk=c).fit(
            X, y, np.random.default_rng(5)
        )
        for c in (1, 7, 64, 300)
    ]
    for model in models[1:]:
        assert np.array_equal(model.W1, models[0].W1) and np.array_equal(model.w2, models[0].w2)
    learner = NeuralNetLearner(0.9, 0.05, 3, 2, candidates=300)
    W1, w2 = margin_nonlinear.random_networks(300, 3, 2, 1.0, np.random.default_rng(11))
    for i in (0, 150, 299):
        a, b = learner.network(11, i)
        assert np.array_equal(a, W1[i]) and np.array_equal(b, w2[i])
    assert np.allclose(np.linalg.norm(W1.reshape(300, -1), axis=1), 1.0)
    assert np.allclose(np.linalg.norm(w2, axis=1), 1.0)
    with pytest.raises(ValueError, match=r"index must be an integer in \[0, 299\], got 300"):
        learner.network(11, 300)


def test_random_network_memory_is_bounded_by_the_chunk() -> None:
    """5,000 networks of width 4 on m = 1,000 rows: scored at once they hold 5000 x 1000 x 4
    activations (160 MB an array; traced peak measured 321 MB with chunk = 5000); in chunks
    of 100 (3.2 MB an array) the traced peak stays under 16 MB (measured 6.5 MB).  The
    default chunk keeps chunk x m x width within NETWORK_BLOCK."""
    import tracemalloc

    X, y = _network_data(1000, 3)
    learner = NeuralNetLearner(0.9, 0.05, 5, 4, candidates=5000, chunk=100)
    tracemalloc.start()
    try:
        learner.fit(X, y, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16e6, peak
    auto = NeuralNetLearner(0.9, 0.05, 5, 4, candidates=5000)
    for m in (10, 1000, 3000, 10**6):
        assert auto.chunk_size(m) * m * 4 <= max(margin_nonlinear.NETWORK_BLOCK, m * 4)


def test_a_network_regime_above_the_request_is_refused_and_overspending_is_caught(
    monkeypatch,
) -> None:
    """Broken variants: (1) a plan that declares twice the budget is accounted above the
    request and refused before anything runs; (2) a run whose exponential mechanism spends
    2 eps while the plan declares eps is caught by the ledger check."""
    X, y = _network_data(200, 4)
    params = {**_regime(NeuralNetMarginClassifier), "candidates": 200}
    with monkeypatch.context() as patch:
        patch.setattr(NeuralNetLearner, "plan", lambda self, m: _em_plan(2 * self.epsilon, m))
        est = NeuralNetMarginClassifier(epsilon=0.9, random_state=0).set_params(**params)
        with pytest.raises(ValueError, match="epsilon: the neural-net-margin learner's plan"):
            est.fit(X, y)
        assert not hasattr(est, "guarantee_")
    real = margin_nonlinear._em
    monkeypatch.setattr(margin_nonlinear, "_em", lambda e, m: real(2 * e, m))
    est = NeuralNetMarginClassifier(epsilon=0.9, random_state=0).set_params(**params)
    with pytest.raises(LedgerExceededError, match="the run spent epsilon"):
        est.fit(X, y)


def test_random_network_selection_audit_sandwich_and_a_broken_variant_caught(
    monkeypatch,
) -> None:
    """The auditable form of the regime (fixed embedding and candidate seed: both
    data-independent) on a designed pair (8 rows, one label flipped), epsilon 1, 100,000
    samples, confidence 0.95: the certified lower bound (recorded 0.72) stays below the
    accounted 1 with no violation; the broken variant whose exponential mechanism runs at
    2 eps is flagged (lower bound recorded 1.74 > 1)."""
    from dpaudit.audit import audit
    from mechanisms.halfspaces import jl_matrix

    rng = np.random.default_rng(7)
    X = rng.standard_normal((8, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1, -1)
    y1 = y.copy()
    y1[0] = -y1[0]
    learner = NeuralNetLearner(1.0, 0.05, 3, 2, kappa=3.0, candidates=40)
    phi0 = jl_matrix(3, 3, np.random.default_rng(1))
    upper = Accountant().guarantee(learner.plan(8)).epsilon_upper
    result = audit(
        learner.mechanism(phi0, seed=11), (X, y), (X, y1), epsilon=1.0, samples=100_000, seed=3
    )
    assert not result.violation and 0.3 < result.epsilon_lower <= upper
    real = margin_nonlinear._em
    monkeypatch.setattr(margin_nonlinear, "_em", lambda e, m: real(2 * e, m))
    broken = audit(
        learner.mechanism(phi0, seed=11), (X, y), (X, y1), epsilon=1.0, samples=100_000, seed=3
    )
    assert broken.violation and broken.epsilon_lower > 1.0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"candidates": 0}, r"candidates must be an integer in \[1, 1000000\], got 0"),
        ({"candidates": 10, "width": 65}, r"width must be an integer in \[1, 64\], got 65"),
        (
            {"candidates": "net", "dimension": 2, "width": 4},
            r"width must be an integer in \[1, 3\], got 4",
        ),
        ({"candidates": 10, "kappa": 0.0}, r"kappa must be a number in \(0, inf\), got 0.0"),
        ({"candidates": 10, "dimension": 1001}, r"dimension must be an integer in \[1, 1000\]"),
    ],
)
def test_network_regime_bad_input_names_the_parameter(params, message) -> None:
    X, y = _network_data(30, 5)
    with pytest.raises(ValueError, match=message):
        NeuralNetMarginClassifier(**params).fit(X, y)


def test_network_learner_bad_chunk_names_the_parameter() -> None:
    X, y = _network_data(30, 5)
    with pytest.raises(ValueError, match=r"chunk must be an integer in \[1, inf\), got 0"):
        NeuralNetLearner(0.9, 0.1, candidates=10, chunk=0).fit(X, y, np.random.default_rng(0))
    with pytest.raises(ValueError, match="seed must be an integer with candidates set"):
        NeuralNetLearner(0.9, 0.1, candidates=10).mechanism(np.eye(2, 5))


# ---- margin selection's regime ------------------------------------------------------------


def test_margin_selection_regime_keeps_appendix_fs_plan_and_its_ledger_equals_it() -> None:
    """The margin grid and the penalty are fixed before the data are read: the regime's plan
    is the default's (grid EMs at eps/(2 grid), one at eps/2, all of sensitivity 1/m), the
    claim's symbolic plan is unchanged, and a fit records exactly the plan."""
    e, m = sympy.Symbol("epsilon", positive=True), sympy.Symbol("m", positive=True)
    replace = ev.Relation.REPLACE_ONE
    em = ev.Exponential(e / 8, 1 / m, relation=replace)
    appendix_f = ev.Composed(
        [ev.SelfComposed(ev.PostProcessed(em), 4), ev.Exponential(e / 2, 1 / m, relation=replace)]
    )
    assert MarginSelection(e, 4, 2).plan(m) == appendix_f
    regime = MarginSelection(0.9, 3, 10, candidates=100, penalty=0.1, largest_margin=0.2)
    assert regime.plan(300) == MarginSelection(0.9, 3, 2).plan(300)
    assert regime.rhos() == [0.2, 0.1, 0.05]
    assert MarginSelection(0.9, 3, 2).rhos() == [0.5, 0.25, 0.125]
    X, y, _, _ = _margin_data(300, 3)
    with Ledger() as ledger:
        regime.fit(X, y, np.random.default_rng(0))
    inner = ledger.event()
    assert Accountant().guarantee(inner).epsilon_upper <= 0.9
    assert Accountant().guarantee(regime.plan(300)).epsilon_upper <= 0.9
    est = MarginSelectionClassifier(epsilon=0.9, random_state=0, fit_intercept=False)
    est.set_params(**{**_regime(MarginSelectionClassifier), "candidates": 200}).fit(X, y)
    assert est.guarantee_.epsilon <= 0.9 and est.rho_ in (0.2, 0.1, 0.05)


def test_margin_selection_share_moves_budget_but_the_total_stays_epsilon() -> None:
    """selection_share s: grid EMs at (1 - s) eps / grid and one at s eps; basic composition
    sums to exactly eps (exact rationals), and a float share is read as its decimal."""
    plan = MarginSelection(sympy.Rational(9, 10), 3, 2, selection_share=0.2).plan(100)
    each = plan.events[0].event.event.epsilon
    final = plan.events[1].epsilon
    assert each == sympy.Rational(6, 25) and final == sympy.Rational(9, 50)
    assert 3 * each + final == sympy.Rational(9, 10)
    assert Accountant().guarantee(plan).epsilon_upper == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"penalty": -1.0}, r"penalty must be a number in \[0, inf\), got -1.0"),
        ({"largest_margin": 2.0}, r"largest_margin must be a number in \(0, 1\], got 2.0"),
        ({"selection_share": 1.0}, r"selection_share must be a number in \(0, 1\), got 1.0"),
    ],
)
def test_margin_selection_bad_input_names_the_parameter(params, message) -> None:
    X, y, _, _ = _margin_data(30, 0)
    with pytest.raises(ValueError, match=message):
        MarginSelectionClassifier(**params).fit(X, y)


# ---- the learning curves' sizes (slow) ---------------------------------------------------


def _curve_errors(cls, dataset, n: int, seeds: int = 3) -> tuple[float, float]:
    """Mean test error of the class's practical regime and the majority-class error, on the
    curves' draws (seeds [0, k, s]) at epsilon 0.9, delta 1e-6."""
    errors, majority = [], []
    for s in range(seeds):
        rng = np.random.default_rng([0, 0 if dataset.name.startswith("margin") else 1, s])
        X, y, Xt, yt = dataset.draw(n, rng)
        majority.append(min(np.mean(yt == v) for v in np.unique(y)))
        est = cls(epsilon=0.9, random_state=int(rng.integers(2**31 - 1)))
        extra = {"feature_norm": dataset.feature_norm, "fit_intercept": dataset.fit_intercept}
        if "delta" in est.get_params():
            extra["delta"] = 1e-6
        est.set_params(**extra, **_regime(cls))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        assert est.guarantee_.epsilon <= 0.9
        errors.append(1 - est.score(Xt, yt))
    return float(np.mean(errors)), float(np.mean(majority))


@pytest.mark.slow
@pytest.mark.parametrize("cls", REGIME_LEARNERS, ids=lambda c: c.NAME)
def test_practical_regime_learns_on_the_curves_synthetic_data(cls) -> None:
    """At n = 3000, epsilon = 0.9 (3 seeds, margin-0.1 data in R^10): mean test error at most
    half the majority-class error (0.49); the paper regime: 0.26-0.46."""
    error, majority = _curve_errors(cls, synthetic("halfspace", 10, test=1000), 3000)
    print(cls.NAME, "practical regime, synthetic:", error, "majority", majority)
    assert error <= majority / 2


#: docs/learners.md ("What the committed curves show"): with the defaults tuned for d = 20,
#: kernel-margin stays near the majority class on breast cancer at n = 398 (its calibrated
#: Gaussian noise over 400 random-feature dimensions dominates); measured 0.353 against the
#: majority's 0.361 in the slow suite.
_BREAST_CANCER = [
    pytest.param(
        c,
        marks=pytest.mark.xfail(
            reason="kernel-margin stays near the majority class on breast cancer at n = 398",
            strict=False,
        ),
    )
    if c is KernelMarginClassifier
    else c
    for c in REGIME_LEARNERS
]


@pytest.mark.slow
@pytest.mark.parametrize("cls", _BREAST_CANCER, ids=lambda c: c.NAME)
def test_practical_regime_beats_the_majority_class_on_breast_cancer(cls) -> None:
    """At n = 398, epsilon = 0.9 (3 seeds): mean test error at least 0.1 below the
    majority-class error (0.36); the paper regime: 0.26-0.58 (margin selection's 0.361, the
    majority class)."""
    error, majority = _curve_errors(cls, breast_cancer("halfspace"), 398)
    print(cls.NAME, "practical regime, breast-cancer:", error, "majority", majority)
    assert error <= majority - 0.1


def test_margin_selection_refuses_a_bad_penalty_before_any_learner_runs() -> None:
    """The low-level learner (not only the estimator) checks the penalty up front: a bad one
    leaves the ledger empty (nothing half recorded)."""
    X, y, _, _ = _margin_data(30, 0)
    learner = MarginSelection(0.9, 2, 2, candidates=20, penalty=float("nan"))
    with Ledger() as ledger:
        with pytest.raises(ValueError, match=r"penalty must be a number in \[0, inf\)"):
            learner.fit(X, y, np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"penalty must be a number in \[0, inf\)"):
            learner.mechanism([np.eye(2, X.shape[1])] * 2)
    assert len(ledger) == 0
