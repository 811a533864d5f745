"""The ``bits`` family finds floating-point pitfalls; the safe counterparts are not flagged.

Every audit here is at confidence 0.95 (alpha = 0.05: a correct mechanism is flagged with
probability at most 0.05) with the stated samples per dataset, seeds fixed.
"""

from __future__ import annotations

import time

import pytest

from dpaudit.audit import audit
from dpaudit.audit.options import resolve_families
from dpaudit.audit.selection import FAMILIES
from mechanisms.catalogue import LaplaceCount
from mechanisms.floating_point import (
    BrokenBoxMullerGaussian,
    BrokenFloat32ClampedSum,
    BrokenNaiveFloatLaplace,
    GeometricCount,
    SnappingLaplace,
    float_broken_mechanisms,
    float_safe_mechanisms,
)

CONFIDENCE = 0.95
#: DP-Sniper's certified bound on textbook Laplace at epsilon 0.1, pair (1, 0), with 2 x 10^8
#: final samples at confidence 0.9 (Bichsel et al. 2021, S&P, its floating-point
#: experiment; the published reference log: eps_lcb = 0.2521).
DP_SNIPER_BOUND = 0.25
SAMPLES = 100_000


def _audit(mechanism, samples=SAMPLES, seed=17, **options):
    return audit(
        mechanism,
        pairs=mechanism.pairs,
        epsilon=mechanism.epsilon,
        delta=mechanism.delta,
        samples=samples,
        confidence=CONFIDENCE,
        seed=seed,
        **options,
    )


def test_naive_laplace_at_epsilon_point_one_beats_dp_sniper():
    """alpha = 0.05, 10^5 samples per dataset (DP-Sniper: 2 x 10^8 at alpha = 0.1).

    Fails on a broken auditor: without the ``bits`` family (``arithmetic="real"``) the same
    audit certifies below 0.1, far from 0.25.
    """
    start = time.perf_counter()
    result = _audit(BrokenNaiveFloatLaplace(0.1))
    assert time.perf_counter() - start < 5.0
    assert result.violation and result.family == "bits"
    assert result.epsilon_lower >= DP_SNIPER_BOUND
    assert result.epsilon_lower > 5.0  # a class of outputs one input never produces
    blind = _audit(BrokenNaiveFloatLaplace(0.1), arithmetic="real")
    assert blind.epsilon_lower < DP_SNIPER_BOUND and not blind.violation
    # (With certification="joint" this seed's counts certify 0.1024 > 0.1: their plug-in
    # estimate is 0.115, two standard deviations high, the at most 5% false alarm of a 95%
    # audit of a mechanism whose threshold events attain e^0.1 exactly; the default
    # Clopper-Pearson rectangle certifies 0.0963.)


@pytest.mark.parametrize("mechanism", float_broken_mechanisms(), ids=lambda m: m.name)
def test_float_pitfalls_are_flagged(mechanism):
    """alpha = 0.05, 10^5 samples per dataset."""
    result = _audit(mechanism)
    assert result.violation, str(result)


@pytest.mark.parametrize("mechanism", float_safe_mechanisms(), ids=lambda m: m.name)
def test_safe_counterparts_are_not_flagged(mechanism):
    """alpha = 0.05, 10^5 samples per dataset; the bits family is searched (the mechanisms
    declare ``arithmetic = "float"``). Shown able to fail: the same audit flags every
    mechanism of ``test_float_pitfalls_are_flagged``. False-alarm rate measured in
    ``test_false_alarm_rate_of_safe_counterparts`` (slow)."""
    assert "bits" in resolve_families(mechanism, FAMILIES, None)
    result = _audit(mechanism)
    assert not result.violation, str(result)
    assert result.epsilon_lower <= mechanism.epsilon


