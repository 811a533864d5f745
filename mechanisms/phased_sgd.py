"""Phased SGD with confidence boosting: source document 001's Algorithm 4 (Appendix B.2),
the private convex ERM that Algorithm 2 step 4 calls, reconstructed.

What 001 says (main text, Section 3.2; Appendix B.2 is not in the extracted text, and the
cited works could not be read here beyond their abstracts): Algorithm 4 is "the
construction in [BGM21, Algorithm 2]", devised for DP-SCO with non-smooth generalized linear
losses (GLLs), "based on a combination of a smoothing technique via proximal steps and the
phased SGD algorithm [FKT20, Algorithm 2] for smooth DP-SCO", fed with a sample from the
empirical distribution of the dataset, followed by "a standard private confidence-boosting
technique"; Lemma 3.1: it is (eps, delta)-DP for 0 < delta < 1/m, 0 < eps <= log(1/delta),
with O(m log(m) log(1/beta)) gradient computations.

Built here (:class:`PhasedSGD`), every constant re-derived from the proof's ingredients:

1. *Smoothing* (the GLL phi(y<w,x>) with phi(u) = max(0, o - s u), 001's rho-hinge: o = 1,
   s = 1/rho): the Moreau envelope phi_mu(u) = min_v phi(v) + (u - v)^2 / (2 mu), in
   closed form (:func:`moreau_derivative`: phi_mu'(u) = -clip((u0 - u)/mu, 0, s), u0 = o/s,
   the proximal step of the scalar link).  l_mu(w) = phi_mu(y<w,x>) is convex,
   L = s R-Lipschitz and beta = R^2/mu-smooth for features of norm <= R, and
   0 <= phi - phi_mu <= s^2 mu / 2 (the smoothing bias on the loss).
2. *Phased SGD* (FKT20 Algorithm 2): k = floor(log2 n) phases; a random permutation of the
   records (data-independent) is cut into consecutive disjoint batches of n_i =
   floor(n / 2^i) records; phase i runs one pass of projected SGD over its batch with the
   constant step eta_i = eta 4^-i, started at the previous phase's output w_{i-1}
   (w_0 = 0), and releases the average iterate plus N(0, sigma_i^2 I).
3. *Sensitivity* (re-derived): for a convex beta-smooth loss and eta_i <= 2/beta a projected
   gradient step is non-expansive (Hardt, Recht, Singer 2016, Lemma 3.7; the growth recursion
   of their Lemma 3.6), and the one step on the replaced record moves the two runs
   apart by at most 2 L eta_i; every later step keeps the gap, so every iterate, and their
   average, differs by at most Delta_i = 2 L eta_i.  Hence mu is set to R^2 eta_1 / 2 (the
   least smoothing with eta_i <= eta_1 = 2/beta); mu is derived from eta, not a parameter
   (a smaller mu would void the proof).  The non-smooth hinge itself has no such bound
   (SGD on it is not non-expansive), which is why the smoothing step exists.
4. *Noise* (re-derived): sigma_i = 2 Delta_i sqrt(ln(1/delta_ph)) / eps_ph = 4 L eta_i
   sqrt(ln(1/delta_ph)) / eps_ph -- FKT20's form 4 L eta_i sqrt(log(1/delta))/eps (as
   recalled: its text was not readable here; the derivation below does not rely on it).  It is
   (eps_ph, delta_ph)-DP for every 0 < eps_ph <= ln(1/delta_ph): the Gaussian mechanism is
   rho = Delta^2/(2 sigma^2) = eps_ph^2/(8 ln(1/delta_ph))-zCDP (Bun, Steinke 2016, Prop.
   1.6), hence (rho + 2 sqrt(rho ln(1/delta_ph)), delta_ph)-DP (BS16 Prop. 1.3), and
   rho + 2 sqrt(rho ln(1/delta)) <= eps (1/8 + 1/sqrt 2) < eps.  (The classical
   sqrt(2 ln(1.25/delta)) constant of Dwork-Roth Thm A.1 needs eps < 1; this form does not.)
5. *Privacy of one run*: a record lies in exactly one batch (a data-independent index
   partition), earlier phases do not see it, later phases post-process w_j: parallel
   composition over the phases, on a partition of *positions*: replace-one neighbours differ
   in one batch, so each phase is calibrated to the run's whole (eps_run, delta_run) and the
   plan declares ``Parallel(..., partition="positions")`` of the k Gaussian releases (the
   accountant's rule: the worst part, not the two largest parts that a partition of values
   needs).
6. *Confidence boosting* (as :class:`mechanisms.halfspaces.PrivateERM`): R = ``repetitions``
   independent runs with (eps_run, delta_run) = ((1 - share) eps / R, delta / R), then the
   exponential mechanism (share x eps, sensitivity ``loss.bound``: one record changes the
   total unsmoothed loss by at most its range) picks the run of least total loss.
7. *Step size* (utility only; privacy holds for every eta): eta = (D / L) min(4 / sqrt(n),
   eps_ph / sqrt(d ln(1/delta_ph))), D = 2 Lambda the diameter of B^d(Lambda): FKT20's
   setting as recalled (its text was not readable here), overridable (``step_size``).

Departure from 001: the document feeds an i.i.d. sample *with replacement* from the
empirical distribution (so that the DP-SCO bound of [BGM21] becomes an ERM bound) and needs
"a careful privacy analysis" for the duplicates; here each record is used once (a random
permutation), which makes the privacy argument exact parallel composition; Lemma 3.1's
excess-risk bound is then not what is proved for this sampling (without-replacement
one-pass SGD), and is not claimed.

Theorems cited at the lines: FKT20 = Feldman, Koren, Talwar, STOC 2020, Algorithm 2 and
Section 4; BGM21 = Bassily, Guzman, Menart, NeurIPS 2021, Algorithm 2; HRS16 = Hardt,
Recht, Singer, ICML 2016; BS16 = Bun, Steinke, TCC 2016.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms.halfspace_inputs import REPLACE, _check_rng, _int, _positive, projected_mechanism
from mechanisms.ledger import recorded_jointly
from mechanisms.noisy_sgd import MarginLoss
from mechanisms.primitives import ExponentialMechanism, GaussianMechanism

__all__ = ["PhasedSGD", "clip_rows", "moreau_derivative", "phase_sizes", "sgd_phase"]


def phase_sizes(n: int) -> list[int]:
    """n_i = floor(n / 2^i) for i = 1..k, k = floor(log2 n) (every batch non-empty; the
    batches are disjoint and use at most n - 1 records).  FKT20 Algorithm 2."""
    n = _int("n", n, 2)
    return [n >> i for i in range(1, n.bit_length())]


def moreau_derivative(u: np.ndarray, offset: float, slope: float, mu: float) -> np.ndarray:
    """phi_mu'(u) for phi(u) = max(0, offset - slope u) and its Moreau envelope with
    parameter mu: -clip((u0 - u)/mu, 0, slope), u0 = offset/slope (the gradient
    (u - prox_{mu phi}(u)) / mu of the proximal step; 1/mu-Lipschitz in u)."""
    return -np.clip((offset / slope - u) / mu, 0.0, slope)


def clip_rows(X: np.ndarray, radius: float) -> np.ndarray:
    """Rows longer than ``radius`` scaled back to it: the feature bound R the Lipschitz
    constant, the smoothness and the selection's sensitivity assume (001 Algorithm 2 clips
    onto B^k(2r) before calling Algorithm 4).  Record-wise, so neighbours stay neighbours."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.where(norms > radius, X * (radius / np.maximum(norms, 1e-300)), X)


