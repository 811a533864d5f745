"""Scikit-learn classifiers over boolean (0/1) features: source document 004 (Bun, Fang,
"Privately learning decision lists and a differentially private Winnow").  The finite-class
learner of 002 (Lecture 4) is in :mod:`mechanisms.estimators.threshold`.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

import numpy as np
import sympy

from dpaudit.events import Event
from dpaudit.numeric import exact
from mechanisms.decision_lists import (
    DPGreedyCover,
    embed_features,
    greedy_cover_inverse_temperature,
    greedy_cover_sample_size,
)
from mechanisms.estimators.base import (
    PrivateClassifier,
    _accounted,
    check_in_range,
    check_integer,
)
from mechanisms.estimators.regimes import BELOW_ONE, largest_certified
from mechanisms.synthetic_discrete import literal_features
from mechanisms.winnow import DPWinnow, DPWinnowParameters, above_threshold_accuracy
from mechanisms.winnow_parameters import paper_parameters

__all__ = ["DPWinnowClassifier", "DecisionListClassifier"]


def cover_temperature_limit(delta: float) -> float:
    """The largest epsilon for which Proof A.7's inverse temperature
    eps / (2 (ln(1/delta) + 3/2)) is covered by the proof: 2 (ln(1/delta) + 3/2) (table row 16
    of docs/learners.md: Lemma A.1's stated form needs lambda <= 5/4 and this lambda is at
    most 1 there)."""
    return 2 * (math.log(1 / delta) + 1.5)


@functools.lru_cache(maxsize=128)
def calibrated_temperature(epsilon: float, delta: float, n_features: int) -> sympy.Rational:
    """The practical regime's inverse temperature: the largest lambda (on a relative grid of
    10^-3, an exact rational) whose DP-GreedyCover plan over ``n_features`` literals the
    accountant bounds by (epsilon, delta): the corrected Lemma A.1, lambda + (e^lambda - 1)
    (ln(1/delta) + 1) (:mod:`dpaudit.theorems.cover`), or basic composition of the M + 1
    rounds, whichever is smaller.  Proof A.7's lambda is one value the accountant accepts;
    this one is larger (about twice at delta = 1e-6)."""
    from mechanisms.decision_lists import plan as cover_plan

    def ok(lam: float) -> bool:
        event = cover_plan(_rational(lam), n_features)
        bound = _accounted(event, delta)
        return bound.epsilon_upper is not None and bound.epsilon_upper <= epsilon

    low = float(greedy_cover_inverse_temperature(min(epsilon, 1.0), delta)) / 4
    return _rational(largest_certified(ok, low, 10 * epsilon))


def _rational(x: float) -> sympy.Rational:
    """x rounded down to an exact rational of 9 decimals."""
    return sympy.Rational(math.floor(x * 1e9), 10**9)


class DecisionListClassifier(PrivateClassifier):
    """004 Algorithm 3.1, DP-GreedyCover: a 1-decision list over the 2d literals of the
    boolean features, each rule chosen by the exponential mechanism (EMCover) at inverse
    temperature ``inverse_temperature``.

    Regimes: ``"practical"`` (default) calibrates the inverse temperature with the accountant
    (:func:`calibrated_temperature`: the largest whose plan is within the request);
    ``"paper"`` takes Proof A.7's eps / (2 (ln(1/delta) + 3/2)), which the proof covers for
    epsilon up to 2 (ln(1/delta) + 3/2) (27.6 at delta = 1e-6; asked for more, it runs there).

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
    EPSILON_NOTE = (
        "any epsilon > 0; regime='paper' runs Proof A.7's inverse temperature, which the "
        "proof covers up to epsilon = 2 (ln(1/delta) + 3/2), there when asked for more"
    )
    PEER_NOTE = (
        "a 1-decision list over the literals is a different hypothesis class from a linear "
        "model over the same 0/1 features"
    )
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"inverse_temperature": "calibrated"},
        "paper": {"inverse_temperature": "proof-a7"},
    }
    TUNED: ClassVar[dict[str, str]] = {
        "inverse_temperature": "the largest lambda whose plan the accountant bounds by the "
        "request (the corrected Lemma A.1, which holds for every lambda > 0; "
        "dpaudit.theorems.cover), computed from (epsilon, delta, d) before the data are read",
    }

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

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        random_state: Any = None,
        inverse_temperature: Any = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.inverse_temperature = inverse_temperature
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        check_in_range("delta", s.delta, 0.0, 1.0)
        if s.inverse_temperature not in ("calibrated", "proof-a7"):
            check_in_range("inverse_temperature", s.inverse_temperature, 0.0)

    def _run_epsilon(self, s: Any) -> tuple[float, list[str]]:
        eps, limit = float(self.epsilon), cover_temperature_limit(float(s.delta))
        if s.inverse_temperature == "proof-a7" and eps > limit:
            return limit, [
                f"Proof A.7's inverse temperature is covered for epsilon <= 2 (ln(1/delta) + "
                f"3/2) = {limit:.4g}: it ran there (private at the requested {eps:g} too)"
            ]
        return eps, []

    def _learner(self, s: Any, n: int, d: int) -> Any:
        if s.inverse_temperature == "proof-a7":
            eps_hat = greedy_cover_inverse_temperature(float(s.epsilon), float(s.delta))
        elif s.inverse_temperature == "calibrated":
            eps_hat = calibrated_temperature(float(s.epsilon), float(s.delta), 2 * d)
        else:
            eps_hat = _rational(float(s.inverse_temperature))
        return DPGreedyCover(eps_hat, 2 * d)

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return learner.plan()

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
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


