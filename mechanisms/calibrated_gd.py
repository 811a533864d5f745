"""Full-batch noisy gradient descent with the noise calibrated by the accountant: the
*practical regime* of the noisy-SGD margin learners (000 Algorithm 1/3, 001 Algorithm 2 and
3), offered beside the papers' optimisers, not instead of them.

Why a regime is needed.  The papers' optimisers take their noise from a closed form: BST14's
sigma = sqrt(32 L^2 n^2 log(n/delta) log(1/delta)) / eps for n^2 uniformly sampled steps (000
Algorithm 3 step 13) or FKT20's per-phase sigma (001 Algorithm 4, :mod:`mechanisms.phased_sgd`).
At n = 3000, eps = 0.9 the BST14 noise is hundreds of times the gradient on every step, and the
learners stay near chance.  Their *privacy*, however, is not BST14's constant: dpaudit accounts
the plan that actually runs.  So any optimiser whose plan the accountant certifies within the
request is private, whatever its constants.

What runs (:class:`CalibratedGD`): T steps of projected gradient descent on the *average*
loss over the ball B(Lambda) (Lambda = ``loss.weight_radius``),

    w_{t+1} = Pi_Lambda( w_t - eta [ (1/n) sum_i grad l(w_t; x_i, y_i) + b_t ] ),
    b_t ~ N(0, sigma^2 I),

and the output is the average iterate (1/T) sum_t w_t (a post-processing).  ``repetitions``
R > 1 runs are followed by the exponential mechanism over the runs' total losses (000/001's
confidence boosting); R = 1 (the default) skips it.

Privacy (the proof, at every parameter setting):

* rows are clipped to norm ``loss.radius`` first (a record-wise map), so each per-record
  gradient has norm <= L = ``loss.lipschitz`` (the loss is L-Lipschitz on such rows); replacing
  one record moves the average gradient by at most 2L/n in L2.  Step t is therefore the
  Gaussian mechanism Gaussian(sigma, 2L/n, replace-one) on a query chosen adaptively from the
  earlier (released) iterates;
* T adaptive Gaussian mechanisms of the same sensitivity compose to exactly one Gaussian
  mechanism of sensitivity sqrt(T) 2L/n (Dong, Roth, Su 2019, Corollary 3.3: mu-GDP composes
  as sqrt(sum mu_i^2)), whose exact (eps, delta) curve is Balle, Wang 2018, Theorem 8; the
  accountant applies both to the plan ``SelfComposed(Gaussian(sigma, 2L/n), R T)`` (plus the
  selection's ``Exponential``) and returns an upper bound rounded up;
* sigma is the smallest value on a grid of exact rationals for which that accounted bound is
  within (epsilon, delta) (:func:`calibrated_sigma`, a bisection over the accountant itself),
  so the guarantee is the accountant's, never a closed form; the estimators account the plan
  again before any fit and refuse it when it exceeds the request.

What is *not* claimed: the papers' utility theorems (Theorem 3 of 000, Theorem 3.2 of 001)
are proved for their optimisers; this one is plain noisy projected gradient descent, with no
sample-complexity bound stated here.  Its utility is measured (learning curves, tests), not
proved.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.accountant import Accountant
from dpaudit.numeric import exact
from mechanisms.halfspace_inputs import REPLACE, _check_rng, _int, _positive, projected_mechanism
from mechanisms.noisy_sgd import MarginLoss
from mechanisms.phased_sgd import clip_rows
from mechanisms.primitives import ExponentialMechanism, GaussianMechanism

__all__ = ["CALIBRATED_STEPS", "CalibratedGD", "calibrated_sigma"]

#: Default number of full-batch steps T (privacy holds for any T: sigma grows as sqrt(T)).
CALIBRATED_STEPS = 100

#: sigma is calibrated on a grid of this relative resolution (bisection over the accountant).
_RESOLUTION = 1e-3


def _plan(
    sigma: sympy.Expr,
    sensitivity: sympy.Expr,
    steps: int,
    repetitions: int,
    selection: sympy.Expr | None,
    bound: sympy.Expr,
) -> ev.Event:
    gauss = ev.SelfComposed(ev.Gaussian(sigma, sensitivity, relation=REPLACE), steps * repetitions)
    if selection is None:
        return gauss
    return ev.Composed([gauss, ev.Exponential(selection, bound, relation=REPLACE)])


def _gaussian_mu_inverse(epsilon: float, delta: float) -> float:
    """1/mu for the mu-GDP Gaussian with delta(epsilon) = delta (Balle, Wang 2018, Theorem
    8: delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)), by bisection: only the
    starting point of the search, never a guarantee."""
    from scipy.stats import norm

    def excess(mu: float) -> float:
        return (
            float(
                norm.cdf(-epsilon / mu + mu / 2)
                - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)
            )
            - delta
        )

    lo, hi = 1e-6, 1e3
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if excess(mid) <= 0 else (lo, mid)
    return 1 / lo


@functools.lru_cache(maxsize=256)
def calibrated_sigma(
    epsilon: sympy.Expr,
    delta: sympy.Expr,
    sensitivity: sympy.Expr,
    steps: int,
    repetitions: int,
    selection: sympy.Expr | None,
    bound: sympy.Expr,
) -> sympy.Rational:
    """The smallest sigma (an exact rational, to a relative grid of 1e-3) for which the
    accountant bounds the plan (R T Gaussian steps of L2 sensitivity ``sensitivity``,
    replace-one, then the exponential mechanism of budget ``selection`` if not None) by
    (epsilon, delta).

    The bisection only *searches*; the returned sigma is one whose plan the accountant
    certified (upper bound, rounded up) within the target, so the guarantee does not depend
    on the search being exact.

    Raises:
        ValueError: if no sigma works (the selection alone exceeds epsilon).
    """
    eps, dlt = float(epsilon), float(delta)
    accountant = Accountant()
    base = float(sensitivity) * math.sqrt(steps * repetitions)

    def ok(k: int) -> bool:
        plan = _plan(grid(k), sensitivity, steps, repetitions, selection, bound)
        g = accountant.guarantee(plan, dlt)
        e_up, d_up = g.epsilon_upper, g.delta_upper
        return e_up is not None and d_up is not None and e_up <= eps and d_up <= dlt

    def grid(k: int) -> sympy.Rational:
        # sigma = base (1 + resolution)^k, an exact rational rounded up
        return sympy.Rational(math.ceil(base * (1.0 + _RESOLUTION) ** k * 1e9), 10**9)

    # Start from the Gaussian closed form (Balle-Wang 2018 Thm 8, the steps' budget taken as
    # epsilon minus the selection's), then bracket and bisect on the accountant itself (ok
    # is monotone: more noise never costs more privacy).
    share = 0.0 if selection is None else float(selection)
    start = round(
        math.log(_gaussian_mu_inverse(max(eps - share, eps / 2), dlt)) / math.log1p(_RESOLUTION)
    )
    stride, limit = 1, 40 * 700
    if ok(start):
        hi, lo = start, start - 1
        while ok(lo):
            if start - lo > limit:
                break
            hi, lo, stride = lo, lo - stride, 2 * stride
    else:
        lo, hi = start, start + 1
        while not ok(hi):
            if hi - start > limit:
                raise ValueError(
                    f"epsilon: no noise scale sigma makes the plan ({epsilon}, {delta})-DP "
                    "(the selection's budget alone exceeds epsilon?)"
                )
            lo, hi, stride = hi, hi + stride, 2 * stride
    while hi - lo > 1:
        mid = (hi + lo) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return grid(hi)


@dataclasses.dataclass(frozen=True)
class CalibratedGD:
    """Full-batch noisy projected GD with sigma calibrated by the accountant (the module
    docstring states the algorithm and its privacy proof).

    Args:
        epsilon, delta: the (eps, delta)-DP target of the whole optimiser (replace-one).
        loss: the margin loss (:class:`mechanisms.noisy_sgd.MarginLoss`): its Lipschitz
            constant fixes the sensitivity, ``radius`` the row clipping, ``weight_radius``
            the ball of the iterates.
        steps: T, gradient steps per run (any T keeps the proof: sigma is calibrated to it).
        repetitions: R runs; R > 1 adds the exponential mechanism over the runs.
        selection_share: the share of epsilon given to that selection (R > 1 only).
        step_size: eta (None: 2 Lambda / sqrt(T (L^2 + d sigma^2)), projected subgradient
            descent's step for gradients of norm about sqrt(L^2 + d sigma^2)); utility only.

    Privacy: :meth:`plan`, certified within (epsilon, delta) by construction of sigma.
    """

    epsilon: Any
    delta: Any
    loss: MarginLoss
    steps: int = CALIBRATED_STEPS
    repetitions: int = 1
    selection_share: Any = sympy.Rational(1, 10)
    step_size: float | None = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _positive("delta", self.delta, 1.0)
        _int("steps", self.steps)
        _int("repetitions", self.repetitions)
        _positive("selection_share", self.selection_share, 1.0)
        if self.step_size is not None:
            _positive("step_size", self.step_size)

    def sensitivity(self, n: int) -> sympy.Expr:
        """2L/n: the replace-one L2 sensitivity of the average gradient (rows clipped)."""
        return 2 * self.loss.lipschitz / exact(_int("n", n, 2), "n")

    def _selection_budget(self) -> sympy.Expr | None:
        if self.repetitions == 1:
            return None
        return exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")

    def sigma(self, n: int) -> sympy.Rational:
        """The calibrated noise scale (:func:`calibrated_sigma`)."""
        return calibrated_sigma(
            exact(self.epsilon, "epsilon"),
            exact(self.delta, "delta"),
            self.sensitivity(n),
            int(self.steps),
            int(self.repetitions),
            self._selection_budget(),
            self.loss.bound,
        )

    def plan(self, n: int, d: int | None = None) -> ev.Event:
        """SelfComposed(Gaussian(sigma, 2L/n, replace-one), R T) [+ the selection's
        Exponential]; ``d`` is accepted for the optimisers' common signature and unused."""
        return _plan(
            self.sigma(n),
            self.sensitivity(n),
            int(self.steps),
            int(self.repetitions),
            self._selection_budget(),
            self.loss.bound,
        )

    def eta(self, n: int, d: int) -> float:
        if self.step_size is not None:
            return float(self.step_size)
        lip, sigma = float(self.loss.lipschitz), float(self.sigma(n))
        return 2 * float(self.loss.weight_radius) / math.sqrt(self.steps * (lip**2 + d * sigma**2))

    def runs(self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        """``runs`` independent GD runs on rows already clipped, advanced together: the
        average iterates, shape (runs, d).  Each step is one release of the Gaussian
        primitive per run."""
        n, d = X.shape
        gauss = GaussianMechanism(self.sigma(n), self.sensitivity(n), relation=REPLACE)
        offset, slope = float(self.loss.offset), float(self.loss.slope)
        radius, eta = float(self.loss.weight_radius), self.eta(n, d)
        yX = X * np.asarray(y, dtype=float)[:, None]
        W = np.zeros((runs, d))
        total = np.zeros((runs, d))
        for _ in range(int(self.steps)):
            active = offset - slope * (W @ yX.T) > 0  # (runs, n): the subgradient's support
            grad = -(slope / n) * (active.astype(float) @ yX)
            noisy = gauss.release(grad, rng) if runs > 1 else gauss.release(grad[0], rng)[None]
            W = W - eta * noisy
            norms = np.linalg.norm(W, axis=1, keepdims=True)
            W = np.where(norms > radius, W * (radius / np.maximum(norms, 1e-300)), W)
            total += W
        return total / int(self.steps)

    def fit(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """R runs (and the selection if R > 1); returns the weight vector."""
        rng = _check_rng(rng)
        X = clip_rows(np.asarray(X, dtype=float), float(self.loss.radius))
        W = np.stack([self.runs(X, y, 1, rng)[0] for _ in range(self.repetitions)])
        if self.repetitions == 1:
            return W[0]
        budget = self._selection_budget()
        em = ExponentialMechanism(budget, self.loss.bound, relation=REPLACE)
        return W[int(em.select(-self.loss.values(W, X, np.asarray(y)), rng))]

    def fit_batch(
        self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``runs`` independent fits, shape (runs, d) (for audits)."""
        rng = _check_rng(rng)
        return np.stack([self.fit(X, y, rng) for _ in range(_int("runs", runs))])

    def mechanism(
        self, features: Callable[[Any], tuple[np.ndarray, np.ndarray]], direction: Any, name: str
    ) -> Callable[..., Any]:
        """An auditable form (see :func:`mechanisms.halfspace_inputs.projected_mechanism`)."""
        return projected_mechanism(self, features, direction, name)
