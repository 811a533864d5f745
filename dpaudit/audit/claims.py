"""Privacy claims that may depend on the dataset, for :func:`dpaudit.audit.audit_records`.

A claim's ``epsilon`` (and ``delta``) is a number, or a function of one dataset (the 2-D
float array the function under audit receives) returning a number: an accountant that gives
epsilon from the dataset's size (Opacus's sample rate ``batch / n``), a noise scale computed
from the data. A neighbouring pair is checked against the *larger* claim of its two datasets
(:meth:`Claim.of_pair`): the claim most favourable to the code, so that a violation of it is a
violation of the claim whichever dataset it is read on.

Every value a claim function returns is validated (a finite-or-infinite number >= 0 for
epsilon, a number in [0, 1) for delta); a bad value or an exception is an error naming
``epsilon(dataset)``, the dataset and what it returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.record_pairs import rows
from dpaudit.audit.validation import check_delta, check_epsilon

__all__ = ["Claim"]

#: A claim's epsilon or delta: a number, or a function of one dataset returning one.
ClaimValue = float | Callable[[np.ndarray], Any]


@dataclass
class Claim:
    """A privacy claim ``(epsilon, delta)``, each a number or a function of the dataset.

    Attributes:
        epsilon: the claimed epsilon, or ``epsilon(dataset)``.
        delta: the claimed delta, or ``delta(dataset)``.
    """

    epsilon: ClaimValue
    delta: ClaimValue = 0.0
    _cache: dict[tuple[str, bytes], float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        """Validate the constant parts (a function is validated on every value it returns).

        Raises:
            ValueError: for an epsilon < 0 or a delta outside [0, 1) (naming it).
        """
        if not callable(self.epsilon):
            check_epsilon(self.epsilon)
        if not callable(self.delta):
            check_delta(self.delta)

    @property
    def depends_on_data(self) -> bool:
        """Whether epsilon or delta is a function of the dataset."""
        return callable(self.epsilon) or callable(self.delta)

    def _value(self, name: str, data: np.ndarray) -> float:
        given = getattr(self, name)
        if not callable(given):
            return float(given)
        key = (name, data.tobytes() + str(data.shape).encode())
        if key in self._cache:
            return self._cache[key]
        where = f"{name}(dataset) on the dataset {rows(data)}"
        try:
            value = given(data)
        except Exception as err:
            raise ValueError(
                f"{where} must return a number, but it raised {type(err).__name__}: "
                f"{' '.join(str(err).split())[:300]}"
            ) from err
        (check_epsilon if name == "epsilon" else check_delta)(value, name=where)
        self._cache[key] = float(value)
        return float(value)

    def of(self, data: np.ndarray) -> tuple[float, float]:
        """``(epsilon, delta)`` claimed for one dataset.

        Raises:
            ValueError: if a claim function raises or returns a bad value (naming it, the
                dataset and the value).
        """
        return self._value("epsilon", data), self._value("delta", data)

    def of_pair(self, d0: np.ndarray, d1: np.ndarray) -> tuple[float, float]:
        """``(epsilon, delta)`` a neighbouring pair is checked against: the larger of its two
        datasets' claims, each.

        Raises:
            ValueError: as :meth:`of`.
        """
        e0, t0 = self.of(d0)
        e1, t1 = self.of(d1)
        return max(e0, e1), max(t0, t1)

    def describe_pair(self, d0: np.ndarray, d1: np.ndarray) -> str:
        """How the pair's claim was read, in words ("" for a constant claim)."""
        if not self.depends_on_data:
            return ""
        (e0, t0), (e1, t1) = self.of(d0), self.of(d1)
        parts = []
        if callable(self.epsilon):
            parts.append(
                f"epsilon(dataset) = {e0:g} on d0 ({len(d0)} records), {e1:g} on d1 "
                f"({len(d1)} records)"
            )
        if callable(self.delta):
            parts.append(
                f"delta(dataset) = {t0:g} on d0 ({len(d0)} records), {t1:g} on d1 "
                f"({len(d1)} records)"
            )
        return "; ".join(parts) + "; the pair is checked against the larger of each"
