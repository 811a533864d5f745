"""ConfidentWinnow (source document 004, Bun and Fang, Algorithm 4.1, non-private) and its
update bound (Lemma 4.2), with the input checks the Winnow modules share.  See
:mod:`mechanisms.winnow` for DP-Winnow and the reconstructions."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from dpaudit import events as ev

_R1 = ev.Relation.REPLACE_ONE


def _positive(name: str, value: Any) -> float:
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a number in (0, inf), got {value!r}")
    return float(value)


def _in_open(name: str, value: Any, low: float, high: float) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if not ok or not low < float(value) < high:
        raise ValueError(f"{name} must be a number in ({low:g}, {high:g}), got {value!r}")
    return float(value)


def _count(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


def _stream(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = np.asarray(x), np.asarray(y)
    if xs.ndim != 2 or xs.shape[0] < 1 or not (np.abs(xs) == 1).all():
        raise ValueError(
            f"x must be a (T, d) array with entries in {{-1, 1}}, got shape {xs.shape}"
        )
    if ys.shape != (xs.shape[0],) or not (np.abs(ys) == 1).all():
        raise ValueError(f"y must be T = {xs.shape[0]} labels in {{-1, 1}}, got shape {ys.shape}")
    return xs.astype(np.int64), ys.astype(np.int64)


def _sgn(v: float) -> int:
    return 1 if v >= 0 else -1


def multiplicative_update(w: np.ndarray, x: np.ndarray, y: int, eta: float) -> np.ndarray:
    """One multiplicative-weights step (Algorithm 4.1, update line):
    w_j <- w_j exp(eta y x_j) / sum_k w_k exp(eta y x_k)."""
    v = np.asarray(w, dtype=float) * np.exp(eta * y * np.asarray(x, dtype=float))
    return v / v.sum()


def confident_winnow_update_bound(d: int, eta: float, rho: float, c: float) -> float:
    """Lemma 4.2: ConfidentWinnow makes at most log d / ((1 - c) eta rho - eta^2 / 2)
    updates on any sequence consistent with a rho-margin halfspace v >= 0, ||v||_1 = 1.

    Args:
        d: dimension, >= 1.
        eta: learning rate, > 0.
        rho: margin, > 0.
        c: confidence ratio, in (0, 1/2) as the lemma assumes (we accept [0, 1)).

    Returns:
        The bound (a float).

    Raises:
        ValueError: on a parameter outside its range, or if (1 - c) eta rho <= eta^2 / 2
            (the bound is then void: take eta < 2 (1 - c) rho).
    """
    d = _count("d", d)
    eta, rho = _positive("eta", eta), _positive("rho", rho)
    c = float(c)
    if not 0.0 <= c < 1.0:
        raise ValueError(f"c must be a number in [0, 1), got {c!r}")
    gain = (1 - c) * eta * rho - eta**2 / 2
    if gain <= 0:
        raise ValueError(
            f"eta must be in (0, 2 (1 - c) rho) = (0, {2 * (1 - c) * rho:g}) for "
            f"the bound to hold, got {eta!r}"
        )
    return math.log(d) / gain


@dataclasses.dataclass(frozen=True)
class ConfidentWinnowRun:
    """What a ConfidentWinnow run did.

    Attributes:
        predictions: sgn <w^(t), x^(t)> per round.
        updated: whether round t performed a multiplicative update.
        weights: the final weight vector.
        mistakes: rounds predicted wrongly.
    """

    predictions: np.ndarray
    updated: np.ndarray
    weights: np.ndarray
    mistakes: int

    @property
    def updates(self) -> int:
        """Number of updates."""
        return int(self.updated.sum())


class ConfidentWinnow:
    """ConfidentWinnow (004, Algorithm 4.1): Winnow that also updates on unconfident correct
    predictions when the adversary's instruction bit says so.

    Round t updates iff sgn <w, x> != y, or -c rho < <w, x> < c rho and b^(t) = 1.

    Args:
        d: dimension, >= 1.
        eta: learning rate, > 0.
        rho: margin parameter, > 0.
        c: confidence parameter, in [0, 1).

    Privacy:
        None: this is the non-private subroutine that DP-Winnow's analysis runs alongside
        (Lemma 4.7).
    """

    def __init__(self, d: int, eta: float, rho: float, c: float = 0.5) -> None:
        self.d = _count("d", d)
        self.eta = _positive("eta", eta)
        self.rho = _positive("rho", rho)
        if not 0.0 <= float(c) < 1.0:
            raise ValueError(f"c must be a number in [0, 1), got {c!r}")
        self.c = float(c)

    def run(self, x: Any, y: Any, instructions: Any = None) -> ConfidentWinnowRun:
        """Play the T rounds of ``(x, y)`` with instruction bits ``instructions`` (default:
        all 1, i.e. update on every unconfident round).

        Raises:
            ValueError: on a malformed stream or instructions.
        """
        xs, ys = _stream(x, y)
        if xs.shape[1] != self.d:
            raise ValueError(f"x must have d = {self.d} columns, got {xs.shape[1]}")
        t = xs.shape[0]
        b = np.ones(t, dtype=bool) if instructions is None else np.asarray(instructions)
        if b.shape != (t,) or not np.isin(b, (0, 1)).all():
            raise ValueError(f"instructions must be T = {t} bits, got shape {b.shape}")
        w = np.full(self.d, 1.0 / self.d)
        preds = np.empty(t, dtype=np.int64)
        updated = np.zeros(t, dtype=bool)
        margin = self.c * self.rho
        for i in range(t):
            value = float(w @ xs[i])
            preds[i] = _sgn(value)
            if preds[i] != ys[i] or (-margin < value < margin and b[i]):
                w = multiplicative_update(w, xs[i], int(ys[i]), self.eta)
                updated[i] = True
        return ConfidentWinnowRun(preds, updated, w, int((preds != ys).sum()))
