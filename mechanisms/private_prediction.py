"""Stable and private prediction: source document 003 (Dagan and Feldman, "PAC learning with
stable and private predictions", COLT 2020).

The hypothesis class is H = homogeneous halfspaces of R^2, x -> [<w, x> >= 0] (VC dimension
2), so every H_T (one hypothesis per labeling of a subsample T) is enumerated exactly
(:func:`mechanisms.covers.halfspace_labelings_2d`).  Labels are in {0, 1} as in 003.

* :class:`StableLearner` -- Theorem 1 / Section 3.1 (Lemma 7): draw a uniform subset I of
  n' indices, build H_{S_I}, select h by the exponential mechanism (score minus the number
  of errors on all of S, sensitivity 1) and predict h(x).  gamma-uniformly stable.
* :class:`FlippedStableLearner` -- Corollary 1: the stable learner with target stability
  eps alpha / 2, its prediction flipped with probability alpha.  eps-private prediction.
* :class:`RealizableLearner` and :class:`Theorem2Learner` -- Section 4.2 (Lemma 8) then the
  flip of Theorem 2: subsample I (|I| = n'), exponential mechanism with privacy 2/(eta n)
  over H_{S_I}, relabel S by the chosen h, answer with the realizable learner A^R with pure
  1/(eta n)-private prediction trained on the relabeled S, then flip with probability alpha.
* :class:`SubsampledResponse` -- an instance of Lemma 5's setting for audits: randomized
  response (an eps-DP algorithm) on a uniform n'-subset.

Auditable forms (``mechanism(x)``: the prediction at a query point x) batch their runs by
subsample content (:func:`_selections`): the same law as separate runs, far fewer EM
set-ups; the Theorem 2 learner's batch also vectorises A^R's votes over runs
(:meth:`RealizableLearner.vote_counts`).  Its audit (report target ``003/theorem-2``) is of a
reconstructed claim, the accountant's bound at a toy instance
(:func:`dpaudit.report.builtin.theorem2_audited`): Theorem 2 itself has no constants.

Each learner's :meth:`plan` is its prediction mechanism at one query point as an event tree
(see :mod:`dpaudit.events.stability`); the run records that same tree through
:func:`mechanisms.ledger.recorded_as` around the exponential-mechanism primitive, the only
primitive that reads the data (the Theorem 2 learner runs two, the selection and A^R's vote,
recorded as the one Lemma 8 event by :func:`mechanisms.ledger.recorded_jointly`). The
subsample and the flip coin are data-independent randomness drawn from the injected
generator (like a projection matrix); the recorded event says what they do to privacy. The
flip is drawn as the equivalent mixture "with probability 1 - 2a keep the label, else output
a fair coin", which is flipping with probability a.

Reconstructions and corrections:

* Section 3's outline uses |T| = gamma n/2 and EM privacy gamma/4; Section 3.1 uses
  n' <= gamma n and EM privacy gamma, concluding 3 gamma-stability.  Both are covered: the
  accountant bounds the stability by n'/n + (1 - n'/n) tanh(eps_EM/2) (exact TV of an
  eps-DP binary output), tighter than the paper's n'/n + 2 eps_EM (which uses
  e^x <= 1 + 2x, valid for x <= 1.25 only -- 003 says "x <= 1").
* The realizable learner A^R of Lemma 6 ([DF18, Theorem 4.1]) is not in the document.  It
  is reconstructed (:class:`RealizableLearner`) from what 003 says of it: Section 1 names
  the technique ("averaging of models trained on disjoint subsets of data", DF18's
  aggregation), and Remark 2 says DF18's proof needs only a non-private learner that
  outputs a hypothesis consistent with its (relabeled) sample.  So: a random partition into
  k blocks, on each block the hypothesis of H restricted to the block (H_{block},
  enumerated exactly) with the fewest errors (consistent on S_h, which h labels), and the
  k votes at the query aggregated by the exponential mechanism over the two labels
  (sensitivity 1: one record changes one vote), privacy 1/(eta n) as step 4 asks.  DF18's
  own constants are not in the document; k is a parameter (``parts``).
* Lemma 8 is stated with O(.) constants; :func:`dpaudit.theorems.stability.lemma8_guarantee`
  makes them explicit (4 e^{k(2 beta + eps_R)} with k = eta(n-1)+1; 003 has 4 e^6) and bounds
  the eta-net failure with the epsilon-net theorem; at feasible n the resulting epsilon is
  large: the privacy of Theorem 2 is asymptotic.

Modules: this one holds the Section 3 learners, :class:`SubsampledResponse` and the claims;
:mod:`mechanisms.realizable_prediction` the Section 4.2 learners (re-exported here);
:mod:`mechanisms.subsample_selection` the machinery they share.
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
from dpaudit.events.stability import (
    LabelFlipped,
    SubsampledCandidates,
)
from dpaudit.numeric import exact
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.primitives import RandomizedResponseMechanism
from mechanisms.realizable_prediction import RealizableLearner, Theorem2Learner
from mechanisms.subsample_selection import (
    REPLACE,
    _check_rng,
    _data,
    _flip,
    _flips,
    _predictions,
    _probability,
    _query,
    _sample_size,
    _selections,  # noqa: F401  (re-exported: tests batch selections directly)
    _subsample_select,
    balanced_query_pair,
    predict_halfspaces,
)

__all__ = [
    "FlippedStableLearner",
    "RealizableLearner",
    "StableLearner",
    "SubsampledResponse",
    "Theorem2Learner",
    "balanced_query_pair",
    "predict_halfspaces",
]


@dataclasses.dataclass(frozen=True)
class StableLearner:
    """003 Section 3.1: subsample n' = ``sample`` indices, exponential mechanism with privacy
    ``selection_epsilon`` over H_{S_I} scored on all of S, predict with the selection.

    Privacy: Lemma 7 claims 3 gamma-uniform stability when n' <= gamma n and the EM privacy
    is gamma (claim ``003/lemma-7``); the accountant gives n'/n + (1 - n'/n) tanh(gamma/2).
    """

    selection_epsilon: Any
    sample: int

    def plan(self, n: Any) -> ev.Event:
        """SubsampledCandidates(Exponential(eps_EM, sensitivity 1), n', n)."""
        return SubsampledCandidates(
            ev.Exponential(self.selection_epsilon, 1, relation=REPLACE), self.sample, n
        )

    def _transform(self, n: int) -> Callable[[ev.Event], ev.Event]:
        return lambda e: SubsampledCandidates(e, self.sample, n)

    def hypothesis(self, X: Any, y: Any, rng: np.random.Generator) -> np.ndarray:
        """One draw of the selected hypothesis h (a unit vector of R^2)."""
        X, y = _data(X, y)
        _sample_size("sample", self.sample, len(X))
        return _subsample_select(
            X, y, self.sample, self.selection_epsilon, self._transform(len(X)), _check_rng(rng)
        )

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        """The randomised prediction A_S(x) in {0, 1} (fresh randomness per query)."""
        q = _query(x)
        return int(predict_halfspaces(self.hypothesis(X, y, rng), q)[0, 0])

    def mechanism(self, x: Any) -> Callable[..., Any]:
        """The auditable form: ``mechanism((X, y), rng)`` is the prediction at ``x``, with a
        ``.batch`` grouped by subsample (:func:`_predictions`)."""
        q = _query(x)

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            return self.predict(*dataset, q, rng)

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            return _predictions(
                X,
                y,
                q,
                self.sample,
                self.selection_epsilon,
                self._transform(len(X)),
                n,
                _check_rng(rng),
            )

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "003 stable learner prediction"  # type: ignore[attr-defined]
        return mechanism


@dataclasses.dataclass(frozen=True)
class FlippedStableLearner:
    """003 Corollary 1: the stable learner, prediction flipped with probability ``flip``.

    :meth:`from_paper` sets the parameters as the corollary does: target stability
    gamma = eps alpha / 2 realised by Lemma 7 (n' = floor(gamma n / 3), EM privacy gamma/3),
    flip probability alpha.

    Privacy: eps-private prediction (claim ``003/corollary-1``).
    """

    selection_epsilon: Any
    sample: int
    flip: Any

    def __post_init__(self) -> None:
        _probability("flip", self.flip, 0.5)

    @classmethod
    def from_paper(cls, epsilon: Any, alpha: Any, n: int) -> FlippedStableLearner:
        """Corollary 1's choice for datasets of size n."""
        gamma = exact(epsilon, "epsilon") * exact(alpha, "alpha") / 2
        sample = max(1, math.floor(float(gamma * n / 3)))
        return cls(gamma / 3, sample, exact(alpha, "alpha"))

    def stable(self) -> StableLearner:
        return StableLearner(self.selection_epsilon, self.sample)

    def plan(self, n: Any) -> ev.Event:
        return LabelFlipped(self.stable().plan(n), self.flip)

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        X, y = _data(X, y)
        q = _query(x)
        n = _sample_size("sample", self.sample, len(X)) and len(X)
        rng = _check_rng(rng)
        h = _subsample_select(
            X,
            y,
            self.sample,
            self.selection_epsilon,
            lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, n), self.flip),
            rng,
        )
        return _flip(int(predict_halfspaces(h, q)[0, 0]), float(exact(self.flip, "flip")), rng)

    def mechanism(self, x: Any) -> Callable[..., Any]:
        """The auditable form: ``mechanism((X, y), rng)`` is the prediction at ``x``."""
        q = _query(x)
        flip = float(exact(self.flip, "flip"))

        def run(X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> int:
            n = len(X)
            h = _subsample_select(
                X,
                y,
                self.sample,
                self.selection_epsilon,
                lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, n), self.flip),
                rng,
            )
            return _flip(int(predict_halfspaces(h, q)[0, 0]), flip, rng)

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            return run(X, y, _check_rng(rng))

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            size = len(X)
            labels = _predictions(
                X,
                y,
                q,
                self.sample,
                self.selection_epsilon,
                lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, size), self.flip),
                n,
                _check_rng(rng),
            )
            return _flips(labels, flip, rng)

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "003 Corollary 1 prediction"  # type: ignore[attr-defined]
        return mechanism


