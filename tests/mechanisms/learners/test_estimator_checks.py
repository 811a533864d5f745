"""scikit-learn's estimator checks on the private learners' classifiers.

Every check runs; the ones expected to fail are listed with the reason (scikit-learn's
``expected_failed_checks``: they are reported as xfail, and an unexpected pass or a new failure
shows).  The boolean learners are checked behind ``Binarizer`` (their features must be 0/1, and
sklearn's checks draw real features): the Pipeline's own checks on its ``steps`` parameter are
then expected to fail (a scikit-learn Pipeline property, not the learner's).
``private-prediction`` is not run here: each prediction is a fresh random answer (it has no
deterministic ``predict``), which sklearn's invariance checks assume.
"""

from __future__ import annotations

import pytest
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import Binarizer
from sklearn.utils.estimator_checks import parametrize_with_checks

from mechanisms.estimators import (
    DecisionListClassifier,
    DPWinnowClassifier,
    EfficientMarginClassifier,
    KernelMarginClassifier,
    LabelDPClassifier,
    MarginSelectionClassifier,
    NetMarginClassifier,
    NeuralNetMarginClassifier,
    NoisySGDMarginClassifier,
    PureMarginClassifier,
    ThresholdClassifier,
)

#: Why a private learner fails ``check_classifiers_train``: the check asks for training
#: accuracy > 0.83 on ~150 points of 3 blobs; at epsilon = 1 on so few points the exponential
#: mechanism / noisy SGD is far from the best classifier (the learners' utility is tested
#: with stated sizes and thresholds in test_estimators.py).
UTILITY = (
    "a private learner at epsilon 1 on the check's ~150 points does not reach its 0.83 "
    "training accuracy (utility is tested at stated sizes in test_estimators.py)"
)
PIPELINE = "scikit-learn's Pipeline replaces its steps by fitted clones (a Pipeline property)"

FAST = [
    NetMarginClassifier(random_state=0),
    PureMarginClassifier(random_state=0),
    NeuralNetMarginClassifier(random_state=0),
    MarginSelectionClassifier(grid=2, random_state=0),
    NetMarginClassifier(random_state=0, regime="paper"),
    LabelDPClassifier(random_state=0),
    ThresholdClassifier(random_state=0, low=-10.0, high=10.0),
    make_pipeline(Binarizer(), DecisionListClassifier(random_state=0)),
    make_pipeline(Binarizer(), DPWinnowClassifier(random_state=0)),
]

#: Accounting a noisy-SGD plan takes about a second per dataset size: ~25 s per learner
#: (001's Algorithm 2 learners with their default optimiser, Algorithm 4, and one with the
#: BST14 stand-in).
SLOW = [
    NoisySGDMarginClassifier(steps=200, repetitions=1, random_state=0),
    EfficientMarginClassifier(steps=200, repetitions=1, random_state=0),
    EfficientMarginClassifier(optimizer="bst14", steps=200, repetitions=1, random_state=0),
    KernelMarginClassifier(steps=200, repetitions=1, features=10, random_state=0),
]


def expected_failures(estimator: object) -> dict[str, str]:
    """The utility check fails for the paper regimes and DP-Winnow (whose weights barely
    move); the tuned defaults of the selection learners and the greedy decision list (on
    binarized blobs) reach it."""
    piped = isinstance(estimator, Pipeline)
    learner = estimator[-1] if piped else estimator
    weak = getattr(learner, "regime", "practical") == "paper" or isinstance(
        learner, DPWinnowClassifier
    )
    slow = isinstance(learner, (NoisySGDMarginClassifier, EfficientMarginClassifier))
    out = (
        {"check_classifiers_train": UTILITY}
        if weak or slow or isinstance(learner, KernelMarginClassifier)
        else {}
    )
    if piped:
        out["check_estimators_overwrite_params"] = PIPELINE
        out["check_dont_overwrite_parameters"] = PIPELINE
    return out


@parametrize_with_checks(FAST, expected_failed_checks=expected_failures)
def test_sklearn_compatible(estimator, check) -> None:
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(SLOW, expected_failed_checks=expected_failures)
def test_sklearn_compatible_noisy_sgd(estimator, check) -> None:
    check(estimator)
