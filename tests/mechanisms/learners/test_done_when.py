"""Issue 35's done-when: on margin-0.1 halfspace data in d = 20 at epsilon 1, delta 1e-6, at
least six halfspace learners reach test error <= 0.15 with their defaults, and a boolean
learner reaches <= 0.20 on a sparse disjunction over 30 boolean features.  The full check
(n = 20,000, every halfspace learner, 3 seeds, the median) is slow (139 s of wall time on the
shared machine); the default suite runs it at n = 2000 on one seed for the six halfspace
learners of under a second of CPU each (kernel-margin, 1.3 s, and private prediction, whose
test rows are each a fresh run of its mechanism, are in the slow check).  Every learner
accepting epsilon = 1 and d = 20 in both regimes is
test_regimes.py::test_every_learner_accepts_epsilon_1_and_20_features."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.learning_curves.data import synthetic
from mechanisms.estimators import ESTIMATORS, DecisionListClassifier
from mechanisms.synthetic_margin import margin_sample

HALFSPACE = [c for c in ESTIMATORS if c.TASK == "halfspace"]
#: the halfspace learners fitting n = 2000, d = 20 in under a second of CPU each
FAST = [c for c in HALFSPACE if c.NAME not in ("kernel-margin", "private-prediction")]


def _halfspace_error(cls, n: int, seed: int, test: int = 2000) -> float:
    X, y, w = margin_sample(n, 20, 0.1, np.random.default_rng([35, seed]))
    Xt, yt, _ = margin_sample(test, 20, 0.1, np.random.default_rng([36, seed]), w=w)
    est = cls(epsilon=1.0, random_state=seed)
    params = est.get_params()
    extra = {"delta": 1e-6} if "delta" in params else {}
    if "fit_intercept" in params:
        extra["fit_intercept"] = False
    est.set_params(**extra).fit(X, y)
    g = est.guarantee_
    assert g.epsilon <= 1.0 and g.delta <= 1e-6 and g.regime == "practical"
    return 1 - est.score(Xt, yt)


def _disjunction_error(n: int, seed: int) -> float:
    data = synthetic("disjunction", 30, test=2000)
    X, y, Xt, yt = data.draw(n, np.random.default_rng([37, seed]))
    est = DecisionListClassifier(epsilon=1.0, delta=1e-6, random_state=seed).fit(X, y)
    assert est.guarantee_.epsilon <= 1.0
    return 1 - est.score(Xt, yt)


def test_done_when_at_small_n() -> None:
    """n = 2000, one seed: the six fast halfspace learners all reach test error <= 0.15
    (recorded: noisy-sgd 0.000, net 0.014, pure 0.016, efficient 0.000, label-dp 0.015,
    margin-selection 0.079; 1.8 CPU s together), and decision-list errs <= 0.20 on the
    disjunction (recorded 0.039; the majority class 0.47).  Without the tuned defaults the
    test fails: with regime="paper" (the defaults before issue 35) the same six err 0.27-0.46
    on these draws (noisy-sgd 0.373, net 0.454, pure 0.456, efficient 0.422, label-dp 0.274,
    margin-selection 0.389)."""
    errors = {cls.NAME: _halfspace_error(cls, 2000, 0) for cls in FAST}
    print(errors)
    assert len(errors) == 6 and all(e <= 0.15 for e in errors.values()), errors
    assert _disjunction_error(2000, 0) <= 0.20


@pytest.mark.slow
def test_done_when_at_n_20000() -> None:
    """n = 20,000, d = 20, epsilon 1, delta 1e-6, seeds 0-2: the median test error of at
    least six halfspace learners <= 0.15 (every halfspace learner is fitted, private
    prediction on 500 test rows); decision-list's median on the disjunction over 30
    features <= 0.20.  Recorded medians: noisy-sgd, net, pure, efficient, label-dp and
    margin-selection 0.000, kernel 0.0035, private-prediction 0.220 (seven of eight);
    decision-list on the disjunction 0.000 (docs/learners.md, "Done when")."""
    medians = {}
    for cls in HALFSPACE:
        test = 500 if cls.PRIVACY == "prediction" else 2000
        medians[cls.NAME] = float(
            np.median([_halfspace_error(cls, 20000, s, test) for s in range(3)])
        )
    disjunction = float(np.median([_disjunction_error(20000, s) for s in range(3)]))
    print(medians, {"decision-list on the disjunction": disjunction})
    assert sum(m <= 0.15 for m in medians.values()) >= 6
    assert disjunction <= 0.20


def test_network_learner_learns_in_20_dimensions() -> None:
    """neural-net-margin's defaults (k = 40 embedding, width 2) on the done-when data at
    n = 2000, d = 20, epsilon 1, seeds 0-2: median test error <= 0.1 (recorded 0.050; at
    n = 20,000 0.002).  The same check fails with the earlier k = 10, width 4 (recorded
    0.153; at n = 20,000 0.146): a 10-dimensional embedding of 20 features loses
    information."""
    from mechanisms.estimators import NeuralNetMarginClassifier

    def median(**params) -> float:
        errors = []
        for seed in range(3):
            X, y, w = margin_sample(2000, 20, 0.1, np.random.default_rng([35, seed]))
            Xt, yt, _ = margin_sample(2000, 20, 0.1, np.random.default_rng([36, seed]), w=w)
            est = NeuralNetMarginClassifier(
                epsilon=1.0, random_state=seed, fit_intercept=False, **params
            ).fit(X, y)
            assert est.guarantee_.epsilon <= 1.0
            assert est.settings_["dimension"] == params.get("dimension", 40)
            errors.append(1 - est.score(Xt, yt))
        return float(np.median(errors))

    assert median() <= 0.1
    assert median(dimension=10, width=4) > 0.1
