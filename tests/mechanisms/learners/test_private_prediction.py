"""003 (Dagan, Feldman): the stable learner, Corollary 1 and the Theorem 2 learner (with its
realizable learner A^R): ledgers within plans, an audit sandwich on the prediction, a measured
stability, utility."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import dpaudit.events as ev
from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from mechanisms.ledger import Ledger
from mechanisms.private_prediction import (
    FlippedStableLearner,
    RealizableLearner,
    StableLearner,
    Theorem2Learner,
)
from mechanisms.synthetic_margin import plane_sample


def test_one_prediction_spends_exactly_its_plan() -> None:
    rng = np.random.default_rng(0)
    X, y = plane_sample(300, rng)
    x = np.array([0.1, 0.2])
    for learner in (
        FlippedStableLearner("1/30", 10, "1/10"),
        Theorem2Learner(20, "1/20", "1/10", 10),
    ):
        with Ledger() as ledger:
            learner.predict(X, y, x, rng)
        spent, planned = ledger.check_within(learner.plan(300), 0)
        assert spent == planned
    with Ledger() as ledger:
        StableLearner("1/10", 10).predict(X, y, x, rng)
    assert ledger.entries[0].event == StableLearner("1/10", 10).plan(300)


def test_corollary1_parameters_give_the_claimed_privacy() -> None:
    for eps, alpha, n in (("1", "1/10", 2000), ("1/2", "1/20", 10_000)):
        learner = FlippedStableLearner.from_paper(eps, alpha, n)
        g = Accountant().guarantee(learner.plan(n))
        assert g.epsilon_upper <= float(sympy.Rational(eps))


@pytest.mark.slow
def test_stability_measured_below_accountant() -> None:
    """Empirical |P_S[h(x)=1] - P_S'[h(x)=1]| over 4000 runs each (Hoeffding half-width of
    the difference at alpha = 1e-4: 0.05) stays below the accountant's stability
    n'/n + (1-n'/n) tanh(eps/2).  Pair: n = 12, the changed record moves across the query's side."""
    rng = np.random.default_rng(1)
    X, y = plane_sample(12, rng, label_noise=0.0)
    X1, y1 = X.copy(), y.copy()
    X1[0], y1[0] = -X[0], 1 - y[0]
    x = np.array([0.05, -0.02])
    learner = StableLearner("1/2", 4)
    stmt = Accountant().statements(learner.plan(12))[0]
    runs = 4000
    p0 = np.mean([learner.predict(X, y, x, rng) for _ in range(runs)])
    p1 = np.mean([learner.predict(X1, y1, x, rng) for _ in range(runs)])
    assert abs(p0 - p1) <= float(stmt.delta) + 0.05
    assert float(stmt.delta) == pytest.approx(4 / 12 + (8 / 12) * math.tanh(0.25))


def _corollary1_audit(samples: int) -> tuple[float, float]:
    """Designed pair: n = 2, n' = 1, EM privacy 4, flip 1/20; the neighbour flips record 0's
    label and the query is record 0's point.  When record 0 is the subsample the candidates
    are the two labelings of it and the EM follows its label, so the prediction at the query
    moves from ~0.94 to ~0.48 (log-ratio ~2.1 against the accountant's 2.93).  Confidence
    0.95.  (A pair of 10 records with a moved point changes the output by < 0.01: no power.)"""
    X = np.array([[1.0, 0.2], [-1.0, 0.3]])
    y = np.array([1, 0])
    y1 = np.array([0, 0])
    learner = FlippedStableLearner(4, 1, "1/20")
    upper = Accountant().guarantee(learner.plan(2)).epsilon_upper
    result = audit(learner.mechanism(X[0]), (X, y), (X, y1), epsilon=upper, samples=samples, seed=5)
    print(f"Corollary 1 audit lower {result.epsilon_lower:.3f}, upper {upper:.3f}")
    assert not result.violation
    assert result.epsilon_lower <= upper
    return result.epsilon_lower, upper


def test_corollary1_audit_below_accountant() -> None:
    """6000 samples per dataset (1.3 ms each: every run builds its own H_T): the certified
    lower bound is already positive; the slow variant uses 60k and must certify > 1.5."""
    lower, _ = _corollary1_audit(6000)
    assert lower > 0


@pytest.mark.slow
def test_corollary1_audit_below_accountant_60k() -> None:
    lower, _ = _corollary1_audit(60_000)
    assert lower > 1.5


@pytest.mark.slow
def test_corollary1_utility_at_the_papers_scale() -> None:
    """Corollary 1 at eps = 1, alpha = 0.1, n = 3000 (O~(d/(eps alpha^2)) = 200 x log
    factors), 10% label noise (best error 0.1): error over 400 test queries <= 0.1 + 2 alpha
    (flip alpha plus the excess alpha of the stable learner) + 0.05 sampling slack."""
    rng = np.random.default_rng(3)
    X, y = plane_sample(3000, rng, label_noise=0.1)
    Xt, yt = plane_sample(400, rng, label_noise=0.1)
    learner = FlippedStableLearner.from_paper("1", "1/10", 3000)
    preds = np.array([learner.predict(X, y, x, rng) for x in Xt])
    assert np.mean(preds != yt) <= 0.1 + 0.2 + 0.05


