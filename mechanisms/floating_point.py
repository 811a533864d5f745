"""Floating-point pitfalls of textbook noise, and safe counterparts, ready to audit.

Every entry follows the catalogue's contract (:class:`mechanisms.catalogue.AuditableMechanism`:
``batch``, ``pairs``, ``epsilon``, ``delta``, ``true_epsilon``) and declares
``arithmetic = "float"``: its claim is about the code as it runs in IEEE 754 doubles, so the
auditor searches its ``bits`` event family (:mod:`dpaudit.audit.float_bits`). The catalogue's
textbook mechanisms declare ``"real"`` instead: their claims are about real arithmetic.

Broken (flagged by ``dpaudit audit mechanisms.floating_point:BrokenNaiveFloatLaplace``):

* :class:`BrokenNaiveFloatLaplace`: ``x + rng.laplace(0, 1/eps)`` (Mironov 2012, "On
  significance of the least significant bits for differential privacy", CCS: the
  doubles it outputs depend on ``x``; DP-Sniper's floating-point experiment, Bichsel et al.
  2021, S&P, uses the pair 1, 0 at epsilon 0.1 in its floating-point experiment);
* :class:`BrokenBoxMullerGaussian`: Gaussian noise from the Box-Muller transform computed in
  doubles (the same flaw for the Gaussian; Haney et al. 2022, "Precision-based attacks and
  interval refining", PoPETs, attack textbook float samplers);
* :class:`BrokenFloat32ClampedSum`: a sum of records clamped to [0, 1], accumulated in
  single precision, released with snapping noise calibrated to sensitivity 1: rounding of the
  running sum makes one record move the sum by 2 (Casacuberta, Shoemate, Vadhan, Wagaman 2022,
  "Widespread underestimation of sensitivity in differentially private libraries and how to
  fix it", CCS: iterated floating-point summation has a larger sensitivity than U - L).

Safe:

* :class:`SnappingLaplace`: Mironov's snapping mechanism (Mironov 2012, Section 5.2);
* :class:`GeometricCount`: integer count plus exact discrete Laplace (two-sided geometric)
  noise (Ghosh, Roughgarden, Sundararajan 2009; sampler of Canonne, Kamath, Steinke 2020,
  Algorithm 2, in :mod:`mechanisms.discrete`): integer arithmetic only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.audit.pairs import NeighbouringPair
from mechanisms.catalogue import AuditableMechanism, _positive
from mechanisms.discrete import sample_discrete_laplace

__all__ = [
    "BrokenBoxMullerGaussian",
    "BrokenFloat32ClampedSum",
    "BrokenNaiveFloatLaplace",
    "GeometricCount",
    "SnappingLaplace",
    "exact_uniform",
    "float_broken_mechanisms",
    "float_safe_mechanisms",
    "snap",
]


def _scalar(dataset: Any) -> float:
    return float(np.asarray(dataset, dtype=float).reshape(-1)[0])


class _FloatMechanism(AuditableMechanism):
    arithmetic = "float"

    def _pair(self, d0: Any, d1: Any, name: str) -> None:
        self.pairs = (NeighbouringPair(d0, d1, name),)
        self.name = type(self).__name__


class BrokenNaiveFloatLaplace(_FloatMechanism):
    """The textbook Laplace mechanism in doubles: ``x + rng.laplace(0, 1/epsilon)``.

    The dataset is one number ``x`` of sensitivity 1 (pair: 1 and 0, DP-Sniper's).
    What is wrong: the sum is rounded to a double, and which doubles occur depends on ``x``:
    e.g. from ``x = 1`` every output in [0.25, 0.5) has its last significand bit 0 (it is
    ``1 + v`` with ``v`` in [-0.75, -0.5), a multiple of 2^-53), from ``x = 0`` half of them
    end in 1 (Mironov 2012, the attack on the textbook sampler). True epsilon: infinite
    (outputs of positive probability under one input and zero under the other).
    """

    true_epsilon = math.inf

    def __init__(self, epsilon: float = 0.1) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.scale = 1.0 / self.epsilon
        self._pair(1.0, 0.0, "x = 1 vs x = 0")

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return _scalar(dataset) + rng.laplace(0.0, self.scale, n)


class BrokenBoxMullerGaussian(_FloatMechanism):
    """The Gaussian mechanism with Box-Muller noise written in doubles.

    ``x + sigma * sqrt(-2 ln u1) cos(2 pi u2)``, ``u1, u2`` uniform doubles, ``sigma =
    sqrt(2 ln(1.25/delta)) / epsilon`` (Dwork & Roth 2014, Theorem A.1, for epsilon < 1).
    The dataset is one number of sensitivity 1 (pair: 1 and 0).
    What is wrong: as for :class:`BrokenNaiveFloatLaplace`, the doubles ``x + noise`` can
    reach depend on ``x`` (Mironov 2012; Haney et al. 2022). True
    epsilon at this delta: infinite (the classes one input never reaches have probability far
    above delta).
    """

    true_epsilon = math.inf

    def __init__(self, epsilon: float = 0.5, delta: float = 1e-5) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        if not (isinstance(delta, float) and 0.0 < delta < 1.0):
            raise ValueError(f"delta must be a float in (0, 1), got {delta!r}")
        self.delta = delta
        self.sigma = math.sqrt(2.0 * math.log(1.25 / delta)) / self.epsilon
        self._pair(1.0, 0.0, "x = 1 vs x = 0")

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        u1 = 1.0 - rng.random(n)  # in (0, 1]
        u2 = rng.random(n)
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        return _scalar(dataset) + self.sigma * z


def _leading_zeros(n: int, rng: np.random.Generator) -> np.ndarray:
    """Leading zero bits of an endless uniform bit string (``P(k) = 2^-(k+1)``), capped at
    1021; integer arithmetic only (53-bit words; a zero word adds 53 and draws again)."""
    zeros = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size and zeros.min(initial=0) < 1021:
        word = rng.integers(0, 1 << 53, todo.size, dtype=np.int64)
        hit = word != 0
        # bit length of a positive integer below 2^53: frexp's exponent, exact
        zeros[todo[hit]] += 53 - np.frexp(word[hit].astype(np.float64))[1]
        zeros[todo[~hit]] += 53
        todo = todo[~hit]
    return np.minimum(zeros, 1021)


def exact_uniform(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of a uniform real in (0, 1) rounded to the nearest double.

    Every double in (0, 1] gets the probability of the reals that round to it, as the snapping
    mechanism's proof requires (Mironov 2012, Section 5.2, the distribution ``U*``; ``rng.random``
    returns multiples of 2^-53 only). The binade ``[2^-(e+1), 2^-e)`` is chosen with probability
    ``2^-(e+1)`` (count of leading zero bits), the 52 significand bits uniformly, and one more
    random bit rounds up or down (the rest of the real's expansion; exact ties have probability
    zero). The exponent is capped at 1021 (probability 2^-1022 of being capped).
    """
    e = _leading_zeros(n, rng)  # P(e = k) = 2^-(k+1)
    significand = rng.integers(0, 1 << 52, n, dtype=np.int64)
    up = rng.integers(0, 2, n, dtype=np.int64)
    # (2^52 + m + r) * 2^-(52 + e + 1) is exact: an integer below 2^53 times a power of two.
    return np.ldexp(((1 << 52) + significand + up).astype(np.float64), -(53 + e))


def snap(value: float, scale: float, bound: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Mironov's snapping mechanism (Mironov 2012, Section 5.2), ``n`` draws.

    ``clamp_B(round_Lambda(clamp_B(value) + S * scale * ln(U*)))`` with ``S`` a uniform sign,
    ``U*`` from :func:`exact_uniform`, ``Lambda`` the smallest power of two >= ``scale`` and
    ``round_Lambda`` rounding to the nearest multiple of ``Lambda`` (exact: division and
    multiplication by a power of two).

    Privacy:
        For a sensitivity-1 ``value``, ``scale < bound < 2^46 scale``, doubles with a correctly
        rounded ``ln``, the output is ``(1 + 2^-49 bound) / scale``-DP (Mironov 2012, Section
        5.2, Theorem 1). NumPy's ``log`` (the C library's) is accurate to within one ulp but
        not proven correctly rounded: that assumption of the theorem is not checked here.
    """
    lam = 2.0 ** math.ceil(math.log2(scale))
    while lam / 2.0 >= scale:  # guard against log2 rounding
        lam /= 2.0
    while lam < scale:
        lam *= 2.0
    sign = rng.integers(0, 2, n) * 2.0 - 1.0
    noisy = min(max(value, -bound), bound) + sign * scale * np.log(exact_uniform(n, rng))
    return np.clip(np.round(noisy / lam) * lam, -bound, bound)


class SnappingLaplace(_FloatMechanism):
    """Snapping mechanism on one number of sensitivity 1 (Mironov 2012, Section 5.2).

    Privacy:
        epsilon-DP with ``scale = (1 + 2^-49 B) / epsilon`` and clamp bound ``B``
        (Mironov 2012, Section 5.2, Theorem 1; requires ``scale < B < 2^46 scale``), under
        the theorem's assumptions stated in :func:`snap`. ``true_epsilon`` is None: the
        theorem gives an upper bound, the exact value of the discretised mechanism is lower.
    """

    true_epsilon = None

    def __init__(self, epsilon: float = 0.1, bound: float = 100.0) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.bound = _positive("bound", bound)
        self.scale = (1.0 + 2.0**-49 * self.bound) / self.epsilon
        if not self.scale < self.bound < 2.0**46 * self.scale:
            raise ValueError(
                f"bound must be in (scale, 2^46 scale) = ({self.scale:g}, "
                f"{2.0**46 * self.scale:g}) (Mironov 2012, Theorem 1), got {bound!r}"
            )
        self._pair(1.0, 0.0, "x = 1 vs x = 0")

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return snap(_scalar(dataset), self.scale, self.bound, n, rng)


class GeometricCount(_FloatMechanism):
    """Integer count plus exact discrete Laplace noise (the two-sided geometric mechanism).

    Privacy:
        ``P[Z = k]`` proportional to ``e^(-epsilon |k|)``: a sensitivity-1 integer query plus
        ``Z`` is epsilon-DP, exactly (Ghosh, Roughgarden, Sundararajan 2009, the geometric
        mechanism; the sampler is Canonne, Kamath, Steinke 2020, Algorithm 2, integer
        arithmetic only).
        Outputs are returned as doubles (integers below 2^53, all exact).
    """

    def __init__(self, epsilon: float = 0.1) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.true_epsilon = self.epsilon
        self._pair(np.ones(5), np.ones(4), "remove one record")

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        count = int(np.clip(np.asarray(dataset, dtype=float), 0, 1).sum())
        noise = sample_discrete_laplace(1.0 / self.epsilon, rng, n)
        return (count + np.asarray(noise, dtype=np.int64)).astype(np.float64)


#: The records of the float32 sum's pair: 2048 ones then 8192 copies of X32 (see below).
ONES, SMALL = 2048, 8192
#: 2^-13 + 2^-24: just over half the float32 spacing at 2048 (2^-12), exactly representable.
X32 = 2.0**-13 + 2.0**-24


class BrokenFloat32ClampedSum(_FloatMechanism):
    """Records clamped to [0, 1], summed in order in float32, plus snapping noise for
    sensitivity 1 (bound 2^13).

    What is wrong: the float32 running sum rounds. With 2048 ones first, the sum sits at 2048,
    where float32 doubles are 2^-12 apart, so each later record X32 (just over 2^-13) rounds up
    to a full 2^-12; with one of the ones removed the sum sits at 2047, spacing 2^-13, and the
    next 8192 records count about their true value. Removing one record of value 1 moves the
    float32 sum by 2 (Casacuberta et al. 2022: iterated float summation has sensitivity above
    U - L). True epsilon: about 2 epsilon on this pair (shift 2 under noise for shift 1; not
    computed in closed form for the snapped output, so None).
    """

    true_epsilon = None

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = _positive("epsilon", epsilon)
        self.bound = 2.0**13
        self.scale = (1.0 + 2.0**-49 * self.bound) / self.epsilon
        ones, small = np.ones(ONES), np.full(SMALL, X32)
        self._pair(
            np.concatenate([ones, small]),
            np.concatenate([ones[1:], small]),
            f"{ONES} ones then {SMALL} x 2^-13(1 + 2^-11), and without one of the ones",
        )

    def query(self, dataset: Any) -> float:
        """The float32 running sum of the records clamped to [0, 1], in their order."""
        records = np.clip(np.asarray(dataset, dtype=np.float32), 0, 1)
        return float(np.cumsum(records, dtype=np.float32)[-1]) if records.size else 0.0

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return snap(self.query(dataset), self.scale, self.bound, n, rng)


def float_broken_mechanisms() -> list[AuditableMechanism]:
    """One instance of each broken floating-point mechanism at its default claim."""
    return [BrokenNaiveFloatLaplace(), BrokenBoxMullerGaussian(), BrokenFloat32ClampedSum()]


def float_safe_mechanisms() -> list[AuditableMechanism]:
    """One instance of each safe counterpart at its default claim."""
    return [SnappingLaplace(), GeometricCount()]