@functools.lru_cache(maxsize=64)
def calibrated_eta(
    epsilon: float, delta: float, epsilon_hat: float, switches: int, samples: int
) -> float:
    """The practical regime's learning rate: the largest eta (to 0.1%) whose DP-Winnow plan
    (K AboveThreshold instances at eps_hat, m K exponential mechanisms (4 eta)-DP) the
    accountant bounds by (epsilon, delta).  Theorem 4.4's eta is one value the accountant
    accepts (its proof's composition is looser)."""
    from mechanisms.winnow_parameters import plan

    def ok(eta: float) -> bool:
        # exactly the plan the learner declares for these floats (parameters_plan)
        event = plan(exact(epsilon_hat), exact(eta), samples, switches)
        bound = _accounted(event, delta)
        return bound.epsilon_upper is not None and bound.epsilon_upper <= epsilon

    return largest_certified(ok, 1e-7, 4.0)


class DPWinnowClassifier(PrivateClassifier):
    """004 Algorithm 4.2, DP-Winnow, run once over the training set as a stream (horizon
    T = n), on Section 4.3's embedding of the boolean features (+-1 coordinates and a
    constant, doubled with their negations: non-negative weights over 2(d + 1) coordinates);
    the final released hypothesis w~ classifies.

    The switch bound K = ``switches``, sample count m = ``samples`` and the AboveThreshold
    budget eps_hat = eps / (4 sqrt(2 K ln(2/delta))) are Theorem 4.4's; the AboveThreshold
    threshold is alpha + 1 with alpha = 8 ln(2 T^2 / beta) / eps_hat (Lemma 4.3).  The
    learning rate: ``regime="paper"`` takes Theorem 4.4's eta = eps / (8 sqrt(2 m K
    ln(2/delta))) (the theorem is stated for epsilon in (0, 1): asked for more, its formulas
    run at :data:`~mechanisms.estimators.regimes.BELOW_ONE`); ``regime="practical"``
    (default) the largest eta the accountant certifies within the request
    (:func:`calibrated_eta`).  Either way the weights hardly move at practical sizes (no
    setting within the proof learns at n of a few thousand, see
    :meth:`sample_complexity_notes`).

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
    EPSILON_NOTE = (
        f"any epsilon > 0; regime='paper' runs Theorem 4.4 (stated for epsilon < 1) at "
        f"min(epsilon, {BELOW_ONE})"
    )
    PEER_NOTE = (
        "its weights barely move at these n (the notes give the paper's numbers): it predicts "
        "about the majority class"
    )
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"eta": "calibrated"},
        "paper": {"eta": "theorem-4.4"},
    }
    TUNED: ClassVar[dict[str, str]] = {
        "eta": "the largest learning rate whose plan the accountant bounds by the request, "
        "computed from (epsilon, delta, K, m) before the data are read; the exponential "
        "mechanisms are (4 eta)-DP for every eta (docs/learners.md row 19)",
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        rho: float = 0.1,
        switches: int = 8,
        samples: int = 100,
        beta: float = 0.05,
        random_state: Any = None,
        eta: Any = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.switches = switches
        self.samples = samples
        self.beta = beta
        self.random_state = random_state
        self.eta = eta
        self.regime = regime

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        default = cls(epsilon=epsilon, delta=delta, regime="paper")
        width = 2 * (d + 1)
        eps = min(epsilon, BELOW_ONE)
        ours = default._parameters(default._settings(n, d), n, eps)
        smallest = cls(epsilon=epsilon, delta=delta, switches=1, samples=1, regime="paper")
        low = smallest._parameters(smallest._settings(n, d), n, eps)
        paper = paper_parameters(eps, delta, 0.1, width, n, 0.05)
        return [
            f"004 Theorem 4.5 at epsilon = {eps:g}, delta = {delta:g}, rho = 0.1, beta = 0.05, "
            f"T = n = {n:,}, {width} weights: K = {paper.switches:,} switches, m = "
            f"{paper.samples:,} samples, learning rate eta = {paper.eta:.3g}; Winnow's mistake "
            f"bound 2 log(d) / (eta rho - eta^2) = "
            f"{2 * math.log(width) / (paper.eta * 0.1 - paper.eta**2):.3g} is "
            f"far above T, so at these n the weights barely move from uniform.",
            f"Theorem 4.4 at K = {ours.switches}, m = {ours.samples} gives eta = {ours.eta:.3g} "
            f"and an AboveThreshold threshold of L = {ours.threshold:.3g} cached mistakes "
            f"before an instance may fire (Lemma 4.3 at failure beta/T); a stream of n = {n:,} "
            f"examples has at most {n:,} mistakes, so "
            f"{'no update can happen' if ours.threshold > n else 'few updates can happen'}. "
            "Theorem 4.4 holds for every K and m, but even K = m = 1 keeps L at "
            f"{low.threshold:.3g} (at n = {n:,}; it grows like log n): with Theorem "
            "4.4's constants no setting updates more than a handful of times at n of a few "
            "thousand. The defaults calibrate eta with the accountant, which does not change L.",
            _winnow_regime_note(epsilon, delta, width, n),
        ]

    def _check_params(self, s: Any) -> None:
        check_in_range("delta", s.delta, 0.0, 1.0)
        check_in_range("rho", s.rho, 0.0, 1.0, high_open=False)
        check_integer("switches", s.switches)
        check_integer("samples", s.samples)
        check_in_range("beta", s.beta, 0.0, 1.0)
        if s.eta not in ("calibrated", "theorem-4.4"):
            check_in_range("eta", s.eta, 0.0)

    def _run_epsilon(self, s: Any) -> tuple[float, list[str]]:
        eps = float(self.epsilon)
        if s.eta == "theorem-4.4" and eps >= 1:
            return BELOW_ONE, [
                f"Theorem 4.4 is stated for epsilon in (0, 1): its formulas ran at epsilon "
                f"{BELOW_ONE} (private at the requested {eps:g} too)"
            ]
        return eps, []

    def _parameters(self, s: Any, n: int, eps: float | None = None) -> DPWinnowParameters:
        eps = float(s.epsilon) if eps is None else eps
        delta = float(s.delta)
        k, m = int(s.switches), int(s.samples)
        log_term = math.log(2 / delta)
        eps_hat = eps / (4 * math.sqrt(2 * k * log_term))
        if s.eta == "theorem-4.4":
            eta = eps / (8 * math.sqrt(2 * m * k * log_term))
        elif s.eta == "calibrated":
            eta = calibrated_eta(eps, delta, eps_hat, k, m)
        else:
            eta = float(s.eta)
        alpha = above_threshold_accuracy(n, float(s.beta), eps_hat)
        return DPWinnowParameters(
            n, float(s.rho), eps_hat, eta, alpha + 1, m, float(s.beta), k, 0.5, "Theorem 4.4"
        )

    def _learner(self, s: Any, n: int, d: int) -> Any:
        return DPWinnow(2 * (d + 1), self._parameters(s, n))

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return learner.plan()

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
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
