"""One-run auditing (Steinke, Nasr, Jagielski 2023): the certification function against
mpmath and brute-force oracles, the theorem on mechanisms whose count distribution is known
exactly, and audits of synthetic trainers (exactly eps-DP randomized response, and a broken
one) with stated alpha and sample sizes."""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import (
    AuditResult,
    OneRunAuditResult,
    audit_one_run,
    one_run_curve,
    one_run_epsilon_lower,
    one_run_p_value,
    one_run_theory,
)
from dpaudit.audit.one_run import _accuracy, _tail_bound, count_correct, default_guesses


def _oracle(m: int, r: int, v: int, q: float, delta: float) -> mpmath.mpf:
    """Theorem 3.1 / 5.2's p-value at the float q, summed exactly at 60 digits."""
    with mpmath.workdps(60):
        qm = mpmath.mpf(q)
        pmf = [(1 - qm) ** r]  # the recurrence pmf(j + 1) = pmf(j) (r - j) q / ((j + 1)(1 - q))
        for j in range(r):
            pmf.append(pmf[-1] * (r - j) * qm / ((j + 1) * (1 - qm)))
        beta = mpmath.fsum(pmf[v:])
        if delta == 0 or v == 0:
            return min(mpmath.mpf(1), beta)
        window, alpha = mpmath.mpf(0), mpmath.mpf(0)
        for i in range(1, v + 1):  # window = P[v - i <= Bin < v]
            window += pmf[v - i]
            alpha = max(alpha, window / i)
        return min(mpmath.mpf(1), beta + 2 * m * mpmath.mpf(delta) * alpha)


CASES = [
    (10, 10, 10, 0.0),
    (10, 8, 6, 0.0),
    (100, 60, 45, 1e-3),
    (1000, 200, 180, 1e-5),
    (1000, 1000, 850, 1e-6),
    (5000, 2000, 1990, 0.0),
]


@pytest.mark.parametrize(("m", "r", "v", "delta"), CASES)
def test_tail_bound_is_an_upper_bound_within_its_allowance(m, r, v, delta):
    for q in (0.5, 0.73, 0.9, 0.99, 0.999):
        exact = _oracle(m, r, v, q, delta)
        got = _tail_bound(m, r, v, q, delta)
        assert got >= exact
        assert got <= exact * (1 + 1e-8) + 1e-240


@pytest.mark.parametrize(("m", "r", "v", "delta"), CASES)
def test_certified_epsilon_is_verified_and_tight(m, r, v, delta):
    level = 0.05
    eps = one_run_epsilon_lower(m, r, v, delta=delta, confidence=1 - level)
    if eps == 0.0:
        assert _oracle(m, r, v, 0.5, delta) > level * (1 - 1e-9)
        return
    # the hypothesis at the returned epsilon is rejected (oracle, with the float q's ulp)
    assert _oracle(m, r, v, _accuracy(eps), delta) <= level * (1 + 1e-9)
    if delta == 0:  # monotone in epsilon: a little more is no longer rejected
        assert _oracle(m, r, v, _accuracy(eps + 1e-6), delta) > level


def test_all_correct_matches_the_closed_form():
    # delta = 0, v = r: p-value q^r, so eps = logit(alpha^(1/r))
    for r in (1, 5, 30, 400):
        q = 0.05 ** (1 / r)
        expected = max(0.0, math.log(q / (1 - q)))
        got = one_run_epsilon_lower(1000, r, r)
        assert got <= expected + 1e-12
        assert got == pytest.approx(expected, rel=1e-8, abs=1e-12)


def test_paper_reference_algorithm():
    """Algorithm 2 of the paper (bisection on the p-value with the delta term, written here
    from its formula) gives the same epsilon to the bisection's resolution."""

    def p_value(m, r, v, eps, delta):
        return float(_oracle(m, r, v, 1 / (1 + math.exp(-eps)), delta))

    for m, r, v, delta in [(1000, 100, 95, 1e-5), (400, 400, 360, 1e-5), (200, 50, 40, 0.0)]:
        lo, hi = 0.0, 20.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if p_value(m, r, v, mid, delta) < 0.05 else (lo, mid)
        got = one_run_epsilon_lower(m, r, v, delta=delta)
        assert got == pytest.approx(lo, abs=1e-9)


def test_curve_is_nondecreasing_in_correct_guesses_and_zero_at_chance():
    curve = one_run_curve(1000, 60)
    assert len(curve) == 61
    assert np.all(np.diff(curve) >= 0)
    assert np.all(curve[:31] == 0.0)  # at most chance: nothing certified
    assert curve[-1] > 0


