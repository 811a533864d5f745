"""What :func:`~dpaudit.accountant.calibrate` returns: :class:`Calibration`, the value found
and its certified bounds, with its text and JSON forms.

Privacy:
    Nothing is computed here: ``upper`` and ``lower`` are the accountant's certified bounds at
    ``value_exact``, carried as they were computed (rounded up and down).
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from typing import Any

from dpaudit.accountant.core import Guarantee
from dpaudit.accountant.profile import DeltaGuarantee
from dpaudit.accountant.statements import show
from dpaudit.events import Event
from dpaudit.numeric import float_down, float_up

__all__ = ["Calibration", "exact_text"]


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The best value of a parameter whose certified guarantee meets a target.

    Attributes:
        parameter: the parameter's name.
        value: the value (an int for an integer parameter, else a float on the private side
            of ``value_exact``).
        value_exact: the exact value certified (an integer, or a decimal).
        event: the event with the value substituted.
        target: ``"epsilon"`` (an epsilon target at ``delta``) or ``"delta"`` (a delta target
            at ``epsilon``).
        epsilon_target: the epsilon target (epsilon mode), else None.
        delta: the delta the guarantee is stated at (epsilon mode), else None.
        epsilon: the fixed epsilon (delta mode), else None.
        delta_target: the delta target (delta mode), else None.
        upper: the certified upper bound at ``value`` (epsilon or delta; rounded up).
        lower: a certified lower bound at ``value`` (rounded down; 0.0 when none).
        direction: ``"smallest"`` or ``"largest"``: which value is best.
        roles: where the parameter enters the event (``"noise scale: sigma of Gaussian(s)"``).
        theorem: the name of the result that gave ``upper`` (None: the trivial delta 1).
        citation: its citation.
        not_certified: the nearest value beyond ``value`` that was tried and whose certified
            upper bound misses the target (None when ``value`` is an end of the range).
        impossible: the nearest value beyond ``value`` whose certified *lower* bound misses
            the target: no accountant can certify it (None when none was tried).
        evaluations: how many values the search evaluated.
        guarantee: the accountant's result at ``value`` (a
            :class:`~dpaudit.accountant.Guarantee`, or a
            :class:`~dpaudit.accountant.DeltaGuarantee` in delta mode).
    """

    parameter: str
    value: int | float
    value_exact: Fraction
    event: Event
    target: str
    epsilon_target: Any
    delta: Any
    epsilon: Any
    delta_target: Any
    upper: float
    lower: float
    direction: str
    roles: tuple[str, ...]
    theorem: str | None
    citation: str | None
    not_certified: int | float | None
    impossible: int | float | None
    evaluations: int
    guarantee: Guarantee | DeltaGuarantee = dataclasses.field(repr=False, compare=False)

    @property
    def epsilon_upper(self) -> float | None:
        """The certified upper bound on epsilon at ``value`` (epsilon mode; rounded up)."""
        return self.upper if self.target == "epsilon" else None

    @property
    def epsilon_lower(self) -> float | None:
        """The certified lower bound on epsilon at ``value`` (epsilon mode; rounded down)."""
        return self.lower if self.target == "epsilon" else None

    @property
    def delta_upper(self) -> float | None:
        """The certified upper bound on delta at ``value`` (delta mode; rounded up)."""
        return self.upper if self.target == "delta" else None

    @property
    def delta_lower(self) -> float | None:
        """The certified lower bound on delta at ``value`` (delta mode; rounded down)."""
        return self.lower if self.target == "delta" else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: the keys of the mode's target first, then how it was found."""
        if self.target == "epsilon":
            head = {
                "parameter": self.parameter,
                "value": self.value,
                "epsilon_upper": self.upper,
                "epsilon_lower": self.lower,
                "epsilon_target": float_down(self.epsilon_target),
                "delta": float_up(self.delta),
            }
        else:
            head = {
                "parameter": self.parameter,
                "value": self.value,
                "delta_upper": self.upper,
                "delta_lower": self.lower,
                "delta_target": float_down(self.delta_target),
                "epsilon": float_down(self.epsilon),
            }
        return {
            **head,
            "value_exact": exact_text(self.value_exact),
            "direction": self.direction,
            "roles": list(self.roles),
            "event": self.event.expression(),
            "theorem": self.theorem,
            "citation": self.citation,
            "not_certified": self.not_certified,
            "impossible": self.impossible,
            "evaluations": self.evaluations,
            "kind": f"value: the {self.direction} value whose certified {self.target} upper "
            f"bound meets the target; {self.target}_upper: upper bound (rounded up); "
            f"{self.target}_lower: certified lower bound (rounded down)",
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def text(self) -> str:
        """The result and its evidence as a few lines of text."""
        q = self.target
        at = (
            f"at delta = {show(self.delta)}"
            if q == "epsilon"
            else f"at epsilon = {show(self.epsilon)}"
        )
        goal = self.epsilon_target if q == "epsilon" else self.delta_target
        lines = [
            f"{self.parameter} = {exact_text(self.value_exact)}  ({self.direction} value "
            f"whose certified {q} meets {q} <= {show(goal)} {at})",
            f"  {self.event}",
            f"  {q} in [{self.lower:.10g}, {self.upper:.10g}]  (certified; upper rounded up, "
            "lower rounded down)",
            f"  by {self.theorem or 'none'}" + (f" [{self.citation}]" if self.citation else ""),
            f"  {self.parameter} enters as: " + "; ".join(self.roles),
        ]
        if self.not_certified is not None:
            lines.append(
                f"  {self.parameter} = {self.not_certified}: certified {q} bound misses the "
                "target (tried)"
            )
        if self.impossible is not None:
            lines.append(
                f"  {self.parameter} = {self.impossible}: certified lower bound on {q} exceeds "
                "the target (no accountant can certify it)"
            )
        lines.append(f"  {self.evaluations} values evaluated")
        return "\n".join(lines)

    def __str__(self) -> str:
        value = exact_text(self.value_exact)
        return f"{self.parameter} = {value} ({self.target} <= {self.upper:.6g})"


def exact_text(v: Fraction) -> str:
    """An integer, or the decimal the value is (every value tried is a decimal)."""
    if v.denominator == 1:
        return str(v.numerator)
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 50
        text = format(Decimal(v.numerator) / Decimal(v.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
