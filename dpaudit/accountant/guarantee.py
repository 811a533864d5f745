"""What the accountant returns: a :class:`Guarantee` (an exact epsilon with its derivation,
floats rounded in the safe direction), the :class:`Considered` statements of each node, and
the :class:`UnsupportedEventError` raised where no theorem covers an event."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from dpaudit.accountant import domains
from dpaudit.accountant.render import render_html, render_latex, render_math, render_text
from dpaudit.accountant.statements import Candidate, Step, upper_float
from dpaudit.deferred_imports import sympy
from dpaudit.events import Event
from dpaudit.numeric import EvaluationError, exact_value, float_down, float_up
from dpaudit.theorems.accounting import TIGHTEST
from dpaudit.theorems.base import Theorem

__all__ = ["Considered", "Guarantee", "UnsupportedEventError"]


class UnsupportedEventError(ValueError):
    """No registered result covers an event; the message names the sub-event."""

    def __init__(self, event: Event, whole: Event, reason: str = "") -> None:
        self.event = event
        self.whole = whole
        where = "" if event is whole else f" (inside {whole})"
        extra = f": {reason}" if reason else ""
        super().__init__(f"no theorem covers the sub-event {event}{where}{extra}")


@dataclasses.dataclass(frozen=True)
class Considered:
    """What the rules proved at one node of the event tree: the step of every statement
    ``found`` (one per theorem a rule applied) and, for each, whether it was ``kept`` for
    the parent (the best of each currency; the others are dominated).  Steps only, so a
    guarantee stays picklable."""

    event: Event
    found: tuple[Step, ...]
    kept: tuple[bool, ...]


def _render_float(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.10g}"


@dataclasses.dataclass(frozen=True)
class Guarantee:
    """A proved (epsilon, delta)-DP guarantee of an event.

    Attributes:
        event: the event accounted.
        epsilon: an exact upper bound on epsilon: a
            :class:`~dpaudit.exact_numbers.ExactNumber` when it is a plain number computed
            without sympy, else a sympy expression (symbolic if the event is);
            ``dpaudit.expressions.as_expr`` gives the sympy form of either, and sympy converts
            an exact number by itself (``sympy.simplify(g.epsilon)``).
        delta: the delta the guarantee is stated at (exact).
        derivation: the step that concluded it, with its premises (the whole proof tree).
        candidates: every candidate compared at the top, the chosen one included.
        epsilon_lower: a certified lower bound on the true epsilon at ``delta``, where the
            chosen method is exact for the event (else None).
        assumptions: conditions on the symbolic parameters the guarantee assumes: the
            event's parameter constraints and the side conditions of theorems applied
            conditionally (their domain condition could not be verified on the symbols).
        rejected: the theorems a rule would have applied but whose domain excludes the
            parameters at hand, each with the failing condition.
        considered: every node's statements (:class:`Considered`), children before their
            parents: the candidates a teaching view shows beside the chosen derivation.
    """

    event: Event
    epsilon: sympy.Expr
    delta: sympy.Expr
    derivation: Step
    candidates: tuple[Candidate, ...] = ()
    epsilon_lower: sympy.Expr | None = None
    assumptions: tuple[sympy.Basic, ...] = ()
    rejected: tuple[domains.Rejection, ...] = ()
    considered: tuple[Considered, ...] = dataclasses.field(default=(), compare=False, repr=False)

    @property
    def symbolic(self) -> bool:
        """True when the guarantee depends on symbols."""
        return bool(exact_value(self.epsilon).free_symbols or exact_value(self.delta).free_symbols)

    @property
    def epsilon_upper(self) -> float | None:
        """epsilon as a float rounded *up* (None when symbolic)."""
        return None if self.symbolic else upper_float(self.epsilon)

    @property
    def delta_upper(self) -> float | None:
        """delta as a float rounded *up* (None when symbolic)."""
        return None if self.symbolic else float_up(self.delta)

    @property
    def epsilon_lower_float(self) -> float | None:
        """The certified lower bound as a float rounded *down* (None if there is none)."""
        if self.epsilon_lower is None or exact_value(self.epsilon_lower).free_symbols:
            return None
        return float_down(self.epsilon_lower)

    @property
    def theorem(self) -> Theorem:
        """The theorem that produced :attr:`epsilon`.

        A numeric guarantee is the smallest candidate: the theorem of that candidate.  A
        symbolic one is the candidate whose bound it is, when the minimum reduced to one
        (``10/b`` beats ``5/b + 500/b**2`` for every b); when it is a ``Min(...)`` of several
        bounds, no single theorem gave it, and the answer is :data:`TIGHTEST` (the minimum
        of valid bounds), whose parts :attr:`theorems` lists.
        """
        d = self.derivation
        if d.theorem is not TIGHTEST or not d.premises:
            return d.theorem
        if len(d.premises) == 1:
            return d.premises[0].theorem
        producing = self.theorems
        return producing[0] if len(producing) == 1 else TIGHTEST

    @property
    def theorems(self) -> tuple[Theorem, ...]:
        """The theorems whose bounds make up :attr:`epsilon` (one, or the arguments of a
        symbolic ``Min``), in the order of the candidates."""
        d = self.derivation
        if d.theorem is not TIGHTEST or not d.premises:
            return (d.theorem,)
        if len(d.premises) == 1:
            return (d.premises[0].theorem,)
        parts = self.epsilon.args if isinstance(self.epsilon, sympy.Min) else (self.epsilon,)
        found: list[Theorem] = []
        for c in self.candidates:
            if c.epsilon in parts and c.step.theorem not in found:
                found.append(c.step.theorem)
        return tuple(found) or (TIGHTEST,)

    def text(self) -> str:
        """The guarantee and its derivation as indented text."""
        return render_text(self)

    def latex(self) -> str:
        """The derivation as a LaTeX fragment."""
        return render_latex(self)

    def _repr_html_(self) -> str:
        """The guarantee and its derivation as HTML (shown by Jupyter)."""
        return render_html(self)

    def _repr_latex_(self) -> str:
        """The guarantee as a LaTeX math string (shown by Jupyter where HTML is not)."""
        return render_math(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: exact values as strings, floats rounded in the safe
        direction."""
        return {
            "event": self.event.expression(),
            "epsilon": self.epsilon_upper,
            "epsilon_exact": str(self.epsilon),
            "delta": self.delta_upper,
            "delta_exact": str(self.delta),
            "epsilon_lower": self.epsilon_lower_float,
            "epsilon_lower_theorem": next(
                (
                    c.label
                    for c in self.candidates
                    if self.epsilon_lower is not None and c.epsilon_lower == self.epsilon_lower
                ),
                None,
            ),
            "theorem": self.theorem.name,
            "citation": self.theorem.citation,
            "theorems": [t.name for t in self.theorems],
            "candidates": [
                {"theorem": c.label, "epsilon": _safe_up(c.epsilon), "delta": _safe_up(c.delta)}
                for c in self.candidates
            ],
            "assumptions": [str(a) for a in self.assumptions],
            "not_applicable": [str(r) for r in self.rejected],
            "kind": "upper bound (rounded up)",
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        if self.symbolic:
            return f"{self.event} is ({self.epsilon}, {self.delta})-DP"
        return (
            f"{self.event} is ({_render_float(self.epsilon_upper)}, "
            f"{_render_float(self.delta_upper)})-DP"
        )


def _safe_up(expr: sympy.Expr) -> float | str:
    if exact_value(expr).free_symbols:
        return str(expr)
    try:
        return float_up(expr)
    except EvaluationError:
        return str(expr)
