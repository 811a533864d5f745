"""Exact samplers for the discrete Laplace and discrete Gaussian distributions.

Implements Algorithms 1-3 of

    C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
    Privacy." NeurIPS 2020; arXiv:2004.00010 (v5 numbering of the algorithms).

Every sampling decision is made in integer arithmetic: the only source of randomness
is ``rng.integers`` on an injected :class:`numpy.random.Generator`, and a Bernoulli
trial with a rational probability ``n/d`` is decided as ``U < n`` for ``U`` uniform on
``{0, ..., d-1}``.  No float is ever compared, rounded or exponentiated, so the output
distribution is exactly the stated one (up to the quality of the generator), which
protects against the floating-point attacks of Mironov (CCS 2012) on textbook samplers.

Two implementations share the algorithms:

* a vectorised one on ``int64`` NumPy arrays, used whenever every intermediate integer
  provably fits in 62 bits (all practical parameters, including those that come from
  floats such as ``0.1``); elements whose intermediate values would not fit are
  finished by the scalar code, so the result is exact in every case;
* a scalar one on Python integers (unbounded), a line-by-line transcription of the
  paper, used for parameters with very large numerators or denominators.

Speed (measured on a 2-core container, NumPy 2.4, ``size=10**6``, reproduced by
``python -m mechanisms.discrete``): discrete Laplace about 2e6 samples/s (1.7e6 for a
float scale such as 0.1); discrete Gaussian about 1.3e6 samples/s for a small-denominator
sigma^2 and 0.7-1e5 samples/s when sigma^2 is the exact square of a float sigma such as
3.7 (denominators of 100+ bits are handled in Python integers inside NumPy object
arrays).  A single draw (``size=None``) costs some tens of microseconds: batch where you
can.  Scales whose numerator exceeds 2**61 fall back to the scalar path (~5e3 samples/s).

Parameters are accepted as ``int``, :class:`fractions.Fraction` (or any
:class:`numbers.Rational`, e.g. a sympy ``Rational``), a decimal string such as
``"0.1"`` (exactly one tenth) or a ``float`` (converted exactly with
``Fraction(x)``, so ``0.1`` means the binary double nearest to one tenth).
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction
from typing import TypeAlias

import mpmath
import numpy as np

__all__ = [
    "MAX_GAUSSIAN_SIGMA_SQUARED",
    "MAX_LAPLACE_SCALE",
    "RationalLike",
    "as_fraction",
    "discrete_gaussian_normalizer",
    "discrete_gaussian_pmf",
    "discrete_laplace_pmf",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]

RationalLike: TypeAlias = int | Fraction | numbers.Rational | str | float | decimal.Decimal
Size: TypeAlias = int | tuple[int, ...] | None

#: Largest admissible discrete Laplace scale.  Keeps every output inside ``int64``
#: except with probability below ``exp(-2**12)``.
MAX_LAPLACE_SCALE = Fraction(2**50)
#: Largest admissible discrete Gaussian variance parameter (sigma <= 2**50).
MAX_GAUSSIAN_SIGMA_SQUARED = Fraction(2**100)

# Integers handled by the vectorised path stay below this bound, so products of two
# of them that we form are checked against it and never overflow int64.
_FAST_LIMIT = 2**62


# --------------------------------------------------------------------------------------
# Parameter handling
# --------------------------------------------------------------------------------------


def as_fraction(value: RationalLike, name: str) -> Fraction:
    """Convert a parameter to an exact :class:`Fraction`.

    Args:
        value: An ``int``, a rational number (``Fraction``, sympy ``Rational``, NumPy
            integer), a decimal string, a ``Decimal`` or a finite ``float``; a float is
            converted exactly (``Fraction(0.1)`` is the binary double, not 1/10).
        name: Parameter name used in error messages.

    Returns:
        The exact value as a ``Fraction``.

    Raises:
        ValueError: If ``value`` is of an unsupported type (including ``bool``), a string
            that is not a number, or a non-finite float.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a rational number, got bool {value!r}")
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, (float, str, decimal.Decimal)):
        try:
            return Fraction(value)
        except (ValueError, OverflowError, decimal.InvalidOperation) as err:
            raise ValueError(f"{name} must be a finite rational number, got {value!r}") from err
    raise ValueError(
        f"{name} must be an int, Fraction, decimal string or float, "
        f"got {type(value).__name__} {value!r}"
    )


