"""Issue 35's done-when: on margin-0.1 halfspace data in d = 20 at epsilon 1, delta 1e-6, at
least six halfspace learners reach test error <= 0.15 with their defaults, and a boolean
learner reaches <= 0.20 on a sparse disjunction over 30 boolean features.  The full check
(n = 20,000, every learner, 3 seeds, the median) is slow; the default suite runs it at
n = 2000 on one seed (the halfspace learners other than private prediction, whose 1000
predictions are each a fresh run of its mechanism)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.learning_curves.data import synthetic
from mechanisms.estimators import ESTIMATORS, DecisionListClassifier
from mechanisms.synthetic_margin import margin_sample

HALFSPACE = [c for c in ESTIMATORS if c.TASK == "halfspace"]


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
    """n = 2000, one seed: at least six of the seven halfspace learners checked reach test
    error <= 0.15 (recorded: noisy-sgd 0.000, net 0.019, pure 0.024, efficient 0.000,
    kernel 0.060, label-dp 0.029, margin-selection 0.1-0.2), and decision-list errs
    <= 0.20 on the disjunction (recorded 0.01; the majority class 0.49).  Before the tuned
    defaults every halfspace learner was at 0.28-0.55 here."""
    errors = {
        cls.NAME: _halfspace_error(cls, 2000, 0) for cls in HALFSPACE if cls.PRIVACY != "prediction"
    }
    print(errors)
    assert sum(e <= 0.15 for e in errors.values()) >= 6
    assert _disjunction_error(2000, 0) <= 0.20


@pytest.mark.slow
def test_done_when_at_n_20000() -> None:
    """n = 20,000, d = 20, epsilon 1, delta 1e-6, seeds 0-2: the median test error of at
    least six halfspace learners <= 0.15 (every halfspace learner is fitted, private
    prediction on 500 test rows); decision-list's median on the disjunction over 30
    features <= 0.20."""
    medians = {}
    for cls in HALFSPACE:
        test = 500 if cls.PRIVACY == "prediction" else 2000
        medians[cls.NAME] = float(
            np.median([_halfspace_error(cls, 20000, s, test) for s in range(3)])
        )
    print(medians)
    assert sum(m <= 0.15 for m in medians.values()) >= 6
    assert np.median([_disjunction_error(20000, s) for s in range(3)]) <= 0.20