def test_theorem2_privacy_is_asymptotic() -> None:
    """Lemma 8 with explicit constants (4 e^{k(2 beta + eps_R)}, epsilon-net failure bound):
    at n = 10^4 the bound is far above 1, at n = 10^8 with n' = 10^4 it is O(1).  Recorded to
    show the paper's O(eps) guarantee needs very large n."""
    small = Theorem2Learner(50, "1/20", "1/10", 5)
    big = Theorem2Learner(10_000, "1/20", "1/10", 5)
    from dpaudit.events.stability import LabelFlipped

    def inner_eps(learner, n):
        inner = learner.plan(n)
        assert isinstance(inner, LabelFlipped)
        return Accountant().statements(inner.event)[0]

    s_small = inner_eps(small, 10_000)
    s_big = inner_eps(big, 10**8)
    assert float(s_small.delta) == pytest.approx(50 / 10_000)  # net bound trivial
    assert float(s_big.epsilon) < 1.5 and float(s_big.delta) < 1e-3


def test_theorem2_spends_its_two_primitives_as_the_lemma8_event() -> None:
    """The selection and A^R's vote are the two primitives that run; the ledger holds them
    as the one Lemma 8 event of the plan (not composed, which would double count), and a
    run of the bare realizable learner records its vote's exponential mechanism."""
    rng = np.random.default_rng(5)
    X, y = plane_sample(200, rng)
    learner = Theorem2Learner(20, "1/40", "1/10", 8)
    with Ledger() as ledger:
        learner.predict(X, y, X[0], rng)
    assert [e.event for e in ledger.entries] == [learner.plan(200)]
    assert learner.plan(200).event.relabel == ev.Exponential(
        sympy.Rational(1, 5), 1, relation=ev.Relation.REPLACE_ONE
    )
    with Ledger() as ledger:
        RealizableLearner(8, "1/2").predict(X, y, X[0], rng)
    assert [e.event for e in ledger.entries] == [RealizableLearner(8, "1/2").plan()]


def test_realizable_learner_votes_are_consistent_hypotheses() -> None:
    """On realizable data every block's hypothesis is consistent with its block, so at a
    point deep inside one side all ``parts`` votes agree with the target."""
    rng = np.random.default_rng(6)
    X, y = plane_sample(400, rng, label_noise=0.0)
    learner = RealizableLearner(10, 1)
    w = np.array([math.cos(0.7), math.sin(0.7)])
    assert learner.votes(X, y, 0.9 * w, rng) == 10
    assert learner.votes(X, y, -0.9 * w, rng) == 0


#: Theorem 2 utility check: n = 2000 records (10% label noise: Bayes error 0.1), 200 test
#: queries, n' = 40, eta = 1/400 (A^R privacy 1/(eta n) = 1/5 over 40 blocks of 50, selection
#: privacy 2/5), flip 1/20.  Tolerance: Bayes 0.1 + flip 0.05 + 0.1 excess (Lemma 9's O(alpha)
#: with alpha = 1/40 made explicit as 4 alpha) = 0.25; measured ~0.14, and the sampling
#: standard deviation over 200 queries is ~0.025.
THEOREM2_N, THEOREM2_QUERIES, THEOREM2_TOLERANCE = 2000, 200, 0.25


def _theorem2_error(net_radius: str) -> float:
    rng = np.random.default_rng(4)
    X, y = plane_sample(THEOREM2_N, rng, label_noise=0.1)
    Xt, yt = plane_sample(THEOREM2_QUERIES, rng, label_noise=0.1)
    learner = Theorem2Learner(40, net_radius, "1/20", 40)
    preds = np.array([learner.predict(X, y, x, rng) for x in Xt])
    return float(np.mean(preds != yt))


@pytest.mark.slow
def test_theorem2_utility_on_synthetic_data() -> None:
    """The check passes at eta = 1/400 and fails at eta = 1/2 (privacy 1/200 of it: the
    selection and the vote are then nearly uniform), so it can fail."""
    assert _theorem2_error("1/400") <= THEOREM2_TOLERANCE
    assert _theorem2_error("1/2") > THEOREM2_TOLERANCE


def test_bad_inputs_name_the_parameter() -> None:
    rng = np.random.default_rng(0)
    X, y = plane_sample(10, rng)
    with pytest.raises(ValueError, match="sample must be an integer in"):
        StableLearner("1/2", 10).predict(X, y, np.zeros(2), rng)
    with pytest.raises(ValueError, match="x must be a point"):
        StableLearner("1/2", 3).predict(X, y, np.zeros(3), rng)
    with pytest.raises(ValueError, match="flip must be in"):
        FlippedStableLearner("1/2", 3, "0.6")
    with pytest.raises(ValueError, match="y must be"):
        StableLearner("1/2", 3).predict(X, 2 * y - 1, np.zeros(2), rng)
    with pytest.raises(ValueError, match="parts must be an integer >= 1"):
        RealizableLearner(0, 1)
    with pytest.raises(ValueError, match=r"parts must be in \[1, 10\]"):
        RealizableLearner(11, 1).predict(X, y, np.zeros(2), rng)
    with pytest.raises(ValueError, match="net_radius must be in"):
        Theorem2Learner(3, 2, "1/10", 2)
