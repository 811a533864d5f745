"""Structured outputs (dicts, variable-length sequences, None, pandas objects, exceptions) as
fixed-width float arrays the event search can work on.

A structured output is flattened into *entries*, each a label and its numeric values:

* a mapping (``dict``; a pandas ``Series``, index to value): one entry per key; a value is a
  number, ``None`` / NaN (a missing value), a sequence of numbers (several values), a nested
  mapping (its keys become paths ``(key, inner key)``), or a non-numeric value ``v``
  (the entry ``(key, v)``, without values);
* a pandas ``DataFrame``: one entry per row, its numeric columns the values; the row's label
  is its index label, or, under a default ``RangeIndex``, its non-numeric columns (the group
  columns of a GROUP BY), else its position;
* a list, tuple, set or 1-D array: numbers are entries by position (a variable-length
  vector), non-numeric items are entries by value (membership), and records (tuples or lists
  inside the sequence) are entries named by their non-numeric fields and valued by their
  numeric ones (a list of ``(key, count)`` pairs reads like a dict);
* ``None``; a number (in a batch that also holds structured outputs); an exception raised by
  the mechanism (:class:`Raised`, with ``audit(..., on_error="output")``).

The :class:`Layout` turns entries into columns. It is fixed once per audit, before any
sample is converted, from the probe runs and the first batch (so that every worker process
converts the same way): the labels seen there are *named* (at most :data:`MAX_LABELS`), each
with a count column and its value columns; every other label is hashed into one of
:data:`BUCKETS` count columns with BLAKE2b over a canonical encoding of the label
(deterministic across processes, unlike Python's salted ``hash``). Exception types are
coded the same way. The columns: the number itself (``core``), whether the output is None,
the number of entries, per named label its count and values, the buckets, the exception
type. Events over these columns are deterministic functions of the output, so certifying
them is as sound as for any other event; the layout only decides which events can be
searched and how they read ("the key 'c' is present", "the output has 3 entries").
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.errors import MechanismError

__all__ = [
    "BUCKETS",
    "MAX_LABELS",
    "MAX_VALUES",
    "Label",
    "Layout",
    "Raised",
    "category",
    "infer_layout",
]

#: Most labels named by a layout (the most frequent in the probe and the first batch).
MAX_LABELS = 32
#: Hash buckets counting the entries whose label is not named.
BUCKETS = 16
#: Most values per label (further values are not read).
MAX_VALUES = 8
#: Deepest nesting of mappings read.
MAX_DEPTH = 4


@dataclass(frozen=True)
class Raised:
    """An exception raised by the mechanism, as its output (``on_error="output"``): only the
    exception's type, never its message (which may hold random numbers).

    Attributes:
        type_name: the exception's class, qualified by its module unless built in
            (``"ValueError"``, ``"mylib.errors.EmptyError"``).
    """

    type_name: str

    @classmethod
    def of(cls, err: BaseException) -> Raised:
        """The outcome of raising ``err``."""
        t = type(err)
        module = t.__module__
        return cls(t.__qualname__ if module == "builtins" else f"{module}.{t.__qualname__}")

    def __repr__(self) -> str:
        return f"raised {self.type_name}"


# ---- what an output is ----------------------------------------------------------------------


def _is_pandas(value: Any) -> str:
    """``"series"``, ``"frame"`` or ``""`` (pandas is never imported here)."""
    if type(value).__module__.split(".")[0] != "pandas":
        return ""
    name = type(value).__name__
    return "series" if name == "Series" else "frame" if name == "DataFrame" else ""


def _number(value: Any) -> float | None:
    """``value`` as a float if it is a real number (bool, int, float, NumPy scalar or 0-d
    array), else None."""
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        try:
            return float(value)
        except OverflowError:
            return math.copysign(math.inf, value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value)
    return None


def category(value: Any) -> str:
    """What kind of output ``value`` is: ``"raised"``, ``"none"``, ``"number"``,
    ``"entries"`` (mappings, pandas objects, sequences, sets) or ``"atom"`` (any other
    value: strings, frozensets are entries too)."""
    if isinstance(value, Raised):
        return "raised"
    if value is None:
        return "none"
    if _number(value) is not None:
        return "number"
    if isinstance(value, (Mapping, list, tuple, set, frozenset, np.ndarray)) or _is_pandas(value):
        return "entries"
    return "atom"


# ---- labels ---------------------------------------------------------------------------------


def _canonical(value: Any) -> Hashable:
    """A label as a plain, comparable Python value (NumPy scalars unwrapped, integral floats
    as ints: ``{1: x}`` and ``{1.0: x}`` are one key, as for a dict)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, tuple):
        return tuple(_canonical(v) for v in value)
    return value


