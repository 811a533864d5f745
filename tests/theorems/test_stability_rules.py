"""Stability and private prediction as accountant currencies (003): rules against the paper's
own bounds, validation, and the claims at sample points of their domains."""

from __future__ import annotations

import math

import pytest
import sympy

from dpaudit.accountant import Accountant, substitute
from dpaudit.events import Exponential, Gaussian, PureDP, SampledWithoutReplacement
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
    SubsampledCandidates,
    UniformlyStable,
)
from dpaudit.theorems import stability as st
from dpaudit.verify import CLAIMS

R = "replace_one"


def _eps(event, delta=None) -> float:
    return Accountant().guarantee(event, delta).epsilon_upper


def test_uniform_stability_is_zero_epsilon_prediction_dp() -> None:
    g = Accountant().guarantee(UniformlyStable("1/20"), delta="1/20")
    assert g.epsilon == 0


@pytest.mark.parametrize("eps_em,sample,n", [("1/10", 10, 1000), ("1/3", 50, 200), ("1", 1, 10)])
def test_subsampled_candidates_within_lemma7(eps_em: str, sample: int, n: int) -> None:
    event = SubsampledCandidates(Exponential(eps_em, relation=R), sample, n)
    stmt = Accountant().statements(event)[0]
    paper = sample / n + 2 * float(sympy.Rational(eps_em))  # 003 Lemma 7: n'/n + 2 gamma
    exact_tv = sample / n + (1 - sample / n) * math.tanh(float(sympy.Rational(eps_em)) / 2)
    assert float(stmt.delta) == pytest.approx(exact_tv, rel=1e-12)
    assert float(stmt.delta) <= paper


def test_label_flip_gives_corollary1_epsilon() -> None:
    # Corollary 1: gamma = eps alpha / 2 stable, flip alpha  ->  eps-private prediction
    for eps, alpha in ((1.0, 0.1), (0.5, 0.05), (0.1, 0.25)):
        gamma = sympy.nsimplify(eps * alpha / 2)
        e = _eps(LabelFlipped(UniformlyStable(gamma), sympy.nsimplify(alpha)))
        assert e == pytest.approx(math.log(1 + (1 - 2 * alpha) * float(gamma) / alpha), rel=1e-9)
        assert e <= eps / 2 + 1e-12  # tighter than the paper's eps


def test_label_flip_never_worse_than_randomized_response() -> None:
    e = _eps(LabelFlipped(PureDP(50, relation=R), "1/10"))
    assert e == pytest.approx(math.log(9), rel=1e-12)


def test_flip_of_approx_prediction_matches_formula() -> None:
    from dpaudit.events import ApproxDP

    e = _eps(LabelFlipped(ApproxDP("1/2", "1/100", relation=R), "1/10"))
    assert e == pytest.approx(math.log(math.exp(0.5) + 0.8 * 0.01 / 0.1), rel=1e-9)


def test_lemma8_constant_matches_paper_4e6() -> None:
    # 003's parameterisation: EM privacy 2/(eta n), relabel privacy 1/(eta n), k = 2 eta n
    # gives c = 4 e^6; our k = eta (n - 1) + 1 <= 2 eta n gives c <= 4 e^6.
    n, eta, m = 10_000, sympy.Rational(1, 50), 100
    ev = RelabeledSubsampleSelection(
        Exponential(2 / (eta * n), relation=R), PureDP(1 / (eta * n), relation=R), m, n, 2, eta
    )
    eps, delta = st.lemma8_guarantee(ev, 1 / (eta * n))
    c_paper = 4 * math.exp(6)
    bound = math.log(1 + c_paper * m / (n - m)) + 3 / float(eta * n)
    assert float(eps) <= bound
    assert float(eps) == pytest.approx(
        math.log(1 + 4 * math.exp(float((eta * (n - 1) + 1) * 3 / (eta * n))) * m / (n - m))
        + 3 / float(eta * n)
    )
    assert 0 < float(delta) <= m / n


