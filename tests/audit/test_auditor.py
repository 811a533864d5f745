"""The Monte Carlo auditor: bounds, determinism, engines, output kinds, pairs, validation."""

from __future__ import annotations

import json
import math

import _audit_mechanisms as mech
import numpy as np
import pytest

from dpaudit.audit import NeighbouringPair, audit, query_pairs

#: Samples per dataset for the quick audits in this file.
SAMPLES = 100_000
SEED = 12345


def test_laplace_bound_is_close_below_the_truth():
    result = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=SAMPLES, seed=SEED)
    assert 0.9 < result.epsilon_lower <= 1.0
    assert not result.violation
    assert result.hits_d0 + result.hits_d1 > 0
    assert result.samples_d0 == SAMPLES - result.selection_samples


def test_too_little_noise_is_flagged():
    result = audit(mech.ShiftedLaplace(0.5), 0.0, 1.0, epsilon=1.0, samples=SAMPLES, seed=SEED)
    assert result.violation and result.epsilon_lower > 1.5


def test_same_seed_same_result_and_seed_is_recorded():
    a = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000, seed=7)
    b = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000, seed=7)
    assert a.epsilon_lower == b.epsilon_lower and a.event == b.event
    fresh = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000)
    again = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000, seed=fresh.seed)
    assert fresh.epsilon_lower == again.epsilon_lower


def test_result_does_not_depend_on_worker_count():
    kwargs = dict(epsilon=1.0, samples=60_000, seed=3, batch_size=10_000)
    one = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, workers=1, **kwargs).to_dict()
    two = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, workers=2, **kwargs).to_dict()
    one.pop("wall_time"), two.pop("wall_time")
    assert one == two


def test_executor_is_used_as_given():
    from concurrent.futures import ThreadPoolExecutor

    kwargs = dict(epsilon=1.0, samples=40_000, seed=5, batch_size=5_000)
    with ThreadPoolExecutor(2) as pool:
        threaded = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, executor=pool, **kwargs)
    local = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, **kwargs)
    assert threaded.epsilon_lower == local.epsilon_lower


def test_mechanism_without_batch_is_called_in_a_loop():
    result = audit(mech.laplace_loop, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=1)
    assert 0.5 < result.epsilon_lower <= 1.0


def test_categorical_outputs():
    # Randomized response with epsilon ln 3 answering "yes"/"no".
    result = audit(mech.coin_label, 0, 1, epsilon=math.log(3), samples=40_000, seed=2)
    assert 0.9 < result.epsilon_lower <= math.log(3)
    assert "'yes'" in result.event or "'no'" in result.event


def test_impossible_pattern_is_a_zero_count_witness():
    result = audit(mech.leaky_pattern, 0, 1, epsilon=1.0, samples=20_000, seed=4)
    assert result.violation and result.epsilon_lower > 5
    assert result.hits_d0 == 0 or result.hits_d1 == 0
    assert result.epsilon_estimate == math.inf


def test_delta_lowers_the_bound():
    base = dict(epsilon=1.0, samples=SAMPLES, seed=SEED)
    pure = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, **base)
    approx = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, delta=0.05, **base)
    assert approx.epsilon_lower < pure.epsilon_lower


@pytest.mark.slow
def test_pair_family_search_certifies_one_pair():
    def rnm_value(d, rng):  # noisy max value: leaks when all answers move up
        return float(np.max(np.asarray(d) + rng.laplace(0.0, 2.0, len(d))))

    pairs = query_pairs(3)
    result = audit(rnm_value, pairs=pairs, epsilon=1.0, samples=20_000, seed=9)
    assert result.pairs_searched == len(pairs)
    assert result.violation  # true epsilon 3 * 1/2 = 1.5
    assert "all answers" in result.pair


def test_query_pairs_patterns():
    pairs = query_pairs(4)
    names = [p.name for p in pairs]
    assert names[0] == "one answer up" and "half up, half down" in names
    for p in pairs:
        assert np.max(np.abs(p.d1 - p.d0)) == 1.0
    assert len(query_pairs(1)) == 2  # only up and down are distinct for one query


