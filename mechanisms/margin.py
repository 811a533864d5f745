"""Private learning with margin guarantees: source document 001 (Bassily, Mohri, Suresh,
"Differentially private learning with margin guarantees", NeurIPS 2022).

* :class:`PureLinearLearner` -- Algorithm 1 (Theorem 3.1, eps-DP): x -> Phi x with a random
  k x d sign matrix, the exponential mechanism over a rho/(10 r)-cover of B^k(2 Lambda) with
  score the empirical rho-margin loss (sensitivity 1/m), output Phi^T w.
* :class:`EfficientLinearLearner` -- Algorithm 2 (Theorem 3.2, (eps, delta)-DP): projection,
  clipping of Phi x onto B^k(2r), private convex ERM of the rho-hinge loss over B^k(Lambda)
  by Algorithm 4 (phased SGD + confidence boosting, :mod:`mechanisms.phased_sgd`).
* :class:`KernelLearner` -- Algorithm 3 (Theorem 4.2): random Fourier features for the
  Gaussian kernel (Rahimi and Recht 2007), then Algorithm 2 on the 2D-dimensional features
  with norm bound 2 Lambda.
* :class:`NeuralNetLearner` -- Section 5 (Theorem 5.1, eps-DP) at toy sizes: a two-layer
  network w2^T sigma(W1^T Phi0 x), the exponential mechanism over a cover of the product of
  the weight balls with the empirical rho-margin loss.
* :class:`LabelDPLearner` -- the label-DP learner (Appendix E, not in the document).
* :class:`MarginSelection` -- private selection of the margin parameter (Appendix F, not in
  the document).

Auditable forms (``mechanism(...)``) fix the data-independent projection or embedding
(privacy holds for each value of it) and return the selected index, or for Algorithm 2 a
projection of the learned weights on a given direction (a post-processing).

Reconstructions (the document is the main text only; formulas are garbled):

* Algorithm 1 step 4 reads "Let C be a 10 r-cover of Bk(2 )": read as a rho/(10 r)-cover of
  B^k(2 Lambda) (the scale that keeps |<w - c, Phi x>| <= rho/10 for ||Phi x|| <= r).
* Algorithm 2 step 4 calls Algorithm 4 (Appendix B.2: "[BGM21, Algorithm 2]", smoothing by
  proximal steps + the phased SGD of [FKT20, Algorithm 2], then private confidence
  boosting), which is missing from the text.  Rebuilt from that description in
  :mod:`mechanisms.phased_sgd` (:class:`~mechanisms.phased_sgd.PhasedSGD`, the default
  ``optimizer="phased"``): the Moreau envelope of the rho-hinge loss (smoothness R^2/mu),
  floor(log2 m) phases on disjoint halving batches of a random permutation, step eta 4^-i,
  averaged iterate + N(0, sigma_i^2 I) with sensitivity 2 L eta_i (HRS16 non-expansive
  steps) and sigma_i = 4 L eta_i sqrt(ln(1/delta_ph))/eps_ph, parallel composition over the
  phases (a partition of positions: each phase gets the run's whole budget), R runs and the
  exponential mechanism; every constant and the one departure (each
  record used once instead of an i.i.d. resample with duplicates) are in that module's
  docstring and in docs/learners.md.  The earlier stand-in stays as ``optimizer="bst14"``:
  BST14 noisy SGD with uniform sampling and confidence boosting by the exponential
  mechanism, i.e. :class:`mechanisms.halfspaces.PrivateERM` on the rho-hinge loss
  max(0, 1 - y<w,x>/rho) (Lipschitz 2r/rho on B^k(2r)); the claim ``001/theorem-3.2`` and
  the report's audit use it (their plan is symbolic in m).  Algorithm 4's own claim,
  ``001/lemma-3.1``, is stated at m = 10 (floor(log2 m) phases need an integer m).  The
  fast JL transform (Lemma A.4) is replaced by a dense sign matrix (same distribution-free
  guarantee, slower).
* Section 5's activation "sigma(a) = 1 e a 2" is read as a kappa-Lipschitz sigmoid; tanh(kappa
  a) is used.  Only L = 2 layers with one input embedding Phi0 are built.
* Label DP (Appendix E): the features are public, so the candidate set may depend on them:
  one halfspace per labeling of the sample's features (exact in R^2), the exponential
  mechanism on the rho-margin loss of the private labels (sensitivity 1/m when one label
  changes).  The guarantee is eps-label-DP: the event is stated under replace-one for the
  *labels* with the features fixed (the Relation enum has no label-only relation).
* Margin selection (Appendix F): rho_j = r 2^-j, j < J, Algorithm 1 at each with eps/(2J),
  then the exponential mechanism (eps/2, sensitivity 1/m) on minus (empirical rho_j-margin
  loss + the data-independent complexity term Lambda r / (rho_j sqrt(m))).

Modules: this one holds the label-DP learner, the margin selection and the claims;
:mod:`mechanisms.margin_linear` Algorithms 1 and 2 and the shared helpers,
:mod:`mechanisms.margin_nonlinear` the kernel and network learners (both re-exported here).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.covers import halfspace_labelings_2d
from mechanisms.halfspaces import (
    HalfspaceModel,
    _data,
    _int,
    margin_fractions,
    random_sphere_points,
)
from mechanisms.localised_selection import Localisation, localised_select
from mechanisms.margin_linear import (
    REPLACE,
    EfficientLinearLearner,
    PureLinearLearner,
    _auditable,
    _em,
    _rng,
    margin_loss,
)
from mechanisms.margin_nonlinear import KernelLearner, NeuralNetLearner, random_fourier_features

__all__ = [
    "EfficientLinearLearner",
    "KernelLearner",
    "LabelDPLearner",
    "MarginSelection",
    "NeuralNetLearner",
    "PureLinearLearner",
    "margin_loss",
    "random_fourier_features",
]


@dataclasses.dataclass(frozen=True)
class LabelDPLearner:
    """Label-DP learner (001 Appendix E, reconstructed): one halfspace of R^2 per labeling of
    the public features, scaled to norm ``weight_radius``, the exponential mechanism on the
    empirical rho-margin loss of the private labels (sensitivity 1/m).

    ``candidates`` (the practical regime; None: the labelings of R^2): that many points of
    the sphere of radius ``weight_radius`` of R^d (any d), drawn before the labels are read,
    localised over ``rounds`` rounds (:mod:`mechanisms.localised_selection`).  The labelings
    of d > 2 features are O(m^d) candidates, which no enumeration affords.

    Privacy: eps-label-DP (features fixed; one label changes); claim ``001/label-dp``.  The
    random candidates are label-independent (they do not even read the features), and with
    R > 1 rounds the parallel composition over a partition of positions holds with one label
    changed as it does with one record changed.
    """

    epsilon: Any
    rho: float
    weight_radius: float = 1.0
    candidates: int | None = None
    rounds: int = 1
    first_angle: float = 1.0
    shrink: float = 0.5

    def __post_init__(self) -> None:
        if self.candidates is None and self.rounds != 1:
            raise ValueError(
                f"rounds must be 1 with the labelings of R^2 (candidates None), got {self.rounds!r}"
            )

    def schedule(self) -> Localisation:
        """The rounds of the random-candidate regime."""
        return Localisation(
            _int("rounds", self.rounds), self.candidates or 1, self.first_angle, self.shrink
        )

    def plan(self, m: Any) -> ev.Event:
        return ev.PostProcessed(self.schedule().plan(self.epsilon, m))

    def candidates_for(self, X: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The labelings of the features (R^2), or the random candidates drawn from ``rng``."""
        if self.candidates is None:
            return self.weight_radius * halfspace_labelings_2d(X)
        if rng is None:
            raise ValueError("rng must be a numpy Generator to draw random candidates, got None")
        points = random_sphere_points(_int("candidates", self.candidates), X.shape[1], rng)
        return self.weight_radius * points

    def select(
        self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator, size: int | None = None
    ) -> Any:
        C = self.candidates_for(X)
        loss = margin_fractions(C, X, y, self.rho)
        return _em(self.epsilon, len(X)).select(-loss, rng, size=size)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or (self.candidates is None and X.shape[1] != 2):
            raise ValueError(
                f"X must be an (m, 2) array for the labelings of R^2 (candidates None), got "
                f"shape {X.shape}"
            )
        X, y = _data(X, y)
        rng = _rng(rng)
        if self.candidates is None:
            return HalfspaceModel(self.candidates_for(X)[int(self.select(X, y, rng))])
        first = self.candidates_for(X, rng)

        def loss(C: np.ndarray, rows: np.ndarray) -> np.ndarray:
            return margin_fractions(C, X[rows], y[rows], self.rho)

        w, _ = localised_select(self.schedule(), self.epsilon, len(X), first, loss, rng)
        return HalfspaceModel(w)

    def mechanism(self) -> Any:
        """Auditable form: ``mechanism((X, y), rng)`` -> index of the selected candidate,
        with ``.batch``; neighbours share X and differ in one label."""
        return _auditable(self.select, "001 label-DP learner")


