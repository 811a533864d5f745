"""The accountant: interprets an event tree into a :class:`Guarantee` (layer 4).

A theorem is applied only inside its domain.  Each rule asks
:func:`~dpaudit.accountant.domains.admit` before applying a card; the policy
(see :mod:`dpaudit.accountant.domains`) is: refuted or numerically undecided -- not applied,
and listed in :attr:`Guarantee.rejected` with the reason; undecided on symbols -- applied as
a conditional bound whose side conditions join :attr:`Guarantee.assumptions` (which the
verifier must prove over a claim's domain).  The symbolic decisions use the event's own
parameter constraints and the conditions passed as ``Accountant(assume=...)``.

What it returns (:class:`Guarantee`, :class:`Considered`, :class:`UnsupportedEventError`) is
defined in :mod:`dpaudit.accountant.guarantee` and re-exported here.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from dpaudit.accountant import domains
from dpaudit.accountant.guarantee import Considered, Guarantee, UnsupportedEventError
from dpaudit.accountant.rules import BUDGET_FREE, RULES, of_currency
from dpaudit.accountant.statements import (
    Alternative,
    Approx,
    Candidate,
    Concentrated,
    Pure,
    Statement,
    Step,
    as_delta,
    compare,
    settled,
    show,
    upper_float,
)
from dpaudit.deferred_imports import sympy
from dpaudit.events import Composed, Event, SelfComposed
from dpaudit.expressions import as_expr
from dpaudit.numeric import PRECISION_LOCK, EvaluationError, exact_value, float_down
from dpaudit.theorems import zcdp
from dpaudit.theorems.accounting import TIGHTEST

if TYPE_CHECKING:
    from dpaudit.accountant.curve import PrivacyCurve
    from dpaudit.accountant.profile import DeltaGuarantee

__all__ = ["Accountant", "Considered", "Guarantee", "UnsupportedEventError", "account"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: How many (epsilon, delta) statements are kept per node (the Pareto front, truncated).
MAX_APPROX_PER_NODE = 4


def _serialized(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``method`` holding :data:`~dpaudit.numeric.PRECISION_LOCK`: the theorems and PLDs
    it applies set mpmath's process-global precision, which threads must not share."""

    @functools.wraps(method)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with PRECISION_LOCK:
            return method(*args, **kwargs)

    return run


