"""The parameters of DP-Winnow (source document 004, Algorithm 4.2): the
:class:`DPWinnowParameters`, as Theorem 4.5 sets them (:func:`paper_parameters`) or in a
setting usable at practical sizes (:func:`relaxed_parameters`), the AboveThreshold accuracy
they rely on (Lemma 4.3), and the declared plan (:func:`plan`: Theorem 4.4 / Appendix C,
View 2).  See :mod:`mechanisms.winnow` for the algorithm and the reconstructions."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms.confident_winnow import (
    _R1,
    _count,
    _in_open,
    _positive,
    confident_winnow_update_bound,
)


@dataclasses.dataclass(frozen=True)
class DPWinnowParameters:
    """The inputs of Algorithm 4.2 besides the examples.

    Attributes:
        horizon: T, >= 1.
        rho: margin parameter, > 0.
        epsilon_hat: privacy parameter of each AboveThreshold instance, > 0.
        eta: learning rate, > 0 (each sample is the exponential mechanism at 4 eta).
        threshold: L, the AboveThreshold threshold.
        samples: m, samples per released weight vector, >= 1.
        beta: failure probability, in (0, 1).
        switches: K, the switching bound, >= 1.
        c: confidence parameter of the analysis, in (0, 1).
        setting: where the values come from ("Theorem 4.5", "relaxed", ...).
    """

    horizon: int
    rho: float
    epsilon_hat: float
    eta: float
    threshold: float
    samples: int
    beta: float
    switches: int
    c: float = 0.5
    setting: str = "custom"

    def __post_init__(self) -> None:
        _count("horizon", self.horizon)
        _positive("rho", self.rho)
        _positive("epsilon_hat", self.epsilon_hat)
        _positive("eta", self.eta)
        if not math.isfinite(float(self.threshold)):
            raise ValueError(f"threshold must be a finite number, got {self.threshold!r}")
        _count("samples", self.samples)
        _in_open("beta", self.beta, 0.0, 1.0)
        _count("switches", self.switches)
        _in_open("c", self.c, 0.0, 1.0)

    def mistake_bound(self) -> float:
        """Proof 4.9's bound K * 16 log(2 T^2 / beta) / eps_hat (with probability 1 - 2 beta,
        when K bounds the updates and L <= alpha of Lemma 4.3)."""
        alpha = above_threshold_accuracy(self.horizon, self.beta, self.epsilon_hat)
        return self.switches * (max(self.threshold, 0.0) + alpha)


def above_threshold_accuracy(horizon: int, beta: float, epsilon_hat: float) -> float:
    """Lemma 4.3 with failure probability beta/T over T queries:
    alpha = 8 log(2 T^2 / beta) / eps_hat."""
    return 8 * math.log(2 * horizon**2 / beta) / epsilon_hat


def _theorem_45_eta(epsilon: float, delta: float, m: int, k: float) -> float:
    return epsilon / (8 * math.sqrt(2 * m * k * math.log(4 * k / delta)))


def paper_parameters(
    epsilon: float, delta: float, rho: float, d: int, horizon: int, beta: float, c: float = 0.5
) -> DPWinnowParameters:
    """DP-Winnow's parameters as Theorem 4.5 sets them.

    m = 2 log(2T/beta) / (c^2 rho^2) (Lemma 4.6, Proof 4.9), K the smallest integer with
    K >= log d / ((1 - c) eta rho - eta^2/2) where eta = eps / (8 sqrt(2 m K log(4K/delta))),
    eps_hat = eps / (4 sqrt(2 K log(2/delta))), L = 8 log(2T/beta) / eps_hat.  (For c = 1/2
    the condition is Theorem 4.5's K = 2 log d / (eta rho - eta^2).)

    At practical sizes K runs into the millions or more and the mistake bound exceeds T:
    see :func:`relaxed_parameters`.

    Raises:
        ValueError: on a parameter outside its range.
    """
    eps = _in_open("epsilon", epsilon, 0.0, 1.0)
    dlt = _in_open("delta", delta, 0.0, 1.0)
    rho = _in_open("rho", rho, 0.0, 1.0 + 1e-12)
    d = _count("d", d, 2)
    t = _count("horizon", horizon)
    b = _in_open("beta", beta, 0.0, 1.0)
    c = _in_open("c", c, 0.0, 1.0)
    m = math.ceil(2 * math.log(2 * t / b) / (c**2 * rho**2))

    def enough(k: float) -> bool:
        eta = _theorem_45_eta(eps, dlt, m, k)
        gain = (1 - c) * eta * rho - eta**2 / 2
        return gain > 0 and k >= math.log(d) / gain

    hi = 1
    while not enough(hi):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:  # enough() is monotone in k on this range
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    k = hi
    eta = _theorem_45_eta(eps, dlt, m, k)
    eps_hat = eps / (4 * math.sqrt(2 * k * math.log(2 / dlt)))
    return DPWinnowParameters(
        t, rho, eps_hat, eta, 8 * math.log(2 * t / b) / eps_hat, m, b, k, c, "Theorem 4.5"
    )


def relaxed_parameters(
    rho: float,
    d: int,
    horizon: int,
    beta: float,
    *,
    eta: float,
    epsilon_hat: float,
    samples: int | None = None,
    c: float = 0.5,
) -> DPWinnowParameters:
    """A setting usable at practical sizes: the learning rate and the AboveThreshold
    parameter are chosen freely; K is Lemma 4.7's update bound for that eta,
    m Lemma 4.6's sample count (unless given) and L = alpha + 1 with alpha of Lemma 4.3, so
    that an instance fires only after a real mistake with probability 1 - beta/T.  The
    privacy it gives is whatever the accountant derives from :func:`plan`.

    Raises:
        ValueError: on a parameter outside its range, or eta too large for Lemma 4.2.
    """
    rho = _positive("rho", rho)
    t = _count("horizon", horizon)
    b = _in_open("beta", beta, 0.0, 1.0)
    c = _in_open("c", c, 0.0, 1.0)
    k = math.ceil(confident_winnow_update_bound(d, eta, rho, c))
    m = (
        math.ceil(2 * math.log(2 * t / b) / (c**2 * rho**2))
        if samples is None
        else _count("samples", samples)
    )
    alpha = above_threshold_accuracy(t, b, _positive("epsilon_hat", epsilon_hat))
    return DPWinnowParameters(
        t, rho, float(epsilon_hat), float(eta), alpha + 1, m, b, max(k, 1), c, "relaxed"
    )


def plan(epsilon_hat: Any, eta: Any, samples: Any, switches: Any) -> ev.Event:
    """DP-Winnow's declared event (Appendix C, View 2): at most K AboveThreshold instances
    at eps_hat and m K exponential mechanisms at inverse temperature eta on scores of
    sensitivity 2 (privacy parameter 4 eta; see the module docstring, correction 1), all
    under replace-one.  Parameters may be sympy expressions.

    Privacy:
        Whatever the accountant derives for this sequential composition; View 2 of Appendix C
        shows the algorithm's output is a post-processing of it.
    """
    eta = exact(eta, "eta")
    return ev.Composed(
        [
            ev.SelfComposed(ev.AboveThreshold(epsilon_hat, 1, relation=_R1), switches),
            ev.SelfComposed(ev.Exponential(4 * eta, 2, relation=_R1), samples * switches),
        ]
    )


def parameters_plan(params: DPWinnowParameters) -> ev.Event:
    """:func:`plan` for concrete parameters."""
    return plan(exact(params.epsilon_hat), exact(params.eta), params.samples, params.switches)
