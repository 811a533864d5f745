"""The one-run certifications beside Steinke et al.: the f-DP recursion (Mahloujifar, Melis,
Chaudhuri 2025) against exact enumeration and Monte Carlo, its nesting in the curve's
parameter, the Gaussian-score bound's coverage, the grid of guess counts, the default's
choice, and the false-alarm rates of correct trainers (alpha and sample sizes stated)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import audit_one_run
from dpaudit.audit.one_run import GRID_STEPS, MIN_GUESSES, count_correct, default_guesses
from dpaudit.audit.one_run_fdp import fdp_rejects, fdp_theta_lower, g_inverse
from dpaudit.audit.one_run_gauss import gaussian_diagnostics, gaussian_mu_lower
from dpaudit.audit.one_run_subsets import correct_counts
from mechanisms.one_run_training import IdealizedGaussianTrainer

DELTA = 1e-5
LEVELS = (0.5, 0.3, 0.2, 0.1, 0.05)


def _rr_tails(m: int, eps: float, k_plus: int, k_minus: int, leak: float = 0.0) -> np.ndarray:
    """Exact P[W >= v], v = 0..k, for randomized response at eps on each inclusion bit that
    reveals the bit outright with probability ``leak`` ((eps, leak)-DP per canary), with the
    auditor's top/bottom guesses (ties by index), by enumerating every mask and output."""
    q = 1.0 / (1.0 + math.exp(-eps))
    p_true = leak + (1 - leak) * q  # each reported bit equals the true one w.p. p_true
    mass = np.zeros(k_plus + k_minus + 1)
    for s in itertools.product((False, True), repeat=m):
        inc = np.array(s)
        for o in itertools.product((0.0, 1.0), repeat=m):
            out = np.array(o)
            agree = int(np.sum(out == inc))
            prob = p_true**agree * (1 - p_true) ** (m - agree) / 2**m
            mass[count_correct(out, inc, k_plus, k_minus)] += prob
    return np.cumsum(mass[::-1])[::-1]


@pytest.mark.parametrize(
    ("m", "k_plus", "k_minus", "eps", "leak"),
    [(6, 2, 2, 1.0, 0.0), (6, 3, 0, 0.3, 0.0), (7, 2, 1, 0.7, 0.0), (6, 3, 3, 1.0, 0.05)],
)
def test_fdp_rejections_have_the_stated_level_by_enumeration(m, k_plus, k_minus, eps, leak):
    """For an exactly (eps, leak)-DP mechanism, every count c the recursion rejects at level
    tau on the f_{eps, leak} curve has P[W >= c] < tau, computed exactly; and some count is
    rejected at some level (the check is not vacuous)."""
    k = k_plus + k_minus
    tails = _rr_tails(m, eps, k_plus, k_minus, leak)
    g_inv = g_inverse("approx-dp", eps, leak)
    rejected = [(c, t) for c in range(k + 1) for t in LEVELS if fdp_rejects(m, k, c, t, g_inv)]
    assert rejected
    for c, t in rejected:
        assert tails[c] < t, (c, t, tails[c])


def test_fdp_check_fails_on_a_leakier_mechanism():
    """The same check with a mechanism at eps 3 held to the curve of eps 1: some rejected
    count has P[W >= c] >= tau, so the enumeration test above can fail."""
    m, kp, km = 6, 3, 3
    tails = _rr_tails(m, 3.0, kp, km)
    g_inv = g_inverse("approx-dp", 1.0, 0.0)
    assert any(
        tails[c] >= t for c in range(kp + km + 1) for t in LEVELS if fdp_rejects(m, 6, c, t, g_inv)
    )


def test_fdp_is_tight_where_the_enumeration_is():
    """All 8 of 8 guesses correct at level 1/2: the recursion certifies eps = 2.40, and
    randomized response at that eps has P[W = 8] = q^8 = 0.50: no sound test does better."""
    eps = fdp_theta_lower(8, 8, 8, 0.5, "approx-dp")
    q = 1.0 / (1.0 + math.exp(-eps))
    assert q**8 == pytest.approx(0.5, rel=1e-3)
    assert q**8 <= 0.5 * (1 + 1e-9)


#: Monte Carlo check of the mu-GDP curve: runs of the idealized trainer (m canaries).
MC_RUNS = 200_000