def test_net_failure_bound_is_trivial_below_8_over_eta_and_decays() -> None:
    assert st.net_failure_bound(10, 2, sympy.Rational(1, 10)) == 1
    big = st.net_failure_bound(200_001, 2, sympy.Rational(1, 10))
    assert float(big) < 1e-100


def test_df_lemma5_rule_and_requirement_eps_le_1() -> None:
    e = _eps(SampledWithoutReplacement(PureDP("1/2", relation=R), 10, 100))
    assert e <= 2 * 0.5 * 10 / 100 + 1e-12
    # eps > 1: Lemma 5 does not apply; BBG18 Theorem 9 (sampling without replacement) does,
    # and no bound can beat the exact amplified value log(1 + (m/n)(e^eps - 1))
    e2 = _eps(SampledWithoutReplacement(PureDP(2, relation=R), 10, 100))
    assert e2 >= math.log(1 + 0.1 * (math.exp(2) - 1)) - 1e-12
    assert e2 < 2


@pytest.mark.parametrize(
    "build,match",
    [
        (lambda: SubsampledCandidates(Exponential(1, relation=R), 20, 10), "sample must be in"),
        (lambda: SubsampledCandidates(Exponential(1), 2, 10), "replace_one"),
        (lambda: LabelFlipped(UniformlyStable("1/10"), "1/2"), "flip must be"),
        (lambda: UniformlyStable(2), "gamma must be"),
        (
            lambda: RelabeledSubsampleSelection(
                Exponential(1, relation=R), PureDP(1, relation=R), 10, 10, 2, "1/10"
            ),
            "sample must be in",
        ),
    ],
)
def test_invalid_events_are_refused(build, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()


def test_monotone_in_flip_and_stability() -> None:
    base = [_eps(LabelFlipped(UniformlyStable(g), "1/10")) for g in ("1/100", "1/50", "1/10")]
    assert base == sorted(base)
    flips = [_eps(LabelFlipped(UniformlyStable("1/100"), a)) for a in ("1/20", "1/10", "1/4")]
    assert flips == sorted(flips, reverse=True)


@pytest.mark.parametrize(
    "key,point",
    [
        ("003/lemma-7", {"gamma": "1/10", "n": 1000, "n_prime": 100}),
        ("003/lemma-7", {"gamma": "3/10", "n": 10, "n_prime": 3}),
        ("003/corollary-1", {"epsilon": "1/2", "alpha": "1/10", "n": 6000, "n_prime": 50}),
        ("003/corollary-1", {"epsilon": "9/10", "alpha": "2/5", "n": 100, "n_prime": 6}),
        ("003/lemma-5", {"epsilon": "1", "n": 100, "n_prime": 7}),
    ],
)
def test_claims_hold_at_sample_points(key: str, point: dict) -> None:
    """Until the verifier lands: the accountant's bound at points of the claim's domain is
    within the claimed (epsilon, delta)."""
    import mechanisms.private_prediction  # noqa: F401  (registers the claims)

    claim = CLAIMS[key]
    plan = substitute(claim.plan, point)
    values = {sympy.Symbol(k, positive=True): sympy.sympify(v) for k, v in point.items()}
    eps_c = float(claim.epsilon.xreplace(values))
    delta_c = claim.delta.xreplace(values)
    if delta_c == 0:
        assert _eps(plan) <= eps_c + 1e-12
    else:
        stmt = Accountant().statements(plan)[0]
        assert float(stmt.epsilon) <= eps_c + 1e-12
        assert float(stmt.delta) <= float(delta_c) + 1e-12


def test_gaussian_child_gives_no_lemma5_statement() -> None:
    from dpaudit.accountant.rules import RULES

    event = SampledWithoutReplacement(Gaussian(3, relation=R), 1, 10)
    rule = next(r for r in RULES[SampledWithoutReplacement] if r.__name__ == "_df_lemma5")
    assert rule(event, [Accountant().statements(event.event)], None) == []