class Accountant:
    """Turns event trees into guarantees, applying every registered rule at every node.

    Use it functionally, ``Accountant().guarantee(event, delta=1e-6)``, or record events as
    an algorithm runs, ``acc.compose(event)``, and ask for the guarantee of everything
    recorded, ``acc.guarantee(delta=1e-6)``.  ``compose`` validates the whole event first:
    an unsupported event raises :class:`UnsupportedEventError` and nothing is recorded.

    Args:
        assume: relations known to hold of the event's symbols (e.g. ``delta < 1`` from a
            claim's domain); theorem domain conditions that follow from them count as
            verified.  A guarantee computed with ``assume`` holds where those conditions
            hold (the verifier passes a claim's domain, over which alone it decides).
    """

    def __init__(self, assume: Iterable[Any] = ()) -> None:
        self._recorded: list[Event] = []
        self._lock = threading.Lock()  # compose: check and append as one step
        self._assume = tuple(as_expr(a) for a in assume)

    # ---- recording ---------------------------------------------------------------------

    def compose(self, event: Event, count: int = 1) -> Accountant:
        """Record ``count`` runs of ``event`` (all-or-nothing: validated before recording).

        Raises:
            UnsupportedEventError: if no theorem covers ``event`` or one of its sub-events.
            ValueError: for a count that is not a positive integer.
        """
        item: Event = event if count == 1 else SelfComposed(event, count)
        self.check(item)
        with self._lock:
            if self._recorded:
                Composed([*self._recorded, item])  # relation check before anything is recorded
            self._recorded.append(item)
        return self

    @property
    def recorded(self) -> Event | None:
        """Everything recorded so far, as one event (None if nothing is)."""
        recorded = list(self._recorded)
        if not recorded:
            return None
        if len(recorded) == 1:
            return recorded[0]
        return Composed(recorded)

    # ---- interpretation ----------------------------------------------------------------

    def check(self, event: Event) -> None:
        """Raise :class:`UnsupportedEventError` if any sub-event has no rule."""
        for node in _nodes(event):
            if type(node) not in RULES:
                raise UnsupportedEventError(
                    node, event, f"no rule is registered for {node.kind} events"
                )

    @_serialized
    def statements(self, event: Event, delta: Any = None) -> list[Statement]:
        """Every statement proved for ``event`` (the best of each currency)."""
        self.check(event)
        with domains.context((*event.constraints(), *self._assume)):
            return self._evaluate(event, as_delta(delta), event, {})

    @_serialized
    def guarantee(self, event: Event | None = None, delta: Any = None) -> Guarantee:
        """The tightest guarantee the registered results prove for ``event``.

        Args:
            event: the event tree (default: everything recorded with :meth:`compose`).
            delta: the target delta in [0, 1); None asks for the event's natural guarantee
                (pure DP when there is one, else the best (epsilon, delta) statement).

        Returns:
            A :class:`Guarantee`; its epsilon is an upper bound (exact, and rounded up as
            ``epsilon_upper``).

        Raises:
            UnsupportedEventError: naming the first sub-event no result covers.
            ValueError: for a delta outside [0, 1), or when no candidate meets it.
        """
        if event is None:
            event = self.recorded
            if event is None:
                raise ValueError("event must be given (nothing has been recorded)")
        if not isinstance(event, Event):
            raise ValueError(f"event must be an event, got {event!r}")
        target = as_delta(delta)
        self.check(event)
        own = event.constraints()
        known = (*own, *self._assume)
        skipped: list[str] = []
        trace: list[Considered] = []
        with domains.context(known) as rejected:
            statements = self._evaluate(event, target, event, {}, trace)
            candidates: list[Candidate] = []
            for s in statements:
                if not s.costly:
                    candidates.extend(s.candidates(target))
            exact = settled(candidates)
            for s in statements:
                if s.costly and exact is None:
                    candidates.extend(s.candidates(target))
                elif s.costly:
                    skipped.append(s.step.theorem.name)
        if target is None:
            pure = [c for c in candidates if c.delta == 0]
            candidates = pure or candidates
        if not candidates:
            why = "".join(f"; {r}" for r in rejected)
            if target is None or target == 0:
                raise ValueError(
                    f"{event} has no pure-DP guarantee and no fixed (epsilon, delta) one; "
                    f"give a delta in (0, 1){why}"
                )
            raise ValueError(f"no result proves a guarantee for {event} at delta = {target}{why}")
        g = _choose(event, candidates, target)
        if skipped:
            from dpaudit.accountant.statements import SETTLED

            why = (
                f"not computed: {', '.join(sorted(set(skipped)))} (this bound is exact: its "
                f"certified band is within {float(SETTLED):g} of it)"
            )
            note = f"{g.derivation.note}; {why}" if g.derivation.note else why
            g = dataclasses.replace(g, derivation=dataclasses.replace(g.derivation, note=note))
        used = [g.derivation] if not g.symbolic else [c.step for c in candidates]
        side = tuple(c for c in domains.unverified(used) if c not in own)
        return dataclasses.replace(
            g, assumptions=(*own, *side), rejected=tuple(rejected), considered=tuple(trace)
        )

    def epsilon(self, event: Event | None = None, delta: Any = None) -> float:
        """The guarantee's epsilon as a float rounded up (numeric events only)."""
        g = self.guarantee(event, delta)
        if g.epsilon_upper is None:
            raise ValueError(f"{g.event} is symbolic; use guarantee() for the expression")
        return g.epsilon_upper

    @_serialized
    def delta_for_epsilon(self, event: Event | None = None, epsilon: Any = None) -> DeltaGuarantee:
        """Certified bounds on the smallest delta at which ``event`` is (epsilon, delta)-DP.

        Args:
            event: a numeric event tree (default: everything recorded with :meth:`compose`).
            epsilon: a number >= 0.

        Returns:
            A :class:`~dpaudit.accountant.profile.DeltaGuarantee`: ``delta_upper`` rounded up,
            ``delta_lower`` rounded down, and the theorem that gave each.

        Raises:
            UnsupportedEventError: naming the first sub-event no result covers.
            ValueError: for an epsilon that is not a number >= 0, or a symbolic event (its
                delta would be a function of the symbols; substitute values first).
        """
        from dpaudit.accountant.profile import check_epsilon, delta_for_epsilon

        event = self._event(event)
        eps = check_epsilon(epsilon)
        if event.free_symbols:
            names = ", ".join(sorted(str(x) for x in event.free_symbols))
            raise ValueError(
                f"event must be numeric for delta_for_epsilon, got symbols {names} in {event}; "
                "substitute values first"
            )
        self.check(event)
        with domains.context((*event.constraints(), *self._assume)):
            statements = self._evaluate(event, None, event, {})
            return delta_for_epsilon(event, statements, eps)

    def curve(self, event: Event | None = None, deltas: Any = None) -> PrivacyCurve:
        """The privacy profile epsilon(delta) of a numeric event with its certified band.

        Args:
            event: the event (default: everything recorded).
            deltas: the deltas, each in (0, 1) (default
                :data:`~dpaudit.accountant.curve.DEFAULT_DELTAS`).

        Returns:
            A :class:`~dpaudit.accountant.curve.PrivacyCurve` (arrays, ``to_json``, ``plot``).

        Raises:
            ValueError: for a delta outside (0, 1) or a symbolic event.
        """
        from dpaudit.accountant.curve import privacy_curve

        return privacy_curve(self, self._event(event), deltas)

    def _event(self, event: Event | None) -> Event:
        if event is None:
            event = self.recorded
            if event is None:
                raise ValueError("event must be given (nothing has been recorded)")
        if not isinstance(event, Event):
            raise ValueError(f"event must be an event, got {event!r}")
        return event

    def _children(
        self,
        event: Event,
        budget: sympy.Expr | None,
        whole: Event,
        memo: dict[tuple[Event, Any], list[Statement]],
        trace: list[Considered] | None,
    ) -> list[list[Statement]]:
        """The children's statements at their budgets; for a :data:`BUDGET_FREE` node, first
        without budget, kept when its predicate says the budgeted ones would not be used."""
        free = BUDGET_FREE.get(type(event))
        if free is not None and budget is not None:
            # a tentative pass: its trace and rejections count only if it is kept
            scratch: list[Considered] | None = None if trace is None else []
            recorded = domains.rejection_count()
            try:
                unbudgeted = [
                    self._evaluate(child, None, whole, memo, scratch) for child in event.children()
                ]
            except UnsupportedEventError:
                unbudgeted = None
            if unbudgeted is not None and free(unbudgeted):
                if trace is not None and scratch is not None:
                    trace.extend(scratch)
                return unbudgeted
            domains.discard_rejections_since(recorded)
        budgets = _child_budgets(event, budget)
        return [
            self._evaluate(child, b, whole, memo, trace)
            for child, b in zip(event.children(), budgets, strict=True)
        ]

    def _evaluate(
        self,
        event: Event,
        budget: sympy.Expr | None,
        whole: Event,
        memo: dict[tuple[Event, Any], list[Statement]],
        trace: list[Considered] | None = None,
    ) -> list[Statement]:
        key = (event, budget)
        if key in memo:
            return memo[key]
        children = self._children(event, budget, whole, memo, trace)
        found: list[Statement] = []
        for rule in RULES.get(type(event), []):
            found.extend(rule(event, children, budget))
        found = _with_pure_to_zcdp(event, found)
        kept = _keep_best(found)
        if not kept:
            why = "".join(f"; {r}" for r in domains.rejected_at(event))
            raise UnsupportedEventError(
                event,
                whole,
                f"the registered results prove nothing for it from its parts' guarantees{why}",
            )
        memo[key] = kept
        if trace is not None:
            kept_ids = {id(k) for k in kept}
            trace.append(
                Considered(
                    event, tuple(f.step for f in found), tuple(id(f) in kept_ids for f in found)
                )
            )
        return kept