def _encode(value: Any) -> bytes:
    """A canonical byte encoding of a label (the same in every process and run).

    Raises:
        MechanismError: for an object that compares and prints by identity only.
    """
    if value is None:
        return b"N"
    if isinstance(value, int):
        return b"I" + str(value).encode()
    if isinstance(value, float):
        return b"F" + value.hex().encode()
    if isinstance(value, str):
        return b"S" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return b"Y" + value
    if isinstance(value, tuple):
        parts = [_encode(v) for v in value]
        return b"T" + b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    if isinstance(value, frozenset):
        parts = sorted(_encode(_canonical(v)) for v in value)
        return b"Z" + b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    t = type(value)
    if t.__repr__ is object.__repr__:
        raise MechanismError(
            f"structured outputs must have labels (keys, items) that compare by value; got "
            f"a {t.__name__} object, which prints and compares by identity"
        )
    return b"R" + f"{t.__module__}.{t.__qualname__}:{value!r}".encode()


def _bucket(encoded: bytes, buckets: int) -> int:
    digest = hashlib.blake2b(encoded, digest_size=8, person=b"dpaudit-label").digest()
    return int.from_bytes(digest, "big") % buckets


def _type_code(name: str) -> int:
    """The code of an exception type the layout does not name: a negative integer from a
    stable hash of its name (exact in a double)."""
    digest = hashlib.blake2b(name.encode(), digest_size=4, person=b"dpaudit-raise").digest()
    return -1 - (int.from_bytes(digest, "big") >> 1)


@dataclass(frozen=True)
class Label:
    """A named label of a layout.

    Attributes:
        kind: ``"key"`` (of a mapping), ``"entry"`` (a position in a sequence), ``"item"``
            (a non-numeric element of a sequence or set), ``"row"`` (a record or a DataFrame
            row) or ``"output"`` (a non-numeric output itself, beside structured ones).
        value: the label itself (canonical: see :func:`_canonical`).
        fields: names of its value columns (``""`` for a single value, DataFrame columns).
    """

    kind: str
    value: Hashable
    fields: tuple[str, ...] = ()

    def phrase(self) -> str:
        """The label in words, e.g. ``"the key 'c'"``, ``"entry 3"``."""
        if self.kind == "entry":
            return f"entry {self.value}"
        if self.kind == "output":
            return f"the output {self.value!r}"
        return f"the {self.kind} {self.value!r}"

    def value_phrase(self, j: int) -> str:
        """The ``j``-th value column in words."""
        if self.kind == "entry" and self.fields == ("",):
            return f"entry {self.value} of the output"
        name = self.fields[j] if j < len(self.fields) else str(j)
        if name == "":
            return f"the value of {self.phrase()}"
        if self.kind == "row":
            return f"column {name!r} of {self.phrase()}"
        return f"value {name} of {self.phrase()}"


Entry = tuple[tuple[str, Hashable], tuple[float, ...], tuple[str, ...]]


def _values(value: Any) -> tuple[float, ...] | None:
    """The numbers of a number, None or a sequence of numbers (None for anything else)."""
    if value is None:
        return (math.nan,)
    x = _number(value)
    if x is not None:
        return (x,)
    if isinstance(value, (list, tuple, np.ndarray)):
        numbers = [_number(v) if v is not None else math.nan for v in value]
        if all(v is not None for v in numbers) and np.ndim(value) == 1:
            return tuple(float(v) for v in numbers)  # type: ignore[arg-type]
    return None


