"""Record domains: what one record of a dataset may be, for the record-level neighbour search.

A domain is a list with one entry per column of the dataset (a 2-D float array, one row per
record):

* a ``(low, high)`` tuple of finite numbers with ``low <= high``: a numeric column taking any
  value in the closed interval;
* a list (or 1-D array) of finite numbers: a categorical column taking one of these values.

:func:`check_domain` validates such a list into a :class:`RecordDomain`, which proposes the
records the search tries first (the all-low and all-high records, the centre, zero, the
corners of the box, one column at a time at its other extreme) and moves records towards the
corners and edges during the local search (:func:`RecordDomain.perturb`).

The declared domain holds finite numbers only (a NaN or infinite bound is refused: that is
the user's declaration). The search also tries *edge values* (:data:`EDGE_KINDS`), which real
code meets when its inputs are not validated upstream: in a numeric column NaN, +inf, -inf,
values well outside and just outside the declared range, -0.0, the smallest subnormal and
the largest finite double; in a categorical column NaN and numbers beyond both ends of the
list (:meth:`Column.edge_value`, :meth:`RecordDomain.edge_records`).

The command line's ``--records`` text is read by :mod:`dpaudit.audit.records_text`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.errors import ON_ERROR

__all__ = [
    "EDGE_KINDS",
    "MAX_CATEGORIES",
    "MAX_COLUMNS",
    "ON_ERROR",
    "RELATIONS",
    "Column",
    "RecordDomain",
    "check_domain",
]

#: The neighbouring relations between datasets of records: replace one record by another,
#: or add/remove one record.
RELATIONS = ("replace-one", "add-remove")
#: Most columns a record domain may have.
MAX_COLUMNS = 1_000
#: Most values of one categorical column.
MAX_CATEGORIES = 100_000
#: Values of a categorical column the search tries as "extremes" of that column (the first,
#: last and evenly spaced ones between them, in the order given).
CATEGORICAL_EXTREMES = 8
#: The kinds of edge values, in the order the search tries them: the ones that break the most
#: code first (NaN passes ``np.clip`` and every comparison; infinities overflow sums and
#: bounds; values outside the range find a missing or misplaced clamp).
EDGE_KINDS = (
    "NaN",
    "+inf",
    "-inf",
    "far above",
    "far below",
    "just above",
    "just below",
    "-0.0",
    "smallest subnormal",
    "largest double",
)
#: "Well outside" a numeric column: this many times its width (at least 1) past an end.
FAR_OUTSIDE = 10.0
#: The smallest positive (subnormal) double, 2**-1074 = 5e-324.
SMALLEST_SUBNORMAL = math.ulp(0.0)
#: The largest finite double, about 1.8e308.
LARGEST_DOUBLE = sys.float_info.max
#: Chance that the local search moves a column onto one of its edge values (with edge values).
EDGE_MOVE = 0.15


@dataclass(frozen=True)
class Column:
    """One column of a record domain.

    Attributes:
        low: smallest value (numeric) or first value (categorical).
        high: largest value (numeric) or last value (categorical).
        values: the allowed values of a categorical column (None: numeric interval).
    """

    low: float
    high: float
    values: tuple[float, ...] | None = None

    @property
    def categorical(self) -> bool:
        """Whether the column takes one of finitely many values."""
        return self.values is not None

    def extremes(self) -> tuple[float, ...]:
        """The values the search tries first: the ends, and for categories a few between."""
        if self.values is None:
            return (self.low,) if self.low == self.high else (self.low, self.high)
        k = len(self.values)
        picks = np.unique(np.linspace(0, k - 1, min(k, CATEGORICAL_EXTREMES)).astype(int))
        return tuple(self.values[i] for i in picks)

    def centre(self) -> float:
        """The midpoint (numeric) or the middle value (categorical)."""
        if self.values is None:
            return self.low + (self.high - self.low) / 2
        return self.values[len(self.values) // 2]

    def contains(self, value: float) -> bool:
        """Whether ``value`` is allowed in this column."""
        if self.values is None:
            return self.low <= value <= self.high
        return value in self.values

    def towards_edge(self, value: float, rng: np.random.Generator) -> float:
        """A value moved from ``value`` towards an edge of the column (or onto one); an edge
        value (:meth:`edge_value`) moves from the centre."""
        if self.values is None:
            if not self.low <= value <= self.high:
                value = self.centre()
            target = self.low if rng.random() < 0.5 else self.high
            step = rng.choice((1.0, 1.0, 0.5, 0.9))  # onto the edge, or part of the way
            moved = value + step * (target - value)
            return float(min(self.high, max(self.low, moved)))
        return float(self.values[int(rng.integers(len(self.values)))])

    def uniform(self, rng: np.random.Generator) -> float:
        """A value drawn uniformly from the column."""
        if self.values is None:
            return float(rng.uniform(self.low, self.high))
        return float(self.values[int(rng.integers(len(self.values)))])

    def edge_value(self, kind: str) -> float | None:
        """The column's edge value of ``kind`` (one of :data:`EDGE_KINDS`), None when the
        kind does not apply (a categorical column has NaN and one number beyond each end of
        its list: its largest value + 1 and its smallest - 1; "far above" beyond the largest
        double).

        Raises:
            ValueError: for a kind not in :data:`EDGE_KINDS`.
        """
        if kind not in EDGE_KINDS:
            raise ValueError(f"kind must be one of {EDGE_KINDS}, got {kind!r}")
        if kind == "NaN":
            return math.nan
        if self.values is not None:
            if kind == "far above":
                return max(self.values) + 1.0
            if kind == "far below":
                return min(self.values) - 1.0
            return None
        reach = FAR_OUTSIDE * max(self.high - self.low, 1.0)
        value = {
            "+inf": math.inf,
            "-inf": -math.inf,
            "far above": self.high + reach,
            "far below": self.low - reach,
            "just above": math.nextafter(self.high, math.inf),
            "just below": math.nextafter(self.low, -math.inf),
            "-0.0": -0.0,
            "smallest subnormal": SMALLEST_SUBNORMAL,
            "largest double": LARGEST_DOUBLE,
        }[kind]
        return value if kind in ("+inf", "-inf") or math.isfinite(value) else None

    def edge_values(self) -> tuple[float, ...]:
        """Every edge value of the column, in the order of :data:`EDGE_KINDS`."""
        found = (self.edge_value(kind) for kind in EDGE_KINDS)
        return tuple(v for v in found if v is not None)

    def describe(self, value: float) -> str | None:
        """``value`` in words when it is an edge value of the column (None when it is an
        ordinary value of the declared column)."""
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+inf" if value > 0 else "-inf"
        if value == 0.0 and math.copysign(1.0, value) < 0:
            return "-0.0"
        if value == SMALLEST_SUBNORMAL:
            return "the smallest subnormal double 5e-324"
        if value == LARGEST_DOUBLE:
            return "the largest finite double 1.8e308"
        if self.values is not None:
            return None if value in self.values else f"{value!r}, not one of the listed values"
        if value > self.high:
            how = "just above" if value == math.nextafter(self.high, math.inf) else "above"
            return f"{value!r}, {how} the declared range [{self.low!r}, {self.high!r}]"
        if value < self.low:
            how = "just below" if value == math.nextafter(self.low, -math.inf) else "below"
            return f"{value!r}, {how} the declared range [{self.low!r}, {self.high!r}]"
        return None

    def admits(self, value: float, edge_values: bool) -> bool:
        """Whether the search may put ``value`` in this column: a value of the column, or
        (with ``edge_values``) one of its edge values."""
        if self.contains(value) and self.describe(value) is None:
            return True
        return edge_values and any(
            np.array(value).tobytes() == np.array(v).tobytes() for v in self.edge_values()
        )


def _number(value: Any) -> float | None:
    """``value`` as a finite float, or None if it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _column(i: int, entry: Any) -> Column:
    where = f"domain[{i}]"
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(
                f"{where} must be a (low, high) tuple of two finite numbers, got a tuple of "
                f"{len(entry)} items: {entry!r}"
            )
        low, high = (_number(v) for v in entry)
        if low is None or high is None:
            raise ValueError(
                f"{where} must be a (low, high) tuple of finite numbers (no nan, inf, bool or "
                f"text), got {entry!r}"
            )
        if low > high:
            raise ValueError(f"{where} must be a (low, high) tuple with low <= high, got {entry!r}")
        return Column(low, high)
    if isinstance(entry, np.ndarray):
        entry = entry.tolist() if entry.ndim == 1 else entry
    if isinstance(entry, list):
        if not entry:
            raise ValueError(
                f"{where} must be a non-empty list of allowed values (a categorical column), got []"
            )
        if len(entry) > MAX_CATEGORIES:
            raise ValueError(
                f"{where} must list at most {MAX_CATEGORIES:,} values (MAX_CATEGORIES), got "
                f"{len(entry):,}"
            )
        numbers = [_number(v) for v in entry]
        bad = next((v for v, f in zip(entry, numbers, strict=True) if f is None), None)
        values = [f for f in numbers if f is not None]
        if len(values) < len(numbers):
            raise ValueError(
                f"{where} must list finite numbers (the dataset is a float array; encode "
                f"categories as numbers), got the value {bad!r}"
            )
        unique = tuple(dict.fromkeys(values))  # first occurrence order
        return Column(unique[0], unique[-1], unique)
    raise ValueError(
        f"{where} must be a (low, high) tuple (numeric column) or a list of allowed values "
        f"(categorical column), got {type(entry).__name__}: {entry!r}"[:300]
    )


