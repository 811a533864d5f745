"""The exponential mechanism as a private learner: source document 002 (Lecture 4, "What can
we learn privately?").

The lecture proves three things, each implemented here as a function of its inputs:

* the exponential mechanism is epsilon-DP (its privacy proof): :func:`plan` and the claims
  ``002/exponential-mechanism`` and ``002/private-pac-learner``;
* its utility theorem: with probability at least 1 - e^-t the selected candidate scores more
  than OPT - (2 Delta / epsilon)(ln |H| + t): :func:`em_utility_gap`;
* the generic private PAC learner over a finite class (the exponential mechanism with score
  u(h, Z) = #{i : h(x_i) = y_i}, sensitivity 1 under replace-one) and its sample
  complexity: :class:`PrivatePACLearner`, :func:`private_pac_sample_size`.

Reconstructed from the PDF extraction (the text is garbled in places):

* Utility theorem: the extraction reads "Pr[u(h)] <= OPT - 2 Delta/eps (ln(H) + t) <= e^-t"
  and its proof ends "<= e^t"; the statement the proof establishes is
  Pr[u(h, Z) <= OPT - (2 Delta/eps)(ln|H| + t)] <= e^-t (the last exponent's sign is a typo).
* Privacy proof: the line "e^{eps |h(z) - h(z')| / Delta} <= e^{eps/2}" is read as
  exp(eps |u(h,z) - u(h,z')| / (2 Delta)) <= e^{eps/2}, which is what the proof uses.
* Learner analysis: "sqrt(m) - m err(h)" is read as "m - m err(h)" (u = m(1 - err_hat));
  the uniform-convergence condition "m >= Theta(log(1/delta)/alpha'^2 + log(1/beta'))" is
  read as the lecture's own earlier bound 3 (ln(2|H|) + ln(1/beta')) / alpha'^2, and the final
  "Theta(log(1/delta) + log(1/beta)) (1/alpha^2 + 1/(alpha eps))" as
  Theta((ln|H| + ln(1/beta)) (1/alpha^2 + 1/(alpha eps))).  The lecture's "with probability
  1 - 2 beta" is 1 - 2 beta' = 1 - beta with its choice beta' = beta/2.
* The Hoeffding step "<= 2 exp(-m alpha'^2 / 3)" is weaker than Hoeffding's
  2 exp(-2 m alpha'^2) and therefore still valid; we keep the lecture's constant.

The neighbouring relation of a learner is replace-one (samples of a fixed size m differing in
one labelled example): the score changes by at most 1, in either direction.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact, float_up
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.primitives import ExponentialMechanism

__all__ = [
    "EPSILON",
    "EXPONENTIAL_MECHANISM_CLAIM",
    "PRIVATE_PAC_CLAIM",
    "FiniteClass",
    "PrivatePACLearner",
    "demo_section",
    "em_utility_gap",
    "intervals_on_grid",
    "pac_neighbouring_pair",
    "plan",
    "private_pac_sample_size",
    "thresholds_on_grid",
    "true_error_threshold",
]

#: The privacy parameter of the lecture's statements.
EPSILON = sympy.Symbol("epsilon", positive=True)
#: The score sensitivity of the lecture's statements.
SENSITIVITY = sympy.Symbol("Delta", positive=True)


def _positive(name: str, value: Any) -> float:
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a number in (0, inf), got {value!r}")
    return float(value)


def _open_unit(name: str, value: Any, high: float = 1.0) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if not ok or not 0.0 < float(value) < high:
        raise ValueError(f"{name} must be a number in (0, {high:g}), got {value!r}")
    return float(value)


def _count(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


def em_utility_gap(epsilon: float, n_candidates: int, t: float, sensitivity: float = 1.0) -> float:
    """The exponential mechanism's utility loss bound (Lecture 4, utility theorem).

    With probability at least 1 - e^-t the selected candidate h satisfies
    u(h, Z) > OPT - (2 Delta / epsilon)(ln |H| + t), OPT = max_h u(h, Z).

    Args:
        epsilon: the privacy parameter, > 0.
        n_candidates: |H|, >= 1.
        t: the deviation, > 0.
        sensitivity: Delta, > 0.

    Returns:
        (2 Delta / epsilon)(ln |H| + t), rounded up.

    Raises:
        ValueError: on a parameter outside its range.
    """
    e, s, dev = (
        _positive("epsilon", epsilon),
        _positive("sensitivity", sensitivity),
        _positive("t", t),
    )
    n = _count("n_candidates", n_candidates)
    expr = 2 * exact(s) / exact(e) * (sympy.log(n) + exact(dev))
    return float_up(expr)


def private_pac_sample_size(alpha: float, beta: float, epsilon: float, n_hypotheses: int) -> int:
    """Samples that suffice for the private PAC learner (Lecture 4, final bound).

    With alpha' = alpha/3 and beta' = beta/2 the lecture asks for
    m >= 3 (ln(2|H|) + ln(1/beta')) / alpha'^2 (uniform convergence, error alpha') and
    m >= 2 (ln|H| + ln(1/beta')) / (epsilon alpha') (exponential mechanism within alpha' of
    ERM); then err(h) <= min_h err(h) + alpha with probability >= 1 - beta.

    Args:
        alpha: accuracy, in (0, 1/2].
        beta: failure probability, in (0, 1/2].
        epsilon: privacy parameter, > 0.
        n_hypotheses: |H|, >= 1.

    Returns:
        The smallest integer m meeting both conditions.

    Raises:
        ValueError: on a parameter outside its range.
    """
    a = _open_unit("alpha", alpha, 0.5000001)
    b = _open_unit("beta", beta, 0.5000001)
    e = _positive("epsilon", epsilon)
    n = _count("n_hypotheses", n_hypotheses)
    a1, b1 = exact(a) / 3, exact(b) / 2
    uniform = 3 * (sympy.log(2 * n) + sympy.log(1 / b1)) / a1**2
    selection = 2 * (sympy.log(n) + sympy.log(1 / b1)) / (exact(e) * a1)
    return math.ceil(float_up(sympy.Max(uniform, selection)))


@dataclasses.dataclass(frozen=True)
class FiniteClass:
    """A finite hypothesis class over the finite domain {0, ..., G-1}.

    Attributes:
        name: what the class is.
        table: an (|H|, G) int8 array, table[h, x] = h(x) in {-1, +1}.
        labels: a short description of each hypothesis.
    """

    name: str
    table: np.ndarray
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        t = np.asarray(self.table)
        if t.ndim != 2 or t.shape[0] < 1 or not np.isin(t, (-1, 1)).all():
            raise ValueError(f"table must be a non-empty 2-D array of -1/+1, got shape {t.shape}")
        if len(self.labels) != t.shape[0]:
            raise ValueError(
                f"labels must name each of the {t.shape[0]} hypotheses, got {len(self.labels)}"
            )
        object.__setattr__(self, "table", t.astype(np.int8))

    @property
    def size(self) -> int:
        """|H|."""
        return int(self.table.shape[0])

    @property
    def domain_size(self) -> int:
        """G, the number of domain points."""
        return int(self.table.shape[1])


def thresholds_on_grid(grid_size: int) -> FiniteClass:
    """Thresholds h_t(x) = +1 iff x >= t on {0..G-1}, t in {0..G}: G + 1 hypotheses.

    Raises:
        ValueError: if ``grid_size`` is not an integer >= 1.
    """
    g = _count("grid_size", grid_size)
    t = np.arange(g + 1)[:, None]
    table = np.where(np.arange(g)[None, :] >= t, 1, -1)
    return FiniteClass(
        f"thresholds on a grid of {g}", table, tuple(f"x >= {i}" for i in range(g + 1))
    )


def intervals_on_grid(grid_size: int) -> FiniteClass:
    """Intervals h_[a,b)(x) = +1 iff a <= x < b on {0..G-1}; the empty interval once:
    G(G+1)/2 + 1 hypotheses.

    Raises:
        ValueError: if ``grid_size`` is not an integer >= 1.
    """
    g = _count("grid_size", grid_size)
    xs = np.arange(g)
    rows, labels = [np.full(g, -1)], ["empty"]
    for a in range(g):
        for b in range(a + 1, g + 1):
            rows.append(np.where((xs >= a) & (xs < b), 1, -1))
            labels.append(f"{a} <= x < {b}")
    return FiniteClass(f"intervals on a grid of {g}", np.array(rows), tuple(labels))


def true_error_threshold(t: int, target: int, grid_size: int, label_noise: float = 0.0) -> float:
    """The true error of threshold t when x is uniform on the grid, labels come from
    ``target`` and each label is flipped with probability ``label_noise``:
    noise + (1 - 2 noise) |t - target| / G (an exact formula, for utility checks)."""
    g = _count("grid_size", grid_size)
    return label_noise + (1 - 2 * label_noise) * abs(int(t) - int(target)) / g


def plan(epsilon: Any = EPSILON, sensitivity: Any = 1) -> ev.Event:
    """The declared event of the private PAC learner: one exponential mechanism on a score
    of sensitivity ``sensitivity``, replace-one neighbours (symbolic by default).

    Privacy: epsilon-DP (Lecture 4, proof of privacy; McSherry and Talwar 2007).
    """
    return ev.Exponential(epsilon, sensitivity, relation=ev.Relation.REPLACE_ONE)


class PrivatePACLearner:
    """The generic private PAC learner over a finite class (Lecture 4, "Private PAC
    learning"): the exponential mechanism with score u(h, Z) = #{i : h(x_i) = y_i}.

    Args:
        hypotheses: the finite class.
        epsilon: the privacy parameter, > 0.

    Privacy:
        epsilon-DP under replace-one neighbours: u has sensitivity 1 (replacing one labelled
        example changes each count by at most 1), and one exponential mechanism runs
        (:func:`plan`).  Every run is recorded in the active ledgers.

    Raises:
        ValueError: on a class that is not a :class:`FiniteClass` or epsilon <= 0.
    """

    def __init__(self, hypotheses: FiniteClass, epsilon: Any) -> None:
        if not isinstance(hypotheses, FiniteClass):
            raise ValueError(f"hypotheses must be a FiniteClass, got {hypotheses!r}")
        self.hypotheses = hypotheses
        self.mechanism = ExponentialMechanism(epsilon, 1, relation=ev.Relation.REPLACE_ONE)
        self.epsilon = self.mechanism.event.epsilon
        self.name = f"private PAC learner over {hypotheses.name}"

    def scores(self, x: Any, y: Any) -> np.ndarray:
        """u(h, Z) for every hypothesis: the number of correctly labelled examples.

        Raises:
            ValueError: if x is not in the domain or y not in {-1, +1} or lengths differ.
        """
        xs, ys = np.asarray(x), np.asarray(y)
        g = self.hypotheses.domain_size
        if xs.ndim != 1 or ys.shape != xs.shape:
            raise ValueError(f"x and y must be 1-D of equal length, got {xs.shape}, {ys.shape}")
        if xs.size and (xs.min() < 0 or xs.max() >= g or xs.dtype.kind not in "iu"):
            raise ValueError(f"x must hold integers in [0, {g - 1}]")
        if not np.isin(ys, (-1, 1)).all():
            raise ValueError("y must hold labels in {-1, +1}")
        positives = np.bincount(xs[ys == 1], minlength=g)
        negatives = np.bincount(xs[ys == -1], minlength=g)
        table = self.hypotheses.table
        return (table == 1) @ positives + (table == -1) @ negatives

    def fit(self, x: Any, y: Any, rng: np.random.Generator) -> int:
        """Select a hypothesis privately; returns its index in the class."""
        return int(self.mechanism.select(self.scores(x, y), rng))

    def __call__(self, dataset: tuple[Any, Any], rng: np.random.Generator) -> int:
        """Auditable form: ``dataset = (x, y)``; the output is the selected index."""
        return self.fit(dataset[0], dataset[1], rng)

    def batch(self, dataset: tuple[Any, Any], n: int, rng: np.random.Generator) -> np.ndarray:
        """n independent runs on the same dataset (for the auditor)."""
        return self.mechanism.select(self.scores(dataset[0], dataset[1]), rng, size=n)

    def probabilities(self, dataset: tuple[Any, Any]) -> list[Any]:
        """The exact output distribution (mpmath) on ``dataset``."""
        return self.mechanism.probabilities(self.scores(dataset[0], dataset[1]))


def pac_neighbouring_pair(
    grid_size: int,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A replace-one pair that stresses the learner over thresholds on the grid.

    Both datasets hold the single point G-1; it is labelled +1 in d0 and -1 in d1.  Every
    threshold t <= G-1 loses one point of score from d0 to d1 and only the all-negative
    hypothesis t = G gains one, so its probability ratio approaches e^epsilon as G grows:
    exactly the worst case of the privacy proof (numerator up e^{eps/2}, normaliser down
    e^{-eps/2}).  Other points, labelled identically in both, would only add common scores.
    """
    g = _count("grid_size", grid_size, 2)
    x = np.array([g - 1], dtype=np.int64)
    return (x, np.array([1])), (x.copy(), np.array([-1]))


_EM_DOMAIN = Domain({"epsilon": "(0, oo)", "Delta": "(0, oo)"})

EXPONENTIAL_MECHANISM_CLAIM = register_claim(
    Claim(
        key="002/exponential-mechanism",
        document="002 Lecture 4: What can we learn privately?",
        theorem="Exponential mechanism, proof of privacy",
        statement="sampling h with probability proportional to exp(eps u(h, Z) / (2 Delta)) is "
        "eps-DP when u has sensitivity Delta",
        plan=plan(EPSILON, SENSITIVITY),
        epsilon=EPSILON,
        delta=0,
        domain=_EM_DOMAIN,
        note="the extraction's exponent |h(z) - h(z')| / Delta is read as "
        "|u(h,z) - u(h,z')| / (2 Delta); replace-one neighbours",
    )
)

PRIVATE_PAC_CLAIM = register_claim(
    Claim(
        key="002/private-pac-learner",
        document="002 Lecture 4: What can we learn privately?",
        theorem="Private PAC learning (generic learner over a finite class)",
        statement="the exponential mechanism with u(h, Z) = #{i : h(x_i) = y_i} (sensitivity 1) "
        "is an eps-DP learner",
        plan=plan(EPSILON, 1),
        epsilon=EPSILON,
        delta=0,
        domain=Domain({"epsilon": "(0, oo)"}),
        note="replace-one neighbours: one labelled example replaced, so u moves by at most 1",
    )
)


def demo_section(seed: int = 2024) -> str:
    """One learner end to end for ``dpaudit demo``: train the private PAC learner over
    thresholds on a grid at the lecture's sample size, account for it, verify the lecture's
    claim, and audit it on the stressing pair.  Takes about a second.

    Returns:
        Readable text.
    """
    from dpaudit.accountant import Accountant
    from dpaudit.audit import audit
    from dpaudit.verify.prove import verify_claim
    from mechanisms.ledger import Ledger
    from mechanisms.synthetic_discrete import grid_threshold_sample

    epsilon, alpha, beta, grid, target = 1.0, 0.1, 0.1, 100, 37
    rng = np.random.default_rng(seed)
    hypotheses = thresholds_on_grid(grid)
    m = private_pac_sample_size(alpha, beta, epsilon, hypotheses.size)
    x, y = grid_threshold_sample(m, grid, target, rng, label_noise=0.1)
    learner = PrivatePACLearner(hypotheses, epsilon)
    with Ledger() as ledger:
        chosen = learner.fit(x, y, rng)
    spent, planned = ledger.check_within(plan(epsilon))
    error = true_error_threshold(chosen, target, grid, 0.1)
    guarantee = Accountant().guarantee(plan(epsilon))
    verdict = verify_claim(PRIVATE_PAC_CLAIM)
    small = PrivatePACLearner(thresholds_on_grid(8), epsilon)
    d0, d1 = pac_neighbouring_pair(8)
    result = audit(small, d0, d1, epsilon=epsilon, samples=200_000, seed=seed)
    return "\n".join(
        [
            "Private PAC learner over a finite class (002, Lecture 4: exponential mechanism)",
            f"  train: {hypotheses.name}, |H| = {hypotheses.size}, target x >= {target}, 10% "
            f"label noise, m = {m} samples (the lecture's bound for alpha = beta = 0.1, eps = 1)",
            f"  learned: {hypotheses.labels[chosen]}; true error {error:.3f} "
            f"(best possible 0.100, promised <= {0.1 + alpha:.3f})",
            f"  account: {guarantee.event} is ({guarantee.epsilon_upper:g}, 0)-DP "
            f"[{guarantee.theorem.name}]; ledger spent {spent:g} of {planned:g}",
            f"  verify: claim {PRIVATE_PAC_CLAIM.key} ({PRIVATE_PAC_CLAIM.theorem}): "
            f"{verdict.status} ({verdict.detail})",
            f"  audit: stressing replace-one pair (one label flipped at the last grid point), "
            f"200,000 samples per side: certified epsilon >= {result.epsilon_lower:.3f} "
            f"at 95% confidence, below the accountant's {guarantee.epsilon_upper:g}",
        ]
    )
