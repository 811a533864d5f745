"""Turning a mechanism's raw outputs into arrays the event search can work on.

A mechanism returns a number, a bool, a tuple or 1-D array of numbers, a structured value
(a dict, a variable-length sequence, None, a pandas Series or DataFrame) or any hashable
value (see the mechanism contract in ARCHITECTURE.md); NumPy scalars and arrays of any float
precision and torch tensors (converted without importing torch: :func:`plain`) are numbers
too. The auditor fixes one :class:`OutputSchema` from the probe runs and the first batch it
draws and converts every later batch with it:

* ``scalar``: numbers and bools, as a float array of shape ``(n,)``;
* ``vector``: tuples / 1-D arrays of a fixed length ``d``, as a float array ``(n, d)``;
  ``NaN`` may mark a missing answer;
* ``structured``: dicts, variable-length sequences, None mixed with numbers, pandas objects,
  and any output when exceptions are outputs (``on_error="output"``), as a float array
  ``(n, width)`` whose columns a :class:`~dpaudit.audit.structured.Layout` names;
* ``categorical``: any other hashable value (strings, frozensets, ...), as an object array
  of keys (an exception raised is the key :class:`~dpaudit.audit.structured.Raised`).

The schema remembers the precision of float outputs (``float64``, ``float32``, ``float16``,
``bfloat16``): arrays are widened to float64, which is exact, and the ``bits`` event family
reads the bits in the outputs' own format (:mod:`dpaudit.audit.float_bits`).

Anything else is refused with a :class:`~dpaudit.audit.errors.MechanismError` naming the
accepted types (:data:`ACCEPTED_OUTPUTS`): arrays of two or more dimensions per output,
empty arrays, and objects that compare by identity only (two runs could never give the same
output).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit.audit.errors import MechanismError
from dpaudit.audit.float_bits import FORMATS
from dpaudit.audit.layout import Layout, infer_layout
from dpaudit.audit.structured import Raised, category

__all__ = [
    "ACCEPTED_OUTPUTS",
    "OutputSchema",
    "Raised",
    "infer_schema",
    "plain",
    "row_keys",
    "to_array",
]

#: What a mechanism may return (the mechanism contract of ARCHITECTURE.md).
ACCEPTED_OUTPUTS = (
    "a number, a bool, a tuple or 1-D array of numbers (NumPy or torch, any float "
    "precision; NaN marks a missing answer), a dict, a variable-length sequence, None, a "
    "pandas Series or DataFrame, or a hashable value that compares by value (str, int, "
    "tuple, frozenset, ...)"
)

#: Outputs of the first batch whose labels a structured layout counts (with the probe's).
LABELLED_OUTPUTS = 4096

Kind = Literal["scalar", "vector", "categorical", "structured"]


@dataclass(frozen=True)
class OutputSchema:
    """How raw outputs are laid out as an array.

    Attributes:
        kind: ``"scalar"``, ``"vector"``, ``"structured"`` or ``"categorical"``.
        width: number of columns of a vector or structured output (1 otherwise).
        precision: the float format of numeric outputs (``"float64"``, ``"float32"``,
            ``"float16"``, ``"bfloat16"``; integers and bools are ``"float64"``): the format
            whose bits the ``bits`` family reads.
        layout: what the columns of a structured output hold (None otherwise).
    """

    kind: Kind
    width: int = 1
    precision: str = "float64"
    layout: Layout | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("scalar", "vector", "categorical", "structured"):
            raise ValueError(
                f"kind must be 'scalar', 'vector', 'structured' or 'categorical', got {self.kind!r}"
            )
        if self.width < 1:
            raise ValueError(f"width must be >= 1, got {self.width!r}")
        if self.precision not in FORMATS:
            raise ValueError(f"precision must be one of {sorted(FORMATS)}, got {self.precision!r}")
        if (self.kind == "structured") != (self.layout is not None):
            raise ValueError("a structured schema needs a layout, and only it has one")
        if self.layout is not None and self.layout.width != self.width:
            raise ValueError(f"width must be the layout's {self.layout.width}, got {self.width}")

    def column_name(self, j: int) -> str:
        """Column ``j`` of a vector or structured output in words."""
        if self.layout is not None:
            return self.layout.column_name(j)
        return f"coordinate {j} of the output"


def _torch_numpy(value: Any) -> tuple[np.ndarray, str | None] | None:
    """A torch tensor as a NumPy array and, for bfloat16, the precision (None otherwise);
    None if ``value`` is no tensor.  Duck-typed: torch is never imported here."""
    if type(value).__module__.split(".")[0] != "torch" or not hasattr(value, "detach"):
        return None
    tensor = value.detach().cpu()
    if str(getattr(tensor, "dtype", "")) == "torch.bfloat16":
        return tensor.float().numpy(), "bfloat16"  # widening bfloat16 to float32 is exact
    return tensor.numpy(), None


def plain(raw: Any) -> tuple[Any, str | None]:
    """A batch (or one output) with torch tensors replaced by NumPy arrays, and the
    precision torch alone knows (``"bfloat16"``), else None."""
    converted = _torch_numpy(raw)
    if converted is not None:
        return converted
    if isinstance(raw, (list, tuple)) and raw and type(raw[0]).__module__.split(".")[0] == "torch":
        items = [_torch_numpy(v) for v in raw]
        if all(item is not None for item in items):
            tags = {item[1] for item in items if item is not None}
            return [item[0] for item in items if item is not None], tags.pop() if len(
                tags
            ) == 1 else None
    return raw, None


def _precision(arr: np.ndarray, tag: str | None) -> str:
    if tag is not None:
        return tag
    name = arr.dtype.name
    return name if name in ("float32", "float16") else "float64"


def _numeric(raw: Any) -> np.ndarray | None:
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        return raw
    if isinstance(raw, np.ndarray) and raw.dtype != object:
        return None
    if any(isinstance(v, (dict, set)) or v is None for v in raw):
        return None
    try:
        arr = np.asarray(raw)
    except (ValueError, TypeError):  # ragged sequences
        return None
    return arr if arr.dtype.kind in "biuf" else None


def infer_schema(
    raw: Sequence[Any] | np.ndarray, *, also: Sequence[Any] = (), raised: bool = False
) -> OutputSchema:
    """Choose the schema of a batch of raw outputs.

    Args:
        raw: a batch as returned by ``mechanism.batch`` or collected from ``mechanism(...)``.
        also: further raw outputs (the probe's, on every dataset) that the schema must fit:
            a structured layout names the labels and exception types seen in either.
        raised: whether exceptions are outputs (``on_error="output"``): numeric outputs are
            then structured, with a column for the exception's type.

    Returns:
        The schema: numeric 1-D batches are scalar, numeric 2-D batches are vectors,
        dicts, variable-length sequences, pandas objects and None among numbers are
        structured, other hashable values categorical.

    Raises:
        MechanismError: (a ValueError) for outputs the auditor cannot handle.
    """
    raw, tag = plain(raw)
    extra = [plain(v)[0] for v in also]
    if not extra and not raised:
        arr = _numeric(raw)
        if arr is not None and arr.ndim == 1:
            return OutputSchema("scalar", precision=_precision(arr, tag))
        if arr is not None and arr.ndim == 2 and arr.shape[1] >= 1:
            return OutputSchema("vector", int(arr.shape[1]), precision=_precision(arr, tag))
        if arr is not None:
            per = "empty arrays" if arr.ndim == 2 else f"arrays of shape {arr.shape[1:]}"
            raise MechanismError(f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got {per}")
    listed = [plain(v)[0] for v in (raw if isinstance(raw, list) else list(raw))]
    values = listed + extra
    labelled = listed[:LABELLED_OUTPUTS] + extra
    returned = [v for v in values if not isinstance(v, Raised)]
    kinds = {_kind(v) for v in returned}
    arr = _numeric(returned) if returned and kinds <= {"number", "entries", "atom"} else None
    if arr is not None and arr.ndim == 2 and arr.shape[1] == 0:
        raise MechanismError(f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got empty arrays")
    if arr is not None and arr.ndim > 2:
        raise MechanismError(
            f"mechanism outputs must be {ACCEPTED_OUTPUTS}; got arrays of shape {arr.shape[1:]}"
        )
    precision = "float64" if arr is None else _precision(arr, tag)
    if arr is not None and not raised:  # numbers only, given with the probe's
        if arr.ndim == 1:
            return OutputSchema("scalar", precision=precision)
        return OutputSchema("vector", int(arr.shape[1]), precision=precision)
    if arr is not None:
        layout = infer_layout(values, 1 if arr.ndim == 1 else int(arr.shape[1]), True, labelled)
        return OutputSchema("structured", layout.width, precision, layout)
    if (kinds <= {"atom", "none", "number"} and "atom" in kinds) or kinds <= {"none"}:
        to_array(values, OutputSchema("categorical"))  # refuses identity-only outputs
        return OutputSchema("categorical")
    precision = _value_precision(returned, tag)
    layout = infer_layout(values, 1 if "number" in kinds else 0, raised, labelled)
    return OutputSchema("structured", layout.width, precision, layout)


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
    raw, _ = plain(raw)
    if schema.layout is not None:
        return _structured_array(raw, schema.layout)
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


def _structured_array(raw: Any, layout: Layout) -> np.ndarray:
    """A batch as the columns of ``layout``; a numeric batch (a vectorised mechanism's
    array) is converted without a loop over its outputs."""
    if layout.core and isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        rows = raw.reshape(len(raw), -1)
        if rows.shape[1] != layout.core:
            raise MechanismError(
                f"mechanism output changed between batches: expected outputs of "
                f"{layout.core} number(s), got a batch of shape {raw.shape}"
            )
        out = np.zeros((len(rows), layout.width))
        out[:, : layout.core] = rows
        if layout.mapped:
            out[:, layout.length_column] = np.nan
            for _, values in layout.label_columns():
                out[:, values] = np.nan
        return out
    return layout.convert([plain(v)[0] for v in raw])


def _kind(value: Any) -> str:
    """:func:`~dpaudit.audit.structured.category`, except that a list or tuple of discrete
    values (integers, strings) counts as an ``"atom"``: ragged sequences of them are
    categorical outcomes, compared exactly, as before structured outputs (their outcomes
    repeat; a variable-length sequence of real numbers, which never repeats, is read as
    structured)."""
    kind = category(value)
    if kind == "entries" and isinstance(value, (list, tuple)) and all(_discrete(v) for v in value):
        return "atom"
    return kind


def _discrete(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, (bool, int, np.integer)):
        return True
    return isinstance(value, (float, np.floating)) and float(value).is_integer()


def _value_precision(values: Sequence[Any], tag: str | None) -> str:
    """The float precision of the numbers in structured outputs: float32 or float16 when
    every float met (at the top level, as a mapping's value or a DataFrame column) is of
    it, else float64."""
    if tag is not None:
        return tag
    found: set[str] = set()
    for value in values[:256]:
        items: Any = value
        if isinstance(value, dict):
            items = value.values()
        elif type(value).__module__.split(".")[0] == "pandas":
            items = [value.to_numpy()] if hasattr(value, "to_numpy") else []
            if type(value).__name__ == "DataFrame":
                items = [value[c].to_numpy() for c in value.columns]
        elif not isinstance(value, (list, tuple, np.ndarray)):
            items = [value]
        for item in items:
            item = plain(item)[0]
            if isinstance(item, float):
                found.add("float64")
            elif isinstance(item, (np.floating, np.ndarray)) and item.dtype.kind == "f":
                found.add(item.dtype.name)
    return found.pop() if len(found) == 1 and found <= {"float32", "float16"} else "float64"


def row_keys(rows: np.ndarray) -> np.ndarray:
    """One opaque, sortable key per row of a float array (rows equal iff keys equal).

    Used to find and match the distinct outcomes of vector outputs quickly (``-0.0`` is
    folded into ``0.0``).
    """
    rows = np.ascontiguousarray(np.asarray(rows, dtype=float) + 0.0)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(-1)