@dataclasses.dataclass(frozen=True)
class MarginSelection:
    """Private selection of the margin parameter (001 Appendix F, reconstructed): run
    :class:`PureLinearLearner` at rho_j = r 2^-j (j < ``grid``) with eps/(2 grid) each, then
    the exponential mechanism (eps/2, sensitivity 1/m) on minus (empirical rho_j-margin loss
    of w_j + Lambda r / (rho_j sqrt(m))).

    ``rounds``, ``first_angle``, ``shrink``: each margin's Algorithm 1 localises its random
    candidates over that many rounds (:mod:`mechanisms.localised_selection`; its plan is the
    rounds' parallel composition, eps-DP at its budget).

    Practical-regime options (neither enters the privacy proof's validity):
    ``selection_share`` s (default 1/2, Appendix F's): the final selection runs at s eps and
    each margin's learner at (1 - s) eps / grid; ``penalty`` c >= 0 (default 1, Appendix
    F's): the final score is minus (loss + c Lambda r / (rho_j sqrt(m))); ``largest_margin``
    g (default None: r/2, Appendix F's grid): the grid rho_j = g 2^-(j-1).

    Privacy: eps-DP by basic composition (claim ``001/margin-selection``; Dwork-Roth 2014
    Theorem 3.16): grid exponential mechanisms at (1 - s) eps / grid and one at s eps sum
    to eps for every s in (0, 1).  The penalty is a function of j, m, Lambda and r only
    (data-independent under replace-one, where m is fixed), so the final score's
    sensitivity is the loss's, 1/m, for every c (McSherry-Talwar 2007 Theorem 6); the
    grid is fixed before the data are read, so g does not enter the guarantee either.
    """

    epsilon: Any
    grid: int
    dimension: int | None
    weight_radius: float = 1.0
    radius: float = 1.0
    candidates: int | None = None
    selection_share: Any = sympy.Rational(1, 2)
    penalty: float = 1.0
    largest_margin: float | None = None
    rounds: int = 1
    first_angle: float = 1.0
    shrink: float = 0.5

    def _shares(self) -> tuple[Any, Any]:
        """(each margin's epsilon, the final selection's epsilon), exact."""
        e = exact(self.epsilon, "epsilon")
        share = self.selection_share
        # a float share is read as the decimal it prints as (0.2 -> 1/5): the plan and the
        # primitives that run both come from this one exact value
        s = sympy.Rational(repr(share)) if isinstance(share, float) else share
        s = exact(s, "selection_share")
        if s.is_number and not (0 < s < 1):
            raise ValueError(f"selection_share must be a number in (0, 1), got {s}")
        return (1 - s) * e / _int("grid", self.grid), s * e

    def _penalty(self) -> float:
        """The factor c of the complexity term, checked (a number in [0, inf))."""
        c = float(self.penalty)
        if not (math.isfinite(c) and c >= 0):
            raise ValueError(f"penalty must be a number in [0, inf), got {self.penalty!r}")
        return c

    def rhos(self) -> list[float]:
        """rho_j = r 2^-j, j = 1..grid (Appendix F); with ``largest_margin`` g: g 2^-(j-1)."""
        top = self.radius / 2 if self.largest_margin is None else float(self.largest_margin)
        if not (math.isfinite(top) and top > 0):
            raise ValueError(f"largest_margin must be a number in (0, inf), got {top!r}")
        return [top * 2.0 ** -(j - 1) for j in range(1, _int("grid", self.grid) + 1)]

    def plan(self, m: Any) -> ev.Event:
        _, final = self._shares()
        return ev.Composed(
            [
                ev.SelfComposed(self.learners()[0].plan(m), self.grid),
                ev.Exponential(final, 1 / exact(m, "m"), relation=REPLACE),
            ]
        )

    def learners(self) -> list[PureLinearLearner]:
        """Algorithm 1 at each rho_j with (1 - s) eps / grid (Appendix F: eps/(2 grid))."""
        each, _ = self._shares()
        return [
            PureLinearLearner(
                each,
                rho,
                self.dimension,
                self.weight_radius,
                self.radius,
                candidates=self.candidates,
                rounds=self.rounds,
                first_angle=self.first_angle,
                shrink=self.shrink,
            )
            for rho in self.rhos()
        ]

    def _choose(
        self, X: np.ndarray, y: np.ndarray, W: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The final exponential mechanism (s eps, sensitivity 1/m) over the models W[r, j]
        (run r, one model per rho_j): score minus (rho_j-margin loss + c Lambda r / (rho_j
        sqrt(m))).  Returns the selected j of every run."""
        m = len(X)
        rhos = np.array(self.rhos())
        loss = np.mean(np.einsum("rjd,md->rjm", W, X) * y <= rhos[None, :, None], axis=2)
        penalty = self._penalty() * self.weight_radius * self.radius / (rhos * math.sqrt(m))
        scores = -(loss + penalty)
        em = _em(self._shares()[1], m)
        return np.array([em.select(row, rng) for row in scores], dtype=np.int64)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> tuple[HalfspaceModel, float]:
        """Returns the selected model and its margin parameter."""
        X, y = _data(X, y)
        rng = _rng(rng)
        self._penalty()  # refused before any learner runs: nothing half recorded
        models = [learner.fit(X, y, rng) for learner in self.learners()]
        k = int(self._choose(X, y, np.array([[model.w for model in models]]), rng)[0])
        return models[k], self.rhos()[k]

    def mechanism(self, projections: Sequence[np.ndarray]) -> Any:
        """The auditable form for *fixed* projections (one k x d matrix per rho_j; privacy
        holds for every choice, so conditioning on them is a valid test):
        ``mechanism((X, y), rng)`` returns the selected model as one integer (the offset of
        the chosen rho_j's cover plus the index of its cover point: the output (w, rho_j) up
        to a bijection), with a ``.batch`` that draws the grid's selections vectorised."""
        self._penalty()  # refused here, not after the grid's selections ran
        learners = self.learners()
        if len(projections) != len(learners):
            raise ValueError(
                f"projections must hold grid = {len(learners)} matrices, got {len(projections)}"
            )
        covers = [learner.cover() for learner in learners]
        offsets = np.cumsum([0] + [len(C) for C in covers[:-1]])

        def select(X: Any, y: Any, rng: np.random.Generator, size: int | None) -> Any:
            X, y = _data(X, y)
            runs = 1 if size is None else size
            picks = np.stack(
                [
                    learner._select(C, Phi, X, y, rng, runs)
                    for learner, C, Phi in zip(learners, covers, projections, strict=True)
                ],
                axis=1,
            )
            W = np.stack(
                [
                    C[picks[:, j]] @ Phi
                    for j, (C, Phi) in enumerate(zip(covers, projections, strict=True))
                ],
                axis=1,
            )
            k = self._choose(X, y, W, rng)
            out = offsets[k] + picks[np.arange(runs), k]
            return int(out[0]) if size is None else out

        return _auditable(select, "001 margin selection (fixed projections)")


# ----------------------------------------------------------------------------------------
# Claims
# ----------------------------------------------------------------------------------------

_e, _d, _m = (sympy.Symbol(s, positive=True) for s in ("epsilon", "delta", "m"))
_DOC = "001 Bassily, Mohri, Suresh 2022"
_PURE_DOMAIN = Domain({"epsilon": "(0, oo)", "m": "[2, oo)"}, integers=["m"])

for _key, _thm, _statement, _learner in (
    (
        "001/theorem-3.1",
        "Theorem 3.1",
        "Algorithm 1 (JL + EM over a cover) is eps-DP",
        PureLinearLearner(_e, 0.25, 2),
    ),
    (
        "001/theorem-5.1",
        "Theorem 5.1",
        "the neural-network learner (EM over a cover of the embedded networks) is eps-DP",
        NeuralNetLearner(_e, 0.25),
    ),
    (
        "001/label-dp",
        "Appendix E (reconstructed)",
        "the label-DP learner is eps-label-DP",
        LabelDPLearner(_e, 0.25),
    ),
    (
        "001/margin-selection",
        "Appendix F (reconstructed)",
        "Algorithm 1 over a grid of margins + private selection is eps-DP",
        MarginSelection(_e, 4, 2),
    ),
):
    register_claim(
        Claim(
            key=_key,
            document=_DOC,
            theorem=_thm,
            statement=_statement,
            plan=_learner.plan(_m),
            epsilon=_e,
            delta=0,
            domain=_PURE_DOMAIN,
        )
    )

register_claim(
    Claim(
        key="001/theorem-3.2",
        document=_DOC,
        theorem="Theorem 3.2 (privacy)",
        statement="Algorithm 2 is (eps, delta)-DP for 0 < delta < 1/m, 0 < eps <= log(1/delta)",
        plan=EfficientLinearLearner(_e, _d, 0.25, 10, optimizer="bst14").plan(_m),
        epsilon=_e,
        delta=_d,
        domain=Domain(
            {"epsilon": "(0, 1]", "delta": "(0, 1/10]", "m": "[10, oo)"},
            integers=["m"],
            constraints=[_d * _m < 1],
        ),
        note=(
            "Stated for the BST14 stand-in optimiser (optimizer='bst14': noisy SGD + EM "
            "boosting with m^2 steps per run, 2 runs), whose plan is symbolic in m; the "
            "default optimiser, Algorithm 4 reconstructed (mechanisms.phased_sgd), has "
            "floor(log2 m) phases and is accounted per fit for integer m. The accountant "
            "bounds each sampled Gaussian step by amplification by sampling without "
            "replacement (Balle, Barthe, Gaboardi 2018, Thm 9) and composes the steps "
            "(DRV10 advanced composition, WBK19 RDP); `dpaudit verify --claim "
            "001/theorem-3.2` shows the verifier's outcome: proved by relaxation "
            "(dpaudit.verify.relax)."
        ),
    )
)

register_claim(
    Claim(
        key="001/lemma-3.1",
        document=_DOC,
        theorem="Lemma 3.1 (privacy of Algorithm 4)",
        statement=(
            "Algorithm 4 (phased SGD + confidence boosting, reconstructed) is (eps, delta)-DP"
            "; here inside Algorithm 2 at m = 10 records, projected dimension k = 1"
        ),
        plan=EfficientLinearLearner(_e, _d, 0.25, 1).plan(10),
        epsilon=_e,
        delta=_d,
        domain=Domain({"epsilon": "(0, 1]", "delta": "(0, 1/10)"}),
        note=(
            "Algorithm 4 is missing from the text; rebuilt in mechanisms.phased_sgd (FKT20 "
            "phased SGD on the Moreau-smoothed rho-hinge loss, 2 runs, EM selection with "
            "half of eps). m is fixed because the number of phases, floor(log2 m), must be "
            "an integer; the guarantee does not depend on m >= 4, k or the step size: every "
            "phase's Gaussian has sigma_i / Delta_i = 2 sqrt(ln(1/delta_ph)) / eps_ph, and "
            "the phases partition positions (parallel composition: the worst phase). Lemma "
            "3.1's range 0 < eps <= log(1/delta) is not proved here beyond eps <= 1 (the "
            "verifier's branch-and-bound ran out of work on the larger domain)."
        ),
    )
)
