"""The learners of the source documents as scikit-learn classifiers.

Each class wraps one learner of :mod:`mechanisms` (its algorithm, plan and ledger are
unchanged) in the interface of :class:`~mechanisms.estimators.base.PrivateClassifier`:
``fit`` / ``predict`` / ``score`` / ``get_params`` / ``set_params``, ``random_state``, any two
class labels, privacy parameters as constructor arguments, and after fit ``guarantee_`` (the
accounted upper bounds of what the run spent, checked against its plan).

:func:`register` (the entry point of the group ``dpaudit.learners``) registers them with
:mod:`dpaudit.learners`, which ``dpaudit learn`` reads.
"""

from __future__ import annotations

from dpaudit.learners import LearnerInfo, register_learner
from mechanisms.estimators.base import PrivateClassifier
from mechanisms.estimators.boolean import DecisionListClassifier, DPWinnowClassifier
from mechanisms.estimators.halfspace import (
    LabelDPClassifier,
    NetMarginClassifier,
    PureMarginClassifier,
)
from mechanisms.estimators.halfspace_gd import (
    EfficientMarginClassifier,
    KernelMarginClassifier,
    NoisySGDMarginClassifier,
)
from mechanisms.estimators.halfspace_selection import (
    MarginSelectionClassifier,
    NeuralNetMarginClassifier,
)
from mechanisms.estimators.prediction import PrivatePredictionClassifier
from mechanisms.estimators.threshold import ThresholdClassifier

__all__ = [
    "ESTIMATORS",
    "DPWinnowClassifier",
    "DecisionListClassifier",
    "EfficientMarginClassifier",
    "KernelMarginClassifier",
    "LabelDPClassifier",
    "MarginSelectionClassifier",
    "NetMarginClassifier",
    "NeuralNetMarginClassifier",
    "NoisySGDMarginClassifier",
    "PrivateClassifier",
    "PrivatePredictionClassifier",
    "PureMarginClassifier",
    "ThresholdClassifier",
    "register",
]

#: Every estimator class, in the order ``dpaudit learn --list`` shows them.
ESTIMATORS: tuple[type[PrivateClassifier], ...] = (
    NoisySGDMarginClassifier,
    NetMarginClassifier,
    PureMarginClassifier,
    EfficientMarginClassifier,
    KernelMarginClassifier,
    NeuralNetMarginClassifier,
    LabelDPClassifier,
    MarginSelectionClassifier,
    PrivatePredictionClassifier,
    ThresholdClassifier,
    DecisionListClassifier,
    DPWinnowClassifier,
)


def register() -> list[str]:
    """Register every estimator with :mod:`dpaudit.learners` (entry point of the group
    ``dpaudit.learners``).

    Returns:
        The names registered.
    """
    for cls in ESTIMATORS:
        register_learner(
            LearnerInfo(
                name=cls.NAME,
                task=cls.TASK,
                source=cls.SOURCE,
                privacy=cls.PRIVACY,
                factory=cls,
                summary=cls.SUMMARY,
                efficient=cls.EFFICIENT,
                requirements=cls.requirements(),
                regimes=cls.regimes(),
            )
        )
    return [cls.NAME for cls in ESTIMATORS]