def test_float32_sum_is_caught_on_its_sensitivity_not_its_bits():
    """The snapped noise leaves no bit pattern: the threshold family finds the doubled shift
    (true epsilon about 2 at claim 1). alpha = 0.05, 10^5 samples per dataset."""
    mechanism = BrokenFloat32ClampedSum(1.0)
    assert mechanism.query(mechanism.pairs[0].d0) - mechanism.query(mechanism.pairs[0].d1) == 2.0
    result = _audit(mechanism)
    assert result.violation and result.family != "bits"
    assert result.epsilon_lower <= 2.0 + 1e-9


def test_arithmetic_declarations_choose_the_families():
    assert LaplaceCount.arithmetic == "real"
    assert "bits" not in resolve_families(LaplaceCount(), FAMILIES, None)
    assert "bits" in resolve_families(LaplaceCount(), FAMILIES, "float")
    assert "bits" in resolve_families(lambda d, rng: d, FAMILIES, None)  # undeclared: float
    assert "bits" not in resolve_families(BrokenNaiveFloatLaplace(), FAMILIES, "real")
    with pytest.raises(ValueError, match="arithmetic must be 'float', 'real' or None, got 'int'"):
        resolve_families(LaplaceCount(), FAMILIES, "int")
    with pytest.raises(ValueError, match="delta must be a float in"):
        BrokenBoxMullerGaussian(0.5, 0)
    with pytest.raises(ValueError, match=r"bound must be in \(scale, 2\^46 scale\)"):
        SnappingLaplace(0.1, bound=5.0)


#: Repetitions of the false-alarm measurement (slow) and samples per dataset of each audit.
FALSE_ALARM_RUNS = 100
FALSE_ALARM_SAMPLES = 20_000


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism", [SnappingLaplace(0.1), GeometricCount(0.1)], ids=lambda m: m.name
)
def test_false_alarm_rate_of_safe_counterparts(mechanism):
    """alpha = 0.05 per audit, 2 x 10^4 samples per dataset, 100 seeds.

    Measured (seeds 0-99): 0 false alarms of 100 for each; the largest certified bounds were
    0.0906 (snapping) and 0.0991 (geometric, true epsilon exactly 0.1). The test allows at
    most 12 (the
    0.999 quantile of Binomial(100, 0.05)), so it fails only if the rate clearly exceeds
    alpha. Shown able to fail: BrokenNaiveFloatLaplace is flagged on every seed tried.
    """
    alarms = sum(
        _audit(mechanism, samples=FALSE_ALARM_SAMPLES, seed=s).violation
        for s in range(FALSE_ALARM_RUNS)
    )
    assert alarms <= 12
    broken = BrokenNaiveFloatLaplace(0.1)
    assert all(_audit(broken, samples=FALSE_ALARM_SAMPLES, seed=s).violation for s in range(5))


def test_cli_arithmetic_option(capsys):
    """alpha = 0.05, 2 x 10^4 samples per dataset: exit 1 in doubles, 0 in real arithmetic."""
    from dpaudit.cli import main

    target = "mechanisms.floating_point:BrokenNaiveFloatLaplace"
    common = ["audit", target, "--samples", "20000", "--seed", "0", "--no-progress"]
    assert main([*common]) == 1
    assert "binade" in capsys.readouterr().out
    assert main([*common, "--arithmetic", "real"]) == 0
    assert main([*common, "--arithmetic", "int"]) == 2


def test_bits_family_on_scalars_and_on_each_coordinate_of_vectors():
    import numpy as np

    from dpaudit.audit.outputs import OutputSchema
    from dpaudit.audit.selection import search_events

    rng = np.random.default_rng(0)
    x = rng.laplace(size=(400, 2))

    def scorer(num, den, n):
        return np.log((num + 1.0) / (den + 1.0))

    found = search_events(x, x + 1, OutputSchema("vector", 2), scorer, families=("bits",), rng=rng)
    assert {c.family for c in found} == {"bits"} and len(found) == 16
    assert sorted({c.event.coordinate for c in found}) == [0, 1]
    found = search_events(
        x[:, 0], x[:, 1], OutputSchema("scalar"), scorer, families=("bits",), rng=rng
    )
    assert {c.family for c in found} == {"bits"} and len(found) == 8
