"""A scikit-learn classifier for the generic private PAC learner of source document 002
(Lecture 4, "What can we learn privately?") over a finite class of thresholds ("stumps")
on a data-independent grid of each feature."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from dpaudit import events as ev
from dpaudit.events import Event
from mechanisms.estimators.base import PrivateClassifier, check_in_range, check_integer
from mechanisms.exponential_learner import plan as pac_plan
from mechanisms.exponential_learner import (
    private_pac_sample_size,
    thresholds_on_grid,
)
from mechanisms.primitives import ExponentialMechanism

__all__ = ["ThresholdClassifier", "stump_scores"]


def stump_scores(cells: np.ndarray, y: np.ndarray, grid: int, orientations: int) -> np.ndarray:
    """The number of correctly labelled rows of every stump h_{j,t,o}(x) = o if cell_j(x) >= t
    else -o, for feature j, t in {0..G} and o = +1 (then -1 if ``orientations`` is 2), in the
    order (o, j, t): one count per hypothesis of the finite class (score sensitivity 1)."""
    d = cells.shape[1]
    table = thresholds_on_grid(grid).table.astype(np.int64)  # (G + 1, G): x >= t
    out = []
    for sign in (1, -1)[:orientations]:
        for j in range(d):
            pos = np.bincount(cells[y == sign, j], minlength=grid)
            neg = np.bincount(cells[y == -sign, j], minlength=grid)
            out.append((table == 1) @ pos + (table == -1) @ neg)
    return np.concatenate(out).astype(float)


class ThresholdClassifier(PrivateClassifier):
    """002 Lecture 4, the generic private PAC learner over a finite class: here thresholds
    ("stumps") x_j >= t on each feature j, discretised onto ``grid_size`` cells of [``low``,
    ``high``] (a data-independent grid; values outside are clipped to the end cells): the
    exponential mechanism with score the number of correctly labelled examples
    (sensitivity 1).  With one feature and ``orientations`` 1 this is the class of
    thresholds on a line; d features make the finite class d times larger (the same
    algorithm and proof: Lecture 4's learner is stated for any finite class), and
    ``orientations`` 2 adds the stumps x_j < t.

    Regimes: ``"practical"`` (default) both orientations; ``"paper"`` thresholds x_j >= t only.

    Privacy: epsilon-DP, replace-one (claim ``002/private-pac-learner``).
    """

    NAME = "pac-threshold"
    TASK = "threshold"
    SOURCE = "002 Lecture 4, private PAC learner over a finite class (exponential mechanism)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over thresholds (stumps) on a grid of each feature"
    LABELS: ClassVar[tuple[int, int]] = (-1, 1)
    PEER_NOTE = (
        "a threshold on one feature (a stump) is a far smaller class than a halfspace over all "
        "the features"
    )
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"orientations": 2},
        "paper": {"orientations": 1},
    }
    TUNED: ClassVar[dict[str, str]] = {
        "orientations": "the stumps x_j < t as well: a finite class fixed before the data are "
        "read (twice as large), so Lecture 4's proof (the exponential mechanism, sensitivity "
        "1) holds unchanged",
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        grid_size: int = 100,
        low: float = 0.0,
        high: float = 1.0,
        random_state: Any = None,
        orientations: int | None = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.grid_size = grid_size
        self.low = low
        self.high = high
        self.random_state = random_state
        self.orientations = orientations
        self.regime = regime

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        alpha, beta, size = 0.1, 0.05, 101
        m = private_pac_sample_size(alpha, beta, epsilon, size)
        stumps = private_pac_sample_size(alpha, beta, epsilon, 2 * d * size)
        return [
            f"002 Lecture 4 at alpha = {alpha:g}, beta = {beta:g}, epsilon = {epsilon:g}, "
            f"|H| = {size} thresholds of one feature: m >= {m:,} samples suffice for error <= "
            f"OPT + alpha with probability >= 1 - beta; for the {2 * d * size:,} stumps of "
            f"{d} features (both orientations): m >= {stumps:,}."
        ]

    def _check_params(self, s: Any) -> None:
        check_integer("grid_size", s.grid_size, 1, 10**6)
        low = check_in_range("low", s.low, -math.inf)
        check_in_range("high", s.high, low)
        check_integer("orientations", s.orientations, 1, 2)

    def _cells(self, X: np.ndarray) -> np.ndarray:
        g = int(self.grid_size)
        scaled = (X - float(self.low)) / (float(self.high) - float(self.low)) * g
        return np.clip(np.floor(scaled), 0, g - 1).astype(np.int64)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        return ExponentialMechanism(float(s.epsilon), 1, relation=ev.Relation.REPLACE_ONE)

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return pac_plan(float(s.epsilon))

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        g, count = int(s.grid_size), int(s.orientations)
        k = int(learner.select(stump_scores(self._cells(X), y, g, count), rng))
        orientation, rest = divmod(k, X.shape[1] * (g + 1))
        feature, threshold = divmod(rest, g + 1)
        return (1 - 2 * orientation, feature, threshold)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        sign, feature, threshold = self.model_
        return sign * (self._cells(X)[:, feature] - threshold + 0.5)