def test_more_tests_and_more_confidence_certify_less():
    base = one_run_epsilon_lower(1000, 200, 170)
    assert one_run_epsilon_lower(1000, 200, 170, tests=10) < base
    assert one_run_epsilon_lower(1000, 200, 170, confidence=0.99) < base
    assert one_run_epsilon_lower(1000, 200, 170, delta=1e-4) < base


def test_p_value_by_brute_force_enumeration():
    """P[Bin(r, q) >= v] by enumerating all 2^r correct/wrong patterns (r = 10)."""
    r, q = 10, _accuracy(1.3)
    for v in range(r + 1):
        brute = sum(
            q ** sum(p) * (1 - q) ** (r - sum(p))
            for p in itertools.product((0, 1), repeat=r)
            if sum(p) >= v
        )
        assert one_run_p_value(20, r, v, 1.3) == pytest.approx(min(1.0, brute), rel=3e-9)


def _top_bottom_tails(m: int, eps: float, k_plus: int, k_minus: int) -> np.ndarray:
    """Exact P[W >= v], v = 0..k+ + k-, by enumerating every inclusion vector and every
    output of randomized response at eps on each bit (scores = the reported bits), with the
    auditor's own top/bottom guesses (``count_correct``: ties broken by index, so which
    canaries are guessed depends on the whole output)."""
    q = _accuracy(eps)
    r = k_plus + k_minus
    mass = np.zeros(r + 1)
    for s in itertools.product((False, True), repeat=m):
        inc = np.array(s)
        for o in itertools.product((0.0, 1.0), repeat=m):
            out = np.array(o)
            agree = int(np.sum(out == inc))
            prob = q**agree * (1 - q) ** (m - agree) / 2**m
            mass[count_correct(out, inc, k_plus, k_minus)] += prob
    return np.cumsum(mass[::-1])[::-1]


@pytest.mark.parametrize(("m", "k_plus", "k_minus"), [(6, 2, 2), (6, 3, 0), (7, 2, 1)])
def test_theorem_3_1_by_enumeration_with_top_bottom_guesses(m, k_plus, k_minus):
    """Theorem 3.1 for an exactly 1-DP mechanism (randomized response per bit) and the
    auditor's data-dependent guesses: P[W >= v] <= P[Bin(r, q) >= v] for every v, computed
    exactly.  The same check fails for a 2.5-DP mechanism held to epsilon 1."""
    r = k_plus + k_minus
    tails = _top_bottom_tails(m, 1.0, k_plus, k_minus)
    bound = [one_run_p_value(m, r, v, 1.0) for v in range(r + 1)]
    assert np.all(tails <= np.array(bound) * (1 + 1e-12))
    leaky = _top_bottom_tails(m, 2.5, k_plus, k_minus)
    assert np.any(leaky > np.array(bound))


def _leaky_rr_tail(m: int, eps: float, delta: float, v: int) -> float:
    """Exact P[W >= v] when each canary's bit is revealed with probability delta and
    otherwise sent through eps-randomized response ((eps, delta)-DP for each canary), and
    all m bits are guessed: W ~ Bin(m, delta + (1 - delta) q)."""
    p = delta + (1 - delta) * _accuracy(eps)
    with mpmath.workdps(40):
        return float(
            mpmath.fsum(
                mpmath.binomial(m, j) * mpmath.mpf(p) ** j * (1 - mpmath.mpf(p)) ** (m - j)
                for j in range(v, m + 1)
            )
        )


@pytest.mark.parametrize(("m", "eps", "delta"), [(8, 1.0, 0.05), (12, 0.5, 0.01), (6, 2.0, 0.1)])
def test_theorem_holds_for_an_exactly_known_approximate_dp_mechanism(m, eps, delta):
    for v in range(m + 1):
        assert _leaky_rr_tail(m, eps, delta, v) <= one_run_p_value(m, m, v, eps, delta)


def test_without_its_delta_term_the_bound_fails_on_that_mechanism():
    """The check above can fail: the pure-DP bound (Theorem 3.1) is exceeded by the leaky
    mechanism, so the delta term of Theorem 5.2 is what makes it hold."""
    m, eps, delta = 8, 1.0, 0.05
    assert any(
        _leaky_rr_tail(m, eps, delta, v) > one_run_p_value(m, m, v, eps, 0.0) for v in range(m + 1)
    )


