"""The accountant against closed forms, mpmath oracles and a peer library."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import events as ev
from dpaudit.accountant import Accountant, UnsupportedEventError, account, substitute
from dpaudit.events import (
    ApproxDP,
    Composed,
    Event,
    Exponential,
    Gaussian,
    Group,
    Laplace,
    Parallel,
    PoissonSampled,
    PostProcessed,
    PureDP,
    SelfComposed,
)
from dpaudit.numeric import float_up


def test_laplace_composition_closed_form():
    g = account(SelfComposed(Laplace(10), 100))
    assert g.epsilon == 10
    assert g.delta == 0
    assert g.epsilon_upper == 10.0
    assert g.theorem.key == "basic_composition"


def test_zcdp_route_closed_form_for_laplace():
    # Bun-Steinke: rho = k eps0^2 / 2, eps = rho + 2 sqrt(rho log(1/delta))
    g = account(SelfComposed(Laplace(10), 100), delta="1e-6")
    rho = 100 * 0.1**2 / 2
    expected = rho + 2 * math.sqrt(rho * math.log(1e6))
    zc = next(c for c in g.candidates if c.label == "zCDP to (eps, delta)")
    assert float_up(zc.epsilon) == pytest.approx(expected, rel=1e-12)
    assert g.epsilon_upper <= expected  # the tightest candidate (PLD since issue 3) wins
    labels = {c.label for c in g.candidates}
    assert {"basic composition", "zCDP to (eps, delta)"} <= labels


def _balle_wang_delta(mu: float, eps: float) -> mpmath.mpf:
    """Independent mpmath oracle of the analytic Gaussian profile (Balle and Wang 2018)."""
    with mpmath.workdps(50):
        mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


@pytest.mark.parametrize(
    "sigma,k,delta", [(1, 1, 1e-5), (2, 10, 1e-6), (0.8, 3, 1e-3), (5, 100, 1e-8)]
)
def test_gaussian_matches_mpmath_oracle_on_both_sides(sigma, k, delta):
    g = account(SelfComposed(Gaussian(sigma), k), delta=delta)
    mu = math.sqrt(k) / sigma
    upper, lower = g.epsilon_upper, g.epsilon_lower_float
    assert lower is not None and lower <= upper
    assert upper - lower <= 1e-9 * max(1.0, upper)
    # the exact profile is below delta at the upper bound and above it at the lower bound
    assert _balle_wang_delta(mu, upper) <= delta
    assert _balle_wang_delta(mu, lower) >= delta * (1 - 1e-9)


def test_gaussian_matches_dp_accounting_pld():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(2.0), 10)
    peer = acc.get_epsilon(1e-6)
    ours = account(SelfComposed(Gaussian(2), 10), delta="1e-6")
    # the peer's PLD is pessimistic with a discretisation step: it may only be above ours
    assert ours.epsilon_lower_float <= peer + 1e-9
    assert ours.epsilon_upper == pytest.approx(peer, rel=2e-3)


def test_parallel_add_remove_is_max_and_replace_one_adds_two_largest():
    ar = account(Parallel([Laplace(4), Laplace(2), Laplace(8)]))
    assert ar.epsilon == sympy.Rational(1, 2)
    ro = account(
        Parallel(
            [
                Laplace(4, relation="replace_one"),
                Laplace(2, relation="replace_one"),
                Laplace(8, relation="replace_one"),
            ]
        )
    )
    assert ro.epsilon == sympy.Rational(1, 2) + sympy.Rational(1, 4)


def test_parallel_on_positions_under_replace_one_is_the_worst_part() -> None:
    """A partition of positions (disjoint batches of a data-independent permutation): the
    replaced record stays in its part, so the worst part's guarantee, for every currency."""
    lap = [Laplace(b, relation="replace_one") for b in (4, 2, 8)]
    assert account(Parallel(lap, partition="positions")).epsilon == sympy.Rational(1, 2)
    gauss = [Gaussian(s, relation="replace_one") for s in (2, 3)]
    by_values = account(Parallel(gauss), delta=sympy.Rational(1, 10**6))
    by_positions = account(Parallel(gauss, partition="positions"), delta=sympy.Rational(1, 10**6))
    alone = account(gauss[0], delta=sympy.Rational(1, 10**6))
    assert float_up(by_positions.epsilon) <= float_up(alone.epsilon) * (1 + 1e-9)
    assert float_up(by_positions.epsilon) < float_up(by_values.epsilon)
    assert "positions" in by_positions.derivation.formula or any(
        "positions" in c.step.formula for c in by_positions.candidates
    )


