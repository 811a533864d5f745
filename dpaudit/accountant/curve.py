"""The privacy profile epsilon(delta) of an event, with its certified band, as data and a plot.

Each point is the accountant's guarantee at that delta (:meth:`Accountant.guarantee`): an upper
bound on epsilon rounded up, and the certified lower bound beside it when a result exact for
the event gives one (0.0 otherwise: epsilon is never negative).  The band is then made
monotone, which keeps it sound: a mechanism that is (eps, delta_j)-DP is (eps, delta)-DP for
every delta >= delta_j, so ``upper(delta_i) = min_{j <= i} upper_j``; and the true epsilon
decreases in delta, so ``lower(delta_i) = max_{j >= i} lower_j`` (deltas ascending).

Privacy:
    For each i: ``epsilon_lower[i] <= eps*(deltas[i]) <= epsilon_upper[i]``, where
    ``eps*(delta)`` is the smallest epsilon at which the event is (epsilon, delta)-DP.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.events.base import Event

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


__all__ = ["DEFAULT_DELTAS", "MAX_POINTS", "PrivacyCurve", "plot_privacy_curve", "privacy_curve"]

#: The deltas of a curve when none are given: 10^-10 to 10^-1, two points per decade.
DEFAULT_DELTAS: tuple[float, ...] = tuple(float(x) for x in np.logspace(-10, -1, 19))
#: The most points one curve may ask for (each is one accountant query).
MAX_POINTS = 200


@dataclasses.dataclass(frozen=True)
class PrivacyCurve:
    """epsilon(delta) with its certified band.

    Attributes:
        event: the event.
        deltas: the deltas, ascending.
        epsilon_upper: upper bounds on epsilon at each delta (rounded up; ``inf`` where no
            result gives one).
        epsilon_lower: certified lower bounds (rounded down; 0.0 where none is certified).
        theorems: the result that gave each point's upper bound (None where there is none).
    """

    event: Event
    deltas: np.ndarray
    epsilon_upper: np.ndarray
    epsilon_lower: np.ndarray
    theorems: tuple[str | None, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (an infinite upper bound is ``null``)."""
        return {
            "event": self.event.expression(),
            "points": [
                {
                    "delta": float(d),
                    "epsilon_upper": float(u) if math.isfinite(u) else None,
                    "epsilon_lower": float(lo),
                    "theorem": t,
                }
                for d, u, lo, t in zip(
                    self.deltas, self.epsilon_upper, self.epsilon_lower, self.theorems, strict=True
                )
            ],
            "kind": "epsilon_upper: upper bound (rounded up); epsilon_lower: certified lower "
            "bound (rounded down); null: no bound",
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def text(self) -> str:
        """A table of the points."""
        lines = [f"privacy profile of {self.event}", f"{'delta':>10}  {'lower':>12}  {'upper':>12}"]
        for d, u, lo, t in zip(
            self.deltas, self.epsilon_upper, self.epsilon_lower, self.theorems, strict=True
        ):
            lines.append(f"{d:10.3g}  {lo:12.6g}  {u:12.6g}  {t or 'no bound'}")
        return "\n".join(lines)

    def plot(self, ax: Axes | None = None) -> Figure:
        """:func:`plot_privacy_curve` of this curve."""
        return plot_privacy_curve(self, ax)


def _deltas(deltas: Any) -> np.ndarray:
    values = DEFAULT_DELTAS if deltas is None else deltas
    try:
        arr = np.asarray([float(d) for d in values], dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"deltas must be numbers in (0, 1), got {deltas!r}") from err
    if not 1 <= arr.size <= MAX_POINTS:
        raise ValueError(f"deltas must hold 1 to {MAX_POINTS} values, got {arr.size}")
    bad = [float(d) for d in arr if not (0 < d < 1)]
    if bad:
        raise ValueError(f"each delta must be in (0, 1), got {bad[0]!r}")
    return np.unique(arr)


def privacy_curve(accountant: Any, event: Event, deltas: Any = None) -> PrivacyCurve:
    """The curve of ``event`` at ``deltas`` as ``accountant`` (an
    :class:`~dpaudit.accountant.core.Accountant`) bounds it (see :meth:`Accountant.curve`).

    Raises:
        ValueError: for deltas outside (0, 1), more than :data:`MAX_POINTS` of them, or a
            symbolic event.
    """
    ds = _deltas(deltas)
    if event.free_symbols:
        names = ", ".join(sorted(str(x) for x in event.free_symbols))
        raise ValueError(f"event must be numeric for a curve, got symbols {names} in {event}")
    upper = np.full(ds.size, math.inf)
    lower = np.zeros(ds.size)
    theorems: list[str | None] = [None] * ds.size
    for i, d in enumerate(ds):
        try:
            g = accountant.guarantee(event, float(d))
        except ValueError as err:
            if "no result proves" not in str(err):
                raise
            continue  # no result bounds epsilon at this delta: the point stays unbounded
        upper[i] = g.epsilon_upper if g.epsilon_upper is not None else math.inf
        lower[i] = g.epsilon_lower_float or 0.0
        theorems[i] = g.theorem.name
    upper = np.minimum.accumulate(upper)  # (eps, delta_j)-DP => (eps, delta)-DP, delta >= delta_j
    lower = np.maximum.accumulate(lower[::-1])[::-1]  # eps*(delta) decreases in delta
    return PrivacyCurve(event, ds, upper, lower, tuple(theorems))


def plot_privacy_curve(curve: PrivacyCurve, ax: Axes | None = None) -> Figure:
    """Plot epsilon against delta (log scale): the upper bound and the certified band.

    Args:
        curve: the curve.
        ax: axes to draw on (default: a new figure's).

    Returns:
        The figure drawn on (save it with ``fig.savefig(path)``).
    """
    from matplotlib.figure import Figure  # imported here: start-up stays fast

    if ax is None:
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.subplots()
    else:
        # matplotlib types ax.figure as Figure | SubFigure: an Axes the caller made in a
        # subfigure gives the SubFigure back (the declared Figure is then not quite true)
        fig = ax.figure  # type: ignore[assignment]
    finite = np.isfinite(curve.epsilon_upper)
    ax.fill_between(
        curve.deltas[finite],
        curve.epsilon_lower[finite],
        curve.epsilon_upper[finite],
        alpha=0.25,
        label="certified band",
    )
    ax.plot(curve.deltas[finite], curve.epsilon_upper[finite], marker=".", label="upper bound")
    if np.any(curve.epsilon_lower > 0):
        ax.plot(curve.deltas, curve.epsilon_lower, linestyle="--", label="certified lower bound")
    ax.set_xscale("log")
    ax.set_xlabel("delta")
    ax.set_ylabel("epsilon")
    ax.set_title(str(curve.event), fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig
