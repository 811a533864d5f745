"""Privately learning decision lists (source document 004, Bun and Fang): DP-GreedyCover in
the PAC model (Section 3, Algorithm 3.1, Theorem 3.5, Appendix A) and online learning through
DP-Winnow (Section 4.3, Lemma 4.10, Theorems 4.11-4.12).

Decision lists are over a feature set F given as a Boolean feature matrix (n examples x M
features); :func:`mechanisms.synthetic_discrete.literal_features` gives the 2d literals of
Boolean points (1-decision lists), :func:`conjunction_features` the conjunctions of at most k
literals (k-decision lists, Appendix A.3).

Reconstructed or corrected (the extraction is garbled in places):

* **Number of iterations.**  Algorithm 3.1 loops j = 1..M over F_1 = F u {T} (M + 1
  functions) and says the last iteration "exhausts all functions"; that needs M + 1
  iterations.  We run up to M + 1 rounds and stop once the constant-true function T is
  selected (it covers every remaining example; later rounds would see an empty sample and
  cannot change the hypothesis).  T's bit is the list's default.
* **Temperature.**  The exponential mechanism of each round samples proportional to
  exp(eps_hat q) with eps_hat = eps / (2 (ln(1/delta) + 3/2)) (Proof A.7 with Lemma A.1's
  convention, see :mod:`mechanisms.emcover`), i.e. privacy parameter 2 eps_hat per round.
  Lemma A.4's error bound, derived with Proposition 2.1's exp(eps q / 2), then holds with a
  factor 2 to spare.
* **Neighbouring relation.**  Theorem 3.5 is stated for Definition 3.1 (datasets differing in
  one example: replace-one), but Lemma A.1 is proved for S' = S u {z} (add/remove).  A
  replacement is a removal and an addition, so by group privacy the algorithm is
  (2 eps, (1 + e^eps) delta)-DP under replace-one.  The claim ``004/theorem-3.5`` is
  registered for add/remove (what the proof shows); the replace-one consequence is stated
  here only (the accountant's group rule cannot yet meet a target delta for an approximate-DP
  inner event).
* **Lemma A.1's constant.**  Lemma A.1 as stated is false for inverse temperatures above
  1.2564... (see :mod:`dpaudit.theorems.cover`); DP-GreedyCover's eps_hat is at most 1/3 for
  eps <= 1, where the stated bound holds, so Theorem 3.5's privacy stands on its domain.
* **Section 4.3's embedding** (Lemma 4.10 gives only Omega(1/r^D)): we build the halfspace
  explicitly.  Term i (bit b_i, sign s_i) gets integer weight a_i = 1 + sum of a_j over the
  later rules j with the opposite bit (default a_r = 1); then s_i g(x) >= 1 on every point
  where rule i decides, so in +-1 coordinates with a constant coordinate the margin is
  1 / ||coefficients||_1 >= 1 / prod of alternation blocks = Omega(1/r^D).  The 2(M+1)
  coordinate non-negative embedding is Section 4.3's (w', z) construction.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact, float_up
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.emcover import EMCover
from mechanisms.emcover import plan as cover_plan
from mechanisms.synthetic_discrete import DecisionList
from mechanisms.winnow import DPWinnow, DPWinnowParameters, DPWinnowRun

__all__ = [
    "THEOREM_3_5_CLAIM",
    "DPGreedyCover",
    "DecisionListOnlineLearner",
    "GreedyCoverProblem",
    "conjunction_count_bound",
    "conjunction_features",
    "decision_list_halfspace",
    "decision_list_vc_bound",
    "embed_features",
    "greedy_cover_error_bound",
    "greedy_cover_inverse_temperature",
    "greedy_cover_neighbouring_pair",
    "greedy_cover_sample_size",
    "plan",
]


def _features(features: Any) -> np.ndarray:
    f = np.asarray(features)
    if f.ndim != 2 or not np.isin(f, (0, 1)).all():
        raise ValueError(f"features must be a 2-D 0/1 (bool) array, got shape {f.shape}")
    return f.astype(bool)


def _bits(labels: Any, n: int) -> np.ndarray:
    s = np.asarray(labels)
    if s.shape != (n,) or not np.isin(s, (0, 1)).all():
        raise ValueError(f"labels must be {n} bits in {{0, 1}}, got shape {s.shape}")
    return s.astype(np.int64)


def _open_unit(name: str, value: Any) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if not ok or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def _positive(name: str, value: Any) -> float:
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a number in (0, inf), got {value!r}")
    return float(value)


def _count(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


# ----------------------------------------------------------------------------------------
# Parameters and bounds of Theorem 3.5
# ----------------------------------------------------------------------------------------


def greedy_cover_inverse_temperature(epsilon: Any, delta: Any) -> sympy.Expr:
    """Proof A.7: eps_hat = eps / (2 (ln(1/delta) + 3/2)), exact (sympy; symbols allowed)."""
    e, d = exact(epsilon, "epsilon"), exact(delta, "delta")
    return e / (2 * (sympy.log(1 / d) + sympy.Rational(3, 2)))


def decision_list_vc_bound(n_features: int) -> float:
    """An upper bound on VC(C) for F-decision lists, |F| = M: log2 |C| with
    |C| <= sum_{r=0}^{M} M!/(M-r)! 2^{r+1} (ordered distinct features, a bit each, a default
    bit), as the paper's remark after Theorem 3.5 suggests."""
    m = _count("n_features", n_features)
    total = sum(math.perm(m, r) * 2 ** (r + 1) for r in range(m + 1))
    return math.log2(total)


