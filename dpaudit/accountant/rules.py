"""Rules: how each kind of event turns its children's statements into its own.

A rule is a function ``rule(event, children, budget) -> list[Statement]`` registered for an
event class with :func:`register_rule`.  ``children`` holds, for each child event, the
statements already derived for it; ``budget`` is the delta this node may spend when a child's
guarantee must be converted to (epsilon, delta) form (the top-level delta, split evenly among
composed parts).  A rule returns every statement it can prove; the accountant keeps the best
of each currency.  Rules never guess: a rule that cannot prove anything returns ``[]``.

This module is the registry and the helpers rules share; the rules themselves live by the
events they cover: :mod:`~dpaudit.accountant.primitive_rules` (the leaves),
:mod:`~dpaudit.accountant.combinator_rules` (composition, parallel, post-processing, group),
and :mod:`~dpaudit.accountant.tight`, :mod:`~dpaudit.accountant.sampling`,
:mod:`~dpaudit.accountant.cover`, :mod:`~dpaudit.accountant.stability`.  The package
:mod:`dpaudit.accountant` imports them all, in that order (the order of :data:`RULES`' lists).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from dpaudit.accountant.statements import (
    Candidate,
    Statement,
    Step,
    compare,
    settled,
    show,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.numeric import EvaluationError, float_up
from dpaudit.theorems.accounting import TIGHTEST

Children = Sequence[Sequence[Statement]]
Rule = Callable[[Event, Children, "sympy.Expr | None"], list[Statement]]

_E = TypeVar("_E", bound=Event)
_S = TypeVar("_S", bound=Statement)
#: A statement whose float estimate exceeds the best candidate so far by more than this
#: (relative, and absolute) is not converted (:func:`best_candidate`): far above the float
#: errors of the estimate (about 1e-12 relative).
ESTIMATE_MARGIN = 1e-6
#: A rule for one event class (what :func:`register_rule` decorates).
RuleFor = Callable[[_E, Children, "sympy.Expr | None"], list[Statement]]

#: The rules for each event class, tried in order; all their statements are kept.
RULES: dict[type[Event], list[Rule]] = {}

#: Event classes whose rules, given children evaluated *without* a delta budget, need no
#: budgeted statements of them when the predicate holds of those children (e.g. a composition
#: of parts that all have privacy loss distributions: no part's (eps, delta/N) is used).  The
#: accountant then evaluates the children once, without budget: the conversions at the
#: budget (amplification candidates, a PLD's epsilon at delta/N, advanced composition) are
#: not computed, which is most of the cost of a schedule of many distinct parts.
BUDGET_FREE: dict[type[Event], Callable[[Children], bool]] = {}

#: The rules that build privacy loss distributions, by event class (each is also in
#: :data:`RULES`): a calibration's search evaluates only these
#: (:mod:`~dpaudit.accountant.pld_probe`), the other results' conversions being most of an
#: evaluation's cost when the PLD is the tightest.
PLD_RULES: dict[type[Event], list[Rule]] = {}

__all__ = [
    "BUDGET_FREE",
    "PLD_RULES",
    "RULES",
    "Children",
    "Rule",
    "best_candidate",
    "of_currency",
    "register_rule",
]


def register_rule(
    event_type: type[_E], *, pld: bool = False
) -> Callable[[RuleFor[_E]], RuleFor[_E]]:
    """Decorator: add a rule for ``event_type`` (more rules for one type may be added);
    ``pld``: the rule builds the event's privacy loss distribution from its children's
    (also listed in :data:`PLD_RULES`)."""

    def add(rule: RuleFor[_E]) -> RuleFor[_E]:
        # RULES[t] is only ever applied to events of type t, which the mapping's type cannot say
        RULES.setdefault(event_type, []).append(cast(Rule, rule))
        if pld:
            PLD_RULES.setdefault(event_type, []).append(cast(Rule, rule))
        return rule

    return add


def of_currency(statements: Sequence[Statement], cls: type[_S]) -> list[_S]:
    """The statements of one currency."""
    return [s for s in statements if isinstance(s, cls)]


def best_candidate(statements: Sequence[Statement], delta: sympy.Expr | None) -> Candidate | None:
    """The candidate with the smallest epsilon among those with delta <= ``delta``
    (numerically decided; the first one when undecidable).

    Costly statements (privacy loss distributions) are converted last, and among the others
    those with an exact privacy profile first; once a candidate is exact (its certified band within
    :data:`~dpaudit.accountant.statements.SETTLED`, :func:`~dpaudit.accountant.statements.
    settled`) the others are not converted: as in :meth:`Accountant.guarantee`, they could
    improve it by less than that band.  Nor is a statement whose float estimate
    (:meth:`~dpaudit.accountant.statements.Statement.estimate`) exceeds the best candidate so
    far by more than :data:`ESTIMATE_MARGIN` (an RDP curve's conversion at a DP-SGD step's
    tiny delta budget: 0.43 against amplification's 0.03); a skipped statement could only
    have been a looser candidate, and skipping one never makes the answer unsound."""
    best: Candidate | None = None
    best_float: float | None = None
    exact: Candidate | None = None
    for statement in sorted(statements, key=lambda s: (s.costly, not s.exact_profile)):
        if exact is not None:
            break
        guess = None if best is None else statement.estimate(delta)
        if best is not None and guess is not None:
            if best_float is None:
                best_float = _float_of(best.epsilon)
            if best_float is not None and guess > _ceiling(best_float):
                continue
        for cand in statement.candidates(delta):
            if exact is None and not statement.costly:
                exact = settled([cand])
            if best is None:
                best = cand
                continue
            order = compare(cand.epsilon, best.epsilon)
            if order == -1:
                best, best_float = cand, None
            elif order is None and (cand.epsilon.free_symbols or best.epsilon.free_symbols):
                best = _either(best, cand)
    return best


def _ceiling(best: float) -> float:
    """The float estimate above which a statement cannot beat a candidate of ``best``."""
    return best * (1 + ESTIMATE_MARGIN) + ESTIMATE_MARGIN


def _float_of(value: sympy.Expr) -> float | None:
    """An upper float of a numeric exact value (None for a symbolic one)."""
    try:
        return float_up(value)
    except (TypeError, ValueError, EvaluationError):
        return None


def _either(a: Candidate, b: Candidate) -> Candidate:
    """Two symbolic candidates that cannot be ordered without the parameters' range: the
    mechanism is (eps_a, delta_a)- and (eps_b, delta_b)-DP, hence (min, max)-DP, and the
    verifier decides which one is smaller where."""
    eps, dlt = sympy.Min(a.epsilon, b.epsilon), sympy.Max(a.delta, b.delta)
    premises = (a.step.premises if a.step.theorem is TIGHTEST else (a.step,)) + (b.step,)
    return Candidate(
        eps,
        dlt,
        Step(
            TIGHTEST,
            a.step.event,
            f"({show(eps)}, {show(dlt)})-DP",
            "eps = min of the candidates",
            premises,
        ),
    )
