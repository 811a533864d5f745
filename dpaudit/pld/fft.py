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
  the output vector is the sum of these bounds over the spectrum plus the inverse transform's
  ``gamma(N) * sum |Y_j|``.
* **Aliasing (wrap-around).**  A circular convolution of length ``N`` folds the mass outside
  the chosen window back into it.  The window is chosen from Chernoff bounds on the k-fold
  sum, ``mass(S_k >= x) <= M(t)**k exp(-t x)`` for every ``t > 0`` (and the mirror for the lower
  tail), so the folded mass is at most the sum of the two tail bounds returned.
* **Representation.**  Masses are non-negative in exact arithmetic; negative rounding noise
  is clipped to zero, which never increases the distance to the exact vector.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft

__all__ = ["MAX_FFT_LENGTH", "UNIT_ROUNDOFF", "chernoff_window", "convolve", "fast_length",
           "gamma_fft", "lattice_stride", "self_convolve"]

#: Unit roundoff of IEEE double precision.
UNIT_ROUNDOFF = 2.0**-53

#: The longest transform this module will allocate (2**26 doubles = 512 MiB of complex).
MAX_FFT_LENGTH = 2**26


def gamma_fft(n: int) -> float:
    """The componentwise relative error constant of a length-``n`` FFT (see module doc)."""
    return 8.0 * math.ceil(math.log2(max(n, 2))) * UNIT_ROUNDOFF


def fast_length(n: int) -> int:
    """The smallest integer ``>= n`` whose only prime factors are 2, 3 and 5.

    Raises:
        ValueError: if that length exceeds :data:`MAX_FFT_LENGTH`.
    """
    if n > MAX_FFT_LENGTH:
        raise ValueError(
            f"privacy loss distribution: the composed support needs {n} grid points, more than "
            f"the maximum {MAX_FFT_LENGTH}; use a coarser value_discretization (grid step)")
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


def _log_mgf(logm: np.ndarray, idx: np.ndarray, t: float) -> float:
    """log sum_i exp(logm_i + t idx_i)."""
    a = logm + t * idx
    top = float(np.max(a))
    return top + math.log(float(np.sum(np.exp(a - top))))


def _chernoff_edge(factors: list[tuple[np.ndarray, np.ndarray, int]], log_tail: float,
                   sign: float, span: float) -> float:
    """min over t > 0 of (sum_c count_c log M_c(sign t) - log_tail) / t (a tail edge, times sign).

    Every t gives a valid bound; the search (a coarse grid, then golden sections) only makes
    the edge tighter.
    """

    def bound(log_t: float) -> float:
        t = math.exp(log_t)
        total = sum(c * _log_mgf(logm, idx, sign * t) for logm, idx, c in factors)
        return (total - log_tail) / t

    grid = np.linspace(math.log(1e-3 / span), math.log(60.0), 12)
    values = [bound(x) for x in grid]
    i = int(np.argmin(values))
    a, b = grid[max(0, i - 1)], grid[min(len(grid) - 1, i + 1)]
    best = values[i]
    invphi = (math.sqrt(5) - 1) / 2
    c, d = b - invphi * (b - a), a + invphi * (b - a)
    fc, fd = bound(c), bound(d)
    for _ in range(12):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - invphi * (b - a)
            fc = bound(c)
        else:
            a, c, fc = c, d, fd
            d = a + invphi * (b - a)
            fd = bound(d)
        best = min(best, fc, fd)
    return best


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
    support_lo = sum(off * c for _, off, c in factors)
    support_hi = sum((off + len(m) - 1) * c for m, off, c in factors)
    if tail <= 0:
        return support_lo, support_hi
    span = max(1, support_hi - support_lo)
    prepared = []
    for masses, off, count in factors:
        nz = np.nonzero(masses > 0)[0]
        if nz.size and count:
            prepared.append((np.log(masses[nz]), (nz + off).astype(np.float64), count))
    if not prepared:
        return support_lo, support_hi
    log_tail = math.log(tail)
    margin = 1e-9 * span + 2
    hi = min(support_hi, math.ceil(_chernoff_edge(prepared, log_tail, 1.0, span) + margin))
    lo = max(support_lo, math.floor(-_chernoff_edge(prepared, log_tail, -1.0, span) - margin))
    if lo > hi:
        lo, hi = hi, lo
    return lo, hi


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