def test_parallel_partition_is_checked() -> None:
    with pytest.raises(ValueError, match="partition must be one of 'values', 'positions'"):
        Parallel([Laplace(1)], partition="rows")
    with pytest.raises(ValueError, match="defined under replace_one only"):
        Parallel([Laplace(1)], partition="positions")


def test_group_privacy_pure_and_approx():
    assert account(Group(Laplace(10), 3)).epsilon == sympy.Rational(3, 10)
    g = account(Group(ApproxDP("0.5", "1e-6"), 3))
    assert g.epsilon == sympy.Rational(3, 2)
    assert g.delta == 3 * sympy.exp(1) * sympy.Rational(1, 10**6)


def test_post_processing_keeps_guarantee_but_not_exactness():
    inner = account(Gaussian(2), delta="1e-5")
    outer = account(PostProcessed(Gaussian(2)), delta="1e-5")
    assert outer.epsilon == inner.epsilon
    assert outer.epsilon_lower is None  # post-processing may lose privacy loss


def test_approx_leaf_delta_must_fit_the_target():
    assert account(ApproxDP(1, "1e-5")).delta == sympy.Rational(1, 10**5)
    with pytest.raises(ValueError, match="no result proves a guarantee"):
        account(ApproxDP(1, "1e-5"), delta="1e-6")


def test_delta_is_validated():
    with pytest.raises(ValueError, match=r"delta must be in \[0, 1\), got 1"):
        account(Laplace(1), delta=1)
    with pytest.raises(ValueError, match="delta must be in"):
        account(Laplace(1), delta=-0.5)
    with pytest.raises(ValueError, match="delta"):
        account(Laplace(1), delta=float("nan"))


def test_gaussian_needs_a_delta():
    with pytest.raises(ValueError, match="no pure-DP guarantee"):
        account(Gaussian(1))


def test_unsupported_sub_event_is_named_and_nothing_is_recorded():
    @__import__("dataclasses").dataclass(frozen=True)
    class Mystery(Event):
        relation = Laplace(1).relation

    acc = Accountant().compose(Laplace(10))
    with pytest.raises(UnsupportedEventError, match=r"sub-event Mystery\(\)"):
        acc.compose(Composed([Laplace(1), Mystery()]))
    assert acc.recorded == Laplace(10)  # the failed compose recorded nothing
    with pytest.raises(UnsupportedEventError, match="PoissonSampled"):
        Accountant().check(PoissonSampled(Mystery(), "0.1"))


def test_recording_accountant_equals_functional_one():
    acc = Accountant().compose(Laplace(10), 5).compose(Exponential("0.5"))
    assert (
        acc.guarantee().epsilon
        == account(Composed([SelfComposed(Laplace(10), 5), Exponential("0.5")])).epsilon
    )
    with pytest.raises(ValueError, match="count must be an integer"):
        acc.compose(Laplace(1), 0)
    assert len(acc._recorded) == 2


def test_symbolic_tree_gives_symbolic_guarantee_that_specialises():
    b, k = sympy.symbols("b k", positive=True)
    g = account(SelfComposed(Laplace(b), k))
    assert sympy.simplify(g.epsilon - k / b) == 0
    assert g.epsilon_upper is None and g.symbolic
    concrete = account(substitute(SelfComposed(Laplace(b), k), {"b": 10, "k": 100}))
    assert concrete.epsilon == g.epsilon.subs({b: 10, k: 100})


