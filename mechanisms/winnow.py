"""ConfidentWinnow and DP-Winnow: online learning of large-margin halfspaces (source document
004, Bun and Fang, "Privately Learning Decision Lists and a Differentially Private Winnow",
Section 4 and Appendices B-D).

* :class:`ConfidentWinnow` (Algorithm 4.1, non-private) and its update bound
  :func:`confident_winnow_update_bound` (Lemma 4.2).
* :class:`DPWinnow` (Algorithm 4.2): restarts of AboveThreshold decide *when* to update; the
  released hypothesis is the empirical distribution of ``m`` samples from the multiplicative
  weights distribution, each drawn by the exponential-mechanism primitive.  Its declared
  plan is :func:`plan` (Theorem 4.4 / Appendix C, View 2: a sequential composition of at most
  K AboveThreshold runs and m K exponential mechanisms), its parameters as Theorem 4.5 sets
  them are :func:`paper_parameters`, and :func:`relaxed_parameters` gives a setting usable at
  practical sizes (the accountant then reports the epsilon it really gives).

Neighbouring relation: replace-one (streams of T examples differing in one example,
Definition 4.1).  Conventions: natural logarithms; sgn(0) = +1.

Reconstructed or corrected (the extraction is garbled in places):

1. **Exponential-mechanism parameter (Appendix C).**  The paper says each sample j_i is
   "(2 eta)-DP".  The score of coordinate j is u_j = sum over update examples of
   y_hat x_hat_j; replacing one example changes u_j by up to 2 (from -1 to +1), and the
   coordinates can move in opposite directions, so sampling proportional to exp(eta u_j) is
   (4 eta)-DP, not (2 eta)-DP, and the bound is approached (the stressing pair of
   :func:`winnow_neighbouring_pair` shows it).  2 eta holds for add/remove of the update
   example only.  We declare ``Exponential(4 eta, sensitivity=2)`` (inverse temperature
   eta).  Theorem 4.4's conclusion survives: with the paper's eps_hat and eta the zCDP
   composition gives rho = 5 eps^2 / (64 ln(2/delta)) and (eps, delta)-DP (claim
   ``004/theorem-4.4``).
2. **Advanced composition in Appendix C** writes K eps_hat^2 for the second term; Dwork and
   Roth's Theorem 3.20 has K eps_hat (e^eps_hat - 1).  We do not reuse the paper's
   arithmetic: the accountant derives the guarantee from the plan.
3. **Theorem 4.4 vs 4.5.**  Theorem 4.4 sets eta with log(2/delta), Theorem 4.5 with
   log(4K/delta) (a smaller eta, so also private).  Theorem 4.5's m = 2 log(2T/beta)/rho^2
   omits the 1/c^2 of Lemma 4.6; Proof 4.9 uses m = 2 log(2T/beta)/(c^2 rho^2), as we do.
   K and eta depend on each other in Theorem 4.5 (K = 2 log d / (eta rho - eta^2),
   eta = eps / (8 sqrt(2 m K log(4K/delta)))); :func:`paper_parameters` solves for the
   smallest integer K meeting both.
4. **AboveThreshold accuracy.**  Lemma 4.3 run with failure probability beta/T over T
   queries gives alpha = 8 log(2 T^2 / beta) / eps_hat (Proof 4.9 uses this), while Theorem
   4.5 sets the threshold L = 8 log(2T/beta)/eps_hat < alpha.  The instance may then fire
   with no cached mistake (C empty), which Algorithm 4.2 does not define; we then switch
   without a multiplicative step (w unchanged, w~ resampled, k increased), which keeps the
   privacy analysis unchanged.  :func:`relaxed_parameters` uses L = alpha + 1 by default.
5. **The (K+1)-th AboveThreshold instance** that Algorithm 4.2 starts after the K-th update
   can never change the output (updates stop at k = K), so it is not run: the run executes
   at most K instances, as Appendix C counts.

Modules: this one holds DP-Winnow's run, its neighbouring pair and the claim;
:mod:`mechanisms.confident_winnow` Algorithm 4.1, :mod:`mechanisms.winnow_parameters` the
parameters and the plan (both re-exported here).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from dpaudit.verify import Claim, Domain, Step, register_claim
from mechanisms.confident_winnow import (
    _R1,
    ConfidentWinnow,
    ConfidentWinnowRun,
    _count,
    _stream,
    confident_winnow_update_bound,
    multiplicative_update,
)
from mechanisms.primitives import AboveThresholdMechanism, ExponentialMechanism
from mechanisms.winnow_parameters import (
    DPWinnowParameters,
    above_threshold_accuracy,
    paper_parameters,
    parameters_plan,
    plan,
    relaxed_parameters,
)

__all__ = [
    "ConfidentWinnow",
    "ConfidentWinnowRun",
    "DPWinnow",
    "DPWinnowParameters",
    "DPWinnowRun",
    "above_threshold_accuracy",
    "confident_winnow_update_bound",
    "multiplicative_update",
    "paper_parameters",
    "parameters_plan",
    "plan",
    "relaxed_parameters",
    "theorem_4_4_plan",
    "winnow_neighbouring_pair",
]


# ----------------------------------------------------------------------------------------
# DP-Winnow
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DPWinnowRun:
    """What a DP-Winnow run released and did.

    Attributes:
        predictions: sgn <w~^(t), x^(t)> per round (the released hypotheses' predictions).
        update_rounds: the rounds (0-based) after which w~ was resampled.
        released: the released weight vectors w~ after each update (counts / m), one row per
            update; before the first update w~ is uniform.
        sampled: the sampled coordinates of each update, one row of m per update.
        mistakes: rounds predicted wrongly.
    """

    predictions: np.ndarray
    update_rounds: tuple[int, ...]
    released: np.ndarray
    sampled: np.ndarray
    mistakes: int

    @property
    def updates(self) -> int:
        """Number of switches (resamplings) performed."""
        return len(self.update_rounds)

    def output(self) -> tuple[int, ...]:
        """The released sequence w~^(1..T) as a hashable value: the update rounds followed by
        the sampled coordinates (which determine w~ after each update)."""
        return (*self.update_rounds, -1, *self.sampled.ravel().tolist())


class DPWinnow:
    """DP-Winnow (004, Algorithm 4.2).

    Args:
        d: dimension, >= 1.
        params: the algorithm's parameters (:func:`paper_parameters`,
            :func:`relaxed_parameters` or a :class:`DPWinnowParameters`).

    Privacy:
        Under replace-one neighbouring streams, the released sequence w~^(1..T) is a
        post-processing of at most K AboveThreshold(eps_hat) instances and m K exponential
        mechanisms (4 eta)-DP each (:func:`plan`); with Theorem 4.4's eps_hat and eta it is
        (eps, delta)-DP (claim ``004/theorem-4.4``).  Every primitive it runs is recorded in
        the active ledgers.

    Raises:
        ValueError: on bad arguments.
    """

    def __init__(self, d: int, params: DPWinnowParameters) -> None:
        self.d = _count("d", d)
        if not isinstance(params, DPWinnowParameters):
            raise ValueError(f"params must be DPWinnowParameters, got {params!r}")
        self.params = params
        self.above_threshold = AboveThresholdMechanism(
            exact(params.epsilon_hat), params.threshold, 1, relation=_R1
        )
        self.sampler = ExponentialMechanism(4 * exact(params.eta), 2, relation=_R1)
        self.name = f"DP-Winnow (d={d}, {params.setting})"

    def plan(self) -> ev.Event:
        """The declared event for these parameters."""
        return parameters_plan(self.params)

    def run(self, x: Any, y: Any, rng: np.random.Generator) -> DPWinnowRun:
        """Play the stream ``(x, y)`` (T = ``params.horizon`` rounds at most).

        Raises:
            ValueError: on a malformed stream, or one longer than the horizon.
        """
        return self._play(*self._checked(x, y), rng)

    def _checked(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = _stream(x, y)
        if xs.shape[1] != self.d:
            raise ValueError(f"x must have d = {self.d} columns, got {xs.shape[1]}")
        if xs.shape[0] > self.params.horizon:
            raise ValueError(
                f"the stream must have at most T = {self.params.horizon} rounds, got {xs.shape[0]}"
            )
        return xs, ys

    #: Rounds whose query noise is drawn at once while an AboveThreshold instance runs.
    BLOCK = 4096

    def _play(self, xs: np.ndarray, ys: np.ndarray, rng: np.random.Generator) -> DPWinnowRun:
        """Play the stream, one AboveThreshold instance (a segment of rounds with a fixed
        released w~) at a time, vectorised within the segment: w~ does not change until the
        instance fires, so the segment's predictions, its mistake counts (the queries
        q(t) = mistakes since the last switch) and the instance's answers (the primitive's
        :meth:`~mechanisms.primitives.AboveThresholdMechanism.answer_batch`, the noise of
        :meth:`~mechanisms.primitives.AboveThresholdSession.query`) are computed for a block
        of rounds at once, up to the first positive answer.  The same law as answering the
        rounds one by one: the noise of rounds after the firing is drawn and discarded, and is
        independent of everything else."""
        p = self.params
        T = xs.shape[0]
        score = np.zeros(self.d)  # u_j = sum over updates of y_hat x_hat_j
        w_tilde = np.full(self.d, 1.0 / self.d)
        preds = np.empty(T, dtype=np.int64)
        rounds: list[int] = []
        released: list[np.ndarray] = []
        sampled: list[np.ndarray] = []
        t, k = 0, 0
        while t < T:
            if k >= p.switches:  # no further updates: the released w~ stays fixed
                preds[t:] = np.where(xs[t:] @ w_tilde >= 0, 1, -1)
                break
            threshold = self.above_threshold.start(rng).noisy_threshold
            since, cached, fired = 0, None, None
            while t < T and fired is None:
                stop = min(T, t + self.BLOCK)
                block = np.where(xs[t:stop] @ w_tilde >= 0, 1, -1)
                wrong = block != ys[t:stop]
                counts = since + np.cumsum(wrong)
                above = self.above_threshold.answer_batch(counts, np.full(stop - t, threshold), rng)
                hit = np.flatnonzero(above)
                end = stop if hit.size == 0 else t + int(hit[0]) + 1
                preds[t:end] = block[: end - t]
                if cached is None and wrong[: end - t].any():
                    cached = t + int(np.argmax(wrong[: end - t]))
                since = int(counts[end - t - 1])
                if hit.size:
                    fired = end - 1
                t = end
            if fired is None:
                break
            if cached is not None:  # multiplicative step with the first cached example
                score += ys[cached] * xs[cached]
            draws = self.sampler.select(score, rng, size=p.samples)
            w_tilde = np.bincount(draws, minlength=self.d) / p.samples
            k += 1
            rounds.append(fired)
            released.append(w_tilde)
            sampled.append(np.asarray(draws, dtype=np.int64))
        return DPWinnowRun(
            preds,
            tuple(rounds),
            np.array(released).reshape(len(released), self.d),
            np.array(sampled, dtype=np.int64).reshape(len(sampled), p.samples),
            int((preds != ys).sum()),
        )

    def __call__(self, dataset: tuple[Any, Any], rng: np.random.Generator) -> tuple[int, ...]:
        """Auditable form: ``dataset = (x, y)``; the output is :meth:`DPWinnowRun.output`."""
        return self.run(dataset[0], dataset[1], rng).output()

    def batch(
        self, dataset: tuple[Any, Any], n: int, rng: np.random.Generator
    ) -> list[tuple[int, ...]]:
        """n independent runs on the same stream (validated once), for the auditor: the runs
        of :meth:`_play` advanced together round by round (the same law run by run; the
        randomness is drawn in another order).  The primitives record what ``n`` separate
        runs record: one AboveThreshold start per instance, ``m`` samples per switch (runs
        that switch with equal scores sample together)."""
        xs, ys = self._checked(dataset[0], dataset[1])
        n = _count("n", n)
        p = self.params
        score = np.zeros((n, self.d))
        w_tilde = np.full((n, self.d), 1.0 / self.d)
        k = np.zeros(n, dtype=np.int64)
        cached = np.full(n, -1, dtype=np.int64)
        since = np.zeros(n, dtype=np.int64)
        thresholds = self.above_threshold.start_batch(rng, n)
        rounds = np.full((n, p.switches), -1, dtype=np.int64)
        sampled = np.zeros((n, p.switches, p.samples), dtype=np.int64)
        for t in range(xs.shape[0]):
            live = np.flatnonzero(k < p.switches)
            if live.size == 0:
                break
            preds = np.where(w_tilde[live] @ xs[t] >= 0, 1, -1)
            wrong = live[preds != ys[t]]
            since[wrong] += 1
            cached[wrong[cached[wrong] < 0]] = t
            fire = live[self.above_threshold.answer_batch(since[live], thresholds[live], rng)]
            step = fire[cached[fire] >= 0]
            score[step] += ys[cached[step], None] * xs[cached[step]]
            keys, inverse = np.unique(score[fire], axis=0, return_inverse=True)
            for g, key in enumerate(keys):
                runs = fire[inverse.ravel() == g]
                draws = np.asarray(
                    self.sampler.select(key, rng, size=runs.size * p.samples)
                ).reshape(runs.size, p.samples)
                rounds[runs, k[runs]] = t
                sampled[runs, k[runs]] = draws
                w_tilde[runs] = (draws[:, :, None] == np.arange(self.d)).sum(axis=1) / p.samples
            k[fire] += 1
            cached[fire], since[fire] = -1, 0
            restart = fire[k[fire] < p.switches]
            if restart.size:
                thresholds[restart] = self.above_threshold.start_batch(rng, restart.size)
        out: list[tuple[int, ...]] = [()] * n
        for switches in np.unique(k):
            runs = np.flatnonzero(k == switches)
            rows = np.concatenate(
                [
                    rounds[runs, :switches],
                    np.full((runs.size, 1), -1),
                    sampled[runs, :switches].reshape(runs.size, -1),
                ],
                axis=1,
            )
            for r, row in zip(runs.tolist(), rows.tolist(), strict=True):
                out[r] = tuple(row)
        return out


def winnow_neighbouring_pair(
    d: int,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A replace-one pair of one-example streams stressing the sampling step.

    Both examples are mistakes of the uniform initial hypothesis, so each becomes the update
    example; y x is (-1, +1 on a set S of d/2 coordinates, -1 elsewhere) in d0 and
    (+1, -1, ..., -1) in d1.  The score of coordinate 0 rises by 2 while the coordinates of S,
    which hold most of the weight under d0, fall by 2: the case where the sampling step's
    privacy loss approaches 4 eta (correction 1 of the module docstring).

    Raises:
        ValueError: if d < 4.
    """
    d = _count("d", d, 4)
    half = d // 2
    yx0 = -np.ones(d, dtype=np.int64)
    yx0[1 : 1 + half] = 1
    yx1 = -np.ones(d, dtype=np.int64)
    yx1[0] = 1
    # label -1 for both: x = -yx, and y <w_uniform, x> = mean(yx) <= 0 makes it a mistake
    # (with sgn(0) = +1, a zero inner product predicts +1 != -1).
    return (-yx0[None, :], np.array([-1])), (-yx1[None, :], np.array([-1]))