@dataclass(frozen=True)
class RecordDomain:
    """A validated record domain: one :class:`Column` per column of the dataset."""

    columns: tuple[Column, ...]

    @property
    def width(self) -> int:
        """Number of columns."""
        return len(self.columns)

    def low(self) -> np.ndarray:
        """Every column at its low end (its first value)."""
        return np.array([c.low for c in self.columns])

    def high(self) -> np.ndarray:
        """Every column at its high end (its last value)."""
        return np.array([c.high for c in self.columns])

    def centre(self) -> np.ndarray:
        """Every column at its midpoint (its middle value)."""
        return np.array([c.centre() for c in self.columns])

    def zero(self) -> np.ndarray | None:
        """The all-zero record when the domain holds it (a record that adds nothing to a sum)."""
        return np.zeros(self.width) if all(c.contains(0.0) for c in self.columns) else None

    def contains(self, record: np.ndarray) -> bool:
        """Whether ``record`` is in the domain."""
        return all(c.contains(float(v)) for c, v in zip(self.columns, record, strict=True))

    def corners(self, limit: int, rng: np.random.Generator) -> list[np.ndarray]:
        """Corners of the box (every column at one of its extremes): all of them when there
        are at most ``limit``, else the all-low and all-high corners and random others."""
        ends = [c.extremes() for c in self.columns]
        count = math.prod(len(e) for e in ends)
        if count <= limit:
            grids = np.meshgrid(*[np.array(e) for e in ends], indexing="ij")
            return [row for row in np.stack([g.reshape(-1) for g in grids], axis=1)]
        found = [self.low(), self.high()]
        for _ in range(limit - 2):
            found.append(np.array([e[int(rng.integers(len(e)))] for e in ends]))
        return found

    def single_changes(self, base: np.ndarray, limit: int) -> list[np.ndarray]:
        """``base`` with one column moved to each of that column's other extremes (the first
        ``limit`` such records)."""
        found: list[np.ndarray] = []
        for j, column in enumerate(self.columns):
            for value in column.extremes():
                if len(found) >= limit:
                    return found
                if value != base[j]:
                    record = base.copy()
                    record[j] = value
                    found.append(record)
        return found

    def perturb(
        self, record: np.ndarray, rng: np.random.Generator, edge_values: bool = False
    ) -> np.ndarray:
        """``record`` with one to all columns moved towards an edge (or redrawn uniformly;
        with ``edge_values``, sometimes onto one of the column's edge values)."""
        moved = record.copy()
        k = int(rng.integers(1, self.width + 1)) if rng.random() < 0.3 else 1
        for j in rng.choice(self.width, size=k, replace=False):
            column = self.columns[j]
            draw = rng.random()
            if edge_values and draw < EDGE_MOVE:
                edges = column.edge_values()
                moved[j] = edges[int(rng.integers(len(edges)))]
            elif draw < EDGE_MOVE + 0.15:
                moved[j] = column.uniform(rng)
            else:
                moved[j] = column.towards_edge(float(moved[j]), rng)
        return moved

    def edge_records(self, limit: int) -> list[np.ndarray]:
        """Records holding edge values, most telling first: for each kind of
        :data:`EDGE_KINDS`, every column at its edge value of that kind (the others at their
        low end); then, with two or more columns, one column at a time (the first ``limit``
        distinct records)."""
        low = self.low()
        found: list[np.ndarray] = []
        seen: set[bytes] = set()

        def add(record: np.ndarray) -> None:
            if len(found) < limit and record.tobytes() not in seen:
                seen.add(record.tobytes())
                found.append(record)

        for kind in EDGE_KINDS:
            values = [c.edge_value(kind) for c in self.columns]
            if any(v is not None for v in values):
                add(np.array([lo if v is None else v for lo, v in zip(low, values, strict=True)]))
        if self.width > 1:
            for kind in EDGE_KINDS:
                for j, column in enumerate(self.columns):
                    value = column.edge_value(kind)
                    if value is not None:
                        record = low.copy()
                        record[j] = value
                        add(record)
        return found

    def edge_values_in(self, record: np.ndarray) -> list[tuple[int, str]]:
        """The columns of ``record`` holding an edge value, with the value in words."""
        found = []
        for j, (column, value) in enumerate(zip(self.columns, record, strict=True)):
            words = column.describe(float(value))
            if words is not None:
                found.append((j, words))
        return found

    def admits(self, record: np.ndarray, edge_values: bool) -> bool:
        """Whether the search may propose ``record``: every column holds a value of the
        domain or (with ``edge_values``) one of its edge values."""
        return all(
            c.admits(float(v), edge_values) for c, v in zip(self.columns, record, strict=True)
        )

    def uniform(self, rng: np.random.Generator) -> np.ndarray:
        """A record drawn uniformly, column by column."""
        return np.array([c.uniform(rng) for c in self.columns])


