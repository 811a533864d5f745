"""Privacy filters and odometers: fully adaptive composition.

When the privacy parameters of each step -- and the number of steps -- are chosen at run
time from earlier outputs, ordinary composition theorems (which fix the parameters in
advance) do not apply.  Rogers, Roth, Ullman, Vadhan 2016 ("Privacy odometers and filters:
pay-as-you-go composition") define

* a **filter** with budget (eps_g, delta_g): a stopping rule that halts the interaction
  before the composed guarantee could exceed the budget; the whole interaction is then
  (eps_g, delta_g)-DP;
* an **odometer**: a running, valid-at-all-times bound on what has been spent.

This module gives three filters (each usable as a :class:`dpaudit.ledger.Ledger` guard: a
refused step raises :class:`BudgetExceededError` *before* it runs or is recorded):

* ``"basic"``: continue while sum eps_i <= eps_g and sum delta_i <= delta_g (RRUV16, basic
  composition is a valid filter);
* ``"advanced"``: pure-DP steps; continue while
  sqrt(2 ln(1/delta_g) sum eps_i^2) + sum eps_i (e^eps_i - 1) / 2 <= eps_g
  (Whitehouse, Ramdas, Rogers, Wu 2023, "Fully-adaptive composition in differential privacy",
  Theorem 1: advanced composition's rate holds for filters with the same constants);
* ``"zcdp"``: continue while sum rho_i <= rho_g, where rho_g is the largest rho with
  rho + 2 sqrt(rho ln(1/delta_g)) <= eps_g (WRRW23, Section 3: zCDP / Renyi filters;
  Feldman and Zrnic 2021 for Renyi filters).

and a basic-composition :class:`PrivacyOdometer`.

Filters and odometers are :class:`dpaudit.ledger.Guard` objects: safe to share between
threads (a step is checked and charged under the guard's lock, so concurrent steps never
bring the total past the budget), and nestable: given a ``parent`` guard, a filter charges
the parent only for steps that it, the parent and every further ancestor all admit
(two-phase recording, see ``docs/concurrency.md``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from typing import Any

from dpaudit.accountant import Accountant, Concentrated, Pure
from dpaudit.deferred_imports import sympy
from dpaudit.events import Event
from dpaudit.ledger import Guard, StepRefusedError
from dpaudit.numeric import exact, float_up
from dpaudit.theorems import zcdp

__all__ = ["METHODS", "BudgetExceededError", "PrivacyFilter", "PrivacyOdometer"]

METHODS = ("basic", "advanced", "zcdp")


class BudgetExceededError(StepRefusedError):
    """A privacy filter refused a step: running it could exceed the budget."""


@functools.lru_cache(maxsize=1024)
def _pure_epsilon(event: Event) -> sympy.Expr | None:
    for s in Accountant().statements(event):
        if isinstance(s, Pure):
            return s.epsilon
    return None


@functools.lru_cache(maxsize=1024)
def _rho(event: Event) -> sympy.Expr | None:
    for s in Accountant().statements(event):
        if isinstance(s, Concentrated):
            return s.rho
    return None


@functools.lru_cache(maxsize=1024)
def _approx(event: Event, delta_share: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    eps = _pure_epsilon(event)
    if eps is not None:
        return eps, sympy.Integer(0)
    g = Accountant().guarantee(event, delta_share)
    return g.epsilon, g.delta


def _parent(parent: Any) -> Guard | None:
    if parent is not None and not isinstance(parent, Guard):
        raise ValueError(
            f"parent must be a PrivacyFilter, PrivacyOdometer (a Guard) or None, got {parent!r}"
        )
    return parent


@dataclasses.dataclass
class PrivacyFilter(Guard):
    """A privacy filter with budget (epsilon, delta), usable as a ledger guard.

    Args:
        epsilon: the budget eps_g > 0.
        delta: the budget delta_g in [0, 1) (must be > 0 for "advanced" and "zcdp").
        method: "basic", "advanced" or "zcdp" (see the module docstring).
        step_delta: for "basic", the delta each (eps, delta) step may use when converting a
            step without a pure guarantee (default: delta / 100).
        parent: a guard (filter or odometer) that must also admit, and is charged for, every
            step this filter admits; a step refused anywhere on the chain charges no one.

    Privacy:
        Whatever steps are admitted, and however they were chosen, the whole interaction is
        (epsilon, delta)-DP (RRUV16; WRRW23, Theorem 1).  Steps must be numeric events.
        A filter shared by threads admits steps one at a time under its lock, so the
        guarantee holds for the interleaved interaction too.

    Raises:
        ValueError: for a budget out of range, an unknown method or a parent that is not a
            guard.
    """

    epsilon: Any
    delta: Any = 0
    method: str = "basic"
    step_delta: Any = None
    spent_epsilons: list[sympy.Expr] = dataclasses.field(default_factory=list)
    spent_deltas: list[sympy.Expr] = dataclasses.field(default_factory=list)
    spent_rhos: list[sympy.Expr] = dataclasses.field(default_factory=list)
    parent: Guard | None = None

    def __post_init__(self) -> None:
        self.epsilon = exact(self.epsilon, "epsilon")
        self.delta = exact(self.delta, "delta")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.epsilon.free_symbols or not self.epsilon > 0:
            raise ValueError(f"epsilon must be a number in (0, inf), got {self.epsilon}")
        if self.delta.free_symbols or not (0 <= self.delta < 1):
            raise ValueError(f"delta must be a number in [0, 1), got {self.delta}")
        if self.method in ("advanced", "zcdp") and self.delta == 0:
            raise ValueError(f"delta must be in (0, 1) for the {self.method} filter, got 0")
        share = (
            self.delta / 100 if self.step_delta is None else exact(self.step_delta, "step_delta")
        )
        self.step_delta = share
        self.parent = _parent(self.parent)

    # ---- the stopping rule -------------------------------------------------------------

    def _value(
        self, eps: list[sympy.Expr], dlt: list[sympy.Expr], rhos: list[sympy.Expr]
    ) -> tuple[float, float]:
        """(the filter's epsilon statistic, delta used), both rounded up."""
        if self.method == "basic":
            return float_up(sympy.Add(*eps)), float_up(sympy.Add(*dlt))
        if self.method == "advanced":
            total = sympy.sqrt(
                2 * sympy.log(1 / self.delta) * sympy.Add(*[e**2 for e in eps])
            ) + sympy.Add(*[e * (sympy.exp(e) - 1) / 2 for e in eps])
            return float_up(total), float_up(self.delta)
        rho = sympy.Add(*rhos)
        return float_up(zcdp.zcdp_to_approx(rho, self.delta)) if rho != 0 else 0.0, float_up(
            self.delta
        )

    def _cost(self, event: Event) -> tuple[sympy.Expr | None, sympy.Expr | None, sympy.Expr | None]:
        """What one step adds to (epsilons, deltas, rhos); refuses a step it cannot price."""
        if event.free_symbols:
            raise ValueError(f"a filter step must be a numeric event, got {event}")
        if self.method == "zcdp":
            rho = _rho(event)
            if rho is None:
                raise BudgetExceededError(
                    f"{event} has no zCDP guarantee; the zcdp filter cannot admit it"
                )
            return None, None, rho
        if self.method == "advanced":
            e = _pure_epsilon(event)
            if e is None:
                raise BudgetExceededError(
                    f"{event} has no pure-DP guarantee; the advanced "
                    "filter admits pure-DP steps only"
                )
            return e, None, None
        e, d = _approx(event, self.step_delta)
        return e, d, None

    def check(
        self, events: Sequence[Event]
    ) -> tuple[list[sympy.Expr], list[sympy.Expr], list[sympy.Expr]]:
        """The spent lists after ``events`` run next, if that keeps within budget.

        Every statistic only grows with a step (each eps_i, delta_i, rho_i >= 0), so the
        steps are within budget at every prefix exactly when they are after the last one.

        Raises:
            BudgetExceededError: if the steps could exceed the budget.
            ValueError: for a step that is not numeric.
        """
        eps, dlt, rhos = list(self.spent_epsilons), list(self.spent_deltas), list(self.spent_rhos)
        for event in events:
            e, d, rho = self._cost(event)
            if e is not None:
                eps.append(e)
            if d is not None:
                dlt.append(d)
            if rho is not None:
                rhos.append(rho)
        e_stat, d_used = self._value(eps, dlt, rhos)
        if (
            e_stat > float_up(self.epsilon)
            or d_used > float_up(self.delta)
            or (e_stat == float_up(self.epsilon) and sympy.Add(*eps) > self.epsilon)
        ):
            what = str(events[0]) if len(events) == 1 else f"these {len(events)} steps"
            raise BudgetExceededError(
                f"{self.method} filter: running {what} would bring the spent privacy to "
                f"epsilon {e_stat:.6g}, delta {d_used:.3g}, beyond the budget "
                f"({float_up(self.epsilon):.6g}, {float_up(self.delta):.3g}); halted before it"
            )
        return eps, dlt, rhos

    def commit(self, pending: tuple[list[sympy.Expr], list[sympy.Expr], list[sympy.Expr]]) -> None:
        """Count the steps :meth:`check` admitted."""
        self.spent_epsilons, self.spent_deltas, self.spent_rhos = pending

    def spent(self) -> tuple[float, float]:
        """The filter statistic so far: (epsilon, delta), rounded up."""
        with self._lock:
            return self._value(self.spent_epsilons, self.spent_deltas, self.spent_rhos)


@dataclasses.dataclass
class PrivacyOdometer(Guard):
    """A basic-composition privacy odometer (Rogers, Roth, Ullman, Vadhan 2016).

    Args:
        step_delta: the delta each step without a pure guarantee may use.
        parent: a guard that must also admit, and is charged for, every step counted here.

    Privacy:
        At every time, the interaction so far is (sum eps_i, sum delta_i)-DP, however the
        steps and their parameters were chosen (basic composition is a valid odometer).
        Steps counted concurrently by several threads are all counted, each once.
    """

    step_delta: Any = 0
    epsilons: list[sympy.Expr] = dataclasses.field(default_factory=list)
    deltas: list[sympy.Expr] = dataclasses.field(default_factory=list)
    parent: Guard | None = None

    def __post_init__(self) -> None:
        self.step_delta = exact(self.step_delta, "step_delta")
        self.parent = _parent(self.parent)

    def check(self, events: Sequence[Event]) -> list[tuple[sympy.Expr, sympy.Expr]]:
        """The (eps_i, delta_i) of each step (an odometer never refuses a priceable step)."""
        return [_approx(event, self.step_delta) for event in events]

    def commit(self, pending: list[tuple[sympy.Expr, sympy.Expr]]) -> None:
        """Count the steps :meth:`check` priced."""
        self.epsilons = [*self.epsilons, *(e for e, _ in pending)]
        self.deltas = [*self.deltas, *(d for _, d in pending)]

    def reading(self) -> tuple[float, float]:
        """(epsilon, delta) spent so far, rounded up."""
        with self._lock:
            epsilons, deltas = self.epsilons, self.deltas
        return float_up(sympy.Add(*epsilons)), float_up(sympy.Add(*deltas))

    def __iter__(self) -> Iterator[tuple[sympy.Expr, sympy.Expr]]:
        with self._lock:
            return iter(list(zip(self.epsilons, self.deltas, strict=True)))
