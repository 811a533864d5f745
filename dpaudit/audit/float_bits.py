"""The binary representation of IEEE 754 float outputs, as features for output events.

A binary float of a format with an ``e``-bit exponent and a ``p``-bit significand field
(``binary64``: 11 and 52, ``binary32``: 8 and 23, ``binary16``: 5 and 10; bfloat16: 8 and 7)
is stored as a sign bit ``s``, a biased exponent ``E`` and a significand field ``m``
(IEEE 754-2008, Section 3.4): for ``0 < E < 2^e - 1`` (normal numbers)
``x = (-1)^s (1 + m 2^-p) 2^(E - bias)`` with ``bias = 2^(e-1) - 1``; for ``E = 0`` (zero and
subnormals) ``x = (-1)^s m 2^(1 - bias - p)``; ``E = 2^e - 1`` holds the infinities and NaNs.

Which floats a floating-point mechanism can output depends on its input: textbook noise
``x + Laplace(b)`` computed in floats misses whole classes of floats, and which classes it
misses moves with ``x`` (Mironov 2012, "On significance of the least significant bits for
differential privacy", CCS, the attack on the textbook sampler; Haney et al. 2022,
"Precision-based attacks and interval refining", PoPETs).  The features here expose those classes:

* the *binade* ``(s, E)``: the output's sign and power-of-two range;
* the *low bits*: the last ``k`` bits of the significand field ``m``;
* the *granularity*: the largest ``j`` with ``x`` an integer multiple of ``2^j`` (``x``
  lies on the lattice ``2^j Z``), from the trailing zeros of the significand.

The bits are read in the output's own format (:data:`FORMATS`; the output schema remembers
it, :mod:`dpaudit.audit.outputs`): a float32 output widened to a double has 29 trailing zero
bits in the double's significand whatever its value, so the float32 Laplace mechanism (as
torch computes it) is only caught by reading the float32's 23 bits.  Widening a float32,
float16 or bfloat16 to a double is exact, and narrowing it back gives the same bits; a
double that is not of the format is rounded to it (a deterministic function of the output,
so events over it stay valid).

Each *class key* below combines the binade with one of the others into one integer code per
output, so that the event search can treat the classes as outcomes (order them by likelihood
ratio on one half of the selection samples, choose a prefix on the other half). Everything is
exact integer arithmetic on the bit pattern (``numpy`` views), no float rounding.

Soundness: any deterministic function of the output defines a valid event; the format only
changes which events are searched, never the certification.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "EXPONENT_BIAS",
    "FORMATS",
    "GRANULARITY_CAP",
    "SIGNIFICAND_BITS",
    "ClassKey",
    "FloatFormat",
    "binade_bounds",
    "class_keys",
    "fields",
    "float_format",
    "granularity",
    "low_bits",
    "trailing_zeros",
]

#: Trailing-zero counts above this share one class in the ``lattice`` key (for continuous
#: noise a double with 16 or more trailing zeros is rare; outputs on much coarser lattices
#: are discrete, and the outcome-set family tells them apart). Formats with fewer
#: significand bits cap at their width.
GRANULARITY_CAP = 16


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: its name and field widths.

    Attributes:
        name: ``"float64"``, ``"float32"``, ``"float16"`` or ``"bfloat16"``.
        significand_bits: width ``p`` of the significand field (52, 23, 10, 7).
        exponent_bits: width ``e`` of the exponent field (11, 8, 5, 8).
    """

    name: str
    significand_bits: int
    exponent_bits: int

    @property
    def bias(self) -> int:
        """The exponent bias ``2^(e-1) - 1``."""
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def max_exponent(self) -> int:
        """The biased exponent of the infinities and NaNs, ``2^e - 1``."""
        return (1 << self.exponent_bits) - 1

    def bits(self, x: np.ndarray) -> np.ndarray:
        """The bit pattern of each value in this format, as ``uint64`` (low bits used)."""
        arr = _as_doubles(x)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.name == "float64":
                return arr.view(np.uint64)
            if self.name == "float32":
                return arr.astype(np.float32).view(np.uint32).astype(np.uint64)
            if self.name == "float16":
                return arr.astype(np.float16).view(np.uint16).astype(np.uint64)
            # bfloat16 is the upper half of a float32 (values of the format widen exactly)
            return arr.astype(np.float32).view(np.uint32).astype(np.uint64) >> np.uint64(16)


