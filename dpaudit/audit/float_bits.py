"""The binary representation of IEEE 754 double outputs, as features for output events.

A double ``x`` is stored as a sign bit ``s``, an 11-bit biased exponent ``E`` and a 52-bit
significand field ``m`` (IEEE 754-2008, Section 3.4): for ``0 < E < 2047`` (normal numbers)
``x = (-1)^s (1 + m 2^-52) 2^(E - 1023)``; for ``E = 0`` (zero and subnormals)
``x = (-1)^s m 2^-1074``; ``E = 2047`` holds the infinities and NaNs.

Which doubles a floating-point mechanism can output depends on its input: textbook noise
``x + Laplace(b)`` computed in doubles misses whole classes of doubles, and which classes it
misses moves with ``x`` (Mironov 2012, "On significance of the least significant bits for
differential privacy", CCS, the attack on the textbook sampler; Haney et al. 2022,
"Precision-based attacks and interval refining", PoPETs).  The features here expose those classes:

* the *binade* ``(s, E)``: the output's sign and power-of-two range;
* the *low bits*: the last ``k`` bits of the significand field ``m``;
* the *granularity*: the largest ``j`` with ``x`` an integer multiple of ``2^j`` (``x``
  lies on the lattice ``2^j Z``), from the trailing zeros of the significand.

Each *class key* below combines the binade with one of the others into one integer code per
output, so that the event search can treat the classes as outcomes (order them by likelihood
ratio on one half of the selection samples, choose a prefix on the other half). Everything is
exact integer arithmetic on the bit pattern (``numpy`` views), no float rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "EXPONENT_BIAS",
    "GRANULARITY_CAP",
    "SIGNIFICAND_BITS",
    "ClassKey",
    "binade_bounds",
    "class_keys",
    "fields",
    "granularity",
    "low_bits",
    "trailing_zeros",
]

SIGNIFICAND_BITS = 52
EXPONENT_BIAS = 1023
_EXPONENT_MASK = 0x7FF
_SIGNIFICAND_MASK = np.uint64((1 << SIGNIFICAND_BITS) - 1)
#: Trailing-zero counts above this share one class in the ``lattice`` key (for continuous
#: noise a double with 16 or more trailing zeros is rare; outputs on much coarser lattices
#: are discrete, and the outcome-set family tells them apart).
GRANULARITY_CAP = 16


def _as_doubles(x: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if arr.ndim != 1:
        raise ValueError(f"x must be a 1-D array of doubles, got shape {arr.shape}")
    return arr


def fields(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sign bit, biased exponent and significand field of each double.

    Args:
        x: 1-D array (converted to float64).

    Returns:
        ``(sign, exponent, significand)``: ``int64`` arrays with values in ``{0, 1}``,
        ``[0, 2047]`` and ``[0, 2^52)``.

    Raises:
        ValueError: if ``x`` is not 1-D.
    """
    bits = _as_doubles(x).view(np.uint64)
    sign = (bits >> np.uint64(63)).astype(np.int64)
    exponent = ((bits >> np.uint64(SIGNIFICAND_BITS)) & np.uint64(_EXPONENT_MASK)).astype(np.int64)
    significand = (bits & _SIGNIFICAND_MASK).astype(np.int64)
    return sign, exponent, significand


def low_bits(x: np.ndarray, k: int) -> np.ndarray:
    """The last ``k`` bits of each double's significand field, as integers in ``[0, 2^k)``.

    Raises:
        ValueError: if ``k`` is not an integer in [1, 52].
    """
    if not (isinstance(k, int) and 1 <= k <= SIGNIFICAND_BITS):
        raise ValueError(f"k must be an integer in [1, {SIGNIFICAND_BITS}], got {k!r}")
    return fields(x)[2] & ((1 << k) - 1)


def trailing_zeros(x: np.ndarray) -> np.ndarray:
    """Trailing zero bits of each double's significand field (52 when the field is 0)."""
    m = fields(x)[2].astype(np.uint64)
    lowest = m & (~m + np.uint64(1))  # the lowest set bit (two's complement), 0 when m == 0
    # frexp of an exact power of two 2^t is (0.5, t + 1): exact, no logarithm rounding.
    t = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1
    return np.where(m == 0, SIGNIFICAND_BITS, t)