def self_convolve(masses: np.ndarray, offset: int, count: int,
                  window: tuple[int, int],
                  stride: tuple[int, int] | None = None) -> tuple[np.ndarray, int, float]:
    """The ``count``-fold convolution power of a measure, restricted to a window.

    Args:
        masses: non-negative masses at indices ``offset + i``.
        offset: index of ``masses[0]``.
        count: the power k >= 1.
        window: ``(lo, hi)``; the result covers indices ``lo .. lo + len - 1`` (at least up to hi).

    Returns:
        ``(result, lo, l1_error)``: ``l1_error`` bounds the l1 distance between ``result`` and
        the exact k-fold convolution folded (aliased) into the window; the caller adds the
        mass outside the window (its Chernoff bounds) to obtain the distance to the exact,
        unfolded convolution restricted to the window.

    A measure on a sub-lattice ``first + g Z`` (``stride = lattice_stride(masses)``, e.g. the
    atoms of randomized response on a fine grid) is convolved on that lattice, which is the
    same convolution on ``g`` times fewer points; the result is spread back onto the grid.
    """
    if count == 1:
        lo = offset
        return masses.copy(), lo, 0.0
    if stride is not None and stride[1] > 1:
        first, g = stride
        base = count * (offset + first)
        lo_c = -((base - window[0]) // g)  # ceil((lo - base) / g)
        hi_c = max(lo_c, (window[1] - base) // g)
        dense, start, l1 = self_convolve(masses[first::g], 0, count, (lo_c, hi_c))
        out = np.zeros((len(dense) - 1) * g + 1)
        out[::g] = dense
        return out, base + g * start, l1
    lo, hi = window
    n = fast_length(max(hi - lo + 1, len(masses)))
    gamma = gamma_fft(n)
    norm1 = float(np.sum(masses)) * (1 + 1e-12)
    spec = scipy.fft.rfft(masses, n)
    r = np.abs(spec)
    theta = np.angle(spec)
    e1 = gamma * norm1
    rb = r + e1
    with np.errstate(under="ignore", divide="ignore"):
        mod = r**count
        rb_km1 = np.where(rb > 0, np.exp((count - 1) * np.log(rb)), 0.0)
    out_spec = mod * np.exp(1j * np.remainder(count * theta, 2 * math.pi))
    w = _spectrum_bound(r, n)
    err_spec = count * rb_km1 * e1 + (4 * count * math.pi + 4) * UNIT_ROUNDOFF * rb_km1 * rb
    l1 = float(np.sum(w * err_spec)) + gamma * float(np.sum(w * rb_km1 * rb))
    out = scipy.fft.irfft(out_spec, n)
    # position p of out holds the (aliased) mass of index count*offset + p (mod n)
    shift = (lo - count * offset) % n
    out = np.roll(out, -shift)
    np.clip(out, 0.0, None, out=out)
    return out, lo, l1 * (1 + 1e-6)


def convolve(a: np.ndarray, a_off: int, b: np.ndarray, b_off: int,
             window: tuple[int, int]) -> tuple[np.ndarray, int, float]:
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
        return out[lo_c - start: hi_c - start + 1].copy(), lo_c, l1
    n = fast_length(max(hi - lo + 1, len(a), len(b)))
    gamma = gamma_fft(n)
    fa = scipy.fft.rfft(a, n)
    fb = scipy.fft.rfft(b, n)
    ea = gamma * float(np.sum(a)) * (1 + 1e-12)
    eb = gamma * float(np.sum(b)) * (1 + 1e-12)
    ra, rb = np.abs(fa) + ea, np.abs(fb) + eb
    prod = fa * fb
    w = _spectrum_bound(ra, n)
    err_spec = ea * rb + eb * ra + 4 * UNIT_ROUNDOFF * ra * rb
    l1 = float(np.sum(w * err_spec)) + gamma * float(np.sum(w * ra * rb))
    out = scipy.fft.irfft(prod, n)
    shift = (lo - (a_off + b_off)) % n
    out = np.roll(out, -shift)
    np.clip(out, 0.0, None, out=out)
    return out, lo, l1 * (1 + 1e-6)
