"""Every runnable primitive passes the primitive conformance suite; ledger behaviour."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.accountant import Accountant
from dpaudit.conformance import PrimitiveConformance
from dpaudit.events import Composed, Laplace, PoissonSampled, PureDP, SelfComposed
from mechanisms.ledger import Ledger, LedgerExceededError, record, recorded_as
from mechanisms.primitives import (
    AboveThresholdMechanism,
    DeclaredMechanism,
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponseMechanism,
    ReportNoisyMaxMechanism,
)


class TestLaplaceMechanism(PrimitiveConformance):
    def make(self):
        return LaplaceMechanism(2)

    def run(self, p, rng, size):
        return p.release(3.0, rng, size)


class TestGaussianMechanism(PrimitiveConformance):
    def make(self):
        return GaussianMechanism(1.5, sensitivity=2)

    def run(self, p, rng, size):
        return p.release([1.0, 2.0], rng, size)


class TestDiscreteLaplaceMechanism(PrimitiveConformance):
    def make(self):
        return DiscreteLaplaceMechanism("2.5")

    def run(self, p, rng, size):
        return p.release(7, rng, size)


class TestDiscreteGaussianMechanism(PrimitiveConformance):
    def make(self):
        return DiscreteGaussianMechanism(2)

    def run(self, p, rng, size):
        return p.release([1, 2, 3], rng, size)


class TestExponentialMechanism(PrimitiveConformance):
    def make(self):
        return ExponentialMechanism(1)

    def run(self, p, rng, size):
        return p.select([0.0, 1.0, 5.0], rng, size)


class TestRandomizedResponseMechanism(PrimitiveConformance):
    def make(self):
        return RandomizedResponseMechanism(1, categories=3)

    def run(self, p, rng, size):
        return p.respond(1, rng, size)


class TestReportNoisyMaxMechanism(PrimitiveConformance):
    def make(self):
        return ReportNoisyMaxMechanism("0.5", noise="laplace")

    def run(self, p, rng, size):
        return p.select([3.0, 1.0, 2.0], rng, size)


class TestAboveThresholdMechanism(PrimitiveConformance):
    def make(self):
        return AboveThresholdMechanism(1, threshold=5.0, cutoff=2)

    def run(self, p, rng, size):
        if size is None:
            return p.run([1.0, 9.0, 2.0, 8.0], rng)
        return p.run_batch([1.0, 9.0, 2.0, 8.0], rng, size)


def test_discrete_mechanisms_refuse_non_integers():
    with pytest.raises(ValueError, match="integer-valued"):
        DiscreteLaplaceMechanism(1).release(0.5, np.random.default_rng(0))


def test_above_threshold_halts_after_cutoff():
    m = AboveThresholdMechanism(10, threshold=0.0, cutoff=1)
    session = m.start(np.random.default_rng(1))
    assert session.query(100.0) is True
    with pytest.raises(RuntimeError, match="halted"):
        session.query(100.0)


def test_randomized_response_rejects_out_of_range_category():
    with pytest.raises(ValueError, match=r"value must be a category in \[0, 1\], got 2"):
        RandomizedResponseMechanism(1).respond(2, np.random.default_rng(0))


def test_exact_probabilities_sum_to_one_and_match_ratio():
    p = ExponentialMechanism(2).probabilities([0.0, 1.0])
    assert float(sum(p)) == pytest.approx(1.0)
    assert float(p[1] / p[0]) == pytest.approx(np.exp(1.0))  # exp(eps * 1 / 2)


def test_ledger_check_within_catches_overspending():
    rng = np.random.default_rng(0)
    with Ledger() as ledger:
        for _ in range(3):
            LaplaceMechanism(10).release(1.0, rng)
    spent, planned = ledger.check_within(SelfComposed(Laplace(10), 3))
    assert spent == pytest.approx(0.3) and planned == pytest.approx(0.3)
    with pytest.raises(LedgerExceededError, match=r"spent epsilon 0\.3"):
        ledger.check_within(SelfComposed(Laplace(10), 2))


def test_guard_refusal_records_nothing_anywhere():
    def refuse(event):
        raise RuntimeError("budget exhausted")

    rng = np.random.default_rng(0)
    with Ledger() as outer, Ledger(guard=refuse) as inner:
        with pytest.raises(RuntimeError, match="budget exhausted"):
            record(Laplace(1))
        assert LaplaceMechanism
    assert len(outer) == 0 and len(inner) == 0
    with Ledger() as ledger:
        LaplaceMechanism(1).release(0.0, rng)
    assert len(ledger) == 1


def test_recorded_as_wraps_events():
    rng = np.random.default_rng(0)
    with Ledger() as ledger, recorded_as(lambda e: PoissonSampled(e, "0.01")):
        LaplaceMechanism(1).release(0.0, rng)
    assert ledger.event() == PoissonSampled(Laplace(1), "0.01")


def test_declared_mechanism_records_its_declaration():
    m = DeclaredMechanism(PureDP("0.5"), lambda x, rng: x + rng.integers(0, 2))
    with Ledger() as ledger:
        m(3, rng=np.random.default_rng(0))
    assert ledger.event() == PureDP("0.5")
    with pytest.raises(ValueError, match="PureDP, ApproxDP or ZCDP"):
        DeclaredMechanism(Laplace(1), lambda rng: 0)


def test_empty_ledger_is_an_error():
    with pytest.raises(ValueError, match="the ledger is empty"):
        Ledger().event()


def test_ledger_merges_consecutive_identical_runs():
    """50 identical steps, then another mechanism, then the first again: the ledger keeps one
    entry per run, and its event is Composed([50-fold, other, 1-fold]); its guarantee matches
    the accountant's on the 52 leaves composed one by one (same event, fewer nodes)."""
    rng = np.random.default_rng(0)
    with Ledger() as ledger:
        for _ in range(50):
            LaplaceMechanism(10).release(0.0, rng)
        LaplaceMechanism(1).release(0.0, rng)
        LaplaceMechanism(10).release(0.0, rng)
    assert len(ledger) == 52
    assert [e.count for e in ledger.merged()] == [50, 1, 1]
    assert ledger.event() == Composed([SelfComposed(Laplace(10), 50), Laplace(1), Laplace(10)])
    merged = ledger.guarantee(1e-6)
    leaves = Accountant().guarantee(Composed([Laplace(10)] * 51 + [Laplace(1)]), 1e-6)
    assert merged.epsilon_upper == pytest.approx(leaves.epsilon_upper, rel=1e-3)