def granularity(x: np.ndarray) -> np.ndarray:
    """The largest ``j`` with ``x`` an integer multiple of ``2^j``, for finite nonzero ``x``.

    A normal double with biased exponent ``E`` and ``t`` trailing zeros in its significand
    field is an odd multiple of ``2^(E - 1023 - 52 + t)``; a subnormal one of
    ``2^(-1074 + t)``. Zeros, infinities and NaNs get ``np.iinfo(np.int64).max`` (no such
    ``j``, or every ``j``).
    """
    _, exponent, _ = fields(x)
    t = trailing_zeros(x)
    unit = np.where(exponent == 0, 1, exponent) - EXPONENT_BIAS - SIGNIFICAND_BITS
    arr = _as_doubles(x)
    special = (arr == 0) | ~np.isfinite(arr)
    return np.where(special, np.iinfo(np.int64).max, unit + t)


def binade_bounds(sign: int, exponent: int) -> tuple[float, float]:
    """The interval ``[low, high)`` of magnitudes of a binade, signed (``high`` is exclusive in
    magnitude): e.g. ``(0, 1022)`` is ``[0.5, 1.0)`` and ``(1, 1022)`` is ``(-1.0, -0.5]``."""
    if exponent == 0:
        low, high = 0.0, 2.0**-1022
    elif exponent == _EXPONENT_MASK:
        low = high = float("inf")
    else:
        low, high = 2.0 ** (exponent - EXPONENT_BIAS), 2.0 ** (exponent - EXPONENT_BIAS + 1)
    return (-high, -low) if sign else (low, high)


@dataclass(frozen=True)
class ClassKey:
    """A partition of the doubles into classes, each a binade combined with a bit feature.

    Attributes:
        kind: ``"low-bits"`` (binade and the last ``k`` significand bits) or ``"lattice"``
            (binade and the number of trailing zero bits of the significand, capped at
            :data:`GRANULARITY_CAP`: within a binade, which lattice ``2^j Z`` the output lies on).
        k: bits kept by ``"low-bits"`` (1 to 16); ignored by ``"lattice"``.
    """

    kind: str
    k: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("low-bits", "lattice"):
            raise ValueError(f"kind must be 'low-bits' or 'lattice', got {self.kind!r}")
        if self.kind == "low-bits" and not (isinstance(self.k, int) and 1 <= self.k <= 16):
            raise ValueError(f"k must be an integer in [1, 16], got {self.k!r}")

    @property
    def width(self) -> int:
        """Number of values the bit feature takes within one binade."""
        return 1 << self.k if self.kind == "low-bits" else GRANULARITY_CAP + 1

    @property
    def size(self) -> int:
        """Number of classes: every code is in ``[0, size)`` (2 signs x 2048 exponents)."""
        return 4096 * self.width

    def codes(self, x: np.ndarray) -> np.ndarray:
        """One ``int64`` class code per double: ``(sign * 2048 + E) * width + feature``."""
        sign, exponent, significand = fields(x)
        if self.kind == "low-bits":
            feature = significand & ((1 << self.k) - 1)
        else:
            feature = np.minimum(trailing_zeros(x), GRANULARITY_CAP)
        return (sign * 2048 + exponent) * self.width + feature

    def describe_code(self, code: int) -> str:
        """One class in words, e.g. ``"[0.25, 0.5) with last significand bit 1"``."""
        binade, feature = divmod(int(code), self.width)
        sign, exponent = divmod(binade, 2048)
        low, high = binade_bounds(sign, exponent)
        where = f"({low:.4g}, {high:.4g}]" if sign else f"[{low:.4g}, {high:.4g})"
        if exponent == _EXPONENT_MASK:
            where = "-inf or NaN" if sign else "+inf or NaN"
        if self.kind == "low-bits":
            bits = format(feature, f"0{self.k}b")
            name = "bit" if self.k == 1 else f"{self.k} bits"
            return f"{where} with last significand {name} {bits}"
        if feature == GRANULARITY_CAP:
            return f"{where} with >= {feature} trailing zero bits"
        return f"{where} with {feature} trailing zero bits"

    def describe(self) -> str:
        """The partition in words."""
        if self.kind == "low-bits":
            return f"binade and last {self.k} significand bit{'s' if self.k > 1 else ''}"
        return "binade and lattice (trailing zero bits of the significand)"


def class_keys() -> tuple[ClassKey, ...]:
    """The partitions the ``bits`` event family searches (one candidate per partition and
    direction): low bits ``k = 1, 4, 8`` and the lattice key."""
    return (*(ClassKey("low-bits", k) for k in (1, 4, 8)), ClassKey("lattice"))
