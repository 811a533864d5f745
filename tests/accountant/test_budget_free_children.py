"""A composition of parts that all have privacy loss distributions evaluates its parts once,
without a delta budget (:data:`dpaudit.accountant.rules.BUDGET_FREE`): the budgeted
conversions (amplification by subsampling at delta/N, advanced composition, a PLD's epsilon
at delta/N) fed only basic composition, which such a composition does not derive.  The
guarantee must be the same as with every part evaluated at its budget."""

from __future__ import annotations

import pytest
import sympy

from dpaudit import events as ev
from dpaudit.accountant import Accountant, currencies, rules
from dpaudit.theorems import amplification as amp

Q = sympy.Rational


def _fresh() -> None:
    with currencies._PLD_MEMO_LOCK:
        currencies._PLD_MEMO.clear()


def _schedule(n: int) -> ev.Composed:
    parts: list[ev.Event] = []
    for i in range(n):
        sampled = ev.PoissonSampled(ev.Gaussian(Q(8, 10) + Q(i, 10)), Q(1 + i % 3, 100))
        parts.append(ev.SelfComposed(sampled, 50))
        parts.append(ev.Laplace(10 + i))
    return ev.Composed(parts)


@pytest.mark.parametrize(
    "event",
    [
        _schedule(3),
        ev.Composed([ev.Gaussian(1), ev.Laplace(2), ev.RandomizedResponse(1)]),
        ev.Composed([ev.SelfComposed(ev.Gaussian(3), 10), ev.Gaussian(Q(3, 2))]),
    ],
    ids=["dp-sgd-schedule", "mixed-leaves", "gaussians"],
)
def test_the_guarantee_is_the_one_of_budgeted_parts(
    event: ev.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh()
    free = Accountant().guarantee(event, delta=Q(1, 10**6))
    monkeypatch.delitem(rules.BUDGET_FREE, ev.Composed)
    _fresh()
    budgeted = Accountant().guarantee(event, delta=Q(1, 10**6))
    assert free.epsilon == budgeted.epsilon
    assert free.epsilon_lower == budgeted.epsilon_lower
    assert free.derivation.theorem == budgeted.derivation.theorem


@pytest.mark.slow
def test_no_amplification_candidate_is_computed_for_an_all_pld_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    real = amp.poisson_amplification

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(amp, "poisson_amplification", counting)
    _fresh()
    Accountant().guarantee(_schedule(4), delta=Q(1, 10**6))
    assert calls == []
    # without the budget-free path, each part is amplified at both of its budget shares
    monkeypatch.delitem(rules.BUDGET_FREE, ev.Composed)
    _fresh()
    Accountant().guarantee(_schedule(4), delta=Q(1, 10**6))
    assert len(calls) >= 8


def test_a_part_without_a_pld_keeps_the_budgeted_path() -> None:
    """A symbolic part has no numeric PLD: basic composition of (eps_i, delta/N) is needed,
    so the parts are evaluated at their budgets (the delta splits evenly)."""
    sigma = sympy.Symbol("sigma", positive=True)
    g = Accountant().guarantee(ev.Composed([ev.Gaussian(sigma), ev.Laplace(1)]), delta=Q(1, 10**6))
    assert g.epsilon.free_symbols == {sigma}
    assert g.delta == Q(1, 10**6)
    # the abandoned budget-free pass leaves nothing in the derivation's trace
    assert [str(c.event) for c in g.considered] == [
        "Gaussian(sigma)",
        "Laplace(1)",
        "Composed([Gaussian(sigma), Laplace(1)])",
    ]
