"""The privacy loss distribution of an event alone: what a calibration's search evaluates.

:class:`~dpaudit.accountant.Accountant` applies every registered result at every node; when
the answer is a privacy loss distribution's (DP-SGD schedules), most of an evaluation's time
goes to the other results (amplification at the delta budget, RDP, zCDP, their interval
arithmetic).  :func:`pld_candidate` walks the event with the PLD rules only
(:data:`~dpaudit.accountant.rules.PLD_RULES`, the same functions the accountant applies) and
converts the PLD at ``delta`` exactly as the accountant does
(:meth:`~dpaudit.accountant.currencies.LossDistribution.candidates`), so its bounds are the
accountant's PLD candidate's, at a fraction of the cost.

Privacy:
    The candidate is one the accountant itself would list (same rules, same domain checks,
    same conversion); its upper bound is certified, and the accountant's guarantee (the
    smallest of its candidates) is at most it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dpaudit.accountant import domains
from dpaudit.accountant.calibration_search import Probe
from dpaudit.accountant.currencies import (
    COARSEST_GRID,
    COARSEST_ONLY,
    GRID_HINT,
    ONE_TRANSFORM_RESERVE,
    TARGET_GAP,
    GridHint,
    LossDistribution,
    next_grid,
)
from dpaudit.accountant.rules import PLD_RULES
from dpaudit.accountant.statements import Candidate, as_delta
from dpaudit.events.base import Event
from dpaudit.numeric import PRECISION_LOCK, float_down, float_up

__all__ = ["NoLossDistributionError", "PLDProbe", "pld_candidate", "pld_evaluator"]


@dataclasses.dataclass(frozen=True)
class PLDProbe:
    """What one PLD evaluation found: the candidate (None: no bound) and the grid step its
    upper bound came from (None on the coarsest grid)."""

    candidate: Candidate | None
    grid: float | None


class NoLossDistributionError(Exception):
    """The event has no privacy loss distribution (a node no PLD rule covers): a calibration
    then searches with the whole accountant."""


def _loss_distribution(event: Event) -> LossDistribution | None:
    """The event's PLD statement from its children's, by the PLD rules (None when a node has
    none)."""
    children: list[list[LossDistribution]] = []
    for child in event.children():
        found = _loss_distribution(child)
        if found is None:
            return None
        children.append([found])
    for rule in PLD_RULES.get(type(event), []):
        for statement in rule(event, children, None):
            if isinstance(statement, LossDistribution):
                return statement
    return None


def pld_candidate(event: Event, delta: Any) -> Candidate | None:
    """The accountant's PLD candidate for a numeric ``event`` at ``delta`` (its certified
    epsilon upper bound, and lower bound when the PLD is the event's own), or None when the
    event has no PLD or the PLD proves nothing at this delta.

    Args:
        event: a numeric event tree.
        delta: the delta, in (0, 1).

    Returns:
        The :class:`~dpaudit.accountant.statements.Candidate`, or None.

    Raises:
        ValueError: for a delta outside [0, 1).
        NoLossDistributionError: when a node of the event has no PLD rule.
    """
    target = as_delta(delta)
    with PRECISION_LOCK, domains.context(tuple(event.constraints())):
        statement = _loss_distribution(event)
        if statement is None:
            raise NoLossDistributionError(f"{event} has no privacy loss distribution")
        found = statement.candidates(target)
    return found[0] if found else None


def pld_evaluator(
    at: Callable[[Fraction], Event], delta: Any, quick: bool, hint: GridHint | None = None
) -> Callable[[Fraction], Probe]:
    """value -> the certified epsilon bounds of the PLD candidate of ``at(value)`` at
    ``delta``, as a :class:`~dpaudit.accountant.calibration_search.Probe`: on the coarsest
    PLD grid (``quick``; :data:`~dpaudit.accountant.currencies.COARSEST_ONLY`) or refined as
    the accountant refines it, starting on the grid the previous refined evaluation ended on
    (``hint``, a :class:`~dpaudit.accountant.currencies.GridHint` shared by the coarse and the
    refined evaluator of one search; before any refined evaluation, on the grid the refinement
    would build after the latest coarse one, :func:`~dpaudit.accountant.currencies.next_grid`).
    An upper bound of inf when the PLD proves nothing there.

    Raises (from the returned function):
        NoLossDistributionError: when the event has no PLD.
    """

    shared = GridHint() if hint is None else hint

    def evaluate(v: Fraction) -> Probe:
        event = at(v)
        token = COARSEST_ONLY.set(quick)
        grid = GRID_HINT.set(None if quick else shared)
        reserve = ONE_TRANSFORM_RESERVE.set(False)  # the search decides on upper bounds
        try:
            found = pld_candidate(event, delta)
        finally:
            ONE_TRANSFORM_RESERVE.reset(reserve)
            GRID_HINT.reset(grid)
            COARSEST_ONLY.reset(token)
        result = PLDProbe(found, None if quick else shared.start)
        if found is None:
            return Probe(v, 0.0, math.inf, result, not quick)
        lower = 0.0 if found.epsilon_lower is None else max(0.0, float_down(found.epsilon_lower))
        upper = float_up(found.epsilon)
        if quick and not shared.refined:  # where the first refined evaluation should start
            gap = upper - lower
            coarse_enough = found.epsilon_lower is None or gap <= TARGET_GAP * upper
            shared.start = None if coarse_enough else next_grid(COARSEST_GRID, gap, upper)
        return Probe(v, lower, upper, result, not quick)

    return evaluate
