"""Collecting a report: what it holds, verdicts, determinism under the seed."""

from __future__ import annotations

import json

import pytest

import dpaudit.events as ev
from dpaudit.report import Target, collect, describe
from dpaudit.report.contents import _certified_curve, plan_tree, target_seed
from dpaudit.report.verdict import down, up, verdict


def test_plan_tree_shows_combinators_and_leaves() -> None:
    plan = ev.Composed([ev.SelfComposed(ev.Laplace(2), 3), ev.Exponential(1)])
    assert plan_tree(plan) == (
        "Composed()\n|- SelfComposed(count=3)\n|  `- Laplace(2)\n`- Exponential(1)"
    )


def test_describe_is_cheap_and_complete(laplace_target: Target) -> None:
    d = describe(laplace_target, seed=3)
    assert d["plan"]["expression"] == "Laplace(1)"
    g = d["guarantee"]
    assert g["epsilon_upper"] == 1.0 and g["theorem"] == "Laplace mechanism"
    assert any(c["chosen"] for c in g["candidates"])
    assert d["claim"]["statement"].endswith("is (1, 0)-DP")
    assert len(d["fingerprint"]) == 64
    assert describe(laplace_target, seed=3) == d
    assert describe(laplace_target, seed=4)["fingerprint"] != d["fingerprint"]


@pytest.mark.slow
def test_collect_correct_mechanism_is_consistent(laplace_target: Target) -> None:
    r = collect(laplace_target, seed=1)
    assert r["verification"]["status"] == "proved"
    a = r["audit"]
    assert 0.5 < a["epsilon_lower"] <= 1.0 and not a["violation"]
    assert "wall_time" not in a  # reports depend on inputs and seed only
    assert [p["samples"] for p in a["growth"]][-1] == laplace_target.samples
    assert r["verdict"]["kind"] == "consistent" and not r["verdict"]["finding"]
    assert r["curve"]["points"][0] == {"delta": 0.0, "epsilon_upper": 1.0, "epsilon_lower": None}
    json.dumps(r, allow_nan=False)  # JSON-ready


def test_collect_is_deterministic_under_the_seed(rr_target: Target) -> None:
    assert collect(rr_target, seed=7) == collect(rr_target, seed=7)
    assert target_seed(7, rr_target) != target_seed(8, rr_target)


def test_broken_mechanism_is_caught_and_expected(broken_target: Target) -> None:
    r = collect(broken_target, seed=1)
    assert r["verdict"]["kind"] == "violation"
    assert not r["verdict"]["finding"]  # expected: broken, and caught
    assert "(caught)" in r["verdict"]["line"]
    assert r["verification"]["status"] == "proved"  # the declared plan meets the claim


def test_verdict_flags_unexpected_outcomes(broken_target: Target) -> None:
    r = collect(broken_target, seed=1)
    r["target"]["expect"] = "private"
    assert verdict(r)["finding"]
    r["target"]["expect"] = "broken"
    r["audit"]["violation"] = False
    assert verdict(r)["finding"] and "NOT caught" in verdict(r)["line"]


def test_unaudited_target_reports_accountant_and_verifier() -> None:
    t = Target(
        name="test/plan-only",
        title="plan only",
        group="test",
        epsilon=0.5,
        plan=ev.SelfComposed(ev.Laplace(4), 2),
    )
    r = collect(t)
    assert r["audit"] is None and r["verdict"]["kind"] == "not audited"
    assert r["guarantee"]["epsilon_upper"] == 0.5


def test_unsupported_claim_is_reported() -> None:
    t = Target(name="test/over", title="over", group="test", epsilon=0.5, plan=ev.Laplace(1))
    r = collect(t)
    assert r["verdict"]["kind"] == "not audited"
    assert r["verification"]["status"] != "proved"
    r["audit"] = {"epsilon_lower": 0.1, "violation": False, "confidence": 0.95}
    assert verdict(r)["kind"] == "unsupported"


def test_certified_curve_lies_below_the_event_bound() -> None:
    pts = _certified_curve(0.5, 0.1)
    assert pts and pts[0]["epsilon"] == 0.0
    assert all(0 < p["delta_lower"] <= 0.5 - 0.1 for p in pts)
    assert [p["delta_lower"] for p in pts] == sorted((p["delta_lower"] for p in pts), reverse=True)
    assert _certified_curve(0.1, 0.2) == []


def test_number_formatting_rounds_the_safe_way() -> None:
    assert down(0.99999) == "0.9999" and up(0.99991) == "1.0000"
    assert down(None) == "n/a" and up(float("inf")) == "inf"