def theorem_4_4_plan() -> tuple[ev.Event, dict[str, sympy.Symbol]]:
    """The plan with Theorem 4.4's parameter choice, symbolic in eps, delta, m, K."""
    eps = sympy.Symbol("epsilon", positive=True)
    dlt = sympy.Symbol("delta", positive=True)
    m = sympy.Symbol("m", positive=True, integer=True)
    k = sympy.Symbol("K", positive=True, integer=True)
    eps_hat = eps / (4 * sympy.sqrt(2 * k * sympy.log(2 / dlt)))
    eta = eps / (8 * sympy.sqrt(2 * m * k * sympy.log(2 / dlt)))
    return plan(eps_hat, eta, m, k), {"epsilon": eps, "delta": dlt, "m": m, "K": k}


def _register() -> Claim:
    the_plan, s = theorem_4_4_plan()
    eps, dlt = s["epsilon"], s["delta"]
    return register_claim(
        Claim(
            key="004/theorem-4.4",
            document="004 Bun, Fang: Privately Learning Decision Lists and a DP Winnow",
            theorem="Theorem 4.4",
            statement="with eps_hat = eps/(4 sqrt(2K log(2/delta))) and eta = eps/(8 sqrt(2mK "
            "log(2/delta))), DP-Winnow is (eps, delta)-DP for all eps, delta in (0, 1)",
            plan=the_plan,
            epsilon=eps,
            delta=dlt,
            domain=Domain(
                {"epsilon": "(0, 1)", "delta": "(0, 1)", "m": "[1, oo)", "K": "[1, oo)"},
                integers=["m", "K"],
            ),
            note="plan: K AboveThreshold(eps_hat) and m K exponential mechanisms; each sample is "
            "declared (4 eta)-DP, correcting Appendix C's (2 eta) (the score moves by 2 per "
            "coordinate, in both directions, under replace-one); replace-one neighbours",
            steps=(
                Step(
                    "Appendix C, final inequality: eps/2 + eps^2/(16 log(2/delta)) < eps",
                    eps / 2 + eps**2 / (16 * sympy.log(2 / dlt)) < eps,
                ),
            ),
        )
    )


THEOREM_4_4_CLAIM = _register()