def account(event: Event, delta: Any = None) -> Guarantee:
    """Shorthand for ``Accountant().guarantee(event, delta)``."""
    return Accountant().guarantee(event, delta)


def _nodes(event: Event) -> Iterable[Event]:
    yield event
    for child in event.children():
        yield from _nodes(child)


def _child_budgets(event: Event, budget: sympy.Expr | None) -> list[sympy.Expr | None]:
    children = event.children()
    if budget is None:
        return [None] * len(children)
    if isinstance(event, Composed):
        return [budget / len(children)] * len(children)
    if isinstance(event, SelfComposed):
        return [budget / event.count]
    return [budget] * len(children)


def _with_pure_to_zcdp(event: Event, found: list[Statement]) -> list[Statement]:
    """Add the zCDP statement that a pure statement implies (Bun and Steinke 2016, Prop 1.4)
    when the node has no better zCDP statement of its own."""
    pures = of_currency(found, Pure)
    if not pures:
        return found
    p = pures[0]
    checks = domains.admit(zcdp.PURE_TO_ZCDP, event, {"epsilon": p.epsilon})
    if checks is None:
        return found
    rho = zcdp.pure_to_zcdp(p.epsilon)
    derived = Concentrated(
        Step(
            zcdp.PURE_TO_ZCDP,
            event,
            f"({show(rho)})-zCDP",
            f"rho = eps^2/2 = {show(rho)}",
            (p.step,),
            checks=checks,
        ),
        rho=rho,
    )
    return [*found, derived]