#: The formats whose bits the ``bits`` family reads (IEEE 754 binary64, binary32, binary16,
#: and bfloat16, the upper half of a binary32).
FORMATS = {
    "float64": FloatFormat("float64", 52, 11),
    "float32": FloatFormat("float32", 23, 8),
    "float16": FloatFormat("float16", 10, 5),
    "bfloat16": FloatFormat("bfloat16", 7, 8),
}
SIGNIFICAND_BITS = FORMATS["float64"].significand_bits
EXPONENT_BIAS = FORMATS["float64"].bias


def float_format(name: str) -> FloatFormat:
    """The format called ``name``.

    Raises:
        ValueError: if ``name`` is not one of :data:`FORMATS`.
    """
    if name not in FORMATS:
        raise ValueError(f"precision must be one of {sorted(FORMATS)}, got {name!r}")
    return FORMATS[name]


def _as_doubles(x: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if arr.ndim != 1:
        raise ValueError(f"x must be a 1-D array of doubles, got shape {arr.shape}")
    return arr


def fields(x: np.ndarray, fmt: str = "float64") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sign bit, biased exponent and significand field of each value in the format ``fmt``.

    Args:
        x: 1-D array (converted to float64; then to ``fmt``, exactly for values of it).
        fmt: the format's name (:data:`FORMATS`).

    Returns:
        ``(sign, exponent, significand)``: ``int64`` arrays with values in ``{0, 1}``,
        ``[0, 2^e - 1]`` and ``[0, 2^p)`` (for doubles ``[0, 2047]`` and ``[0, 2^52)``).

    Raises:
        ValueError: if ``x`` is not 1-D or ``fmt`` is unknown.
    """
    f = float_format(fmt)
    bits = f.bits(x)
    p = f.significand_bits
    sign = (bits >> np.uint64(p + f.exponent_bits)).astype(np.int64)
    exponent = ((bits >> np.uint64(p)) & np.uint64(f.max_exponent)).astype(np.int64)
    significand = (bits & np.uint64((1 << p) - 1)).astype(np.int64)
    return sign, exponent, significand


def low_bits(x: np.ndarray, k: int, fmt: str = "float64") -> np.ndarray:
    """The last ``k`` bits of each value's significand field, as integers in ``[0, 2^k)``.

    Raises:
        ValueError: if ``k`` is not an integer in [1, p] for the format's ``p``.
    """
    p = float_format(fmt).significand_bits
    if not (isinstance(k, int) and 1 <= k <= p):
        raise ValueError(f"k must be an integer in [1, {p}], got {k!r}")
    return fields(x, fmt)[2] & ((1 << k) - 1)


def trailing_zeros(x: np.ndarray, fmt: str = "float64") -> np.ndarray:
    """Trailing zero bits of each value's significand field (``p`` when the field is 0)."""
    m = fields(x, fmt)[2].astype(np.uint64)
    lowest = m & (~m + np.uint64(1))  # the lowest set bit (two's complement), 0 when m == 0
    # frexp of an exact power of two 2^t is (0.5, t + 1): exact, no logarithm rounding.
    t = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1
    return np.where(m == 0, float_format(fmt).significand_bits, t)


def granularity(x: np.ndarray, fmt: str = "float64") -> np.ndarray:
    """The largest ``j`` with ``x`` an integer multiple of ``2^j``, for finite nonzero ``x``.

    A normal value with biased exponent ``E`` and ``t`` trailing zeros in its significand
    field is an odd multiple of ``2^(E - bias - p + t)``; a subnormal one of
    ``2^(1 - bias - p + t)``. Zeros, infinities and NaNs get ``np.iinfo(np.int64).max`` (no
    such ``j``, or every ``j``).
    """
    f = float_format(fmt)
    _, exponent, _ = fields(x, fmt)
    t = trailing_zeros(x, fmt)
    unit = np.where(exponent == 0, 1, exponent) - f.bias - f.significand_bits
    arr = _as_doubles(x)
    special = (arr == 0) | ~np.isfinite(arr)
    return np.where(special, np.iinfo(np.int64).max, unit + t)


def binade_bounds(sign: int, exponent: int, fmt: str = "float64") -> tuple[float, float]:
    """The interval ``[low, high)`` of magnitudes of a binade, signed (``high`` is exclusive in
    magnitude): e.g. ``(0, 1022)`` is ``[0.5, 1.0)`` and ``(1, 1022)`` is ``(-1.0, -0.5]``."""
    f = float_format(fmt)
    if exponent == 0:
        low, high = 0.0, 2.0 ** (1 - f.bias)
    elif exponent == f.max_exponent:
        low = high = float("inf")
    else:
        low, high = 2.0 ** (exponent - f.bias), 2.0 ** (exponent - f.bias + 1)
    return (-high, -low) if sign else (low, high)


@dataclass(frozen=True)
class ClassKey:
    """A partition of the floats of one format into classes, each a binade combined with a
    bit feature.

    Attributes:
        kind: ``"low-bits"`` (binade and the last ``k`` significand bits) or ``"lattice"``
            (binade and the number of trailing zero bits of the significand, capped at
            :data:`GRANULARITY_CAP` or the format's width: within a binade, which lattice
            ``2^j Z`` the output lies on).
        k: bits kept by ``"low-bits"`` (1 to min(16, the format's significand bits));
            ignored by ``"lattice"``.
        fmt: the format whose bits are read (:data:`FORMATS`).
    """

    kind: str
    k: int = 1
    fmt: str = "float64"

    def __post_init__(self) -> None:
        if self.kind not in ("low-bits", "lattice"):
            raise ValueError(f"kind must be 'low-bits' or 'lattice', got {self.kind!r}")
        top = min(16, float_format(self.fmt).significand_bits)
        if self.kind == "low-bits" and not (isinstance(self.k, int) and 1 <= self.k <= top):
            raise ValueError(f"k must be an integer in [1, {top}], got {self.k!r}")

    @property
    def cap(self) -> int:
        """Trailing-zero counts at or above this share one ``lattice`` class."""
        return min(GRANULARITY_CAP, float_format(self.fmt).significand_bits)

    @property
    def width(self) -> int:
        """Number of values the bit feature takes within one binade."""
        return 1 << self.k if self.kind == "low-bits" else self.cap + 1

    @property
    def size(self) -> int:
        """Number of classes: every code is in ``[0, size)`` (2 signs x 2^e exponents)."""
        return 2 * (1 << float_format(self.fmt).exponent_bits) * self.width

    def codes(self, x: np.ndarray) -> np.ndarray:
        """One ``int64`` class code per value: ``(sign * 2^e + E) * width + feature``."""
        sign, exponent, significand = fields(x, self.fmt)
        if self.kind == "low-bits":
            feature = significand & ((1 << self.k) - 1)
        else:
            feature = np.minimum(trailing_zeros(x, self.fmt), self.cap)
        exponents = 1 << float_format(self.fmt).exponent_bits
        return (sign * exponents + exponent) * self.width + feature

    def describe_code(self, code: int) -> str:
        """One class in words, e.g. ``"[0.25, 0.5) with last significand bit 1"``."""
        f = float_format(self.fmt)
        binade, feature = divmod(int(code), self.width)
        sign, exponent = divmod(binade, 1 << f.exponent_bits)
        low, high = binade_bounds(sign, exponent, self.fmt)
        where = f"({low:.4g}, {high:.4g}]" if sign else f"[{low:.4g}, {high:.4g})"
        if exponent == f.max_exponent:
            where = "-inf or NaN" if sign else "+inf or NaN"
        if self.kind == "low-bits":
            bits = format(feature, f"0{self.k}b")
            name = "bit" if self.k == 1 else f"{self.k} bits"
            return f"{where} with last significand {name} {bits}"
        if feature == self.cap:
            return f"{where} with >= {feature} trailing zero bits"
        return f"{where} with {feature} trailing zero bits"

    def describe(self) -> str:
        """The partition in words, naming the format read unless it is the double (e.g.
        ``"binade and last 1 significand bit, of the float32"``; doubles read as before)."""
        if self.kind == "low-bits":
            what = f"binade and last {self.k} significand bit{'s' if self.k > 1 else ''}"
        else:
            what = "binade and lattice (trailing zero bits of the significand)"
        return what if self.fmt == "float64" else f"{what}, of the {self.fmt}"


def class_keys(fmt: str = "float64") -> tuple[ClassKey, ...]:
    """The partitions the ``bits`` event family searches in the format ``fmt`` (one
    candidate per partition and direction): low bits ``k = 1, 4, 8`` (at most the format's
    significand bits) and the lattice key."""
    p = float_format(fmt).significand_bits
    ks = sorted({min(k, p) for k in (1, 4, 8)})
    return (*(ClassKey("low-bits", k, fmt) for k in ks), ClassKey("lattice", 1, fmt))
