"""A privacy filter or odometer shared by many threads: spending is atomic, the budget is
never exceeded, and what was spent is exactly the sum of the steps admitted."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from dpaudit.events import Laplace
from dpaudit.filters import BudgetExceededError, PrivacyFilter, PrivacyOdometer

THREADS = 16
ROUNDS = 20
SCALES = (20, 30, 50)  # steps of epsilon 1/20, 1/30, 1/50


@pytest.mark.usefixtures("fast_switching")
def test_many_threads_never_exceed_the_budget_and_spend_what_they_were_admitted(
    run_threads,
) -> None:
    """16 threads charge one basic filter of budget 1 with steps of 1/20, 1/30, 1/50 until
    refused, 20 rounds: the filter's sum is exactly the sum of the admitted steps, at most 1,
    and the budget is used up (no step that fits was refused)."""
    for _ in range(ROUNDS):
        f = PrivacyFilter(1)
        admitted: list[list[Fraction]] = [[] for _ in range(THREADS)]

        def work(i: int, f: PrivacyFilter = f, admitted: list = admitted) -> None:
            scale = SCALES[i % len(SCALES)]
            while True:
                try:
                    f(Laplace(scale))
                except BudgetExceededError:
                    return
                admitted[i].append(Fraction(1, scale))

        run_threads(THREADS, work)
        total = sum((sum(a, Fraction(0)) for a in admitted), Fraction(0))
        steps = sum(len(a) for a in admitted)
        assert total <= 1
        assert len(f.spent_epsilons) == steps
        assert sympy.Add(*f.spent_epsilons) == sympy.Rational(total.numerator, total.denominator)
        assert f.spent()[0] <= 1.0
        assert total > 1 - Fraction(1, min(SCALES))  # the smallest step no longer fits


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_many_threads_on_an_advanced_filter_stay_within_its_statistic(run_threads) -> None:
    """The same with the advanced filter (a non-additive statistic): the filter's statistic
    of the steps admitted stays within the budget, and every admitted step is counted."""
    for _ in range(ROUNDS // 4):
        f = PrivacyFilter(1, "1e-6", method="advanced")
        counts = [0] * THREADS

        def work(i: int, f: PrivacyFilter = f, counts: list = counts) -> None:
            while True:
                try:
                    f(Laplace(50))
                except BudgetExceededError:
                    return
                counts[i] += 1

        run_threads(THREADS, work)
        assert len(f.spent_epsilons) == sum(counts)
        assert f.spent()[0] <= 1.0
        # sequentially the filter admits exactly this many steps of 1/50
        g = PrivacyFilter(1, "1e-6", method="advanced")
        n = 0
        while g.admits(Laplace(50)):
            g(Laplace(50))
            n += 1
        assert sum(counts) == n


@pytest.mark.usefixtures("fast_switching")
def test_many_threads_on_one_odometer_count_every_step_once(run_threads) -> None:
    """16 threads x 25 steps on one odometer, 20 rounds: 400 steps, each counted once, the
    reading is their exact sum."""
    for _ in range(ROUNDS):
        odo = PrivacyOdometer()

        def work(i: int, odo: PrivacyOdometer = odo) -> None:
            for _ in range(25):
                odo(Laplace(SCALES[i % len(SCALES)]))

        run_threads(THREADS, work)
        assert len(odo.epsilons) == len(odo.deltas) == THREADS * 25
        expected = sum(25 * Fraction(1, SCALES[i % len(SCALES)]) for i in range(THREADS))
        assert sympy.Add(*odo.epsilons) == sympy.Rational(expected.numerator, expected.denominator)


@pytest.mark.usefixtures("fast_switching")
def test_a_child_filter_shared_by_threads_never_overcharges_its_parent(run_threads) -> None:
    """Two child filters (budget 1/2 each) under one parent of budget 3/4, 16 threads
    charging the children: the parent's spending is exactly the children's together, at
    most 3/4, and each child is within its own budget."""
    for _ in range(ROUNDS // 2):
        parent = PrivacyFilter("3/4")
        children = [PrivacyFilter("1/2", parent=parent), PrivacyFilter("1/2", parent=parent)]

        def work(i: int, children: list = children) -> None:
            child = children[i % 2]
            while True:
                try:
                    child(Laplace(SCALES[i % len(SCALES)]))
                except BudgetExceededError:
                    return

        run_threads(THREADS, work)
        spent = [sympy.Add(*c.spent_epsilons) for c in children]
        assert all(s <= sympy.Rational(1, 2) for s in spent)
        assert sympy.Add(*parent.spent_epsilons) == spent[0] + spent[1]
        assert sympy.Add(*parent.spent_epsilons) <= sympy.Rational(3, 4)
        assert len(parent.spent_epsilons) == sum(len(c.spent_epsilons) for c in children)