def _keep_best(found: list[Statement]) -> list[Statement]:
    """The best statement of each scalar currency, and a short Pareto front of the
    (epsilon, delta) ones; order: pure, approx, then the others as found."""
    best: dict[str, Statement] = {}
    approx: list[Approx] = []
    for s in found:
        if isinstance(s, Approx):
            approx.append(s)
            continue
        current = best.get(s.currency)
        if current is None:
            best[s.currency] = s
            continue
        key_new, key_old = s.key(), current.key()
        if key_new is None or key_old is None:
            continue
        order = compare(key_new, key_old)
        if order == -1 or (order == 0 and s.exact_profile and not current.exact_profile):
            best[s.currency] = s
    front: list[Approx] = []
    for a in approx:
        dominated = any(
            compare(o.epsilon, a.epsilon) in (-1, 0)
            and compare(o.delta, a.delta) in (-1, 0)
            and o is not a
            for o in front
        )
        if not dominated:
            front = [
                o
                for o in front
                if not (
                    compare(a.epsilon, o.epsilon) in (-1, 0)
                    and compare(a.delta, o.delta) in (-1, 0)
                )
            ]
            front.append(a)
    ordered = [best.pop("pure")] if "pure" in best else []
    ordered += front[:MAX_APPROX_PER_NODE]
    ordered += list(best.values())
    return ordered


def _choose(event: Event, candidates: list[Candidate], target: sympy.Expr | None) -> Guarantee:
    numeric = all(not exact_value(c.epsilon).free_symbols for c in candidates)
    if numeric:
        chosen = candidates[0]
        for c in candidates[1:]:
            if _upper(c.epsilon) < _upper(chosen.epsilon):
                chosen = c
        epsilon = chosen.epsilon
    else:
        chosen = candidates[0]
        distinct: list[sympy.Expr] = []
        for c in candidates:
            if c.epsilon not in distinct:
                distinct.append(c.epsilon)
        epsilon = distinct[0] if len(distinct) == 1 else sympy.Min(*distinct)
    delta = target if target is not None else chosen.delta
    lowers = [c.epsilon_lower for c in candidates if c.epsilon_lower is not None]
    lower = None
    if lowers and numeric:
        lower = max(lowers, key=float_down)
    if len(candidates) == 1:
        derivation = chosen.step
    else:
        alternatives = tuple(
            Alternative(c.label, c.epsilon, c is chosen or not numeric) for c in candidates
        )
        derivation = Step(
            TIGHTEST,
            event,
            f"({show(epsilon)}, {show(delta)})-DP",
            "eps = min(" + ", ".join(f"{a.label} {show(a.epsilon)}" for a in alternatives) + ")",
            (chosen.step,) if numeric else tuple(c.step for c in candidates),
            alternatives,
        )
    return Guarantee(
        event, epsilon, delta, derivation, tuple(candidates), lower, event.constraints()
    )


def _upper(expr: sympy.Expr) -> float:
    try:
        return upper_float(expr)
    except (EvaluationError, TypeError):
        return float("inf")


def substitute(event: Event, values: Mapping[Any, Any]) -> Event:
    """``event`` with symbols replaced by values (exact conversion), rebuilt and
    re-validated."""
    from dpaudit.numeric import exact

    mapping = {
        sympy.Symbol(k) if isinstance(k, str) else k: exact(v, str(k)) for k, v in values.items()
    }
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if isinstance(value, Event):
            changes[field.name] = substitute(value, values)
        elif isinstance(value, tuple) and value and isinstance(value[0], Event):
            changes[field.name] = tuple(substitute(v, values) for v in value)
        elif isinstance(value, sympy.Basic):
            # match symbols by name, so Symbol('b') and Symbol('b', positive=True) agree
            by_name = {
                s: mapping[k] for s in value.free_symbols for k in mapping if s.name == k.name
            }
            changes[field.name] = value.xreplace(by_name)
    return dataclasses.replace(event, **changes)
