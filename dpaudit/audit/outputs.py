"""Turning a mechanism's raw outputs into arrays the event search can work on.

A mechanism returns a number, a bool, a tuple or 1-D array of numbers, or any hashable value
(see the mechanism contract in ARCHITECTURE.md). The auditor fixes one :class:`OutputSchema`
from the first batch it draws and converts every later batch with it:

* ``scalar``: numbers and bools, as a float array of shape ``(n,)``;
* ``vector``: tuples / 1-D arrays of a fixed length ``d``, as a float array ``(n, d)``;
  ``NaN`` may mark a missing answer;
* ``categorical``: anything else, as an object array of hashable keys (lists and arrays are
  turned into tuples, so ragged sequences are categories too).

Anything else is refused with a :class:`~dpaudit.audit.errors.MechanismError` naming the
accepted types (:data:`ACCEPTED_OUTPUTS`): unhashable values (dicts, sets, lists holding
them), arrays of two or more dimensions per output, empty arrays, and objects that compare
by identity only (two runs could never give the same output).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit.audit.errors import MechanismError

__all__ = ["ACCEPTED_OUTPUTS", "OutputSchema", "infer_schema", "row_keys", "to_array"]

#: What a mechanism may return (the mechanism contract of ARCHITECTURE.md).
ACCEPTED_OUTPUTS = (
    "a number, a bool, a tuple or 1-D array of numbers (of a fixed length; NaN marks a "
    "missing answer), or a hashable value that compares by value (str, int, tuple, "
    "frozenset, None, ...)"
)

Kind = Literal["scalar", "vector", "categorical"]


@dataclass(frozen=True)
class OutputSchema:
    """How raw outputs are laid out as an array.

    Attributes:
        kind: ``"scalar"``, ``"vector"`` or ``"categorical"``.
        width: number of coordinates of a vector output (1 otherwise).
    """

    kind: Kind
    width: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("scalar", "vector", "categorical"):
            raise ValueError(f"kind must be 'scalar', 'vector' or 'categorical', got {self.kind!r}")
        if self.width < 1:
            raise ValueError(f"width must be >= 1, got {self.width!r}")


def _numeric(raw: Any) -> np.ndarray | None:
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        return raw
    try:
        arr = np.asarray(raw)
    except (ValueError, TypeError):  # ragged sequences
        return None
    return arr if arr.dtype.kind in "biuf" else None


def infer_schema(raw: Sequence[Any] | np.ndarray) -> OutputSchema:
    """Choose the schema of a batch of raw outputs.

    Args:
        raw: a batch as returned by ``mechanism.batch`` or collected from ``mechanism(...)``.

    Returns:
        The schema; numeric 1-D batches are scalar, numeric 2-D batches are vectors and
        everything else is categorical.
    """
    arr = _numeric(raw)
    if arr is not None and arr.ndim == 1:
        return OutputSchema("scalar")
    if arr is not None and arr.ndim == 2 and arr.shape[1] >= 1:
        return OutputSchema("vector", int(arr.shape[1]))
    if arr is not None:
        per = "empty arrays" if arr.ndim == 2 else f"arrays of shape {arr.shape[1:]}"
        raise MechanismError(f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got {per}")
    to_array(raw, OutputSchema("categorical"))  # refuses unhashable or identity-only outputs
    return OutputSchema("categorical")


def _key(value: Any) -> Hashable:
    if isinstance(value, np.ndarray):
        return tuple(value.tolist())
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _check_keys(keys: list[Any]) -> None:
    try:
        hash(tuple(keys))  # hashes every key
    except TypeError as err:
        bad = next(type(k).__name__ for k in keys if not isinstance(k, Hashable) or _unhashable(k))
        raise MechanismError(
            f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got an unhashable {bad} ({err})"
        ) from None
    for t in {type(k) for k in keys}:
        if t is not type(None) and t.__hash__ is object.__hash__ and t.__eq__ is object.__eq__:
            raise MechanismError(
                f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got {t.__name__} objects, "
                "which compare by identity (no two runs could give the same output)"
            )


def _unhashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return True
    return False


def to_array(raw: Sequence[Any] | np.ndarray, schema: OutputSchema) -> np.ndarray:
    """Convert a batch of raw outputs with a fixed schema.

    Args:
        raw: the batch.
        schema: the schema fixed from the first batch.

    Returns:
        A float array ``(n,)`` or ``(n, d)``, or an object array of hashable keys.

    Raises:
        ValueError: if the batch does not fit the schema (e.g. the output length changed).
        MechanismError: (a ValueError) if an output is not of an accepted type.
    """
    if schema.kind == "categorical":
        keys = [_key(v) for v in raw]
        _check_keys(keys)
        out = np.empty(len(keys), dtype=object)
        out[:] = keys
        return out
    arr = _numeric(raw)
    expected = 1 if schema.kind == "scalar" else 2
    if (
        arr is None
        or arr.ndim != expected
        or (schema.kind == "vector" and arr.shape[1] != schema.width)
    ):
        shape = "not numeric" if arr is None else f"shape {arr.shape}"
        raise MechanismError(
            f"mechanism output changed between batches: expected {schema.kind} outputs"
            f" of width {schema.width}, got a batch that is {shape}"
        )
    return arr.astype(float, copy=False)


def row_keys(rows: np.ndarray) -> np.ndarray:
    """One opaque, sortable key per row of a float array (rows equal iff keys equal).

    Used to find and match the distinct outcomes of vector outputs quickly (``-0.0`` is
    folded into ``0.0``).
    """
    rows = np.ascontiguousarray(np.asarray(rows, dtype=float) + 0.0)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(-1)
