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

The :class:`~dpaudit.audit.layout.Layout` turns entries into columns. It is fixed once per
audit, before any sample is converted, from the probe runs and the first batch (so that
every worker process converts the same way): the labels seen there are *named* (at most
:data:`MAX_LABELS`), each with a count column and its value columns; every other label is
hashed into one of :data:`BUCKETS` count columns with BLAKE2b over a canonical encoding of
the label (deterministic across processes, unlike Python's salted ``hash``). Exception types
are coded the same way. The columns: the number itself (``core``), whether the output is
None, the number of entries, per named label its count and values, the buckets, the
exception type. Events over these columns are deterministic functions of the output, so
certifying them is as sound as for any other event; the layout only decides which events can
be searched and how they read ("the key 'c' is present", "the output has 3 entries").
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.errors import MechanismError

__all__ = [
    "BUCKETS",
    "MAX_LABELS",
    "MAX_VALUES",
    "Label",
    "Raised",
    "canonical",
    "category",
    "encode",
    "entries",
    "label_bucket",
    "numbers_of",
    "type_code",
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


def canonical(value: Any) -> Hashable:
    """A label as a plain, comparable Python value (NumPy scalars unwrapped, integral floats
    as ints: ``{1: x}`` and ``{1.0: x}`` are one key, as for a dict)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, tuple):
        return tuple(canonical(v) for v in value)
    return value


def encode(value: Any) -> bytes:
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
        parts = [encode(v) for v in value]
        return b"T" + b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    if isinstance(value, frozenset):
        parts = sorted(encode(canonical(v)) for v in value)
        return b"Z" + b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    t = type(value)
    if t.__repr__ is object.__repr__:
        raise MechanismError(
            f"structured outputs must have labels (keys, items) that compare by value; got "
            f"a {t.__name__} object, which prints and compares by identity"
        )
    return b"R" + f"{t.__module__}.{t.__qualname__}:{value!r}".encode()


def label_bucket(encoded: bytes, buckets: int) -> int:
    digest = hashlib.blake2b(encoded, digest_size=8, person=b"dpaudit-label").digest()
    return int.from_bytes(digest, "big") % buckets


def type_code(name: str) -> int:
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
        value: the label itself (canonical: see :func:`canonical`).
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


def numbers_of(value: Any) -> tuple[float, ...] | None:
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
        path = (*prefix, canonical(key))
        label = path[0] if len(path) == 1 else path
        numbers = numbers_of(value)
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
            out.append((("key", (*path, canonical(value))), (), ()))
        else:
            raise MechanismError(
                "structured outputs: a mapping's values must be numbers, None, sequences of "
                f"numbers, mappings or hashable values; got a {type(value).__name__} under "
                f"the key {key!r}"
            )
    return out


def _record(record: Sequence[Any]) -> Entry:
    names = tuple(canonical(v) for v in record if _number(v) is None and v is not None)
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
        labels: list[Hashable] = [canonical(v) for v in frame.index]
    elif others:
        groups = [tuple(canonical(v) for v in row) for row in cells[:, others].tolist()]
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
        return [(("item", canonical(v)), (), ()) for v in value]
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
            out.append((("item", canonical(v)), (), ()))
    return out
