"""DPWinnow.batch (the auditor's vectorised runs) has the law of DPWinnow.run and records
what the separate runs record.

The law check is a chi-square homogeneity test of the output counts of ``RUNS`` batched runs
against ``RUNS`` separate runs (cells with fewer than 20 outputs pooled) at significance
``ALPHA``; it is shown to reject a batch whose multiplicative-weights step is off (eta x 3/2).
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from scipy import stats

from mechanisms.ledger import Ledger
from mechanisms.winnow import DPWinnow, DPWinnowParameters

RUNS = 6_000
ALPHA = 1e-3


def _winnow(eta: float) -> DPWinnow:
    params = DPWinnowParameters(
        horizon=5,
        rho=0.5,
        epsilon_hat=1.0,
        eta=eta,
        threshold=0.5,
        samples=2,
        beta=0.1,
        switches=2,
        setting="test",
    )
    return DPWinnow(4, params)


def _stream() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.choice([-1, 1], size=(5, 4)), rng.choice([-1, 1], size=5)


def _p_value(a: collections.Counter, b: collections.Counter) -> float:
    keys = sorted(set(a) | set(b), key=str)
    big = [k for k in keys if a[k] + b[k] >= 20]
    rest = [k for k in keys if a[k] + b[k] < 20]
    table = [
        [a[k] for k in big] + [sum(a[k] for k in rest)],
        [b[k] for k in big] + [sum(b[k] for k in rest)],
    ]
    return float(stats.chi2_contingency(np.array(table))[1])


@pytest.mark.slow
def test_batch_has_the_law_of_separate_runs() -> None:
    xs, ys = _stream()
    mech = _winnow(0.5)
    batched = collections.Counter(mech.batch((xs, ys), RUNS, np.random.default_rng(1)))
    rng = np.random.default_rng(2)
    separate = collections.Counter(mech.run(xs, ys, rng).output() for _ in range(RUNS))
    assert _p_value(batched, separate) > ALPHA
    off = collections.Counter(_winnow(0.75).batch((xs, ys), RUNS, np.random.default_rng(3)))
    assert _p_value(off, separate) < ALPHA


def test_batch_records_one_above_threshold_start_per_instance_and_m_samples_per_switch() -> None:
    xs, ys = _stream()
    mech = _winnow(0.5)
    with Ledger() as ledger:
        out = mech.batch((xs, ys), 200, np.random.default_rng(4))
    counts = collections.Counter()
    for entry in ledger.entries:
        counts[type(entry.event).__name__] += entry.count
    switches = sum(o.index(-1) for o in out)
    restarts = sum(min(o.index(-1), 1) for o in out)  # K = 2: a second instance after a first
    assert counts["Exponential"] == 2 * switches
    assert counts["AboveThreshold"] == 200 + restarts
