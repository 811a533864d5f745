"""Amplification by sampling without replacement (Balle, Barthe, Gaboardi 2018, Theorem 9) as
accountant rules with symbolic parameters, symbolic advanced composition of the amplified
steps, conditional candidates for symbolic deltas, and the claims they decide (000, 001,
003).  Oracles: the exact epsilon of a sampled randomized response (BBG18's bound is attained),
the exact privacy profile of a 1-of-n sampled Gaussian on a concrete neighbouring pair
(mpmath quadrature, a lower bound on the true epsilon), the DRV10 closed form, and the
dp_accounting RDP accountant (peer) at the report's concrete points.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest
import sympy

from dpaudit.accountant import Accountant, substitute
from dpaudit.accountant.rules import best_candidate
from dpaudit.accountant.statements import Approx, Step, conditional
from dpaudit.conformance import EventConformance
from dpaudit.events import (
    ApproxDP,
    Gaussian,
    PureDP,
    RandomizedResponse,
    SampledWithoutReplacement,
    SelfComposed,
)
from dpaudit.numeric import endpoints, interval
from dpaudit.theorems import advanced
from dpaudit.theorems.primitives import DECLARED
from dpaudit.verify import get_claim
from dpaudit.verify.claims import load_claim_modules
from dpaudit.verify.prove import verify_claim

R = "replace_one"
Q = sympy.Rational


def _sampled_rr_exact(eps: float, ratio: float) -> float:
    """Exact epsilon of binary randomized response on "the sample holds the special record"
    after sampling a gamma-fraction without replacement (one dataset holds the record, its
    replace-one neighbour does not): P[1|D]/P[1|D'] = 1 + gamma (e^eps - 1)."""
    with mpmath.workdps(40):
        p = mpmath.e**eps / (1 + mpmath.e**eps)
        on = ratio * p + (1 - ratio) * (1 - p)
        return float(mpmath.log(on / (1 - p)))


@pytest.mark.parametrize("eps,m,n", [(Q(1, 2), 1, 10), (1, 10, 1000), (3, 7, 20), (2, 5, 5)])
def test_pure_child_matches_bbg_and_is_attained(eps, m, n) -> None:
    g = Accountant().guarantee(SampledWithoutReplacement(PureDP(eps, relation=R), m, n))
    bbg = math.log(1 + m / n * (math.exp(float(eps)) - 1))
    assert g.epsilon_upper >= bbg - 1e-12  # upper bound >= the formula
    # BBG18 is attained: the sampled randomized response reaches it, so the bound is exact
    assert abs(g.epsilon_upper - _sampled_rr_exact(float(eps), m / n)) < 1e-9
    rr = Accountant().guarantee(
        SampledWithoutReplacement(RandomizedResponse(eps, relation=R), m, n)
    )
    assert rr.epsilon_upper >= _sampled_rr_exact(float(eps), m / n) - 1e-12


def test_pure_child_symbolic_and_monotone() -> None:
    e, m, n = sympy.symbols("epsilon m n", positive=True)
    g = Accountant().guarantee(SampledWithoutReplacement(PureDP(e, relation=R), m, n))
    exact = sympy.log(1 + m / n * (sympy.exp(e) - 1))
    assert any(sympy.simplify(c.epsilon - exact) == 0 for c in g.candidates)
    values = [
        Accountant().epsilon(SampledWithoutReplacement(PureDP(1, relation=R), k, 50))
        for k in (1, 5, 25, 50)
    ]
    assert values == sorted(values) and abs(values[-1] - 1) < 1e-12  # m = n: no amplification


def test_approx_child_uses_the_budget() -> None:
    # (1, 1e-4)-DP inner, 1 of 100: (log(1 + (e - 1)/100), 1e-6)
    event = SampledWithoutReplacement(ApproxDP(1, Q(1, 10**4), relation=R), 1, 100)
    g = Accountant().guarantee(event, Q(1, 10**6))
    assert abs(g.epsilon_upper - math.log(1 + (math.e - 1) / 100)) < 1e-12
    with pytest.raises(ValueError, match="no result proves"):
        Accountant().guarantee(event, Q(1, 10**7))  # below (m/n) delta_0


def _sampled_gaussian_epsilon_lower(mu: float, q: float, delta: float) -> float:
    """A lower bound on the true epsilon of SampledWithoutReplacement(Gaussian(1, mu), 1, n)
    with q = 1/n at ``delta``: datasets whose records all have value 0 except one, +mu/2 in
    D and -mu/2 in D' (replace-one distance mu); the outputs are P = (1-q) N(0,1) +
    q N(mu/2, 1) and Q likewise at -mu/2, and the smallest eps with
    int max(0, p - e^eps q) <= delta is found by bisection (mpmath quadrature)."""
    mpmath.mp.dps = 30
    h = mpmath.mpf(mu) / 2

    def dens(x, c):
        return (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, c)

    def hockey(eps):
        # p - e^eps q > 0 exactly for x > t (the likelihood ratio is increasing)
        t = mpmath.findroot(
            lambda x: mpmath.log(dens(x, h) / dens(x, -h)) - eps, (-60, 60), solver="illinois"
        )
        return mpmath.quad(lambda x: dens(x, h) - mpmath.e**eps * dens(x, -h), [t, mpmath.inf])

    lo, hi = 0.0, 5.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if hockey(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize(
    "sigma,n,delta",
    [
        pytest.param(1, 10, Q(1, 10**5), marks=pytest.mark.slow),  # 6 s
        pytest.param(2, 4, Q(1, 10**3), marks=pytest.mark.slow),  # 5 s
    ],
)
def test_gaussian_child_upper_exceeds_exact_pair(sigma, n, delta) -> None:
    event = SampledWithoutReplacement(Gaussian(sigma, relation=R), 1, n)
    upper = Accountant().epsilon(event, delta)
    lower = _sampled_gaussian_epsilon_lower(1 / sigma, 1 / n, float(delta))
    assert 0 < lower <= upper


def test_self_composed_advanced_matches_drv_closed_form() -> None:
    step = SampledWithoutReplacement(ApproxDP(Q(1, 2), Q(1, 10**8), relation=R), 1, 100)
    event, delta, k = SelfComposed(step, 400), Q(1, 10**5), 400
    g = Accountant().guarantee(event, delta)
    # the step's statement at half of its share of the budget, then DRV10 with the rest
    inner = [
        s
        for s in Accountant().statements(step, delta / k)
        if isinstance(s, Approx) and s.delta == delta / (2 * k)
    ]
    assert inner
    closed, total = advanced.advanced_composition(inner[0].epsilon, inner[0].delta, k, delta / 2)
    assert total == delta
    assert abs(g.epsilon_upper - float(closed)) < 1e-9
    assert g.epsilon_upper < k * math.log(1 + (math.exp(0.5) - 1) / 100)  # beats basic
    # monotone in the number of steps
    more = Accountant().epsilon(SelfComposed(step, 800), delta)
    assert more > g.epsilon_upper


@pytest.mark.slow
def test_symbolic_self_composed_advanced_statement() -> None:
    k, d = sympy.symbols("k delta", positive=True)
    e = sympy.Symbol("epsilon", positive=True)
    event = SelfComposed(SampledWithoutReplacement(PureDP(e, relation=R), 1, 10), k)
    # pure child: amplified pure statement; composition keeps the k eps' basic bound
    stmts = Accountant().statements(event, d)
    assert stmts
    inner = SampledWithoutReplacement(
        Gaussian(sympy.Symbol("sigma", positive=True), relation=R), 1, 10
    )
    stmts = Accountant().statements(SelfComposed(inner, k), d)
    adv = [
        s for s in stmts if isinstance(s, Approx) and s.step.theorem.key == "advanced_composition"
    ]
    assert adv and sympy.simplify(adv[0].delta - d) == 0


def test_conditional_candidate_is_decided_by_the_domain() -> None:
    g, n = sympy.symbols("gamma n", positive=True)
    step = Step(DECLARED, PureDP(1, relation=R), "x")
    cand = conditional(sympy.Integer(2), g / n, 3 * g, step)
    assert cand.delta == 3 * g
    at = cand.epsilon.subs({g: Q(1, 4), n: 2})
    assert at == 2  # 1/8 <= 3/4: the statement applies
    assert cand.epsilon.subs({g: Q(1, 4), n: Q(1, 100)}) is sympy.oo  # 25 > 3/4: nothing
    # a statement whose delta is undecidable against the target gives the conditional one
    st = Approx(step, epsilon=sympy.Integer(2), delta=g / n)
    (c,) = st.candidates(3 * g)
    assert isinstance(c.epsilon, sympy.Piecewise)
    assert st.candidates(Q(1, 10)) == [] or isinstance(
        st.candidates(Q(1, 10))[0].epsilon, sympy.Piecewise
    )


def test_best_candidate_keeps_the_minimum_of_undecidable_symbolic_ones() -> None:
    x = sympy.Symbol("x", positive=True)
    step = Step(DECLARED, PureDP(1, relation=R), "x")
    a = Approx(step, epsilon=x, delta=sympy.Integer(0))
    b = Approx(step, epsilon=1 / x, delta=sympy.Integer(0))
    best = best_candidate([a, b], None)
    assert best.epsilon == sympy.Min(x, 1 / x)
    numeric = best_candidate(
        [Approx(step, epsilon=sympy.Integer(3)), Approx(step, epsilon=sympy.Integer(2))], None
    )
    assert numeric.epsilon == 2


# --------------------------------------------------------------------------- the claims

load_claim_modules(["mechanisms.halfspaces", "mechanisms.margin", "mechanisms.private_prediction"])


@pytest.mark.slow
def test_lemma5_is_proved() -> None:
    v = verify_claim(get_claim("003/lemma-5"), time_limit=20)
    assert v.status == "proved", v.detail
    assert "Balle, Barthe, Gaboardi" in v.detail


#: The report's concrete points (mechanisms/report_targets.py) and the previous bound there
#: (WBK19 RDP only): 2.27 and 2.04, both above the claimed 1.
CONCRETE = {
    "000/theorem-3": ({"epsilon": 1, "delta": "1/100000", "n": 100}, 2.27),
    "001/theorem-3.2": ({"epsilon": 1, "delta": "1/100000", "m": 100}, 2.04),
}


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(CONCRETE))
def test_noisy_gd_claims_at_the_concrete_point_are_below_the_claim(key) -> None:
    point, old = CONCRETE[key]
    claim = get_claim(key)
    g = Accountant().guarantee(substitute(claim.plan, point), sympy.Rational(point["delta"]))
    assert g.epsilon_upper < 0.75 < old  # BBG18 Thm 9 + advanced composition: ~0.65 / ~0.69


def _peer_rdp_epsilon(
    n: int, steps: int, sigma_over_sens: float, em_eps: float, delta: float
) -> float:
    """dp_accounting's RDP accountant on the same steps (its sampled-without-replacement RDP,
    replace-one; WBK19 Theorem 27), plus the exponential mechanism's epsilon (basic
    composition of its pure guarantee)."""
    import dp_accounting as dpa

    acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(
        dpa.SelfComposedDpEvent(
            dpa.SampledWithoutReplacementDpEvent(n, 1, dpa.GaussianDpEvent(sigma_over_sens)), steps
        )
    )
    return acc.get_epsilon(delta) + em_eps


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(CONCRETE))
def test_noisy_gd_concrete_point_against_dp_accounting(key) -> None:
    """Two independent routes agree that the claim holds at the concrete point: ours (BBG18
    Thm 9 + DRV10) and the peer's RDP accountant, which uses WBK19's Gaussian-specific
    Theorem 27 (much tighter than the generic Theorem 9 behind our 2.27 / 2.04)."""
    point, _ = CONCRETE[key]
    plan = substitute(get_claim(key).plan, point)
    runs, em = plan.event.events
    step = runs.event
    ratio = float(step.event.sigma / step.event.sensitivity)
    n = int(step.population)
    peer = _peer_rdp_epsilon(n, int(runs.count), ratio, float(em.epsilon), 1e-5)
    ours = Accountant().epsilon(plan, Q(1, 10**5))
    assert ours < 1 and peer < 1
    assert peer > float(em.epsilon)  # the peer accounts the steps (not just the selection)