@dataclasses.dataclass(frozen=True)
class SubsampledResponse:
    """An instance of 003 Lemma 5's setting for audits: the eps-DP algorithm is randomized
    response on the bit "the subsample holds a record equal to 1" (replace-one sensitivity
    1), run on a uniform subset of ``sample`` records.  Datasets are 0/1 vectors.

    Privacy: Lemma 5 claims 2 eps n'/n for eps <= 1 (claim ``003/lemma-5``); the exact value
    for this instance is ln(1 + (n'/n)(e^eps - 1)) (amplification by subsampling), reached on
    :meth:`pair`.
    """

    epsilon: Any
    sample: int

    def plan(self, n: Any) -> ev.Event:
        return ev.SampledWithoutReplacement(
            ev.RandomizedResponse(self.epsilon, relation=REPLACE), self.sample, n
        )

    def _bits(self, dataset: Any) -> np.ndarray:
        bits = np.asarray(dataset)
        if bits.ndim != 1 or not np.all(np.isin(bits, (0, 1))):
            raise ValueError("dataset must be a 1-D array of bits in {0, 1}")
        _sample_size("sample", self.sample, len(bits))
        return bits.astype(np.int64)

    def __call__(self, dataset: Any, rng: np.random.Generator) -> int:
        bits, rng = self._bits(dataset), _check_rng(rng)
        held = int(bits[rng.choice(len(bits), size=self.sample, replace=False)].max())
        return int(_response(self.epsilon).respond(held, rng))

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """n independent runs (subsets drawn together, then one respond call per bit)."""
        bits, rng = self._bits(dataset), _check_rng(rng)
        subsets = np.argpartition(rng.random((n, len(bits))), self.sample - 1, axis=1)[
            :, : self.sample
        ]
        held = bits[subsets].max(axis=1)
        out = np.empty(n, dtype=np.int64)
        for value in (0, 1):
            where = np.flatnonzero(held == value)
            if where.size:
                out[where] = _response(self.epsilon).respond(value, rng, size=where.size)
        return out

    @staticmethod
    def pair(n: int) -> tuple[np.ndarray, np.ndarray]:
        """The stressing replace-one pair: all zeros, and one record set to 1."""
        d1 = np.zeros(n, dtype=np.int64)
        d1[0] = 1
        return np.zeros(n, dtype=np.int64), d1


