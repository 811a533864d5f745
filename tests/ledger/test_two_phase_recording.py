"""Two-phase recording: every guard on the chain checks a step before any guard counts it,
so a step refused anywhere leaves every filter, odometer and ledger exactly as it was."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.events import Exponential, Laplace, PureDP, Relation
from dpaudit.filters import BudgetExceededError, PrivacyFilter, PrivacyOdometer
from dpaudit.ledger import Ledger, record, recorded_as_one, recorded_jointly


def _state(*guards_and_ledgers: object) -> list[object]:
    out: list[object] = []
    for x in guards_and_ledgers:
        if isinstance(x, PrivacyFilter):
            out.append((list(x.spent_epsilons), list(x.spent_deltas), list(x.spent_rhos)))
        elif isinstance(x, PrivacyOdometer):
            out.append((list(x.epsilons), list(x.deltas)))
        else:
            out.append(list(x.entries))
    return out


def test_an_inner_ledgers_refusal_does_not_charge_the_outer_filter() -> None:
    """Outer ledger guarded by a roomy parent filter, inner one by a tight filter: the step
    the inner filter refuses leaves the outer filter, its ledger and the inner one as they
    were (today's one-phase recording charged the outer filter first)."""
    parent, child, odo = PrivacyFilter(10), PrivacyFilter("1/2"), PrivacyOdometer()
    with Ledger(guard=parent) as outer, Ledger(guard=odo) as middle, Ledger(guard=child) as inner:
        record(Laplace(4))  # 1/4: admitted by all
        before = _state(parent, child, odo, outer, middle, inner)
        with pytest.raises(BudgetExceededError, match="beyond the budget"):
            record(Laplace(2))  # 1/2 more: the inner filter refuses
        assert _state(parent, child, odo, outer, middle, inner) == before
    assert parent.spent()[0] == pytest.approx(0.25)
    assert len(odo.epsilons) == 1


def test_a_child_filters_refusal_does_not_charge_its_parent() -> None:
    parent = PrivacyFilter(10)
    child = PrivacyFilter("1/2", parent=parent)
    child(Laplace(4))
    with pytest.raises(BudgetExceededError):
        child(Laplace(2))
    assert parent.spent_epsilons == [sympy.Rational(1, 4)]
    assert child.admits(Laplace(4)) and not child.admits(Laplace(2))
    assert parent.spent_epsilons == [sympy.Rational(1, 4)]  # admits changes nothing


def test_a_parents_refusal_does_not_charge_the_child() -> None:
    parent = PrivacyFilter("1/2")
    child = PrivacyFilter(10, parent=parent)
    other = PrivacyOdometer(parent=parent)
    other(Laplace(4))
    with pytest.raises(BudgetExceededError):
        child(Laplace(2))
    assert child.spent_epsilons == [] and len(parent.spent_epsilons) == 1
    assert not child.admits(Laplace(2))


def test_a_guard_cycle_is_refused() -> None:
    a = PrivacyFilter(1)
    b = PrivacyFilter(1, parent=a)
    a.parent = b
    with pytest.raises(ValueError, match="parent must not lead back"):
        b(Laplace(10))
    assert a.spent_epsilons == b.spent_epsilons == []
    with pytest.raises(ValueError, match="parent must be"):
        PrivacyFilter(1, parent=lambda e: None)


SEL = Exponential("1/2", 1, relation=Relation.REPLACE_ONE)
VOTE = Exponential("1/4", 1, relation=Relation.REPLACE_ONE)


def test_a_block_recorded_on_exit_is_recorded_whole_or_not_at_all() -> None:
    """recorded_jointly records the joint event and the runs passed through in one step: a
    filter that admits the first but not the second leaves everything unchanged."""
    f = PrivacyFilter("5/2")
    with Ledger(guard=f) as ledger:
        with pytest.raises(BudgetExceededError), recorded_jointly((SEL, VOTE), PureDP(2)):
            record(SEL)
            record(VOTE)
            record(Laplace(1))  # 2 + 1 > 5/2
        assert ledger.entries == [] and f.spent_epsilons == []
        with (
            pytest.raises(BudgetExceededError),
            recorded_as_one(Laplace(1), lambda k: (PureDP(k), 1)),
        ):
            record(Laplace(1), 2)
            record(Laplace(2))  # 2 + 1/2 fits, then
            record(Laplace(10))  # 1/10 more does not
        assert ledger.entries == [] and f.spent_epsilons == []


def test_runs_of_a_block_that_raised_are_still_recorded() -> None:
    """What ran inside recorded_as_one was spent, even if the block then failed."""
    with (
        Ledger() as ledger,
        pytest.raises(KeyError),
        recorded_as_one(Laplace(1), lambda k: (PureDP(k), 1)),
    ):
        record(Laplace(1), 3)
        raise KeyError("boom")
    assert [(e.event, e.count) for e in ledger.entries] == [(PureDP(3), 1)]


# ---- property: random chains of guards ------------------------------------------------

SCALES = (2, 3, 4, 5, 8)


@st.composite
def _setups(
    draw: st.DrawFn,
) -> tuple[list[tuple[str, Fraction, int | None]], list[int | None], list[tuple[int, int]]]:
    """Guards (kind, budget, parent index among earlier guards), the guard of each ledger
    (an index or None), and steps (scale, count)."""
    n = draw(st.integers(1, 5))
    guards = []
    for i in range(n):
        kind = draw(st.sampled_from(["filter", "filter", "odometer"]))
        budget = Fraction(draw(st.integers(1, 8)), 4)
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        guards.append((kind, budget, parent))
    ledgers = draw(st.lists(st.one_of(st.none(), st.integers(0, n - 1)), min_size=1, max_size=4))
    steps = draw(
        st.lists(st.tuples(st.sampled_from(SCALES), st.integers(1, 3)), min_size=1, max_size=12)
    )
    return guards, ledgers, steps


@settings(max_examples=60, deadline=None)
@given(_setups())
def test_two_phase_recording_over_random_chains_of_guards(setup) -> None:
    """Random forests of filters and odometers (random parents), random stacks of ledgers
    guarded by them, random steps: a step is admitted exactly when every filter on the union
    of the ledgers' guard chains has room for it (exact arithmetic model); then each guard on
    that union counts it once and every ledger records it; otherwise nothing changes."""
    spec, ledger_guards, steps = setup
    guards: list[PrivacyFilter | PrivacyOdometer] = []
    for kind, budget, parent in spec:
        up = None if parent is None else guards[parent]
        guards.append(
            PrivacyFilter(sympy.Rational(budget.numerator, budget.denominator), parent=up)
            if kind == "filter"
            else PrivacyOdometer(parent=up)
        )
    ledgers = [Ledger(guard=None if g is None else guards[g]) for g in ledger_guards]
    chain: set[int] = set()
    for g in ledger_guards:
        while g is not None:
            chain.add(g)
            g = spec[g][2]
    spent = [Fraction(0)] * len(guards)
    counted = [0] * len(guards)
    recorded = 0
    for ledger in ledgers:
        ledger.__enter__()
    try:
        for scale, count in steps:
            cost = Fraction(count, scale)
            fits = all(spent[i] + cost <= spec[i][1] for i in chain if spec[i][0] == "filter")
            before = copy.deepcopy(_state(*guards, *ledgers))
            if fits:
                record(Laplace(scale), count)
                for i in chain:
                    spent[i] += cost
                    counted[i] += 1
                recorded += 1
            else:
                with pytest.raises(BudgetExceededError):
                    record(Laplace(scale), count)
                assert _state(*guards, *ledgers) == before
    finally:
        for ledger in reversed(ledgers):
            ledger.__exit__(None, None, None)
    for i, g in enumerate(guards):
        eps = g.spent_epsilons if isinstance(g, PrivacyFilter) else g.epsilons
        assert len(eps) == counted[i]
        assert sympy.Add(*eps) == sympy.Rational(spent[i].numerator, spent[i].denominator)
    for ledger in ledgers:
        assert len(ledger) == recorded