def _check_range(value: Fraction, name: str, upper: Fraction, raw: object) -> None:
    if not 0 < value <= upper:
        raise ValueError(f"{name} must be in the range (0, {upper}], got {raw!r}")


def _batch_count(size: Size) -> int:
    if size is None:
        return 1
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if any(int(d) < 0 for d in shape):
        raise ValueError(f"size must have non-negative dimensions, got {size!r}")
    return math.prod(int(d) for d in shape)


def _shape_output(flat: np.ndarray, size: Size) -> int | np.ndarray:
    if size is None:
        return int(flat[0])
    return flat.reshape(size)


# --------------------------------------------------------------------------------------
# Scalar exact path (Python integers, unbounded)
# --------------------------------------------------------------------------------------


def _uniform_below(n: int, rng: np.random.Generator) -> int:
    """Uniform integer on ``{0, ..., n-1}`` for any positive Python int ``n``."""
    if n <= _FAST_LIMIT:
        return int(rng.integers(0, n))
    bits = (n - 1).bit_length()
    words = -(-bits // 32)
    while True:  # rejection sampling on ``bits`` uniform bits: exact
        chunk = rng.integers(0, 2**32, size=words, dtype=np.uint64)
        candidate = 0
        for word in chunk:
            candidate = (candidate << 32) | int(word)
        candidate >>= words * 32 - bits
        if candidate < n:
            return candidate


def _bernoulli_exp_neg_scalar(gamma: Fraction, rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-gamma)) for rational gamma >= 0, CKS 2020 Algorithm 1."""
    if gamma > 1:
        # Algorithm 1 for gamma > 1: floor(gamma) Bernoulli(exp(-1)) trials must all
        # succeed, then one Bernoulli(exp(-(gamma - floor(gamma)))).
        whole = gamma.numerator // gamma.denominator
        for _ in range(whole):
            if not _bernoulli_exp_neg_scalar(Fraction(1), rng):
                return False
        return _bernoulli_exp_neg_scalar(gamma - whole, rng)
    # Algorithm 1 for gamma in [0, 1]: K <- 1; while Bernoulli(gamma/K): K <- K+1;
    # return [K is odd].  Bernoulli(n/d) is [U < n] with U uniform on {0..d-1}.
    k = 1
    while _uniform_below(gamma.denominator * k, rng) < gamma.numerator:
        k += 1
    return k % 2 == 1


def _discrete_laplace_scalar(t: int, s: int, rng: np.random.Generator) -> int:
    """One draw from Lap_Z(t/s) for positive integers t, s; CKS 2020 Algorithm 2."""
    while True:
        u = _uniform_below(t, rng)  # Alg. 2 line 3: U uniform on {0..t-1}
        if not _bernoulli_exp_neg_scalar(Fraction(u, t), rng):  # lines 4-5
            continue
        v = 0  # lines 6-9: V ~ Geometric(1 - exp(-1)) via Bernoulli(exp(-1))
        while _bernoulli_exp_neg_scalar(Fraction(1), rng):
            v += 1
        x = u + t * v  # line 10: X ~ Geometric(1 - exp(-1/t))
        y = x // s  # line 11
        b = _uniform_below(2, rng)  # line 12: B ~ Bernoulli(1/2)
        if b == 1 and y == 0:  # line 13: reject -0
            continue
        return (1 - 2 * b) * y  # line 14


def _gaussian_laplace_parameter(sigma_squared: Fraction) -> int:
    """t = floor(sigma) + 1 of CKS 2020 Algorithm 3, line 1, in integer arithmetic."""
    # floor(sqrt(p/q)) == isqrt(p // q) because k^2 <= p/q iff k^2 <= floor(p/q).
    return math.isqrt(sigma_squared.numerator // sigma_squared.denominator) + 1


def _discrete_gaussian_scalar(sigma_squared: Fraction, rng: np.random.Generator) -> int:
    """One draw from N_Z(0, sigma^2); CKS 2020 Algorithm 3 (reference for tests)."""
    t = _gaussian_laplace_parameter(sigma_squared)  # line 1
    while True:
        y = _discrete_laplace_scalar(t, 1, rng)  # line 3: Y ~ Lap_Z(t)
        gamma = (abs(y) - sigma_squared / t) ** 2 / (2 * sigma_squared)  # line 4
        if _bernoulli_exp_neg_scalar(gamma, rng):  # lines 4-6
            return y


# --------------------------------------------------------------------------------------
# Vectorised exact path (NumPy arrays; int64 where values fit, Python ints otherwise)
# --------------------------------------------------------------------------------------


def _bernoulli_fraction_batch(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Elementwise Bernoulli(num/den), i.e. [U < num] with U uniform on {0..den-1}.

    ``num`` holds integers in [0, den] (int64, or Python ints in an object array);
    ``den`` is any positive Python int.  For den > 2**62, U is drawn by rejection from
    ``{0, ..., (d_hi + 1) * 2**r - 1}`` where ``d_hi = den >> r`` has 62 bits: its top
    part ``h`` (uniform on {0..d_hi}) decides the comparison unless ``h`` equals the top
    part of ``num`` or of ``den``; only those elements (probability about 2**-60 each)
    draw their low ``r`` bits, in Python integers.  The outcome is exact.
    """
    if den <= _FAST_LIMIT:
        return rng.integers(0, den, size=num.size) < num.astype(np.int64)
    r = den.bit_length() - 62
    d_hi = den >> r
    num_hi = (num >> r).astype(np.int64)
    h = rng.integers(0, d_hi + 1, size=num.size)
    result = h < num_hi
    for i in np.flatnonzero((h == num_hi) | (h == d_hi)):
        u = (int(h[i]) << r) + _uniform_below(1 << r, rng)
        if u >= den:  # rejected: the element restarts its rejection sampler afresh
            u = _uniform_below(den, rng)
        result[i] = u < int(num[i])
    return result


