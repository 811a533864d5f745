"""Every theorem states its domain, and the accountant applies it only inside it.

Oracles: exact rational comparisons (``fractions.Fraction``) for the domain decisions, the
theorems' own closed forms for the numbers, and the verifier for the symbolic side
conditions.
"""

from __future__ import annotations

import importlib
import pkgutil
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit.accountant
import dpaudit.theorems
from dpaudit import events as ev
from dpaudit.accountant import Accountant, account, domains
from dpaudit.accountant.statements import Concentrated, Step
from dpaudit.accountant.tight import AdvancedComposition
from dpaudit.cli import main
from dpaudit.theorems import advanced, zcdp
from dpaudit.theorems.base import THEOREMS, Theorem, conditions
from dpaudit.verify import Claim, Domain
from dpaudit.verify.prove import verify_claim

R = sympy.Rational
ADVANCED = advanced.ADVANCED_COMPOSITION


def _load_all_cards() -> dict[str, Theorem]:
    for mod in pkgutil.iter_modules(dpaudit.theorems.__path__):
        importlib.import_module(f"dpaudit.theorems.{mod.name}")
    importlib.import_module("dpaudit.verify")
    return dict(THEOREMS)


def test_every_registered_theorem_states_its_domain() -> None:
    cards = _load_all_cards()
    assert len(cards) >= 40
    lacking = sorted(k for k, t in cards.items() if t.domain is None)
    assert not lacking, f"theorems without a stated domain: {lacking}"
    for key, t in cards.items():
        for cond in t.domain:
            assert isinstance(cond, sympy.core.relational.Relational), (key, cond)
            assert cond.rel_op in ("<", "<=", ">", ">="), (key, cond)
            assert cond.free_symbols, (key, cond)


def test_a_card_without_domain_is_caught_and_evaluated_conditions_rejected() -> None:
    bare = Theorem(key="t", name="t", citation="c", assumptions="a", statement="s")
    assert bare.domain is None
    positive = sympy.Symbol("epsilon", positive=True)
    with pytest.raises(ValueError, match="must be a comparison"):
        Theorem(
            key="t", name="t", citation="c", assumptions="a", statement="s", domain=(positive > 0,)
        )  # sympy evaluates this to True: information lost
    with pytest.raises(ValueError, match="must be a comparison"):
        conditions("epsilon")


def test_conditions_parse_chains_primes_and_reserved_names() -> None:
    c = conditions("0 < delta' < 1", "lambda <= 5/4", "gamma > 0", "delta < exp(-epsilon)")
    names = {s.name for cond in c for s in cond.free_symbols}
    assert names == {"delta'", "lambda", "gamma", "delta", "epsilon"}
    assert len(c) == 5
    assert c[0].rel_op == "<" and c[0].lhs == 0 and c[1].rhs == 1
    assert c[2].rhs == R(5, 4)


@pytest.mark.parametrize(
    ("slack", "status"),
    [
        (R(1, 2), "verified"),
        (R(1, 10**6), "verified"),
        (1, "refuted"),
        (R(3, 2), "refuted"),
        (0, "refuted"),
        (R(-1, 5), "refuted"),
    ],
)
def test_advanced_composition_domain_numbers(slack: sympy.Expr, status: str) -> None:
    checks = ADVANCED.check({"epsilon": R(1, 10), "delta": 0, "k": 10, "delta'": slack})
    worst = "refuted" if any(c.status == "refuted" for c in checks) else "verified"
    assert worst == status
    assert all(c.how.startswith("checked:") for c in checks)


def test_partial_binding_is_a_programming_error() -> None:
    card = THEOREMS["bounded_range_profile"]  # 0 <= x <= epsilon
    with pytest.raises(ValueError, match="without a value for epsilon"):
        card.check({"x": R(1, 2)})


def test_irrational_and_close_values_are_decided_rigorously() -> None:
    # delta' = 1 - 10^-30: a float would round it to 1 and refute; intervals verify it
    near = 1 - sympy.Integer(10) ** -30
    checks = ADVANCED.check({"epsilon": sympy.log(2), "delta": 0, "k": 3, "delta'": near})
    assert all(c.status == "verified" for c in checks)
    checks = ADVANCED.check({"epsilon": 1, "delta": 0, "k": 3, "delta'": sympy.exp(-1)})
    assert all(c.status == "verified" for c in checks)