def test_fdp_gaussian_curve_level_by_monte_carlo():
    """mu-GDP: the idealized trainer (score = bit + N(0, 1/mu^2)) at the mu the recursion
    certifies from c correct of k guesses at level tau; over MC_RUNS = 200,000 runs the
    frequency of W >= c stays below tau (4 standard errors of slack, so a failure is a
    real excess, not noise).  The idealized trainer is not the recursion's worst case, so
    this check is coarse: it catches a mu inflated 2x (c = 7 at tau 1/2 then reaches 0.54);
    the curve itself is checked against its closed form in the test above."""
    rng = np.random.default_rng(0)
    m, kp, km = 8, 4, 4
    for c, tau in [(8, 0.5), (8, 0.2), (7, 0.5)]:
        mu = fdp_theta_lower(m, kp + km, c, tau, "gaussian")
        assert mu > 0
        inc = rng.random((MC_RUNS, m)) < 0.5
        scores = inc + rng.standard_normal((MC_RUNS, m)) / mu
        order = np.argsort(-scores, axis=1, kind="stable")
        ranked = np.take_along_axis(inc, order, axis=1)
        w = ranked[:, :kp].sum(axis=1) + (~ranked[:, m - km :]).sum(axis=1)
        freq = float(np.mean(w >= c))
        assert freq - 4 * math.sqrt(tau * (1 - tau) / MC_RUNS) < tau, (c, tau, mu, freq)


def test_g_inverse_against_the_curves_closed_forms():
    """g_inv(y) is the least x with 1 - f(x) >= y, for f the mu-GDP curve (Phi(Phi^-1(1 - x)
    - mu), mpmath at 40 digits) and f_{eps,delta}: never above it (sound), within 1e-8 of
    it."""
    import mpmath

    mpmath.mp.dps = 40
    for mu in (0.1, 0.5, 2.0, 6.0):
        g_inv = g_inverse("gaussian", mu)
        for y in (1e-12, 1e-5, 0.01, 0.3, 0.9, 0.999999):
            exact = mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(y) - 1) - mu)
            assert g_inv(y) <= exact and g_inv(y) == pytest.approx(float(exact), rel=1e-8)
    for eps, delta in ((0.0, 0.0), (1.0, 0.0), (2.0, 0.01)):
        g_inv = g_inverse("approx-dp", eps, delta)
        for y in np.linspace(0, 1, 41):
            # 1 - f(x) = min(1, delta + e^eps x, 1 - e^-eps (1 - delta - x)) on [0, 1]
            xs = np.linspace(0, 1, 200_001)
            g = np.minimum.reduce(
                [
                    np.ones_like(xs),
                    delta + math.exp(eps) * xs,
                    1 - math.exp(-eps) * (1 - delta - xs),
                ]
            )
            least = xs[np.argmax(g >= y - 1e-12)]
            assert g_inv(float(y)) <= least + 1e-12 and g_inv(float(y)) >= least - 1e-5


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(1, 300),
    data=st.data(),
    tau=st.sampled_from([1e-6, 1e-3, 0.05, 0.3]),
    curve=st.sampled_from(["approx-dp", "gaussian"]),
    delta=st.sampled_from([0.0, 1e-5, 1e-2]),
)
def test_property_rejections_are_nested(k, data, tau, curve, delta):
    """Rejected at theta implies rejected at every smaller theta and every larger level (the
    nesting the bisection's soundness needs, module docstring step 4)."""
    m = data.draw(st.integers(k, 4 * k))
    c = data.draw(st.integers(0, k))
    theta = data.draw(st.floats(0.01, 6.0))
    if fdp_rejects(m, k, c, tau, g_inverse(curve, theta, delta)):
        assert fdp_rejects(m, k, c, tau, g_inverse(curve, theta * 0.7, delta))
        assert fdp_rejects(m, k, c, min(1.0, tau * 1.5), g_inverse(curve, theta, delta))


def test_gaussian_bound_coverage_and_the_assumption():
    """Under its assumption (Gaussian scores, one variance) the bound on mu holds: over 2,000
    seeded runs of m = 1,000 canaries at mu = 0.5 and alpha = 0.05 it exceeds 0.5 in at most
    130 (expected <= 100; P[Binomial(2000, 0.05) > 130] < 0.002).  The same statistic on
    Laplace scores (scale 1: exactly 1-DP, so epsilon <= 1) certifies mu ~ 0.6, whose
    Gaussian epsilon at delta 1e-5 exceeds 2: the assumption is what makes it sound, and the
    normality diagnostic sees the Laplace shape."""
    rng = np.random.default_rng(1)
    over = 0
    for _ in range(2000):
        inc = rng.random(1000) < 0.5
        over += gaussian_mu_lower(inc + 2.0 * rng.standard_normal(1000), inc, 0.05) > 0.5
    assert over <= 130
    inc = rng.random(10_000) < 0.5
    laplace = inc + rng.laplace(size=10_000)
    assert gaussian_mu_lower(laplace, inc, 0.05) > 0.6
    assert gaussian_diagnostics(laplace, inc)["normality_p"] < 1e-6
    gauss = inc + rng.standard_normal(10_000)
    assert gaussian_diagnostics(gauss, inc)["normality_p"] > 1e-3