def test_theory_mean_is_the_expectation_over_the_binomial():
    """E[epsilon_lower(W)], W ~ Bin(r, q), summed over all r + 1 counts with the curve."""
    from scipy.stats import binom

    r, eps = 60, 1.5
    exact = float(np.dot(binom.pmf(np.arange(r + 1), r, _accuracy(eps)), one_run_curve(200, r)))
    assert one_run_theory(eps, 200, r, statistic="mean") == pytest.approx(exact, rel=1e-9)
    with pytest.raises(ValueError, match="statistic must be 'median' or 'mean', got 'mode'"):
        one_run_theory(eps, 200, r, statistic="mode")


def test_theory_grows_with_canaries_and_stays_below_the_truth():
    values = [one_run_theory(2.0, m, m) for m in (10, 100, 1000, 10000)]
    assert values == sorted(values)
    assert values[-1] < 2.0
    assert values[-1] > 1.5


def _rr_trainer(eps: float):
    """Randomized response on each inclusion bit: exactly eps-DP for each canary; ties
    broken by an independent tiny jitter."""
    q = _accuracy(eps)

    def train(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        truthful = rng.random(len(included)) < q
        guess = np.where(truthful, included, ~included)
        return guess + 1e-3 * rng.random(len(included))

    return train


#: False-alarm test: audits, canaries each, claimed epsilon, family-wise alpha per audit.
AUDITS, CANARIES, EPS, ALPHA = 100, 200, 1.0, 0.05


def test_exactly_dp_trainer_false_alarm_rate():
    """An exactly eps-DP trainer: each audit flags it with probability <= ALPHA = 0.05.  Over
    AUDITS = 100 seeded audits of m = CANARIES = 200 canaries the flags are
    Binomial(100, <= 0.05); more than 12 has probability < 0.004.  The same audits of a
    trainer twice as leaky (RR at 2 eps) flag every time: the test can fail."""
    honest = _rr_trainer(EPS)
    flags = sum(
        audit_one_run(honest, CANARIES, epsilon=EPS, seed=s, confidence=1 - ALPHA).violation
        for s in range(AUDITS)
    )
    assert flags <= 12
    leaky = _rr_trainer(4 * EPS)
    caught = sum(
        audit_one_run(leaky, CANARIES, epsilon=EPS, seed=s, confidence=1 - ALPHA).violation
        for s in range(20)
    )
    assert caught >= 18


def test_audit_result_fields_and_reproducibility():
    res = audit_one_run(_rr_trainer(2.0), 1000, epsilon=2.0, seed=7, name="rr", method="steinke")
    assert isinstance(res, OneRunAuditResult) and isinstance(res, AuditResult)
    assert 0 < res.epsilon_lower <= 2.0 and not res.violation
    assert res.m == res.subset == 1000 and res.correct == res.hits_d0
    assert sum(res.guesses) == res.samples_d0
    assert res.tests == len(default_guesses(1000)) == len(res.candidates)
    assert res.epsilon_lower == max(c[4] for c in res.candidates)
    assert res.theory() == max(
        one_run_theory(2.0, 1000, kp + km, confidence=0.95, tests=res.tests)
        for kp, km in default_guesses(1000)
    )
    assert res.theory() >= one_run_theory(2.0, 1000, sum(res.guesses), tests=res.tests)
    text = str(res)
    assert "rr" in text and "Theorem 3.1" in text and "certified, rounded down" in text
    assert res.certified_by == "steinke" and "certified by        : steinke" in text
    json.loads(res.to_json())
    again = audit_one_run(_rr_trainer(2.0), 1000, epsilon=2.0, seed=7, name="rr", method="steinke")
    assert again.epsilon_lower == res.epsilon_lower and again.candidates == res.candidates


def test_trainer_sees_a_fair_mask_and_its_own_generator():
    seen = {}

    def train(included, rng):
        seen["mask"], seen["rng"] = included, rng
        return np.zeros(len(included))

    res = audit_one_run(train, 4000, epsilon=1.0, seed=3, guesses=[(10, 10)])
    assert seen["mask"].dtype == bool and abs(seen["mask"].mean() - 0.5) < 0.05
    assert isinstance(seen["rng"], np.random.Generator)
    assert res.included == int(seen["mask"].sum())
    assert res.epsilon_lower == 0.0 and not res.violation  # constant scores reveal nothing


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"m": 0}, ValueError, r"m must be an integer in \[1, 10,000,000\] \(about 40 bytes"),
        ({"m": 2.5}, TypeError, r"m must be an integer in \[1, 10,000,000\] .*, got 2.5"),
        # a documented limit, refused before anything is allocated (was a MemoryError)
        ({"m": 10**12}, ValueError, r"m must be an integer in \[1, 10,000,000\] .*, got 10{12}$"),
        (
            {"m": 10**7 + 1},
            ValueError,
            r"m must be an integer in \[1, 10,000,000\] .*, got 10000001",
        ),
        ({"method": "best"}, ValueError, r"method must be one of auto, steinke, f-dp, gaussian"),
        ({"curve": "laplace"}, ValueError, r"curve must be one of auto, approx-dp, gaussian"),
        ({"method": "gaussian"}, ValueError, r"delta must be > 0 for a Gaussian certification"),
        ({"epsilon": -1.0}, ValueError, r"epsilon must be a number >= 0, got -1.0"),
        ({"delta": 1.0}, ValueError, r"delta must be a number in \[0, 1\), got 1.0"),
        ({"confidence": 1.0}, ValueError, r"confidence must be a float in \(0, 1\), got 1.0"),
        ({"guesses": [(6, 6)]}, ValueError, r"1 <= k_plus \+ k_minus <= m = 10, got \(6, 6\)"),
        ({"guesses": [(1.5, 0)]}, TypeError, r"guesses must hold \(k_plus, k_minus\) integer"),
        ({"guesses": []}, ValueError, r"at least one"),
        ({"seed": -1}, ValueError, r"seed must be None or an integer >= 0, got -1"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    args = {"m": 10, "epsilon": 1.0} | kwargs
    m = args.pop("m")
    with pytest.raises(error, match=match):
        audit_one_run(lambda inc, rng: np.zeros(len(inc)), m, **args)


@pytest.mark.parametrize(
    ("train", "error", "match"),
    [
        (lambda inc, rng: np.zeros(3), ValueError, r"m = 10 scores \(shape \(10,\)\), got shape"),
        (lambda inc, rng: np.full(10, np.nan), ValueError, r"finite scores, got nan"),
        (lambda inc, rng: ["a"] * 10, TypeError, r"array of m = 10 numbers, got list"),
        ("not callable", TypeError, r"train must be callable"),
    ],
)
def test_bad_trainer_outputs_are_named(train, error, match):
    with pytest.raises(error, match=match):
        audit_one_run(train, 10, epsilon=1.0, seed=0)


def test_certification_arguments_are_validated():
    with pytest.raises(ValueError, match=r"v \(correct guesses\) must be in \[0, r\] = \[0, 5\]"):
        one_run_epsilon_lower(10, 5, 6)
    with pytest.raises(ValueError, match=r"r \(guesses\) must be in \[0, m\] = \[0, 10\]"):
        one_run_epsilon_lower(10, 11, 6)
    with pytest.raises(TypeError, match=r"v must be an integer, got 2.0"):
        one_run_epsilon_lower(10, 5, 2.0)
    with pytest.raises(ValueError, match=r"tests must be an integer >= 1, got 0"):
        one_run_epsilon_lower(10, 5, 2, tests=0)


@pytest.mark.parametrize(
    ("r", "v", "q"), [(100_000, 76_000, 0.75), (20_000, 19_990, 0.9), (50, 40, 0.6)]
)
def test_truncated_window_sums_match_the_full_sums(r, v, q):
    """The delta term summed from 40 standard deviations below the mean (plus one tail for
    the rest) is an upper bound equal to the sum over all v terms to 1e-8."""
    from scipy.stats import binom

    from dpaudit.audit.one_run import _window_max

    windows = np.cumsum(binom.pmf(np.arange(v - 1, -1, -1), r, q))
    full = float(np.max(windows / np.arange(1, v + 1)))
    got = _window_max(r, v, q)
    assert full * (1 - 1e-12) <= got <= full * (1 + 1e-8) + 1e-240


@settings(max_examples=40)
@given(
    r=st.integers(1, 60),
    data=st.data(),
    delta=st.sampled_from([0.0, 1e-6, 1e-3]),
    confidence=st.sampled_from([0.5, 0.95, 0.999]),
)
def test_property_every_certified_bound_is_rejected_by_the_oracle(r, data, delta, confidence):
    """For any counts, the hypothesis at the returned epsilon is rejected by the exact
    (mpmath) p-value, and (delta = 0) one more correct guess never certifies less."""
    m = data.draw(st.integers(r, 3 * r))
    v = data.draw(st.integers(0, r))
    level = 1 - confidence
    eps = one_run_epsilon_lower(m, r, v, delta=delta, confidence=confidence)
    if eps > 0:
        assert _oracle(m, r, v, _accuracy(eps), delta) <= level * (1 + 1e-9)
    if delta == 0 and v < r:
        assert one_run_epsilon_lower(m, r, v + 1, confidence=confidence) >= eps