def greedy_cover_sample_size(
    alpha: float,
    beta: float,
    epsilon: float,
    delta: float,
    n_features: int,
    vc_dimension: float | None = None,
    *,
    as_proved: bool = False,
) -> int:
    """Theorem 3.5's sample complexity of DP-GreedyCover:
    n >= max(64/alpha (VC log(64/alpha) + log(16/beta)),
             8 M log(2M/sqrt(beta)) (2 log(1/delta) + 3/2) / (alpha eps)),
    natural logarithms, VC from :func:`decision_list_vc_bound` unless given.

    ``as_proved``: the privacy term that Proof A.7 actually derives.  The proof needs
    n >= 8 M log(2M/sqrt(beta)) / (eps_hat alpha) with 1/eps_hat = 2 (log(1/delta) + 3/2) / eps
    = (2 log(1/delta) + 3) / eps; the theorem's "+ 3/2" drops half of the constant (an
    arithmetic slip in the last line of Proof A.7), so the stated n is too small by up to
    3/2 M log(2M/sqrt(beta)) / (alpha eps) samples.

    Raises:
        ValueError: on a parameter outside its range.
    """
    a, b = _open_unit("alpha", alpha), _open_unit("beta", beta)
    e, d = _positive("epsilon", epsilon), _open_unit("delta", delta)
    m = _count("n_features", n_features)
    vc = (
        decision_list_vc_bound(m)
        if vc_dimension is None
        else _positive("vc_dimension", vc_dimension)
    )
    generalization = 64 / a * (vc * math.log(64 / a) + math.log(16 / b))
    constant = 3.0 if as_proved else 1.5
    privacy = 8 * m * math.log(2 * m / math.sqrt(b)) * (2 * math.log(1 / d) + constant) / (a * e)
    return math.ceil(max(generalization, privacy))


def greedy_cover_error_bound(n_features: int, beta: float, epsilon_hat: Any) -> float:
    """Lemma A.4: with probability >= 1 - beta DP-GreedyCover errs on at most
    (4M / eps_hat) log(sqrt(2/beta) M) examples of its sample (eps_hat: the inverse
    temperature; rounded up).

    Raises:
        ValueError: on a parameter outside its range.
    """
    m = _count("n_features", n_features)
    b = _open_unit("beta", beta)
    lam = exact(epsilon_hat, "epsilon_hat")
    return float_up(4 * m / lam * sympy.log(sympy.sqrt(2 / exact(b)) * m))


def conjunction_count_bound(d: int, k: int) -> float:
    """Proposition A.9: |C_d^k| <= e^2 d^k (conjunctions of at most k literals)."""
    return math.e**2 * _count("d", d) ** _count("k", k, 0)