def _bernoulli_ratio_batch(
    num: np.ndarray, den: int, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Elementwise Bernoulli(num / (k * den)) for 0 <= num <= den and k >= 1."""
    if k * den <= _FAST_LIMIT:
        return _bernoulli_fraction_batch(num, k * den, rng)
    # Bernoulli(a*b) is the AND of independent Bernoulli(a) and Bernoulli(b).
    return (rng.integers(0, k, size=num.size) == 0) & _bernoulli_fraction_batch(num, den, rng)


def _bernoulli_exp_neg_unit_batch(
    num: np.ndarray, den: int, rng: np.random.Generator
) -> np.ndarray:
    """Elementwise Bernoulli(exp(-num/den)) for 0 <= num <= den; CKS 2020 Alg. 1.

    All elements start with K = 1 and advance together, so K is one scalar per round.
    """
    result = np.empty(num.size, dtype=bool)
    active = np.arange(num.size)
    k = 1
    while active.size:
        # Algorithm 1: A ~ Bernoulli(gamma / K); stop at A = 0 and return [K odd].
        a = _bernoulli_ratio_batch(num[active], den, k, rng)
        result[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return result


def _exp_neg_one_run_batch(
    n: int, rng: np.random.Generator, cap: np.ndarray | None = None
) -> np.ndarray:
    """Number of successes before the first failure of i.i.d. Bernoulli(exp(-1)).

    This is V of CKS 2020 Algorithm 2 (lines 6-9).  With ``cap``, element i stops
    after ``cap[i]`` successes, which is the first loop of Algorithm 1 for
    gamma > 1: all floor(gamma) trials succeed iff the run reaches ``floor(gamma)``.
    """
    runs = np.zeros(n, dtype=np.int64)
    active = np.arange(n) if cap is None else np.flatnonzero(cap > 0)
    ones = np.ones(n, dtype=np.int64)
    while active.size:
        success = _bernoulli_exp_neg_unit_batch(ones[: active.size], 1, rng)
        active = active[success]
        runs[active] += 1
        if cap is not None:
            active = active[runs[active] < cap[active]]
    return runs


def _bernoulli_exp_neg_batch(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Elementwise Bernoulli(exp(-num/den)) for integers num >= 0; CKS 2020 Alg. 1.

    ``num`` is int64 or an object array of Python ints; ``den`` any positive int.
    """
    whole, frac = num // den, num % den
    result = np.zeros(num.size, dtype=bool)
    # floor(gamma) beyond 2**62 trials: finish in Python ints (fails at once in practice).
    huge = whole > _FAST_LIMIT
    for i in np.flatnonzero(huge):
        result[i] = _bernoulli_exp_neg_scalar(Fraction(int(num[i]), den), rng)
    rest = np.flatnonzero(~huge)
    whole = whole[rest].astype(np.int64)
    passed = rest[_exp_neg_one_run_batch(rest.size, rng, cap=whole) >= whole]
    result[passed] = _bernoulli_exp_neg_unit_batch(frac[passed], den, rng)
    return result


def _discrete_laplace_batch(t: int, s: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from Lap_Z(t/s); CKS 2020 Algorithm 2, vectorised by rejection rounds."""
    if t >= _FAST_LIMIT // 2:
        return np.array([_discrete_laplace_scalar(t, s, rng) for _ in range(n)], dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    # V above this bound would make U + t*V exceed 2**62: use Python ints for X.
    v_bound = (_FAST_LIMIT - t) // t
    while filled < n:
        m = n - filled
        draws = m + m // 2 + 16  # acceptance of one round is about 0.63 or more
        u = rng.integers(0, t, size=draws)  # Alg. 2 line 3
        u = u[_bernoulli_exp_neg_unit_batch(u, t, rng)]  # lines 4-5
        v = _exp_neg_one_run_batch(u.size, rng)  # lines 6-9
        if s < _FAST_LIMIT and v.max(initial=0) <= v_bound:
            y = (u + t * v) // s  # lines 10-11
        else:
            x = u.astype(object) + t * v.astype(object)
            y = (x // s).astype(np.int64)
        b = rng.integers(0, 2, size=u.size)  # line 12
        keep = ~((b == 1) & (y == 0))  # line 13
        z = ((1 - 2 * b) * y)[keep]  # line 14
        take = min(z.size, m)
        out[filled : filled + take] = z[:take]
        filled += take
    return out


def _discrete_gaussian_batch(
    sigma_squared: Fraction, n: int, rng: np.random.Generator
) -> np.ndarray:
    """n draws from N_Z(0, sigma^2); CKS 2020 Algorithm 3, vectorised."""
    p, q = sigma_squared.numerator, sigma_squared.denominator
    t = _gaussian_laplace_parameter(sigma_squared)  # line 1
    # Line 5: gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2) = (|Y| q t - p)^2 / (2 p q t^2).
    den = 2 * p * q * t * t
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = n - filled
        draws = m + m // 2 + 16  # acceptance is at least about 0.6 (CKS 2020, Sec. 5)
        y = _discrete_laplace_batch(t, 1, draws, rng)  # line 3: Y ~ Lap_Z(t)
        absy = np.abs(y)
        if (int(absy.max()) * q * t + p) ** 2 <= _FAST_LIMIT:
            num = (absy * (q * t) - p) ** 2
        else:
            num = (absy.astype(object) * (q * t) - p) ** 2
        z = y[_bernoulli_exp_neg_batch(num, den, rng)]  # lines 4-6
        take = min(z.size, m)
        out[filled : filled + take] = z[:take]
        filled += take
    return out


# --------------------------------------------------------------------------------------
# Public samplers
# --------------------------------------------------------------------------------------


def sample_bernoulli_exp(
    gamma: RationalLike, rng: np.random.Generator, size: Size = None
) -> bool | np.ndarray:
    """Exact Bernoulli(exp(-gamma)) draws, CKS 2020 Algorithm 1.

    Args:
        gamma: Rational gamma >= 0 (int, Fraction, decimal string or float, exact).
        rng: Source of randomness; only ``rng.integers`` is used.
        size: ``None`` for one ``bool``, or an int / shape for a bool array.

    Returns:
        ``True`` with probability exactly ``exp(-gamma)``; a bool or bool ndarray.

    Raises:
        ValueError: If gamma is negative or not a finite rational number.
    """
    g = as_fraction(gamma, "gamma")
    if g < 0:
        raise ValueError(f"gamma must be in the range [0, inf), got {gamma!r}")
    n = _batch_count(size)
    dtype = np.int64 if g.numerator <= _FAST_LIMIT else object
    flat = _bernoulli_exp_neg_batch(np.full(n, g.numerator, dtype=dtype), g.denominator, rng)
    if size is None:
        return bool(flat[0])
    return flat.reshape(size)


def sample_discrete_laplace(
    scale: RationalLike, rng: np.random.Generator, size: Size = None
) -> int | np.ndarray:
    """Exact draws from the discrete Laplace distribution, CKS 2020 Algorithm 2.

    ``P(X = x) = (1 - e^{-1/t}) / (1 + e^{-1/t}) * e^{-|x|/t}`` for every integer x,
    where ``t = scale``.

    Privacy: adding one draw to an integer query of sensitivity Delta gives
    (Delta/scale)-DP (pure DP), exactly, since no floating point is involved.

    Args:
        scale: Rational scale t with 0 < t <= 2**50 (int, Fraction, decimal string,
            or float converted exactly).
        rng: Source of randomness; only ``rng.integers`` is used.
        size: ``None`` for one Python ``int``, or an int / shape for an int64 array.

    Returns:
        An ``int`` if ``size`` is None, else an ``int64`` ndarray of shape ``size``.

    Raises:
        ValueError: If scale is outside (0, 2**50] or not a finite rational number.
    """
    t = as_fraction(scale, "scale")
    _check_range(t, "scale", MAX_LAPLACE_SCALE, scale)
    n = _batch_count(size)
    flat = _discrete_laplace_batch(t.numerator, t.denominator, n, rng)
    return _shape_output(flat, size)


def sample_discrete_gaussian(
    sigma_squared: RationalLike, rng: np.random.Generator, size: Size = None
) -> int | np.ndarray:
    """Exact draws from the discrete Gaussian N_Z(0, sigma^2), CKS 2020 Algorithm 3.

    ``P(X = x) = exp(-x^2 / (2 sigma^2)) / sum_y exp(-y^2 / (2 sigma^2))``.

    Privacy: adding one draw to an integer query of sensitivity Delta gives
    (Delta^2 / (2 sigma^2))-zCDP (CKS 2020, Theorem 4), exactly.

    Args:
        sigma_squared: Rational variance parameter with 0 < sigma^2 <= 2**100 (int,
            Fraction, decimal string, or float converted exactly).  Note that the
            parameter is sigma squared, which is rational even when sigma is not.
        rng: Source of randomness; only ``rng.integers`` is used.
        size: ``None`` for one Python ``int``, or an int / shape for an int64 array.

    Returns:
        An ``int`` if ``size`` is None, else an ``int64`` ndarray of shape ``size``.

    Raises:
        ValueError: If sigma_squared is outside (0, 2**100] or not a finite rational.
    """
    s2 = as_fraction(sigma_squared, "sigma_squared")
    _check_range(s2, "sigma_squared", MAX_GAUSSIAN_SIGMA_SQUARED, sigma_squared)
    n = _batch_count(size)
    flat = _discrete_gaussian_batch(s2, n, rng)
    return _shape_output(flat, size)


# --------------------------------------------------------------------------------------
# Exact probability mass functions (arbitrary precision, for tests and auditors)
# --------------------------------------------------------------------------------------


def _mp_fraction(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def discrete_laplace_pmf(x: int, scale: RationalLike, dps: int = 50) -> mpmath.mpf:
    """P(X = x) for X ~ Lap_Z(scale), to ``dps`` significant decimal digits.

    Args:
        x: Integer point.
        scale: Rational scale t > 0.
        dps: Working precision in decimal digits.

    Returns:
        ``tanh(1/(2t)) * exp(-|x|/t)`` as an mpmath number.

    Raises:
        ValueError: If scale is not positive.
    """
    t = as_fraction(scale, "scale")
    _check_range(t, "scale", MAX_LAPLACE_SCALE, scale)
    with mpmath.workdps(dps):
        inv = 1 / _mp_fraction(t)
        # (1 - e^{-1/t}) / (1 + e^{-1/t}) = tanh(1/(2t)), cancellation-free.
        return +(mpmath.tanh(inv / 2) * mpmath.exp(-abs(int(x)) * inv))


def discrete_gaussian_normalizer(sigma_squared: RationalLike, dps: int = 50) -> mpmath.mpf:
    """sum_{y in Z} exp(-y^2 / (2 sigma^2)), to ``dps`` significant digits.

    Uses the Jacobi theta function and, for sigma^2 >= 1, its Poisson-summation form
    ``sqrt(2 pi sigma^2) * theta_3(0, exp(-2 pi^2 sigma^2))``, which converges fast.

    Args:
        sigma_squared: Rational sigma^2 > 0.
        dps: Working precision in decimal digits.

    Returns:
        The normalising constant as an mpmath number.

    Raises:
        ValueError: If sigma_squared is not positive.
    """
    s2 = as_fraction(sigma_squared, "sigma_squared")
    _check_range(s2, "sigma_squared", MAX_GAUSSIAN_SIGMA_SQUARED, sigma_squared)
    with mpmath.workdps(dps + 10):
        v = _mp_fraction(s2)
        if s2 >= 1:
            total = mpmath.sqrt(2 * mpmath.pi * v) * mpmath.jtheta(
                3, 0, mpmath.exp(-2 * mpmath.pi**2 * v)
            )
        else:
            total = mpmath.jtheta(3, 0, mpmath.exp(-1 / (2 * v)))
    with mpmath.workdps(dps):
        return +total


def discrete_gaussian_pmf(x: int, sigma_squared: RationalLike, dps: int = 50) -> mpmath.mpf:
    """P(X = x) for X ~ N_Z(0, sigma^2), to ``dps`` significant decimal digits.

    Args:
        x: Integer point.
        sigma_squared: Rational sigma^2 > 0.
        dps: Working precision in decimal digits.

    Returns:
        ``exp(-x^2 / (2 sigma^2)) / normalizer`` as an mpmath number.

    Raises:
        ValueError: If sigma_squared is not positive.
    """
    s2 = as_fraction(sigma_squared, "sigma_squared")
    norm = discrete_gaussian_normalizer(s2, dps)
    with mpmath.workdps(dps + 10):
        value = mpmath.exp(-(mpmath.mpf(int(x)) ** 2) / (2 * _mp_fraction(s2))) / norm
    with mpmath.workdps(dps):
        return +value


def _benchmark() -> None:  # pragma: no cover - manual speed check
    import time

    rng = np.random.default_rng(0)
    for label, fn, param in [
        ("discrete Laplace, scale 10", sample_discrete_laplace, 10),
        ("discrete Laplace, scale 0.1 (float)", sample_discrete_laplace, 0.1),
        ("discrete Gaussian, sigma^2 100", sample_discrete_gaussian, 100),
        ("discrete Gaussian, sigma^2 1/3", sample_discrete_gaussian, Fraction(1, 3)),
        ("discrete Gaussian, sigma 3.7 (float)", sample_discrete_gaussian, Fraction(3.7) ** 2),
    ]:
        start = time.perf_counter()
        fn(param, rng, size=10**6)
        rate = 10**6 / (time.perf_counter() - start)
        print(f"{label:40s} {rate:12.3g} samples/s")


if __name__ == "__main__":  # pragma: no cover
    _benchmark()
