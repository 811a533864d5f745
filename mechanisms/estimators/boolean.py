"""Scikit-learn classifiers over boolean (0/1) features: source document 004 (Bun, Fang,
"Privately learning decision lists and a differentially private Winnow") and the finite-class
learner of 002 (Lecture 4) over one discretised feature.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from dpaudit.events import Event
from mechanisms.decision_lists import (
    DPGreedyCover,
    embed_features,
    greedy_cover_inverse_temperature,
    greedy_cover_sample_size,
)
from mechanisms.estimators.base import PrivateClassifier, check_in_range, check_integer
from mechanisms.exponential_learner import (
    PrivatePACLearner,
    private_pac_sample_size,
    thresholds_on_grid,
)
from mechanisms.exponential_learner import plan as pac_plan
from mechanisms.synthetic_discrete import literal_features
from mechanisms.winnow import DPWinnow, DPWinnowParameters, above_threshold_accuracy
from mechanisms.winnow_parameters import paper_parameters

__all__ = ["DPWinnowClassifier", "DecisionListClassifier", "ThresholdClassifier"]


class DecisionListClassifier(PrivateClassifier):
    """004 Algorithm 3.1, DP-GreedyCover: a 1-decision list over the 2d literals of the
    boolean features, each rule chosen by the exponential mechanism (EMCover), at the
    inverse temperature of Proof A.7 for the requested (epsilon, delta).

    Privacy: (epsilon, delta)-DP under add/remove (Lemma A.1, Theorem 3.5; replace-one by
    group privacy, see :mod:`mechanisms.decision_lists`).
    """

    NAME = "decision-list"
    TASK = "boolean"
    SOURCE = "004 Bun-Fang, Algorithm 3.1 (DP-GreedyCover, Theorem 3.5)"
    PRIVACY = "approximate"
    SUMMARY = "greedy decision list over the literals, rules chosen by iterated EM"
    LABELS: ClassVar[tuple[int, int]] = (0, 1)
    BOOLEAN = True

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        alpha, beta = 0.1, 0.05
        stated = greedy_cover_sample_size(alpha, beta, epsilon, delta, d)
        proved = greedy_cover_sample_size(alpha, beta, epsilon, delta, d, as_proved=True)
        proof = (
            "the generalization term 64/alpha (VC log(64/alpha) + log(16/beta)) is the larger"
            if proved == stated
            else f"{proved:,} with the privacy-term constant Proof A.7 derives"
        )
        return [
            f"004 Theorem 3.5 at alpha = {alpha:g}, beta = {beta:g}, epsilon = {epsilon:g}, "
            f"delta = {delta:g}, M = {d} features: n >= {stated:,} samples ({proof}) for error "
            f"<= alpha with probability >= 1 - beta: a worst-case bound over all decision "
            f"lists, far above the n of these curves."
        ]

    def __init__(self, epsilon: float = 0.5, delta: float = 1e-6, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def _check_params(self) -> None:
        check_in_range("epsilon", self.epsilon, 0.0, 1.0)
        check_in_range("delta", self.delta, 0.0, 1.0)

    def _learner(self, n: int, d: int) -> Any:
        eps_hat = greedy_cover_inverse_temperature(float(self.epsilon), float(self.delta))
        return DPGreedyCover(eps_hat, 2 * d)

    def _plan(self, learner: Any, n: int, d: int) -> Event:
        return learner.plan()

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        return learner.fit(literal_features(X.astype(np.int64)), y, rng)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        bits = self.model_.predict(literal_features(X.astype(np.int64)))
        return 2.0 * bits - 1.0


def _largest_eta(epsilon: float, delta: float, switches: int, samples: int) -> float:
    """The largest learning rate eta (to 2%) whose DP-Winnow plan (Appendix C, View 2:
    K AboveThreshold instances and m K exponential mechanisms (4 eta)-DP) the accountant
    bounds by (epsilon, delta), with the AboveThreshold instances given almost nothing
    (eps_hat = 1e-4): an upper bound on any eta the proof allows at this K and m."""
    import sympy

    from dpaudit.accountant import Accountant
    from mechanisms.winnow_parameters import plan

    accountant, lo, hi = Accountant(), 1e-6, 4.0
    while hi / lo > 1.02:
        mid = math.sqrt(lo * hi)
        event = plan(
            sympy.Rational(1, 10**4), sympy.Rational(math.ceil(mid * 1e9), 10**9), samples, switches
        )
        bound = accountant.guarantee(event, delta).epsilon_upper
        lo, hi = (mid, hi) if bound is not None and bound <= epsilon else (lo, mid)
    return hi


def _winnow_regime_note(epsilon: float, delta: float, width: int, n: int) -> str:
    """Why no regime within Theorem 4.4's proof learns at n: the accountant's bound on eta K."""
    switches = max(1, n // 10)
    eta = _largest_eta(epsilon, delta, switches, 1)
    return (
        "No practical regime either: the AboveThreshold threshold L and the AboveThreshold "
        "budget may be set freely (AboveThreshold is eps_hat-DP for every threshold, "
        "Dwork-Roth Theorem 3.23; a low L just fires on noise, and an update still needs a "
        "cached mistake), so the cost is the m K exponential-mechanism samples. Even with "
        f"K = n/10 = {switches:,} updates, m = 1 sample per update and eps_hat = 1e-4, the "
        f"accountant allows eta <= {eta:.3g} at epsilon = {epsilon:g}, delta = {delta:g}: "
        f"the total log-weight change eta K <= {eta * switches:.3g} (it grows like sqrt(K)), "
        f"while moving most of the weight onto a few of the {width} coordinates needs about "
        f"ln({width}) = {math.log(width):.3g} or more. Tried (n = 3000 synthetic, n = 398 "
        "breast-cancer, 3 seeds, L = 0, eta calibrated by the accountant): K = 100-1000, "
        "m = 1-100, eps_hat = 0.01-0.05: test errors 0.33-0.44 synthetic (majority 0.24), "
        "0.42-0.68 breast-cancer (majority 0.36)."
    )


class DPWinnowClassifier(PrivateClassifier):
    """004 Algorithm 4.2, DP-Winnow, run once over the training set as a stream (horizon
    T = n), on Section 4.3's embedding of the boolean features (+-1 coordinates and a
    constant, doubled with their negations: non-negative weights over 2(d + 1) coordinates);
    the final released hypothesis w~ classifies.

    Parameters follow Theorem 4.4 for the requested (epsilon, delta) and the chosen switch
    bound K = ``switches`` and sample count m = ``samples``:
    eps_hat = eps / (4 sqrt(2 K ln(2/delta))), eta = eps / (8 sqrt(2 m K ln(2/delta)));
    the AboveThreshold threshold is alpha + 1 with alpha = 8 ln(2 T^2 / beta) / eps_hat
    (Lemma 4.3).  The learning rate this leaves is tiny: at practical sizes the weights hardly
    move from uniform (the documented shortfall of the paper's regime; no regime within the
    proof learns at n of a few thousand, see :meth:`sample_complexity_notes`).

    Scores are exact: the released w~ is counts / m, so <w~, x_hat> is computed as the integer
    <counts, x_hat> (for the uniform w~ before any update, <1, x_hat> = 0: x_hat holds z and
    -z), and a tie predicts the positive class, 004's convention sgn(0) = +1 (Section 4,
    "Conventions").  A float score would make the uniform hypothesis's ties the sign of
    rounding noise.

    Privacy: (epsilon, delta)-DP, replace-one (claim ``004/theorem-4.4``).
    """

    NAME = "dp-winnow"
    TASK = "boolean"
    SOURCE = "004 Bun-Fang, Algorithm 4.2 (DP-Winnow, Theorem 4.4)"
    PRIVACY = "approximate"
    SUMMARY = "online multiplicative weights; AboveThreshold decides when to update"
    LABELS: ClassVar[tuple[int, int]] = (-1, 1)
    BOOLEAN = True

    def __init__(
        self,
        epsilon: float = 0.5,
        delta: float = 1e-6,
        rho: float = 0.1,
        switches: int = 8,
        samples: int = 100,
        beta: float = 0.05,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.switches = switches
        self.samples = samples
        self.beta = beta
        self.random_state = random_state

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        default = cls(epsilon=epsilon, delta=delta)
        width = 2 * (d + 1)
        ours = default._parameters(n)
        smallest = cls(epsilon=epsilon, delta=delta, switches=1, samples=1)._parameters(n)
        paper = paper_parameters(epsilon, delta, float(default.rho), width, n, float(default.beta))
        return [
            f"004 Theorem 4.5 at epsilon = {epsilon:g}, delta = {delta:g}, rho = "
            f"{default.rho:g}, beta = {default.beta:g}, T = n = {n:,}, {width} weights: "
            f"K = {paper.switches:,} switches, m = {paper.samples:,} samples, learning rate "
            f"eta = {paper.eta:.3g}; Winnow's mistake bound 2 log(d) / (eta rho - eta^2) = "
            f"{2 * math.log(width) / (paper.eta * float(default.rho) - paper.eta**2):.3g} is "
            f"far above T, so at these n the weights barely move from uniform.",
            f"The estimator's defaults (Theorem 4.4, K = {ours.switches}, m = {ours.samples}) "
            f"give eta = {ours.eta:.3g} and an AboveThreshold threshold of L = "
            f"{ours.threshold:.3g} cached mistakes before an instance may fire (Lemma 4.3 at "
            f"failure beta/T); a stream of n = {n:,} examples has at most {n:,} mistakes, so "
            f"{'no update can happen' if ours.threshold > n else 'few updates can happen'}. "
            "Theorem 4.4 holds for every K and m, but even K = m = 1 keeps L at "
            f"{smallest.threshold:.3g} (at n = {n:,}; it grows like log n): with Theorem "
            "4.4's constants no setting updates more than a handful of times at n of a few "
            "thousand.",
            _winnow_regime_note(epsilon, delta, width, n),
        ]

    def _check_params(self) -> None:
        check_in_range("epsilon", self.epsilon, 0.0, 1.0)
        check_in_range("delta", self.delta, 0.0, 1.0)
        check_in_range("rho", self.rho, 0.0, 1.0, high_open=False)
        check_integer("switches", self.switches)
        check_integer("samples", self.samples)
        check_in_range("beta", self.beta, 0.0, 1.0)

    def _parameters(self, n: int) -> DPWinnowParameters:
        eps, delta = float(self.epsilon), float(self.delta)
        k, m = int(self.switches), int(self.samples)
        log_term = math.log(2 / delta)
        eps_hat = eps / (4 * math.sqrt(2 * k * log_term))
        eta = eps / (8 * math.sqrt(2 * m * k * log_term))
        alpha = above_threshold_accuracy(n, float(self.beta), eps_hat)
        return DPWinnowParameters(
            n, float(self.rho), eps_hat, eta, alpha + 1, m, float(self.beta), k, 0.5, "Theorem 4.4"
        )

    def _learner(self, n: int, d: int) -> Any:
        return DPWinnow(2 * (d + 1), self._parameters(n))

    def _plan(self, learner: Any, n: int, d: int) -> Event:
        return learner.plan()

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        run = learner.run(embed_features(X.astype(np.int64)), y, rng)
        if run.updates:
            return run.released[-1]
        return np.full(learner.d, 1.0 / learner.d)

    def _counts(self) -> np.ndarray:
        """m w~ as exact integers (w~ = counts / m; the uniform w~ as all ones)."""
        w = np.asarray(self.model_, dtype=float)
        if np.allclose(w, w[0]):
            return np.ones(w.size, dtype=np.int64)
        return np.rint(w * int(self.samples)).astype(np.int64)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        # integer <counts, x_hat>, shifted by 1/2 so that a tie (score 0) is > 0: sgn(0) = +1
        scores = embed_features(X.astype(np.int64)).astype(np.int64) @ self._counts()
        return scores + 0.5


class ThresholdClassifier(PrivateClassifier):
    """002 Lecture 4, the generic private PAC learner over a finite class, here thresholds
    x >= t on one feature discretised onto ``grid_size`` cells of [``low``, ``high``]
    (a data-independent grid; values outside are clipped to the end cells): the exponential
    mechanism with score the number of correctly labelled examples (sensitivity 1).

    Privacy: epsilon-DP, replace-one (claim ``002/private-pac-learner``).
    """

    NAME = "pac-threshold"
    TASK = "threshold"
    SOURCE = "002 Lecture 4, private PAC learner over a finite class (exponential mechanism)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over thresholds on a grid of one feature"
    LABELS: ClassVar[tuple[int, int]] = (-1, 1)

    def __init__(
        self,
        epsilon: float = 1.0,
        grid_size: int = 100,
        low: float = 0.0,
        high: float = 1.0,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.grid_size = grid_size
        self.low = low
        self.high = high
        self.random_state = random_state

    N_FEATURES = 1

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        alpha, beta, size = 0.1, 0.05, int(cls().grid_size) + 1
        m = private_pac_sample_size(alpha, beta, epsilon, size)
        return [
            f"002 Lecture 4 at alpha = {alpha:g}, beta = {beta:g}, epsilon = {epsilon:g}, "
            f"|H| = {size} thresholds: m >= {m:,} samples suffice for error <= OPT + alpha "
            "with probability >= 1 - beta."
        ]

    def _check_params(self) -> None:
        check_in_range("epsilon", self.epsilon, 0.0)
        check_integer("grid_size", self.grid_size, 1, 10**6)
        low = check_in_range("low", self.low, -math.inf)
        check_in_range("high", self.high, low)
        self._check_feature_count(1)

    def _cells(self, X: np.ndarray) -> np.ndarray:
        g = int(self.grid_size)
        scaled = (X[:, 0] - float(self.low)) / (float(self.high) - float(self.low)) * g
        return np.clip(np.floor(scaled), 0, g - 1).astype(np.int64)

    def _learner(self, n: int, d: int) -> Any:
        return PrivatePACLearner(thresholds_on_grid(int(self.grid_size)), float(self.epsilon))

    def _plan(self, learner: Any, n: int, d: int) -> Event:
        return pac_plan(float(self.epsilon))

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        return learner.fit(self._cells(X), y, rng)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._cells(X) - self.model_ + 0.5
