"""FFT convolution of measures on an integer grid, with rigorous bounds on every error.

Everything here works on non-negative measures given as a float64 vector of masses at
consecutive integer indices ``offset, offset + 1, ...``.  Three kinds of error arise and all
three are bounded, never ignored:

* **Rounding in the FFT.**  For a transform of length ``N`` whose factors are 2, 3 and 5
  (the only lengths used here) each output of the forward transform of ``x`` is within
  ``gamma(N) * ||x||_1`` of the exact DFT, with ``gamma(N) = 8 ceil(log2 N) u`` and ``u = 2**-53``
  (componentwise form of Higham 2002, Theorem 24.2: every butterfly stage of radix r <= 5
  adds at most ``(r + 3) u`` times the l1 norm of its inputs, and the partial sums of a stage
  never exceed ``||x||_1``).  Powers in the frequency domain are taken in polar form, where the
  error of ``z**k`` is bounded by ``k |z|**(k-1) |dz| + 4 k pi u |z|**k``.  The total l1 error of
  the output vector is at most the *l2* norm of these spectral bounds (over the full,
  Hermitian spectrum) plus the inverse transform's ``gamma(N) * sum |Y_j|``: the exact inverse
  DFT ``(1/N) F*`` maps a spectral error ``d`` to an output error of l2 norm
  ``||d||_2 / sqrt(N)`` (Parseval), whose l1 norm over N points is at most ``sqrt(N)`` times
  that.  (Summing the spectral bounds instead, as before, counted every low frequency in full
  and made the rounding term about a third of delta at 1e-10: issue 19 part 3.)
  The transforms are numpy's (``numpy.fft``, pocketfft for lengths of factors 2, 3, 5), which
  gives bit-for-bit the output of ``scipy.fft`` on those lengths (tests/pld/test_fft_backend.py)
  without scipy's ~0.8 s import (start-up, issue 19 part 4).
* **Aliasing (wrap-around).**  A circular convolution of length ``N`` folds the mass outside
  the chosen window back into it.  The window is chosen from Chernoff bounds on the k-fold
  sum, ``mass(S_k >= x) <= M(t)**k exp(-t x)`` for every ``t > 0`` (and the mirror for the lower
  tail), so the folded mass is at most the sum of the two tail bounds returned.
* **Representation.**  Masses are non-negative in exact arithmetic; negative rounding noise
  is clipped to zero, which never increases the distance to the exact vector.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "MAX_FFT_LENGTH",
    "UNIT_ROUNDOFF",
    "chernoff_window",
    "chernoff_window_tilt",
    "convolve",
    "convolve_many",
    "convolve_many_bins",
    "fast_length",
    "gamma_fft",
    "lattice_stride",
    "self_convolve",
    "self_convolve_bins",
]

#: Unit roundoff of IEEE double precision.
UNIT_ROUNDOFF = 2.0**-53

#: The spacing of the subnormal doubles (the smallest positive double): a rounded product
#: is within ``UNIT_ROUNDOFF * |x| + UNDERFLOW / 2`` of the exact one, the absolute term for
#: results that underflow (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
#: Theorem 2.3 and eq. (2.8)); sums and differences of doubles that underflow are exact
#: (Hauser 1996, Theorem 3.4.1).  A relative error bound alone does not cover tiny masses.
UNDERFLOW = 2.0**-1074

#: The longest transform this module will allocate (2**26 doubles = 512 MiB of complex).
MAX_FFT_LENGTH = 2**26


def gamma_fft(n: int) -> float:
    """The componentwise relative error constant of a length-``n`` FFT (see module doc)."""
    return 8.0 * math.ceil(math.log2(max(n, 2))) * UNIT_ROUNDOFF


@functools.lru_cache(maxsize=1024)
def fast_length(n: int) -> int:
    """The smallest integer ``>= n`` whose only prime factors are 2, 3 and 5.

    Raises:
        ValueError: if that length exceeds :data:`MAX_FFT_LENGTH`.
    """
    if n > MAX_FFT_LENGTH:
        raise ValueError(
            f"privacy loss distribution: the composed support needs {n} grid points, more than "
            f"the maximum {MAX_FFT_LENGTH}; use a coarser value_discretization (grid step)"
        )
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def _cumulants(
    logm: np.ndarray, idx: np.ndarray, t: float, mags: tuple[float, float] | None = None
) -> tuple[float, float, float, float]:
    """``(K, K', K'', err)`` for ``K(t) = log sum_i exp(logm_i + t idx_i)``: the log moment
    generating function, its first two derivatives (floats: used only to steer the search),
    and a rigorous bound ``err`` on ``|fl(K) - K|``.

    The bound: each exponent ``a_i - top`` carries an absolute error of at most
    ``6u (max |logm| + |t| max |idx|)`` (the rounded log of the mass, the product, the sum and
    the subtraction of ``top``, each at most u times a magnitude below twice that maximum;
    ``log``/``exp`` accurate to one ulp), which moves ``exp(a_i - top)`` by that relative amount
    plus ``u`` (``exp`` itself); a sum of n positive terms adds at most ``n u`` relative error,
    and ``top + log(s)`` adds ``u (|K| + |top|)`` and one ulp.  ``mags`` is ``(max |logm|,
    max |idx|)`` when the caller has it (it is the same at every t).
    """
    a = logm + t * idx
    top = float(np.max(a))
    with np.errstate(under="ignore"):
        w = np.exp(a - top)
    s0 = float(np.sum(w))
    # elementwise products and sums (a BLAS dot product here is slower on a loaded machine)
    mean = float(np.sum(w * idx)) / s0
    var = max(0.0, float(np.sum(w * (idx - mean) ** 2)) / s0)
    k = top + math.log(s0)
    if mags is None:
        mags = float(np.max(np.abs(logm))), float(np.max(np.abs(idx)))
    arg = 6 * UNIT_ROUNDOFF * (mags[0] + abs(t) * mags[1])
    rel = arg + (len(w) + 4) * UNIT_ROUNDOFF
    err = (rel / (1 - rel) + 2 * UNIT_ROUNDOFF * (abs(k) + abs(top) + 1)) * (1 + 1e-6)
    return k, mean, var, err


def _chernoff_edge(
    factors: list[tuple[np.ndarray, np.ndarray, int]],
    log_tail: float,
    sign: float,
    span: float,
    variance: float | None = None,
) -> tuple[float, float, float]:
    """An upper bound on min over t > 0 of ``(sum_c count_c K_c(sign t) - log_tail) / t`` (a
    tail edge, times sign), each evaluation carrying its rigorous rounding bound, and the t
    that attains it (the Chernoff tilt of that tail, used by :mod:`dpaudit.pld.tilt`).

    Every t gives a valid Chernoff bound; the search only makes the edge tighter.  The edge is
    unimodal in t (its stationarity condition ``t K'(t) - K(t) + log_tail = 0`` has an
    increasing left side), so a safeguarded Newton iteration on that condition, started at the
    Gaussian approximation ``t = sqrt(-2 log_tail / Var)``, converges in a few steps; it stops
    once a step moves t by less than 3%: the edge is stationary there, so such a step moves it
    by a second-order amount (a window a few points wider at most), and a calibration's
    window searches made 30% fewer evaluations than when stopping at 0.1%.  Returns ``(edge,
    t, variance)``: the variance (K''(0), the same for both signs) starts the other edge's
    search when passed back as ``variance``.
    """
    signed = [
        (logm, sign * idx, c, (float(np.max(np.abs(logm))), float(np.max(np.abs(idx)))))
        for logm, idx, c in factors
    ]

    def evaluate(t: float) -> tuple[float, float, float, float]:
        """The rounded-up edge at t, the stationarity residual and its derivative, and the
        total variance (K'')."""
        k = dk = d2k = err = 0.0
        for logm, idx, c, mags in signed:
            kk, m1, m2, e = _cumulants(logm, idx, t, mags)
            k, dk, d2k, err = k + c * kk, dk + c * m1, d2k + c * m2, err + c * e
        edge = (k + err - log_tail) / t if t > 0 else math.inf
        return edge + 4 * UNIT_ROUNDOFF * (abs(edge) + 1), t * dk - k + log_tail, t * d2k, d2k

    lo_t, hi_t = 1e-6 / span, 60.0
    if variance is None:
        variance = evaluate(0.0)[3]
    t = math.sqrt(-2 * log_tail / variance) if variance > 0 else 1.0
    t = min(hi_t, max(lo_t, t))
    best, best_t = math.inf, t
    for _ in range(16):
        edge, phi, slope, _ = evaluate(t)
        if edge < best:
            best, best_t = edge, t
        if phi < 0:
            lo_t = t
        else:
            hi_t = t
        step = t - phi / slope if slope > 0 else math.nan
        nxt = step if lo_t < step < hi_t else math.sqrt(lo_t * hi_t)
        if abs(nxt - t) <= 3e-2 * t:
            break
        t = nxt
    return best, best_t, variance


def chernoff_window(factors: list[tuple[np.ndarray, int, int]], tail: float) -> tuple[int, int]:
    """A window ``[lo, hi]`` holding the sum of independent grid variables up to ``tail`` mass.

    Every candidate edge is a valid Chernoff bound (any t > 0 gives one); the search over t only
    makes the window narrower.

    Args:
        factors: ``(masses, offset, count)`` triples: ``count`` independent copies of the
            measure ``masses`` placed at indices ``offset + i``.
        tail: the admissible mass (of the product measure) above ``hi`` and below ``lo``, each.

    Returns:
        ``(lo, hi)`` integer indices with ``mass(S > hi) <= tail`` and ``mass(S < lo) <= tail``.
    """
    lo, hi, _ = chernoff_window_tilt(factors, tail)
    return lo, hi


def chernoff_window_tilt(
    factors: list[tuple[np.ndarray, int, int]], tail: float, log_tail: float | None = None
) -> tuple[int, int, float]:
    """:func:`chernoff_window` and the tilt of its upper edge: ``(lo, hi, t)`` where ``t > 0``
    certifies ``sum_c count_c K_c(t) <= log(tail) + t hi`` (the Chernoff bound behind ``hi``,
    rounding included), ``t = 0.0`` means that ``hi`` is the top of the support (no mass above
    it), and ``t = nan`` that neither holds.  :mod:`dpaudit.pld.tilt` bounds tilted tails
    with it.  ``log_tail`` (at most ``log(tail)``), when given, is the log of the tail mass
    per side instead (a tail below the smallest double)."""
    support_lo = sum(off * c for _, off, c in factors)
    support_hi = sum((off + len(m) - 1) * c for m, off, c in factors)
    if tail <= 0:
        return support_lo, support_hi, 0.0
    span = max(1, support_hi - support_lo)
    prepared = []
    for masses, off, count in factors:
        nz = np.nonzero(masses > 0)[0]
        if nz.size and count:
            prepared.append((np.log(masses[nz]), (nz + off).astype(np.float64), count))
    if not prepared:
        return support_lo, support_hi, 0.0
    log_tail = math.log(tail) if log_tail is None else min(log_tail, math.log(tail))
    margin = 1e-9 * span + 2
    edge, t_hi, variance = _chernoff_edge(prepared, log_tail, 1.0, span)
    hi = min(support_hi, math.ceil(edge + margin))
    low_edge = _chernoff_edge(prepared, log_tail, -1.0, span, variance)[0]
    lo = max(support_lo, math.floor(-low_edge - margin))
    if hi == support_hi:
        t_hi = 0.0
    elif not (math.isfinite(edge) and t_hi > 0):
        t_hi = math.nan
    if lo > hi:
        lo, hi, t_hi = hi, lo, math.nan
    return lo, hi, t_hi


def _from_index(out: np.ndarray, shift: int) -> np.ndarray:
    """``out`` rotated to start at index ``shift`` (``np.roll(out, -shift)``), negative entries
    set to 0 (the exact convolution is non-negative, so this moves each entry towards it), in
    one pass."""
    result = np.empty_like(out)
    cut = len(out) - shift
    np.maximum(out[shift:], 0.0, out=result[:cut])
    np.maximum(out[:shift], 0.0, out=result[cut:])
    return result


def _l2(w: np.ndarray, bound: np.ndarray, extra_sq: float = 0.0) -> float:
    """The l2 norm of a full spectrum's error bounds given on the half spectrum with weights
    ``w`` (plus ``extra_sq``, squared bounds of frequencies kept apart), rounded up: the l1
    bound of the exact inverse transform's output error (see the module doc)."""
    with np.errstate(under="ignore"):
        total = float(np.sum(w * bound * bound)) + extra_sq
    return math.sqrt(total) * (1 + 1e-9) + 1e-300


def _spectrum_bound(r: np.ndarray, n: int) -> np.ndarray:
    """Weights to sum a half spectrum from ``rfft`` as if it were the full spectrum."""
    w = np.full(r.shape, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def lattice_stride(masses: np.ndarray) -> tuple[int, int]:
    """``(first, g)``: every non-zero entry of ``masses`` is at ``first + g i`` (g = 1 when the
    support has fewer than two points)."""
    nz = np.nonzero(masses)[0]
    if nz.size < 2:
        return (int(nz[0]) if nz.size else 0), 1
    return int(nz[0]), int(np.gcd.reduce(nz[1:] - nz[0]))


def self_convolve(
    masses: np.ndarray,
    offset: int,
    count: int,
    window: tuple[int, int],
    stride: tuple[int, int] | None = None,
) -> tuple[np.ndarray, int, float]:
    """The ``count``-fold convolution power of a measure, restricted to a window (see
    :func:`self_convolve_bins`, without its per-entry bound)."""
    out, lo, l1, _ = self_convolve_bins(masses, offset, count, window, stride)
    return out, lo, l1


def self_convolve_bins(
    masses: np.ndarray,
    offset: int,
    count: int,
    window: tuple[int, int],
    stride: tuple[int, int] | None = None,
) -> tuple[np.ndarray, int, float, float]:
    """The ``count``-fold convolution power of a measure, restricted to a window.

    Args:
        masses: non-negative masses at indices ``offset + i``.
        offset: index of ``masses[0]``.
        count: the power k >= 1.
        window: ``(lo, hi)``; the result covers indices ``lo .. lo + len - 1`` (at least up to hi).

    Returns:
        ``(result, lo, l1_error, bin_error)``: ``l1_error`` bounds the l1 distance between
        ``result`` and the exact k-fold convolution folded (aliased) into the window; the caller
        adds the mass outside the window (its Chernoff bounds) to obtain the distance to the
        exact, unfolded convolution restricted to the window.  ``bin_error`` bounds the error
        of each entry (l_inf): the exact inverse DFT ``(1/N) F*`` maps a spectral error ``d``
        to entries of modulus at most ``||d||_1 / N`` (each is an average of N terms of modulus
        ``|d_i|``), and the inverse transform's rounding is ``gamma(N) ||Y||_1 / N`` per entry
        (the componentwise bound of the module doc, scaled by 1/N).

    A measure on a sub-lattice ``first + g Z`` (``stride = lattice_stride(masses)``, e.g. the
    atoms of randomized response on a fine grid) is convolved on that lattice, which is the
    same convolution on ``g`` times fewer points; the result is spread back onto the grid.
    """
    if count == 1:
        lo = offset
        return masses.copy(), lo, 0.0, 0.0
    if stride is not None and stride[1] > 1:
        first, g = stride
        base = count * (offset + first)
        lo_c = -((base - window[0]) // g)  # ceil((lo - base) / g)
        hi_c = max(lo_c, (window[1] - base) // g)
        dense, start, l1, linf = self_convolve_bins(masses[first::g], 0, count, (lo_c, hi_c))
        out = np.zeros((len(dense) - 1) * g + 1)
        out[::g] = dense
        return out, base + g * start, l1, linf
    lo, hi = window
    n = fast_length(max(hi - lo + 1, len(masses)))
    gamma = gamma_fft(n)
    norm1 = float(np.sum(masses)) * (1 + 1e-12)
    spec = np.fft.rfft(masses, n)
    e1 = gamma * norm1
    w = _spectrum_bound(spec, n)
    r = np.abs(spec)
    rb = r + e1
    # frequencies with rb^count < e^-680 contribute nothing a float can hold: their power is
    # set to 0.  Each then has error at most rb^(count-1) (count e1 + (4 count pi + 4) u + 1
    # + gamma) (the terms below plus the dropped power itself, using rb < 1), and
    # rb^(count-1) <= e^{-680 (count-1)/count}: ``dropped`` bounds their total.  The test
    # ``count log(rb) > -680`` is made only where rb is within 1e-9 (relative) of its
    # threshold or above: below, it fails by far more than the rounding of log and product
    # (the same frequencies are kept; a long composition keeps a few hundred of 28,000)
    near = np.flatnonzero(rb >= math.exp(-680.0 / count) * (1 - 1e-9))
    with np.errstate(divide="ignore"):
        log_near = np.log(rb[near])
    passed = count * log_near > -680.0
    kept, log_rb = near[passed], log_near[passed]
    per = math.exp(-680.0 * (count - 1) / count) * (1 + 1e-6)
    per_dropped = per * (count * e1 + (4 * count * math.pi + 4) * UNIT_ROUNDOFF + 1 + gamma)
    r, rb, w_k = r[kept], rb[kept], w[kept]
    # the weights are 1 and 2: both sums are exact
    dropped_w = float(np.sum(w)) - float(np.sum(w_k))
    dropped_sq = dropped_w * per_dropped**2
    theta = np.angle(spec[kept])
    with np.errstate(under="ignore"):
        rb_km1 = np.exp((count - 1) * log_rb)
        mod = r**count
    out_spec = np.zeros(len(spec), dtype=complex)
    out_spec[kept] = mod * np.exp(1j * np.remainder(count * theta, 2 * math.pi))
    err_spec = count * rb_km1 * e1 + (4 * count * math.pi + 4) * UNIT_ROUNDOFF * rb_km1 * rb
    inverse = gamma * float(np.sum(w_k * rb_km1 * rb))
    l1 = _l2(w_k, err_spec, dropped_sq) + inverse
    spread = float(np.sum(w_k * err_spec)) + dropped_w * per_dropped
    linf = (spread + inverse) / n * (1 + 1e-9) + 1e-300
    out = np.fft.irfft(out_spec, n)
    # position p of out holds the (aliased) mass of index count*offset + p (mod n)
    out = _from_index(out, (lo - count * offset) % n)
    return out, lo, l1 * (1 + 1e-6), linf * (1 + 1e-6)


def convolve(
    a: np.ndarray, a_off: int, b: np.ndarray, b_off: int, window: tuple[int, int]
) -> tuple[np.ndarray, int, float]:
    """The convolution of two measures restricted to (and aliased into) a window.

    Args:
        a: non-negative masses at indices ``a_off + i``.
        a_off: index of ``a[0]``.
        b: non-negative masses at indices ``b_off + i``.
        b_off: index of ``b[0]``.
        window: ``(lo, hi)`` of the result.

    Returns:
        ``(result, lo, l1_error)`` as for :func:`self_convolve`.
    """
    lo, hi = window
    full = len(a) + len(b) - 1
    if full <= 64 or min(len(a), len(b)) <= 8:
        out = np.convolve(a, b)
        # direct summation: each entry is a sum of <= min(len) non-negative products
        l1 = (min(len(a), len(b)) + 2) * UNIT_ROUNDOFF * float(np.sum(out)) * (1 + 1e-6)
        start = a_off + b_off
        lo_c, hi_c = max(lo, start), min(hi, start + full - 1)
        if lo_c > hi_c:
            return np.zeros(1), lo, l1
        return out[lo_c - start : hi_c - start + 1].copy(), lo_c, l1
    n = fast_length(max(hi - lo + 1, len(a), len(b)))
    gamma = gamma_fft(n)
    fa = np.fft.rfft(a, n)
    fb = np.fft.rfft(b, n)
    ea = gamma * float(np.sum(a)) * (1 + 1e-12)
    eb = gamma * float(np.sum(b)) * (1 + 1e-12)
    ra, rb = np.abs(fa) + ea, np.abs(fb) + eb
    prod = fa * fb
    w = _spectrum_bound(ra, n)
    err_spec = ea * rb + eb * ra + 4 * UNIT_ROUNDOFF * ra * rb
    l1 = _l2(w, err_spec) + gamma * float(np.sum(w * ra * rb))
    out = np.fft.irfft(prod, n)
    out = _from_index(out, (lo - (a_off + b_off)) % n)
    return out, lo, l1 * (1 + 1e-6)


def convolve_many(
    measures: list[tuple[np.ndarray, int]], window: tuple[int, int]
) -> tuple[np.ndarray, int, float]:
    """The convolution of several measures in one product of spectra (see
    :func:`convolve_many_bins`, without its per-entry bound)."""
    out, lo, l1, _ = convolve_many_bins(measures, window)
    return out, lo, l1


def convolve_many_bins(
    measures: list[tuple[np.ndarray, int]], window: tuple[int, int]
) -> tuple[np.ndarray, int, float, float]:
    """The convolution of several measures restricted to (and aliased into) one window, by one
    product of spectra: the window is that of the *final* sum, so no intermediate window is
    searched and no intermediate tail is cut (the composition of N distinct measures costs N
    transforms, not N Chernoff searches over a growing accumulated measure).

    Error: with ``f_i`` the computed transforms, ``e_i = gamma(N) ||x_i||_1`` their bounds and
    ``r_i = |f_i| + e_i``, telescoping gives ``|prod f_i - prod F_i| <= sum_i e_i prod_{j != i}
    r_j = R sum_i e_i / r_i`` with ``R = prod r_j``; the N - 1 complex products add at most
    ``4 (N - 1) u R``, and the inverse transform ``gamma(N) sum R`` (as in :func:`convolve`).
    ``R`` is accumulated in logarithms; where it underflows, each frequency's contribution is
    below ``2 N 2^-1000``, which is added for every frequency.

    Args:
        measures: ``(masses, offset)`` pairs: non-negative masses at indices ``offset + i``.
        window: ``(lo, hi)`` of the result.

    Returns:
        ``(result, lo, l1_error, bin_error)`` as for :func:`self_convolve_bins`.
    """
    lo, hi = window
    n = fast_length(max(hi - lo + 1, *(len(m) for m, _ in measures)))
    gamma = gamma_fft(n)
    product: np.ndarray | None = None
    log_r = np.zeros(n // 2 + 1)
    ratio = np.zeros(n // 2 + 1)
    for masses, _ in measures:
        spec = np.fft.rfft(masses, n)
        e = gamma * float(np.sum(masses)) * (1 + 1e-12)
        r = np.abs(spec) + e
        with np.errstate(divide="ignore"):
            log_r += np.log(r)
        ratio += e / r
        product = spec if product is None else product * spec
    assert product is not None
    count = len(measures)
    w = _spectrum_bound(product, n)
    with np.errstate(under="ignore", over="ignore"):
        big_r = np.exp(log_r)
    err_spec = big_r * (ratio + 4 * (count - 1) * UNIT_ROUNDOFF)
    underflow = len(w) * 2.0 * (2 * count + 2) * 2.0**-1000
    inverse = gamma * float(np.sum(w * big_r))
    l1 = _l2(w, err_spec) + inverse + underflow
    linf = (float(np.sum(w * err_spec)) + inverse) / n * (1 + 1e-9) + underflow
    out = np.fft.irfft(product, n)
    start = sum(off for _, off in measures)
    out = _from_index(out, (lo - start) % n)
    return out, lo, l1 * (1 + 1e-6), linf * (1 + 1e-6)