def conjunction_features(x: Any, k: int) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """All conjunctions of 1..k literals over Boolean points (k-decision lists, A.3); the
    empty conjunction is DP-GreedyCover's constant-true function T and is not listed.

    Args:
        x: (n, d) 0/1 array.
        k: maximal width, >= 1.

    Returns:
        (features, terms): an (n, N) bool matrix and, per column, the literals as signed
        1-based indices (+i for x_i, -i for not x_i).
    """
    arr = _features(x)
    kk = _count("k", k)
    n, d = arr.shape
    literals = np.concatenate([arr, ~arr], axis=1)
    columns, terms = [], []
    for width in range(1, kk + 1):
        for variables in itertools.combinations(range(d), width):
            for signs in itertools.product((1, -1), repeat=width):
                cols = [v if s > 0 else v + d for v, s in zip(variables, signs, strict=True)]
                columns.append(literals[:, cols].all(axis=1))
                terms.append(tuple(s * (v + 1) for v, s in zip(variables, signs, strict=True)))
    return np.array(columns, dtype=bool).T.reshape(n, len(columns)), terms


# ----------------------------------------------------------------------------------------
# DP-GreedyCover
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GreedyCoverProblem:
    """DP-GreedyCover's score family as an EMCover problem (Algorithm 3.1).

    Candidates are pairs (f, b), index 2 f + b, f in {0..M-1} a feature and f = M the
    constant-true function T.  Data is ``(features, labels)``.  q(S_j, (f, b)) =
    -#{x in S_j : f(x) = 1, label(x) = 1 - b}; (f, b) covers x iff f(x) = 1; a selected f is
    not offered again (F_{j+1} = F_j - {f_j}).

    Lemma A.1's conditions hold under add/remove: adding z changes q(., (f, b)) by 0 or -1 if
    f(z) = 1 and leaves it unchanged otherwise.
    """

    n_features: int

    @property
    def n_candidates(self) -> int:
        return 2 * (self.n_features + 1)

    def available(self, history: Sequence[int]) -> np.ndarray:
        mask = np.ones(self.n_candidates, dtype=bool)
        for c in history:
            f = c // 2
            mask[2 * f : 2 * f + 2] = False
        return mask

    def state_key(self, history: Sequence[int]) -> frozenset[int]:
        """Scores and availability depend on the set of selected candidates only."""
        return frozenset(history)

    def _with_true(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        features, labels = data
        f = np.asarray(features, dtype=bool)
        return np.concatenate([f, np.ones((f.shape[0], 1), dtype=bool)], axis=1), np.asarray(labels)

    def scores(self, data: Any, remaining: np.ndarray, history: Sequence[int]) -> np.ndarray:
        f, labels = self._with_true(data)
        f, labels = f[remaining], labels[remaining]
        ones = f[labels == 1].sum(axis=0)  # #_{f->1}(S^1)
        zeros = f[labels == 0].sum(axis=0)  # #_{f->1}(S^0)
        out = np.empty(self.n_candidates)
        out[0::2] = -ones  # b = 0 errs on the positives it covers
        out[1::2] = -zeros  # b = 1 errs on the negatives it covers
        return out

    def covered(self, data: Any, candidate: int) -> np.ndarray:
        f, _ = self._with_true(data)
        return f[:, candidate // 2]

    def size(self, data: Any) -> int:
        return int(np.asarray(data[0]).shape[0])


def plan(
    epsilon_hat: Any, n_features: Any = None, relation: Any = ev.Relation.ADD_REMOVE
) -> ev.Event:
    """DP-GreedyCover's declared event: EMCover at inverse temperature eps_hat over at most
    M + 1 rounds (the cover bound does not depend on the number of rounds)."""
    rounds = None if n_features is None else exact(n_features) + 1
    return cover_plan(epsilon_hat, rounds, relation)


class DPGreedyCover:
    """DP-GreedyCover (004, Algorithm 3.1) through EMCover.

    Args:
        epsilon_hat: the inverse temperature eps_hat > 0 (Theorem 3.5:
            :func:`greedy_cover_inverse_temperature` of the target (eps, delta)).
        n_features: M = |F|, >= 1.

    Privacy:
        (2 eps_hat (ln(1/delta) + 3/2), delta)-DP for every delta in (0, 1) under add/remove
        (Lemma A.1; Theorem 3.5 with eps_hat of Proof A.7 gives (eps, delta)).  The run
        records one cover event in the active ledgers.
    """

    def __init__(self, epsilon_hat: Any, n_features: int) -> None:
        self.n_features = _count("n_features", n_features)
        self.problem = GreedyCoverProblem(self.n_features)
        self.cover = EMCover(epsilon_hat, self.n_features + 1)
        self.epsilon_hat = self.cover.inverse_temperature
        self.name = f"DP-GreedyCover (eps_hat={self.epsilon_hat}, M={self.n_features})"

    def plan(self) -> ev.Event:
        """The declared event for these parameters."""
        return plan(self.epsilon_hat, self.n_features)

    def fit(self, features: Any, labels: Any, rng: np.random.Generator) -> DecisionList:
        """Learn a decision list from a labelled sample.

        Args:
            features: (n, M) Boolean feature matrix.
            labels: n bits sigma_i in {0, 1}.
            rng: the randomness.

        Returns:
            The hypothesis [(f_1, b_1), ..., (T, b)] as a :class:`DecisionList`.

        Raises:
            ValueError: on malformed data.
        """
        f = _features(features)
        if f.shape[1] != self.n_features:
            raise ValueError(f"features must have M = {self.n_features} columns, got {f.shape[1]}")
        s = _bits(labels, f.shape[0])
        run = self.cover.run(self.problem, (f, s), rng, stop=self._selected_true)
        return self._as_list(run.selected)

    def _selected_true(self, history: Sequence[int], remaining: np.ndarray) -> bool:
        return history[-1] // 2 == self.n_features

    def _as_list(self, selected: Sequence[int]) -> DecisionList:
        terms = [(c // 2, c % 2) for c in selected if c // 2 != self.n_features]
        return DecisionList(tuple(terms), selected[-1] % 2)

    def __call__(self, dataset: tuple[Any, Any], rng: np.random.Generator) -> tuple[int, ...]:
        """Auditable form: the learned list as a tuple (f_1, b_1, ..., default)."""
        dl = self.fit(dataset[0], dataset[1], rng)
        return (*itertools.chain.from_iterable(dl.terms), dl.default)

    def batch(
        self, dataset: tuple[Any, Any], n: int, rng: np.random.Generator
    ) -> list[tuple[int, ...]]:
        """n independent runs (grouped, see :meth:`EMCover.run_batch`), for the auditor."""
        f = _features(dataset[0])
        s = _bits(dataset[1], f.shape[0])
        out = []
        for selected in self.cover.run_batch(
            self.problem, (f, s), n, rng, stop=self._selected_true
        ):
            dl = self._as_list(selected)
            out.append((*itertools.chain.from_iterable(dl.terms), dl.default))
        return out


def greedy_cover_neighbouring_pair(
    n_features: int,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """An add/remove pair stressing DP-GreedyCover: d1 adds to d0 one negative example that
    only feature 0 covers, so (feature 0, bit 1) loses one point of score and every other
    candidate keeps its score, as in the worst case of Lemma A.1's proof.

    d0 holds one example covered by no feature and labelled 1 (so only T covers it).

    Raises:
        ValueError: if n_features < 1.
    """
    m = _count("n_features", n_features)
    base = np.zeros((1, m), dtype=bool)
    z = np.zeros((1, m), dtype=bool)
    z[0, 0] = True
    return (base, np.array([1])), (np.concatenate([base, z]), np.array([1, 0]))


# ----------------------------------------------------------------------------------------
# Online learning through DP-Winnow (Section 4.3)
# ----------------------------------------------------------------------------------------


def embed_features(features: Any) -> np.ndarray:
    """Section 4.3's embedding of Boolean feature vectors: z = 2 f - 1 with a constant
    coordinate 1 appended (d + 1 variables), then (z, -z) so that halfspaces with negative
    weights become non-negative ones over 2(M + 1) coordinates.  Returns an int8 array."""
    f = _features(features)
    z = np.concatenate([2 * f.astype(np.int8) - 1, np.ones((f.shape[0], 1), dtype=np.int8)], axis=1)
    return np.concatenate([z, -z], axis=1).astype(np.int8)


def decision_list_halfspace(dlist: DecisionList, n_features: int) -> tuple[np.ndarray, float]:
    """A non-negative weight vector over the 2(M + 1) embedded coordinates representing
    ``dlist``, and its margin (see the module docstring: Lemma 4.10 made explicit).

    Returns:
        (v, rho) with v >= 0, ||v||_1 = 1 and y <v, embed(f)> >= rho for every feature vector
        f, where y = 2 dlist(f) - 1.

    Raises:
        ValueError: if a term's feature is outside 0..M-1 or features repeat.
    """
    m = _count("n_features", n_features)
    features = [f for f, _ in dlist.terms]
    if any(f >= m for f in features) or len(set(features)) != len(features):
        raise ValueError(f"dlist must use distinct features in [0, {m - 1}], got {features}")
    signs = [2 * b - 1 for _, b in dlist.terms] + [2 * dlist.default - 1]
    weights = [0] * len(signs)
    weights[-1] = 1
    for i in range(len(signs) - 2, -1, -1):
        weights[i] = 1 + sum(weights[j] for j in range(i + 1, len(signs)) if signs[j] != signs[i])
    coef = np.zeros(m + 1)
    for (f, _), s, a in zip(dlist.terms, signs, weights, strict=False):
        coef[f] += s * a / 2
        coef[m] += s * a / 2
    coef[m] += signs[-1] * weights[-1]
    norm = float(np.abs(coef).sum())
    v = np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)]) / norm
    return v, 1.0 / norm


class DecisionListOnlineLearner:
    """Online learning of F-decision lists through DP-Winnow (Section 4.3, Theorems 4.11 and
    4.12): feature vectors are embedded by :func:`embed_features` and DP-Winnow runs on the
    2(M + 1)-dimensional stream with labels y = 2 sigma - 1.

    Args:
        n_features: M, >= 1.
        params: DP-Winnow's parameters, for dimension 2(M + 1) and the list's margin
            (:func:`decision_list_halfspace`).

    Privacy:
        That of :class:`~mechanisms.winnow.DPWinnow` (the embedding is applied to each
        example separately, so neighbouring streams stay neighbouring).
    """

    def __init__(self, n_features: int, params: DPWinnowParameters) -> None:
        self.n_features = _count("n_features", n_features)
        self.winnow = DPWinnow(2 * (self.n_features + 1), params)

    def plan(self) -> ev.Event:
        """The declared event (DP-Winnow's plan)."""
        return self.winnow.plan()

    def run(self, features: Any, labels: Any, rng: np.random.Generator) -> DPWinnowRun:
        """Play the stream of feature vectors and bits."""
        f = _features(features)
        s = _bits(labels, f.shape[0])
        return self.winnow.run(embed_features(f), 2 * s - 1, rng)


def _register() -> Claim:
    eps = sympy.Symbol("epsilon", positive=True)
    dlt = sympy.Symbol("delta", positive=True)
    return register_claim(
        Claim(
            key="004/theorem-3.5",
            document="004 Bun, Fang: Privately Learning Decision Lists and a DP Winnow",
            theorem="Theorem 3.5 (privacy), Proof A.7",
            statement="DP-GreedyCover with eps_hat = eps / (2 (log(1/delta) + 3/2)) is "
            "(eps, delta)-DP",
            plan=plan(greedy_cover_inverse_temperature(eps, dlt)),
            epsilon=eps,
            delta=dlt,
            domain=Domain({"epsilon": "(0, 1)", "delta": "(0, 1)"}),
            note="EMCover at inverse temperature eps_hat, any number of rounds, add/remove "
            "neighbours (Lemma A.1's relation; Definition 3.1's replace-one follows only by "
            "group privacy: (2 eps, (1 + e^eps) delta)); proved from Lemma A.1 with its last "
            "inequality corrected, valid here since eps_hat <= 1/3",
        )
    )


THEOREM_3_5_CLAIM = _register()