def test_gaussian_bound_edge_cases():
    inc = np.array([True, False, True, False])
    assert gaussian_mu_lower(np.zeros(4), inc, 0.05) == 0.0  # constant scores
    assert gaussian_mu_lower(np.array([0.0, 1.0, 0.0, 1.0]), inc, 0.05) == 0.0  # wrong sign
    assert gaussian_mu_lower(np.arange(4.0), np.array([True, False, False, False]), 0.05) == 0.0
    assert gaussian_diagnostics(np.arange(4.0), inc) == {}  # too few scores: none, no NaN
    small = audit_one_run(IdealizedGaussianTrainer(1.0), 10, epsilon=4.4, delta=DELTA, seed=0)
    assert small.diagnostics == () and json.loads(small.to_json())["diagnostics"] == {}


def test_default_grid_scales_with_m():
    """A coarse two-sided grid of fractions 4^-j of m (at most GRID_STEPS + 1 = 8 counts)."""
    for m in (1, 2, 10, 100, 1000, 10**5, 262_144, 10**6, 10**7):
        grid = default_guesses(m)
        assert len(set(grid)) == len(grid) <= GRID_STEPS + 1
        assert all(kp >= 0 and km >= 0 and 1 <= kp + km <= m for kp, km in grid)
        assert all(abs(kp - km) <= 1 or kp + km == 1 for kp, km in grid)  # two-sided
        assert grid[0] == ((m // 2, m - m // 2) if m >= 2 else (1, 0))
        if m >= 128:
            assert min(kp + km for kp, km in grid) >= MIN_GUESSES
    assert len(default_guesses(262_144)) == len(default_guesses(10**7)) == 8
    assert len(default_guesses(1000)) == 4
    totals = sorted({kp + km for kp, km in default_guesses(10**6)})
    assert totals[0] == round(10**6 / 4**GRID_STEPS)


def test_counts_from_one_ordering_match_count_correct():
    """Each (m', k+, k-) counts among the first m' canaries only."""
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, 200).astype(float)  # many ties: broken by index in both
    inc = rng.random(200) < 0.5
    tests = [(200, 10, 10), (200, 0, 7), (200, 50, 0), (200, 100, 100), (200, 1, 199)]
    tests += [(60, 10, 10), (60, 30, 30), (150, 5, 0)]
    expected = [count_correct(scores[:s], inc[:s], kp, km) for s, kp, km in tests]
    assert correct_counts(scores, inc, tests) == expected


def _rr(eps: float):
    q = 1.0 / (1.0 + math.exp(-eps))

    def train(included, rng):
        truthful = rng.random(len(included)) < q
        return np.where(truthful, included, ~included) + 1e-3 * rng.random(len(included))

    return train


def test_default_follows_the_trainers_declarations():
    ideal = IdealizedGaussianTrainer(2.0)
    claimed = ideal.claimed_epsilon(DELTA)
    res = audit_one_run(ideal, 2000, epsilon=claimed, delta=DELTA, seed=0)
    assert res.certified_by == "gaussian" and res.tests == 1 and res.mu_lower is not None
    assert "independent Gaussians" in res.assumption and "certified by        : gaussian" in str(
        res
    )
    data = json.loads(res.to_json())
    assert data["certified_by"] == "gaussian" and set(data["diagnostics"]) == {
        "normality_p",
        "equal_variance_p",
    }
    fdp = audit_one_run(ideal, 2000, epsilon=claimed, delta=DELTA, seed=0, method="f-dp")
    assert (fdp.certified_by, fdp.curve) == ("f-dp", "gaussian") and fdp.mu_lower is not None
    assert fdp.epsilon_lower == max(c[4] for c in fdp.candidates) or fdp.epsilon_lower > 0
    plain = audit_one_run(_rr(1.0), 2000, epsilon=1.0, delta=DELTA, seed=0)  # declares nothing
    assert (plain.certified_by, plain.curve, plain.mu_lower) == ("f-dp", "approx-dp", None)
    assert plain.epsilon_lower == max(c[4] for c in plain.candidates)
    forced = audit_one_run(ideal, 2000, epsilon=claimed, delta=DELTA, seed=0, curve="approx-dp")
    assert (forced.certified_by, forced.curve) == ("gaussian", "")
    with pytest.raises(ValueError, match="delta must be > 0 for a Gaussian certification"):
        audit_one_run(_rr(1.0), 100, epsilon=1.0, curve="gaussian", method="f-dp")


def test_default_is_steinke_for_pure_claims_and_fdp_with_delta():
    """Exactly 2-DP randomized response, m = 10,000, seed 7: with delta = 0 the default is
    Steinke et al.'s Theorem 3.1 (an exact binomial domination, a little above the f-DP
    recursion on the same run); with delta = 1e-5 it is the f-DP recursion, above Theorem
    5.2, whose delta term grows with m delta."""
    pure = audit_one_run(_rr(2.0), 10_000, epsilon=2.0, seed=7)
    pure_fdp = audit_one_run(_rr(2.0), 10_000, epsilon=2.0, seed=7, method="f-dp")
    assert pure.certified_by == "steinke" and pure_fdp.epsilon_lower < pure.epsilon_lower <= 2
    kw = {"epsilon": 2.0, "delta": DELTA, "seed": 7}
    approx = audit_one_run(_rr(2.0), 10_000, **kw)
    approx_snj = audit_one_run(_rr(2.0), 10_000, method="steinke", **kw)
    assert approx.certified_by == "f-dp"
    assert approx_snj.epsilon_lower < approx.epsilon_lower <= 2.0


#: False alarms: seeded audits per trainer and the family-wise alpha of each audit.
AUDITS, ALPHA = 40, 0.05


@pytest.mark.slow
def test_false_alarm_rate_of_the_default_on_correct_trainers():
    """Correct trainers audited at exactly their theoretical epsilon, AUDITS = 40 seeds each,
    alpha = ALPHA = 0.05 per audit: the idealized Gaussian trainer (sigma 2, m = 2,000;
    Gaussian certification) and randomized response at eps 1 claimed with delta 1e-5
    (m = 300; f-DP on f_{eps,delta}).  Flags per trainer ~ Binomial(40, <= 0.05): more
    than 7 has probability < 0.003.  A trainer twice as leaky (sigma 1 claimed as sigma 2;
    RR at 3 eps claimed at eps) is flagged in at least 36 of the 40: the test can fail."""
    honest, leaky = IdealizedGaussianTrainer(2.0), IdealizedGaussianTrainer(1.0)
    claimed = honest.claimed_epsilon(DELTA)
    kw = {"epsilon": claimed, "delta": DELTA, "confidence": 1 - ALPHA}
    assert sum(audit_one_run(honest, 2000, seed=s, **kw).violation for s in range(AUDITS)) <= 7
    assert sum(audit_one_run(leaky, 2000, seed=s, **kw).violation for s in range(AUDITS)) >= 36
    kw = {"epsilon": 1.0, "delta": DELTA, "confidence": 1 - ALPHA}
    assert sum(audit_one_run(_rr(1.0), 300, seed=s, **kw).violation for s in range(AUDITS)) <= 7
    assert sum(audit_one_run(_rr(3.0), 300, seed=s, **kw).violation for s in range(AUDITS)) >= 36


@pytest.mark.slow
def test_false_alarm_rate_of_fdp_on_the_gaussian_curve():
    """The f-DP recursion on the mu-GDP curve, the idealized trainer at sigma 2 and its
    theoretical epsilon (1.993, 1e-5), m = 1,000, 100 seeds, alpha 0.05 each: at most 12
    flags (P[Binomial(100, 0.05) > 12] < 0.004); sigma 0.5 claimed as sigma 2 is flagged in
    at least 18 of 20."""
    honest = IdealizedGaussianTrainer(2.0)
    kw = {"epsilon": honest.claimed_epsilon(DELTA), "delta": DELTA, "method": "f-dp"}
    assert sum(audit_one_run(honest, 1000, seed=s, **kw).violation for s in range(100)) <= 12
    leaky = IdealizedGaussianTrainer(0.5)
    assert sum(audit_one_run(leaky, 1000, seed=s, **kw).violation for s in range(20)) >= 18


def test_default_reaches_most_of_the_theoretical_epsilon_and_grows_with_m():
    """The issue's target: on the idealized trainer at m = 100,000 the default certifies at
    least 0.7 of the theoretical epsilon for sigma 1 and 2, never above it, and the median
    bound over 3 seeds does not fall from m = 1,000 to 10,000 to 100,000."""
    for sigma in (1.0, 2.0):
        trainer = IdealizedGaussianTrainer(sigma)
        claimed = trainer.claimed_epsilon(DELTA)
        medians = []
        for m in (1000, 10_000, 100_000):
            runs = [
                audit_one_run(trainer, m, epsilon=claimed, delta=DELTA, seed=s).epsilon_lower
                for s in range(3)
            ]
            assert max(runs) <= claimed
            medians.append(float(np.median(runs)))
        assert medians == sorted(medians)
        assert medians[-1] >= 0.7 * claimed