def _mapping_entries(items: Iterable[tuple[Any, Any]], prefix: tuple, depth: int) -> list[Entry]:
    out: list[Entry] = []
    for key, value in items:
        path = (*prefix, _canonical(key))
        label = path[0] if len(path) == 1 else path
        numbers = _values(value)
        if numbers is not None:
            fields = ("",) if len(numbers) == 1 else tuple(str(i) for i in range(len(numbers)))
            out.append((("key", label), numbers, fields))
        elif isinstance(value, Mapping) or _is_pandas(value) == "series":
            if depth >= MAX_DEPTH:
                raise MechanismError(
                    f"structured outputs must nest mappings at most {MAX_DEPTH} deep, got "
                    "deeper ones"
                )
            out += _mapping_entries(value.items(), path, depth + 1)
        elif category(value) == "atom" or isinstance(value, frozenset):
            out.append((("key", (*path, _canonical(value))), (), ()))
        else:
            raise MechanismError(
                "structured outputs: a mapping's values must be numbers, None, sequences of "
                f"numbers, mappings or hashable values; got a {type(value).__name__} under "
                f"the key {key!r}"
            )
    return out


def _record(record: Sequence[Any]) -> Entry:
    names = tuple(_canonical(v) for v in record if _number(v) is None and v is not None)
    numbers = tuple(_number(v) if v is not None else math.nan for v in record)
    values = tuple(float(v) for v in numbers if v is not None)
    positions = tuple(str(i) for i, v in enumerate(record) if _number(v) is not None)
    label = names[0] if len(names) == 1 else names
    return (("row", label), values, tuple(f"field {p}" for p in positions))


def _frame_entries(frame: Any) -> list[Entry]:
    cells = frame.to_numpy(dtype=object)  # one conversion (frame.dtypes builds a Series)
    columns = cells.T.tolist()
    numeric = [i for i, col in enumerate(columns) if all(_number(v) is not None for v in col)]
    others = [i for i in range(len(columns)) if i not in numeric]
    fields = tuple(str(frame.columns[i]) for i in numeric)
    if type(frame.index).__name__ != "RangeIndex":
        labels: list[Hashable] = [_canonical(v) for v in frame.index]
    elif others:
        groups = [tuple(_canonical(v) for v in row) for row in cells[:, others].tolist()]
        labels = [g[0] if len(g) == 1 else g for g in groups]
    else:
        labels = list(range(len(frame)))
    values = cells[:, numeric].astype(float).tolist() if numeric else [[]] * len(frame)
    return [(("row", label), tuple(row), fields) for label, row in zip(labels, values, strict=True)]


def entries(value: Any) -> list[Entry]:
    """The entries of an ``"entries"`` output (:func:`category`): ``((kind, label), values,
    value names)`` each.

    Raises:
        MechanismError: for contents the auditor cannot read (named in the message).
    """
    pandas = _is_pandas(value)
    if pandas == "frame":
        return _frame_entries(value)
    if isinstance(value, Mapping) or pandas == "series":
        return _mapping_entries(value.items(), (), 1)
    if isinstance(value, (set, frozenset)):
        return [(("item", _canonical(v)), (), ()) for v in value]
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise MechanismError(
            f"structured outputs: arrays must be 1-D, got an array of shape {value.shape}"
        )
    out: list[Entry] = []
    for i, v in enumerate(value):
        x = _number(v)
        if x is not None or v is None:
            out.append((("entry", i), (math.nan if x is None else x,), ("",)))
        elif isinstance(v, (tuple, list)):
            out.append(_record(v))
        elif isinstance(v, Mapping):
            raise MechanismError(
                "structured outputs: a sequence of mappings is not read; return one mapping "
                "(e.g. keyed by the records' names)"
            )
        else:
            out.append((("item", _canonical(v)), (), ()))
    return out


# ---- the layout -----------------------------------------------------------------------------


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
                else _type_code(value.type_name)
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
            numbers = _values(value)
            if numbers is None or len(numbers) != self.core:
                raise _changed(f"a {type(value).__name__}")
            row[: self.core] = numbers
            return
        if not self.mapped:
            raise _changed(f"a {type(value).__name__}")
        if type(value) is dict and self._fill_plain_dict(row, value):
            return
        found = entries(value) if kind == "entries" else [(("output", _canonical(value)), (), ())]
        row[self.length_column] = len(found)
        for label, numbers, _ in found:
            j = self._index.get(label)
            if j is None:
                row[self.bucket_columns[_bucket(_encode(label), self.buckets)]] += 1
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
                row[buckets[_bucket(_encode(label), self.buckets)]] += 1
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
        found = entries(value) if kind == "entries" else [(("output", _canonical(value)), (), ())]
        for (label_kind, label), numbers, fields in found:
            key = _encode((label_kind, label))
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
