"""The auditor's false-alarm rate on correct mechanisms is at most 1 - confidence.

Designed as a statistical test (STYLE.md): the level and the number of runs are named
constants, the mechanisms are the hardest case for a sound auditor (correct mechanisms whose
worst event attains exactly e^epsilon, audited at exactly their epsilon, so any optimism in the
statistics shows up as alarms), and a companion test shows that the same experiment does
catch an unsound auditor (one that certifies on its selection samples without correction).
Recorded when written: 5 and 3 alarms in 120 audits (rates 0.04 and 0.025 <= 0.2) for the
auditor, 51 in 120 (0.43) for the unsound one; with the joint certification test
(``certification="joint"``, dpaudit.audit.joint), 14 and 11 (0.117 and 0.092): closer to the
level, as a less conservative test should be, and still below it.
"""

from __future__ import annotations

import _audit_mechanisms as mech
import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.estimators import clopper_pearson, epsilon_lower_bound, predicted_bounds
from dpaudit.audit.outputs import OutputSchema
from dpaudit.audit.selection import search_events
from mechanisms.catalogue import RandomizedResponse

#: The auditor runs at confidence 1 - ALPHA; a large ALPHA makes its error rate measurable.
ALPHA = 0.2
#: Independent audits (seeds 0..RUNS-1) per experiment, and samples per dataset in each.
RUNS = 120
SAMPLES = 2_000

CASES = {
    "randomized-response": (RandomizedResponse(1.0), 0, 1),
    "laplace": (mech.ShiftedLaplace(1.0), 0.0, 1.0),
}
#: Cases whose RUNS audits take over 5 s: slow suite (continuous outputs: event search; the
#: joint certification test, about 0.3 s an audit at these counts -- the default suite checks
#: its level in tests/audit/test_joint.py).
SLOW_CASES = {
    ("laplace", "clopper-pearson"),
    ("laplace", "joint"),
    ("randomized-response", "joint"),
}


def _alarm_rate(run) -> tuple[int, float]:
    alarms = sum(run(seed) for seed in range(RUNS))
    return alarms, alarms / RUNS


@pytest.mark.parametrize(
    ("case", "certification"),
    [
        pytest.param(c, m, marks=[pytest.mark.slow] if (c, m) in SLOW_CASES else [])
        for c in CASES
        for m in ("clopper-pearson", "joint")
    ],
)
def test_false_alarm_rate_is_at_most_alpha(case, certification):
    mechanism, d0, d1 = CASES[case]

    def run(seed: int) -> bool:
        return audit(
            mechanism,
            d0,
            d1,
            epsilon=1.0,
            samples=SAMPLES,
            confidence=1 - ALPHA,
            seed=seed,
            certification=certification,
        ).violation

    alarms, rate = _alarm_rate(run)
    # Observed rate at most ALPHA (a correct auditor's expected rate is below ALPHA, so with
    # RUNS audits exceeding it by chance is unlikely; seeds are fixed, so this is deterministic).
    assert rate <= ALPHA, f"{alarms} false alarms in {RUNS} audits"


def _unsound_audit(mechanism, d0, d1, seed: int) -> bool:
    """Select and certify on the same samples, no multiple-testing correction: unsound."""
    rng = np.random.default_rng(seed)
    x0 = np.asarray(mechanism.batch(d0, SAMPLES, rng), dtype=float)
    x1 = np.asarray(mechanism.batch(d1, SAMPLES, rng), dtype=float)

    def plug_in(num, den, n):  # rank by the plug-in ratio (what StatDP-style search reports)
        return predicted_bounds(num, den, n, n, 0.5 - 1e-9, 0.0)

    best = search_events(x0, x1, OutputSchema("scalar"), plug_in, rng=rng)[0]
    xs = (x0, x1)
    k_num = int(best.event.contains(xs[best.numerator]).sum())
    k_den = int(best.event.contains(xs[1 - best.numerator]).sum())
    lower, _ = clopper_pearson(k_num, SAMPLES, ALPHA / 2)
    _, upper = clopper_pearson(k_den, SAMPLES, ALPHA / 2)
    return epsilon_lower_bound(float(lower), float(upper), 0.0) > 1.0


@pytest.mark.slow  # 7 s: a statistical experiment
def test_the_experiment_catches_an_unsound_auditor():
    mechanism, d0, d1 = CASES["laplace"]
    alarms, rate = _alarm_rate(lambda seed: _unsound_audit(mechanism, d0, d1, seed))
    assert rate > ALPHA, f"only {alarms} alarms in {RUNS}: the experiment has no power"
