"""Private learners of large-margin halfspaces: source document 000 (Nguyen, Ullman,
Zakynthinou, "Efficient private algorithms for learning large-margin halfspaces", ALT 2020).

* :class:`NoisyGDMarginLearner` -- Algorithm 1 instantiated as Algorithm 3 (Appendix A): a
  random +-1/sqrt(m) projection to R^m, normalisation, then the noisy stochastic gradient
  descent of Bassily, Smith, Thakurta 2014 (BST14) on the (100/(86 gamma))-Lipschitz margin
  loss, run ceil(log(8/beta)) times, the best run chosen by the exponential mechanism.
  Privacy (Theorem 3) comes from the accountant composing the *subsampled Gaussian steps*
  (each step releases n grad l at one uniformly drawn record plus N(0, sigma^2 I)), never
  from a constant copied from the paper.
* :class:`NetMarginLearner` -- Algorithm 2: the same projection, then the exponential
  mechanism over a gamma/10-net of the unit ball of R^m with utility minus the fraction of
  points of margin below gamma/10 (sensitivity 1/n).  Privacy: Theorem 5, pure epsilon.
* the lower-bound construction of Theorem 6 is a data generator:
  :func:`mechanisms.synthetic_margin.lower_bound_code` / ``lower_bound_sample``.

Reconstructions and corrections (the PDF extraction garbles formulas):

* Loss (Alg. 1 step 4): l(w; (x, y)) = 1{y<w,x> < 96 gamma/100} (96/86 - y<w,x>/(86 gamma /
  100)), i.e. max(0, 96/86 - y<w,x>/(0.86 gamma)), Lipschitz 100/(86 gamma) on the unit ball,
  with values in [0, 96/86 + 100/(86 gamma)] (its sensitivity as an EM score).
* Noise (Alg. 3 step 13): sigma^2 = 32 L^2 n^2 log(n/delta') log(1/delta') / eps'^2, step size
  eta(t) = ||C|| / sqrt(t (n^2 L^2 + m sigma^2)), T = n^2 steps.  The gradient step is
  n grad l + b_t, whose replace-one sensitivity is 2 n L; the record is drawn uniformly, i.e.
  a sample of 1 out of n without replacement.  The plan states exactly that, so the
  accountant's amplification/composition (not BST14's closed form) bounds it.
* Omission corrected: Algorithm 3 gives the ceil(log(8/beta)) runs eps/ceil(log(8/beta)) each
  *and* then runs an exponential mechanism whose budget it never states, so as written the
  total exceeds epsilon (Theorem 3's proof ignores the selection step).  Here a share
  ``selection_share`` of epsilon goes to the selection and the rest is split among the runs.
* Claim 4.1's proof writes "96 gamma/100 - gamma/10 = 86 gamma/10"; it is 86 gamma/100 (the
  conclusion "> gamma/10" still holds).
* Theorem 6's proof (lower bound) writes Pr[sign<w_i,x> = sign<w_j,x>] = theta/pi; that is
  the probability that they *differ*.  With inner product <= 4/5 they agree with probability
  1 - arccos(4/5)/pi ~ 0.795, so the step "agree <= 0.21" and the conclusion err >= 0.49 do
  not follow with these constants (the proof needs codewords at Hamming distance near d/2).
  The generator builds the construction as stated; the test measures the agreement.

Modules: this one holds the learners, the net selection and the claims;
:mod:`mechanisms.noisy_sgd` the BST14 noisy SGD and the margin loss,
:mod:`mechanisms.halfspace_inputs` the input checks and the JL projection (both re-exported
here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.covers import ball_net
from mechanisms.halfspace_inputs import (
    REPLACE,
    _check_rng,
    _data,
    _int,
    _positive,
    jl_matrix,
    project_to_sphere,
    projected_mechanism,
    projection,
)
from mechanisms.ledger import Ledger
from mechanisms.localised_selection import Localisation, localised_select
from mechanisms.noisy_sgd import (
    SAMPLINGS,
    MarginLoss,
    _project_ball,  # noqa: F401  (re-exported: tests check the projection)
    bst14_sigma,
    noisy_gradient_descent,
    noisy_gradient_descent_batch,
    step_event,
)
from mechanisms.primitives import ExponentialMechanism

__all__ = [
    "HalfspaceModel",
    "MarginLoss",
    "NetMarginLearner",
    "NoisyGDMarginLearner",
    "PrivateERM",
    "bst14_sigma",
    "jl_matrix",
    "margin_fractions",
    "net_selection",
    "project_to_sphere",
    "random_sphere_points",
    "single_record_pair",
    "step_event",
]


@dataclasses.dataclass(frozen=True)
class HalfspaceModel:
    """A learned linear classifier x -> sign(<w, x>) (labels in {-1, +1})."""

    w: np.ndarray

    def predict(self, X: Any) -> np.ndarray:
        return np.where(np.asarray(X, dtype=float) @ self.w >= 0, 1, -1)

    def error(self, X: Any, y: Any) -> float:
        return float(np.mean(self.predict(X) != np.asarray(y)))


@dataclasses.dataclass(frozen=True)
class PrivateERM:
    """Private ERM with confidence boosting (000 Algorithm 3, procedure F): ``repetitions``
    runs of BST14 noisy SGD, each with (eps_run, delta_run) = ((1 - share) eps / k, delta / k),
    then the exponential mechanism (share x eps, sensitivity ``loss.bound``) picks the run of
    least total loss.  Used by :class:`NoisyGDMarginLearner` and by 001's efficient learners.

    Privacy: the plan :meth:`plan` is k x steps subsampled Gaussian steps and one exponential
    mechanism, composed by the accountant.
    """

    epsilon: Any
    delta: Any
    loss: MarginLoss
    repetitions: int = 3
    steps: int | None = None
    selection_share: Any = sympy.Rational(1, 2)
    sampling: str = "uniform"

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise ValueError(
                f"sampling must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}"
            )
        _positive("epsilon", self.epsilon)
        _positive("delta", self.delta, 1.0)
        _int("repetitions", self.repetitions)
        if self.steps is not None:
            _int("steps", self.steps)
        _positive("selection_share", self.selection_share, 1.0)

    def run_budget(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(eps_run, delta_run) handed to each noisy-SGD run."""
        share = exact(self.selection_share, "selection_share")
        k = self.repetitions
        return ((1 - share) * exact(self.epsilon, "epsilon") / k, exact(self.delta, "delta") / k)

    def sigma(self, n: Any) -> sympy.Expr:
        e_run, d_run = self.run_budget()
        return bst14_sigma(n, self.loss.lipschitz, e_run, d_run)

    def step_count(self, n: Any) -> Any:
        return self.steps if self.steps is not None else exact(n, "n") ** 2

    def plan(self, n: Any) -> ev.Event:
        """The declared event tree for datasets of size n (symbolic n allowed)."""
        n_ = exact(n, "n")
        step = step_event(self.sigma(n_), n_, self.loss.lipschitz, self.sampling)
        # k runs of T steps each: k T adaptive steps (one SelfComposed, as the ledger merges)
        runs = ev.SelfComposed(step, self.step_count(n_) * self.repetitions)
        select = ev.Exponential(
            exact(self.selection_share, "share") * exact(self.epsilon, "e"),
            self.loss.bound,
            relation=step.relation,
        )
        return ev.Composed([runs, select])

    def fit(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Run the k noisy-SGD runs and the selection; returns the selected weight vector."""
        n = len(X)
        sigma, steps = self.sigma(n), int(self.step_count(n))
        runs = np.array(
            [
                noisy_gradient_descent(X, y, self.loss, sigma, steps, rng, self.sampling)
                for _ in range(self.repetitions)
            ]
        )
        return runs[int(self._selection().select(-self.loss.values(runs, X, y), rng))]

    def _selection(self) -> ExponentialMechanism:
        share = exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")
        relation = REPLACE if self.sampling == "uniform" else ev.Relation.ADD_REMOVE
        return ExponentialMechanism(share, self.loss.bound, relation=relation)

    def fit_batch(
        self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``runs`` independent runs of :meth:`fit` (vectorised noisy SGD, then one selection
        per run), shape (runs, m)."""
        n, m = X.shape
        sigma, steps = self.sigma(n), int(self.step_count(n))
        W = np.stack(
            [
                noisy_gradient_descent_batch(
                    X, y, self.loss, sigma, steps, runs, rng, self.sampling
                )
                for _ in range(self.repetitions)
            ],
            axis=1,
        )
        values = self.loss.values(W.reshape(-1, m), X, y).reshape(runs, self.repetitions)
        em = self._selection()
        return W[np.arange(runs), [int(em.select(-v, rng)) for v in values]]

    def mechanism(
        self, features: Callable[[Any], tuple[np.ndarray, np.ndarray]], direction: Any, name: str
    ) -> Callable[..., Any]:
        """An auditable form: ``mechanism(dataset, rng)`` is <w, direction> for the selected
        w (a post-processing of the output) on ``features(dataset)`` = (Z, y), with a
        vectorised ``.batch``."""
        return projected_mechanism(self, features, direction, name)


@dataclasses.dataclass(frozen=True)
class NoisyGDMarginLearner:
    """000 Algorithm 1 / Algorithm 3: JL projection to R^m + private ERM on the margin loss.

    Args:
        epsilon, delta: the privacy target of Theorem 3.
        margin: gamma, the margin the loss is built for.
        dimension: m, the projected dimension (000 takes m = O(log(1/beta_JL)/gamma^2); small
            m at toy sizes, see the tests); None: the data's dimension, no projection.
        repetitions: ceil(log(8/beta)) in 000.
        steps: noisy-SGD steps per run (000: n^2; fewer is cheaper and spends less).
        selection_share: the share of epsilon given to the final exponential mechanism (see
            the module docstring: 000 leaves it unstated).
        sampling: ``"uniform"`` (000/BST14, replace-one) or ``"poisson"`` (a variant under
            add/remove whose subsampled Gaussian steps the accountant composes by RDP/PLD;
            a replace-one guarantee follows by group privacy of size 2).
        optimizer: ``"bst14"`` (000 Algorithm 3, the default) or ``"calibrated"``: the
            practical regime, full-batch noisy GD with sigma calibrated by the accountant
            (:mod:`mechanisms.calibrated_gd`; ``steps`` gradient steps, default 100;
            ``sampling`` unused).  Privacy of both: the accountant on :meth:`plan`.

    Privacy: Theorem 3 claims (epsilon, delta)-DP; :meth:`plan` is what the code runs, and the
    claim ``000/theorem-3`` is checked by the verifier on it.
    """

    epsilon: Any
    delta: Any
    margin: float
    dimension: int | None
    repetitions: int = 3
    steps: int | None = None
    selection_share: Any = sympy.Rational(1, 2)
    sampling: str = "uniform"
    optimizer: str = "bst14"

    def __post_init__(self) -> None:
        if self.optimizer not in ("bst14", "calibrated"):
            raise ValueError(f"optimizer must be 'bst14' or 'calibrated', got {self.optimizer!r}")

    def optimiser(self) -> Any:
        """000's private ERM (``"bst14"``) or the calibrated full-batch GD."""
        if self.optimizer == "calibrated":
            from mechanisms.calibrated_gd import CALIBRATED_STEPS, CalibratedGD

            return CalibratedGD(
                self.epsilon,
                self.delta,
                MarginLoss(self.margin),
                self.steps or CALIBRATED_STEPS,
                self.repetitions,
            )
        return self.erm()

    def erm(self) -> PrivateERM:
        return PrivateERM(
            self.epsilon,
            self.delta,
            MarginLoss(self.margin),
            self.repetitions,
            self.steps,
            self.selection_share,
            self.sampling,
        )

    def plan(self, n: Any) -> ev.Event:
        """PostProcessed(k x T subsampled Gaussian steps, then the exponential mechanism;
        ``"calibrated"``: its plan, :meth:`mechanisms.calibrated_gd.CalibratedGD.plan`)."""
        return ev.PostProcessed(self.optimiser().plan(n))

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        """Learn a halfspace of R^d (returns w = A^T w_hat, 000 Algorithm 1 step 6)."""
        X, y = _data(X, y)
        rng = _check_rng(rng)
        m = None if self.dimension is None else _int("dimension", self.dimension)
        A = projection(m, X.shape[1], rng)
        w_hat = self.optimiser().fit(project_to_sphere(X, A), y, rng)
        return HalfspaceModel(A.T @ w_hat)

    def mechanism(self, A: np.ndarray, direction: Any) -> Callable[..., Any]:
        """The auditable form for a *fixed* projection A (privacy holds for every A):
        ``mechanism((X, y), rng)`` is <w_hat, direction> for the learned w_hat in R^m (a
        post-processing of the output), with a vectorised ``.batch``."""

        def features(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
            X, y = _data(*dataset)
            return project_to_sphere(X, A), y

        name = f"000 Algorithm 1/3 (fixed projection, {self.optimizer})"
        return self.optimiser().mechanism(features, direction, name)


def single_record_pair(
    n: int, direction: Any
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A replace-one pair for auditing the noisy-SGD learners (000 Algorithm 1/3, 001
    Algorithm 2): ``n - 1`` zero records (their projected features are 0, so they have no
    gradient and a constant loss) and a last record, the unit vector along ``direction``,
    labelled +1 in d0 and -1 in d1.

    Only the changed record moves anything, so what the audit sees is its whole influence:
    at BST14's sigma the noisy-SGD runs are almost pure noise, and the leak is the final
    exponential mechanism's choice among the runs (the changed record's loss at a run with
    |<w, z>| near its maximum moves by the mechanism's full sensitivity, in opposite
    directions for the two labels).

    Raises:
        ValueError: if n < 2 or ``direction`` is zero.
    """
    n = _int("n", n, 2)
    u = np.asarray(direction, dtype=float).ravel()
    if not np.all(np.isfinite(u)) or not np.linalg.norm(u) > 0:
        raise ValueError(f"direction must be a non-zero finite vector, got {direction!r}")
    X = np.zeros((n, u.size))
    X[-1] = u / np.linalg.norm(u)
    y = np.ones(n, dtype=np.int64)
    y1 = y.copy()
    y1[-1] = -1
    return (X, y), (X, y1)


def random_sphere_points(count: int, dimension: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` points drawn uniformly from the unit sphere of R^dimension (normalised
    Gaussians): a data-independent candidate set for the exponential mechanism."""
    G = _check_rng(rng).standard_normal((_int("count", count), _int("dimension", dimension)))
    return G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)


#: Candidates x records handled at once by :func:`margin_fractions` (a memory bound).
BLOCK_ELEMENTS = 1 << 23


def margin_fractions(
    W: np.ndarray, Z: np.ndarray, y: np.ndarray, threshold: float, strict: bool = False
) -> np.ndarray:
    """For each row w of W, the fraction of records with y <w, z> <= threshold (< with
    ``strict``): the empirical margin loss that 000 Algorithm 2 and 001's cover learners score
    candidates by.  Computed in blocks of candidates (memory stays bounded: a cover of 40,000
    points on 10^5 records is 30 GiB at once) as <w, y z>, which equals y <w, z> exactly
    (y = +-1 negates every product exactly).
    """
    yZ = np.asarray(Z, dtype=float) * np.asarray(y)[:, None]
    n = len(yZ)
    rows = max(1, BLOCK_ELEMENTS // max(n, 1))
    out = np.empty(len(W))
    for start in range(0, len(W), rows):
        block = W[start : start + rows] @ yZ.T
        below = block < threshold if strict else block <= threshold
        out[start : start + rows] = np.count_nonzero(below, axis=1) / n
    return out


def net_selection(
    Z: np.ndarray,
    y: np.ndarray,
    net: np.ndarray,
    threshold: float,
    epsilon: Any,
    rng: np.random.Generator,
    size: int | None = None,
) -> Any:
    """The exponential mechanism over ``net`` with utility minus the fraction of points of
    margin below ``threshold`` (000 Algorithm 2 steps 4-5; 001 Algorithm 1 step 5), sampled
    exactly by Gumbel-max.  Returns the index (or ``size`` indices) of the selected point.

    Privacy: one Exponential(epsilon, sensitivity 1/n, replace-one) event per run.
    """
    n = len(Z)
    u = -margin_fractions(net, Z, y, threshold, strict=True)
    em = ExponentialMechanism(epsilon, sympy.Rational(1, n), relation=REPLACE)
    return em.select(u, rng, size=size)


@dataclasses.dataclass(frozen=True)
class NetMarginLearner:
    """000 Algorithm 2: JL projection, then the exponential mechanism over a gamma/10-net of
    the unit ball of R^m with utility -(1/n) #{y <w, x_A> < gamma/10} (sensitivity 1/n).

    ``candidates`` (the practical regime; None: 000's net): the exponential mechanism runs
    over that many points drawn uniformly from the unit sphere of R^m with the learner's
    randomness *before* the data are read, instead of the enumerated net, so that m may be
    the data's own dimension (an exact gamma/10-net of R^10 is ~10^20 points); ``dimension``
    None keeps the data's dimension (no projection).  ``rounds`` > 1 (with ``candidates``)
    localises them: :mod:`mechanisms.localised_selection` (each round draws its candidates
    around the previous round's choice and scores them on its own part of the rows).

    Privacy: Theorem 5, epsilon-DP (the projection is data-independent, the output
    post-processing).  The proof uses only that the candidate set is finite and chosen
    independently of the data (the exponential mechanism, McSherry-Talwar 2007 Theorem 6,
    with a sensitivity-1/n utility), so it holds verbatim for the random candidates; what
    they lose is Claim 4.1's utility argument (a net point within gamma/10 of the target).
    With ``rounds`` R > 1 the plan is the rounds' parallel composition over a partition of
    positions, still epsilon-DP (the proof is in :mod:`mechanisms.localised_selection`).
    The net is enumerated exactly (:func:`mechanisms.covers.ball_net`), so keep m small
    (2-3) or raise ``max_points``.
    """

    epsilon: Any
    margin: float
    dimension: int | None
    max_points: int = 200_000
    candidates: int | None = None
    rounds: int = 1
    first_angle: float = 1.0
    shrink: float = 0.5

    def __post_init__(self) -> None:
        if self.candidates is None and self.rounds != 1:
            raise ValueError(
                f"rounds must be 1 with the enumerated net (candidates None), got {self.rounds!r}"
            )

    def schedule(self) -> Localisation:
        """The rounds of the random-candidate regime."""
        return Localisation(
            _int("rounds", self.rounds), self.candidates or 1, self.first_angle, self.shrink
        )

    def plan(self, n: Any) -> ev.Event:
        return ev.PostProcessed(self.schedule().plan(self.epsilon, n))

    def _dimension(self, d: int) -> int:
        return d if self.dimension is None else _int("dimension", self.dimension)

    def net(self, rng: np.random.Generator | None = None, d: int | None = None) -> np.ndarray:
        """000's gamma/10-net, or (``candidates`` set) that many uniform points of the unit
        sphere drawn from ``rng`` (data-independent); ``d`` the data's dimension (used when
        ``dimension`` is None)."""
        m = self.dimension if self.dimension is not None else d
        if m is None:
            raise ValueError("d must be the data's dimension when dimension is None, got None")
        if self.candidates is None:
            return ball_net(m, 1.0, float(self.margin) / 10, self.max_points)
        if rng is None:
            raise ValueError("rng must be a numpy Generator to draw random candidates, got None")
        return random_sphere_points(_int("candidates", self.candidates), m, rng)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        X, y = _data(X, y)
        rng = _check_rng(rng)
        m = self._dimension(X.shape[1])
        A = projection(self.dimension, X.shape[1], rng)
        net = self.net(rng, m)
        Z = project_to_sphere(X, A)
        threshold = float(self.margin) / 10
        if self.candidates is None:
            k = net_selection(Z, y, net, threshold, self.epsilon, rng)
            return HalfspaceModel(A.T @ net[int(k)])

        def loss(C: np.ndarray, rows: np.ndarray) -> np.ndarray:
            return margin_fractions(C, Z[rows], y[rows], threshold, strict=True)

        w, _ = localised_select(self.schedule(), self.epsilon, len(Z), net, loss, rng)
        return HalfspaceModel(A.T @ w)

    def selection_mechanism(self, A: np.ndarray) -> Callable[..., Any]:
        """The auditable form for a *fixed* projection A (privacy holds for every A, so
        conditioning on one is a valid test): ``mechanism((X, y), rng)`` returns the index of
        the selected net point, with a vectorised ``.batch``."""
        net = self.net()
        g = float(self.margin) / 10

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            X, y = dataset
            return int(net_selection(project_to_sphere(X, A), y, net, g, self.epsilon, rng))

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = dataset
            return net_selection(project_to_sphere(X, A), y, net, g, self.epsilon, rng, size=n)

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "000 Algorithm 2 (fixed projection)"  # type: ignore[attr-defined]
        return mechanism


# ----------------------------------------------------------------------------------------
# Claims (000's privacy theorems over the paper's domain)
# ----------------------------------------------------------------------------------------

_e, _d, _g, _n = (sympy.Symbol(s, positive=True) for s in ("epsilon", "delta", "gamma", "n"))

register_claim(
    Claim(
        key="000/theorem-5",
        document="000 Nguyen, Ullman, Zakynthinou 2020",
        theorem="Theorem 5",
        statement="Algorithm 2 (JL + exponential mechanism over a gamma/10-net) is (eps, 0)-DP",
        plan=NetMarginLearner(_e, 0.3, 2).plan(_n),
        epsilon=_e,
        delta=0,
        domain=Domain({"epsilon": "(0, oo)", "n": "[2, oo)"}, integers=["n"]),
        note="utility sensitivity 1/n (replace-one); the projection is data-independent",
    )
)

register_claim(
    Claim(
        key="000/theorem-3",
        document="000 Nguyen, Ullman, Zakynthinou 2020",
        theorem="Theorem 3",
        statement=(
            "Algorithm 1/3 (JL + BST14 noisy SGD, k runs, EM selection) is (eps, delta)-DP"
            "; here with k = 3 runs of n^2 steps and half of eps for the selection"
        ),
        plan=NoisyGDMarginLearner(_e, _d, 0.5, 10).plan(_n),
        epsilon=_e,
        delta=_d,
        domain=Domain({"epsilon": "(0, 1]", "delta": "(0, 1/10]", "n": "[10, oo)"}, integers=["n"]),
        note=(
            "margin gamma = 1/2 fixed (the loss's Lipschitz constant enters sigma); the "
            "selection's budget is a correction (000 leaves it unstated). The accountant bounds "
            "each uniformly sampled Gaussian step by amplification by sampling without "
            "replacement (Balle, Barthe, Gaboardi 2018, Thm 9, replace-one) and composes the "
            "steps (advanced composition, DRV10; WBK19 RDP as a second route); the verifier's "
            "outcome over the whole domain is what `dpaudit verify --claim 000/theorem-3` "
            "shows: proved by relaxation (dpaudit.verify.relax)."
        ),
    )
)


def demo_section(seed: int = 2024) -> str:
    """One learner end to end for ``dpaudit demo``: 000's Algorithm 2 (JL projection +
    exponential mechanism over a net) trained on synthetic large-margin data, its ledger
    compared with its plan, Theorem 5 verified, and an audit on a stressing pair.  Takes a
    few seconds.

    Returns:
        Readable text.
    """
    from dpaudit.accountant import Accountant
    from dpaudit.audit import audit
    from dpaudit.verify import get_claim
    from dpaudit.verify.prove import verify_claim
    from mechanisms.synthetic_margin import margin_sample

    epsilon, gamma, n, d = 1.0, 0.6, 400, 20
    rng = np.random.default_rng(seed)
    X, y, w = margin_sample(n, d, gamma, rng)
    Xt, yt, _ = margin_sample(4000, d, gamma, rng, w=w)
    learner = NetMarginLearner(epsilon, gamma, 2)
    with Ledger() as ledger:
        model = learner.fit(X, y, rng)
    spent, planned = ledger.check_within(learner.plan(n))
    guarantee = Accountant().guarantee(learner.plan(n))
    claim = get_claim("000/theorem-5")
    verdict = verify_claim(claim)
    Xa, ya, _ = margin_sample(8, 6, 0.5, np.random.default_rng(5))
    A = jl_matrix(2, 6, np.random.default_rng(seed))
    y1 = ya.copy()
    y1[-1] = -y1[-1]
    small = NetMarginLearner(epsilon, 0.5, 2)
    result = audit(
        small.selection_mechanism(A), (Xa, ya), (Xa, y1), epsilon=epsilon, samples=50_000, seed=seed
    )
    return "\n".join(
        [
            "Large-margin halfspaces, pure DP (000 Nguyen-Ullman-Zakynthinou, Algorithm 2)",
            f"  train: n = {n} unit vectors in R^{d} with margin {gamma}, JL to R^2, exponential "
            f"mechanism over a {len(learner.net())}-point gamma/10-net",
            f"  learned: test error {model.error(Xt, yt):.3f} on 4000 fresh points",
            f"  account: {guarantee} [{guarantee.theorem.name}]; ledger spent {spent:g} of "
            f"{planned:g}",
            f"  verify: claim {claim.key} ({claim.theorem}): {verdict.status}",
            f"  audit: 8 records, last label negated, fixed projection, 50,000 samples per side: "
            f"certified epsilon >= {result.epsilon_lower:.3f} <= upper {guarantee.epsilon_upper:g}"
            f" (violation: {result.violation})",
        ]
    )