def _project(W: np.ndarray, radius: float) -> np.ndarray:
    norms = np.sqrt(np.einsum("rd,rd->r", W, W))[:, None]
    return np.where(norms > radius, W * (radius / np.maximum(norms, 1e-300)), W)


def sgd_phase(
    W: np.ndarray,
    Z: np.ndarray,
    eta: float,
    offset: float,
    slope: float,
    mu: float,
    radius: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One pass of projected SGD with constant step ``eta`` on the Moreau-smoothed GLL,
    for ``runs`` runs at once: W (runs, d) the starting points, Z (runs, size, d) the rows
    y x of each run's batch in order.  Returns (last iterates, average iterates), the
    average over the ``size`` iterates after each step (FKT20 Algorithm 2's output before
    its noise).  No privacy of its own: :class:`PhasedSGD` adds the noise."""
    total = np.zeros_like(W)
    for t in range(Z.shape[1]):
        z = Z[:, t, :]
        g = moreau_derivative(np.einsum("rd,rd->r", W, z), offset, slope, mu)
        W = _project(W - (eta * g)[:, None] * z, radius)
        total += W
    return W, total / Z.shape[1]


@dataclasses.dataclass(frozen=True)
class PhasedSGD:
    """001 Algorithm 4 (reconstructed, see the module docstring): R runs of phased SGD on
    the Moreau-smoothed loss, the best run chosen by the exponential mechanism.

    Args:
        epsilon, delta: the (eps, delta)-DP target (replace-one).
        loss: the GLL (:class:`mechanisms.noisy_sgd.MarginLoss`; 001 uses ``hinge=True``
            with feature radius 2r and weight radius Lambda).
        repetitions: R, the runs of the confidence boosting (001: O(log(1/beta))).
        selection_share: the share of epsilon given to the exponential mechanism.
        step_size: eta (None: the FKT20 setting of the module docstring, item 7).

    Rows of X longer than ``loss.radius`` are clipped to it (:func:`clip_rows`), the bound
    every constant assumes.

    Privacy: :meth:`plan` = Composed(SelfComposed(Parallel(k Gaussian releases), R),
    Exponential); checked against the ledger of every fit.
    """

    epsilon: Any
    delta: Any
    loss: MarginLoss
    repetitions: int = 2
    selection_share: Any = sympy.Rational(1, 2)
    step_size: float | None = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _positive("delta", self.delta, 1.0)
        _int("repetitions", self.repetitions)
        _positive("selection_share", self.selection_share, 1.0)
        if self.step_size is not None:
            _positive("step_size", self.step_size)
        e_ph, d_ph = self.phase_budget()
        if not (e_ph.free_symbols or d_ph.free_symbols) and e_ph > sympy.log(
            1 / d_ph
        ):  # the range item 4's zCDP argument covers
            raise ValueError(
                f"epsilon must make the per-phase budget eps_ph = (1 - share) eps / R "
                f"at most ln(1/delta_ph) = ln(R / delta) (001 Lemma 3.1: eps <= "
                f"log(1/delta)), got epsilon = {self.epsilon!r}, delta = {self.delta!r}"
            )

    # --- the constants (exact) -----------------------------------------------------------

    def run_budget(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(eps_run, delta_run) = ((1 - share) eps / R, delta / R)  (item 6)."""
        share = exact(self.selection_share, "selection_share")
        r = self.repetitions
        return (1 - share) * exact(self.epsilon, "epsilon") / r, exact(self.delta, "delta") / r

    def phase_budget(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(eps_ph, delta_ph) = (eps_run, delta_run): replace-one parallel composition on a
        partition of positions is the worst part's guarantee (item 5)."""
        return self.run_budget()

    def eta(self, n: int, d: int) -> float:
        """eta = (D/L) min(4/sqrt(n), eps_ph / sqrt(d ln(1/delta_ph))) (item 7)."""
        if self.step_size is not None:
            return float(self.step_size)
        e_ph, d_ph = (float(v) for v in self.phase_budget())
        diameter, lip = 2 * float(self.loss.weight_radius), float(self.loss.lipschitz)
        return diameter / lip * min(4 / math.sqrt(n), e_ph / math.sqrt(d * math.log(1 / d_ph)))

    def smoothing(self, n: int, d: int) -> float:
        """mu = R^2 eta_1 / 2, the least Moreau parameter with eta_1 <= 2/beta, beta =
        R^2/mu (HRS16 Lemma 3.7 needs eta_i <= 2/beta in every phase; item 3)."""
        return float(self.loss.radius) ** 2 * (self.eta(n, d) / 4) / 2

    def sensitivity(self, eta_i: Any) -> sympy.Expr:
        """Delta_i = 2 L eta_i: the L2 replace-one sensitivity of phase i's average iterate
        (HRS16 Lemma 3.7: non-expansive steps for eta_i <= 2/beta, one step of 2 L eta_i)."""
        return 2 * self.loss.lipschitz * exact(eta_i, "eta_i")

    def sigma(self, eta_i: Any) -> sympy.Expr:
        """sigma_i = 4 L eta_i sqrt(ln(1/delta_ph)) / eps_ph (FKT20 Algorithm 2's form;
        (eps_ph, delta_ph)-DP by BS16 Prop. 1.3 and 1.6, item 4)."""
        e_ph, d_ph = self.phase_budget()
        return 2 * self.sensitivity(eta_i) * sympy.sqrt(sympy.log(1 / d_ph)) / e_ph

    def etas(self, n: int, d: int) -> list[sympy.Expr]:
        """eta_i = eta 4^-i, i = 1..k: exact rationals of the float eta, or (epsilon or
        delta symbolic, for a claim's plan) item 7's expression itself."""
        e_ph, d_ph = self.phase_budget()
        if self.step_size is not None:
            eta: sympy.Expr = exact(self.step_size, "step_size")
        elif e_ph.free_symbols or d_ph.free_symbols:
            ratio = 2 * exact(self.loss.weight_radius, "weight_radius") / self.loss.lipschitz
            eta = ratio * sympy.Min(4 / sympy.sqrt(n), e_ph / sympy.sqrt(d * sympy.log(1 / d_ph)))
        else:
            eta = sympy.Rational(self.eta(n, d))
        return [eta / 4**i for i in range(1, len(phase_sizes(n)) + 1)]

    # --- the declared plan -----------------------------------------------------------------

    def phase_events(self, n: int, d: int) -> tuple[ev.Gaussian, ...]:
        """One Gaussian release per phase: Gaussian(sigma_i, Delta_i, replace-one)."""
        return tuple(
            ev.Gaussian(self.sigma(eta), self.sensitivity(eta), relation=REPLACE)
            for eta in self.etas(n, d)
        )

    def run_event(self, n: int, d: int) -> ev.Event:
        """One phased-SGD run: parallel composition over the phases' disjoint batches
        (McSherry 2009 Thm 4, adaptive: phase i+1 post-processes w_i; item 5)."""
        return ev.Parallel(list(self.phase_events(n, d)), partition="positions")

    def _selection(self) -> ExponentialMechanism:
        share = exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")
        return ExponentialMechanism(share, self.loss.bound, relation=REPLACE)

    def plan(self, n: int, d: int) -> ev.Event:
        """R runs (sequential composition), then the exponential mechanism (item 6)."""
        runs = ev.SelfComposed(self.run_event(n, d), self.repetitions)
        share = exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")
        return ev.Composed([runs, ev.Exponential(share, self.loss.bound, relation=REPLACE)])

    # --- running it ------------------------------------------------------------------------

    def runs(self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        """``runs`` independent phased-SGD runs on (X, y), advanced together: shape (runs, d).

        Vectorised over the runs; one Python iteration per SGD step (n - 1 steps in all,
        the batches halve).  Each phase's release is one run of its Gaussian primitive per
        run; the k releases of a run are recorded jointly as the run's ``Parallel`` event.
        """
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        sizes, etas = phase_sizes(n), self.etas(n, d)
        offset, slope = float(self.loss.offset), float(self.loss.slope)
        mu, radius = self.smoothing(n, d), float(self.loss.weight_radius)
        yX = X * np.asarray(y, dtype=float)[:, None]
        # a data-independent permutation per run, cut into the disjoint batches
        order = np.argsort(rng.random((runs, n)), axis=1)
        parts = self.phase_events(n, d)
        W = np.zeros((runs, d))
        start = 0
        with recorded_jointly(parts, ev.Parallel(list(parts), partition="positions"), times=runs):
            for size, eta_e, part in zip(sizes, etas, parts, strict=True):
                eta = float(eta_e)
                Z = yX[order[:, start : start + size]]  # (runs, size, d)
                start += size
                W, average = sgd_phase(W, Z, eta, offset, slope, mu, radius)
                gauss = GaussianMechanism(part.sigma, part.sensitivity, relation=REPLACE)
                W = average + gauss.release(np.zeros(d), rng, size=runs)
        # the output in B(Lambda) (001 Algorithm 2 step 4): a post-processing
        return _project(W, radius)

    def fit(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """R runs and the selection; returns the selected weight vector."""
        return self.fit_batch(X, y, 1, rng)[0]

    def fit_batch(
        self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``runs`` independent fits (each R phased-SGD runs and one selection), (runs, d)."""
        rng = _check_rng(rng)
        runs = _int("runs", runs)
        X = clip_rows(np.asarray(X, dtype=float), float(self.loss.radius))
        r = self.repetitions
        W = self.runs(X, y, runs * r, rng).reshape(runs, r, X.shape[1])
        values = self.loss.values(W.reshape(runs * r, -1), X, np.asarray(y)).reshape(runs, r)
        em = self._selection()
        picks = [int(em.select(-v, rng)) for v in values]
        return W[np.arange(runs), picks]

    def mechanism(
        self, features: Callable[[Any], tuple[np.ndarray, np.ndarray]], direction: Any, name: str
    ) -> Callable[..., Any]:
        """An auditable form: ``mechanism(dataset, rng)`` is <w, direction> for the selected
        w on ``features(dataset)`` = (Z, y) (a post-processing), with a vectorised
        ``.batch``."""
        return projected_mechanism(self, features, direction, name)