def test_symbolic_gaussian_gives_zcdp_formula():
    sigma, k, d = sympy.symbols("sigma k delta", positive=True)
    g = account(SelfComposed(Gaussian(sigma), k), delta=d)
    at = {sigma: 3, k: 10, d: sympy.Rational(1, 10**5)}
    numeric = account(SelfComposed(Gaussian(3), 10), delta="1e-5")
    # the symbolic bound, evaluated, is a valid bound: at least the numeric tightest one
    assert float(g.epsilon.subs(at)) >= numeric.epsilon_upper - 1e-12


def test_derivation_text_and_latex_cite_theorems():
    g = account(SelfComposed(Laplace(10), 100), delta="1e-6")
    text = g.text()
    # since issue 3 the privacy loss distribution is the tightest route for this event
    assert "Sommer, Meiser, Mohammadi 2019, Theorem 1" in text
    assert "zCDP to (eps, delta)" in text  # the other candidates are listed
    assert "candidates compared" in text
    latex = g.latex()
    assert latex.startswith(r"\begin{itemize}") and latex.rstrip().endswith(r"\end{itemize}")
    d = g.to_dict()
    assert d["epsilon"] == g.epsilon_upper and d["theorem"] == "privacy loss distribution"


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(scale=st.integers(1, 1000), k=st.integers(1, 50), delta_exp=st.integers(3, 12))
def test_k_at_once_equals_k_times_random(scale, k, delta_exp):
    delta = sympy.Rational(1, 10**delta_exp)
    once = account(SelfComposed(Laplace(scale), k), delta=delta).epsilon_upper
    times = account(Composed([Laplace(scale)] * k), delta=delta).epsilon_upper
    assert once == pytest.approx(times, rel=1e-12)


@pytest.mark.slow  # about 4 s
@settings(max_examples=15, deadline=None)
@given(sigma=st.integers(1, 20), k=st.integers(1, 30))
def test_gaussian_monotone_in_sigma_and_count(sigma, k):
    e = account(SelfComposed(Gaussian(sigma), k), delta="1e-6").epsilon_upper
    assert account(SelfComposed(Gaussian(sigma + 1), k), delta="1e-6").epsilon_upper <= e
    assert account(SelfComposed(Gaussian(sigma), k + 1), delta="1e-6").epsilon_upper >= e


def test_pure_dp_rounded_up_never_below_exact():
    g = account(SelfComposed(PureDP(0.1), 10))
    assert g.epsilon > 1
    assert g.epsilon_upper > 1.0


def test_group_of_approximate_event_meets_the_requested_delta():
    # the group's delta is k e^((k-1) eps0) delta0: the inner delta must be chosen to fit it
    inner = SelfComposed(Gaussian(4), 3)
    g = account(Group(inner, 2), delta="1e-5")
    assert g.delta == sympy.Rational(1, 10**5)
    chosen = [c for c in g.candidates if c.label == "group privacy"]
    assert chosen and all(float(c.delta) <= 1e-5 for c in chosen)
    assert g.epsilon_upper >= account(inner, delta="1e-5").epsilon_upper


# ---------------------------------------------------------------- issue 3: CLI and extremes


