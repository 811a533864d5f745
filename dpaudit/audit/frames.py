"""Audit functions written over other dataset types: pandas DataFrames and lists of records.

:func:`~dpaudit.audit.audit_records` (and :func:`~dpaudit.audit.audit`) call ``fn(data, rng)``
with ``data`` a 2-D float array, one row per record. Code written over a DataFrame or over a
list of records is audited through an adapter that builds that dataset from the array first::

    audit_records(over_frame(mean_income, ["age", "income"]), [(18, 90), (0, 1e5)], ...)

Adapters are picklable whenever the wrapped function is (a module-level function or a
picklable object), so audits with ``workers > 1`` and on Dask work with them; they keep the
function's ``batch`` (called with the converted dataset) and its ``arithmetic`` declaration.
pandas is imported only when a DataFrame is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["over_frame", "over_records"]


def _columns(columns: Any) -> tuple[str, ...]:
    if isinstance(columns, str) or not isinstance(columns, Sequence) or not columns:
        raise ValueError(
            f"columns must be a non-empty list of column names (strings), got {columns!r}"
        )
    names = tuple(columns)
    if not all(isinstance(c, str) and c for c in names):
        raise ValueError(f"columns must be non-empty strings, got {list(names)!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"columns must be distinct, got {list(names)!r}")
    return names


def _checked(data: Any, width: int, what: str) -> np.ndarray:
    array = np.asarray(data, dtype=float)
    if array.ndim != 2 or array.shape[1] != width:
        raise ValueError(
            f"{what}: the dataset has shape {array.shape}, expected (records, {width}) to match "
            f"the {width} column(s) given; give the record domain one entry per column"
        )
    return array


class _Adapter:
    """A function over converted datasets, callable as ``fn(data, rng)``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise ValueError(f"fn must be callable as fn(data, rng), got {type(fn).__name__}")
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        if hasattr(fn, "arithmetic"):
            self.arithmetic = fn.arithmetic

    def convert(self, data: Any) -> Any:
        raise NotImplementedError

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        return self.fn(self.convert(data), rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__})"


class _Batched(_Adapter):
    def batch(self, data: Any, n: int, rng: np.random.Generator) -> Any:
        batch = getattr(self.fn, "batch")  # noqa: B009 - present: checked by the factories
        return batch(self.convert(data), n, rng)


class _Frame(_Adapter):
    def __init__(self, fn: Callable[..., Any], columns: tuple[str, ...]) -> None:
        super().__init__(fn)
        self.columns = columns

    def convert(self, data: Any) -> Any:
        try:
            pd = importlib.import_module("pandas")
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "over_frame builds pandas DataFrames: install pandas (pip install pandas)"
            ) from err
        array = _checked(data, len(self.columns), f"over_frame({self.__name__})")
        return pd.DataFrame(array, columns=list(self.columns))


class _BatchedFrame(_Frame, _Batched):
    pass


class _Records(_Adapter):
    def convert(self, data: Any) -> list[tuple[float, ...]]:
        array = np.asarray(data, dtype=float)
        if array.ndim != 2:
            raise ValueError(
                f"over_records({self.__name__}): the dataset has shape {array.shape}, expected "
                "(records, columns)"
            )
        return [tuple(float(v) for v in row) for row in array]


class _BatchedRecords(_Records, _Batched):
    pass


def over_frame(fn: Callable[..., Any], columns: Sequence[str]) -> Callable[..., Any]:
    """``fn(df, rng)`` (``df`` a pandas DataFrame with the given columns, one row per record) as
    a function over arrays, for :func:`~dpaudit.audit.audit_records`.

    Args:
        fn: the function under audit; its optional ``fn.batch(df, n, rng)`` is kept.
        columns: the DataFrame's column names, in the order of the record domain's entries.

    Raises:
        ValueError: if ``fn`` is not callable or the column names are not distinct strings.
    """
    names = _columns(columns)
    cls = _BatchedFrame if callable(getattr(fn, "batch", None)) else _Frame
    return cls(fn, names)


def over_records(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(records, rng)`` (``records`` a list of tuples of floats, one per record) as a function
    over arrays, for :func:`~dpaudit.audit.audit_records`; ``fn.batch`` is kept.

    Raises:
        ValueError: if ``fn`` is not callable.
    """
    cls = _BatchedRecords if callable(getattr(fn, "batch", None)) else _Records
    return cls(fn)
