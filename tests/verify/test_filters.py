"""Privacy filters as ledger guards: a run halts before exceeding its budget."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.events import Gaussian, Laplace
from dpaudit.filters import BudgetExceededError, PrivacyFilter, PrivacyOdometer
from mechanisms.ledger import Ledger


def test_basic_filter_halts_before_budget() -> None:
    f = PrivacyFilter(1, method="basic")
    ledger = Ledger(guard=f)
    for _ in range(10):
        ledger.add(Laplace(10))  # 0.1 each
    with pytest.raises(BudgetExceededError, match="beyond the budget"):
        ledger.add(Laplace(10))
    assert len(ledger) == 10
    assert f.spent()[0] <= 1.0 + 1e-12


def test_advanced_filter_admits_more_small_steps() -> None:
    basic, adv = PrivacyFilter(1, "1e-6"), PrivacyFilter(1, "1e-6", method="advanced")
    counts = []
    for f in (basic, adv):
        n = 0
        while f.admits(Laplace(50)) and n < 1000:
            f(Laplace(50))
            n += 1
        counts.append(n)
    # basic: 50 steps of 1/50; advanced: sqrt(2 ln(1e6) n)/50 + n (e^0.02 - 1)/100 <= 1
    assert counts[0] == 50 and counts[1] > counts[0]


def test_zcdp_filter_with_gaussians_and_adaptive_scales() -> None:
    f = PrivacyFilter(2, "1e-6", method="zcdp")
    rng = np.random.default_rng(1)
    admitted = 0
    while True:
        sigma = float(rng.uniform(5, 20))  # chosen at run time
        if not f.admits(Gaussian(sigma)):
            break
        f(Gaussian(sigma))
        admitted += 1
    assert admitted > 0 and f.spent()[0] <= 2.0


def test_filter_validation() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        PrivacyFilter(1, method="magic")
    with pytest.raises(ValueError, match="delta must be in"):
        PrivacyFilter(1, 0, method="advanced")
    with pytest.raises(ValueError, match="epsilon must be a number in"):
        PrivacyFilter(-1)


def test_odometer_reads_running_total() -> None:
    odo = PrivacyOdometer()
    ledger = Ledger(guard=odo)
    ledger.add(Laplace(10))
    ledger.add(Laplace(5))
    assert odo.reading() == (pytest.approx(0.3), 0.0)
