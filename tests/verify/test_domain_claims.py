"""Domains and the claim registry."""

from __future__ import annotations

import pytest
import sympy

from dpaudit.events import PureDP, SelfComposed
from dpaudit.verify import CLAIMS, Claim, Domain, Range, load_claim_modules, register_claim

eps = sympy.Symbol("epsilon", positive=True)
k = sympy.Symbol("k", integer=True, positive=True)


def test_range_parse_and_membership() -> None:
    r = Range.parse("(0, 1]")
    assert r.low == 0 and r.high == 1 and r.low_open and not r.high_open
    assert r.contains("1") is True and r.contains(0) is False
    assert Range.parse("[1, oo)", integer=True).contains(2) is True
    assert Range.parse("[1, oo)", integer=True).contains("5/2") is False
    assert Range.parse("[1, oo)").first_integer() == 1
    assert Range.parse("(1/2, 7/2)", integer=True).last_integer() == 3


@pytest.mark.parametrize("text", ["(1, 0)", "[1, 1)", "0, 1", "(a, 1)"])
def test_range_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError, match=r"range|low|must"):
        Range.parse(text)


def test_domain_parse() -> None:
    d = Domain.parse("0 < epsilon < 1, 0 < delta < 1/2, k >= 1 integer, delta < epsilon")
    assert d.names == ("delta", "epsilon", "k")
    assert d.range("k").integer and d.range("k").low == 1 and not d.range("k").low_open
    assert d.range("delta").high == sympy.Rational(1, 2)
    assert d.contains({"epsilon": "0.5", "delta": "0.1", "k": 3}) is True
    assert d.contains({"epsilon": "0.1", "delta": "0.2", "k": 3}) is False


def test_domain_rejects_unknown_constraint_symbol() -> None:
    with pytest.raises(ValueError, match="has no range"):
        Domain({"epsilon": "(0, 1)"}, constraints=["delta < epsilon"])
    with pytest.raises(ValueError, match="integers: 'k' has no range"):
        Domain({"epsilon": "(0, 1)"}, integers=["k"])


def test_claim_validation_and_registry() -> None:
    d = Domain({"epsilon": "(0, 1)", "k": "[1, oo)"}, integers=["k"])
    c = Claim(
        key="test/basic",
        document="test",
        theorem="T",
        statement="k eps",
        plan=SelfComposed(PureDP(eps), k),
        epsilon=k * eps,
        delta=0,
        domain=d,
    )
    try:
        register_claim(c)
        register_claim(c)  # idempotent
        other = Claim(
            key="test/basic",
            document="test",
            theorem="T2",
            statement="k eps",
            plan=SelfComposed(PureDP(eps), k),
            epsilon=k * eps,
            delta=0,
            domain=d,
        )
        with pytest.raises(ValueError, match="already registered"):
            register_claim(other)
    finally:
        CLAIMS.pop("test/basic", None)
    with pytest.raises(ValueError, match="has no range"):
        Claim(
            key="test/x",
            document="t",
            theorem="T",
            statement="s",
            plan=PureDP(sympy.Symbol("rho")),
            epsilon=eps,
            delta=0,
            domain=d,
        )
    with pytest.raises(ValueError, match="delta must be in"):
        Claim(
            key="test/x",
            document="t",
            theorem="T",
            statement="s",
            plan=PureDP(eps),
            epsilon=eps,
            delta=1,
            domain=d,
        )


def test_absent_and_broken_modules_are_told_apart(tmp_path, monkeypatch) -> None:
    (tmp_path / "broken_claims_mod.py").write_text("import not_a_real_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loads = {m.module: m for m in load_claim_modules(["no_such_module_abc", "broken_claims_mod"])}
    assert loads["no_such_module_abc"].status == "absent"
    assert loads["broken_claims_mod"].status == "error"
    assert "not_a_real_dependency_xyz" in loads["broken_claims_mod"].detail


def test_a_refutation_by_the_claims_lower_bound_prints_both_values() -> None:
    """sympy decides ``Le(e, e/2)`` for a positive ``e`` to ``false`` by itself; the verdict
    must still show the two values at the point (it printed "(false) > (false)")."""
    import sympy

    from dpaudit import events as ev
    from dpaudit.verify.claims import Claim
    from dpaudit.verify.domain import Domain
    from dpaudit.verify.prove import verify_claim

    e = sympy.Symbol("e", positive=True)
    common = {"document": "test", "theorem": "T", "statement": "s", "delta": 0}
    symbolic = Claim(
        key="t/symbolic",
        plan=ev.Laplace(1 / e),
        epsilon=e / 2,
        domain=Domain({"e": "[1/10, 1]"}),
        lower=e,
        lower_source="the Laplace mechanism is exactly e-DP",
        **common,
    )
    verdict = verify_claim(symbolic)
    assert verdict.status == "refuted"
    assert "false" not in verdict.detail
    point = verdict.main.counterexample["e"]
    assert f"at least {float(point):.4g} " in verdict.detail
    numeric = Claim(
        key="t/numeric",
        plan=ev.Laplace(1),
        epsilon=sympy.Rational(1, 2),
        domain=Domain({}),
        lower=1,
        lower_source="the Laplace mechanism with scale 1 is exactly 1-DP",
        **common,
    )
    verdict = verify_claim(numeric)
    assert verdict.status == "refuted"
    assert "at least 1 " in verdict.detail or "at least 1.0 " in verdict.detail
    assert "claimed 0.5" in verdict.detail or "claimed 1/2" in verdict.detail
    assert "only point" in verdict.detail
