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


def check_epsilon(epsilon: Any, name: str = "epsilon") -> None:
    """A claimed epsilon: a real number >= 0 (``math.inf`` allowed: no finite claim)."""
    check(name, epsilon, is_number(epsilon) and epsilon >= 0, "a number >= 0")


def check_delta(delta: Any, name: str = "delta") -> None:
    """A delta: a real number in [0, 1)."""
    check(name, delta, is_number(delta) and 0.0 <= delta < 1.0, "a number in [0, 1)")


def check_confidence(confidence: Any) -> None:
    """A confidence level: a float strictly between 0 and 1 (``1`` or ``95`` are refused: a
    percentage or a certainty is not a level)."""
    check(
        "confidence",
        confidence,
        isinstance(confidence, float) and 0.0 < confidence < 1.0,
        "a float in (0, 1)",
    )
