"""Runnable primitive mechanisms, one per leaf event.

Each primitive draws its noise from an injected :class:`numpy.random.Generator`, exposes the
:class:`~dpaudit.events.Event` that describes it as ``.event``, and records that event in the
active ledgers (:mod:`mechanisms.ledger`) every time it runs.  Algorithms are built from
these primitives only, so what a run spends is exactly what its ledger shows.

Batches: every sampling method takes ``size``; ``size=n`` returns n independent runs (an
array whose first axis has length n) and records n runs.  Auditors use this for speed.

Floating-point caveat: the continuous samplers (Laplace, Gaussian, and the noise inside
report-noisy-max, AboveThreshold and the exponential mechanism's Gumbel-max), and the float
coin of randomized response, use NumPy's floating-point generators.  Their outputs
are doubles, whose low-order bits can reveal the unnoised value (Mironov, CCS 2012), so the
stated guarantees hold for the ideal real-valued mechanism, not bit-for-bit for the floats.
When that matters, use :class:`DiscreteLaplaceMechanism` or
:class:`DiscreteGaussianMechanism` on integer-valued queries: they sample exactly in integer
arithmetic (Canonne, Kamath, Steinke 2020) and carry no such caveat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.events import Event
from mechanisms import discrete
from mechanisms.ledger import record

__all__ = [
    "AboveThresholdMechanism",
    "AboveThresholdSession",
    "DeclaredMechanism",
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "Primitive",
    "RandomizedResponseMechanism",
    "ReportNoisyMaxMechanism",
]


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_size(size: Any) -> int | None:
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be None or an integer in [1, inf), got {size!r}")
    return int(size)


def _float(expr: sympy.Expr) -> float:
    if expr.free_symbols:
        raise ValueError(f"a runnable mechanism needs numeric parameters, got {expr}")
    return float(expr)


def _fraction(expr: sympy.Expr) -> Fraction:
    if not expr.is_Rational:
        raise ValueError(f"an exact sampler needs a rational parameter, got {expr}")
    return Fraction(int(expr.p), int(expr.q))


def _mp(expr: sympy.Expr, dps: int) -> mpmath.mpf:
    """An exact sympy number as an mpmath float with ``dps`` (+10 guard) digits."""
    return mpmath.mpf(sympy.N(expr, dps + 10)._mpf_)


class Primitive:
    """Base class: holds the event, records it when the mechanism runs."""

    def __init__(self, event: Event) -> None:
        self._event = event
        if event.free_symbols:
            raise ValueError(f"a runnable mechanism needs numeric parameters, got {event}")

    @property
    def event(self) -> Event:
        """The event describing one run of this primitive."""
        return self._event

    def _record(self, size: int | None) -> None:
        record(self._event, 1 if size is None else size)

    def _add_noise(
        self, value: Any, size: int | None, draw: Callable[[tuple[int, ...]], np.ndarray]
    ) -> Any:
        """``value`` plus ``draw(shape)`` noise, for one run or ``size`` runs stacked on a new
        first axis; records the runs."""
        n = _check_size(size)
        arr = np.asarray(value, dtype=float)
        out = arr + draw(arr.shape if n is None else (n, *arr.shape))
        self._record(n)
        return float(out) if out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._event})"


def _scores(scores: Any) -> np.ndarray:
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"scores must be a non-empty 1-D sequence of numbers, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("scores must be finite numbers, got NaN or infinity")
    return arr


class LaplaceMechanism(Primitive):
    """Adds Laplace(scale) noise to each coordinate of a query of L1 sensitivity
    ``sensitivity``.  Privacy: (sensitivity/scale)-DP (see :class:`dpaudit.events.Laplace`).
    """

    def __init__(
        self, scale: Any, sensitivity: Any = 1, *, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        super().__init__(ev.Laplace(scale, sensitivity, relation=relation))
        self.scale = _float(self.event.scale)

    def release(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """``value`` plus Laplace noise (``size`` runs stacked on a new first axis)."""
        rng = _check_rng(rng)
        return self._add_noise(value, size, lambda shape: rng.laplace(0.0, self.scale, size=shape))


class GaussianMechanism(Primitive):
    """Adds N(0, sigma^2) noise to each coordinate of a query of L2 sensitivity
    ``sensitivity``.  Privacy: see :class:`dpaudit.events.Gaussian`."""

    def __init__(
        self, sigma: Any, sensitivity: Any = 1, *, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        super().__init__(ev.Gaussian(sigma, sensitivity, relation=relation))
        self.sigma = _float(self.event.sigma)

    def release(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """``value`` plus Gaussian noise (``size`` runs stacked on a new first axis)."""
        rng = _check_rng(rng)
        return self._add_noise(value, size, lambda shape: rng.normal(0.0, self.sigma, size=shape))


def _integers(value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        as_float = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(as_float)) or not np.all(as_float == np.round(as_float)):
            raise ValueError("value must be integer-valued for a discrete mechanism")
        arr = as_float.astype(np.int64)
    return arr.astype(np.int64)


class DiscreteLaplaceMechanism(Primitive):
    """Adds exact discrete Laplace noise (CKS20, Algorithm 2) to an integer query.

    Privacy: (sensitivity/scale)-DP, exactly (no floating point is involved).
    """

    def __init__(
        self, scale: Any, sensitivity: Any = 1, *, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        super().__init__(ev.DiscreteLaplace(scale, sensitivity, relation=relation))
        self.scale = _fraction(self.event.scale)

    def release(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """``value`` plus discrete Laplace noise (integers)."""
        rng, n = _check_rng(rng), _check_size(size)
        arr = _integers(value)
        shape = arr.shape if n is None else (n, *arr.shape)
        count = int(np.prod(shape)) if shape else None
        noise = discrete.sample_discrete_laplace(self.scale, rng, size=count)
        out = arr + np.reshape(noise, shape)
        self._record(n)
        return int(out) if np.ndim(out) == 0 else out


class DiscreteGaussianMechanism(Primitive):
    """Adds exact discrete Gaussian noise (CKS20, Algorithm 3) to an integer query.

    Privacy: (sensitivity^2/(2 sigma^2))-zCDP (CKS20, Theorem 4), exactly.

    Speed: sigma^2 is passed to the sampler as an exact rational; a decimal string such as
    ``"1.5"`` gives a small denominator and samples about 10x faster than the float ``1.5``,
    whose exact square has a 100-bit denominator.
    """

    def __init__(
        self, sigma: Any, sensitivity: Any = 1, *, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        super().__init__(ev.DiscreteGaussian(sigma, sensitivity, relation=relation))
        self.sigma_squared = _fraction(self.event.sigma**2)

    def release(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """``value`` plus discrete Gaussian noise (integers)."""
        rng, n = _check_rng(rng), _check_size(size)
        arr = _integers(value)
        shape = arr.shape if n is None else (n, *arr.shape)
        count = int(np.prod(shape)) if shape else None
        noise = discrete.sample_discrete_gaussian(self.sigma_squared, rng, size=count)
        out = arr + np.reshape(noise, shape)
        self._record(n)
        return int(out) if np.ndim(out) == 0 else out


#: Rows of Gumbel noise drawn at once in batched selection (bounds memory use).
_CHUNK_CELLS = 4_000_000


def _argmax_noisy(
    base: np.ndarray, draw: Callable[[tuple[int, int]], np.ndarray], n: int | None
) -> Any:
    """argmax of base + noise, for one run or ``n`` runs (chunked)."""
    if n is None:
        return int(np.argmax(base + draw((base.size,))))
    out = np.empty(n, dtype=np.int64)
    rows = max(1, _CHUNK_CELLS // base.size)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        out[start:stop] = np.argmax(base + draw((stop - start, base.size)), axis=1)
    return out


class ExponentialMechanism(Primitive):
    """The exponential mechanism over a finite candidate set, sampled exactly in
    distribution by the Gumbel-max trick: argmax_r (eps u_r / (2 Delta) + G_r) with i.i.d.
    standard Gumbel G_r has law proportional to exp(eps u_r / (2 Delta)) (``monotone``:
    exp(eps u_r / Delta)).

    Privacy: epsilon-DP (see :class:`dpaudit.events.Exponential`).
    """

    def __init__(
        self,
        epsilon: Any,
        sensitivity: Any = 1,
        monotone: bool = False,
        *,
        relation: Any = ev.Relation.ADD_REMOVE,
    ) -> None:
        super().__init__(ev.Exponential(epsilon, sensitivity, monotone, relation=relation))
        factor = 1 if monotone else 2
        self.inverse_temperature = _float(self.event.epsilon / (factor * self.event.sensitivity))

    def select(self, scores: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """The index of the selected candidate (``size`` runs: an int64 array)."""
        rng, n = _check_rng(rng), _check_size(size)
        base = _scores(scores) * self.inverse_temperature
        out = _argmax_noisy(base, lambda shape: rng.gumbel(size=shape), n)
        self._record(n)
        return out

    def select_stream(self, chunks: Iterable[Any], rng: np.random.Generator) -> int:
        """One run over scores that arrive in chunks, in memory bounded by one chunk: the
        index (into the concatenation of the chunks) of the selected candidate.

        The Gumbel-max trick is exact for any partition of the candidates: with i.i.d.
        standard Gumbel G_r, argmax_r (beta u_r + G_r) has law proportional to exp(beta u_r)
        (the Gumbel-max trick, Yellott 1977; as a sampler of the exponential mechanism,
        Durfee and Rogers 2019, Section 4, "Gumbel noise and the exponential mechanism"),
        and the argmax of the whole set is the best of the chunks' argmaxes, so only the
        running maximum is kept.  The noise is drawn chunk by chunk from ``rng``; NumPy
        draws Gumbel variates one after another, so for the same ``rng`` state the result
        equals :meth:`select` on the concatenated scores, whatever the
        chunk sizes (ties keep the first index, as ``numpy.argmax`` does).

        Privacy: one run of this primitive (epsilon-DP), recorded once.

        Raises:
            ValueError: a chunk that is not a non-empty 1-D array of finite numbers, or no
                chunk at all.
        """
        rng = _check_rng(rng)
        best, best_value, offset = -1, -np.inf, 0
        for chunk in chunks:
            noisy = _scores(chunk) * self.inverse_temperature
            noisy += rng.gumbel(size=noisy.size)
            j = int(np.argmax(noisy))
            if best < 0 or noisy[j] > best_value:
                best, best_value = offset + j, float(noisy[j])
            offset += noisy.size
        if best < 0:
            raise ValueError("chunks must yield at least one chunk of scores, got none")
        self._record(None)
        return best

    def probabilities(self, scores: Any, dps: int = 50) -> list[mpmath.mpf]:
        """The exact selection probabilities (mpmath, ``dps`` digits), for exact audits."""
        arr = _scores(scores)
        factor = 1 if self.event.monotone else 2
        with mpmath.workdps(dps):
            beta = _mp(self.event.epsilon / (factor * self.event.sensitivity), dps)
            weights = [mpmath.exp(beta * mpmath.mpf(float(s))) for s in arr]
            total = mpmath.fsum(weights)
            return [w / total for w in weights]


class RandomizedResponseMechanism(Primitive):
    """k-ary randomized response on a category in {0, ..., k-1}.

    Privacy: epsilon-DP (see :class:`dpaudit.events.RandomizedResponse`).
    """

    def __init__(
        self, epsilon: Any, categories: int = 2, *, relation: Any = ev.Relation.ADD_REMOVE
    ) -> None:
        super().__init__(ev.RandomizedResponse(epsilon, categories, relation=relation))
        self.categories = int(self.event.categories)
        e = float(mpmath.exp(mpmath.mpf(_float(self.event.epsilon))))
        self.keep_probability = e / (e + self.categories - 1)

    def respond(self, value: int, rng: np.random.Generator, size: int | None = None) -> Any:
        """The randomized category (``size`` runs: an int64 array)."""
        rng, n = _check_rng(rng), _check_size(size)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or not (0 <= value < self.categories)
        ):
            raise ValueError(
                f"value must be a category in [0, {self.categories - 1}], got {value!r}"
            )
        count = 1 if n is None else n
        keep = rng.random(count) < self.keep_probability
        # another category, uniform over the k-1 others
        other = rng.integers(0, self.categories - 1, size=count)
        other = other + (other >= value)
        out = np.where(keep, value, other).astype(np.int64)
        self._record(n)
        return int(out[0]) if n is None else out

    def probabilities(self, value: int, dps: int = 50) -> list[mpmath.mpf]:
        """The exact output distribution for true category ``value``."""
        with mpmath.workdps(dps):
            e = mpmath.exp(_mp(self.event.epsilon, dps))
            total = e + self.categories - 1
            return [e / total if y == value else 1 / total for y in range(self.categories)]


class ReportNoisyMaxMechanism(Primitive):
    """Report noisy max with Gumbel, Laplace or exponential noise of scale 2 Delta/eps
    (Delta/eps for monotone scores); releases only the index.

    Privacy: epsilon-DP (see :class:`dpaudit.events.ReportNoisyMax`).
    """

    def __init__(
        self,
        epsilon: Any,
        noise: str = "gumbel",
        sensitivity: Any = 1,
        monotone: bool = False,
        *,
        relation: Any = ev.Relation.ADD_REMOVE,
    ) -> None:
        super().__init__(
            ev.ReportNoisyMax(epsilon, noise, sensitivity, monotone, relation=relation)
        )
        factor = 1 if monotone else 2
        self.noise_scale = _float(factor * self.event.sensitivity / self.event.epsilon)

    def _draw(self, rng: np.random.Generator) -> Callable[[tuple[int, ...]], np.ndarray]:
        scale, kind = self.noise_scale, self.event.noise
        if kind == "gumbel":
            return lambda shape: rng.gumbel(0.0, scale, size=shape)
        if kind == "laplace":
            return lambda shape: rng.laplace(0.0, scale, size=shape)
        return lambda shape: rng.exponential(scale, size=shape)

    def select(self, scores: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """The index of the largest noisy score (``size`` runs: an int64 array)."""
        rng, n = _check_rng(rng), _check_size(size)
        out = _argmax_noisy(_scores(scores), self._draw(rng), n)
        self._record(n)
        return out


class AboveThresholdSession:
    """One run of the sparse vector technique: answers queries until ``cutoff`` positives.

    Created by :meth:`AboveThresholdMechanism.start`; the run is recorded once, at start.
    """

    def __init__(self, mechanism: AboveThresholdMechanism, rng: np.random.Generator) -> None:
        self._m = mechanism
        self._rng = rng
        self.noisy_threshold = mechanism.threshold + rng.laplace(0.0, mechanism.threshold_scale)
        self.positives = 0
        self.answers: list[bool] = []

    @property
    def halted(self) -> bool:
        """True once ``cutoff`` queries were answered positively."""
        return self.positives >= self._m.cutoff

    def query(self, value: float) -> bool:
        """Answer whether the (noisy) query value is above the (noisy) threshold.

        Raises:
            RuntimeError: after the run halted (the cutoff was reached).
        """
        if self.halted:
            raise RuntimeError("AboveThreshold halted: its cutoff of positive answers is spent")
        v = float(value)
        if not np.isfinite(v):
            raise ValueError(f"value must be a finite number, got {value!r}")
        above = v + self._rng.laplace(0.0, self._m.query_scale) >= self.noisy_threshold
        self.answers.append(bool(above))
        self.positives += int(above)
        return bool(above)


class AboveThresholdMechanism(Primitive):
    """The sparse vector technique (Lyu, Su, Li 2017, Algorithm 1).

    Threshold noise Lap(Delta/eps1), query noise Lap(2 c Delta/eps2) (Lap(c Delta/eps2) for
    monotone queries), eps1 = threshold_share * epsilon, eps2 = epsilon - eps1.

    Privacy: epsilon-DP for any number of queries (see :class:`dpaudit.events.AboveThreshold`).
    """

    def __init__(
        self,
        epsilon: Any,
        threshold: float,
        sensitivity: Any = 1,
        cutoff: int = 1,
        monotone: bool = False,
        threshold_share: Any = "1/2",
        *,
        relation: Any = ev.Relation.ADD_REMOVE,
    ) -> None:
        super().__init__(
            ev.AboveThreshold(
                epsilon, sensitivity, cutoff, monotone, threshold_share, relation=relation
            )
        )
        t = float(threshold)
        if not np.isfinite(t):
            raise ValueError(f"threshold must be a finite number, got {threshold!r}")
        self.threshold = t
        self.cutoff = int(self.event.cutoff)
        e = self.event
        eps1 = e.threshold_share * e.epsilon
        eps2 = e.epsilon - eps1
        self.threshold_scale = _float(e.sensitivity / eps1)
        factor = 1 if monotone else 2
        self.query_scale = _float(factor * e.cutoff * e.sensitivity / eps2)

    def start(self, rng: np.random.Generator) -> AboveThresholdSession:
        """Start one run (records its event once)."""
        session = AboveThresholdSession(self, _check_rng(rng))
        self._record(None)
        return session

    def start_batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Start ``size`` runs together (each recorded once, as :meth:`start` records one):
        their noisy thresholds, one per run; answer their queries with :meth:`answer_batch`."""
        rng, n = _check_rng(rng), _check_size(size) or 1
        thresholds = self.threshold + rng.laplace(0.0, self.threshold_scale, size=n)
        self._record(n)
        return thresholds

    def answer_batch(self, values: Any, thresholds: Any, rng: np.random.Generator) -> np.ndarray:
        """One query to each of the runs with noisy ``thresholds`` (from :meth:`start_batch`):
        ``values[i] + Lap(query_scale) >= thresholds[i]``, as :meth:`AboveThresholdSession.query`
        answers.  The caller stops querying a run after its ``cutoff``-th positive answer."""
        vals = np.asarray(values, dtype=float)
        thr = np.asarray(thresholds, dtype=float)
        if vals.shape != thr.shape or vals.ndim != 1 or not np.all(np.isfinite(vals)):
            raise ValueError("values must be a 1-D array of finite numbers, one per threshold")
        return vals + _check_rng(rng).laplace(0.0, self.query_scale, size=vals.size) >= thr

    def run(self, values: Iterable[float], rng: np.random.Generator) -> list[bool]:
        """Answer ``values`` in order, stopping after the ``cutoff``-th positive answer."""
        session = self.start(rng)
        for v in values:
            session.query(v)
            if session.halted:
                break
        return session.answers

    def run_batch(self, values: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent runs on the same query values, vectorised.

        Returns:
            An int8 array of shape (size, len(values)): 1 above, 0 below, -1 not answered
            (after the cutoff).
        """
        rng, n = _check_rng(rng), _check_size(size)
        vals = np.asarray(values, dtype=float)
        if vals.ndim != 1 or not np.all(np.isfinite(vals)):
            raise ValueError("values must be a 1-D sequence of finite numbers")
        thresholds = self.threshold + rng.laplace(0.0, self.threshold_scale, size=(n, 1))
        above = (vals + rng.laplace(0.0, self.query_scale, size=(n, vals.size))) >= thresholds
        positives_before = np.cumsum(above, axis=1) - above
        answered = positives_before < self.cutoff
        out = np.where(answered, above.astype(np.int8), np.int8(-1))
        self._record(n)
        return out


class DeclaredMechanism(Primitive):
    """A user's mechanism declared with a generic guarantee (PureDP, ApproxDP or ZCDP).

    ``function(*args, rng=rng, **kwargs)`` is run as is; the declared event is recorded.  The
    declaration is the user's claim: audit it with :mod:`dpaudit.audit`.
    """

    def __init__(self, event: Event, function: Callable[..., Any]) -> None:
        if not isinstance(event, (ev.PureDP, ev.ApproxDP, ev.ZCDP)):
            raise ValueError(f"event must be a PureDP, ApproxDP or ZCDP event, got {event}")
        if not callable(function):
            raise ValueError(f"function must be callable, got {function!r}")
        super().__init__(event)
        self.function = function

    def __call__(self, *args: Any, rng: np.random.Generator, **kwargs: Any) -> Any:
        result = self.function(*args, rng=_check_rng(rng), **kwargs)
        self._record(None)
        return result
