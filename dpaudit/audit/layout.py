"""The layout of structured outputs: which column holds what (:mod:`dpaudit.audit.structured`
flattens an output into entries; a :class:`Layout`, fixed once per audit from the probe runs
and the first batch, turns the entries into the columns of a float array and says in words
what each column, outcome and threshold means)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.errors import MechanismError
from dpaudit.audit.structured import (
    BUCKETS,
    MAX_LABELS,
    MAX_VALUES,
    Label,
    Raised,
    canonical,
    category,
    encode,
    entries,
    label_bucket,
    numbers_of,
    type_code,
)

__all__ = ["Layout", "infer_layout"]


@dataclass(frozen=True)
class Layout:
    """What each column of a structured output array holds (see the module's text).

    Attributes:
        core: columns of the number (or fixed-length vector) an output may be itself.
        nullable: whether a column says the output is None.
        mapped: whether outputs have entries (then: a length column, the labels' columns and
            the buckets).
        labels: the named labels, in column order.
        buckets: hash buckets for the other labels.
        raised: the exception types named (codes 1, 2, ...), or None when exceptions are not
            outputs (no column).
    """

    core: int = 0
    nullable: bool = False
    mapped: bool = False
    labels: tuple[Label, ...] = ()
    buckets: int = 0
    raised: tuple[str, ...] | None = None
    _index: dict[tuple[str, Hashable], int] = field(init=False, repr=False, compare=False)
    _keys: dict[Hashable, tuple[int, int]] = field(init=False, repr=False, compare=False)
    _buckets: range = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_buckets", self._bucket_range())
        object.__setattr__(
            self, "_index", {(lab.kind, lab.value): i for i, lab in enumerate(self.labels)}
        )
        # a dict's str or int keys, straight to their columns (the common case, no entries())
        object.__setattr__(
            self,
            "_keys",
            {
                lab.value: (count, values[0] if values else -1)
                for lab, (count, values) in zip(self.labels, self.label_columns(), strict=True)
                if lab.kind == "key" and type(lab.value) in (str, int)
            },
        )

    # column positions
    @property
    def none_column(self) -> int | None:
        """The column holding 1.0 for a None output."""
        return self.core if self.nullable else None

    @property
    def length_column(self) -> int | None:
        """The column holding the number of entries."""
        return self.core + int(self.nullable) if self.mapped else None

    def label_columns(self) -> list[tuple[int, list[int]]]:
        """Per named label, its count column and its value columns."""
        start = self.core + int(self.nullable) + int(self.mapped)
        out = []
        for label in self.labels:
            out.append((start, list(range(start + 1, start + 1 + len(label.fields)))))
            start += 1 + len(label.fields)
        return out

    @property
    def bucket_columns(self) -> list[int]:
        """The count columns of the hash buckets."""
        return list(self._buckets)

    def _bucket_range(self) -> range:
        start = self.core + int(self.nullable) + int(self.mapped)
        start += sum(1 + len(label.fields) for label in self.labels)
        return range(start, start + self.buckets)

    @property
    def raised_column(self) -> int | None:
        """The column holding the exception's type code (0: the mechanism returned)."""
        return None if self.raised is None else self.width - 1

    @property
    def width(self) -> int:
        """Number of columns."""
        labels = sum(1 + len(label.fields) for label in self.labels)
        raised = 0 if self.raised is None else 1
        return self.core + int(self.nullable) + int(self.mapped) + labels + self.buckets + raised

    def structure_columns(self) -> tuple[int, ...]:
        """The discrete columns saying what shape an output has: None or not, the number of
        entries, which labels are present, the buckets, the exception type."""
        cols = [c for c in (self.none_column, self.length_column) if c is not None]
        cols += [count for count, _ in self.label_columns()] + self.bucket_columns
        if self.raised_column is not None:
            cols.append(self.raised_column)
        return tuple(cols)

    def value_columns(self) -> tuple[int, ...]:
        """The columns holding numbers the mechanism released (the core and labels' values)."""
        return (*range(self.core), *(v for _, values in self.label_columns() for v in values))

    def count_columns(self) -> tuple[int, ...]:
        """The columns counting something (entries, a label's occurrences, a bucket)."""
        cols = [] if self.length_column is None else [self.length_column]
        return (*cols, *(count for count, _ in self.label_columns()), *self.bucket_columns)

    # words
    def column_name(self, j: int) -> str:
        """Column ``j`` in words."""
        if j < self.core:
            return "the output" if self.core == 1 else f"coordinate {j} of the output"
        if j == self.none_column:
            return "whether the output is None"
        if j == self.length_column:
            return "the number of entries"
        for label, (count, values) in zip(self.labels, self.label_columns(), strict=True):
            if j == count:
                return f"the count of {label.phrase()}"
            if j in values:
                return label.value_phrase(values.index(j))
        if j in self.bucket_columns:
            b = self.bucket_columns.index(j)
            return f"the number of entries outside the probe's labels in hash bucket {b}"
        if j == self.raised_column:
            return "the type of exception raised"
        raise ValueError(f"column must be in [0, {self.width}), got {j!r}")

    def count_phrase(self, j: int, above: bool, threshold: float) -> str:
        """A threshold on a count column in words (``""`` for other columns)."""
        if j not in self.count_columns():
            return ""
        if above:
            k = max(0, math.ceil(threshold))
            if j == self.length_column:
                return f"the output has at least {_entries(k)}"
            if k <= 0:
                return ""
            what = self._counted(j)
            return f"{what} is present" if k == 1 else f"{what} appears at least {k} times"
        k = math.floor(threshold)
        if j == self.length_column:
            if k == 0:
                return "the output has no entries"
            return f"the output has at most {_entries(k)}" if k > 0 else ""
        what = self._counted(j)
        if k < 0:
            return ""
        return f"{what} is absent" if k == 0 else f"{what} appears at most {k} times"

    def _counted(self, j: int) -> str:
        for label, (count, _) in zip(self.labels, self.label_columns(), strict=True):
            if j == count:
                return label.phrase()
        b = self.bucket_columns.index(j)
        return f"an entry outside the probe's labels (hash bucket {b} of {self.buckets})"

    def _raised_name(self, code: float) -> str:
        assert self.raised is not None  # called only with a raised column
        if 1 <= code <= len(self.raised):
            return self.raised[int(code) - 1]
        return f"an exception of a type the probe did not see (type code {int(code)})"

    def describe_structure(self, row: Sequence[float]) -> str:
        """An outcome over :meth:`structure_columns` in words."""
        values = dict(zip(self.structure_columns(), row, strict=True))
        return self._shape(values)

    def _shape(self, values: Mapping[int, float]) -> str:
        raised = self.raised_column
        if raised is not None and values[raised] != 0:
            return f"the mechanism raised {self._raised_name(values[raised])}"
        if self.none_column is not None and values[self.none_column] == 1:
            return "the output is None"
        if not self.mapped:
            return "the output is a number" if self.core == 1 else "the output is a vector"
        present = []
        for label, (count, _) in zip(self.labels, self.label_columns(), strict=True):
            k = int(values[count]) if not math.isnan(values[count]) else 0
            if k:
                present.append(repr(label.value) + (f" (x{k})" if k > 1 else ""))
        others = sum(int(values[c]) for c in self.bucket_columns if not math.isnan(values[c]))
        length = values[self.length_column]  # type: ignore[index]
        if math.isnan(length):
            return "the output is a number" if self.core else "the output has no entries"
        kinds = {label.kind for label in self.labels}
        if kinds <= {"entry"}:
            text = f"the output has {int(length)} entries"
            return text + (f" ({others} beyond the probe's)" if others else "")
        noun = {"key": "keys", "item": "items", "row": "rows"}.get(
            next(iter(kinds)) if len(kinds) == 1 else "", "entries"
        )
        text = f"the {noun} are exactly {{{', '.join(present)}}}"
        if others:
            text += f" and {others} outside the probe's labels"
        return text

    def describe_row(self, row: Sequence[float]) -> str:
        """A whole output (one row of every column) in words."""
        row = list(row)
        values = {j: row[j] for j in self.structure_columns()}
        shape = self._shape(values)
        if shape.startswith(("the mechanism raised", "the output is None")):
            return shape
        if self.core and (not self.mapped or math.isnan(row[self.length_column])):  # type: ignore[index]
            core = row[: self.core]
            return "the output is " + (_num(core[0]) if self.core == 1 else _vec(core))
        parts = []
        for label, (count, cols) in zip(self.labels, self.label_columns(), strict=True):
            if row[count] >= 1:
                if not cols:
                    parts.append(repr(label.value))
                    continue
                shown = _vec([row[c] for c in cols]) if len(cols) > 1 else _num(row[cols[0]])
                parts.append(f"{label.value!r}: {shown}")
        others = sum(int(row[c]) for c in self.bucket_columns)
        more = f" and {others} outside the probe's labels" if others else ""
        return f"the output is {{{', '.join(parts)}}}{more}"

    # conversion
    def convert(self, raw: Sequence[Any]) -> np.ndarray:
        """The outputs ``raw`` as a float array ``(n, width)``.

        Raises:
            MechanismError: if an output does not fit the layout (its kind was not seen when
                the layout was fixed) or cannot be read.
        """
        out = np.zeros((len(raw), self.width))
        if self.core:
            out[:, : self.core] = np.nan
        columns = self.label_columns()
        for cols in columns:
            out[:, cols[1]] = np.nan
        if self.mapped:
            out[:, self.length_column] = np.nan
        for i, value in enumerate(raw):
            self._fill(out[i], value, columns)
        return out

    def _fill(self, row: np.ndarray, value: Any, columns: list[tuple[int, list[int]]]) -> None:
        kind = category(value)
        if kind == "raised":
            if self.raised is None:  # pragma: no cover - Raised only with on_error="output"
                raise MechanismError("an exception became an output without on_error='output'")
            names = self.raised
            row[self.raised_column] = (
                names.index(value.type_name) + 1
                if value.type_name in names
                else type_code(value.type_name)
            )
            return
        if kind == "none":
            if self.none_column is None:
                raise _changed("None")
            row[self.none_column] = 1.0
            return
        if kind == "number" or (kind == "entries" and self.core > 1 and not self.mapped):
            if not self.core:
                raise _changed("a number")
            numbers = numbers_of(value)
            if numbers is None or len(numbers) != self.core:
                raise _changed(f"a {type(value).__name__}")
            row[: self.core] = numbers
            return
        if not self.mapped:
            raise _changed(f"a {type(value).__name__}")
        if type(value) is dict and self._fill_plain_dict(row, value):
            return
        found = entries(value) if kind == "entries" else [(("output", canonical(value)), (), ())]
        row[self.length_column] = len(found)
        for label, numbers, _ in found:
            j = self._index.get(label)
            if j is None:
                row[self.bucket_columns[label_bucket(encode(label), self.buckets)]] += 1
                continue
            count, cols = columns[j]
            if row[count] == 0:
                row[cols[: len(numbers)]] = numbers[: len(cols)]
            row[count] += 1

    def _fill_plain_dict(self, row: np.ndarray, value: dict) -> bool:
        """Fill ``row`` from a dict of str or int keys and float or int values (the common
        case, about five times faster than :func:`entries`); False, with ``row`` untouched,
        for any other dict."""
        plain = (str, int, float, np.float64, np.float32, np.float16, np.int64)
        for k, v in value.items():
            if type(k) not in (str, int) or type(v) not in plain or type(v) is bool:
                return False
        keys, buckets = self._keys, self._buckets
        for k, v in value.items():
            at = keys.get(k)
            if at is None:
                label = ("key", k)
                row[buckets[label_bucket(encode(label), self.buckets)]] += 1
                continue
            count, first = at
            if row[count] == 0 and first >= 0:
                row[first] = v
            row[count] += 1
        row[self.length_column] = len(value)
        return True


def _entries(k: int) -> str:
    return "1 entry" if k == 1 else f"{k} entries"


def _changed(what: str) -> MechanismError:
    return MechanismError(
        f"mechanism output changed between batches: got {what}, which the probe runs and the "
        "first batch never returned (return one kind of output, or None for a missing one)"
    )


def _num(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    return str(int(x)) if x.is_integer() and abs(x) < 2**63 else f"{x:.6g}"


def _vec(xs: Sequence[float]) -> str:
    return "(" + ", ".join(_num(float(x)) for x in xs) + ")"


def infer_layout(
    values: Sequence[Any], core: int, raised: bool, labelled: Sequence[Any] | None = None
) -> Layout:
    """The layout of a batch of structured outputs (and the probe's).

    Args:
        values: the outputs (raised ones included).
        labelled: the outputs whose labels are counted (default: ``values``).
        core: columns of the number or vector an output may be itself (0: none).
        raised: whether exceptions are outputs (a column for their type).

    Returns:
        The layout: the :data:`MAX_LABELS` most frequent labels named (ties by their
        encoding), each with the most values seen (at most :data:`MAX_VALUES`).

    Raises:
        MechanismError: if an output cannot be read.
    """
    kinds = Counter(category(v) for v in values)
    mapped = bool(kinds["entries"] or kinds["atom"])
    frequency: Counter[bytes] = Counter()
    seen: dict[bytes, Label] = {}
    types = {v.type_name for v in values if isinstance(v, Raised)}
    for value in values if labelled is None else labelled:
        kind = category(value)
        if kind not in ("entries", "atom"):
            continue
        found = entries(value) if kind == "entries" else [(("output", canonical(value)), (), ())]
        for (label_kind, label), numbers, fields in found:
            key = encode((label_kind, label))
            frequency[key] += 1
            width = min(len(numbers), MAX_VALUES)
            held = seen.get(key)
            if held is None or len(held.fields) < width:
                seen[key] = Label(label_kind, label, tuple(fields[:width]))
    named = sorted(frequency, key=lambda k: (-frequency[k], k))[:MAX_LABELS]
    return Layout(
        core=core,
        nullable=bool(kinds["none"]) or mapped,
        mapped=mapped,
        labels=tuple(seen[k] for k in sorted(named)),
        buckets=BUCKETS if mapped else 0,
        raised=tuple(sorted(types)) if raised else None,
    )
