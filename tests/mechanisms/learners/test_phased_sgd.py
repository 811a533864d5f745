"""001 Algorithm 4 as rebuilt (:mod:`mechanisms.phased_sgd`): closed forms of the phases,
the smoothing, the sensitivity and the noise; the plan against the ledger and the declared
(eps, delta); utility on separable data; an audit on the designed single-record pair."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from dpaudit import events as ev
from dpaudit.accountant import Accountant
from dpaudit.audit import audit
from dpaudit.numeric import exact
from mechanisms.halfspaces import jl_matrix, single_record_pair
from mechanisms.ledger import Ledger
from mechanisms.margin import EfficientLinearLearner, KernelLearner
from mechanisms.noisy_sgd import MarginLoss
from mechanisms.phased_sgd import PhasedSGD, moreau_derivative, phase_sizes, sgd_phase
from mechanisms.primitives import ExponentialMechanism
from mechanisms.synthetic_margin import margin_sample

HINGE = MarginLoss(0.25, hinge=True, radius=2.0, weight_radius=1.0)


def test_phase_sizes_halve_and_are_disjoint() -> None:
    assert phase_sizes(2) == [1]
    assert phase_sizes(10) == [5, 2, 1]
    assert phase_sizes(1024) == [2**j for j in range(9, -1, -1)]
    for n in (3, 17, 999, 100_000):
        sizes = phase_sizes(n)
        assert len(sizes) == math.floor(math.log2(n)) and min(sizes) >= 1
        assert sum(sizes) <= n - 1
    with pytest.raises(ValueError, match=r"n must be an integer in \[2, inf\), got 1"):
        phase_sizes(1)


def test_moreau_derivative_matches_the_envelope_by_brute_force() -> None:
    """phi_mu(u) = min_v max(0, o - s v) + (u - v)^2/(2 mu), minimised over a grid of step
    1e-5; its central difference matches the closed-form derivative to 1e-3 (the grid's
    error on a 1/mu-smooth function), and the gap phi - phi_mu is at most s^2 mu / 2."""
    o, s, mu = 1.0, 4.0, 0.05
    v = np.arange(-1.0, 1.5, 1e-5)
    phi_v = np.maximum(0.0, o - s * v)

    def envelope(u: float) -> float:
        return float(np.min(phi_v + (u - v) ** 2 / (2 * mu)))

    for u in (-0.5, 0.0, 0.1, 0.2, 0.24, 0.26, 0.4):
        h = 1e-3
        numeric = (envelope(u + h) - envelope(u - h)) / (2 * h)
        assert abs(numeric - moreau_derivative(np.array(u), o, s, mu)) < 1e-2
        assert -1e-9 <= max(0.0, o - s * u) - envelope(u) <= s * s * mu / 2 + 1e-9


@given(
    u=st.floats(-10, 10),
    v=st.floats(-10, 10),
    slope=st.floats(0.1, 10),
    mu=st.floats(1e-3, 10),
)
def test_moreau_derivative_is_monotone_bounded_and_1_over_mu_lipschitz(u, v, slope, mu) -> None:
    """The properties item 1 uses: phi_mu' is nondecreasing (phi_mu convex), in [-s, 0]
    (Lipschitz s) and 1/mu-Lipschitz (smoothness 1/mu in u, R^2/mu in w)."""
    du, dv = (float(moreau_derivative(np.array(t), 1.0, slope, mu)) for t in (u, v))
    assert -slope <= du <= 0.0
    if u <= v:
        assert du <= dv + 1e-12
    assert abs(du - dv) <= abs(u - v) / mu * (1 + 1e-9) + 1e-12


def test_sensitivity_and_noise_closed_forms() -> None:
    """Delta_i = 2 L eta_i and sigma_i = 4 L eta_i sqrt(ln(1/delta_ph))/eps_ph with
    (eps_ph, delta_ph) = ((1 - s) eps / R, delta / R) (the phases partition positions: each
    gets the run's whole budget); the zCDP conversion of one
    phase's Gaussian stays below eps_ph; mu = R^2 eta_1 / 2 (eta_1 = 2/beta)."""
    p = PhasedSGD(1, sympy.Rational(1, 10**6), HINGE, repetitions=2)
    e_ph, d_ph = p.phase_budget()
    assert e_ph == sympy.Rational(1, 4) and d_ph == sympy.Rational(1, 2 * 10**6)
    assert p.run_event(64, 3).partition == "positions"
    n, d = 4096, 10
    etas = p.etas(n, d)
    assert len(etas) == 12
    L = 2 / sympy.Rational(1, 4)  # radius 2, slope 1/rho
    eta = 2 / L * min(4 / math.sqrt(n), 0.25 / math.sqrt(d * math.log(2e6)))
    assert float(etas[0]) == pytest.approx(eta / 4, rel=1e-12)
    for i, (eta_i, event) in enumerate(zip(etas, p.phase_events(n, d), strict=True)):
        assert eta_i == etas[0] / 4**i
        assert event.sensitivity == 2 * L * eta_i
        assert (
            sympy.simplify(event.sigma - 4 * L * eta_i * sympy.sqrt(sympy.log(2 * 10**6)) * 4) == 0
        )
        rho = float(event.sensitivity**2 / (2 * event.sigma**2))
        assert rho + 2 * math.sqrt(rho * math.log(2e6)) <= 0.25 * (1 / 8 + 1 / math.sqrt(2))
    assert p.smoothing(n, d) == pytest.approx(4.0 * float(etas[0]) / 2)


def _neighbours(rng: np.random.Generator, size: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    Z = rng.normal(size=(1, size, d))
    Z *= 2.0 / np.maximum(np.linalg.norm(Z, axis=2, keepdims=True), 2.0)  # rows in B(2)
    Z1 = Z.copy()
    j = rng.integers(size)
    Z1[0, j] = -Z[0, j] * 2.0 / max(float(np.linalg.norm(Z[0, j])), 1e-12)
    return Z, Z1


def test_one_phase_moves_by_at_most_the_stated_sensitivity() -> None:
    """Noise-free phases (eta = 0.05, mu = R^2 eta / 2, i.e. eta = 2/beta) on 200 random
    neighbouring batches of 20 rows in B^3(2) (one row replaced): the average iterates
    differ by at most 2 L eta (HRS16 Lemma 3.7: non-expansive steps, one differing step).
    The bound needs each record used once: a phase that passes twice over a batch holding
    the replaced record (z = +-2 in R^1, both runs on the hinge's linear part) moves the
    averages 1.5 x 2 L eta apart, and the check fails."""
    rng = np.random.default_rng(7)
    o, s, R, lam = 1.0, 4.0, 2.0, 1.0
    L, eta = s * R, 0.05
    worst = 0.0
    for _ in range(200):
        Z, Z1 = _neighbours(rng, 20, 3)
        W0 = rng.normal(size=(1, 3)) * 0.3
        _, a = sgd_phase(W0, Z, eta, o, s, R * R * eta / 2, lam)
        _, b = sgd_phase(W0, Z1, eta, o, s, R * R * eta / 2, lam)
        worst = max(worst, float(np.linalg.norm(a - b)) / (2 * L * eta))
    assert worst <= 1 + 1e-9
    eta = 0.005
    twice, twice1 = np.full((1, 2, 1), 2.0), np.full((1, 2, 1), -2.0)
    _, a = sgd_phase(np.zeros((1, 1)), twice, eta, o, s, R * R * eta / 2, lam)
    _, b = sgd_phase(np.zeros((1, 1)), twice1, eta, o, s, R * R * eta / 2, lam)
    assert float(np.linalg.norm(a - b)) / (2 * L * eta) == pytest.approx(1.5)


@pytest.mark.slow
def test_fit_stays_within_its_plan_and_the_declared_budget() -> None:
    """The ledger of a fit (R Parallel runs + one EM) equals the plan; the accountant's
    guarantee of the plan is within (eps, delta) = (1, 1e-6)."""
    rng = np.random.default_rng(1)
    X, y, _ = margin_sample(500, 5, 0.1, rng)
    p = PhasedSGD(1.0, 1e-6, MarginLoss(0.25, hinge=True))
    with Ledger() as ledger:
        p.fit(X, y, rng)
    spent, planned = ledger.check_within(p.plan(500, 5), 1e-6)
    assert spent == planned
    assert ledger.event() == p.plan(500, 5)
    g = Accountant().guarantee(p.plan(500, 5), 1e-6)
    eps_up, delta_up = g.epsilon_upper, g.delta_upper
    assert eps_up is not None and delta_up is not None
    assert eps_up <= 1.0 and delta_up <= 1e-6
    with Ledger() as ledger:  # rows beyond the loss's radius are clipped, not trusted
        w = p.fit(10 * X, y, rng)
    ledger.check_within(p.plan(500, 5), 1e-6)
    assert np.linalg.norm(w) <= 1.0 + 1e-12
    learner = EfficientLinearLearner(1.0, 1e-6, 0.25, 3)
    assert isinstance(learner.plan(500), ev.PostProcessed)
    with pytest.raises(ValueError, match=r"m must be an integer in \[2, inf\)"):
        learner.plan(sympy.Symbol("m"))


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(
        ValueError, match="optimizer must be one of phased, bst14, calibrated, got 'sgd'"
    ):
        EfficientLinearLearner(1.0, 1e-6, 0.25, 3, optimizer="sgd")
    with pytest.raises(ValueError, match="at most ln"):
        PhasedSGD(1e4, 1e-5, HINGE)  # beyond 001 Lemma 3.1's eps <= log(1/delta)
    with pytest.raises(ValueError, match="step_size must be a number"):
        PhasedSGD(1.0, 1e-6, HINGE, step_size=-1.0)


def _utility(shuffle: bool) -> float:
    errors = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X, y, w = margin_sample(4000, 10, 0.1, rng)
        Xt, yt, _ = margin_sample(4000, 10, 0.1, rng, w=w)
        if shuffle:
            y = rng.permutation(y)
        errors.append(EfficientLinearLearner(1.0, 1e-6, 0.25, 10).fit(X, y, rng).error(Xt, yt))
    return float(np.median(errors))


def test_algorithm_2_with_algorithm_4_learns_at_n_4000_eps_1() -> None:
    """Margin-0.1 unit vectors of R^10, m = 4000, eps = 1, delta = 1e-6, k = 10, rho = 1/4:
    the median test error (4000 fresh points) over seeds 0-2 is below 0.4 (chance 0.5;
    recorded 0.24-0.35 over seeds 0-5).  With the labels shuffled it is not (the threshold
    can fail)."""
    assert _utility(shuffle=False) < 0.4
    assert _utility(shuffle=True) >= 0.4


def test_kernel_learner_runs_algorithm_4() -> None:
    rng = np.random.default_rng(2)
    X, y, _ = margin_sample(300, 4, 0.1, rng)
    learner = KernelLearner(1.0, 1e-6, 0.25, 20, 5)
    assert learner.linear().optimizer == "phased"
    with Ledger() as ledger:
        learner.fit(X, y, rng)
    ledger.check_within(learner.plan(300), 1e-6)


@dataclasses.dataclass(frozen=True)
class _LoudPhased(PhasedSGD):
    """Broken: the selection's noise scale divided by 10 (privacy x 10)."""

    def _selection(self) -> ExponentialMechanism:
        share = exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")
        return ExponentialMechanism(10 * share, self.loss.bound, relation=ev.Relation.REPLACE_ONE)


@dataclasses.dataclass(frozen=True)
class _BrokenEfficient(EfficientLinearLearner):
    def phased(self) -> PhasedSGD:
        p = super().phased()
        return _LoudPhased(p.epsilon, p.delta, p.loss, p.repetitions)


def _audit(learner: EfficientLinearLearner) -> float:
    A = jl_matrix(1, 20, np.random.default_rng(5))
    pair = single_record_pair(10, A[0])
    result = audit(
        learner.mechanism(A, A @ pair[0][0][-1]),
        *pair,
        epsilon=1.0,
        delta=1e-5,
        samples=30_000,
        confidence=0.95,
        seed=3,
        progress=False,
    )
    return result.epsilon_lower


@pytest.mark.slow
def test_audit_of_algorithm_2_with_algorithm_4() -> None:
    """m = 10 (n - 1 zero records, the last one's label negated, fixed projection to R^1),
    eps = 1, delta = 1e-5, 30,000 samples per side, confidence 0.95: the certified lower
    bound stays below the accounted upper bound; the same audit of a broken selection
    (noise / 10, privacy 10x) certifies more than the claimed 1."""
    learner = EfficientLinearLearner(1.0, 1e-5, 0.25, 1)
    upper = Accountant().guarantee(learner.plan(10), 1e-5).epsilon_upper
    assert upper is not None
    lower = _audit(learner)
    print(f"Algorithm 4 audit: certified {lower:.4f} <= accounted {upper:.4f}")
    assert lower <= upper <= 1.0
    broken = _audit(_BrokenEfficient(1.0, 1e-5, 0.25, 1))
    print(f"broken selection: certified {broken:.4f}")
    assert broken > 1.0


@pytest.mark.slow
def test_fit_at_n_1e5_d_100_takes_under_10_cpu_seconds() -> None:
    """Issue 20 part 3 for the two learners Algorithm 4 now drives (bench/learners.py's data
    and seed): fit CPU time under 10 s at n = 10^5, d = 100 (recorded 3.5 s and 4.2 s on 2
    shared cores; CPU time is what other load does not inflate)."""
    import time

    from mechanisms.estimators import EfficientMarginClassifier, KernelMarginClassifier

    rng = np.random.default_rng(2024)
    X, y, _ = margin_sample(100_000, 100, 0.1, rng)
    for cls in (EfficientMarginClassifier, KernelMarginClassifier):
        est = cls(epsilon=1.0, random_state=2024, fit_intercept=False)
        start = time.process_time()
        est.fit(X, y)
        assert time.process_time() - start < 10
        assert est.guarantee_["epsilon"] <= 1.0