def test_advanced_candidate_outside_its_domain_is_skipped_with_a_reason() -> None:
    event = ev.SelfComposed(ev.PureDP(R(1, 10)), 10)
    step = Step(ADVANCED, event, "advanced composition")
    # slack = 1/20 - 10 x 1/100 < 0: the theorem does not apply
    s = AdvancedComposition(step, epsilon0=R(1, 10), delta0=R(1, 100), count=10)
    with domains.context(()) as rejected:
        assert s.candidates(R(1, 20)) == []
    assert len(rejected) == 1 and "0 < delta'" in str(rejected[0])
    assert "fails" in rejected[0].reason
    # inside: the same number as the theorem's closed form
    with domains.context(()) as rejected:
        (cand,) = s.candidates(R(1, 5))
    assert not rejected
    eps, dlt = advanced.advanced_composition(R(1, 10), R(1, 100), 10, R(1, 10))
    assert cand.epsilon == eps and cand.delta == dlt
    assert [c.status for c in cand.step.checks] == ["verified"] * 5
    with pytest.raises(ValueError, match="delta_slack"):
        advanced.advanced_composition(R(1, 10), 0, 10, R(3, 2))


def test_zcdp_conversion_at_delta_zero_is_refused_with_the_reason() -> None:
    with pytest.raises(
        ValueError,
        match=r"zCDP to \(eps, delta\) not applicable.*0 < delta "
        r"fails \(checked: delta = 0\)",
    ):
        account(ev.Gaussian(1), 0)
    with pytest.raises(ValueError, match="delta"):
        zcdp.zcdp_to_approx(R(1, 2), 0)


def test_inside_the_domain_the_numbers_are_the_theorems_closed_forms() -> None:
    g = account(ev.SelfComposed(ev.Laplace(10), 100), R(1, 10**6))
    by_label = {c.label: c for c in g.candidates}
    assert by_label["basic composition"].epsilon == 10
    eps, _ = advanced.advanced_composition(R(1, 10), 0, 100, R(1, 10**6))
    assert by_label["advanced composition"].epsilon == eps
    rho = zcdp.pure_to_zcdp(R(1, 10)) * 100
    assert by_label["zCDP to (eps, delta)"].epsilon == zcdp.zcdp_to_approx(rho, R(1, 10**6))
    assert not g.rejected
    assert g.epsilon == min((c.epsilon for c in g.candidates), key=float)


def test_text_latex_and_explain_show_the_assumption_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    g = account(ev.SelfComposed(ev.Laplace(10), 100), R(1, 10**6))
    adv = next(c for c in g.candidates if c.label == "advanced composition")
    full = dataclasses_replace_derivation(g, adv.step)
    text = full.text()
    assert "assumptions: epsilon >= 0 (checked: epsilon = 1/10)" in text
    assert "0 < delta' < 1 (checked: delta' = 1/1000000)" in text
    assert "k >= 1 (checked: k = 100)" in text
    assert "$0 < delta' < 1$ (checked: delta' = 1/1000000)" in full.latex()
    assert main(["explain", "SelfComposed(Laplace(10), 100)"]) == 0
    out = capsys.readouterr().out
    assert "domain:      b > 0, Delta > 0 (checked: Delta = 1, b = 10)" in out.replace(
        "b > 0 (checked: b = 10); Delta > 0 (checked: Delta = 1)",
        "b > 0, Delta > 0 (checked: Delta = 1, b = 10)",
    )
    assert "k >= 1 (checked: k = 100)" in out
    assert main(["explain", "SelfComposed(Laplace(10), 100)", "--latex"]) == 0
    assert r"Domain: $k \geq 1$ (checked: k = 100)." in capsys.readouterr().out


def dataclasses_replace_derivation(g, step):  # type: ignore[no-untyped-def]
    import dataclasses

    return dataclasses.replace(g, derivation=step)


# ------------------------------------------------------------------------------ symbolic

sigma = sympy.Symbol("sigma", positive=True)
delta = sympy.Symbol("delta", positive=True)