@functools.lru_cache(maxsize=16)
def _response(epsilon: Any) -> RandomizedResponseMechanism:
    return RandomizedResponseMechanism(epsilon, relation=REPLACE)


# ----------------------------------------------------------------------------------------
# Claims
# ----------------------------------------------------------------------------------------

_g, _e, _a = (sympy.Symbol(s, positive=True) for s in ("gamma", "epsilon", "alpha"))
_n, _m = sympy.Symbol("n", positive=True), sympy.Symbol("n_prime", positive=True)

register_claim(
    Claim(
        key="003/lemma-7",
        document="003 Dagan, Feldman 2020",
        theorem="Lemma 7 (stability part)",
        statement=(
            "subsample n' <= gamma n, EM with privacy gamma over H_{S_I}: the prediction "
            "is 3 gamma-uniformly stable, i.e. (0, 3 gamma)-private prediction"
        ),
        plan=StableLearner(_g, _m).plan(_n),
        epsilon=0,
        delta=3 * _g,
        domain=Domain(
            {"gamma": "(0, 1/3)", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _g * _n],
        ),
        note="the accountant's bound n'/n + (1 - n'/n) tanh(gamma/2) is tighter than 3 gamma",
    )
)

register_claim(
    Claim(
        key="003/corollary-1",
        document="003 Dagan, Feldman 2020",
        theorem="Corollary 1 (privacy part)",
        statement=(
            "the eps alpha/2-stable learner (Lemma 7 with n' <= eps alpha n / 6, EM privacy"
            " eps alpha / 6) flipped with probability alpha gives eps-private prediction"
        ),
        plan=LabelFlipped(StableLearner(_e * _a / 6, _m).plan(_n), _a),
        epsilon=_e,
        delta=0,
        domain=Domain(
            {"epsilon": "(0, 1)", "alpha": "(0, 1/2)", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _e * _a * _n / 6],
        ),
        note="label-flip rule: eps' = ln(1 + (1 - 2 alpha) gamma / alpha) <= gamma / alpha",
    )
)

register_claim(
    Claim(
        key="003/lemma-5",
        document="003 Dagan, Feldman 2020",
        theorem="Lemma 5",
        statement="an eps-private (prediction) algorithm on a uniform m-subset of n is "
        "2 eps m/n-private for eps <= 1",
        plan=ev.SampledWithoutReplacement(ev.PureDP(_e, relation=REPLACE), _m, _n),
        epsilon=2 * _e * _m / _n,
        delta=0,
        domain=Domain(
            {"epsilon": "(0, 1]", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _n],
        ),
    )
)
