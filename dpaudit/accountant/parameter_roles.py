"""Where a parameter sits in an event, and which way epsilon moves with it.

Calibration (:mod:`dpaudit.accountant.calibration`) asks for the best value of one symbol of an
event: the smallest noise, the largest number of steps or sampling rate.  Which end is "best"
is decided here from the symbol's *roles*: every field of every node whose value contains the
symbol, looked up in :data:`ROLES` (a noise scale: epsilon falls as it grows; a number of steps,
a sampling rate, a sensitivity, a privacy parameter: epsilon grows with it), times the sign of
the field's derivative in the symbol (``Gaussian(2*s)`` grows with ``s``, ``Gaussian(1/s)``
shrinks).  Each role is a theorem about the true epsilon:

* noise scale -- more noise is a post-processing of less: ``N(0, s2^2) = N(0, s1^2) + N(0,
  s2^2 - s1^2)`` for ``s2 >= s1``, and the Laplace and discrete analogues hold through the
  privacy profiles, which decrease in the scale (Balle and Wang 2018, Theorem 8, for the
  Gaussian; the Laplace profile, Mironov 2017 Table II, likewise);
* number of steps, group size -- k steps' output is a post-processing of k + 1 steps' (drop
  the last), so the profile is non-decreasing in k;
* sampling rate -- the hockey-stick divergence of ``(1 - q) P + q Q`` against ``P`` is convex
  in ``q`` and 0 at ``q = 0``, hence non-decreasing (Zhu, Dong, Wang 2022, Section 5);
* sensitivity and privacy parameters (epsilon, delta, rho of a declared guarantee) -- a
  guarantee at a smaller value implies the one at a larger value.

Privacy:
    Nothing here is a bound: the roles only choose the search direction; the value returned by
    a calibration is certified by the accountant at that value, and monotonicity is also
    checked numerically on the certified bounds as the search goes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit import events as ev
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import is_sympy_object

__all__ = [
    "DECREASING",
    "INCREASING",
    "ROLES",
    "CalibrationError",
    "NotMonotoneError",
    "Occurrence",
    "direction",
    "occurrences",
]

#: epsilon grows with the field (steps, rate, sensitivity, a declared epsilon): the best value
#: is the largest that meets the target.
INCREASING = 1
#: epsilon falls as the field grows (a noise scale): the best value is the smallest.
DECREASING = -1

#: (event class, field) -> (what the field is, which way epsilon moves as it grows).
ROLES: dict[tuple[type[Event], str], tuple[str, int]] = {
    (ev.Gaussian, "sigma"): ("noise scale", DECREASING),
    (ev.Gaussian, "sensitivity"): ("sensitivity", INCREASING),
    (ev.Laplace, "scale"): ("noise scale", DECREASING),
    (ev.Laplace, "sensitivity"): ("sensitivity", INCREASING),
    (ev.DiscreteGaussian, "sigma"): ("noise scale", DECREASING),
    (ev.DiscreteGaussian, "sensitivity"): ("sensitivity", INCREASING),
    (ev.DiscreteLaplace, "scale"): ("noise scale", DECREASING),
    (ev.DiscreteLaplace, "sensitivity"): ("sensitivity", INCREASING),
    (ev.Exponential, "epsilon"): ("privacy parameter", INCREASING),
    (ev.RandomizedResponse, "epsilon"): ("privacy parameter", INCREASING),
    (ev.ReportNoisyMax, "epsilon"): ("privacy parameter", INCREASING),
    (ev.AboveThreshold, "epsilon"): ("privacy parameter", INCREASING),
    (ev.AboveThreshold, "cutoff"): ("number of answers", INCREASING),
    (ev.PureDP, "epsilon"): ("privacy parameter", INCREASING),
    (ev.ApproxDP, "epsilon"): ("privacy parameter", INCREASING),
    (ev.ApproxDP, "delta"): ("privacy parameter", INCREASING),
    (ev.ZCDP, "rho"): ("privacy parameter", INCREASING),
    (ev.SelfComposed, "count"): ("number of steps", INCREASING),
    (ev.Group, "size"): ("group size", INCREASING),
    (ev.PoissonSampled, "rate"): ("sampling rate", INCREASING),
    (ev.SampledWithoutReplacement, "sample"): ("sample size", INCREASING),
    (ev.SampledWithoutReplacement, "population"): ("population size", DECREASING),
}


class CalibrationError(ValueError):
    """A calibration that cannot be done: the message is one line naming the parameter, what
    is admissible and what was found."""


class NotMonotoneError(CalibrationError):
    """epsilon is not known (or found not) to be monotone in the parameter."""


@dataclasses.dataclass(frozen=True)
class Occurrence:
    """One field of one node whose value contains the parameter.

    Attributes:
        event: the node.
        field: the field's name.
        value: the field's value (a sympy expression in the parameter).
        role: what the field is ("noise scale", "number of steps", ...).
        sign: which way epsilon moves as the *parameter* grows here (:data:`INCREASING` or
            :data:`DECREASING`): the role's direction times the sign of the field's
            derivative in the parameter.
        integer: whether the field must be an integer.
        bounds: the field's admissible range ``(low, high, low_open, high_open)``.
    """

    event: Event
    field: str
    value: Any
    role: str
    sign: int
    integer: bool
    bounds: tuple[Any, Any, bool, bool]

    def where(self) -> str:
        """The occurrence as a reader finds it: ``sigma of Gaussian(s)``."""
        return f"{self.field} of {self.event}"


def _nodes(event: Event) -> list[Event]:
    out = [event]
    for child in event.children():
        out.extend(_nodes(child))
    return out


def _slope(value: Any, symbol: sympy.Symbol) -> int | None:
    """The sign of d value / d symbol for a positive symbol: +1, -1, or None when sympy
    cannot decide it for every positive value (the expression was built by dpaudit's
    restricted parser, never from evaluated text)."""
    if value == symbol:
        return 1
    positive = sympy.Dummy(symbol.name, positive=True)
    derivative = sympy.diff(value.xreplace({symbol: positive}), positive)
    if derivative.is_positive:
        return 1
    if derivative.is_negative:
        return -1
    return None


def occurrences(event: Event, name: str) -> list[Occurrence]:
    """Every field of every node of ``event`` whose value contains the symbol ``name``.

    Raises:
        CalibrationError: for a field that is not in :data:`ROLES` (its effect on epsilon is
            not known), or whose value's direction in the symbol cannot be decided.
    """
    found: list[Occurrence] = []
    for node in _nodes(event):
        for field in dataclasses.fields(node):
            value = getattr(node, field.name)
            if not is_sympy_object(value):
                continue
            matching = [s for s in value.free_symbols if s.name == name]
            if not matching:
                continue
            symbol = matching[0]
            role = ROLES.get((type(node), field.name))
            if role is None:
                raise CalibrationError(
                    f"{name} enters {field.name} of {node}, whose effect on epsilon dpaudit "
                    "does not know; calibrate a noise scale, a number of steps, a sampling "
                    "rate, a sensitivity or a privacy parameter"
                )
            slope = _slope(value, symbol)
            if slope is None:
                raise CalibrationError(
                    f"{name} enters {field.name} of {node} as {value}, which is not monotone "
                    f"in {name} for every {name} > 0 (or sympy cannot tell); write the field "
                    f"as a monotone function of {name}"
                )
            spec = field.metadata.get("range") or (None, None, True, True, False)
            low, high, low_open, high_open, integer = spec
            found.append(
                Occurrence(
                    node,
                    field.name,
                    value,
                    role[0],
                    role[1] * slope,
                    bool(integer),
                    (low, high, low_open, high_open),
                )
            )
    return found


def direction(name: str, found: list[Occurrence]) -> int:
    """Which way epsilon moves as the parameter grows: the common sign of its occurrences.

    Raises:
        NotMonotoneError: when two occurrences pull opposite ways (epsilon is then not known
            to be monotone in the parameter).
    """
    up = [o for o in found if o.sign == INCREASING]
    down = [o for o in found if o.sign == DECREASING]
    if up and down:
        raise NotMonotoneError(
            f"epsilon is not known to be monotone in {name}: it grows with {name} through "
            f"{up[0].where()} (a {up[0].role}) and falls through {down[0].where()} (a "
            f"{down[0].role}); calibrate a parameter that enters one way only"
        )
    return INCREASING if up else DECREASING
