"""003 (Dagan, Feldman) Theorem 2: the auditable form of :class:`Theorem2Learner` and its
designed pair (the report target ``003/theorem-2``, :func:`mechanisms.report_targets.
theorem2_audited`): the batch has the law of the shipped single run (exact probabilities on
the pair; single runs on generic data), it records runs of the plan, and the audit sandwich
holds for the correct code and fails for a selection with too little noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from mechanisms.ledger import Ledger
from mechanisms.private_prediction import RealizableLearner, Theorem2Learner
from mechanisms.report_targets import THEOREM2_INSTANCE, theorem2_audited
from mechanisms.synthetic_margin import plane_sample

#: Samples per dataset of the audits below; confidence 95% (the audit's default: alpha = 0.05,
#: Bonferroni-corrected Clopper-Pearson bounds).
AUDIT_SAMPLES = 20_000


def _sigma(t: float) -> float:
    return 1 / (1 + math.exp(-t))


def _exact_p1() -> float:
    """P[answer 1 on d0] for the pair (see :func:`theorem2_audited`): selection log-odds
    2 beta, beta = 1/(eta n); unanimous votes answered correctly with sigma(eps_R parts / 2);
    then the flip."""
    p = THEOREM2_INSTANCE
    n, eta, alpha = p["n"], float(sympy.Rational(p["eta"])), float(sympy.Rational(p["alpha"]))
    beta = eps_r = 1 / (eta * n)
    s, v = _sigma(2 * beta), _sigma(eps_r * p["parts"] / 2)
    return alpha + (1 - 2 * alpha) * (s * v + (1 - s) * (1 - v))


@pytest.mark.slow
def test_batch_matches_the_exact_prediction_law_on_the_pair() -> None:
    """Frequencies of 1 over 40,000 batched runs per dataset lie within 4.5 standard
    deviations of the exact P (two-sided alpha ~ 7e-6 each); d1 is the mirror image."""
    learner, q, (d0, d1) = theorem2_audited()
    mech = learner.mechanism(q)
    p1, runs = _exact_p1(), 40_000
    sd = math.sqrt(p1 * (1 - p1) / runs)
    f0 = mech.batch(d0, runs, np.random.default_rng(1)).mean()
    f1 = mech.batch(d1, runs, np.random.default_rng(2)).mean()
    assert abs(f0 - p1) <= 4.5 * sd
    assert abs(f1 - (1 - p1)) <= 4.5 * sd


@pytest.mark.slow  # about 4 s
def test_batch_matches_single_runs_on_generic_data() -> None:
    """On 24 plane records (distinct points, so no grouping shortcut applies), 400 single
    runs of ``predict`` and 4,000 batched runs give the same frequency of 1 within 4.5
    standard deviations of the difference (two-sided alpha ~ 7e-6 per query)."""
    rng = np.random.default_rng(3)
    X, y = plane_sample(24, rng, label_noise=0.0)
    learner = Theorem2Learner(2, "1/8", "1/20", 4)
    for x in (np.array([0.6, 0.5]), np.array([-0.4, 0.7])):
        mech = learner.mechanism(x)
        single = np.mean([mech((X, y), rng) for _ in range(400)])
        batched = mech.batch((X, y), 4_000, np.random.default_rng(4)).mean()
        sd = math.sqrt(batched * (1 - batched) * (1 / 400 + 1 / 4_000))
        print(f"x = {x}: single {single:.3f}, batched {batched:.3f}")
        assert abs(single - batched) <= 4.5 * sd + 1e-9


def test_batch_records_runs_of_the_plan() -> None:
    learner, q, (d0, _) = theorem2_audited()
    with Ledger() as ledger:
        learner.mechanism(q).batch(d0, 500, np.random.default_rng(5))
    n = THEOREM2_INSTANCE["n"]
    assert [(e.event, e.count) for e in ledger.entries] == [(learner.plan(n), 500)]


class _SelectionWithLittleNoise(Theorem2Learner):
    """The broken variant: the selection's exponential mechanism runs with 1000 times the
    privacy parameter of step 3 (its noise scale divided by 1000); A^R unchanged."""

    def selection_epsilon(self, n):  # type: ignore[no-untyped-def]
        return 1000 * super().selection_epsilon(n)

    def relabel(self, n):  # type: ignore[no-untyped-def]
        return RealizableLearner(self.parts, super().selection_epsilon(n) / 2)


def _sandwich(learner: Theorem2Learner) -> tuple[float, float]:
    correct, q, pair = theorem2_audited()
    upper = Accountant().guarantee(correct.plan(THEOREM2_INSTANCE["n"])).epsilon_upper
    result = audit(
        learner.mechanism(q),
        pairs=[pair],
        epsilon=float(upper),
        samples=AUDIT_SAMPLES,
        seed=1,
        progress=False,
    )
    return result.epsilon_lower, float(upper)


def test_audit_lower_bound_is_below_the_accountant_upper_bound() -> None:
    """Certified lower bound (95%, 20,000 samples per dataset) <= the accountant's upper
    bound for the plan (0.592 at the instance; the pair's exact loss is 0.036)."""
    learner, _, _ = theorem2_audited()
    lower, upper = _sandwich(learner)
    assert lower <= upper
    assert math.log(_exact_p1() / (1 - _exact_p1())) <= upper


def test_the_pair_catches_a_selection_with_too_little_noise() -> None:
    """The same pair and audit on the broken variant certify a lower bound above the
    accountant's upper bound for the declared plan (the selection is then almost
    deterministic, so the answer moves by A^R's accuracy: exact loss ~1.7 > 0.592)."""
    p = THEOREM2_INSTANCE
    broken = _SelectionWithLittleNoise(p["n_prime"], p["eta"], p["alpha"], p["parts"])
    lower, upper = _sandwich(broken)
    assert lower > upper
