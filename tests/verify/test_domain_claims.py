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