@pytest.mark.slow
@pytest.mark.parametrize("key,size", [("000/theorem-3", "n"), ("001/theorem-3.2", "m")])
def test_noisy_gd_symbolic_bound_below_claim_on_a_grid(key, size) -> None:
    """The accountant's symbolic bound, enclosed rigorously (intervals) at points spanning
    the claim's domain (delta down to 1e-300, n up to 1e30): at most 0.8 epsilon.  An
    independent pointwise check of what the verifier proves over the whole domain by
    relaxation (tests/verify/test_relax.py)."""
    claim = get_claim(key)
    g = Accountant().guarantee(claim.plan, claim.delta)
    syms = {s.name: s for s in g.epsilon.free_symbols}
    for e, d, n in itertools.product(
        [Q(1, 10**6), Q(1, 2), 1], [Q(1, 10), Q(1, 10**5), Q(1, 10**300)], [10, 100, 10**9, 10**30]
    ):
        if key.startswith("001") and d * n >= 1:
            continue
        env = {syms["epsilon"]: e, syms["delta"]: d, syms[size]: n}
        hi = endpoints(interval(g.epsilon / syms["epsilon"], env))[1]
        assert hi <= 0.8, (e, d, n, hi)


def test_lemma7_conditional_bound_holds_at_points() -> None:
    """003 Lemma 7: the accountant's (0, n'/n + (1 - n'/n) tanh(gamma/2)) statement is now
    compared with the claimed 3 gamma on the domain (a conditional candidate); at points of
    the domain the condition holds and the bound is 0."""
    claim = get_claim("003/lemma-7")
    g = Accountant().guarantee(claim.plan, claim.delta)
    assert isinstance(g.epsilon, sympy.Piecewise)
    syms = {s.name: s for s in g.epsilon.free_symbols}
    for gamma, n in itertools.product([Q(1, 100), Q(1, 4), Q(3, 10)], [10, 1000, 10**6]):
        top = int(gamma * n)
        for m in {1, max(1, top // 2), top}:
            if m < 1 or m > gamma * n:
                continue
            env = {syms["gamma"]: gamma, syms["n"]: n, syms["n_prime"]: m}
            cond = g.epsilon.args[0][1].subs(env)
            assert cond is sympy.true


def test_lemma7_reduced_inequality_is_proved() -> None:
    """The accountant's stability r + (1 - r) s(gamma), s = (e^g - 1)/(e^g + 1) < 1, grows
    with r = n'/n, so on n' <= gamma n its worst case is r = gamma; that one-variable
    inequality is proved by the verifier (as the three-variable claim now is, see README)."""
    from dpaudit.verify.domain import Domain
    from dpaudit.verify.engine import verify_inequality

    g, r = sympy.symbols("gamma r", positive=True)
    stab = r + (1 - r) * (sympy.exp(g) - 1) / (sympy.exp(g) + 1)
    assert sympy.diff(stab, r).equals(2 / (sympy.exp(g) + 1))  # > 0: increasing in r
    v = verify_inequality(
        sympy.Le(stab.subs(r, g), 3 * g), Domain({"gamma": "(0, 1/3)"}), time_limit=20
    )
    assert v.proved, v.summary()
    # the check can fail: a claimed 4 gamma / 3 is refuted (tanh(gamma/2) ~ gamma/2)
    bad = verify_inequality(
        sympy.Le(stab.subs(r, g), g + g / 3), Domain({"gamma": "(0, 1/3)"}), time_limit=20
    )
    assert bad.refuted


class TestSampledWithoutReplacementConformance(EventConformance):
    """The conformance suite on sampled events: k at once = k times (the advanced rule is
    registered for identical Composed parts too), upper >= certified lower, monotone in k
    and in the sample size."""

    deltas = ("1e-6", "1e-3")

    # about 6 s: the slow suite (the other conformance checks stay in the default one)
    test_composing_k_at_once_equals_k_times = pytest.mark.slow(
        EventConformance.test_composing_k_at_once_equals_k_times
    )

    def examples(self):
        return [
            SampledWithoutReplacement(Gaussian(4, relation=R), 1, 10),
            SampledWithoutReplacement(PureDP(1, relation=R), 3, 10),
            SampledWithoutReplacement(ApproxDP("0.5", "1e-9", relation=R), 5, 20),
        ]

    def invalid(self):
        return [
            (
                lambda: SampledWithoutReplacement(PureDP(1, relation=R), 11, 10),
                r"sample must be in \[1, population\]",
            ),
            (
                lambda: SampledWithoutReplacement(PureDP(1), 1, 10),
                r"must be stated under the replace_one relation",
            ),
        ]

    def monotone_pairs(self):
        return [
            (
                SampledWithoutReplacement(Gaussian(4, relation=R), 1, 10),
                SampledWithoutReplacement(Gaussian(4, relation=R), 2, 10),
            ),
            (
                SampledWithoutReplacement(PureDP(1, relation=R), 1, 10),
                SampledWithoutReplacement(PureDP(2, relation=R), 1, 10),
            ),
        ]