def test_symbolic_condition_not_verified_becomes_an_assumption_of_the_guarantee() -> None:
    g = Accountant().guarantee(ev.Gaussian(sigma), delta)
    assert sympy.Lt(delta, 1) in g.assumptions
    text = g.text()
    assert "assumption delta < 1 not verified: the bound is conditional on it" in text
    assert "0 < delta (holds by the symbols' assumptions" in text
    # told by the caller (a claim's domain), the condition is verified and not carried
    g2 = Accountant(assume=[sympy.Lt(delta, 1)]).guarantee(ev.Gaussian(sigma), delta)
    assert "follows from the assumption delta < 1" in g2.text()
    assert "not verified" not in g2.text()


def _gaussian_claim(domain: Domain) -> Claim:
    rho = 1 / (2 * sigma**2)
    return Claim(
        key="test/domain-side",
        document="test",
        theorem="zCDP conversion",
        statement="Gaussian is (rho + 2 sqrt(rho log 1/delta), delta)-DP",
        plan=ev.Gaussian(sigma),
        epsilon=zcdp.zcdp_to_approx(rho, delta),
        delta=delta,
        domain=domain,
    )


def test_verifier_must_prove_the_side_conditions_over_the_claim_domain() -> None:
    inside = _gaussian_claim(Domain({"sigma": "[1/2, 4]", "delta": "(0, 1)"}))
    assert verify_claim(inside, check_steps=False).status == "proved"
    # delta ranges past 1, where the conversion's theorem does not hold: never proved
    outside = _gaussian_claim(Domain({"sigma": "[1/2, 4]", "delta": "(1/2, 3/2)"}))
    verdict = verify_claim(outside, check_steps=False)
    assert verdict.status != "proved"
    assert "delta < 1" in verdict.detail


# ------------------------------------------------------------------------------ properties

fractions = st.fractions(min_value=Fraction(-2), max_value=Fraction(3), max_denominator=10**6)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(eps=fractions, dlt=fractions, k=st.integers(-2, 50), slack=fractions)
def test_property_advanced_domain_matches_exact_comparison(
    eps: Fraction, dlt: Fraction, k: int, slack: Fraction
) -> None:
    checks = ADVANCED.check(
        {
            "epsilon": R(eps.numerator, eps.denominator),
            "delta": R(dlt.numerator, dlt.denominator),
            "k": k,
            "delta'": R(slack.numerator, slack.denominator),
        }
    )
    inside = eps >= 0 and dlt >= 0 and k >= 1 and 0 < slack < 1
    assert all(c.status != "unverified" for c in checks)
    assert all(c.status == "verified" for c in checks) == inside


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    b=st.fractions(min_value=Fraction(1, 10), max_value=Fraction(50), max_denominator=100),
    k=st.integers(1, 40),
    exponent=st.integers(2, 9),
)
def test_property_inside_the_domain_every_checked_step_is_verified(
    b: Fraction, k: int, exponent: int
) -> None:
    event = ev.SelfComposed(ev.Laplace(R(b.numerator, b.denominator)), k)
    target = R(1, 10**exponent)
    g = account(event, target)
    assert not g.rejected
    for cand in g.candidates:
        for _, step in cand.step.walk():
            for c in step.checks or ():
                assert c.status == "verified", (step.theorem.key, c)
    assert g.epsilon <= k / R(b.numerator, b.denominator)  # never above basic composition


@settings(max_examples=60, deadline=None)
@given(
    rho=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(10), max_denominator=1000),
    d=st.fractions(min_value=Fraction(-1), max_value=Fraction(2), max_denominator=1000),
)
def test_property_zcdp_conversion_applies_exactly_on_its_domain(rho: Fraction, d: Fraction) -> None:
    event = ev.ZCDP(R(rho.numerator, rho.denominator))
    statement = Concentrated(
        Step(zcdp.ZCDP_TO_APPROX, event, "declared"), rho=R(rho.numerator, rho.denominator)
    )
    with domains.context(()) as rejected:
        cands = statement.candidates(R(d.numerator, d.denominator))
    if 0 < d < 1:
        assert cands and not rejected
        assert cands[0].epsilon == zcdp.zcdp_to_approx(event.rho, R(d.numerator, d.denominator))
    else:
        assert cands == [] and rejected and "delta" in rejected[0].reason