def test_account_json_reports_certified_epsilon_lower(capsys) -> None:
    import json

    from dpaudit.cli import main

    assert (
        main(["account", "SelfComposed(Laplace(scale=10), 100)", "--delta", "1e-6", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon_lower"] is not None
    # the table's 4.6927 is rounded: the exact value is 4.6926674147 (closed form in mpmath,
    # tests/pld/laplace_oracle.py; dp_accounting 4.692667)
    exact = 4.6926674147
    assert 4.6927 * 0.999 <= out["epsilon_lower"] <= exact <= out["epsilon"] <= 4.6927 * 1.0005
    # a dominating pair of a family certifies no lower bound: the key is present, null
    assert (
        main(["account", "Composed([Exponential(1), Gaussian(2)])", "--delta", "1e-6", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert "epsilon_lower" in out and out["epsilon_lower"] is None
    # bounded-range composition: the optimum for the class is bracketed, and its lower end is
    # attained by an adaptive composition of exponential mechanisms (a certified lower bound)
    assert (
        main(["account", "SelfComposed(Exponential(0.1), 100)", "--delta", "1e-6", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert 2.246 <= out["epsilon_lower"] <= out["epsilon"] <= out["epsilon_lower"] + 0.01


@pytest.mark.parametrize(
    ("event", "delta", "low", "high"),
    [
        # delta = 1e-18: the exact Gaussian profile decides, and upper >= lower
        (lambda: ev.SelfComposed(ev.Gaussian(2), 10), "1e-18", 14.75, 14.76),
        # epsilon 50 per step: optimal composition of randomized response, exact
        (lambda: ev.SelfComposed(ev.RandomizedResponse(50), 3), "1e-6", 149.99, 150.0),
        # 10^6 compositions
        (lambda: ev.SelfComposed(ev.Laplace(1000), 10**6), "1e-6", 4.8, 4.95),
        # q = 1 is the plain Gaussian
        (lambda: ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(2), 1), 10), "1e-6", 8.30, 8.31),
    ],
)
def test_extreme_inputs_give_sound_answers(event, delta, low, high) -> None:
    g = account(event(), delta=sympy.Rational(delta))
    assert low <= g.epsilon_upper <= high
    if g.epsilon_lower_float is not None:
        assert g.epsilon_lower_float <= g.epsilon_upper


def test_q_one_poisson_equals_plain_gaussian() -> None:
    plain = account(ev.SelfComposed(ev.Gaussian(2), 10), delta=sympy.Rational(1, 10**6))
    sampled = account(
        ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(2), 1), 10), delta=sympy.Rational(1, 10**6)
    )
    assert sampled.epsilon_upper >= plain.epsilon_lower_float
    assert abs(sampled.epsilon_upper - plain.epsilon_upper) <= 1e-4 * plain.epsilon_upper


@pytest.mark.slow
def test_gaussian_sampled_without_replacement_uses_wbk19():
    from dpaudit.events import SampledWithoutReplacement

    def wor(m, n, sigma=2, k=50):
        inner = Gaussian(sigma, relation="replace_one")
        return account(SelfComposed(SampledWithoutReplacement(inner, m, n), k), delta="1e-5")

    g = wor(1, 100)
    assert g.theorem.key == "rdp_to_approx_bbgg20"
    # sampling every record cannot be more private than the mechanism itself (whose exact
    # profile certifies a lower bound), and a smaller sample is never less private
    full = wor(100, 100)
    plain = account(SelfComposed(Gaussian(2, relation="replace_one"), 50), delta="1e-5")
    assert full.epsilon_upper >= plain.epsilon_lower_float
    assert wor(1, 1000).epsilon_upper <= g.epsilon_upper <= wor(10, 100).epsilon_upper


def test_wbk19_bound_matches_an_independent_evaluation():
    from dpaudit.theorems import rdp

    gamma, sigma, order = sympy.Rational(1, 20), 2, 6
    value = rdp.without_replacement_rdp(order, gamma, lambda j: rdp.gaussian_rdp(j, sigma, 1))
    with mpmath.workdps(40):
        g, t = mpmath.mpf(1) / 20, lambda j: mpmath.mpf(j) / (2 * sigma**2)
        total = 1 + g**2 * mpmath.binomial(order, 2) * min(
            4 * (mpmath.exp(t(2)) - 1), 2 * mpmath.exp(t(2))
        )
        total += sum(
            g**j * mpmath.binomial(order, j) * mpmath.exp((j - 1) * t(j)) * 2
            for j in range(3, order + 1)
        )
        oracle = mpmath.log(total) / (order - 1)
        assert abs(mpmath.mpf(sympy.N(value, 40)) - oracle) < mpmath.mpf(10) ** -30