def test_result_serialises():
    result = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000, seed=1)
    data = json.loads(result.to_json())
    assert data["epsilon_lower"] == result.epsilon_lower
    assert data["verdict"].startswith("no violation found")
    text = str(result)
    assert "certified, rounded down" in text and "point estimate, not a bound" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(epsilon=-1.0), r"epsilon must be a number >= 0, got -1.0"),
        (dict(delta=1.0), r"delta must be a number in \[0, 1\), got 1.0"),
        (dict(samples=5), r"samples must be an integer in \[10, 1e\+09\] \(MAX_SAMPLES\), got 5"),
        (dict(confidence=1.0), r"confidence must be a float in \(0, 1\), got 1.0"),
        (dict(selection_fraction=1.5), r"selection_fraction must be a float in \(0, 1\)"),
        (dict(workers=0), r"workers must be an integer in \[1, \d+\] .*, got 0"),
        (dict(batch_size=0), r"batch_size must be an integer >= 1, got 0"),
        (dict(families=("nope",)), r"families must be a subset of"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, message):
    args = dict(epsilon=1.0, samples=1_000, seed=0) | kwargs
    with pytest.raises(ValueError, match=message):
        audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, **args)


def test_pairs_input_is_validated():
    with pytest.raises(ValueError, match="d0 and d1 must be given together"):
        audit(mech.ShiftedLaplace(1.0), 0.0, epsilon=1.0, samples=100)
    with pytest.raises(ValueError, match="no datasets to compare"):
        audit(mech.ShiftedLaplace(1.0), epsilon=1.0, samples=100)
    with pytest.raises(ValueError, match="pairs must hold NeighbouringPair"):
        audit(mech.ShiftedLaplace(1.0), pairs=[1.0], epsilon=1.0, samples=100)
    ok = audit(
        mech.ShiftedLaplace(1.0),
        pairs=[NeighbouringPair(0.0, 1.0), (0.0, -1.0)],
        epsilon=1.0,
        samples=1_000,
        seed=0,
    )
    assert ok.pairs_searched == 2


def test_certifying_more_events_widens_the_correction():
    result = audit(
        mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=20_000, seed=1, certify_top=2
    )
    assert result.tests == 4 and "Bonferroni over 4" in result.correction
    assert 0.5 < result.epsilon_lower <= 1.0


def test_progress_bar_can_be_forced(capsys):
    audit(
        mech.ShiftedLaplace(1.0),
        0.0,
        1.0,
        epsilon=1.0,
        samples=20_000,
        seed=1,
        batch_size=5_000,
        progress=True,
    )
    assert "audit" in capsys.readouterr().err


def test_families_can_be_restricted():
    result = audit(
        mech.ShiftedLaplace(1.0),
        0.0,
        1.0,
        epsilon=1.0,
        samples=20_000,
        seed=1,
        families=("threshold",),
    )
    assert result.family == "threshold" and result.event.startswith("the output")


def test_outputs_that_never_repeat_give_zero_not_an_error():
    def unique_label(d, rng):
        return f"run-{rng.integers(1 << 60)}"

    result = audit(unique_label, 0, 1, epsilon=1.0, samples=2_000, seed=0)
    assert result.epsilon_lower == 0.0 and not result.violation
    assert result.event.startswith("no event")


def test_learned_events_on_scalar_outputs_are_restated_as_intervals():
    from dpaudit.audit.classifier import fit_logistic
    from dpaudit.audit.events import ThresholdEvent, plain_intervals

    rng = np.random.default_rng(0)
    x0, x1 = rng.laplace(0, 1, 5_000), rng.laplace(1, 1, 5_000)
    model = fit_logistic(x0, x1, rng)
    event = ThresholdEvent(model, float(np.median(model.values(x0))), above=True)
    text = plain_intervals(event, np.concatenate([x0, x1]))
    assert text.startswith("the output <= ") or text.startswith("the output >= ")
    cut = float(text.split()[-1])
    assert event.contains(np.array([cut - 1.0 if "<=" in text else cut + 1.0]))[0]


def test_many_pairs_are_screened_cheaply_then_the_best_is_searched():
    from dpaudit.audit.monte_carlo import SCREENING_SAMPLES

    samples = 4 * SCREENING_SAMPLES + 40  # selection share exceeds the screening size
    result = audit(
        mech.ShiftedLaplace(1.0),
        pairs=[(0.0, 1.0), (0.0, 0.0)],
        epsilon=1.0,
        samples=samples,
        seed=3,
        families=("threshold",),
    )
    assert result.screening_samples == SCREENING_SAMPLES
    assert result.samples_drawn == 2 * (2 * SCREENING_SAMPLES + samples)
    assert "d1=1.0" in result.pair and result.epsilon_lower > 0.95
