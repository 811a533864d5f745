"""Checks of the auditors' parameters, one per kind, shared by every audit entry point.

A failed check raises :class:`ValueError` naming the parameter, the admissible values and
the value received.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check(name: str, value: Any, ok: bool, admissible: str) -> None:
    """Raise ``ValueError("NAME must be ADMISSIBLE, got VALUE")`` unless ``ok``."""
    if not ok:
        raise ValueError(f"{name} must be {admissible}, got {value!r}")


def is_int(v: Any) -> bool:
    """A Python or NumPy integer, not a bool (``True`` is no count)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    """A real int or float, not a bool or a string, that converts to a float (huge integers
    do not) and is not NaN."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return False
    try:
        return not math.isnan(float(v))
    except OverflowError:
        return False
