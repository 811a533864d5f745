"""The learners of the source documents as scikit-learn classifiers.

Each class wraps one learner of :mod:`mechanisms` (its algorithm, plan and ledger are
unchanged) in the interface of :class:`~mechanisms.estimators.base.PrivateClassifier`:
``fit`` / ``predict`` / ``score`` / ``get_params`` / ``set_params``, ``random_state``, any two
class labels, privacy parameters as constructor arguments, and after fit ``guarantee_`` (the
accounted upper bounds of what the run spent, checked against its plan).

:func:`register` (the entry point of the group ``dpaudit.learners``) registers them with
:mod:`dpaudit.learners`, which ``dpaudit learn`` reads, from :data:`LEARNER_TABLE` and
without importing them: ``dpaudit learn --list`` and its argument errors import no learner
(scikit-learn alone takes about a second).  The classes are imported on first use, here as in
:mod:`dpaudit.learners` (``from mechanisms.estimators import NetMarginClassifier`` works as
before).  The table repeats each class's ``NAME``, ``TASK``, ``SOURCE``, ``PRIVACY``,
``SUMMARY`` and ``EFFICIENT``; ``tests/mechanisms/learners/test_sklearn_estimators.py`` checks
that they agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.deferred_imports import lazy_attributes
from dpaudit.learners import LearnerInfo, register_learner

if TYPE_CHECKING:
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
    "LEARNER_INDEX",
    "LEARNER_TABLE",
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
    "build_learner_index",
    "learner_index",
    "register",
    "write_learner_index",
]

_HALFSPACE = "mechanisms.estimators.halfspace"
_SELECTION = "mechanisms.estimators.halfspace_selection"
_BOOLEAN = "mechanisms.estimators.boolean"

#: Every learner, in the order ``dpaudit learn --list`` shows them: (name, task, source,
#: privacy, class as ``module:ClassName``, summary, efficient).
LEARNER_TABLE: tuple[tuple[str, str, str, str, str, str, bool], ...] = (
    (
        "noisy-sgd-margin",
        "halfspace",
        "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 1 via Algorithm 3 (JL + BST14 SGD)",
        "approximate",
        "mechanisms.estimators.halfspace_gd:NoisySGDMarginClassifier",
        "JL projection, noisy gradient descent on the margin loss, best run by the EM",
        True,
    ),
    (
        "net-margin",
        "halfspace",
        "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 2 (JL + EM over a net)",
        "pure",
        "mechanisms.estimators.halfspace:NetMarginClassifier",
        "exponential mechanism over a net (practical: localised random candidates)",
        False,
    ),
    (
        "pure-margin",
        "halfspace",
        "001 Bassily-Mohri-Suresh 2022, Algorithm 1 (Theorem 3.1)",
        "pure",
        "mechanisms.estimators.halfspace:PureMarginClassifier",
        "exponential mechanism over a cover, rho-margin loss (practical: localised)",
        False,
    ),
    (
        "efficient-margin",
        "halfspace",
        "001 Bassily-Mohri-Suresh 2022, Algorithm 2 (Theorem 3.2)",
        "approximate",
        "mechanisms.estimators.halfspace_gd:EfficientMarginClassifier",
        "projection, clipping, private ERM of the rho-hinge loss",
        True,
    ),
    (
        "kernel-margin",
        "halfspace",
        "001 Bassily-Mohri-Suresh 2022, Algorithm 3 (Theorem 4.2, random Fourier features)",
        "approximate",
        "mechanisms.estimators.halfspace_gd:KernelMarginClassifier",
        "random Fourier features of a Gaussian kernel, then Algorithm 2",
        True,
    ),
    (
        "neural-net-margin",
        "neural network",
        "001 Bassily-Mohri-Suresh 2022, Section 5 (Theorem 5.1)",
        "pure",
        "mechanisms.estimators.halfspace_selection:NeuralNetMarginClassifier",
        "exponential mechanism over two-layer networks (practical: localised)",
        False,
    ),
    (
        "label-dp-margin",
        "halfspace",
        "001 Bassily-Mohri-Suresh 2022, Appendix E (label DP, reconstructed)",
        "label",
        "mechanisms.estimators.halfspace:LabelDPClassifier",
        "features public, labels private: EM over halfspaces that do not read the labels",
        False,
    ),
    (
        "margin-selection",
        "halfspace",
        "001 Bassily-Mohri-Suresh 2022, Appendix F (margin selection, reconstructed)",
        "pure",
        "mechanisms.estimators.halfspace_selection:MarginSelectionClassifier",
        "Algorithm 1 over a grid of margins, the margin chosen privately",
        False,
    ),
    (
        "private-prediction",
        "halfspace",
        "003 Dagan-Feldman 2020, Corollary 1 (stable learner + label flipping)",
        "prediction",
        "mechanisms.estimators.prediction:PrivatePredictionClassifier",
        "each prediction private: subsample, EM over H_T, flip with probability alpha",
        False,
    ),
    (
        "pac-threshold",
        "threshold",
        "002 Lecture 4, private PAC learner over a finite class (exponential mechanism)",
        "pure",
        "mechanisms.estimators.threshold:ThresholdClassifier",
        "exponential mechanism over thresholds (stumps) on a grid of each feature",
        True,
    ),
    (
        "decision-list",
        "boolean",
        "004 Bun-Fang, Algorithm 3.1 (DP-GreedyCover, Theorem 3.5)",
        "approximate",
        "mechanisms.estimators.boolean:DecisionListClassifier",
        "greedy decision list over the literals, rules chosen by iterated EM",
        True,
    ),
    (
        "dp-winnow",
        "boolean",
        "004 Bun-Fang, Algorithm 4.2 (DP-Winnow, Theorem 4.4)",
        "approximate",
        "mechanisms.estimators.boolean:DPWinnowClassifier",
        "online multiplicative weights; AboveThreshold decides when to update",
        True,
    ),
)

#: Where each class lives (imported on first use).
_LAZY = {path.partition(":")[2]: path.partition(":")[0] for *_, path, _, _ in LEARNER_TABLE} | {
    "PrivateClassifier": "mechanisms.estimators.base"
}
_attribute = lazy_attributes(globals(), _LAZY)


def __getattr__(name: str) -> Any:
    if name == "ESTIMATORS":  # every estimator class, in the order of LEARNER_TABLE
        classes = tuple(_attribute(path.partition(":")[2]) for *_, path, _, _ in LEARNER_TABLE)
        globals()["ESTIMATORS"] = classes
        return classes
    return _attribute(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


#: Each learner's ``requirements()`` and ``regimes()`` as the classes state them, written by
#: :func:`write_learner_index` so that ``dpaudit learn --list`` shows them without importing
#: a learner (scikit-learn alone takes about a second);
#: ``tests/mechanisms/learners/test_learner_index.py`` checks it equals what the classes say.
LEARNER_INDEX = Path(__file__).with_name("learner_index.json")


def learner_index() -> dict[str, dict[str, Any]]:
    """The committed :data:`LEARNER_INDEX`: by learner name, ``{"requirements": ...,
    "regimes": ...}`` (no learner is imported)."""
    data: dict[str, dict[str, Any]] = json.loads(LEARNER_INDEX.read_text(encoding="utf-8"))
    return data


def build_learner_index() -> dict[str, dict[str, Any]]:
    """What :data:`LEARNER_INDEX` must hold, from the classes themselves (imports them)."""
    out = {}
    for name, *_, path, _summary, _efficient in LEARNER_TABLE:
        cls = _attribute(path.partition(":")[2])
        out[name] = {"requirements": cls.requirements(), "regimes": cls.regimes()}
    return out


def write_learner_index() -> None:
    """Rewrite :data:`LEARNER_INDEX` from the classes (run after changing a learner's
    requirements or regimes: ``python -c "import mechanisms.estimators as e;
    e.write_learner_index()"``)."""
    text = json.dumps(build_learner_index(), indent=2, sort_keys=True) + "\n"
    LEARNER_INDEX.write_text(text, encoding="utf-8")


def register() -> list[str]:
    """Register every learner with :mod:`dpaudit.learners` (entry point of the group
    ``dpaudit.learners``), by import path: nothing is imported until a learner is fitted
    (the requirements and regimes come from :data:`LEARNER_INDEX`).

    Returns:
        The names registered.
    """
    index = learner_index()
    for name, task, source, privacy, path, summary, efficient in LEARNER_TABLE:
        known = index.get(name, {})
        register_learner(
            LearnerInfo(
                name,
                task,
                source,
                privacy,
                path,
                summary,
                efficient,
                requirements=known.get("requirements", {}),
                regimes=known.get("regimes", {}),
            )
        )
    return [row[0] for row in LEARNER_TABLE]