def check_domain(domain: Any) -> RecordDomain:
    """Validate a record domain.

    Args:
        domain: a list with one entry per column: a ``(low, high)`` tuple of finite numbers
            (``low <= high``) for a numeric column, a non-empty list of finite numbers for a
            categorical one.

    Returns:
        The :class:`RecordDomain`.

    Raises:
        ValueError: naming the entry (``domain[i]``), what it must be and what it is.
    """
    if isinstance(domain, RecordDomain):
        return domain
    if not isinstance(domain, (list, tuple)) or isinstance(domain, str):
        raise ValueError(
            "domain must be a list with one entry per column ((low, high) tuple or list of "
            f"values), got {type(domain).__name__}"
        )
    if not 1 <= len(domain) <= MAX_COLUMNS:
        raise ValueError(
            f"domain must have between 1 and {MAX_COLUMNS} columns (MAX_COLUMNS), got {len(domain)}"
        )
    if (
        isinstance(domain, tuple)
        and len(domain) == 2
        and all(_number(v) is not None for v in domain)
    ):
        raise ValueError(
            "domain must be a list of columns, got the tuple "
            f"{domain!r}; for one numeric column write [{domain!r}]"
        )
    return RecordDomain(tuple(_column(i, entry) for i, entry in enumerate(domain)))


def as_records(data: Sequence[Any] | np.ndarray, width: int) -> np.ndarray:
    """A read-only 2-D float array of ``width`` columns (the datasets the search builds)."""
    array = np.array(data, dtype=float).reshape(-1, width)
    array.flags.writeable = False
    return array
